//! RFC 4180 CSV: fields with commas, quotes or line breaks are quoted, quotes doubled; CRLF line ends.
//!
//! [`CsvWriter`] writes one row at a time, so a million-row table (`kernels`) can go to a file
//! without being held in memory; [`to_csv`] is the same writer over a whole [`Table`].

use super::{Cell, Table};
use std::io::{self, Write};

fn push_field(out: &mut String, field: &str) {
    if field.contains([',', '"', '\n', '\r']) {
        out.push('"');
        out.push_str(&field.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(field);
    }
}

/// Appends one row's fields to `out`, comma-separated, without the line end (CRLF).
pub fn push_row(out: &mut String, cells: &[Cell]) {
    for (i, c) in cells.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match c {
            Cell::Text(s) => push_field(out, s),
            // Numbers (digits, sign, point) never need quoting: written straight into the line.
            _ => c.write_text(out),
        }
    }
}

/// Writes CSV rows to `out` as they come, header first.
pub struct CsvWriter<W: Write> {
    out: W,
    /// The row being formatted (reused, so a row costs no allocation once it has grown).
    line: String,
    rows: usize,
}

impl<W: Write> CsvWriter<W> {
    /// Starts a CSV document with a header row of `columns`.
    pub fn new<S: AsRef<str>>(out: W, columns: &[S]) -> io::Result<Self> {
        let mut w = CsvWriter { out, line: String::new(), rows: 0 };
        for (i, c) in columns.iter().enumerate() {
            if i > 0 {
                w.line.push(',');
            }
            push_field(&mut w.line, c.as_ref());
        }
        w.end_line()?;
        Ok(w)
    }

    fn end_line(&mut self) -> io::Result<()> {
        self.line.push_str("\r\n");
        self.out.write_all(self.line.as_bytes())?;
        self.line.clear();
        Ok(())
    }

    /// Writes one row.
    pub fn row(&mut self, cells: &[Cell]) -> io::Result<()> {
        push_row(&mut self.line, cells);
        self.rows += 1;
        self.end_line()
    }

    /// Rows written so far (header not counted).
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Flushes and hands back the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Writes a whole table to `out` (header row first) and hands `out` back.
pub fn write_table<W: Write>(table: &Table, out: W) -> io::Result<W> {
    let mut w = CsvWriter::new(out, &table.columns)?;
    for row in &table.rows {
        w.row(row)?;
    }
    w.finish()
}

/// Writes a table as CSV with a header row and CRLF line ends.
pub fn to_csv(table: &Table) -> String {
    let bytes = write_table(table, Vec::new()).expect("writing to memory");
    String::from_utf8(bytes).expect("CSV of UTF-8 cells is UTF-8")
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

    #[test]
    fn numbers_are_written_as_their_text() {
        let mut t = Table::new("t", &["a", "b", "c", "d", "e"]);
        let cells = vec![Cell::Int(-7), Cell::Float(1.25), Cell::Float(-0.0001), Cell::Micros(-1500), Cell::Empty];
        let text: Vec<String> = cells.iter().map(Cell::text).collect();
        assert_eq!(text, ["-7", "1.25", "0", "-1.500", ""]);
        t.push(cells);
        assert_eq!(t.to_csv(), "a,b,c,d,e\r\n-7,1.25,0,-1.500,\r\n");
    }
}
