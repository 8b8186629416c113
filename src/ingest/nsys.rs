//! bytes → events for Nsight Systems exports (`nsys export --type sqlite`): each row becomes the
//! event a Kineto trace would hold, handed to the same [`EventSink`], so every analysis reads it
//! unchanged.
//!
//! What is read (by column name, never by position; the schema is versioned in
//! `META_DATA_EXPORT.EXPORT_SCHEMA_VERSION` and a minor bump may rename a column):
//!
//! - `CUPTI_ACTIVITY_KIND_KERNEL` → kernels (`start`/`end` ns, `deviceId` as the process,
//!   `streamId` as the thread, the name from `StringIds` by `demangledName`, else `shortName`, grid
//!   and block);
//! - `CUPTI_ACTIVITY_KIND_RUNTIME` → runtime calls (`cuda_runtime`) on the thread of `globalTid`,
//!   named without their version suffix (`cudaLaunchKernel_v7000` → `cudaLaunchKernel`);
//! - `CUPTI_ACTIVITY_KIND_MEMCPY` / `_MEMSET` → memcpy / memset by `copyKind`;
//! - `NVTX_EVENTS` ranges (push/pop and start/end) → CPU ops when named like one (`aten::mm, seq =
//!   12` → `aten::mm`, as `torch.autograd.profiler.emit_nvtx` writes them), else annotations (vLLM's
//!   and SGLang's step ranges);
//! - `TARGET_INFO_GPU` → `deviceProperties`; `PROCESSES` and `ThreadNames` → names;
//! - `TARGET_INFO_SYSTEM_ENV` and `META_DATA_CAPTURE` → metadata, which the secret detector reads
//!   (values never kept).
//!
//! A kernel's launch is the runtime row with its `correlationId` in its process (`globalPid` /
//! 2²⁴ mod 2²⁴ for kernels, `globalTid` / 2²⁴ mod 2²⁴ for runtime rows): correlation ids restart in
//! every process, so the event's correlation is the process and the id together.

use super::event::{Args, Field, Id, RawEvent};
use super::stream::EventSink;
use crate::error::{Error, Result};
use rusqlite::{Connection, Row};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

/// What the reader says about an export beside its events.
#[derive(Debug, Default, Clone)]
pub struct NsysRead {
    /// `EXPORT_SCHEMA_VERSION` (`3.25.0`), or `unknown`.
    pub schema_version: String,
    /// Things the analysis does without (a table or column absent), for the notes.
    pub notes: Vec<String>,
    /// Kernels, runtime calls, memcpy, memset and NVTX ranges read.
    pub counts: [u64; 5],
}

/// An export opened in memory, with its schema.
struct Export {
    db: Connection,
    version: String,
}

const PROCESS_SHIFT: i64 = 0x100_0000;

/// Process id of a `globalPid` / `globalTid`.
fn process_of(global: i64) -> i64 {
    global / PROCESS_SHIFT % PROCESS_SHIFT
}

/// A process's correlation ids made unique across processes.
fn correlation(process: i64, id: i64) -> i64 {
    (process << 32) | (id & 0xffff_ffff)
}

impl Export {
    fn open(bytes: &[u8]) -> Result<Export> {
        let fail = |e: rusqlite::Error| Error::new(format!("cannot open the SQLite database: {e}"));
        let mut db = Connection::open_in_memory().map_err(fail)?;
        db.deserialize_read_exact(rusqlite::MAIN_DB, bytes, bytes.len(), true).map_err(fail)?;
        let mut e = Export { db, version: "unknown".into() };
        if e.columns("META_DATA_EXPORT").is_some() {
            if let Ok(v) = e.db.query_row("SELECT value FROM META_DATA_EXPORT WHERE name = 'EXPORT_SCHEMA_VERSION'", [], |r| {
                r.get::<_, String>(0)
            }) {
                e.version = v;
            }
        }
        Ok(e)
    }

    /// The columns of `table`, or `None` when the export has no such table.
    fn columns(&self, table: &str) -> Option<HashSet<String>> {
        let mut st = self.db.prepare(&format!("PRAGMA table_info(\"{table}\")")).ok()?;
        let cols: HashSet<String> = st.query_map([], |r| r.get::<_, String>(1)).ok()?.filter_map(|c| c.ok()).collect();
        (!cols.is_empty()).then_some(cols)
    }

    /// `wanted` columns of `table` as a SELECT list: each present column by name, an absent one as
    /// NULL (the caller decides which it needs).
    fn select(&self, table: &str, wanted: &[&str]) -> Option<(String, HashSet<String>)> {
        let have = self.columns(table)?;
        let list: Vec<String> =
            wanted.iter().map(|c| if have.contains(*c) { format!("\"{c}\"") } else { format!("NULL AS \"{c}\"") }).collect();
        Some((format!("SELECT {} FROM \"{table}\"", list.join(", ")), have))
    }

