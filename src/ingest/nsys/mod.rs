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
//! - `CUPTI_ACTIVITY_KIND_MEMCPY` / `_MEMSET` → memcpy / memset with their `bytes`, a memcpy
//!   named as Kineto names it (`Memcpy HtoD (Pinned -> Device)`, from `copyKind`, `srcKind` and
//!   `dstKind` through the export's own enum tables);
//! - `NVTX_EVENTS` ranges (push/pop and start/end) → CPU ops when named like one (`aten::mm, seq =
//!   12` → `aten::mm`, as `torch.autograd.profiler.emit_nvtx` writes them, with its `sizes = [...]`
//!   as the op's input shapes), else annotations (vLLM's and SGLang's step ranges);
//! - `CUPTI_ACTIVITY_KIND_GRAPH_TRACE` (whole-graph replays, whose kernels the export lacks) → one
//!   GPU event per replay, named so, and counted for the health report;
//! - `TARGET_INFO_GPU` → `deviceProperties`; `PROCESSES` and `ThreadNames` → names;
//! - `TARGET_INFO_SYSTEM_ENV` and `META_DATA_CAPTURE` → metadata, which the secret detector reads
//!   (values never kept).
//!
//! The reader asks for tables and columns ([`WANTED`]) through [`Tables`]: natively `rusqlite`
//! answers ([`sqlite`]); in the page the SQLite module (crate `traceprism-sqlite`) answers with
//! row bytes, which [`Dump`] reads back. Either way the same code below makes the events.
//!
//! A kernel's launch is the runtime row with its `correlationId` in its process (`globalPid` /
//! 2²⁴ mod 2²⁴ for kernels, `globalTid` / 2²⁴ mod 2²⁴ for runtime rows): correlation ids restart in
//! every process, so the event's correlation is the process and the id together.

use super::interchange::{Args, EventSink, Fact, Field, Id, RawEvent};
use crate::error::{Error, Result};
use std::borrow::Cow;
use std::collections::HashMap;
pub use traceprism_sqlite::{looks_like_rows, Cell, Dump, Request, Sql, Tables};

#[cfg(all(not(target_arch = "wasm32"), feature = "nsys"))]
pub mod sqlite;

/// What the reader asks of an export: each table and the columns it reads, by name (a column
/// absent from the export reads as NULL; which ones the analysis cannot do without is checked
/// below). The page's SQLite module answers exactly these.
pub const WANTED: &[(&str, &[&str])] = &[
    ("META_DATA_EXPORT", &["name", "value"]),
    ("StringIds", &["id", "value"]),
    ("PROCESSES", &["globalPid", "pid", "name"]),
    ("ThreadNames", &["nameId", "globalTid"]),
    (KERNELS, KERNEL_COLUMNS),
    (GRAPH_REPLAYS, &["start", "end", "deviceId", "streamId", "correlationId", "globalPid", "graphId"]),
    ("CUPTI_ACTIVITY_KIND_RUNTIME", &["start", "end", "globalTid", "correlationId", "nameId"]),
    ("CUPTI_ACTIVITY_KIND_MEMCPY", COPY_COLUMNS),
    ("CUPTI_ACTIVITY_KIND_MEMSET", COPY_COLUMNS),
    ("ENUM_CUDA_MEMCPY_OPER", &["id", "name"]),
    ("ENUM_CUDA_MEM_KIND", &["id", "label"]),
    ("NVTX_EVENTS", &["start", "end", "eventType", "text", "textId", "globalTid"]),
    ("TARGET_INFO_GPU", &["id", "name", "totalMemory", "computeMajor", "computeMinor", "smCount", "warpSize"]),
    ("TARGET_INFO_SYSTEM_ENV", &["name", "value"]),
    ("META_DATA_CAPTURE", &["name", "value"]),
];

