//! What is known of kernels replayed from CUDA/HIP graphs: where each GPU row's CPU op came
//! from, and how many replayed kernels were given one (see `crate::link::graphs`).

/// Where a GPU row's CPU op came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OpFrom {
    /// The op around the runtime call that launched it (or the op with its External id).
    Launch,
    /// The op that dispatched it while a capture trace recorded the graph being captured.
    Capture,
    /// The op that launched the same kernel in an eager stretch of this trace with the same
    /// kernel sequence (names only: its shapes belong to that other step).
    EagerPass,
    /// No op.
    None,
}

impl OpFrom {
    /// The spelling of the `op_from` column.
    pub fn as_str(self) -> &'static str {
        match self {
            OpFrom::Launch => "launch",
            OpFrom::Capture => "capture",
            OpFrom::EagerPass => "eager_pass",
            OpFrom::None => "none",
        }
    }
}

/// One capture trace as it was read: its file, its graphs and what `execution_details.json` said.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct CaptureSource {
    /// The file's name as given.
    pub label: String,
    /// Graphs captured in it (`StreamBeginCapture` … `StreamEndCapture` pairs).
    pub graphs: usize,
    /// Dispatches (kernel launches, copies, fills) recorded inside those captures.
    pub dispatches: usize,
    /// Batch size the graphs were captured for, when `execution_details.json` says.
    pub batch_size: Option<u64>,
    /// `FULL` or `PIECEWISE`, when `execution_details.json` says.
    pub mode: Option<String>,
}

/// How the replayed kernels of a trace were attributed to CPU ops.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct GraphReport {
    /// Graph launches in the trace that replayed at least one GPU row.
    pub graph_launches: usize,
    /// GPU rows replayed from graphs (no op of their own).
    pub replayed_rows: usize,
    /// Their GPU time (ns).
    pub replayed_ns: i64,
    /// Capture traces given.
    pub captures: Vec<CaptureSource>,
    /// Graph launches whose replay was aligned to a captured graph.
    pub launches_from_capture: usize,
    /// Replayed GPU rows given the op that dispatched them at capture.
    pub rows_from_capture: usize,
    /// Graph launches whose replay matched an eager stretch of this trace (in whole or in part).
    pub launches_from_eager: usize,
    /// Replayed GPU rows given the op of an eager stretch with the same kernel sequence.
    pub rows_from_eager: usize,
    /// Replayed GPU time (ns) that now has an op, by either way.
    pub attributed_ns: i64,
    /// Captured dispatches passed over while aligning (recorded at capture, not replayed).
    pub dispatches_skipped: usize,
    /// Replayed rows of aligned launches with no dispatch to match (left without an op).
    pub rows_unaligned: usize,
    /// Graph launches no captured graph matched (left as they were, or given eager ops).
    pub launches_unmatched: usize,
    /// Largest batch size the matched graphs were captured for, when known: shapes taken from a
    /// capture are those of this padded batch, not of the step's real one.
    pub captured_batch: Option<u64>,
}

/// Per GPU row, where its op came from, and the report of the attribution.
#[derive(Debug, Clone, Default)]
pub struct GraphAttribution {
    /// Per GPU row; empty when no replayed row was given an op (then a row's op, if any, is its
    /// launch's).
    pub from: Vec<OpFrom>,
    /// The counts.
    pub report: GraphReport,
}

impl GraphAttribution {
    /// Where the op of GPU row `i` came from, given whether it has one.
    pub fn op_from(&self, i: usize, has_op: bool) -> OpFrom {
        match self.from.get(i) {
            Some(&f) if f != OpFrom::Launch => f,
            _ if has_op => OpFrom::Launch,
            _ => OpFrom::None,
        }
    }
}
