//! Every kind of finding, declared once: its name, what it means, what it looks for and where it
//! is looked for. A new kind is one variant of [`Kind`] and one row of [`KINDS`]; the order of
//! [`Kind::ALL`], the names tables and JSON spell, the detectors [`super::findings`] runs and the
//! lists the usage, the MCP description, README and SKILL give (tested against this table) all
//! follow from it.

use super::{between_steps, comm, copies, fusion, gpu_bound, host, host_activity, roofline, stall, sync, unlinked};
use super::{Finding, Group};
use crate::analysis::Analysis;

/// What a finding is about: one kind per cause of lost time, one module each, one row of
/// [`KINDS`] each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// The GPU idles while the host is in a range that issues no GPU work (a data loader, a
    /// scheduler, a tokenizer): named, with its fix when the table of host activities knows it.
    HostActivity,
    /// The GPU idles before work whose launch the trace does not hold.
    UnlinkedIdle,
    /// The GPU is busy nearly all of every step: what ran, ranked by share.
    GpuBound,
    /// Copies or fills run with no kernel beside them.
    ExposedCopy,
    /// Collectives with no compute beside them.
    ExposedCommunication,
    /// The GPU waits while the host issues kernels one at a time.
    HostBound,
    /// The host blocks in a synchronising call and the GPU runs dry.
    Sync,
    /// The stream waits with its next kernel already queued.
    Stalled,
    /// Idle between steps.
    StepGaps,
    /// Runs of small memory-bound kernels a fused kernel would do at once.
    Fusion,
    /// GEMM or attention shapes far under what the trace's own calls reach.
    Roofline,
    /// Across the ranks of a run (`traceprism ranks`), not one trace.
    Straggler,
}

/// Where a kind of finding is looked for.
#[derive(Clone, Copy)]
pub enum Detect {
    /// In each group of steps (a phase on a device, or a capture window).
    Each {
        /// The detector.
        run: fn(&Analysis, &Group) -> Vec<Finding>,
        /// Only where the trace holds the runtime launches (a host wait needs them).
        needs_launches: bool,
        /// Only in whole steps, never in a device's capture window.
        steps_only: bool,
    },
    /// Over every group at once (what the trace's own calls reach, across phases).
    All(fn(&Analysis, &[Group]) -> Vec<Finding>),
    /// Over a run's ranks ([`super::stragglers`]), never from one trace.
    Run,
}

/// One kind of finding, as every face and doc names it.
pub struct KindSpec {
    /// The kind.
    pub kind: Kind,
    /// Its name in tables, JSON, the usage and the docs (`host_bound`).
    pub name: &'static str,
    /// What it finds, in a phrase (the usage, the MCP description).
    pub finds: &'static str,
    /// Where it is looked for.
    pub detect: Detect,
}

/// A detector of one group that finds at most one finding.
macro_rules! one {
    ($f:expr) => {
        |a, g| $f(a, g).into_iter().collect()
    };
}