const KERNELS: &str = "CUPTI_ACTIVITY_KIND_KERNEL";
/// Whole-graph replays (`nsys profile --cuda-graph-trace=graph`, the default): one row per
/// replay, and none of the graph's kernels in [`KERNELS`].
const GRAPH_REPLAYS: &str = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE";
const KERNEL_COLUMNS: &[&str] = &[
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
const COPY_COLUMNS: &[&str] =
    &["start", "end", "deviceId", "streamId", "correlationId", "globalPid", "copyKind", "bytes", "srcKind", "dstKind"];

/// [`WANTED`] as requests (the page hands them to its SQLite module).
pub fn requests() -> Vec<Request> {
    WANTED.iter().map(|(t, c)| Request { table: t.to_string(), columns: c.iter().map(|c| c.to_string()).collect() }).collect()
}

/// What the reader says about an export beside its events.
#[derive(Debug, Default, Clone)]
pub struct NsysRead {
    /// `EXPORT_SCHEMA_VERSION` (`3.25.0`), or `unknown`.
    pub schema_version: String,
    /// Things the analysis does without (a table or column absent), for the notes.
    pub notes: Vec<String>,
    /// Kernels, runtime calls, memcpy, memset, NVTX ranges and whole-graph replays read.
    pub counts: [u64; 6],
}

/// An export's tables with its schema version, read by the names in [`WANTED`].
struct Export<'t> {
    tables: &'t mut dyn Tables,
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

/// The columns [`WANTED`] lists for `table`.
fn wanted(table: &str) -> &'static [&'static str] {
    WANTED.iter().find(|w| w.0 == table).map_or(&[], |w| w.1)
}

impl<'t> Export<'t> {
    fn new(tables: &'t mut dyn Tables) -> Result<Export<'t>> {
        let mut e = Export { tables, version: "unknown".into() };
        let mut version = None;
        e.each("META_DATA_EXPORT", |r| {
            if r[0].text() == Some("EXPORT_SCHEMA_VERSION") {
                version = r[1].text().map(str::to_string);
            }
        })?;
        if let Some(v) = version {
            e.version = v;
        }
        Ok(e)
    }

    /// The columns `table` has of those [`WANTED`] lists, or `None` when the export has no such
    /// table.
    fn columns(&mut self, table: &str) -> Result<Option<Vec<&'static str>>> {
        let have = self.tables.columns(table).map_err(|e| self.fail(e))?;
        Ok(have.map(|have| wanted(table).iter().copied().filter(|w| have.iter().any(|h| h == w)).collect()))
    }

    fn missing(&self, what: &str) -> Error {
        Error::new(format!(
            "this Nsight Systems export (schema {}) has no {what}, which traceprism needs: export it again with `nsys export --type sqlite` (CUDA trace on)",
            self.version
        ))
    }

    fn fail(&self, e: String) -> Error {
        Error::new(format!("reading the export (schema {}): {e}", self.version))
    }

