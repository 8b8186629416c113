//! One page of a table for an agent: rows filtered on a column, sorted, and cut to a limit and to
//! a size an agent's context can hold ([`MAX_PAGE_BYTES`] of CSV), with the counts and the offset
//! of the next page.

use serde_json::{json, Value};
use traceprism::table::{Cell, Table};
use traceprism::{Error, Result};

/// Rows per page unless the caller asks for fewer or more.
pub const DEFAULT_LIMIT: usize = 100;
/// A page's CSV text, at most (its JSON rows are bounded alike): the answer stays under 100 KB.
pub const MAX_PAGE_BYTES: usize = 48 * 1024;

/// A filter on one column: its cell equal to `equals` (its text, as CSV writes it unquoted), containing
/// `contains`, or within `[min, max]` (numbers).
#[derive(Debug, Default)]
pub struct Filter {
    pub column: String,
    pub equals: Option<String>,
    pub contains: Option<String>,
    pub min: Option<f64>,
    pub max: Option<f64>,
}

/// What page of which rows.
#[derive(Debug, Default)]
pub struct Query {
    pub filter: Option<Filter>,
    /// Column to sort by, and whether descending.
    pub sort: Option<(String, bool)>,
    pub limit: Option<usize>,
    pub offset: usize,
}

fn column(t: &Table, name: &str) -> Result<usize> {
    t.column(name)
        .ok_or_else(|| Error::new(format!("table {} has no column '{name}' (columns: {})", t.name, t.columns.join(", "))))
}

/// Orders two cells: numbers by value, the rest by text; empty cells last.
fn order(a: &Cell, b: &Cell) -> std::cmp::Ordering {
    match (a, b) {
        (Cell::Empty, Cell::Empty) => std::cmp::Ordering::Equal,
        (Cell::Empty, _) => std::cmp::Ordering::Greater,
        (_, Cell::Empty) => std::cmp::Ordering::Less,
        _ => match (a.as_f64(), b.as_f64()) {
            (Some(x), Some(y)) => x.total_cmp(&y),
            _ => a.text().cmp(&b.text()),
        },
    }
}

/// The page of `t` that `q` asks for, as `(structured answer, CSV text of the page)`.
pub fn page(t: &Table, q: &Query) -> Result<(Value, String)> {
    let mut rows: Vec<usize> = (0..t.rows.len()).collect();
    if let Some(f) = &q.filter {
        let c = column(t, &f.column)?;
        rows.retain(|&r| {
            let cell = &t.rows[r][c];
            f.equals.as_ref().is_none_or(|v| cell.text() == *v)
                && f.contains.as_ref().is_none_or(|v| cell.text().contains(v.as_str()))
                && f.min.is_none_or(|m| cell.as_f64().is_some_and(|x| x >= m))
                && f.max.is_none_or(|m| cell.as_f64().is_some_and(|x| x <= m))
        });
    }
    if let Some((name, descending)) = &q.sort {
        let c = column(t, name)?;
        rows.sort_by(|&a, &b| {
            let o = order(&t.rows[a][c], &t.rows[b][c]);
            if *descending && !matches!((&t.rows[a][c], &t.rows[b][c]), (Cell::Empty, _) | (_, Cell::Empty)) {
                o.reverse()
            } else {
                o
            }
        });
    }
    let matched = rows.len();
    let limit = q.limit.unwrap_or(DEFAULT_LIMIT);
    let mut out = Table { name: t.name.clone(), columns: t.columns.clone(), types: t.types.clone(), rows: Vec::new() };
    let mut json_rows: Vec<Value> = Vec::new();
    let (mut csv_bytes, mut json_bytes) = (out.to_csv().len(), 0usize);
    let mut cut_by_size = false;
    let mut line = String::new();
    for &r in rows.iter().skip(q.offset).take(limit) {
        let row = &t.rows[r];
        line.clear();
        traceprism::table::push_row(&mut line, row);
        let csv_line = line.len() + 2;
        let json_row = serde_json::to_value(row).map_err(|e| Error::new(e.to_string()))?;
        let json_len = json_row.to_string().len() + 1;
        if !out.rows.is_empty() && (csv_bytes + csv_line > MAX_PAGE_BYTES || json_bytes + json_len > MAX_PAGE_BYTES) {
            cut_by_size = true;
            break;
        }
        csv_bytes += csv_line;
        json_bytes += json_len;
        out.rows.push(row.clone());
        json_rows.push(json_row);
    }
    let returned = out.rows.len();
    let next = q.offset + returned;
    let more = next < matched;
    let how = if more {
        format!(
            "rows {}–{} of {matched}{}; call again with offset {next} for the next page",
            q.offset,
            next.saturating_sub(1),
            if cut_by_size { " (cut at the page size)" } else { "" }
        )
    } else {
        format!("rows {}–{} of {matched} (all)", q.offset, next.saturating_sub(1))
    };
    let types: Vec<Value> = t.types.iter().map(|ty| serde_json::to_value(ty).unwrap_or(Value::Null)).collect();
    let answer = json!({
        "table": t.name,
        "columns": t.columns,
        "types": types,
        "total_rows": t.rows.len(),
        "matched_rows": matched,
        "offset": q.offset,
        "returned": returned,
        "next_offset": if more { json!(next) } else { Value::Null },
        "paging": how,
        "rows": json_rows,
    });
    Ok((answer, out.to_csv()))
}
