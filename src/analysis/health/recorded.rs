//! The checks of what the trace recorded: present, partial or missing, each missing one with
//! what it limits and its fix ([`super::fixes`]).

use super::check::{Check, CheckId, Status};
use super::counted::Counted;
use super::fixes::{checked, fix};
use crate::analysis::steps::annotations::find_steps;
use crate::analysis::steps::rules::PhaseRules;
use crate::analysis::Analysis;
use crate::model::Trace;

/// A recorded fact: present when `count > 0`, else missing with its limits and its fix.
pub fn recorded(t: &Trace, check: CheckId, count: u64, found: String, limits: &str) -> Check {
    let status = if count > 0 { Status::Present } else { Status::Missing };
    checked(check, status, count, found, limits, t.stats.format)
}

/// `memcpy_memset`: copies and fills (present or none; nothing to fix).
pub fn copies_check(c: &Counted) -> Check {
    Check {
        check: CheckId::MemcpyMemset,
        status: if c.memcpy + c.memset > 0 { Status::Present } else { Status::Ok },
        count: c.memcpy + c.memset,
        found: if c.memcpy + c.memset > 0 {
            format!("{} memcpy, {} memset", c.memcpy, c.memset)
        } else {
            "no memcpy or memset: nothing was copied while the profiler ran (or the GPU was not recorded)".into()
        },
        limits: String::new(),
        fix: String::new(),
    }
}

/// `device_properties`: the GPUs the header names.
pub fn devices_check(t: &Trace) -> Check {
    let found = match t.meta.devices.first() {
        Some(d) => format!("{} {}(s): {}", t.meta.devices.len(), t.meta.device_kind(), d.name),
        None => "no deviceProperties".into(),
    };
    recorded(
        t,
        CheckId::DeviceProperties,
        t.meta.devices.len() as u64,
        found,
        "the roofline has no peaks unless --device names the GPU; the device is named by its vendor only",
    )
}

/// `whole_graph_replays` (an Nsight Systems export's own check): each graph replay recorded whole
/// is one GPU event standing for kernels the export does not hold.
pub fn whole_graphs_check(t: &Trace) -> Check {
    let (n, ns) = t.meta.whole_graph_replays.map_or((0, 0), |r| (r.count, r.ns));
    checked(
        CheckId::WholeGraphReplays,
        if n > 0 { Status::Warning } else { Status::Ok },
        n,
        if n > 0 {
            format!(
                "{n} CUDA graph replays recorded whole ({:.3} ms): the kernels they ran are not in the export",
                ns as f64 / 1e6
            )
        } else {
            "no graph replayed whole: every kernel is in the export".into()
        },
        "each replay is one opaque GPU event: its kernels are in no category, layer or kernel table, and passes inside it are not seen",
        t.stats.format,
    )
}

/// `distributedInfo`: asked for only when the trace ran collectives (a single process needs none).
pub fn distributed_check(a: &Analysis) -> Check {
    let t = &a.trace;
    let comm_family = a.categories.communication_flags();
    let collectives =
        a.categories.of_row.iter().filter(|&&c| comm_family.get(c as usize).copied().unwrap_or(false)).count() as u64;
    let (status, found) = match (t.meta.rank, t.meta.world_size) {
        (Some(r), Some(w)) => (Status::Present, format!("rank {r} of {w}")),
        (Some(r), None) => (Status::Present, format!("rank {r}")),
        _ if collectives > 0 => (Status::Missing, format!("no distributedInfo, though {collectives} communication kernels ran")),
        _ => (Status::Ok, "no distributedInfo and no communication kernels: one process".into()),
    };
    checked(
        CheckId::DistributedInfo,
        status,
        t.meta.world_size.unwrap_or(0).max(0) as u64,
        found,
        "`ranks` tells this trace's rank from its file name or the order given",
        t.stats.format,
    )
}

/// `kernels`: the GPU's kernels; a warning when the device ran under categories not read, or
/// when launches were recorded without their kernels.
pub fn kernels_check(t: &Trace, c: &Counted) -> Check {
    let mut k = recorded(
        t,
        CheckId::Kernels,
        c.kernels,
        match t.meta.device_kind() {
            "GPU" => format!("{} kernels", c.kernels),
            kind => format!("{} kernels ({kind} ops)", c.kernels),
        },
        "no device time at all: categories, phases, layers and the timeline are empty",
    );
    if c.kernels == 0 && c.unread_device > 0 {
        k.status = Status::Warning;
        k.found = format!(
            "no kernels read: {} device events sit under categories traceprism does not read (see unread_events)",
            c.unread_device
        );
        k.fix = String::new();
    } else if c.kernels == 0 && c.kernel_launches > 0 {
        k.status = Status::Warning;
        k.found =
            format!("no kernels, though {} kernel launches were recorded: the profiler recorded the CPU only", c.kernel_launches);
    }
    k
}