    /// Every row of `table` with the columns [`WANTED`] lists for it, in that order (an absent
    /// column is NULL; an absent table has no rows).
    fn each(&mut self, table: &str, mut f: impl FnMut(&[Cell<'_>])) -> Result<()> {
        let r = self.tables.rows(table, wanted(table), &mut f);
        r.map_err(|e| self.fail(e))
    }
}

/// `cudaLaunchKernel_v7000` → `cudaLaunchKernel`.
fn runtime_name(name: &str) -> &str {
    let b = name.as_bytes();
    match memchr::memrchr(b'_', b) {
        Some(at) if at > 0 && b.get(at + 1) == Some(&b'v') && b.len() > at + 2 && b[at + 2..].iter().all(u8::is_ascii_digit) => {
            &name[..at]
        }
        _ => name,
    }
}

/// The text before the first `, ` (all of it when there is none). Runs once per NVTX range: a
/// byte search, not a string pattern (which builds a searcher per call).
fn head_of(text: &str) -> &str {
    let b = text.as_bytes();
    match memchr::memchr_iter(b',', b).find(|&i| b.get(i + 1) == Some(&b' ')) {
        Some(at) => &text[..at],
        None => text,
    }
}

/// How an export numbers copy kinds and memory kinds: its own `ENUM_CUDA_MEMCPY_OPER` and
/// `ENUM_CUDA_MEM_KIND` tables, else the numbering of the exports we have (schema 3.25).
struct CopyNames {
    /// Copy kind → Kineto's short form (`CUDA_MEMCPY_KIND_HTOD` → `HtoD`).
    kinds: HashMap<i64, String>,
    /// Memory kind → its label (`Pageable`, `Pinned`, `Device`).
    memory: HashMap<i64, String>,
}

impl CopyNames {
    fn read(x: &mut Export<'_>) -> Result<CopyNames> {
        let kinds = ["Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"];
        let memory = ["Pageable", "Pinned", "Device", "Array", "Managed", "Device Static", "Managed Static", "Unknown"];
        Ok(CopyNames {
            kinds: Self::labels(x, "ENUM_CUDA_MEMCPY_OPER", copy_kind_short, &kinds)?,
            memory: Self::labels(x, "ENUM_CUDA_MEM_KIND", str::to_string, &memory)?,
        })
    }

    /// An enum table's (id, text) rows, each text made a label by `label`; `known` (by position)
    /// when the export has no such table.
    fn labels(x: &mut Export<'_>, table: &str, label: fn(&str) -> String, known: &[&str]) -> Result<HashMap<i64, String>> {
        let mut out = HashMap::new();
        x.each(table, |r| {
            if let (Some(id), Some(text)) = (r[0].int(), r[1].text()) {
                out.insert(id, label(text));
            }
        })?;
        if out.is_empty() {
            out = known.iter().enumerate().map(|(i, k)| (i as i64, k.to_string())).collect();
        }
        Ok(out)
    }

    /// A memcpy's name as Kineto writes it: `Memcpy HtoD (Pinned -> Device)`.
    fn memcpy(&self, kind: Option<i64>, src: Option<i64>, dst: Option<i64>) -> String {
        let label = |k: Option<i64>, map: &HashMap<i64, String>| {
            k.and_then(|k| map.get(&k)).map_or("Unknown", String::as_str).to_string()
        };
        format!("Memcpy {} ({} -> {})", label(kind, &self.kinds), label(src, &self.memory), label(dst, &self.memory))
    }
}

/// `CUDA_MEMCPY_KIND_HTOD` → `HtoD`, `CUDA_MEMCPY_KIND_PTOP` → `PtoP` (Kineto's short forms);
/// `CUDA_MEMCPY_KIND_UVM_HTOD` → `UVM HtoD`.
fn copy_kind_short(name: &str) -> String {
    let kind = name.strip_prefix("CUDA_MEMCPY_KIND_").unwrap_or(name);
    let (prefix, kind) = match kind.rsplit_once('_') {
        Some((p, k)) => (format!("{p} "), k),
        None => (String::new(), kind),
    };
    match kind.split_once("TO") {
        Some((a, b)) if a.len() == 1 && b.len() == 1 => format!("{prefix}{a}to{b}"),
        _ => format!("{prefix}{}", kind[..1].to_string() + &kind[1..].to_ascii_lowercase()),
    }
}

/// RecordFunction ranges that Kineto files as `user_annotation`, not `cpu_op`: steps and the
/// process group's collectives (`nccl:all_reduce`).
const ANNOTATIONS: [&str; 2] = ["ProfilerStep#", "nccl:"];

/// An NVTX range's text as an op name when it is one: a range `torch.autograd.profiler.emit_nvtx`
/// wrote for a RecordFunction (`aten::mm, seq = 12, op_id = 3, ...`, `record_param_comms, op_id =
/// 9`, `RegisterPostBackwardFunction, seq = 4, op_id = 7` → the name before the first `, `), but
/// not those Kineto files as annotations ([`ANNOTATIONS`]); else a range named `namespace::op` by
/// hand.
fn op_name(text: &str) -> Option<&str> {
    let head = head_of(text);
    let rest = &text[head.len()..];
    let emitted = rest.starts_with(", seq = ") || rest.starts_with(", op_id = ");
    if emitted && !head.is_empty() && !ANNOTATIONS.iter().any(|a| head.starts_with(a)) {
        return Some(head);
    }
    let (ns, name) = head.split_once("::")?;
    let word = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (word(ns) && word(name)).then_some(head)
}

/// A complete event (`ph: X`) of a row: its category, name, process, thread and span (ns).
fn x_event<'a>(cat: &'static [u8], name: &'a str, pid: i64, tid: i64, start: i64, end: i64, args: Args<'a>) -> RawEvent<'a> {
    RawEvent {
        ph: b'X',
        cat: Cow::Borrowed(cat),
        name: Cow::Borrowed(name.as_bytes()),
        pid: Id::Num(pid),
        tid: Id::Num(tid),
        ts: Field::Value(start),
        dur: Field::Value((end - start).max(0)),
        id: None,
        args,
    }
}

