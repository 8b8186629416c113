//! RFC 4180 CSV: fields with commas, quotes or line breaks are quoted, quotes doubled.

use super::Table;

fn push_field(out: &mut String, field: &str) {
    if field.contains([',', '"', '\n', '\r']) {
        out.push('"');
        out.push_str(&field.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(field);
    }
}

/// Writes a table as CSV with a header row and CRLF line ends.
pub fn to_csv(table: &Table) -> String {
    let mut out = String::new();
    for (i, c) in table.columns.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_field(&mut out, c);
    }
    out.push_str("\r\n");
    for row in &table.rows {
        for (i, c) in row.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_field(&mut out, &c.text());
        }
        out.push_str("\r\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{Cell, Table};

    #[test]
    fn quotes_commas_and_quotes() {
        let mut t = Table::new("t", &["name", "n"]);
        t.push(vec![Cell::from("void f<a, b>(\"x\")"), Cell::Int(3)]);
        assert_eq!(t.to_csv(), "name,n\r\n\"void f<a, b>(\"\"x\"\")\",3\r\n");
    }
}
