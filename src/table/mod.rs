//! Tables: named columns and rows, one definition shared by the CLI, CSV/xlsx export and the page.

mod csv;
pub mod markup;
pub mod xlsx;

pub use self::csv::to_csv;
use serde::Serialize;

/// One cell of a table.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Cell {
    Empty,
    Int(i64),
    Float(f64),
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
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:03}", a / 1000, a % 1000)
}

impl Cell {
    /// The cell as display/CSV text (floats with up to 3 decimals, trailing zeros kept short).
    pub fn text(&self) -> String {
        match self {
            Cell::Empty => String::new(),
            Cell::Int(v) => v.to_string(),
            Cell::Float(v) => format_float(*v),
            Cell::Text(s) => s.clone(),
            Cell::Micros(ns) => format_micros(*ns),
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
    if !v.is_finite() {
        return String::new();
    }
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
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
    pub name: String,
    pub columns: Vec<String>,
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
