//! The trace's health: what the profiler recorded, what that leaves weaker or empty, and the exact
//! switch that records the rest — one [`Check`] per fact (`traceprism doctor`, `summary --json`'s
//! `health`, the `health` table, the report and the page's Health panel).
//!
//! Two kinds of checks. *Recorded* checks (`present`, `partial`, `missing`) say what the trace
//! holds; a fix is given only for what is missing, never for what is there. *Problem* checks
//! (`ok`, `warning`) say what went wrong while the trace was written or read: cut short, broken
//! JSON repaired, kernels dropped, events of a device kind we do not read. Every warning of the
//! second kind is also counted in the summary's `warnings` ([`report`]) with examples, so no
//! analysis is ever empty or partial without saying so.

use crate::analysis::steps::annotations::find_steps;
use crate::analysis::steps::rules::PhaseRules;
use crate::analysis::Analysis;
use crate::model::{GpuKind, OpKind, Trace, Warnings, COUNTER_EVENTS, HEADER_UNREAD, NONE, REPAIRED_JSON, UNREAD_CATEGORY};
use serde::Serialize;

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
    /// What is checked (`cpu_ops`, `shapes`, `truncation`...).
    pub check: &'static str,
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

/// A trace's health report: every check, in a fixed order.
pub fn health(a: &Analysis) -> Vec<Check> {
    report(a).0
}

/// The health report and the warnings it finds (the kinds in [`kinds`]), counted once.
pub fn report(a: &Analysis) -> (Vec<Check>, Warnings) {
    let c = Counted::of(&a.trace);
    let found = findings_of(&a.trace, &c);
    (checks(a, &c, &found), found)
}

fn checks(a: &Analysis, c: &Counted, found: &Warnings) -> Vec<Check> {
    let t = &a.trace;
    let mut out = Vec::new();
    out.push(recorded(
        "cpu_ops",
        c.cpu_ops,
        format!("{} CPU ops", c.cpu_ops),
        "ops tables and the op of each kernel are empty; passes and phases come from the GPU side alone",
        "record the CPU: ProfilerActivity.CPU in activities (torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]))",
    ));
    out.push(recorded(
        "runtime_calls",
        c.launches,
        format!("{} runtime calls ({} kernel launches, {} graph launches)", c.launches, c.kernel_launches, c.graph_launches),
        "kernels cannot be linked to the CPU op that launched them; launch overhead and CPU-bound gaps are not measured",
        "record both sides: activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]",
    ));
    out.push(kernels_check(c));
    out.push(Check {
        check: "memcpy_memset",
        status: if c.memcpy + c.memset > 0 { Status::Present } else { Status::Ok },
        count: c.memcpy + c.memset,
        found: if c.memcpy + c.memset > 0 {
            format!("{} memcpy, {} memset", c.memcpy, c.memset)
        } else {
            "no memcpy or memset: nothing was copied while the profiler ran (or the GPU was not recorded)".into()
        },
        limits: String::new(),
        fix: String::new(),
    });
    out.push(shapes_check(c));
    out.push(recorded(
        "stacks",
        c.python,
        format!("{} Python frames", c.python),
        "no Python frame per kernel (hover, the ops' call sites, a late rank's host_op between ops)",
        "with_stack=True in torch.profiler.profile(...); vLLM: --profiler-config '{\"profiler\": \"torch\", \"torch_profiler_with_stack\": true}' (on by default); SGLang: POST /start_profile with {\"with_stack\": true}",
    ));
    out.push(recorded(
        "modules",
        c.modules,
        format!("{} nn.Module ranges", c.modules),
        "layers are found from kernel patterns and op names, not from the model's own module names",
        "with_modules=True in torch.profiler.profile(...) (needs with_stack=True)",
    ));
    out.push(steps_check(t, c));
    out.push(graphs_check(a, c));
    out.push(distributed_check(a));
    out.push(Check {
        check: "device_properties",
        status: if t.meta.devices.is_empty() { Status::Missing } else { Status::Present },
        count: t.meta.devices.len() as u64,
        found: match t.meta.devices.first() {
            Some(d) => format!("{} device(s): {}", t.meta.devices.len(), d.name),
            None => "no deviceProperties".into(),
        },
        limits: if t.meta.devices.is_empty() { "the roofline has no peaks unless --device names the GPU; the device is named by its vendor only".into() } else { String::new() },
        fix: if t.meta.devices.is_empty() { "pass --device H100-SXM (or MI300X, ... or custom peaks) to traceprism; a GPU activity in the profiler writes deviceProperties".into() } else { String::new() },
    });
    out.push(time_unit_check(t));
    out.push(truncation_check(t));
    out.push(secrets_check(t));
    out.push(coverage_check(a));
    out.extend(problem_checks(a, c, found));
    if c.cpu_ops == 0 {
        // Shapes, stacks and modules hang off CPU ops: the fix starts with recording the CPU.
        for k in out.iter_mut().filter(|k| matches!(k.check, "shapes" | "stacks" | "modules") && k.status == Status::Missing) {
            let arg = match k.check {
                "shapes" => "record_shapes=True",
                "stacks" => "with_stack=True",
                _ => "with_modules=True",
            };
            k.fix = format!("record the CPU first (see cpu_ops), with {arg}: torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], {arg})");
        }
    }
    if t.stats.format == crate::model::InputFormat::NsysSqlite {
        super::health_nsys::adapt(&mut out, t);
    }
    out
}

