//! One linked model of a trace, stored in columns.
//!
//! Every analysis reads this model; nothing re-reads the input bytes. Event tables are
//! structs of vectors (one `Vec` per field, same length), names are interned, and times are
//! integer nanoseconds in the trace's own clock (exact: parsed from the decimal text, not via `f64`).

mod builder;
mod call_stacks;
pub mod graphs;
mod interner;
pub mod meta;
pub mod schema;
pub mod transfer;
pub mod warnings;
mod xla_json;

pub use builder::TraceBuilder;
pub use interner::{FastHasher, FastMap, FastSet, Interner, NameId, NO_NAME};
pub use meta::{DeviceInfo, TraceMeta, Vendor, WholeGraphReplays};
use schema::{table, Tag};
pub use warnings::{WarningExample, WarningKind, Warnings};

/// Marker for "no link" in the `u32` index columns.
pub const NONE: u32 = u32::MAX;

/// What kind of GPU activity a [`GpuEvents`] row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GpuKind {
    /// A compute kernel (`cat: kernel`).
    Kernel,
    /// A DMA copy (`cat: gpu_memcpy`).
    Memcpy,
    /// A DMA fill (`cat: gpu_memset`).
    Memset,
}

impl Tag for GpuKind {
    const ALL: &'static [GpuKind] = &[GpuKind::Kernel, GpuKind::Memcpy, GpuKind::Memset];
}

impl GpuKind {
    /// The Kineto category spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            GpuKind::Kernel => "kernel",
            GpuKind::Memcpy => "gpu_memcpy",
            GpuKind::Memset => "gpu_memset",
        }
    }
}

table! {
    /// GPU-side activity: kernels, memcpys and memsets, in trace order.
    pub struct GpuEvents, row GpuEvent {
        /// Kernel, memcpy or memset.
        kind: GpuKind => Plain,
        /// The kernel's (or copy's) name.
        name: NameId => Name,
        /// Start, ns in the trace's clock.
        ts: i64 => Plain,
        /// Duration in ns (negative durations are clamped to 0 and counted as a warning).
        dur: i64 => Plain,
        /// `args.device` (else the pid), or -1.
        device: i32 => Plain,
        /// `args.stream` (else the tid), or -1.
        stream: i32 => Plain,
        /// `args.correlation`, or -1.
        correlation: i64 => Plain,
        /// `args.External id`, or -1.
        external_id: i64 => Plain,
        /// `args.grid`, or zeros.
        grid: [u32; 3] => Plain,
        /// `args.block`, or zeros.
        block: [u32; 3] => Plain,
        /// Index of the event in the input's event array (for error messages and truth matching).
        event_index: u32 => EventIndex,
    }
    links {
        /// Linked runtime launch (row in [`Launches`]) or [`NONE`].
        launch,
        /// Linked CPU op (row in [`CpuOps`], kind `CpuOp`) or [`NONE`].
        cpu_op,
    }
}

impl GpuEvents {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.name.len()
    }
    /// True when there are no GPU events.
    pub fn is_empty(&self) -> bool {
        self.name.is_empty()
    }
    /// End time (ns) of row `i`.
    pub fn end(&self, i: usize) -> i64 {
        self.ts[i] + self.dur[i]
    }
}

/// Kind of a CPU-side range event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    /// `cpu_op`: an ATen or custom operator.
    CpuOp,
    /// `user_annotation`: a `record_function` range (framework step markers live here).
    UserAnnotation,
    /// `python_function`: a Python frame (with `with_stack=True`).
    PythonFunction,
}

impl Tag for OpKind {
    const ALL: &'static [OpKind] = &[OpKind::CpuOp, OpKind::UserAnnotation, OpKind::PythonFunction];
}

table! {
    /// CPU-side ranges (ops, annotations, python frames), in trace order.
    pub struct CpuOps, row CpuOp {
        /// Op, annotation or Python frame.
        kind: OpKind => Plain,
        /// The op's name.
        name: NameId => Name,
        /// Start, ns.
        ts: i64 => Plain,
        /// Duration, ns.
        dur: i64 => Plain,
        /// Index into `Trace::threads`.
        thread: u32 => Thread,
        /// `args.External id`, or -1.
        external_id: i64 => Plain,
        /// `Input Dims` as its JSON text, interned (parse with `analysis::shapes`).
        input_dims: NameId => Name,
        /// `Input type` as JSON text, interned.
        input_types: NameId => Name,
        /// `Concrete Inputs` as JSON text, interned.
        concrete_inputs: NameId => Name,
        /// `Python id`, or -1.
        python_id: i64 => Plain,
        /// `Python parent id`, or -1.
        python_parent_id: i64 => Plain,
        /// Index of the event in the input's event array.
        event_index: u32 => EventIndex,
    }
    links {
        /// Enclosing range on the same thread (time nesting), or [`NONE`].
        parent,
    }
}

