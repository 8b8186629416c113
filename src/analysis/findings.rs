//! Findings: what to fix first and what it would save, each estimated from the trace's own figures
//! (never a fixed percentage), ranked by the saving per step.
//!
//! Kinds so far:
//! - **`host_bound`**: inside the passes of a phase, the GPU waits for the host: a gap in the GPU's
//!   work whose next kernel was launched only after the gap began (the host had not yet asked).
//!   Replaying the step from a graph removes that wait, down to the gap a replay itself leaves
//!   between kernels (measured: [`GRAPH_REPLAY_GAP_NS`]). Gaps whose next kernel was already
//!   queued (dependencies, another stream, a synchronisation) are not counted: a graph would not
//!   remove them.
//! - **`step_gaps`**: between consecutive passes of a phase on one device, the GPU idles while the
//!   scheduler prepares the next step; overlapping that host work with the running step removes it.
//!
//! A finding is raised only from what was recorded: host waits need the runtime launches (the
//! health report's `runtime_calls`), so a GPU-only trace raises none. A finding whose evidence is
//! thin (few passes) says so in its `confidence`.

use crate::analysis::phases::{Pass, Phase};
use crate::analysis::Analysis;
use crate::model::{GpuKind, NONE};

/// One finding: a cause of lost time, its saving per step, the fix and how to check it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Finding {
    /// `host_bound`, `step_gaps`.
    pub kind: &'static str,
    /// Where it applies: the phase and device (`decode on device 0`).
    pub scope: String,
    /// Passes the figures come from.
    pub passes: usize,
    /// The figures the finding rests on, in words.
    pub evidence: String,
    /// Time a step would save (µs, median over the passes).
    pub saving_us: f64,
    /// That saving as a share of the step's wall time (%).
    pub saving_pct: f64,
    /// `high`, `medium` or `low`, with why when not high.
    pub confidence: String,
    /// The fix, in the engine's or PyTorch's own terms.
    pub fix: String,
    /// What a re-profile should show if the fix worked.
    pub check: String,
    /// The evidence's window on the timeline (the median pass): start and end, ns in the trace's clock.
    pub from_ns: i64,
    pub to_ns: i64,
}

/// `findings --json` and the MCP tool's answer: the trace's path and its findings.
pub fn findings_json(path: &str, found: &[Finding]) -> serde_json::Value {
    serde_json::json!({ "trace": path, "findings": found })
}

/// The gap a graph replay leaves between two kernels of one stream: the median of 7,938 gaps
/// inside the CUDA-graph replays of `vllm_tp4_h100_1000isl_10osl_32con` (H100, 0.417 µs; MI300X
/// replays in the fixtures show none at their timestamps' resolution, B300's overlap).
pub const GRAPH_REPLAY_GAP_NS: i64 = 417;

/// A finding saving less than this share of its step is not raised.
const MIN_SAVING_SHARE: f64 = 0.05;
/// Passes below which a finding's confidence is `low`.
const FEW_PASSES: usize = 3;

/// Every finding of `a`, largest saving first.
pub fn findings(a: &Analysis) -> Vec<Finding> {
    let t = &a.trace;
    if t.launches.is_empty() {
        return Vec::new();
    }
    let engine = Engine::of(a);
    let mut out = Vec::new();
    let mut groups: Vec<((Phase, i32), Vec<&Pass>)> = Vec::new();
    // Steps only: a stage around a diffusion model's steps (its encoders, its decoder) is no step.
    for p in a.phases.passes.iter().filter(|p| !p.incomplete && p.phase != Phase::Stage) {
        match groups.iter_mut().find(|(k, _)| *k == (p.phase, p.device)) {
            Some((_, v)) => v.push(p),
            None => groups.push(((p.phase, p.device), vec![p])),
        }
    }
    for ((phase, device), passes) in &groups {
        let scope = format!("{} on device {device}", phase.as_str());
        out.extend(host_bound(a, passes, &scope, engine));
        out.extend(step_gaps(passes, &scope, engine));
    }
    out.sort_by(|x, y| y.saving_us.total_cmp(&x.saving_us));
    out
}

/// Which engine ran the trace, for fixes in its own terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Engine {
    Vllm,
    Sglang,
    /// JAX / XLA (an XSpace profile, or XLA module runs in the trace).
    Jax,
    /// PyTorch alone (Hugging Face `generate`, a training loop).
    Torch,
}

