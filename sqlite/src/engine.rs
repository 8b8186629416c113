//! The page's SQLite engine: a database's bytes opened in memory (read-only, no copy:
//! `sqlite3_deserialize` over the bytes wasm-bindgen handed in) and the core's requests answered
//! as row bytes. Built into its own wasm module, which the page fetches only for a `.sqlite` file.

use crate::{dump, Cell, Request, Sql};
use sqlite_wasm_rs as ffi;
use std::ffi::{c_int, CStr, CString};
use wasm_bindgen::prelude::*;

/// The tables of `database` (an SQLite file's bytes) that `requests` (text: one line per table,
/// its name then its columns) asks for, as row bytes (see the crate's documentation).
#[wasm_bindgen]
pub fn dump_tables(database: &[u8], requests: &str) -> Result<Vec<u8>, JsError> {
    let mut db = Database::open(database).map_err(|e| JsError::new(&e))?;
    dump(&mut db, &Request::parse(requests), database.len() as u64).map_err(|e| JsError::new(&e))
}

/// The SQLite library's version (`3.50.1`), for the page's about line.
#[wasm_bindgen]
pub fn sqlite_version() -> String {
    // SAFETY: sqlite3_libversion returns a static NUL-terminated string.
    unsafe { CStr::from_ptr(ffi::sqlite3_libversion()) }.to_string_lossy().into_owned()
}

/// An open connection over borrowed bytes; closed on drop, before the bytes go.
struct Database<'a> {
    db: *mut ffi::sqlite3,
    _bytes: std::marker::PhantomData<&'a [u8]>,
}

impl<'a> Database<'a> {
    fn open(bytes: &'a [u8]) -> Result<Database<'a>, String> {
        let mut db = std::ptr::null_mut();
        // SAFETY: a fresh in-memory connection; `db` is written by sqlite3_open_v2.
        let rc = unsafe {
            ffi::sqlite3_open_v2(
                c":memory:".as_ptr().cast(),
                &mut db,
                ffi::SQLITE_OPEN_READWRITE | ffi::SQLITE_OPEN_CREATE,
                std::ptr::null(),
            )
        };
        let this = Database { db, _bytes: std::marker::PhantomData };
        if rc != ffi::SQLITE_OK {
            return Err(format!("cannot open an in-memory SQLite connection: {}", this.message()));
        }
        // SAFETY: READONLY without FREEONCLOSE: SQLite reads the bytes in place and never frees or
        // writes them; the connection closes (Drop) while the borrow of `bytes` still holds.
        let rc = unsafe {
            ffi::sqlite3_deserialize(
                db,
                c"main".as_ptr().cast(),
                bytes.as_ptr() as *mut u8,
                bytes.len() as i64,
                bytes.len() as i64,
                ffi::SQLITE_DESERIALIZE_READONLY,
            )
        };
        if rc != ffi::SQLITE_OK {
            return Err(format!("cannot open the SQLite database: {}", this.message()));
        }
        // SQLite reads lazily: a file that is no database fails here, not at the first table.
        let mut this = this;
        this.query("SELECT count(*) FROM sqlite_master", &mut |_| {})
            .map_err(|e| format!("cannot open the SQLite database: {e}"))?;
        Ok(this)
    }

    fn message(&self) -> String {
        // SAFETY: sqlite3_errmsg returns a NUL-terminated string owned by the connection.
        unsafe { CStr::from_ptr(ffi::sqlite3_errmsg(self.db)) }.to_string_lossy().into_owned()
    }
}

impl Sql for Database<'_> {
    fn query(&mut self, sql: &str, each: &mut dyn FnMut(&[Cell<'_>])) -> Result<(), String> {
        let sql = CString::new(sql).map_err(|_| "a query with a NUL byte".to_string())?;
        let mut stmt = std::ptr::null_mut();
        // SAFETY: a NUL-terminated query; `stmt` is finalized below on every path.
        let rc = unsafe { ffi::sqlite3_prepare_v2(self.db, sql.as_ptr().cast(), -1, &mut stmt, std::ptr::null_mut()) };
        if rc != ffi::SQLITE_OK {
            return Err(format!("SQLite: {}", self.message()));
        }
        // SAFETY: `stmt` is a prepared statement of this connection.
        let n = unsafe { ffi::sqlite3_column_count(stmt) } as usize;
        let mut row: Vec<Cell<'_>> = Vec::with_capacity(n);
        let result = loop {
            // SAFETY: as above.
            match unsafe { ffi::sqlite3_step(stmt) } {
                ffi::SQLITE_ROW => {}
                ffi::SQLITE_DONE => break Ok(()),
                _ => break Err(format!("SQLite: {}", self.message())),
            }
            row.clear();
            for i in 0..n as c_int {
                // SAFETY: `i` < the column count of a statement positioned on a row; text is read
                // with its length and copied into the row before the next step invalidates it.
                let cell = unsafe {
                    match ffi::sqlite3_column_type(stmt, i) {
                        ffi::SQLITE_INTEGER => Cell::Int(ffi::sqlite3_column_int64(stmt, i)),
                        ffi::SQLITE_FLOAT => Cell::Real(ffi::sqlite3_column_double(stmt, i)),
                        ffi::SQLITE_TEXT => {
                            let p = ffi::sqlite3_column_text(stmt, i);
                            let len = ffi::sqlite3_column_bytes(stmt, i) as usize;
                            if p.is_null() {
                                Cell::Null
                            } else {
                                match std::str::from_utf8(std::slice::from_raw_parts(p, len)) {
                                    Ok(t) => Cell::Text(t),
                                    Err(_) => Cell::Null,
                                }
                            }
                        }
                        _ => Cell::Null,
                    }
                };
                row.push(cell);
            }
            each(&row);
        };
        // SAFETY: finalizes the statement prepared above, once.
        unsafe { ffi::sqlite3_finalize(stmt) };
        result
    }
}

impl Drop for Database<'_> {
    fn drop(&mut self) {
        // SAFETY: closes the connection opened in `open` (a null handle is a no-op).
        unsafe { ffi::sqlite3_close(self.db) };
    }
}