    fn missing(&self, what: &str) -> Error {
        Error::new(format!(
            "this Nsight Systems export (schema {}) has no {what}, which traceprism needs: export it again with `nsys export --type sqlite` (CUDA trace on)",
            self.version
        ))
    }

    fn each(&self, sql: &str, mut f: impl FnMut(&Row<'_>) -> Result<()>) -> Result<()> {
        let fail = |e: rusqlite::Error| Error::new(format!("reading the export (schema {}): {e}", self.version));
        let mut st = self.db.prepare(sql).map_err(fail)?;
        let mut rows = st.query([]).map_err(fail)?;
        while let Some(row) = rows.next().map_err(fail)? {
            f(row)?;
        }
        Ok(())
    }
}

fn int(r: &Row<'_>, i: usize) -> Option<i64> {
    r.get::<_, Option<i64>>(i).ok().flatten()
}

fn text(r: &Row<'_>, i: usize) -> Option<String> {
    r.get::<_, Option<String>>(i).ok().flatten()
}

/// `cudaLaunchKernel_v7000` → `cudaLaunchKernel`.
fn runtime_name(name: &str) -> &str {
    match name.rfind("_v") {
        Some(at) if at > 0 && name[at + 2..].chars().all(|c| c.is_ascii_digit()) && name.len() > at + 2 => &name[..at],
        _ => name,
    }
}

/// A name for a memcpy of CUPTI's `copyKind`, as Kineto writes it.
fn memcpy_name(kind: i64) -> &'static str {
    match kind {
        1 => "Memcpy HtoD (Host -> Device)",
        2 => "Memcpy DtoH (Device -> Host)",
        8 => "Memcpy DtoD (Device -> Device)",
        9 => "Memcpy HtoH (Host -> Host)",
        10 => "Memcpy PtoP (Device -> Device)",
        _ => "Memcpy (other)",
    }
}

/// An NVTX range's text as an op name when it is one (`aten::mm, seq = 12, ...` → `aten::mm`).
fn op_name(text: &str) -> Option<&str> {
    let head = text.split(", ").next().unwrap_or(text);
    let (ns, name) = head.split_once("::")?;
    let word = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (word(ns) && word(name)).then_some(head)
}