impl Engine {
    fn of(a: &Analysis) -> Engine {
        let t = &a.trace;
        let xla = t.stats.format == crate::model::InputFormat::Xspace
            || (0..t.names.len() as u32).any(|i| t.name(i).starts_with("XlaModule"));
        if xla {
            return Engine::Jax;
        }
        let names =
            crate::analysis::steps::generation::name_evidence(&a.trace, crate::analysis::steps::rules::PhaseRules::builtin());
        let engine = names.batching_engine.unwrap_or_default().to_lowercase();
        if engine.contains("vllm") {
            Engine::Vllm
        } else if engine.contains("sglang") || engine.contains("sgl") {
            Engine::Sglang
        } else {
            Engine::Torch
        }
    }
}

/// Median of `v` (0 when empty).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        0.0
    } else {
        v[v.len() / 2]
    }
}

/// What one pass shows of the host: its wall time (first kernel's start to last kernel's end),
/// the idle it spent waiting for launches, and its kernels. (Its busy time is the pass's own
/// `busy_ns`.)
#[derive(Debug, Clone, Copy, Default)]
pub struct HostWait {
    pub wall_ns: i64,
    /// Idle inside the pass before kernels the host had not launched yet when the idle began.
    pub waiting_ns: i64,
    pub kernels: usize,
    /// Kernels linked to the launch that ran them.
    pub linked: usize,
    /// Kernels the host launched one by one (not replayed from a graph).
    pub eager: usize,
}

/// The host's share of one pass (kernels only; copies and fills come and go between steps).
pub fn host_wait(a: &Analysis, p: &Pass) -> HostWait {
    let g = &a.trace.gpu;
    let l = &a.trace.launches;
    let mut w = HostWait::default();
    let mut end: Option<i64> = None;
    let mut first = i64::MAX;
    for &r in &p.rows {
        let r = r as usize;
        if g.kind[r] != GpuKind::Kernel {
            continue;
        }
        w.kernels += 1;
        let launch = g.launch[r];
        w.linked += usize::from(launch != NONE);
        w.eager += usize::from(launch != NONE && !l.is_graph[launch as usize]);
        let s = g.ts[r];
        first = first.min(s);
        // A gap: the host's if this kernel was launched after the GPU ran dry.
        if let Some(prev) = end.filter(|&prev| s > prev) {
            if launch != NONE && l.ts[launch as usize] >= prev {
                w.waiting_ns += s - prev;
            }
        }
        end = Some(end.map_or(g.end(r), |prev| prev.max(g.end(r))));
    }
    if let Some(e) = end {
        w.wall_ns = e - first;
    }
    w
}

fn confidence(passes: usize, linked: f64) -> String {
    if passes < FEW_PASSES {
        format!("low: {passes} pass(es) only")
    } else if linked < 0.9 {
        format!("medium: {:.0}% of the kernels link to their launch", 100.0 * linked)
    } else {
        "high".into()
    }
}