/// The input shapes in an op's NVTX range, as `emit_nvtx(record_shapes=True)` writes them
/// (`aten::mm, seq = 3, op_id = 7, sizes = [[4, 5], [5, 6]], input_op_ids = [(1,0)]` →
/// `[[4, 5], [5, 6]]`): the same text as Kineto's `Input Dims`.
fn op_sizes(text: &str) -> Option<&str> {
    static SIZES: std::sync::OnceLock<memchr::memmem::Finder<'static>> = std::sync::OnceLock::new();
    let at = SIZES.get_or_init(|| memchr::memmem::Finder::new(", sizes = [")).find(text.as_bytes())? + ", sizes = ".len();
    let mut depth = 0usize;
    for (i, c) in text[at..].char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&text[at..at + i + 1]);
                }
            }
            _ => {}
        }
    }
    None
}

/// Reads an export's tables and hands its rows to `sink` as events; with `process`, only that
/// process's (one rank of a run).
pub fn read_nsys_tables(tables: &mut dyn Tables, sink: &mut impl EventSink, process: Option<i64>) -> Result<NsysRead> {
    let mut x = Export::new(tables)?;
    let keep = |p: i64| process.is_none_or(|want| want == p);
    if x.columns("META_DATA_EXPORT")?.is_none() && x.columns(KERNELS)?.is_none() {
        return Err(Error::new(
            "the input is an SQLite database but not an Nsight Systems export (it has neither META_DATA_EXPORT nor CUPTI_ACTIVITY_KIND_KERNEL): export the .nsys-rep with `nsys export --type sqlite`",
        ));
    }
    let mut out = NsysRead { schema_version: x.version.clone(), ..NsysRead::default() };
    let mut strings: HashMap<i64, String> = HashMap::new();
    match x.columns("StringIds")? {
        Some(have) if have.len() == 2 => x.each("StringIds", |r| {
            if let (Some(id), Some(v)) = (r[0].int(), r[1].text()) {
                strings.insert(id, v.to_string());
            }
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
    let meta = |what: &'static str, pid: i64, tid: i64, name: &str| RawEvent {
        ph: b'M',
        name: Cow::Borrowed(what.as_bytes()),
        pid: Id::Num(pid),
        tid: Id::Num(tid),
        args: Args { name: Some(Cow::Owned(name.to_string())), ..Args::default() },
        ..RawEvent::default()
    };

    // Process and thread names.
    if x.columns("PROCESSES")?.is_some_and(|have| have.contains(&"name")) {
        x.each("PROCESSES", |r| {
            if let (Some(g), Some(n)) = (r[0].int().or(r[1].int().map(|p| p * PROCESS_SHIFT)), r[2].text()) {
                if keep(process_of(g)) {
                    emit(meta("process_name", process_of(g), 0, n));
                }
            }
        })?;
    }
    x.each("ThreadNames", |r| {
        if let (Some(n), Some(g)) = (name_of(r[0].int()), r[1].int()) {
            if keep(process_of(g)) {
                emit(meta("thread_name", process_of(g), g % PROCESS_SHIFT, n));
            }
        }
    })?;

    // Kernels: the table the analysis cannot do without.
    let Some(have) = x.columns(KERNELS)? else {
        return Err(x.missing("CUPTI_ACTIVITY_KIND_KERNEL table (no GPU kernel was traced)"));
    };
    for need in ["start", "end", "deviceId", "streamId", "correlationId", "globalPid"] {
        if !have.contains(&need) {
            return Err(x.missing(&format!("column {need} in CUPTI_ACTIVITY_KIND_KERNEL")));
        }
    }
    if !have.contains(&"demangledName") && !have.contains(&"shortName") {
        return Err(x.missing("kernel name column (demangledName or shortName) in CUPTI_ACTIVITY_KIND_KERNEL"));
    }
    // Rows skipped for lack of a start, an end, a device, a stream or a process, by kind as in
    // `counts`: never dropped silently.
    let mut lacking = [0u64; 6];
    let mut replay_ns = 0i64;
    let dims = |r: &[Cell<'_>], at: usize| -> Option<[u32; 3]> {
        Some([r[at].int()? as u32, r[at + 1].int()? as u32, r[at + 2].int()? as u32])
    };
    x.each(KERNELS, |r| {
        let (Some(start), Some(end), Some(device), Some(stream), Some(corr), Some(gpid)) =
            (r[0].int(), r[1].int(), r[2].int(), r[3].int(), r[4].int(), r[5].int())
        else {
            lacking[0] += 1;
            return;
        };
        if !keep(process_of(gpid)) {
            return;
        }
        let name = name_of(r[6].int()).or(name_of(r[7].int())).unwrap_or("(unnamed kernel)");
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
    })?;

    // Whole-graph replays: each is one GPU event standing for the kernels it ran, which the export
    // does not hold; named so that every table says so, and counted for the health report.
    x.each(GRAPH_REPLAYS, |r| {
        let (Some(start), Some(end), Some(device), Some(stream), Some(gpid)) =
            (r[0].int(), r[1].int(), r[2].int(), r[3].int(), r[5].int())
        else {
            lacking[5] += 1;
            return;
        };
        if !keep(process_of(gpid)) {
            return;
        }
        let graph = r[6].int().map_or_else(|| "?".to_string(), |g| g.to_string());
        let name = format!("CUDA graph {graph} (replayed whole: its kernels are not in the export)");
        let args = Args {
            correlation: r[4].int().map(|c| correlation(process_of(gpid), c)),
            device: Some(device),
            stream: Some(stream),
            ..Args::default()
        };
        emit(x_event(b"kernel", &name, device, stream, start, end, args));
        out.counts[5] += 1;
        replay_ns += (end - start).max(0);
    })?;

    // Runtime calls.
    if x.columns("CUPTI_ACTIVITY_KIND_RUNTIME")?.is_none() {
        out.notes.push("no CUPTI_ACTIVITY_KIND_RUNTIME table: kernels have no launch".into());
    }
    x.each("CUPTI_ACTIVITY_KIND_RUNTIME", |r| {
        let (Some(start), Some(end), Some(g)) = (r[0].int(), r[1].int(), r[2].int()) else {
            lacking[1] += 1;
            return;
        };
        if !keep(process_of(g)) {
            return;
        }
        let name = runtime_name(name_of(r[4].int()).unwrap_or("(unnamed runtime call)"));
        let args = Args { correlation: r[3].int().map(|c| correlation(process_of(g), c)), ..Args::default() };
        emit(x_event(b"cuda_runtime", name, process_of(g), g % PROCESS_SHIFT, start, end, args));
        out.counts[1] += 1;
    })?;

    // Copies and fills.
    let names = CopyNames::read(&mut x)?;
    for (table, cat, slot) in
        [("CUPTI_ACTIVITY_KIND_MEMCPY", &b"gpu_memcpy"[..], 2), ("CUPTI_ACTIVITY_KIND_MEMSET", &b"gpu_memset"[..], 3)]
    {
        x.each(table, |r| {
            let (Some(start), Some(end), Some(device), Some(stream)) = (r[0].int(), r[1].int(), r[2].int(), r[3].int()) else {
                lacking[slot] += 1;
                return;
            };
            let process = r[5].int().map_or(0, process_of);
            if !keep(process) {
                return;
            }
            let name = if slot == 2 { names.memcpy(r[6].int(), r[8].int(), r[9].int()) } else { "Memset (Device)".to_string() };
            let args = Args {
                correlation: r[4].int().map(|c| correlation(process, c)),
                device: Some(device),
                stream: Some(stream),
                bytes: r[7].int(),
                ..Args::default()
            };
            emit(x_event(cat, &name, device, stream, start, end, args));
            out.counts[slot] += 1;
        })?;
    }

    // NVTX ranges: ops when named like one, else annotations.
    x.each("NVTX_EVENTS", |r| {
        // 59: push/pop range, 60: start/end range (34: a mark, no duration).
        if !matches!(r[2].int(), Some(59 | 60)) {
            return;
        }
        // A range still open when the capture stopped has no end.
        let (Some(start), Some(end), Some(g)) = (r[0].int(), r[1].int(), r[5].int()) else {
            lacking[4] += 1;
            return;
        };
        if !keep(process_of(g)) {
            return;
        }
        let label = r[3].text().or_else(|| name_of(r[4].int())).unwrap_or_default();
        let (cat, name, args): (&'static [u8], &str, Args<'_>) = match op_name(label) {
            Some(op) => (b"cpu_op", op, Args { input_dims: op_sizes(label).map(str::as_bytes), ..Args::default() }),
            None => (b"user_annotation", label, Args::default()),
        };
        emit(x_event(cat, name, process_of(g), g % PROCESS_SHIFT, start, end, args));
        out.counts[4] += 1;
    })?;

    let kinds = [
        "kernels",
        "runtime calls",
        "memcpy",
        "memset",
        "NVTX ranges (open when the capture stopped, or with no thread)",
        "whole-graph replays",
    ];
    for (n, what) in lacking.iter().zip(kinds) {
        if *n > 0 {
            out.notes.push(format!("{n} {what} skipped: their rows lack a start, an end, a device, a stream or a process"));
        }
    }

    // Devices.
    if x.columns("TARGET_INFO_GPU")?.is_some() {
        let mut devices = Vec::new();
        x.each("TARGET_INFO_GPU", |r| {
            devices.push(serde_json::json!({
                "id": r[0].int().unwrap_or(devices.len() as i64),
                "name": r[1].text().unwrap_or_default(),
                "totalGlobalMem": r[2].int().unwrap_or(0),
                "computeMajor": r[3].int().unwrap_or(0),
                "computeMinor": r[4].int().unwrap_or(0),
                "numSms": r[5].int().unwrap_or(0),
                "warpSize": r[6].int().unwrap_or(32),
            }));
        })?;
        sink.header("deviceProperties", serde_json::Value::Array(devices));
    } else {
        out.notes.push("no TARGET_INFO_GPU table: the GPUs are not named (nor their peaks known)".into());
    }
    // Metadata the secret detector reads: the profiled process's environment and the capture's.
    for table in ["TARGET_INFO_SYSTEM_ENV", "META_DATA_CAPTURE"] {
        if x.columns(table)?.is_none_or(|have| have.len() < 2) {
            continue;
        }
        let mut env = serde_json::Map::new();
        x.each(table, |r| {
            if let (Some(k), Some(v)) = (r[0].text(), r[1].text()) {
                env.insert(k.to_string(), serde_json::Value::String(v.to_string()));
            }
        })?;
        sink.header(&format!("nsys.{table}"), serde_json::Value::Object(env));
    }
    if out.counts[5] > 0 {
        sink.fact(Fact::WholeGraphReplays { count: out.counts[5], ns: replay_ns.max(0) as u64 });
    }
    sink.header("nsys.EXPORT_SCHEMA_VERSION", serde_json::Value::String(x.version.clone()));
    Ok(out)
}

/// Reads row bytes (what the page's SQLite module makes of an export) as [`read_nsys_tables`];
/// also returns the size of the database they come from.
pub fn read_nsys_rows(bytes: &[u8], sink: &mut impl EventSink, process: Option<i64>) -> Result<(NsysRead, u64)> {
    let mut dump = Dump::new(bytes).map_err(Error::new)?;
    let database_bytes = dump.database_bytes;
    Ok((read_nsys_tables(&mut dump, sink, process)?, database_bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_ids() {
        assert_eq!(runtime_name("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
        assert_eq!(runtime_name("cudaGraphLaunch_v10000"), "cudaGraphLaunch");
        assert_eq!(runtime_name("cudaMemcpyAsync"), "cudaMemcpyAsync");
        assert_eq!(runtime_name("foo_v2_bar"), "foo_v2_bar");
        assert_eq!(runtime_name("_v12"), "_v12");
        assert_eq!(runtime_name("cuda_v"), "cuda_v");
        assert_eq!(head_of("aten::mm, seq = 1"), "aten::mm");
        assert_eq!(head_of("a,b, c"), "a,b");
        assert_eq!(head_of("plain"), "plain");
        assert_eq!(copy_kind_short("CUDA_MEMCPY_KIND_HTOD"), "HtoD");
        assert_eq!(copy_kind_short("CUDA_MEMCPY_KIND_PTOP"), "PtoP");
        assert_eq!(copy_kind_short("CUDA_MEMCPY_KIND_UVM_DTOH"), "UVM DtoH");
        assert_eq!(copy_kind_short("CUDA_MEMCPY_KIND_UNKNOWN"), "Unknown");
        assert_eq!(op_name("aten::mm, seq = 12, op_id = 3"), Some("aten::mm"));
        assert_eq!(op_name("vllm::unified_attention_with_output"), Some("vllm::unified_attention_with_output"));
        assert_eq!(op_name("execute_context_1(512)_generation_0(0)"), None);
        assert_eq!(op_name(":: a"), None);
        assert_eq!(op_name("record_param_comms, op_id = 999761"), Some("record_param_comms"));
        assert_eq!(op_name("RegisterPostBackwardFunction, seq = 47651, op_id = 999894"), Some("RegisterPostBackwardFunction"));
        assert_eq!(op_name("ProfilerStep#3, op_id = 5"), None);
        assert_eq!(op_name("nccl:all_to_all, op_id = 12"), None);
        assert_eq!(op_name("ncclSend"), None);
        assert_eq!(
            op_sizes("aten::mm, seq = 3, op_id = 7, sizes = [[4, 5], [5, 6]], input_op_ids = [(1,0)]"),
            Some("[[4, 5], [5, 6]]")
        );
        assert_eq!(op_sizes("aten::add, op_id = 9, sizes = [[], [2]]"), Some("[[], [2]]"));
        assert_eq!(op_sizes("aten::mm, op_id = 7"), None);
        assert_eq!(op_sizes("aten::mm, sizes = [[4, 5"), None);
        assert_eq!(process_of(0x0001_2345_6700_0001), 0x0023_4567);
        assert_ne!(correlation(1, 5), correlation(2, 5));
    }
}