/// `shapes`: how many CPU ops carry `Input Dims`.
pub fn shapes_check(t: &Trace, c: &Counted) -> Check {
    let status = match (c.ops_with_shapes, c.cpu_ops) {
        (_, 0) => Status::Missing,
        (0, _) => Status::Missing,
        (s, n) if s * 10 >= n * 9 => Status::Present,
        _ => Status::Partial,
    };
    let there = status == Status::Present;
    Check {
        check: CheckId::Shapes,
        status,
        count: c.ops_with_shapes,
        found: format!("{} of {} CPU ops carry Input Dims", c.ops_with_shapes, c.cpu_ops),
        limits: if there {
            String::new()
        } else {
            "no GEMM sizes: no FLOPs or roofline, no token counts for phases (they come from kernel names and timing) and no split of mixed steps".into()
        },
        fix: if there || c.cpu_ops == 0 { String::new() } else { fix(CheckId::Shapes, t.stats.format).into() },
    }
}

/// `step_annotations`: `ProfilerStep#` ranges and the engines' own step markers.
pub fn steps_check(t: &Trace, c: &Counted) -> Check {
    let engine = find_steps(t, PhaseRules::builtin()).len() as u64;
    let n = c.profiler_steps + engine;
    let found =
        format!("{} ProfilerStep# ranges, {} engine step markers (vLLM execute_*, SGLang step[...])", c.profiler_steps, engine);
    let mut k = recorded(
        t,
        CheckId::StepAnnotations,
        n,
        found,
        "passes are cut from the ops and kernels alone, and each step's phase from its kernels and shapes",
    );
    if n == 0 && c.cpu_ops == 0 {
        k.fix = String::new();
    }
    k
}

/// `graph_launches`: how much of the replayed time has the op that dispatched it.
pub fn graphs_check(a: &Analysis, c: &Counted) -> Check {
    let r = &a.trace.graphs.report;
    if c.graph_launches == 0 {
        return Check {
            check: CheckId::GraphLaunches,
            status: Status::Ok,
            count: 0,
            found: "no graph launches: every kernel was launched eagerly".into(),
            limits: String::new(),
            fix: String::new(),
        };
    }
    let pct = if r.replayed_ns > 0 { 100.0 * r.attributed_ns as f64 / r.replayed_ns as f64 } else { 100.0 };
    let whole = pct >= 99.95;
    Check {
        check: CheckId::GraphLaunches,
        status: if whole { Status::Present } else if r.attributed_ns > 0 { Status::Partial } else { Status::Missing },
        count: c.graph_launches,
        found: format!(
            "{} graph launches replayed {} kernels; {pct:.1}% of replayed time has the op that dispatched it ({} capture traces given)",
            c.graph_launches,
            r.replayed_rows,
            r.captures.len()
        ),
        limits: if whole { String::new() } else { "kernels replayed from graphs have no op, shapes or module: op tables and op-based layers miss them".into() },
        fix: if whole { String::new() } else { fix(CheckId::GraphLaunches, a.trace.stats.format).into() },
    }
}

/// `graph_nodes`: whether replayed kernels carry their graph node ids, and what the ids confirmed
/// of the passes and layers found (a boundary inside a replay, or a node found in two layers, is a
/// warning: the structure misread something the graph knows).
pub fn graph_nodes_check(a: &Analysis, c: &Counted) -> Check {
    let g = crate::analysis::graph_nodes::check(&a.trace, &a.phases, &a.layers);
    let contradicted = g.replays_split_by_a_boundary > 0
        || g.nodes_same_kernel < g.nodes_compared
        || g.nodes_same_layer < g.nodes_in_layers
        || g.pieces_per_pass.is_some() && g.passes_layers_between_pieces < g.passes_with_graphs;
    let (status, found) = if g.present() {
        (if contradicted { Status::Warning } else { Status::Present }, g.summary())
    } else if c.graph_launches > 0 {
        (Status::Ok, "the replayed kernels carry no graph node ids (Kineto writes them since early 2026): passes and layers stand on names and structure alone".into())
    } else {
        (Status::Ok, "no kernel replayed from a graph".into())
    };
    Check {
        check: CheckId::GraphNodes,
        status,
        count: g.kernels as u64,
        found,
        limits: if contradicted {
            "the passes or layers found disagree with the graphs the kernels were replayed from (see found)".into()
        } else {
            String::new()
        },
        fix: String::new(),
    }
}