/// Every kind, in the order findings are looked for (ties in saving keep this order).
pub const KINDS: [KindSpec; 12] = [
    KindSpec {
        kind: Kind::HostActivity,
        name: "host_activity",
        finds: "the GPU idle while the host is in a named range (a data loader, a scheduler, a tokenizer, a Python frame)",
        detect: Detect::Each { run: host_activity::host_activities, needs_launches: false, steps_only: false },
    },
    KindSpec {
        kind: Kind::UnlinkedIdle,
        name: "unlinked_idle",
        finds: "idle before GPU work whose launch the trace does not hold",
        detect: Detect::Each { run: one!(|_, g| unlinked::unlinked(g)), needs_launches: false, steps_only: false },
    },
    KindSpec {
        kind: Kind::GpuBound,
        name: "gpu_bound",
        finds: "a step the GPU is busy through, what ran ranked (no saving claimed)",
        detect: Detect::Each { run: one!(gpu_bound::gpu_bound), needs_launches: false, steps_only: false },
    },
    KindSpec {
        kind: Kind::ExposedCopy,
        name: "exposed_copy",
        finds: "copies and fills with no kernel beside them",
        detect: Detect::Each { run: one!(copies::exposed_copies), needs_launches: false, steps_only: false },
    },
    KindSpec {
        kind: Kind::ExposedCommunication,
        name: "exposed_communication",
        finds: "collectives with no compute beside them",
        detect: Detect::Each { run: one!(comm::exposed_communication), needs_launches: false, steps_only: false },
    },
    KindSpec {
        kind: Kind::HostBound,
        name: "host_bound",
        finds: "the GPU waiting while the host launches kernels one by one",
        detect: Detect::Each { run: one!(|_, g| host::host_bound(g)), needs_launches: true, steps_only: false },
    },
    KindSpec {
        kind: Kind::Sync,
        name: "sync",
        finds: "the GPU running dry after the host blocked in a synchronising call",
        detect: Detect::Each { run: one!(sync::syncs), needs_launches: true, steps_only: false },
    },
    KindSpec {
        kind: Kind::Stalled,
        name: "stalled",
        finds: "the GPU waiting with its next kernel already launched",
        detect: Detect::Each { run: one!(stall::stalled), needs_launches: true, steps_only: false },
    },
    KindSpec {
        kind: Kind::StepGaps,
        name: "step_gaps",
        finds: "the GPU idle between steps",
        detect: Detect::Each { run: one!(|_, g| between_steps::step_gaps(g)), needs_launches: true, steps_only: false },
    },
    KindSpec {
        kind: Kind::Fusion,
        name: "fusion",
        finds: "runs of memory-bound kernels between GEMMs one fused kernel would do",
        detect: Detect::Each { run: one!(fusion::fusion), needs_launches: true, steps_only: true },
    },
    KindSpec {
        kind: Kind::Roofline,
        name: "roofline",
        finds: "GEMM or attention shapes far under what the trace's own calls reach",
        detect: Detect::All(roofline::far_from_roof),
    },
    KindSpec {
        kind: Kind::Straggler,
        name: "straggler",
        finds: "over a run's ranks: the rank the others wait for at the collectives",
        detect: Detect::Run,
    },
];

impl Kind {
    /// Every kind, in the order findings are looked for.
    pub const ALL: [Kind; KINDS.len()] = {
        let mut all = [Kind::HostActivity; KINDS.len()];
        let mut i = 0;
        while i < KINDS.len() {
            all[i] = KINDS[i].kind;
            i += 1;
        }
        all
    };

    /// The kind's row of [`KINDS`] (each kind's row sits at its variant's index: tested).
    pub fn spec(self) -> &'static KindSpec {
        &KINDS[self as usize]
    }

    /// The kind as tables and JSON spell it (`host_bound`).
    pub fn as_str(self) -> &'static str {
        self.spec().name
    }

    /// The kind of that name.
    pub fn parse(name: &str) -> Option<Kind> {
        KINDS.iter().find(|s| s.name == name).map(|s| s.kind)
    }

    /// The kinds one trace's findings can hold (every kind but those over a run's ranks).
    pub fn of_one_trace() -> impl Iterator<Item = &'static KindSpec> {
        KINDS.iter().filter(|s| !matches!(s.detect, Detect::Run))
    }
}

impl PartialEq<&str> for Kind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::{Kind, KINDS};

    #[test]
    fn each_kind_has_one_row_at_its_index_and_a_name_of_its_own() {
        for (i, spec) in KINDS.iter().enumerate() {
            assert_eq!(spec.kind as usize, i, "{}", spec.name);
            assert_eq!(Kind::parse(spec.name), Some(spec.kind));
            // The name is the variant's serde name: JSON and tables spell it alike.
            assert_eq!(serde_json::to_value(spec.kind).unwrap(), spec.name);
        }
        let mut names: Vec<&str> = KINDS.iter().map(|s| s.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), KINDS.len());
        assert_eq!(Kind::ALL.len(), KINDS.len());
    }
}
