//! What every reader hands on: the events it finds ([`RawEvent`], borrowed from its input), the
//! top-level facts, and what went wrong, through one [`EventSink`]. The JSON stream, the XSpace
//! reader and the Nsight Systems reader all feed it; the model's builder is the sink. With them,
//! the other facts a reader hands the model: how the input ended ([`Truncation`]) and XLA's
//! module runs and launch dimensions ([`xla`]). The model reads these types and no other of
//! `ingest` (`tests/suite/layers_one_way.rs`).

pub mod truncation;
pub mod xla;

pub use truncation::{Truncation, OPEN_ARRAY_NOTE};
pub use xla::{launch_dims, ModuleRun, ModuleRuns};

use std::borrow::Cow;

/// A process or thread id: Kineto writes numbers, but also strings ("Spans", "Traces").
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Id<'a> {
    #[default]
    /// The field is absent.
    Missing,
    /// A number.
    Num(i64),
    /// A text (some writers use names for pids and tids).
    Text(Cow<'a, str>),
}

/// A numeric field that may be absent or of the wrong type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Field<T> {
    #[default]
    /// The field is absent.
    Missing,
    /// Present but not a number.
    Bad,
    /// The field's value.
    Value(T),
}

/// The `args` fields we keep.
#[derive(Debug, Default)]
pub struct Args<'a> {
    /// `correlation`: links a GPU event to its runtime launch.
    pub correlation: Option<i64>,
    /// `External id`: links a kernel or launch to its CPU op.
    pub external_id: Option<i64>,
    /// `device` of a GPU event.
    pub device: Option<i64>,
    /// `stream` of a GPU event.
    pub stream: Option<i64>,
    /// `grid` dimensions of a kernel.
    pub grid: Option<[u32; 3]>,
    /// `block` dimensions of a kernel.
    pub block: Option<[u32; 3]>,
    /// Raw JSON text of `Input Dims`, `Input type`, `Concrete Inputs`.
    pub input_dims: Option<&'a [u8]>,
    /// `Input type` as raw JSON text.
    pub input_types: Option<&'a [u8]>,
    /// `Concrete Inputs` as raw JSON text.
    pub concrete_inputs: Option<&'a [u8]>,
    /// `Python id` of a python frame.
    pub python_id: Option<i64>,
    /// `Python parent id` of a python frame.
    pub python_parent_id: Option<i64>,
    /// `Call stack` of an op, as Kineto of 2021 wrote Python stacks: frames (`file.py(line):
    /// function`) innermost first, separated by `;`.
    pub call_stack: Option<Cow<'a, str>>,
    /// `args.name` of metadata (`M`) events.
    pub name: Option<Cow<'a, str>>,
    /// What a communication op (`record_param_comms`) records about its collective.
    pub comm: CommArgs<'a>,
    /// `kernel`: the kernel a runtime launch dispatches, as ROCm's tracer writes it (and every
    /// launch recorded while a graph is captured).
    pub kernel: Option<Cow<'a, str>>,
    /// What a JAX trace in Chrome JSON (no `cat`) says of a kernel or launch.
    pub xla: XlaArgs<'a>,
    /// `bytes` a memcpy or memset moved or wrote.
    pub bytes: Option<i64>,
    /// `size`: the bytes an MTIA DMA transfer (`dma_request`) moved.
    pub size: Option<i64>,
    /// The launch of a compiled program whose many device ops share its correlation (an XLA
    /// program a TPU ran): one launch, many ops, as a graph launch is.
    pub program: bool,
    /// `graph id` of a kernel replayed from a CUDA graph (0: not replayed).
    pub graph_id: Option<i64>,
    /// `graph node id` of such a kernel.
    pub graph_node: Option<i64>,
}

/// The `args` of an event in a JAX trace converted to Chrome JSON: the HLO op and module a kernel
/// or launch runs, and its launch dimensions (`kernel_details`: `grid:… block:…`).
#[derive(Debug, Default)]
pub struct XlaArgs<'a> {
    /// `hlo_op`.
    pub hlo_op: Option<Cow<'a, str>>,
    /// `hlo_module`.
    pub hlo_module: Option<Cow<'a, str>>,
    /// `kernel_details`.
    pub kernel_details: Option<Cow<'a, str>>,
}

