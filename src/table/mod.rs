//! Tables: named columns and rows, one definition shared by the CLI, CSV/xlsx export and the page.

mod csv;
pub mod markup;
pub mod xlsx;

pub use self::csv::{to_csv, write_table, CsvWriter};
use serde::Serialize;

/// One cell of a table.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Cell {
    /// No value.
    Empty,
    /// An integer.
    Int(i64),
    /// A number with decimals.
    Float(f64),
    /// Text (always written as text, never as markup or a formula).
    Text(String),
    /// A time in integer nanoseconds, shown as microseconds with exactly 3 decimals.
    #[serde(serialize_with = "micros")]
    Micros(i64),
}

fn micros<S: serde::Serializer>(ns: &i64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(*ns as f64 / 1000.0)
}

/// Formats integer nanoseconds as exact microseconds text (`4488634954857.801`).
pub fn format_micros(ns: i64) -> String {
    Cell::Micros(ns).text()
}

impl Cell {
    /// The cell as display/CSV text (floats with up to 3 decimals, trailing zeros kept short).
    pub fn text(&self) -> String {
        let mut s = String::new();
        self.write_text(&mut s);
        s
    }
    /// Appends [`Cell::text`] to `out` without allocating a string of its own.
    pub fn write_text(&self, out: &mut String) {
        use std::fmt::Write;
        match self {
            Cell::Empty => {}
            Cell::Int(v) => {
                let _ = write!(out, "{v}");
            }
            Cell::Float(v) => write_float(out, *v),
            Cell::Text(s) => out.push_str(s),
            Cell::Micros(ns) => {
                let sign = if *ns < 0 { "-" } else { "" };
                let a = ns.unsigned_abs();
                let _ = write!(out, "{sign}{}.{:03}", a / 1000, a % 1000);
            }
        }
    }
    /// Numeric value, if any.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Cell::Int(v) => Some(*v as f64),
            Cell::Float(v) => Some(*v),
            Cell::Micros(ns) => Some(*ns as f64 / 1000.0),
            _ => None,
        }
    }
}

/// Formats a float with at most 3 decimals, no trailing zeros.
pub fn format_float(v: f64) -> String {
    let mut s = String::new();
    write_float(&mut s, v);
    s
}

/// Appends [`format_float`]'s text to `out` (nothing for NaN and infinities).
pub fn write_float(out: &mut String, v: f64) {
    use std::fmt::Write;
    if !v.is_finite() {
        return;
    }
    let start = out.len();
    let _ = write!(out, "{v:.3}");
    let kept = out[start..].trim_end_matches('0').trim_end_matches('.').len();
    out.truncate(start + kept);
    if &out[start..] == "-0" {
        out.truncate(start);
        out.push('0');
    }
}

impl From<&str> for Cell {
    fn from(s: &str) -> Self {
        Cell::Text(s.to_string())
    }
}
impl From<String> for Cell {
    fn from(s: String) -> Self {
        Cell::Text(s)
    }
}
impl From<i64> for Cell {
    fn from(v: i64) -> Self {
        Cell::Int(v)
    }
}
impl From<usize> for Cell {
    fn from(v: usize) -> Self {
        Cell::Int(v as i64)
    }
}
impl From<u64> for Cell {
    fn from(v: u64) -> Self {
        Cell::Int(v as i64)
    }
}
impl From<u32> for Cell {
    fn from(v: u32) -> Self {
        Cell::Int(v as i64)
    }
}
impl From<f64> for Cell {
    fn from(v: f64) -> Self {
        Cell::Float(v)
    }
}
impl<T: Into<Cell>> From<Option<T>> for Cell {
    fn from(v: Option<T>) -> Self {
        v.map_or(Cell::Empty, Into::into)
    }
}

/// A table with a name, column names and rows of cells.
#[derive(Debug, Clone, Serialize)]
pub struct Table {
    /// The table's name (its CSV file and sheet).
    pub name: String,
    /// Column names.
    pub columns: Vec<String>,
    /// Rows, one cell per column.
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    /// An empty table with the given columns.
    pub fn new(name: &str, columns: &[&str]) -> Self {
        Table { name: name.to_string(), columns: columns.iter().map(|c| c.to_string()).collect(), rows: Vec::new() }
    }
    /// Appends a row (must have one cell per column).
    pub fn push(&mut self, row: Vec<Cell>) {
        debug_assert_eq!(row.len(), self.columns.len(), "row width in table {}", self.name);
        self.rows.push(row);
    }
    /// Index of a column by name.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c == name)
    }
    /// The table as RFC 4180 CSV.
    pub fn to_csv(&self) -> String {
        to_csv(self)
    }
}
