//! An export's SQLite bytes opened natively (`rusqlite`, its bundled SQLite), answering the
//! reader's [`Tables`] requests directly, row by row, with no row bytes in between.

use super::{read_nsys_tables, Cell, NsysRead, Sql, Tables, KERNELS, PROCESS_SHIFT};
use crate::error::{Error, Result};
use crate::ingest::interchange::EventSink;
use rusqlite::types::ValueRef;
use rusqlite::Connection;

/// An export opened in memory.
pub struct Database {
    db: Connection,
}

impl Database {
    /// Opens an SQLite file's bytes (copied into SQLite's own memory, read-only).
    pub fn open(bytes: &[u8]) -> Result<Database> {
        let fail = |e: rusqlite::Error| Error::new(format!("cannot open the SQLite database: {e}"));
        let mut db = Connection::open_in_memory().map_err(fail)?;
        db.deserialize_read_exact(rusqlite::MAIN_DB, bytes, bytes.len(), true).map_err(fail)?;
        // SQLite reads lazily: a file that is no database fails here, not at the first table.
        db.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(())).map_err(fail)?;
        Ok(Database { db })
    }
}

impl Sql for Database {
    fn query(&mut self, sql: &str, each: &mut dyn FnMut(&[Cell<'_>])) -> std::result::Result<(), String> {
        let fail = |e: rusqlite::Error| e.to_string();
        let mut st = self.db.prepare(sql).map_err(fail)?;
        let n = st.column_count();
        let mut rows = st.query([]).map_err(fail)?;
        // A row's cells borrow the row, which lives until the next step: they sit on the stack
        // (up to 16 columns, as many as the reader asks of any table) and are handed on at once.
        let mut long: Vec<Cell<'_>>;
        while let Some(row) = rows.next().map_err(fail)? {
            let mut short = [Cell::Null; 16];
            let cells: &mut [Cell<'_>] = if n <= short.len() {
                &mut short[..n]
            } else {
                long = vec![Cell::Null; n];
                &mut long[..]
            };
            for (i, cell) in cells.iter_mut().enumerate() {
                *cell = match row.get_ref(i).map_err(fail)? {
                    ValueRef::Integer(v) => Cell::Int(v),
                    ValueRef::Real(v) => Cell::Real(v),
                    ValueRef::Text(t) => std::str::from_utf8(t).map_or(Cell::Null, Cell::Text),
                    ValueRef::Null | ValueRef::Blob(_) => Cell::Null,
                };
            }
            each(cells);
        }
        Ok(())
    }
}

/// The processes of an export that ran GPU kernels, by process id.
pub fn nsys_gpu_processes(bytes: &[u8]) -> Result<Vec<i64>> {
    let mut db = Database::open(bytes)?;
    let has_pid = db.columns(KERNELS).map_err(Error::new)?.is_some_and(|c| c.iter().any(|c| c == "globalPid"));
    let mut out = Vec::new();
    if has_pid {
        db.query(&format!("SELECT DISTINCT globalPid FROM {KERNELS}"), &mut |r| {
            if let Some(g) = r[0].int() {
                out.push(g / PROCESS_SHIFT % PROCESS_SHIFT);
            }
        })
        .map_err(Error::new)?;
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Reads an export's SQLite bytes and hands its rows to `sink` as events.
pub fn read_nsys(bytes: &[u8], sink: &mut impl EventSink) -> Result<NsysRead> {
    read_nsys_process(bytes, sink, None)
}

/// [`read_nsys`] of one process only (`process`: its id), as one rank of a run.
pub fn read_nsys_process(bytes: &[u8], sink: &mut impl EventSink, process: Option<i64>) -> Result<NsysRead> {
    read_nsys_tables(&mut Database::open(bytes)?, sink, process)
}

/// The row bytes the page's SQLite module makes of an export, made natively: tests and the
/// bench read an export both ways.
pub fn row_bytes(bytes: &[u8]) -> Result<Vec<u8>> {
    traceprism_sqlite::dump(&mut Database::open(bytes)?, &super::requests(), bytes.len() as u64).map_err(Error::new)
}