fn host_bound(a: &Analysis, passes: &[&Pass], scope: &str, engine: Engine) -> Option<Finding> {
    let waits: Vec<HostWait> = passes.iter().map(|p| host_wait(a, p)).collect();
    let kernels: usize = waits.iter().map(|w| w.kernels).sum();
    let eager: usize = waits.iter().map(|w| w.eager).sum();
    let linked = waits.iter().map(|w| w.linked).sum::<usize>() as f64 / kernels.max(1) as f64;
    // Per pass: the wait a replay removes, less the gaps a replay leaves between its kernels.
    let savings: Vec<f64> =
        waits.iter().map(|w| (w.waiting_ns - w.kernels as i64 * GRAPH_REPLAY_GAP_NS).max(0) as f64 / 1e3).collect();
    let saving_us = median(savings);
    let wall_us = median(waits.iter().map(|w| w.wall_ns as f64 / 1e3).collect());
    let busy_us = median(passes.iter().map(|p| p.busy_ns as f64 / 1e3).collect());
    let waiting_us = median(waits.iter().map(|w| w.waiting_ns as f64 / 1e3).collect());
    if wall_us <= 0.0 || saving_us < MIN_SAVING_SHARE * wall_us {
        return None;
    }
    let per_step = kernels / waits.len().max(1);
    let replayed = eager * 2 < kernels;
    let fix = match (engine, replayed) {
        (Engine::Vllm, true) => "capture whole steps, not pieces: vLLM --compilation-config '{\"cudagraph_mode\": \"FULL_AND_PIECEWISE\"}' (full graphs for decode batches), and a cudagraph_capture_sizes list that covers the batch sizes run",
        (Engine::Vllm, false) => "run the steps from CUDA graphs: drop --enforce-eager; vLLM --compilation-config '{\"cudagraph_mode\": \"FULL_AND_PIECEWISE\"}'",
        (Engine::Sglang, true) => "replay whole steps: SGLang --cuda-graph-max-bs at least the batch size run (larger batches fall back to eager), and no --disable-cuda-graph",
        (Engine::Sglang, false) => "run the steps from CUDA graphs: drop --disable-cuda-graph; SGLang --cuda-graph-max-bs at least the batch size run",
        (Engine::Jax, _) => "put more of the step in one XLA program: jit the whole step (a loop of steps as lax.scan or lax.fori_loop), so the host dispatches one executable, not many",
        (Engine::Torch, _) => "replay the step from a CUDA graph: torch.compile(model, mode=\"reduce-overhead\") (Hugging Face: a static cache, generation_config.cache_implementation=\"static\"), or torch.cuda.CUDAGraph around a fixed-shape step",
    };
    let (i, w) = median_pass(&waits);
    Some(Finding {
        kind: "host_bound",
        scope: scope.to_string(),
        passes: waits.len(),
        evidence: format!(
            "median step {wall_us:.1} µs of wall time for {busy_us:.1} µs of GPU work ({:.0}% busy); the GPU waits {waiting_us:.1} µs for kernels the host had not launched yet; {per_step} kernels a step, {:.0}% launched one by one",
            100.0 * busy_us / wall_us,
            100.0 * eager as f64 / kernels.max(1) as f64
        ),
        saving_us,
        saving_pct: 100.0 * saving_us / wall_us,
        confidence: confidence(waits.len(), linked),
        fix: fix.to_string(),
        check: format!(
            "steps of about {:.1} µs (the GPU work plus {:.2} µs a kernel replayed), the GPU at least 85% busy inside them",
            busy_us + (per_step as f64 * GRAPH_REPLAY_GAP_NS as f64 / 1e3),
            GRAPH_REPLAY_GAP_NS as f64 / 1e3
        ),
        from_ns: passes[i].start_ns,
        to_ns: passes[i].start_ns + w.wall_ns,
    })
}

/// The pass of median wall time, and its figures.
fn median_pass(waits: &[HostWait]) -> (usize, HostWait) {
    let mut order: Vec<usize> = (0..waits.len()).collect();
    order.sort_by_key(|&i| waits[i].wall_ns);
    let i = order[order.len() / 2];
    (i, waits[i])
}

fn step_gaps(passes: &[&Pass], scope: &str, engine: Engine) -> Option<Finding> {
    if passes.len() < 2 {
        return None;
    }
    let mut sorted: Vec<&Pass> = passes.to_vec();
    sorted.sort_by_key(|p| p.start_ns);
    let gaps: Vec<f64> = sorted.windows(2).map(|w| (w[1].start_ns - w[0].end_ns).max(0) as f64 / 1e3).collect();
    let gap_us = median(gaps.clone());
    let wall_us = median(sorted.iter().map(|p| (p.end_ns - p.start_ns) as f64 / 1e3).collect());
    let step_us = wall_us + gap_us;
    if step_us <= 0.0 || gap_us < MIN_SAVING_SHARE * step_us {
        return None;
    }
    let k = gaps.iter().enumerate().min_by(|a, b| (a.1 - gap_us).abs().total_cmp(&(b.1 - gap_us).abs())).map_or(0, |(k, _)| k);
    let fix = match engine {
        Engine::Vllm => "overlap scheduling with the running step: vLLM --async-scheduling",
        Engine::Sglang => "keep SGLang's overlap scheduler on (no --disable-overlap-schedule)",
        Engine::Jax => "keep dispatch asynchronous: no block_until_ready, device_get or printing of a result inside the loop; a loop of steps as lax.scan or lax.fori_loop in one jit",
        Engine::Torch => "prepare the next step while this one runs: no host synchronisation between steps (a .item() or .cpu() on the step's output waits for the GPU; check stopping criteria every few steps)",
    };
    Some(Finding {
        kind: "step_gaps",
        scope: scope.to_string(),
        passes: sorted.len(),
        evidence: format!(
            "the GPU idles a median {gap_us:.1} µs between consecutive steps ({} gaps) beside {wall_us:.1} µs of step",
            gaps.len()
        ),
        saving_us: gap_us,
        saving_pct: 100.0 * gap_us / step_us,
        confidence: confidence(sorted.len(), 1.0),
        fix: fix.to_string(),
        check: format!("steps following each other within a few µs: about {wall_us:.1} µs per step instead of {step_us:.1}"),
        from_ns: sorted[k].end_ns,
        to_ns: sorted[k + 1].start_ns,
    })
}