impl CpuOp {
    /// A range with only a kind, a name and a span: no shapes, ids or Python links (what a JAX
    /// trace's HLO ops and module runs become).
    pub fn bare(kind: OpKind, name: NameId, ts: i64, dur: i64, thread: u32, event_index: u32) -> CpuOp {
        CpuOp {
            kind,
            name,
            ts,
            dur,
            thread,
            external_id: -1,
            input_dims: NO_NAME,
            input_types: NO_NAME,
            concrete_inputs: NO_NAME,
            python_id: -1,
            python_parent_id: -1,
            event_index,
        }
    }
}

impl CpuOps {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.name.len()
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.name.is_empty()
    }
    /// End time (ns) of row `i`.
    pub fn end(&self, i: usize) -> i64 {
        self.ts[i] + self.dur[i]
    }
}

table! {
    /// Runtime and driver API calls (`cuda_runtime`, `cuda_driver`, HIP runtime), in trace order.
    pub struct Launches, row Launch {
        /// The call's name (`cudaLaunchKernel`...).
        name: NameId => Name,
        /// Start, ns.
        ts: i64 => Plain,
        /// Duration, ns.
        dur: i64 => Plain,
        /// Index into `Trace::threads`.
        thread: u32 => Thread,
        /// `args.correlation`, or -1.
        correlation: i64 => Plain,
        /// `args.External id`, or -1.
        external_id: i64 => Plain,
        /// Index of the event in the input's event array.
        event_index: u32 => EventIndex,
        /// True for `cudaGraphLaunch` / `hipGraphLaunch` (one launch, many kernels).
        is_graph: bool => Plain,
        /// `args.kernel`: the kernel the call dispatches (ROCm writes it; so does a graph capture,
        /// where no kernel runs), or [`NO_NAME`].
        kernel: NameId => Name,
    }
    links {
        /// Innermost enclosing CPU op (kind `CpuOp`) on the same thread, or [`NONE`].
        cpu_op,
        /// Innermost enclosing python frame, or [`NONE`].
        python,
    }
}

impl Launches {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.name.len()
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.name.is_empty()
    }
}

table! {
    /// GPU-side user annotations (`gpu_user_annotation`): ranges drawn on a GPU stream.
    pub struct GpuAnnotations, row GpuAnnotation {
        /// The annotation's text.
        name: NameId => Name,
        /// Start, ns.
        ts: i64 => Plain,
        /// Duration, ns.
        dur: i64 => Plain,
        /// Device (as for [`GpuEvents`]).
        device: i32 => Plain,
        /// Stream (as for [`GpuEvents`]).
        stream: i32 => Plain,
    }
    links {}
}

impl GpuAnnotations {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.name.len()
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.name.is_empty()
    }
}

table! {
    /// What communication ops (`record_param_comms`, `nccl:*`) record about their collective: one
    /// row per CPU op that carries a process group or a collective name (few: a sparse table).
    pub struct CommParams, row CommParam {
        /// The CPU op (row in [`CpuOps`]).
        op: u32 => OpRow,
        /// `Process Group Name`, or [`NO_NAME`].
        group: NameId => Name,
        /// `Process Group Ranks` as its text, or [`NO_NAME`].
        group_ranks: NameId => Name,
        /// `Collective name`, or [`NO_NAME`].
        collective: NameId => Name,
        /// `In msg nelems`, or -1.
        in_nelems: i64 => Plain,
        /// `Out msg nelems`, or -1.
        out_nelems: i64 => Plain,
        /// `Group size`, or -1.
        group_size: i64 => Plain,
        /// `dtype`, or [`NO_NAME`].
        dtype: NameId => Name,
    }
    links {}
}

table! {
    /// Bytes a memcpy or memset moved or wrote (`args.bytes`; CUPTI's `bytes` in an Nsight
    /// Systems export), for the GPU events that say.
    pub struct Copies, row CopyBytes {
        /// The memcpy or memset (row in [`GpuEvents`]).
        gpu: u32 => GpuRow,
        /// Bytes.
        bytes: i64 => Plain,
    }
    links {}
}