/// The processes of an export that ran GPU kernels, by process id.
pub fn nsys_gpu_processes(bytes: &[u8]) -> Result<Vec<i64>> {
    let x = Export::open(bytes)?;
    let Some((_, have)) = x.select("CUPTI_ACTIVITY_KIND_KERNEL", &["globalPid"]) else { return Ok(Vec::new()) };
    if !have.contains("globalPid") {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    x.each("SELECT DISTINCT globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL", |r| {
        if let Some(g) = int(r, 0) {
            out.push(process_of(g));
        }
        Ok(())
    })?;
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Reads an export and hands its rows to `sink` as events.
pub fn read_nsys(bytes: &[u8], sink: &mut impl EventSink) -> Result<NsysRead> {
    read_nsys_process(bytes, sink, None)
}

/// [`read_nsys`] of one process only (`process`: its id), as one rank of a run.
pub fn read_nsys_process(bytes: &[u8], sink: &mut impl EventSink, process: Option<i64>) -> Result<NsysRead> {
    let x = Export::open(bytes)?;
    let keep = |p: i64| process.is_none_or(|want| want == p);
    if x.columns("META_DATA_EXPORT").is_none() && x.columns("CUPTI_ACTIVITY_KIND_KERNEL").is_none() {
        return Err(Error::new(
            "the input is an SQLite database but not an Nsight Systems export (it has neither META_DATA_EXPORT nor CUPTI_ACTIVITY_KIND_KERNEL): export the .nsys-rep with `nsys export --type sqlite`",
        ));
    }
    let mut out = NsysRead { schema_version: x.version.clone(), ..NsysRead::default() };
    let mut strings: HashMap<i64, String> = HashMap::new();
    match x.select("StringIds", &["id", "value"]) {
        Some((sql, have)) if have.contains("id") && have.contains("value") => x.each(&sql, |r| {
            if let (Some(id), Some(v)) = (int(r, 0), text(r, 1)) {
                strings.insert(id, v);
            }
            Ok(())
        })?,
        _ => return Err(x.missing("StringIds table (id, value)")),
    }
    let name_of = |id: Option<i64>| id.and_then(|i| strings.get(&i)).map(String::as_str);
    let mut index = 0u64;
    // Events are numbered in the order they are handed on, as a JSON trace's are by position.
    let mut emit = |ev: RawEvent<'_>| {
        sink.event(&ev, index, 0);
        index += 1;
    };
    let x_event = |cat: &'static [u8], name: String, pid: i64, tid: i64, start: i64, end: i64, args: Args<'static>| RawEvent {
        ph: b'X',
        cat: Cow::Borrowed(cat),
        name: Cow::Owned(name.into_bytes()),
        pid: Id::Num(pid),
        tid: Id::Num(tid),
        ts: Field::Value(start),
        dur: Field::Value((end - start).max(0)),
        id: None,
        args,
    };
    let meta = |what: &'static str, pid: i64, tid: i64, name: String| RawEvent {
        ph: b'M',
        name: Cow::Borrowed(what.as_bytes()),
        pid: Id::Num(pid),
        tid: Id::Num(tid),
        args: Args { name: Some(Cow::Owned(name)), ..Args::default() },
        ..RawEvent::default()
    };

    // Process and thread names.
    if let Some((sql, have)) = x.select("PROCESSES", &["globalPid", "pid", "name"]) {
        if have.contains("name") {
            x.each(&sql, |r| {
                if let (Some(g), Some(n)) = (int(r, 0).or(int(r, 1).map(|p| p * PROCESS_SHIFT)), text(r, 2)) {
                    if keep(process_of(g)) {
                        emit(meta("process_name", process_of(g), 0, n));
                    }
                }
                Ok(())
            })?;
        }
    }
    if let Some((sql, _)) = x.select("ThreadNames", &["nameId", "globalTid"]) {
        x.each(&sql, |r| {
            if let (Some(n), Some(g)) = (name_of(int(r, 0)), int(r, 1)) {
                if keep(process_of(g)) {
                    emit(meta("thread_name", process_of(g), g % PROCESS_SHIFT, n.to_string()));
                }
            }
            Ok(())
        })?;
    }

    // Kernels: the table the analysis cannot do without.
    let kernel_cols = [
        "start",
        "end",
        "deviceId",
        "streamId",
        "correlationId",
        "globalPid",
        "demangledName",
        "shortName",
        "gridX",
        "gridY",
        "gridZ",
        "blockX",
        "blockY",
        "blockZ",
    ];
    let Some((sql, have)) = x.select("CUPTI_ACTIVITY_KIND_KERNEL", &kernel_cols) else {
        return Err(x.missing("CUPTI_ACTIVITY_KIND_KERNEL table (no GPU kernel was traced)"));
    };
    for need in ["start", "end", "deviceId", "streamId", "correlationId", "globalPid"] {
        if !have.contains(need) {
            return Err(x.missing(&format!("column {need} in CUPTI_ACTIVITY_KIND_KERNEL")));
        }
    }
    if !have.contains("demangledName") && !have.contains("shortName") {
        return Err(x.missing("kernel name column (demangledName or shortName) in CUPTI_ACTIVITY_KIND_KERNEL"));
    }
    let dims = |r: &Row<'_>, at: usize| -> Option<[u32; 3]> {
        Some([int(r, at)? as u32, int(r, at + 1)? as u32, int(r, at + 2)? as u32])
    };
    x.each(&sql, |r| {
        let (Some(start), Some(end), Some(device), Some(stream), Some(corr), Some(gpid)) =
            (int(r, 0), int(r, 1), int(r, 2), int(r, 3), int(r, 4), int(r, 5))
        else {
            return Ok(());
        };
        if !keep(process_of(gpid)) {
            return Ok(());
        }
        let name = name_of(int(r, 6)).or(name_of(int(r, 7))).unwrap_or("(unnamed kernel)").to_string();
        let args = Args {
            correlation: Some(correlation(process_of(gpid), corr)),
            device: Some(device),
            stream: Some(stream),
            grid: dims(r, 8),
            block: dims(r, 11),
            ..Args::default()
        };
        emit(x_event(b"kernel", name, device, stream, start, end, args));
        out.counts[0] += 1;
        Ok(())
    })?;

    // Runtime calls.
    match x.select("CUPTI_ACTIVITY_KIND_RUNTIME", &["start", "end", "globalTid", "correlationId", "nameId"]) {
        Some((sql, _)) => x.each(&sql, |r| {
            let (Some(start), Some(end), Some(g)) = (int(r, 0), int(r, 1), int(r, 2)) else { return Ok(()) };
            if !keep(process_of(g)) {
                return Ok(());
            }
            let name = runtime_name(name_of(int(r, 4)).unwrap_or("(unnamed runtime call)")).to_string();
            let args = Args { correlation: int(r, 3).map(|c| correlation(process_of(g), c)), ..Args::default() };
            emit(x_event(b"cuda_runtime", name, process_of(g), g % PROCESS_SHIFT, start, end, args));
            out.counts[1] += 1;
            Ok(())
        })?,
        None => out.notes.push("no CUPTI_ACTIVITY_KIND_RUNTIME table: kernels have no launch".into()),
    }

    // Copies and fills.
    for (table, cat, slot) in
        [("CUPTI_ACTIVITY_KIND_MEMCPY", &b"gpu_memcpy"[..], 2), ("CUPTI_ACTIVITY_KIND_MEMSET", &b"gpu_memset"[..], 3)]
    {
        let Some((sql, _)) = x.select(table, &["start", "end", "deviceId", "streamId", "correlationId", "globalPid", "copyKind"])
        else {
            continue;
        };
        x.each(&sql, |r| {
            let (Some(start), Some(end), Some(device), Some(stream)) = (int(r, 0), int(r, 1), int(r, 2), int(r, 3)) else {
                return Ok(());
            };
            let process = int(r, 5).map_or(0, process_of);
            if !keep(process) {
                return Ok(());
            }
            let name = if slot == 2 { memcpy_name(int(r, 6).unwrap_or(0)).to_string() } else { "Memset (Device)".to_string() };
            let args = Args {
                correlation: int(r, 4).map(|c| correlation(process, c)),
                device: Some(device),
                stream: Some(stream),
                ..Args::default()
            };
            emit(x_event(cat, name, device, stream, start, end, args));
            out.counts[slot] += 1;
            Ok(())
        })?;
    }

    // NVTX ranges: ops when named like one, else annotations.
    if let Some((sql, _)) = x.select("NVTX_EVENTS", &["start", "end", "eventType", "text", "textId", "globalTid"]) {
        x.each(&sql, |r| {
            let (Some(start), Some(end), Some(kind), Some(g)) = (int(r, 0), int(r, 1), int(r, 2), int(r, 5)) else {
                return Ok(());
            };
            // 59: push/pop range, 60: start/end range (34: a mark, no duration).
            if (kind != 59 && kind != 60) || !keep(process_of(g)) {
                return Ok(());
            }
            let label = text(r, 3).or_else(|| name_of(int(r, 4)).map(str::to_string)).unwrap_or_default();
            let (cat, name): (&'static [u8], String) = match op_name(&label) {
                Some(op) => (b"cpu_op", op.to_string()),
                None => (b"user_annotation", label),
            };
            emit(x_event(cat, name, process_of(g), g % PROCESS_SHIFT, start, end, Args::default()));
            out.counts[4] += 1;
            Ok(())
        })?;
    }

    // Devices.
    match x.select("TARGET_INFO_GPU", &["id", "name", "totalMemory", "computeMajor", "computeMinor", "smCount", "warpSize"]) {
        Some((sql, _)) => {
            let mut devices = Vec::new();
            x.each(&sql, |r| {
                devices.push(serde_json::json!({
                    "id": int(r, 0).unwrap_or(devices.len() as i64),
                    "name": text(r, 1).unwrap_or_default(),
                    "totalGlobalMem": int(r, 2).unwrap_or(0),
                    "computeMajor": int(r, 3).unwrap_or(0),
                    "computeMinor": int(r, 4).unwrap_or(0),
                    "numSms": int(r, 5).unwrap_or(0),
                    "warpSize": int(r, 6).unwrap_or(32),
                }));
                Ok(())
            })?;
            sink.header("deviceProperties", serde_json::Value::Array(devices));
        }
        None => out.notes.push("no TARGET_INFO_GPU table: the GPUs are not named (nor their peaks known)".into()),
    }
    // Metadata the secret detector reads: the profiled process's environment and the capture's.
    for table in ["TARGET_INFO_SYSTEM_ENV", "META_DATA_CAPTURE"] {
        let Some((sql, have)) = x.select(table, &["name", "value"]) else { continue };
        if !have.contains("name") || !have.contains("value") {
            continue;
        }
        let mut env = serde_json::Map::new();
        x.each(&sql, |r| {
            if let (Some(k), Some(v)) = (text(r, 0), text(r, 1)) {
                env.insert(k, serde_json::Value::String(v));
            }
            Ok(())
        })?;
        sink.header(&format!("nsys.{table}"), serde_json::Value::Object(env));
    }
    sink.header("nsys.EXPORT_SCHEMA_VERSION", serde_json::Value::String(x.version.clone()));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_ids() {
        assert_eq!(runtime_name("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
        assert_eq!(runtime_name("cudaGraphLaunch_v10000"), "cudaGraphLaunch");
        assert_eq!(runtime_name("cudaMemcpyAsync"), "cudaMemcpyAsync");
        assert_eq!(op_name("aten::mm, seq = 12, op_id = 3"), Some("aten::mm"));
        assert_eq!(op_name("vllm::unified_attention_with_output"), Some("vllm::unified_attention_with_output"));
        assert_eq!(op_name("execute_context_1(512)_generation_0(0)"), None);
        assert_eq!(op_name(":: a"), None);
        assert_eq!(process_of(0x0001_2345_6700_0001), 0x0023_4567);
        assert_ne!(correlation(1, 5), correlation(2, 5));
    }
}