/// Share of kernel time that may go unnamed by the category rules before the check warns.
const UNNAMED_WARNING: f64 = 0.01;

/// What the name rules know of the trace, and what passes and layers stand on.
pub fn coverage_check(a: &Analysis) -> Check {
    let c = crate::analysis::coverage::Coverage::of(a);
    let unnamed = c.unnamed_share() > UNNAMED_WARNING;
    let blind = c.structure_only_passes() > 0 || !c.disagreements.is_empty();
    let mut limits = Vec::new();
    if unnamed {
        limits.push("the unnamed kernels are category Other; layer kinds and phases lean on structure and amounts of work where their names say nothing");
    }
    if blind {
        limits.push("no name confirms where the structure-cut passes begin and end: a boundary may be off by a few small kernels, and their phases rest on amounts of work, not names");
    }
    Check {
        check: CheckId::RuleCoverage,
        status: if unnamed || blind { Status::Warning } else { Status::Ok },
        count: c.unnamed,
        found: c.sentence(),
        limits: limits.join("; "),
        fix: if unnamed {
            "name the unnamed families in a rules file (--rules FILE; [[rule]] pattern = '…' category = '…', see `traceprism tables` and the page's Rules view), and say so upstream so the built-in table learns them".into()
        } else if blind {
            "record what names the steps: the CPU side (torch.profiler: activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]; Nsight Systems: --trace=cuda,nvtx) or the engine's step annotations".into()
        } else {
            String::new()
        },
    }
}

/// A pass whose kernel time outside its layers is above this share holds more than the
/// embedding, final norm, head and sampling: a block the layer finder did not take for a layer.
pub const OUTSIDE_LAYERS_WARNING: f64 = 0.10;

/// A pass's kernel time outside its layers: before the first (`pre`, ns), after the last (`post`),
/// of all its kernel time (`all`), and its longest kernel there (a GPU row).
struct Outside {
    pass: usize,
    pre: i64,
    post: i64,
    all: i64,
    longest: Option<usize>,
}

impl Outside {
    /// The share of the pass's kernel time outside its layers.
    fn share(&self) -> f64 {
        (self.pre + self.post) as f64 / self.all as f64
    }
}

/// `layer_coverage`: each pass's share of kernel time before its first layer (`pre`) and after its
/// last (`post`); a warning when any pass's is above [`OUTSIDE_LAYERS_WARNING`], naming the worst.
pub fn layer_coverage_check(a: &Analysis) -> Check {
    use crate::analysis::layers::Role;
    let g = &a.trace.gpu;
    // The pass with the largest share outside its layers.
    let mut worst: Option<Outside> = None;
    let (mut with_layers, mut over) = (0usize, 0usize);
    // Steps only: the work around a diffusion model's steps (its encoders, its VAE) is no stack
    // of the model's layers.
    for (p, pass) in a.phases.passes.iter().enumerate().filter(|(_, p)| p.phase != crate::analysis::phases::Phase::Stage) {
        let mut this = Outside { pass: p, pre: 0, post: 0, all: 0, longest: None };
        let mut has_layers = false;
        for &r in &pass.rows {
            let r = r as usize;
            let role = a.layers.role_of_row.get(r);
            has_layers |= role == Some(&Role::Layer);
            if g.kind[r] != crate::model::GpuKind::Kernel {
                continue;
            }
            this.all += g.dur[r];
            match role {
                Some(Role::Pre) => this.pre += g.dur[r],
                Some(Role::Post) => this.post += g.dur[r],
                _ => continue,
            }
            if this.longest.is_none_or(|l| g.dur[r] > g.dur[l]) {
                this.longest = Some(r);
            }
        }
        if !has_layers || this.all == 0 {
            continue;
        }
        with_layers += 1;
        over += usize::from(this.share() > OUTSIDE_LAYERS_WARNING);
        if worst.as_ref().is_none_or(|w| this.share() > w.share()) {
            worst = Some(this);
        }
    }
    let Some(Outside { pass: p, pre, post, all, longest }) = worst else {
        return Check {
            check: CheckId::LayerCoverage,
            status: Status::Ok,
            count: 0,
            found: "no pass with layers".into(),
            limits: String::new(),
            fix: String::new(),
        };
    };
    let warn = over > 0;
    let pct = |ns: i64| 100.0 * ns as f64 / all as f64;
    // What the largest piece outside the layers is, so that a reader tells a large head (a GEMM
    // launched by the head's matmul after the final norm) from a block the finder missed.
    let longest = match longest {
        Some(r) if warn => format!(
            "; its longest kernel outside them ({} layer): {} ({}), {:.2} ms, {:.1}% of the pass",
            if a.layers.role_of_row[r] == Role::Pre { "before the first" } else { "after the last" },
            a.trace.cpu_op_name(r).unwrap_or("no CPU op"),
            a.categories.name(r),
            g.dur[r] as f64 / 1e6,
            pct(g.dur[r])
        ),
        _ => String::new(),
    };
    Check {
        check: CheckId::LayerCoverage,
        status: if warn { Status::Warning } else { Status::Ok },
        count: over as u64,
        found: format!(
            "{over} of {with_layers} passes with layers hold over {:.0}% of their kernel time outside them; the most: pass {p}, {:.1}% ({:.1}% before the first layer, {:.1}% after the last){longest}",
            100.0 * OUTSIDE_LAYERS_WARNING,
            pct(pre + post),
            pct(pre),
            pct(post)
        ),
        limits: if warn {
            "pre and post hold the embedding, final norm, head and sampling; more is either a large head (a big vocabulary at a small batch) or a block the layer finder did not read as layers (a second block kind, a dense first or last layer), which per-layer tables and compare's layer rows then leave out".into()
        } else {
            String::new()
        },
        fix: if warn {
            "see the pass in `traceprism layers TRACE --debug-layers N`; a model whose blocks are not found is a bug to report with the trace".into()
        } else {
            String::new()
        },
    }
}