table! {
    /// Where a kernel replayed from a CUDA graph sits in its graph (`args."graph id"` and
    /// `args."graph node id"`, written by Kineto on replayed kernels since early 2026): the same
    /// node of the same graph in two replays is the same kernel of the model. Only the GPU events
    /// that carry a graph id other than 0 have a row.
    pub struct GraphNodes, row GraphNode {
        /// The kernel (row in [`GpuEvents`]).
        gpu: u32 => GpuRow,
        /// The graph's id (one per captured graph; a piecewise-compiled model captures one graph
        /// per piece).
        graph: u32 => Plain,
        /// The node's id (unique over the graphs of one process).
        node: i64 => Plain,
    }
    links {}
}

table! {
    /// The Python stack of each CPU op that carries one as its `Call stack` argument (Kineto of
    /// 2021, before Python frames were events of their own): frames `file.py(line): function`,
    /// innermost first, separated by `;`. A sparse table: only those ops have a row. The builder
    /// turns the stacks into Python frame ranges ([`OpKind::PythonFunction`]) when the trace has no
    /// frames of its own (see `call_stacks`).
    pub struct CallStacks, row CallStack {
        /// The CPU op (row in [`CpuOps`]).
        op: u32 => OpRow,
        /// The stack as its text, interned.
        stack: NameId => Name,
    }
    links {}
}

impl CallStacks {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.op.len()
    }
    /// True when no op carries a stack.
    pub fn is_empty(&self) -> bool {
        self.op.is_empty()
    }
}

impl GraphNodes {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.gpu.len()
    }
    /// True when no kernel carries a graph node.
    pub fn is_empty(&self) -> bool {
        self.gpu.is_empty()
    }
}

impl Copies {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.gpu.len()
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.gpu.is_empty()
    }
    /// Bytes of the copies of `kind` (memcpy or memset) in `trace`'s GPU events.
    pub fn total(&self, gpu: &GpuEvents, kind: GpuKind) -> u64 {
        self.gpu.iter().zip(&self.bytes).filter(|(&g, _)| gpu.kind[g as usize] == kind).map(|(_, &b)| b.max(0) as u64).sum()
    }
}

impl CommParams {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.op.len()
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.op.is_empty()
    }
}

/// Text process and thread ids (`"pid": "Spans"`) are stored as this plus the text's name id: far
/// below any numeric id a trace writes, so a negative numeric tid (seen: -1107294656) never
/// collides with a text one. -1 stands for a missing id.
pub(crate) const TEXT_ID: i64 = i64::MIN;

/// The stored form of a text pid/tid.
pub(crate) fn text_id(name: NameId) -> i64 {
    TEXT_ID + name as i64
}

/// The name id of a stored pid/tid that is text, `None` for a number.
pub(crate) fn text_id_name(v: i64) -> Option<NameId> {
    (v <= TEXT_ID + u32::MAX as i64).then(|| (v - TEXT_ID) as NameId)
}

/// A CPU thread: its process id, thread id and names (from `M` metadata events).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadInfo {
    /// Process id as stored (a text pid: see `text_id`).
    pub pid: i64,
    /// Thread id as stored.
    pub tid: i64,
    /// `process_name` metadata, or [`NO_NAME`].
    pub process_name: NameId,
    /// `thread_name` metadata, or [`NO_NAME`].
    pub thread_name: NameId,
}

table! {
    /// One side of `ac2g` flows (CPU launch → GPU event): the starts, or the finishes.
    pub struct FlowEnds, row FlowEnd {
        /// The flow's id, shared by its start and finish.
        id: i64 => Plain,
        /// Process id of the event the end is bound to.
        pid: i64 => TextOrNumber,
        /// Thread id (a stream for a finish).
        tid: i64 => TextOrNumber,
        /// Time, ns.
        ts: i64 => Plain,
    }
    links {}
}

impl FlowEnds {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.id.len()
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.id.is_empty()
    }
}