/// The `args` of a communication op (`record_param_comms`, `nccl:*`) that tell its collective:
/// which process group, which collective, how many elements of which type.
#[derive(Debug, Default)]
pub struct CommArgs<'a> {
    /// `Process Group Name`.
    pub group: Option<Cow<'a, str>>,
    /// `Process Group Ranks` as raw JSON text (`"[0, 1, 2, 3]"`).
    pub group_ranks: Option<Cow<'a, str>>,
    /// `Collective name` (`allreduce`, `_allgather_base`...).
    pub collective: Option<Cow<'a, str>>,
    /// `In msg nelems`.
    pub in_nelems: Option<i64>,
    /// `Out msg nelems`.
    pub out_nelems: Option<i64>,
    /// `Group size`.
    pub group_size: Option<i64>,
    /// `dtype` (`BFloat16`...).
    pub dtype: Option<Cow<'a, str>>,
}

impl CommArgs<'_> {
    /// True when the op recorded a process group or a collective name.
    pub fn is_present(&self) -> bool {
        self.group.is_some() || self.collective.is_some()
    }
}

/// One event, borrowed from the input buffer.
#[derive(Debug, Default)]
pub struct RawEvent<'a> {
    /// First byte of `ph` (`X`, `s`, `f`, `M`, `i`...), 0 if absent.
    pub ph: u8,
    /// `cat` and `name` as raw (unescaped) bytes: UTF-8 is checked only when a name is first interned.
    pub cat: Cow<'a, [u8]>,
    /// `name`, unescaped only when it holds escapes.
    pub name: Cow<'a, [u8]>,
    /// `pid`.
    pub pid: Id<'a>,
    /// `tid`.
    pub tid: Id<'a>,
    /// Start in ns.
    pub ts: Field<i64>,
    /// Duration in ns.
    pub dur: Field<i64>,
    /// Flow id.
    pub id: Option<i64>,
    /// The `args` fields the model keeps.
    pub args: Args<'a>,
}

impl RawEvent<'_> {
    /// The name as text (lossy), for messages.
    pub fn name_text(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.name)
    }
}

/// Receives what a reader finds: every reader (JSON, XSpace, Nsight Systems) feeds one.
pub trait EventSink {
    /// One event; `index` is its position in the event array, `offset` its byte offset.
    fn event(&mut self, ev: &RawEvent<'_>, index: u64, offset: u64);
    /// A top-level key other than `traceEvents`, with its (small) value.
    fn header(&mut self, key: &str, value: serde_json::Value);
    /// A top-level key whose value could not be read (`why`), at byte `offset`: its facts
    /// (`deviceProperties`, `distributedInfo`...) are missing, and the sink should say so.
    fn header_unread(&mut self, key: &str, offset: u64, why: &str) {
        let _ = (key, offset, why);
    }
    /// An element of the event array that is not an object.
    fn not_an_object(&mut self, index: u64, offset: u64);
    /// Event `index` broke the JSON grammar and was repaired (the JSON reader's repair): `strings`
    /// strings of it, the first at byte `offset`, held `what` (an unescaped double quote...). The
    /// repaired event follows through [`EventSink::event`].
    fn repaired(&mut self, index: u64, offset: u64, what: &str, strings: u32) {
        let _ = (index, offset, what, strings);
    }
    /// A fact the reader knows in a typed form ([`Fact`]).
    fn fact(&mut self, fact: Fact) {
        let _ = fact;
    }
}

/// A fact a reader knows in a typed form (not a header key of the JSON world): the sink keeps it
/// in the model's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fact {
    /// Nsight Systems recorded `count` CUDA graph replays whole (`--cuda-graph-trace=graph`),
    /// `ns` of GPU time in all: the kernels they ran are not in the export.
    WholeGraphReplays {
        /// How many replays.
        count: u64,
        /// Their summed duration (ns).
        ns: u64,
    },
    /// The input is an Nsight Systems export (of a CUDA trace: NVIDIA's) of this schema version
    /// (`META_DATA_EXPORT.EXPORT_SCHEMA_VERSION`).
    NsightExport {
        /// `3.25.0`, or `unknown`.
        schema_version: String,
    },
}
