//! What one row of the health report is: which check ([`CheckId`]), what it found ([`Status`]).

use serde::{Serialize, Serializer};

/// What a check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Recorded in full.
    Present,
    /// Recorded for some of what it applies to (the count says how much).
    Partial,
    /// Not recorded.
    Missing,
    /// No problem found.
    Ok,
    /// A problem: an analysis is weaker or part of the trace was lost or repaired.
    Warning,
}

impl Status {
    /// The word the tables and faces show.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Present => "present",
            Status::Partial => "partial",
            Status::Missing => "missing",
            Status::Ok => "ok",
            Status::Warning => "warning",
        }
    }

    /// True for a status a user should act on (missing, partial, warning).
    pub fn needs_attention(self) -> bool {
        matches!(self, Status::Partial | Status::Missing | Status::Warning)
    }
}

/// One row of the health report.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// What is checked.
    pub check: CheckId,
    /// What was found.
    pub status: Status,
    /// How many (events, ops, kernels...: `found` says of what).
    pub count: u64,
    /// What was found, in words, with the figures.
    pub found: String,
    /// What the status limits: which analyses or tables are weaker or empty (empty when nothing).
    pub limits: String,
    /// The exact fix: the `torch.profiler.profile(...)` argument or the engine's switch (empty
    /// when nothing is to be done).
    pub fix: String,
}

/// Which fact a [`Check`] is about. Serialised (and shown) as its snake_case name
/// ([`CheckId::as_str`]); code matches the variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CheckId {
    /// CPU ops (`ProfilerActivity.CPU`).
    CpuOps,
    /// runtime API calls (kernel and graph launches).
    RuntimeCalls,
    /// GPU kernels.
    Kernels,
    /// memcpy and memset events.
    MemcpyMemset,
    /// ops' input shapes (`record_shapes`).
    Shapes,
    /// Python frames (`with_stack`).
    Stacks,
    /// `nn.Module` ranges (`with_modules`).
    Modules,
    /// step markers (`ProfilerStep#`, engine steps).
    StepAnnotations,
    /// CUDA graph launches and the ops their kernels came from.
    GraphLaunches,
    /// graph node ids of replayed kernels, and what they confirmed of passes and layers.
    GraphNodes,
    /// `distributedInfo` (rank, world size).
    DistributedInfo,
    /// `deviceProperties` (the GPU).
    DeviceProperties,
    /// the unit of `ts` and `dur`.
    TimeUnit,
    /// whether the document is whole.
    Truncation,
    /// secret-looking header metadata.
    SecretMetadata,
    /// what the name rules know of the trace.
    RuleCoverage,
    /// each pass's kernel time before its first layer and after its last (`pre`, `post`).
    LayerCoverage,
    /// events whose broken JSON was repaired.
    RepairedJson,
    /// top-level values not read.
    HeaderValues,
    /// device events of kinds not modelled.
    UnreadEvents,
    /// kernel launches without their kernel.
    DroppedKernels,
    /// GPU events without a launch.
    GpuWithoutCpu,
    /// kernels overlapping on one stream.
    StreamOverlap,
    /// kernels of zero duration.
    ZeroDurations,
    /// events skipped as malformed.
    SkippedEvents,
    /// CUDA graph replays an Nsight Systems export recorded whole.
    WholeGraphReplays,
}

impl CheckId {
    /// Every check, in the health report's order.
    pub const ALL: [CheckId; 26] = [
        CheckId::CpuOps,
        CheckId::RuntimeCalls,
        CheckId::Kernels,
        CheckId::MemcpyMemset,
        CheckId::Shapes,
        CheckId::Stacks,
        CheckId::Modules,
        CheckId::StepAnnotations,
        CheckId::GraphLaunches,
        CheckId::GraphNodes,
        CheckId::DistributedInfo,
        CheckId::DeviceProperties,
        CheckId::TimeUnit,
        CheckId::Truncation,
        CheckId::SecretMetadata,
        CheckId::RuleCoverage,
        CheckId::LayerCoverage,
        CheckId::RepairedJson,
        CheckId::HeaderValues,
        CheckId::UnreadEvents,
        CheckId::DroppedKernels,
        CheckId::GpuWithoutCpu,
        CheckId::StreamOverlap,
        CheckId::ZeroDurations,
        CheckId::SkippedEvents,
        CheckId::WholeGraphReplays,
    ];

    /// The check's name as tables, JSON and the faces spell it (`cpu_ops`).
    pub fn as_str(self) -> &'static str {
        match self {
            CheckId::CpuOps => "cpu_ops",
            CheckId::RuntimeCalls => "runtime_calls",
            CheckId::Kernels => "kernels",
            CheckId::MemcpyMemset => "memcpy_memset",
            CheckId::Shapes => "shapes",
            CheckId::Stacks => "stacks",
            CheckId::Modules => "modules",
            CheckId::StepAnnotations => "step_annotations",
            CheckId::GraphLaunches => "graph_launches",
            CheckId::GraphNodes => "graph_nodes",
            CheckId::DistributedInfo => "distributed_info",
            CheckId::DeviceProperties => "device_properties",
            CheckId::TimeUnit => "time_unit",
            CheckId::Truncation => "truncation",
            CheckId::SecretMetadata => "secret_metadata",
            CheckId::RuleCoverage => "rule_coverage",
            CheckId::LayerCoverage => "layer_coverage",
            CheckId::RepairedJson => "repaired_json",
            CheckId::HeaderValues => "header_values",
            CheckId::UnreadEvents => "unread_events",
            CheckId::DroppedKernels => "dropped_kernels",
            CheckId::GpuWithoutCpu => "gpu_without_cpu",
            CheckId::StreamOverlap => "stream_overlap",
            CheckId::ZeroDurations => "zero_durations",
            CheckId::SkippedEvents => "skipped_events",
            CheckId::WholeGraphReplays => "whole_graph_replays",
        }
    }
}

impl std::fmt::Display for CheckId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for CheckId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}