/// `distributedInfo`: asked for only when the trace ran collectives (a single process needs none).
fn distributed_check(a: &Analysis) -> Check {
    let t = &a.trace;
    let comm_family: Vec<bool> = a.categories.categories.iter().map(|c| c.family == "Communication").collect();
    let collectives =
        a.categories.of_row.iter().filter(|&&c| comm_family.get(c as usize).copied().unwrap_or(false)).count() as u64;
    let (status, found) = match (t.meta.rank, t.meta.world_size) {
        (Some(r), Some(w)) => (Status::Present, format!("rank {r} of {w}")),
        (Some(r), None) => (Status::Present, format!("rank {r}")),
        _ if collectives > 0 => (Status::Missing, format!("no distributedInfo, though {collectives} communication kernels ran")),
        _ => (Status::Ok, "no distributedInfo and no communication kernels: one process".into()),
    };
    let missing = status == Status::Missing;
    Check {
        check: "distributed_info",
        status,
        count: t.meta.world_size.unwrap_or(0).max(0) as u64,
        found,
        limits: if missing {
            "`ranks` tells this trace's rank from its file name or the order given".into()
        } else {
            String::new()
        },
        fix: if missing {
            "initialise torch.distributed before the profiler starts (Kineto writes distributedInfo then); or name the files rank0, rank1, ...".into()
        } else {
            String::new()
        },
    }
}

/// A recorded fact: present when `count > 0`, else missing with its limits and fix.
fn recorded(check: &'static str, count: u64, found: String, limits: &str, fix: &str) -> Check {
    let there = count > 0;
    Check {
        check,
        status: if there { Status::Present } else { Status::Missing },
        count,
        found,
        limits: if there { String::new() } else { limits.to_string() },
        fix: if there { String::new() } else { fix.to_string() },
    }
}

/// What the checks count, in one pass over each table.
#[derive(Default)]
struct Counted {
    cpu_ops: u64,
    python: u64,
    modules: u64,
    profiler_steps: u64,
    launches: u64,
    kernel_launches: u64,
    graph_launches: u64,
    kernels: u64,
    memcpy: u64,
    memset: u64,
    ops_with_shapes: u64,
    /// Complete events of categories no analysis reads.
    unread_device: u64,
    /// Kernel launches whose kernel is not in the trace, with their start times (ns).
    launches_without_kernel: Vec<(usize, i64)>,
    /// Kernels (previous, next) of one stream where the next starts over 1 µs before the
    /// previous ends.
    overlaps: Vec<(usize, usize)>,
    /// GPU rows with no launch (a graph replay's rows have the graph launch).
    gpu_without_cpu: Vec<usize>,
}