/// The whole linked trace.
#[derive(Debug, Default, Clone)]
pub struct Trace {
    /// Every interned name (kernels, ops, shapes' JSON text).
    pub names: Interner,
    /// Header facts: devices, vendor, rank, profiler settings.
    pub meta: TraceMeta,
    /// Kernels, memcpys and memsets.
    pub gpu: GpuEvents,
    /// CPU ops, user annotations and python frames.
    pub ops: CpuOps,
    /// Runtime and driver API calls.
    pub launches: Launches,
    /// GPU-side user annotations.
    pub gpu_annotations: GpuAnnotations,
    /// Communication parameters of the CPU ops that record them.
    pub comm: CommParams,
    /// Bytes of the memcpys and memsets that say how many.
    pub copies: Copies,
    /// Graph and node of the kernels replayed from CUDA graphs that say.
    pub graph_nodes: GraphNodes,
    /// Python stacks of the CPU ops that carry them as an argument (Kineto of 2021).
    pub call_stacks: CallStacks,
    /// CPU threads (process, thread, names).
    pub threads: Vec<ThreadInfo>,
    /// Flow starts and finishes kept for linking (`ac2g` only).
    pub flow_starts: FlowEnds,
    /// Flow finishes (`ph: f`).
    pub flow_finishes: FlowEnds,
    /// Earliest start (ns, trace clock) of any GPU event, CPU range or launch: the start of the
    /// trace's time span, for display.
    pub time_origin_ns: i64,
    /// Events read, by outcome.
    pub stats: ReadStats,
    /// What was skipped or repaired while reading.
    pub warnings: Warnings,
    /// Where the ops of kernels replayed from graphs came from (filled by `link::graphs`).
    pub graphs: graphs::GraphAttribution,
}

/// Counts of what the reader saw.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct ReadStats {
    /// Input bytes (compressed size for `.gz`).
    pub bytes_in: u64,
    /// Decompressed bytes: the JSON text, or the XSpace protobuf of a JAX profile.
    pub json_bytes: u64,
    /// What those bytes were: `chrome_json` (Kineto / Chrome trace) or `xspace` (JAX profile).
    pub format: InputFormat,
    /// Events in `traceEvents`.
    pub events: u64,
    /// Events kept in the model.
    pub kept: u64,
    /// Events of kinds we do not model (`overhead`, `Trace` spans, instant events, `fwdbwd` flows...).
    pub ignored: u64,
    /// Events dropped because they were malformed (each also counted in `Warnings`).
    pub skipped: u64,
    /// Blocks of plain JSON whose halves were parsed on two threads (native reader).
    pub parallel_blocks: u64,
    /// Set when the input stops before its end: what was read and where it stops.
    pub truncation: Option<crate::ingest::interchange::Truncation>,
    /// Remarks on how the input was read that are not problems (an open event array...).
    pub notes: Vec<String>,
}

/// The file format a trace was read from.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InputFormat {
    /// Chrome trace JSON, as Kineto / `torch.profiler` writes it.
    #[default]
    ChromeJson,
    /// A JAX / XLA profile: protobuf `XSpace` (`*.xplane.pb`).
    Xspace,
    /// An Nsight Systems export (`nsys export --type sqlite`).
    NsysSqlite,
}

impl InputFormat {
    /// How the CLI names the decompressed text: `JSON` or `XSpace protobuf`.
    pub fn label(self) -> &'static str {
        match self {
            InputFormat::ChromeJson => "JSON",
            InputFormat::Xspace => "XSpace protobuf",
            InputFormat::NsysSqlite => "Nsight Systems SQLite",
        }
    }
}

impl Trace {
    /// Name of an interned id.
    pub fn name(&self, id: NameId) -> &str {
        self.names.resolve(id)
    }
    /// Iterates over the rows of `gpu` that are kernels.
    pub fn kernel_rows(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.gpu.len()).filter(move |&i| self.gpu.kind[i] == GpuKind::Kernel)
    }
    /// Where the CPU op of GPU row `i` came from.
    pub fn op_from(&self, i: usize) -> graphs::OpFrom {
        self.graphs.op_from(i, self.gpu.cpu_op[i] != NONE)
    }
    /// Name of the CPU op linked to GPU row `i`, if any.
    pub fn cpu_op_name(&self, i: usize) -> Option<&str> {
        let op = self.gpu.cpu_op[i];
        (op != NONE).then(|| self.name(self.ops.name[op as usize]))
    }
    /// Name of the runtime call that launched GPU row `i`, if any.
    pub fn launcher_name(&self, i: usize) -> Option<&str> {
        let l = self.gpu.launch[i];
        (l != NONE).then(|| self.name(self.launches.name[l as usize]))
    }
}
