//! Tables of an SQLite database as compact row bytes: the contract between the page's SQLite
//! engine (this crate's `engine` feature, its own wasm module) and the traceprism core, which
//! reads Nsight Systems exports through it.
//!
//! The core says what it wants as [`Request`]s (a table and its columns, read by name); whatever
//! answers them (the engine in the page, `rusqlite` natively, or a [`Dump`] of row bytes) is a
//! [`Tables`]. [`dump`] writes the answers of any [`Tables`] as row bytes and [`Dump`] reads them
//! back as a [`Tables`], so the core reads an export the same way whichever side opened it.
//!
//! # Row bytes
//!
//! ```text
//! MAGIC                      8 bytes: "TPROWS1\n"
//! database bytes             varint (the size of the database the rows come from)
//! tables                     varint
//! per table:
//!   name                     text
//!   present                  1 byte (0: the database has no such table; nothing follows)
//!   columns                  varint, then per column: name (text), present (1 byte)
//!   rows                     varint
//!   row bytes                varint (the length of what follows, to skip a table unread)
//!   cells                    row by row, column by column: a tag byte, then its value
//! ```
//!
//! A cell is `0` NULL, `1` an integer (zigzag varint), `2` a real (8 bytes, little-endian) or `3`
//! text (varint length, UTF-8 bytes); a blob is written as NULL. Text is a varint length and its
//! bytes. Every read is bounds-checked: malformed bytes give an error, never a panic.

#![deny(unsafe_code)]

#[cfg(all(feature = "engine", target_arch = "wasm32"))]
#[allow(unsafe_code)]
mod engine;

use std::collections::HashMap;

/// The first bytes of row bytes.
pub const MAGIC: &[u8; 8] = b"TPROWS1\n";

/// Whether `bytes` start like row bytes.
pub fn looks_like_rows(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// One value of a row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cell<'a> {
    /// SQL NULL (also an absent column, and a blob).
    Null,
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Real(f64),
    /// Text.
    Text(&'a str),
}

impl<'a> Cell<'a> {
    /// The integer, if the cell holds one (a real with no fraction counts).
    pub fn int(self) -> Option<i64> {
        match self {
            Cell::Int(v) => Some(v),
            Cell::Real(v) if v.fract() == 0.0 && v.abs() < 9.0e18 => Some(v as i64),
            _ => None,
        }
    }
    /// The text, if the cell holds text.
    pub fn text(self) -> Option<&'a str> {
        match self {
            Cell::Text(t) => Some(t),
            _ => None,
        }
    }
}

/// What is asked of one table: its name and the columns wanted, by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The table.
    pub table: String,
    /// The columns, in the order the rows give them.
    pub columns: Vec<String>,
}

impl Request {
    /// Requests as text: one line per table, its name then its columns, separated by spaces.
    pub fn text_of(requests: &[Request]) -> String {
        requests.iter().map(|r| format!("{} {}\n", r.table, r.columns.join(" "))).collect()
    }
    /// Requests from [`Request::text_of`]'s text (blank lines skipped).
    pub fn parse(text: &str) -> Vec<Request> {
        text.lines()
            .filter_map(|line| {
                let mut words = line.split_whitespace();
                let table = words.next()?.to_string();
                Some(Request { table, columns: words.map(str::to_string).collect() })
            })
            .collect()
    }
}

