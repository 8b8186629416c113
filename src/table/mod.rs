//! Tables: named, typed columns and rows, one definition shared by the CLI, CSV/xlsx export and the
//! page.
//!
//! Every column declares its type where the table is made, in its column spec: `name:int`,
//! `name:float`, `name:us` (a time in µs), `name:bool`, or plain `name` (text). CSV writes booleans
//! as `true`/`false`, the workbook as boolean cells, the page sorts and aligns by the type, and
//! `tests/suite/table_types.rs` checks every cell of every table on every fixture against its column.

#[cfg(all(feature = "parquet", not(target_arch = "wasm32")))]
pub mod arrow;
mod csv;
pub mod markup;
#[cfg(all(feature = "parquet", not(target_arch = "wasm32")))]
pub mod parquet;
pub mod xlsx;

pub use self::csv::{push_row, to_csv, write_table, CsvWriter};
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
    /// A yes/no fact (`true` / `false` in CSV).
    Bool(bool),
}

/// The declared type of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ColumnType {
    /// Whole numbers ([`Cell::Int`]).
    Integer,
    /// Numbers with decimals ([`Cell::Float`]; whole numbers allowed).
    Float,
    /// Text ([`Cell::Text`]).
    Text,
    /// Yes/no ([`Cell::Bool`]).
    Boolean,
    /// A time in microseconds ([`Cell::Micros`], or a [`Cell::Float`] of µs).
    Micros,
}

impl ColumnType {
    /// The suffix that declares this type in a column spec (`""` for text).
    pub fn suffix(self) -> &'static str {
        match self {
            ColumnType::Integer => "int",
            ColumnType::Float => "float",
            ColumnType::Text => "text",
            ColumnType::Boolean => "bool",
            ColumnType::Micros => "us",
        }
    }
    /// Whether `cell` may stand in a column of this type (an empty cell may stand anywhere).
    pub fn accepts(self, cell: &Cell) -> bool {
        matches!(
            (self, cell),
            (_, Cell::Empty)
                | (ColumnType::Integer, Cell::Int(_))
                | (ColumnType::Float, Cell::Float(_) | Cell::Int(_))
                | (ColumnType::Text, Cell::Text(_))
                | (ColumnType::Boolean, Cell::Bool(_))
                | (ColumnType::Micros, Cell::Micros(_) | Cell::Float(_))
        )
    }
}

/// Splits a column spec (`kernel_time_us:us`, `name`) into its name and declared type. Specs are
/// written in the code: an unknown suffix is a programming error.
pub fn column_spec(spec: &str) -> (&str, ColumnType) {
    match spec.rsplit_once(':') {
        Some((name, suffix)) => {
            let t = [ColumnType::Integer, ColumnType::Float, ColumnType::Text, ColumnType::Boolean, ColumnType::Micros]
                .into_iter()
                .find(|t| t.suffix() == suffix);
            match t {
                Some(t) => (name, t),
                None => panic!("column spec {spec:?}: unknown type {suffix:?} (int, float, us, bool, text)"),
            }
        }
        None => (spec, ColumnType::Text),
    }
}

/// The names of column specs, in order.
pub fn column_names<'a>(specs: &[&'a str]) -> Vec<&'a str> {
    specs.iter().map(|s| column_spec(s).0).collect()
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
            Cell::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
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
impl From<bool> for Cell {
    fn from(v: bool) -> Self {
        Cell::Bool(v)
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

/// A table with a name, typed columns and rows of cells.
#[derive(Debug, Clone, Serialize)]
pub struct Table {
    /// The table's name (its CSV file and sheet).
    pub name: String,
    /// Column names.
    pub columns: Vec<String>,
    /// Each column's declared type.
    pub types: Vec<ColumnType>,
    /// Rows, one cell per column.
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    /// An empty table with the given column specs (`name:int`, `name:float`, `name:us`,
    /// `name:bool`, or `name` for text; see [`column_spec`]).
    pub fn new<S: AsRef<str>>(name: &str, specs: &[S]) -> Self {
        let (columns, types) = specs.iter().map(|s| column_spec(s.as_ref())).map(|(n, t)| (n.to_string(), t)).unzip();
        Table { name: name.to_string(), columns, types, rows: Vec::new() }
    }
    /// The columns `idx` of this table (in that order), with their types and cells.
    pub fn project(&self, idx: &[usize]) -> Table {
        Table {
            name: self.name.clone(),
            columns: idx.iter().map(|&i| self.columns[i].clone()).collect(),
            types: idx.iter().map(|&i| self.types[i]).collect(),
            rows: self.rows.iter().map(|r| idx.iter().map(|&i| r[i].clone()).collect()).collect(),
        }
    }
    /// The cells that do not fit their column's declared type: `(row, column)` pairs.
    pub fn mistyped(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for (r, row) in self.rows.iter().enumerate() {
            for (c, cell) in row.iter().enumerate() {
                if !self.types.get(c).is_some_and(|t| t.accepts(cell)) {
                    out.push((r, c));
                }
            }
        }
        out
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
