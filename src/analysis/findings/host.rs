//! `host_bound`: the GPU waits inside a step while the host issues kernels one at a time (eager
//! launches, or the launches between piecewise graphs). Saving: that wait, less the gap a graph
//! replay leaves between its kernels ([`GRAPH_REPLAY_GAP_NS`]).

use super::{Engine, Finding, Group, Kind, GRAPH_REPLAY_GAP_NS};
use crate::analysis::budget::Part;

/// The host-bound finding of `g`, if the wait is worth raising ([`Group::worth`]).
pub fn host_bound(g: &Group) -> Option<Finding> {
    let kernels: usize = g.steps.iter().map(|w| w.kernels).sum();
    let eager: usize = g.steps.iter().map(|w| w.eager).sum();
    // Per pass: the wait a replay removes, less the gaps a replay leaves between its kernels.
    let saving_us = g.median_of(|w| (w.part_ns(Part::Launch) - w.kernels as i64 * GRAPH_REPLAY_GAP_NS).max(0));
    let wall_us = g.wall_us();
    let busy_us = g.median_of(|w| w.busy_ns());
    let waiting_us = g.median_of(|w| w.part_ns(Part::Launch));
    if !g.worth(saving_us, wall_us) {
        return None;
    }
    let per_step = kernels / g.steps.len().max(1);
    let replayed = eager * 2 < kernels;
    let fix = match (g.engine, replayed) {
        (Engine::Vllm, true) => "capture whole steps, not pieces: vLLM --compilation-config '{\"cudagraph_mode\": \"FULL_AND_PIECEWISE\"}' (full graphs for decode batches), and a cudagraph_capture_sizes list that covers the batch sizes run",
        (Engine::Vllm, false) => "run the steps from CUDA graphs: drop --enforce-eager; vLLM --compilation-config '{\"cudagraph_mode\": \"FULL_AND_PIECEWISE\"}'",
        (Engine::Sglang, true) => "replay whole steps: SGLang --cuda-graph-max-bs at least the batch size run (larger batches fall back to eager), and no --disable-cuda-graph",
        (Engine::Sglang, false) => "run the steps from CUDA graphs: drop --disable-cuda-graph; SGLang --cuda-graph-max-bs at least the batch size run",
        (Engine::Jax, _) => "put more of the step in one XLA program: jit the whole step (a loop of steps as lax.scan or lax.fori_loop), so the host dispatches one executable, not many",
        (Engine::Torch, _) => "replay the step from a CUDA graph: torch.compile(model, mode=\"reduce-overhead\") (Hugging Face: a static cache, generation_config.cache_implementation=\"static\"), or torch.cuda.CUDAGraph around a fixed-shape step",
    };
    let i = g.median_pass(|i| g.steps[i].wall_ns());
    let (from_ns, to_ns) = g.window(i);
    Some(Finding {
        evidence: if g.is_capture() {
            format!(
                "the capture window: {wall_us:.1} µs of wall time for {busy_us:.1} µs of GPU work ({:.0}% busy); the GPU waits {waiting_us:.1} µs while the host issues kernels; {kernels} kernels start in it, {:.0}% launched one by one",
                100.0 * busy_us / wall_us,
                100.0 * eager as f64 / kernels.max(1) as f64
            )
        } else {
            format!(
                "median step {wall_us:.1} µs of wall time for {busy_us:.1} µs of GPU work ({:.0}% busy); the GPU waits {waiting_us:.1} µs while the host issues kernels; {per_step} kernels a step, {:.0}% launched one by one",
                100.0 * busy_us / wall_us,
                100.0 * eager as f64 / kernels.max(1) as f64
            )
        },
        saving_us,
        saving_pct: 100.0 * saving_us / wall_us,
        fix: fix.to_string(),
        check: format!(
            "{} of about {:.1} µs (the GPU work plus {:.2} µs a kernel replayed), the GPU at least 85% busy inside {}",
            if g.is_capture() { "the same work in a window" } else { "steps" },
            busy_us + (per_step as f64 * GRAPH_REPLAY_GAP_NS as f64 / 1e3),
            GRAPH_REPLAY_GAP_NS as f64 / 1e3,
            if g.is_capture() { "it" } else { "them" }
        ),
        from_ns,
        to_ns,
        ..g.finding(Kind::HostBound)
    })
}
