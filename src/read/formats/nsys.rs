//! An Nsight Systems export (`nsys export --type sqlite`): natively the SQLite database itself; in
//! the page, the row bytes its SQLite module makes of one ([`crate::ingest::nsys`]). Kept whole
//! as it comes and read at the end.

use super::{FormatKind, FormatReader, ReadSettings, Reading};
use crate::error::{Error, Result};
use crate::ingest::{looks_like_rows, looks_like_sqlite, Format, NsysRead};
use crate::model::{InputFormat, Trace, TraceBuilder};

/// An Nsight Systems export, as a database or as row bytes.
pub struct Nsys;

/// The kind registered in [`super::FORMATS`].
pub static NSYS: Nsys = Nsys;

impl FormatKind for Nsys {
    fn tell(&self, head: &[u8]) -> Option<Format> {
        if looks_like_sqlite(head) {
            Some(Format::NsysSqlite)
        } else {
            looks_like_rows(head).then_some(Format::NsysRows)
        }
    }

    fn is(&self, format: Format) -> bool {
        format.is_nsys()
    }

    /// The page's core reads row bytes only: its SQLite module makes them of a database first.
    fn reading(&self, format: Format) -> Reading {
        match format {
            Format::NsysSqlite => Reading::AsRows,
            _ => Reading::InOrder,
        }
    }

    fn open(&self, _: Format, settings: ReadSettings) -> Box<dyn FormatReader> {
        Box::new(NsysReader { bytes: Vec::new(), process: settings.nsys_process })
    }
}

/// Keeps the export's bytes for the end.
struct NsysReader {
    bytes: Vec<u8>,
    /// Read only this process's events (one rank of a run the export holds).
    process: Option<i64>,
}

impl FormatReader for NsysReader {
    fn push(&mut self, bytes: &[u8], _: bool) -> Result<()> {
        self.bytes.extend_from_slice(bytes);
        Ok(())
    }

    fn progress(&self) -> (u64, u64) {
        (0, 0)
    }

    fn contents(self: Box<Self>) -> Box<dyn FormatReader> {
        self
    }

    fn finish(self: Box<Self>, _: u64) -> Result<Trace> {
        let mut builder = TraceBuilder::default();
        // Row bytes stand for the database they were made of: its size is the input's.
        let (read, database_bytes) = if looks_like_rows(&self.bytes) {
            crate::ingest::read_nsys_rows(&self.bytes, &mut builder, self.process)?
        } else {
            (read_sqlite(&self.bytes, &mut builder, self.process)?, self.bytes.len() as u64)
        };
        let mut trace = builder.finish(false);
        trace.stats.bytes_in = database_bytes;
        trace.stats.json_bytes = database_bytes;
        trace.stats.format = InputFormat::NsysSqlite;
        let [kernels, runtime, memcpy, memset, nvtx, graphs] = read.counts;
        let graphs = if graphs > 0 { format!(", {graphs} whole-graph replays") } else { String::new() };
        trace.stats.notes.push(format!(
            "read as an Nsight Systems export (SQLite, schema {}): {kernels} kernels, {runtime} runtime calls, {memcpy} memcpy, {memset} memset, {nvtx} NVTX ranges{graphs}",
            read.schema_version
        ));
        trace.stats.notes.extend(read.notes);
        if let Some(p) = self.process {
            trace.stats.notes.push(format!("process {p} of the export only (one rank of the run it holds)"));
        }
        if trace.stats.kept == 0 {
            return Err(Error::new(format!(
                "an Nsight Systems export (schema {}) with no kernel, runtime call or NVTX range",
                read.schema_version
            )));
        }
        Ok(trace)
    }
}

/// An SQLite database's tables, read natively.
#[cfg(all(not(target_arch = "wasm32"), feature = "nsys"))]
fn read_sqlite(bytes: &[u8], builder: &mut TraceBuilder, process: Option<i64>) -> Result<NsysRead> {
    crate::ingest::read_nsys_process(bytes, builder, process)
}

/// The core in the page reads an export only as row bytes (its SQLite is a module of its own,
/// which the page runs first); a build without the `nsys` feature not at all.
#[cfg(any(target_arch = "wasm32", not(feature = "nsys")))]
fn read_sqlite(_: &[u8], _: &mut TraceBuilder, _: Option<i64>) -> Result<NsysRead> {
    Err(Error::new(if cfg!(target_arch = "wasm32") {
        "the input is an SQLite database (an Nsight Systems export?) handed to the core as it is: the page reads these through its SQLite module, which makes row bytes of the export first"
    } else {
        "the input is an SQLite database (an Nsight Systems export?): this build of traceprism has no SQLite reader (the `nsys` feature)"
    }))
}
