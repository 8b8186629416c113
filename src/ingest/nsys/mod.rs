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

mod columns;
pub use columns::WANTED;
use columns::{Column, DeviceActivity, Row};
use columns::{CopyKinds, Gpus, GraphReplays, Kernels, Memcpy, MemoryKinds, Memset, MetaCapture, MetaExport, Nvtx, Processes};
use columns::{Runtime, StringIds, SystemEnv, ThreadNames};

/// The kernels' table: what tells an export from any other SQLite database.
pub const KERNELS: &str = Kernels::TABLE;

#[cfg(all(not(target_arch = "wasm32"), feature = "nsys"))]
pub mod sqlite;

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

impl<'t> Export<'t> {
    fn new(tables: &'t mut dyn Tables) -> Result<Export<'t>> {
        let mut e = Export { tables, version: "unknown".into() };
        let mut version = None;
        e.each(|r: Row<MetaExport>| {
            if r.text(MetaExport::Name) == Some("EXPORT_SCHEMA_VERSION") {
                version = r.text(MetaExport::Value).map(str::to_string);
            }
        })?;
        if let Some(v) = version {
            e.version = v;
        }
        Ok(e)
    }

    /// The columns table `T` has of those it declares, or `None` when the export has no such
    /// table.
    fn columns<T: Column>(&mut self) -> Result<Option<Vec<&'static str>>> {
        let have = self.tables.columns(T::TABLE).map_err(|e| self.fail(e))?;
        Ok(have.map(|have| T::COLUMNS.iter().copied().filter(|w| have.iter().any(|h| h == w)).collect()))
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

    /// Every row of table `T`, read by its columns (an absent column is NULL; an absent table has
    /// no rows).
    fn each<T: Column>(&mut self, mut f: impl FnMut(Row<'_, '_, T>)) -> Result<()> {
        let r = self.tables.rows(T::TABLE, T::COLUMNS, &mut |cells| f(Row::new(cells)));
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
            kinds: Self::labels(x, CopyKinds::Id, CopyKinds::Name, copy_kind_short, &kinds)?,
            memory: Self::labels(x, MemoryKinds::Id, MemoryKinds::Label, str::to_string, &memory)?,
        })
    }

    /// An enum table's (id, text) rows, each text made a label by `label`; `known` (by position)
    /// when the export has no such table.
    fn labels<T: Column>(
        x: &mut Export<'_>,
        id: T,
        text: T,
        label: fn(&str) -> String,
        known: &[&str],
    ) -> Result<HashMap<i64, String>> {
        let mut out = HashMap::new();
        x.each(|r: Row<T>| {
            if let (Some(id), Some(text)) = (r.int(id), r.text(text)) {
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
/// process's (one rank of a run). One function per table, in this order.
pub fn read_nsys_tables(tables: &mut dyn Tables, sink: &mut impl EventSink, process: Option<i64>) -> Result<NsysRead> {
    let mut x = Export::new(tables)?;
    if x.columns::<MetaExport>()?.is_none() && x.columns::<Kernels>()?.is_none() {
        return Err(Error::new(
            "the input is an SQLite database but not an Nsight Systems export (it has neither META_DATA_EXPORT nor CUPTI_ACTIVITY_KIND_KERNEL): export the .nsys-rep with `nsys export --type sqlite`",
        ));
    }
    let strings = read_strings(&mut x)?;
    let mut r = Reading {
        events: Events { sink, index: 0 },
        only: Only(process),
        strings,
        out: NsysRead { schema_version: x.version.clone(), ..NsysRead::default() },
        lacking: [0; 6],
        replay_ns: 0,
    };
    r.names(&mut x)?;
    r.kernels(&mut x)?;
    r.graph_replays(&mut x)?;
    r.runtime(&mut x)?;
    r.copies(&mut x)?;
    r.nvtx(&mut x)?;
    r.note_lacking();
    r.devices(&mut x)?;
    r.metadata(&mut x)?;
    let Reading { events: Events { sink, .. }, out, replay_ns, .. } = r;
    if out.counts[REPLAY_ROWS] > 0 {
        sink.fact(Fact::WholeGraphReplays { count: out.counts[REPLAY_ROWS], ns: replay_ns.max(0) as u64 });
    }
    sink.fact(Fact::NsightExport { schema_version: x.version.clone() });
    Ok(out)
}

/// `StringIds`: every name the other tables give by id (the reader cannot do without it).
fn read_strings(x: &mut Export<'_>) -> Result<HashMap<i64, String>> {
    let mut strings = HashMap::new();
    match x.columns::<StringIds>()? {
        Some(have) if have.len() == 2 => x.each(|r: Row<StringIds>| {
            if let (Some(id), Some(v)) = (r.int(StringIds::Id), r.text(StringIds::Value)) {
                strings.insert(id, v.to_string());
            }
        })?,
        _ => return Err(x.missing("StringIds table (id, value)")),
    }
    Ok(strings)
}

/// Slots of [`NsysRead::counts`] and of the rows skipped for lack of a start, an end, a device, a
/// stream or a process (never dropped silently).
const KERNEL_ROWS: usize = 0;
const RUNTIME_ROWS: usize = 1;
const MEMCPY_ROWS: usize = 2;
const MEMSET_ROWS: usize = 3;
const NVTX_ROWS: usize = 4;
const REPLAY_ROWS: usize = 5;

/// Where the events go, numbered in the order they are handed on (as a JSON trace's are by
/// position).
struct Events<'s, S: EventSink> {
    sink: &'s mut S,
    /// The next event's index.
    index: u64,
}

impl<S: EventSink> Events<'_, S> {
    fn emit(&mut self, ev: RawEvent<'_>) {
        self.sink.event(&ev, self.index, 0);
        self.index += 1;
    }

    /// A name metadata event (`process_name`, `thread_name`).
    fn meta(&mut self, what: &'static str, pid: i64, tid: i64, name: &str) {
        self.emit(RawEvent {
            ph: b'M',
            name: Cow::Borrowed(what.as_bytes()),
            pid: Id::Num(pid),
            tid: Id::Num(tid),
            args: Args { name: Some(Cow::Owned(name.to_string())), ..Args::default() },
            ..RawEvent::default()
        });
    }
}

/// The one process kept, when reading one rank (`None`: every process).
#[derive(Clone, Copy)]
struct Only(Option<i64>);

impl Only {
    fn keeps(&self, process: i64) -> bool {
        self.0.is_none_or(|want| want == process)
    }
}

/// One export being read: where events go, what is counted. Each table's rows are read by a
/// method of its own, which hands events on through `events` while it looks names up in
/// `strings`.
struct Reading<'s, S: EventSink> {
    events: Events<'s, S>,
    only: Only,
    strings: HashMap<i64, String>,
    out: NsysRead,
    lacking: [u64; 6],
    replay_ns: i64,
}

impl<S: EventSink> Reading<'_, S> {
    /// `PROCESSES` and `ThreadNames`: process and thread names.
    fn names(&mut self, x: &mut Export<'_>) -> Result<()> {
        if x.columns::<Processes>()?.is_some_and(|have| have.contains(&"name")) {
            x.each(|r: Row<Processes>| {
                let global = r.int(Processes::GlobalPid).or(r.int(Processes::Pid).map(|p| p * PROCESS_SHIFT));
                if let (Some(g), Some(n)) = (global, r.text(Processes::Name)) {
                    if self.only.keeps(process_of(g)) {
                        self.events.meta("process_name", process_of(g), 0, n);
                    }
                }
            })?;
        }
        x.each(|r: Row<ThreadNames>| {
            let name = r.int(ThreadNames::NameId).and_then(|n| self.strings.get(&n));
            if let (Some(name), Some(g)) = (name, r.int(ThreadNames::GlobalTid)) {
                if self.only.keeps(process_of(g)) {
                    self.events.meta("thread_name", process_of(g), g % PROCESS_SHIFT, name);
                }
            }
        })
    }

    /// `CUPTI_ACTIVITY_KIND_KERNEL`: kernels, the table the analysis cannot do without.
    fn kernels(&mut self, x: &mut Export<'_>) -> Result<()> {
        let Some(have) = x.columns::<Kernels>()? else {
            return Err(x.missing("CUPTI_ACTIVITY_KIND_KERNEL table (no GPU kernel was traced)"));
        };
        for need in
            [Kernels::Start, Kernels::End, Kernels::DeviceId, Kernels::StreamId, Kernels::CorrelationId, Kernels::GlobalPid]
        {
            let name = Kernels::COLUMNS[need.at()];
            if !have.contains(&name) {
                return Err(x.missing(&format!("column {name} in CUPTI_ACTIVITY_KIND_KERNEL")));
            }
        }
        if !have.contains(&"demangledName") && !have.contains(&"shortName") {
            return Err(x.missing("kernel name column (demangledName or shortName) in CUPTI_ACTIVITY_KIND_KERNEL"));
        }
        use Kernels as K;
        x.each(|r: Row<Kernels>| {
            let (Some(start), Some(end), Some(device), Some(stream), Some(corr), Some(gpid)) = (
                r.int(K::Start),
                r.int(K::End),
                r.int(K::DeviceId),
                r.int(K::StreamId),
                r.int(K::CorrelationId),
                r.int(K::GlobalPid),
            ) else {
                self.lacking[KERNEL_ROWS] += 1;
                return;
            };
            if !self.only.keeps(process_of(gpid)) {
                return;
            }
            let named = |c| r.int(c).and_then(|i| self.strings.get(&i));
            let name = named(K::DemangledName).or(named(K::ShortName)).map_or("(unnamed kernel)", String::as_str);
            let dims = |x, y, z| Some([r.int(x)? as u32, r.int(y)? as u32, r.int(z)? as u32]);
            let args = Args {
                correlation: Some(correlation(process_of(gpid), corr)),
                device: Some(device),
                stream: Some(stream),
                grid: dims(K::GridX, K::GridY, K::GridZ),
                block: dims(K::BlockX, K::BlockY, K::BlockZ),
                ..Args::default()
            };
            let ev = x_event(b"kernel", name, device, stream, start, end, args);
            self.events.emit(ev);
            self.out.counts[KERNEL_ROWS] += 1;
        })
    }

    /// `CUPTI_ACTIVITY_KIND_GRAPH_TRACE`: each whole-graph replay is one GPU event standing for
    /// the kernels it ran, which the export does not hold; named so that every table says so, and
    /// counted for the health report.
    fn graph_replays(&mut self, x: &mut Export<'_>) -> Result<()> {
        use GraphReplays as G;
        x.each(|r: Row<GraphReplays>| {
            let (Some(start), Some(end), Some(device), Some(stream), Some(gpid)) =
                (r.int(G::Start), r.int(G::End), r.int(G::DeviceId), r.int(G::StreamId), r.int(G::GlobalPid))
            else {
                self.lacking[REPLAY_ROWS] += 1;
                return;
            };
            if !self.only.keeps(process_of(gpid)) {
                return;
            }
            let graph = r.int(G::GraphId).map_or_else(|| "?".to_string(), |g| g.to_string());
            let name = format!("CUDA graph {graph} (replayed whole: its kernels are not in the export)");
            let args = Args {
                correlation: r.int(G::CorrelationId).map(|c| correlation(process_of(gpid), c)),
                device: Some(device),
                stream: Some(stream),
                ..Args::default()
            };
            self.events.emit(x_event(b"kernel", &name, device, stream, start, end, args));
            self.out.counts[REPLAY_ROWS] += 1;
            self.replay_ns += (end - start).max(0);
        })
    }

    /// `CUPTI_ACTIVITY_KIND_RUNTIME`: runtime calls, on the thread that made them.
    fn runtime(&mut self, x: &mut Export<'_>) -> Result<()> {
        if x.columns::<Runtime>()?.is_none() {
            self.out.notes.push("no CUPTI_ACTIVITY_KIND_RUNTIME table: kernels have no launch".into());
        }
        use Runtime as R;
        x.each(|r: Row<Runtime>| {
            let (Some(start), Some(end), Some(g)) = (r.int(R::Start), r.int(R::End), r.int(R::GlobalTid)) else {
                self.lacking[RUNTIME_ROWS] += 1;
                return;
            };
            if !self.only.keeps(process_of(g)) {
                return;
            }
            let name = r.int(R::NameId).and_then(|i| self.strings.get(&i)).map_or("(unnamed runtime call)", String::as_str);
            let args = Args { correlation: r.int(R::CorrelationId).map(|c| correlation(process_of(g), c)), ..Args::default() };
            let ev = x_event(b"cuda_runtime", runtime_name(name), process_of(g), g % PROCESS_SHIFT, start, end, args);
            self.events.emit(ev);
            self.out.counts[RUNTIME_ROWS] += 1;
        })
    }

    /// `CUPTI_ACTIVITY_KIND_MEMCPY` and `_MEMSET`: copies (named as Kineto names them) and fills.
    fn copies(&mut self, x: &mut Export<'_>) -> Result<()> {
        let names = CopyNames::read(x)?;
        self.device_activity::<Memcpy>(x, b"gpu_memcpy", MEMCPY_ROWS, &|r| {
            names.memcpy(r.int(Memcpy::CopyKind), r.int(Memcpy::SrcKind), r.int(Memcpy::DstKind))
        })?;
        self.device_activity::<Memset>(x, b"gpu_memset", MEMSET_ROWS, &|_| "Memset (Device)".to_string())
    }

    /// The rows of a copy or fill table as GPU events of `cat`, each named by `name`, counted in
    /// slot `slot`.
    fn device_activity<T: DeviceActivity>(
        &mut self,
        x: &mut Export<'_>,
        cat: &'static [u8],
        slot: usize,
        name: &dyn Fn(&Row<'_, '_, T>) -> String,
    ) -> Result<()> {
        x.each(|r: Row<T>| {
            let (Some(start), Some(end), Some(device), Some(stream)) =
                (r.int(T::START), r.int(T::END), r.int(T::DEVICE_ID), r.int(T::STREAM_ID))
            else {
                self.lacking[slot] += 1;
                return;
            };
            let process = r.int(T::GLOBAL_PID).map_or(0, process_of);
            if !self.only.keeps(process) {
                return;
            }
            let args = Args {
                correlation: r.int(T::CORRELATION_ID).map(|c| correlation(process, c)),
                device: Some(device),
                stream: Some(stream),
                bytes: r.int(T::BYTES),
                ..Args::default()
            };
            self.events.emit(x_event(cat, &name(&r), device, stream, start, end, args));
            self.out.counts[slot] += 1;
        })
    }

    /// `NVTX_EVENTS`: ranges become ops when named like one, else annotations.
    fn nvtx(&mut self, x: &mut Export<'_>) -> Result<()> {
        use Nvtx as N;
        x.each(|r: Row<Nvtx>| {
            // 59: push/pop range, 60: start/end range (34: a mark, no duration).
            if !matches!(r.int(N::EventType), Some(59 | 60)) {
                return;
            }
            // A range still open when the capture stopped has no end.
            let (Some(start), Some(end), Some(g)) = (r.int(N::Start), r.int(N::End), r.int(N::GlobalTid)) else {
                self.lacking[NVTX_ROWS] += 1;
                return;
            };
            if !self.only.keeps(process_of(g)) {
                return;
            }
            let label = r
                .text(N::Text)
                .or_else(|| r.int(N::TextId).and_then(|i| self.strings.get(&i)).map(String::as_str))
                .unwrap_or_default();
            let (cat, name, args): (&'static [u8], &str, Args<'_>) = match op_name(label) {
                Some(op) => (b"cpu_op", op, Args { input_dims: op_sizes(label).map(str::as_bytes), ..Args::default() }),
                None => (b"user_annotation", label, Args::default()),
            };
            let ev = x_event(cat, name, process_of(g), g % PROCESS_SHIFT, start, end, args);
            self.events.emit(ev);
            self.out.counts[NVTX_ROWS] += 1;
        })
    }

    /// Notes the rows skipped for lack of a start, an end, a device, a stream or a process.
    fn note_lacking(&mut self) {
        let kinds = [
            "kernels",
            "runtime calls",
            "memcpy",
            "memset",
            "NVTX ranges (open when the capture stopped, or with no thread)",
            "whole-graph replays",
        ];
        for (n, what) in self.lacking.iter().zip(kinds) {
            if *n > 0 {
                self.out
                    .notes
                    .push(format!("{n} {what} skipped: their rows lack a start, an end, a device, a stream or a process"));
            }
        }
    }

    /// `TARGET_INFO_GPU`: the GPUs, as Kineto's `deviceProperties`.
    fn devices(&mut self, x: &mut Export<'_>) -> Result<()> {
        if x.columns::<Gpus>()?.is_none() {
            self.out.notes.push("no TARGET_INFO_GPU table: the GPUs are not named (nor their peaks known)".into());
            return Ok(());
        }
        let mut devices = Vec::new();
        x.each(|r: Row<Gpus>| {
            devices.push(serde_json::json!({
                "id": r.int(Gpus::Id).unwrap_or(devices.len() as i64),
                "name": r.text(Gpus::Name).unwrap_or_default(),
                "totalGlobalMem": r.int(Gpus::TotalMemory).unwrap_or(0),
                "computeMajor": r.int(Gpus::ComputeMajor).unwrap_or(0),
                "computeMinor": r.int(Gpus::ComputeMinor).unwrap_or(0),
                "numSms": r.int(Gpus::SmCount).unwrap_or(0),
                "warpSize": r.int(Gpus::WarpSize).unwrap_or(32),
            }));
        })?;
        self.events.sink.header("deviceProperties", serde_json::Value::Array(devices));
        Ok(())
    }

    /// `TARGET_INFO_SYSTEM_ENV` and `META_DATA_CAPTURE`: the profiled process's environment and
    /// the capture's settings, which the secret detector reads.
    fn metadata(&mut self, x: &mut Export<'_>) -> Result<()> {
        self.name_values(x, SystemEnv::Name, SystemEnv::Value)?;
        self.name_values(x, MetaCapture::Name, MetaCapture::Value)
    }

    /// A table of (name, value) text rows, as the header object `nsys.<TABLE>`.
    fn name_values<T: Column>(&mut self, x: &mut Export<'_>, name: T, value: T) -> Result<()> {
        if x.columns::<T>()?.is_none_or(|have| have.len() < 2) {
            return Ok(());
        }
        let mut env = serde_json::Map::new();
        x.each(|r: Row<T>| {
            if let (Some(k), Some(v)) = (r.text(name), r.text(value)) {
                env.insert(k.to_string(), serde_json::Value::String(v.to_string()));
            }
        })?;
        self.events.sink.header(&format!("nsys.{}", T::TABLE), serde_json::Value::Object(env));
        Ok(())
    }
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