/// `time_unit`: whether the timestamps read as µs fit the kernels' lengths.
pub fn time_unit_check(t: &Trace) -> Check {
    let unit = t.meta.setting("displayTimeUnit");
    let mut durs: Vec<i64> = t.kernel_rows().map(|i| t.gpu.dur[i]).collect();
    let median_us = if durs.is_empty() {
        None
    } else {
        let mid = durs.len() / 2;
        Some(*durs.select_nth_unstable(mid).1 as f64 / 1e3)
    };
    // Kineto writes µs and `displayTimeUnit: "ms"` (display only). A writer that put ns in `ts`
    // and said so with `"ns"` gives kernels a thousand times too long.
    let at_odds = unit == Some("ns") && median_us.is_some_and(|m| m >= 1000.0);
    let found = match (unit, median_us) {
        (Some(u), Some(m)) => {
            format!("timestamps read as µs (displayTimeUnit \"{u}\" is for display only); median kernel {m:.1} µs")
        }
        (Some(u), None) => format!("timestamps read as µs (displayTimeUnit \"{u}\" is for display only)"),
        (None, Some(m)) => format!("timestamps read as µs; median kernel {m:.1} µs"),
        (None, None) => "timestamps read as µs".into(),
    };
    checked(
        CheckId::TimeUnit,
        if at_odds { Status::Warning } else { Status::Ok },
        0,
        found,
        "displayTimeUnit is \"ns\" and the median kernel lasts over 1 ms as µs: the timestamps are likely ns, so every time is 1000× too long",
        t.stats.format,
    )
}

/// `truncation`: whether the document is whole.
pub fn truncation_check(t: &Trace) -> Check {
    match &t.stats.truncation {
        None => Check {
            check: CheckId::Truncation,
            status: Status::Ok,
            count: t.stats.events,
            found: format!("the document is whole: {} events", t.stats.events),
            limits: String::new(),
            fix: String::new(),
        },
        Some(cut) => Check {
            check: CheckId::Truncation,
            status: Status::Warning,
            count: cut.events_read,
            found: cut.message().to_string(),
            limits: if cut.document_whole {
                String::new()
            } else {
                "the passes the cut falls in are incomplete and left out of per-pass figures".into()
            },
            fix: fix(CheckId::Truncation, t.stats.format).into(),
        },
    }
}

/// `secret_metadata`: where the header holds secret-looking metadata.
pub fn secrets_check(t: &Trace) -> Check {
    let keys = &t.meta.secret_keys;
    let found = if keys.is_empty() {
        "no secret-looking metadata".into()
    } else {
        format!("secret-looking metadata at {}", keys.iter().take(5).cloned().collect::<Vec<_>>().join(", "))
    };
    let status = if keys.is_empty() { Status::Ok } else { Status::Warning };
    checked(CheckId::SecretMetadata, status, keys.len() as u64, found, "", t.stats.format)
}