impl Counted {
    fn of(t: &Trace) -> Counted {
        let mut c = Counted { unread_device: unread_device_events(t), ..Default::default() };
        for i in 0..t.ops.len() {
            match t.ops.kind[i] {
                OpKind::CpuOp => {
                    c.cpu_ops += 1;
                    if t.ops.input_dims[i] != crate::model::NO_NAME {
                        c.ops_with_shapes += 1;
                    }
                }
                OpKind::UserAnnotation => {
                    if t.name(t.ops.name[i]).starts_with("ProfilerStep#") {
                        c.profiler_steps += 1;
                    }
                }
                OpKind::PythonFunction => {
                    c.python += 1;
                    if t.name(t.ops.name[i]).starts_with("nn.Module: ") {
                        c.modules += 1;
                    }
                }
            }
        }
        for k in &t.gpu.kind {
            match k {
                GpuKind::Kernel => c.kernels += 1,
                GpuKind::Memcpy => c.memcpy += 1,
                GpuKind::Memset => c.memset += 1,
            }
        }
        let l = &t.launches;
        c.launches = l.len() as u64;
        c.graph_launches = l.is_graph.iter().filter(|&&g| g).count() as u64;
        let gpu_rows = crate::analysis::launches::rows_per_launch(t, 0..t.gpu.len());
        for (i, launches_kernels) in crate::analysis::launches::kernel_launches(t).into_iter().enumerate() {
            if launches_kernels {
                c.kernel_launches += 1;
                if gpu_rows[i] == 0 {
                    c.launches_without_kernel.push((i, l.ts[i]));
                }
            }
        }
        c.overlaps = stream_overlaps(t);
        // A kernel replayed from a graph has the graph launch as its launch.
        c.gpu_without_cpu = (0..t.gpu.len()).filter(|&i| t.gpu.launch[i] == NONE).collect();
        c
    }
}

/// Pairs of kernels of one stream (previous, next) where the next starts over 1 µs before the
/// previous ends (writers round to µs; one stream's clock jitters by less).
fn stream_overlaps(t: &Trace) -> Vec<(usize, usize)> {
    let g = &t.gpu;
    // Each stream's kernels in time order (writers keep a stream's order: usually no sort at all).
    let mut streams: crate::model::FastMap<(i32, i32), Vec<u32>> = Default::default();
    for i in t.kernel_rows() {
        streams.entry((g.device[i], g.stream[i])).or_default().push(i as u32);
    }
    let mut streams: Vec<((i32, i32), Vec<u32>)> = streams.into_iter().collect();
    streams.sort_by_key(|(k, _)| *k);
    let mut out = Vec::new();
    for (_, rows) in &mut streams {
        crate::analysis::rows::sort_by_time(&g.ts, rows);
        out.extend(rows.windows(2).map(|w| (w[0] as usize, w[1] as usize)).filter(|&(p, i)| g.ts[i] + 1_000 < g.end(p)));
    }
    out
}

/// True when `device` is an NVIDIA GPU of compute capability 9.0 or later (Hopper, Blackwell),
/// where programmatic dependent launch starts a kernel before the previous one on its stream
/// has ended, by design (deviceProperties tells; the first device stands for an unnumbered one).
fn pdl_device(t: &Trace, device: i32) -> bool {
    let devices = &t.meta.devices;
    let d = devices.iter().find(|d| d.id == device as i64).or(devices.first());
    t.meta.vendor == crate::model::Vendor::Nvidia && d.is_some_and(|d| d.compute_major >= 9)
}