/// A source of tables: a database, or row bytes read back.
pub trait Tables {
    /// The columns of `table`, or `None` when there is no such table.
    fn columns(&mut self, table: &str) -> Result<Option<Vec<String>>, String>;
    /// Every row of `table` with `columns` in that order; a column the table lacks is NULL. A table
    /// that does not exist has no rows.
    fn rows(&mut self, table: &str, columns: &[&str], each: &mut dyn FnMut(&[Cell<'_>])) -> Result<(), String>;
}

/// An SQL database: whatever runs a query and hands its rows on. Every such database is [`Tables`]
/// (the columns from `PRAGMA table_info`, the rows from a `SELECT` of the wanted columns in which an
/// absent one reads `NULL`): the page's engine and the native reader share this, not the SQL.
pub trait Sql {
    /// Runs `sql`, handing each row's cells to `each`.
    fn query(&mut self, sql: &str, each: &mut dyn FnMut(&[Cell<'_>])) -> Result<(), String>;
}

/// A name quoted as an SQL identifier.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

impl<T: Sql> Tables for T {
    fn columns(&mut self, table: &str) -> Result<Option<Vec<String>>, String> {
        let mut cols = Vec::new();
        self.query(&format!("PRAGMA table_info({})", quoted(table)), &mut |r| {
            if let Some(name) = r.get(1).and_then(|c| c.text()) {
                cols.push(name.to_string());
            }
        })?;
        Ok((!cols.is_empty()).then_some(cols))
    }

    fn rows(&mut self, table: &str, columns: &[&str], each: &mut dyn FnMut(&[Cell<'_>])) -> Result<(), String> {
        let Some(have) = self.columns(table)? else { return Ok(()) };
        let list: Vec<String> = columns
            .iter()
            .map(|c| if have.iter().any(|h| h == c) { quoted(c) } else { format!("NULL AS {}", quoted(c)) })
            .collect();
        self.query(&format!("SELECT {} FROM {}", list.join(", "), quoted(table)), each)
    }
}

/// Row bytes answering `requests` from `tables`, a database of `database_bytes` bytes.
pub fn dump(tables: &mut dyn Tables, requests: &[Request], database_bytes: u64) -> Result<Vec<u8>, String> {
    let mut out = MAGIC.to_vec();
    varint(&mut out, database_bytes);
    varint(&mut out, requests.len() as u64);
    for r in requests {
        text(&mut out, &r.table);
        let Some(have) = tables.columns(&r.table)? else {
            out.push(0);
            continue;
        };
        out.push(1);
        varint(&mut out, r.columns.len() as u64);
        for c in &r.columns {
            text(&mut out, c);
            out.push(have.iter().any(|h| h == c) as u8);
        }
        let columns: Vec<&str> = r.columns.iter().map(String::as_str).collect();
        let mut cells = Vec::new();
        let mut rows = 0u64;
        tables.rows(&r.table, &columns, &mut |row| {
            rows += 1;
            for cell in row {
                put_cell(&mut cells, *cell);
            }
        })?;
        varint(&mut out, rows);
        varint(&mut out, cells.len() as u64);
        out.extend_from_slice(&cells);
    }
    Ok(out)
}

fn put_cell(out: &mut Vec<u8>, cell: Cell<'_>) {
    match cell {
        Cell::Null => out.push(0),
        Cell::Int(v) => {
            out.push(1);
            varint(out, ((v << 1) ^ (v >> 63)) as u64);
        }
        Cell::Real(v) => {
            out.push(2);
            out.extend_from_slice(&v.to_le_bytes());
        }
        Cell::Text(t) => {
            out.push(3);
            text(out, t);
        }
    }
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn text(out: &mut Vec<u8>, t: &str) {
    varint(out, t.len() as u64);
    out.extend_from_slice(t.as_bytes());
}

/// One table of row bytes: its columns (name, present) and where its cells lie.
struct DumpTable {
    columns: Vec<(String, bool)>,
    rows: u64,
    cells: std::ops::Range<usize>,
}

/// Row bytes read back, as [`Tables`]: only the requested columns are there, so asking for a
/// column that was not requested is an error (the database may have it).
pub struct Dump<'a> {
    bytes: &'a [u8],
    /// The size of the database the rows come from.
    pub database_bytes: u64,
    tables: HashMap<String, Option<DumpTable>>,
}

/// A bounds-checked cursor over row bytes.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

fn malformed(what: &str, at: usize) -> String {
    format!("malformed row bytes at byte {at}: {what}")
}

impl<'a> Cursor<'a> {
    fn byte(&mut self) -> Result<u8, String> {
        let b = *self.bytes.get(self.at).ok_or_else(|| malformed("they end early", self.at))?;
        self.at += 1;
        Ok(b)
    }
    fn varint(&mut self) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(malformed("a varint runs past 64 bits", self.at))
    }
    fn take(&mut self, n: u64) -> Result<&'a [u8], String> {
        let end = usize::try_from(n).ok().and_then(|n| self.at.checked_add(n)).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| malformed("a length runs past the end", self.at))?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn text(&mut self) -> Result<&'a str, String> {
        let n = self.varint()?;
        let at = self.at;
        std::str::from_utf8(self.take(n)?).map_err(|_| malformed("text is not UTF-8", at))
    }
    fn cell(&mut self) -> Result<Cell<'a>, String> {
        Ok(match self.byte()? {
            0 => Cell::Null,
            1 => {
                let z = self.varint()?;
                Cell::Int(((z >> 1) as i64) ^ -((z & 1) as i64))
            }
            2 => {
                let b = self.take(8)?;
                Cell::Real(f64::from_le_bytes(b.try_into().expect("8 bytes")))
            }
            3 => Cell::Text(self.text()?),
            tag => return Err(malformed(&format!("unknown cell tag {tag}"), self.at - 1)),
        })
    }
}

impl<'a> Dump<'a> {
    /// Reads the tables' directory of `bytes` (the cells are read when asked for).
    pub fn new(bytes: &'a [u8]) -> Result<Dump<'a>, String> {
        if !looks_like_rows(bytes) {
            return Err(malformed("no TPROWS1 header", 0));
        }
        let mut c = Cursor { bytes, at: MAGIC.len() };
        let database_bytes = c.varint()?;
        let mut tables = HashMap::new();
        for _ in 0..c.varint()? {
            let name = c.text()?.to_string();
            if c.byte()? == 0 {
                tables.insert(name, None);
                continue;
            }
            let mut columns = Vec::new();
            for _ in 0..c.varint()? {
                let column = c.text()?.to_string();
                columns.push((column, c.byte()? != 0));
            }
            let rows = c.varint()?;
            let len = c.varint()?;
            let start = c.at;
            c.take(len)?;
            tables.insert(name, Some(DumpTable { columns, rows, cells: start..c.at }));
        }
        if c.at != bytes.len() {
            return Err(malformed("bytes after the last table", c.at));
        }
        Ok(Dump { bytes, database_bytes, tables })
    }

    fn table(&self, table: &str) -> Result<&Option<DumpTable>, String> {
        self.tables.get(table).ok_or_else(|| format!("the row bytes do not answer for table {table} (it was not requested)"))
    }
}

impl Tables for Dump<'_> {
    fn columns(&mut self, table: &str) -> Result<Option<Vec<String>>, String> {
        Ok(self.table(table)?.as_ref().map(|t| t.columns.iter().filter(|c| c.1).map(|c| c.0.clone()).collect()))
    }

    fn rows(&mut self, table: &str, columns: &[&str], each: &mut dyn FnMut(&[Cell<'_>])) -> Result<(), String> {
        let Some(t) = self.table(table)? else { return Ok(()) };
        // Where each wanted column lies in the stored row (None: not stored, so NULL).
        let mut slot = Vec::with_capacity(columns.len());
        for want in columns {
            match t.columns.iter().position(|c| c.0 == *want) {
                Some(at) => slot.push(at),
                None => return Err(format!("the row bytes of table {table} have no column {want} (it was not requested)")),
            }
        }
        let mut c = Cursor { bytes: &self.bytes[..t.cells.end], at: t.cells.start };
        let mut stored = vec![Cell::Null; t.columns.len()];
        let mut row = vec![Cell::Null; columns.len()];
        for _ in 0..t.rows {
            for s in stored.iter_mut() {
                *s = c.cell()?;
            }
            for (r, &at) in row.iter_mut().zip(&slot) {
                *r = stored[at];
            }
            each(&row);
        }
        if c.at != t.cells.end {
            return Err(malformed(&format!("table {table}'s cells do not fill its length"), c.at));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tables held in memory: name → (columns, rows).
    struct Memory(Vec<(&'static str, Vec<&'static str>, Vec<Vec<Cell<'static>>>)>);

    impl Tables for Memory {
        fn columns(&mut self, table: &str) -> Result<Option<Vec<String>>, String> {
            Ok(self.0.iter().find(|t| t.0 == table).map(|t| t.1.iter().map(|c| c.to_string()).collect()))
        }
        fn rows(&mut self, table: &str, columns: &[&str], each: &mut dyn FnMut(&[Cell<'_>])) -> Result<(), String> {
            let Some(t) = self.0.iter().find(|t| t.0 == table) else { return Ok(()) };
            for r in &t.2 {
                let row: Vec<Cell> =
                    columns.iter().map(|c| t.1.iter().position(|h| h == c).map_or(Cell::Null, |at| r[at])).collect();
                each(&row);
            }
            Ok(())
        }
    }

    fn sample() -> Memory {
        Memory(vec![(
            "K",
            vec!["start", "name", "ratio"],
            vec![
                vec![Cell::Int(12_345_678_901), Cell::Text("gemm<128, 64>"), Cell::Real(0.5)],
                vec![Cell::Int(-3), Cell::Null, Cell::Real(-2.25)],
                vec![Cell::Int(i64::MIN), Cell::Text(""), Cell::Int(i64::MAX)],
            ],
        )])
    }

    fn requests() -> Vec<Request> {
        Request::parse("K start name absent ratio\nMissing a b\n")
    }

    #[test]
    fn rows_come_back_as_they_went() {
        let bytes = dump(&mut sample(), &requests(), 1234).unwrap();
        let mut back = Dump::new(&bytes).unwrap();
        assert_eq!(back.database_bytes, 1234);
        assert_eq!(back.columns("K").unwrap(), Some(vec!["start".to_string(), "name".into(), "ratio".into()]));
        assert_eq!(back.columns("Missing").unwrap(), None);
        assert!(back.columns("Other").is_err(), "a table never asked for is an error, not an absent table");
        let (mut got, mut want) = (Vec::new(), Vec::new());
        back.rows("K", &["ratio", "absent", "start", "name"], &mut |r| got.push(format!("{r:?}"))).unwrap();
        sample().rows("K", &["ratio", "absent", "start", "name"], &mut |r| want.push(format!("{r:?}"))).unwrap();
        assert_eq!(got, want);
        assert_eq!(got.len(), 3);
        assert!(back.rows("K", &["never_asked"], &mut |_| {}).is_err());
    }

    #[test]
    fn requests_round_trip_as_text() {
        let r = requests();
        assert_eq!(Request::parse(&Request::text_of(&r)), r);
        assert_eq!(r[0].columns, ["start", "name", "absent", "ratio"]);
    }

    #[test]
    fn malformed_bytes_are_errors() {
        let bytes = dump(&mut sample(), &requests(), 1234).unwrap();
        for cut in 0..bytes.len() {
            let Ok(mut d) = Dump::new(&bytes[..cut]) else { continue };
            // A directory that parses from a cut means the cut fell after it: rows must not panic.
            let _ = d.rows("K", &["start"], &mut |_| {});
        }
        let mut bad = bytes.clone();
        *bad.last_mut().unwrap() ^= 0xff;
        let _ = Dump::new(&bad).and_then(|mut d| d.rows("K", &["start", "name", "ratio"], &mut |_| {}));
        assert!(Dump::new(b"not rows").err().is_some_and(|e| e.contains("byte 0")));
    }
}