fn kernels_check(c: &Counted) -> Check {
    let mut k = recorded(
        "kernels",
        c.kernels,
        format!("{} kernels", c.kernels),
        "no GPU time at all: categories, phases, layers and the timeline are empty",
        "record the GPU: ProfilerActivity.CUDA in activities (ROCm too); on another accelerator, its activity (ProfilerActivity.XPU, ProfilerActivity.MTIA, ...)",
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

/// Complete events of categories no analysis reads (a device kind we do not model).
fn unread_device_events(t: &Trace) -> u64 {
    t.warnings.counts.iter().filter(|(k, _)| k.starts_with(UNREAD_CATEGORY)).map(|(_, n)| n).sum()
}

fn shapes_check(c: &Counted) -> Check {
    let status = match (c.ops_with_shapes, c.cpu_ops) {
        (_, 0) => Status::Missing,
        (0, _) => Status::Missing,
        (s, n) if s * 10 >= n * 9 => Status::Present,
        _ => Status::Partial,
    };
    let there = status == Status::Present;
    Check {
        check: "shapes",
        status,
        count: c.ops_with_shapes,
        found: format!("{} of {} CPU ops carry Input Dims", c.ops_with_shapes, c.cpu_ops),
        limits: if there {
            String::new()
        } else {
            "no GEMM sizes: no FLOPs or roofline, no token counts for phases (they come from kernel names and timing) and no split of mixed steps".into()
        },
        fix: if there || c.cpu_ops == 0 {
            String::new()
        } else {
            "record_shapes=True in torch.profiler.profile(...); vLLM: --profiler-config '{\"profiler\": \"torch\", \"torch_profiler_record_shapes\": true}' (VLLM_TORCH_PROFILER_RECORD_SHAPES=1 before 0.13); SGLang: POST /start_profile with {\"record_shapes\": true}".into()
        },
    }
}

fn steps_check(t: &Trace, c: &Counted) -> Check {
    let engine = find_steps(t, PhaseRules::builtin()).len() as u64;
    let n = c.profiler_steps + engine;
    let found =
        format!("{} ProfilerStep# ranges, {} engine step markers (vLLM execute_*, SGLang step[...])", c.profiler_steps, engine);
    let mut k = recorded(
        "step_annotations",
        n,
        found,
        "passes are cut from the ops and kernels alone, and each step's phase from its kernels and shapes",
        "call prof.step() once per iteration (with a torch.profiler.schedule); vLLM and SGLang write their own step markers",
    );
    if n == 0 && c.cpu_ops == 0 {
        k.fix = String::new();
    }
    k
}

fn graphs_check(a: &Analysis, c: &Counted) -> Check {
    let r = &a.trace.graphs.report;
    if c.graph_launches == 0 {
        return Check {
            check: "graph_launches",
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
        check: "graph_launches",
        status: if whole { Status::Present } else if r.attributed_ns > 0 { Status::Partial } else { Status::Missing },
        count: c.graph_launches,
        found: format!(
            "{} graph launches replayed {} kernels; {pct:.1}% of replayed time has the op that dispatched it ({} capture traces given)",
            c.graph_launches,
            r.replayed_rows,
            r.captures.len()
        ),
        limits: if whole { String::new() } else { "kernels replayed from graphs have no op, shapes or module: op tables and op-based layers miss them".into() },
        fix: if whole {
            String::new()
        } else {
            "give the capture trace: --capture FILE, a profile recorded while the engine captured its graphs (vLLM with TraceLens' patch: --profiler-config.capture_torch_profiler_dir DIR; SGLang with TraceLens' patch: --enable-profile-cuda-graph; or TraceLens' execution_details.json folder); in the page, Add capture traces…".into()
        },
    }
}

/// Share of kernel time that may go unnamed by the category rules before the check warns.
const UNNAMED_WARNING: f64 = 0.01;

/// What the name rules know of the trace, and what passes and layers stand on.
fn coverage_check(a: &Analysis) -> Check {
    let c = super::coverage::Coverage::of(a);
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
        check: "rule_coverage",
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

fn time_unit_check(t: &Trace) -> Check {
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
    Check {
        check: "time_unit",
        status: if at_odds { Status::Warning } else { Status::Ok },
        count: 0,
        found: match (unit, median_us) {
            (Some(u), Some(m)) => {
                format!("timestamps read as µs (displayTimeUnit \"{u}\" is for display only); median kernel {m:.1} µs")
            }
            (Some(u), None) => format!("timestamps read as µs (displayTimeUnit \"{u}\" is for display only)"),
            (None, Some(m)) => format!("timestamps read as µs; median kernel {m:.1} µs"),
            (None, None) => "timestamps read as µs".into(),
        },
        limits: if at_odds {
            "displayTimeUnit is \"ns\" and the median kernel lasts over 1 ms as µs: the timestamps are likely ns, so every time is 1000× too long".into()
        } else {
            String::new()
        },
        fix: if at_odds {
            "write ts and dur in µs, as the Trace Event Format requires (displayTimeUnit changes only how a viewer shows them)"
                .into()
        } else {
            String::new()
        },
    }
}

fn truncation_check(t: &Trace) -> Check {
    match &t.stats.truncation {
        None => Check {
            check: "truncation",
            status: Status::Ok,
            count: t.stats.events,
            found: format!("the document is whole: {} events", t.stats.events),
            limits: String::new(),
            fix: String::new(),
        },
        Some(cut) => Check {
            check: "truncation",
            status: Status::Warning,
            count: cut.events_read,
            found: cut.message().to_string(),
            limits: if cut.document_whole {
                String::new()
            } else {
                "the passes the cut falls in are incomplete and left out of per-pass figures".into()
            },
            fix: "copy or download the trace again whole (its writer may have crashed: re-record)".into(),
        },
    }
}

fn secrets_check(t: &Trace) -> Check {
    let keys = &t.meta.secret_keys;
    Check {
        check: "secret_metadata",
        status: if keys.is_empty() { Status::Ok } else { Status::Warning },
        count: keys.len() as u64,
        found: if keys.is_empty() {
            "no secret-looking metadata".into()
        } else {
            format!("secret-looking metadata at {}", keys.iter().take(5).cloned().collect::<Vec<_>>().join(", "))
        },
        limits: String::new(),
        fix: if keys.is_empty() {
            String::new()
        } else {
            "redact those keys before sharing the trace itself (traceprism's outputs never copy them)".into()
        },
    }
}

/// Warning kinds that health adds to the summary's `warnings` (see [`report`]).
pub mod kinds {
    /// Kernel launches recorded with no GPU event anywhere in the trace.
    pub const CPU_ONLY: &str =
        "kernel launches with no GPU event in the whole trace: the profiler recorded the CPU only (add ProfilerActivity.CUDA)";
    /// Kernel launches whose kernel is missing, in a trace that has kernels.
    pub const LAUNCH_WITHOUT_KERNEL: &str =
        "kernel launches whose kernel is not in the trace (dropped by the profiler, often at the session's start)";
    /// GPU events with no launch (and no graph replay) on the CPU side.
    pub const GPU_WITHOUT_CPU: &str = "GPU events with no CPU side (no runtime launch recorded for them)";
    /// Kernels that start before the previous kernel on their stream ended.
    pub const STREAM_OVERLAP: &str = "kernels that overlap the previous kernel on their own stream (without programmatic dependent launch a stream runs one kernel at a time: a clock or writer error)";
    /// Kernels of zero duration.
    pub const ZERO_DURATION: &str = "kernels of zero duration";
}

/// The warnings health finds in the linked model, with their counts and first examples (event
/// indices): kernel launches without a kernel (all of them when the CPU was recorded alone), GPU
/// events without a launch, kernels overlapping on their stream, kernels of zero duration. The
/// summary adds them to the reader's own warnings.
fn findings_of(t: &Trace, c: &Counted) -> Warnings {
    let mut w = Warnings::default();
    let l = &t.launches;
    let g = &t.gpu;
    let at = |ts: i64| format!("{:.3} ms after the trace's start", (ts - t.time_origin_ns) as f64 / 1e6);
    if c.kernels == 0 && c.unread_device > 0 {
        // The device ran, under categories we do not read: `unread_events` says so.
    } else if c.kernels == 0 {
        for &(i, ts) in &c.launches_without_kernel {
            w.add(kinds::CPU_ONLY, l.event_index[i] as u64, &format!("{} at {}", t.name(l.name[i]), at(ts)));
        }
    } else {
        for &(i, ts) in &c.launches_without_kernel {
            w.add(kinds::LAUNCH_WITHOUT_KERNEL, l.event_index[i] as u64, &format!("{} at {}", t.name(l.name[i]), at(ts)));
        }
    }
    // Without any runtime call, every GPU event lacks its CPU side: one warning says it all.
    for &i in &c.gpu_without_cpu {
        w.add(kinds::GPU_WITHOUT_CPU, g.event_index[i] as u64, &format!("{} at {}", t.name(g.name[i]), at(g.ts[i])));
    }
    for &(p, i) in c.overlaps.iter().filter(|&&(_, i)| !pdl_device(t, g.device[i])) {
        w.add(
            kinds::STREAM_OVERLAP,
            g.event_index[i] as u64,
            &format!(
                "{} starts {:.3} µs before {} ends (device {}, stream {})",
                t.name(g.name[i]),
                (g.end(p) - g.ts[i]) as f64 / 1e3,
                t.name(g.name[p]),
                g.device[i],
                g.stream[i]
            ),
        );
    }
    for i in t.kernel_rows().filter(|&i| g.dur[i] == 0) {
        w.add(kinds::ZERO_DURATION, g.event_index[i] as u64, t.name(g.name[i]));
    }
    w
}

/// The problem checks built from the reader's warnings and those health finds.
fn problem_checks(a: &Analysis, c: &Counted, found: &Warnings) -> Vec<Check> {
    let t = &a.trace;
    let count = |w: &Warnings, kind: &str| w.counts.get(kind).copied().unwrap_or(0);
    let first = |w: &Warnings, kind: &str| {
        w.examples_of(kind).next().map(|e| format!("; first: event {}, {}", e.event, e.detail)).unwrap_or_default()
    };
    let problem = |check: &'static str, n: u64, found: String, limits: &str, fix: &str| Check {
        check,
        status: if n > 0 { Status::Warning } else { Status::Ok },
        count: n,
        found,
        limits: if n > 0 { limits.to_string() } else { String::new() },
        fix: if n > 0 { fix.to_string() } else { String::new() },
    };
    let repaired = count(&t.warnings, REPAIRED_JSON);
    let mut out = vec![problem(
        "repaired_json",
        repaired,
        if repaired > 0 {
            format!("{repaired} events with broken JSON strings repaired{}", first(&t.warnings, REPAIRED_JSON))
        } else {
            "the JSON is well formed".into()
        },
        "none: the repaired events read as if escaped correctly (json.load, Perfetto and TraceLens refuse this file)",
        "upgrade PyTorch (kineto#1459, kineto#1508 fixed the escaping of frame names)",
    )];
    let header = count(&t.warnings, HEADER_UNREAD);
    out.push(problem(
        "header_values",
        header,
        if header > 0 {
            let which = t.warnings.examples_of(HEADER_UNREAD).map(|e| e.detail.as_str()).collect::<Vec<_>>().join("; ");
            format!("{header} top-level values not read: {which}")
        } else {
            "every top-level value read".into()
        },
        "the facts they hold are missing (deviceProperties: the device and roofline peaks; distributedInfo: the rank)",
        "none in the profiler: the file was written or edited with broken JSON there (--device names the GPU)",
    ));
    // Events of kinds no analysis reads.
    let unread: Vec<(String, u64)> = t
        .warnings
        .counts
        .iter()
        .filter(|(k, _)| k.starts_with(UNREAD_CATEGORY) || k.as_str() == COUNTER_EVENTS)
        .map(|(k, &n)| (k.clone(), n))
        .collect();
    let n: u64 = unread.iter().map(|(_, n)| n).sum();
    let described: Vec<String> = unread
        .iter()
        .map(|(k, n)| {
            let what = k.split(" not read").next().unwrap_or(k);
            let device = t.warnings.examples_of(k).next().and_then(|e| process_of(&e.detail));
            match device {
                Some(d) => format!("{n} {what} (process \"{d}\")"),
                None => format!("{n} {what}"),
            }
        })
        .collect();
    out.push(problem(
        "unread_events",
        n,
        if n > 0 {
            format!("{} not read: this device or event kind is not modelled", described.join("; "))
        } else {
            "every device event is of a kind traceprism reads".into()
        },
        "their time is in no table: an accelerator whose kernels sit under these categories shows no GPU work",
        "none in the profiler: traceprism reads CUDA and ROCm kernels, memcpy and memset; tell us the device kind",
    ));
    let lost = count(found, kinds::LAUNCH_WITHOUT_KERNEL);
    out.push(problem(
        "dropped_kernels",
        lost,
        if lost > 0 {
            let window = window_of(t, &c.launches_without_kernel);
            format!(
                "{lost} kernel launches have no kernel in the trace ({window}){}",
                first(found, kinds::LAUNCH_WITHOUT_KERNEL)
            )
        } else {
            "every kernel launch has its kernel".into()
        },
        "the kernels those launches ran are missing from every table; a pass they fall in is short",
        "start keeping steps after a warm-up: torch.profiler.schedule(wait=1, warmup=1, active=N) with prof.step() each iteration, so the session's first kernels (which the profiler may drop: pytorch#192021) fall outside the steps kept",
    ));
    let orphan = count(found, kinds::GPU_WITHOUT_CPU);
    let orphan_status = if orphan > 0 && c.launches == 0 {
        Status::Warning
    } else if orphan > 0 {
        Status::Partial
    } else {
        Status::Ok
    };
    out.push(Check {
        check: "gpu_without_cpu",
        status: orphan_status,
        count: orphan,
        found: if orphan > 0 {
            format!(
                "{orphan} of {} GPU events have no launch on the CPU side{}",
                t.gpu.len(),
                first(found, kinds::GPU_WITHOUT_CPU)
            )
        } else {
            "every GPU event has its launch".into()
        },
        limits: if orphan > 0 {
            "those kernels have no CPU op, shapes or stack: op tables count them as (unlinked)".into()
        } else {
            String::new()
        },
        fix: if orphan > 0 && c.launches == 0 {
            "record both sides: activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]".into()
        } else {
            String::new()
        },
    });
    let overlaps = count(found, kinds::STREAM_OVERLAP);
    let pdl: Vec<&(usize, usize)> = c.overlaps.iter().filter(|&&(_, i)| pdl_device(t, t.gpu.device[i])).collect();
    let mut overlap = problem(
        "stream_overlap",
        overlaps,
        if overlaps > 0 {
            format!("{overlaps} kernels overlap the previous kernel on their own stream{}", first(found, kinds::STREAM_OVERLAP))
        } else {
            "no kernels overlap on one stream".into()
        },
        "busy time on those streams is counted once (union), but per-kernel times there may be wrong",
        "none: a writer or clock error in the recording",
    );
    if overlaps == 0 && !pdl.is_empty() {
        let g = &t.gpu;
        let most = pdl.iter().map(|&&(p, i)| g.end(p) - g.ts[i]).max().unwrap_or(0);
        overlap.count = pdl.len() as u64;
        overlap.found = format!(
            "{} kernels start before the previous kernel on their stream ends (by up to {:.3} µs): programmatic dependent launch on sm90+ GPUs overlaps them by design; busy time counts the union",
            pdl.len(),
            most as f64 / 1e3
        );
    }
    out.push(overlap);
    let zero = count(found, kinds::ZERO_DURATION);
    out.push(problem(
        "zero_durations",
        zero,
        if zero > 0 {
            format!("{zero} kernels last 0 µs{}", first(found, kinds::ZERO_DURATION))
        } else {
            "no kernel of zero duration".into()
        },
        "those kernels add nothing to any time; their count still counts",
        "none: the profiler lost their end time",
    ));
    let skipped = t.stats.skipped;
    out.push(problem(
        "skipped_events",
        skipped,
        format!("{skipped} events skipped as malformed"),
        "the skipped events are missing from every table (the warnings say which and why)",
        "none: the warnings name each kind",
    ));
    out
}

/// The process a warning example names (`name (pid N, process "X")`), when the trace names it.
fn process_of(detail: &str) -> Option<String> {
    let at = detail.rfind("process \"")?;
    Some(detail[at + 9..].trim_end_matches(')').trim_end_matches('"').to_string())
}

/// Where the lost launches fall: within the first 5% of the trace's span, or spread.
fn window_of(t: &Trace, lost: &[(usize, i64)]) -> String {
    let (Some(lo), Some(hi)) = (lost.iter().map(|l| l.1).min(), lost.iter().map(|l| l.1).max()) else { return String::new() };
    let end = t.gpu.ts.iter().zip(&t.gpu.dur).map(|(s, d)| s + d).chain(t.launches.ts.iter().copied()).max().unwrap_or(hi);
    let span = (end - t.time_origin_ns).max(1);
    let ms = |v: i64| (v - t.time_origin_ns) as f64 / 1e6;
    let at_start = (hi - t.time_origin_ns) * 20 <= span;
    format!(
        "launched {:.3}–{:.3} ms after the trace's start{}",
        ms(lo),
        ms(hi),
        if at_start { ", all at the session's start" } else { "" }
    )
}
