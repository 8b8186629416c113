//! `step_gaps`: between consecutive passes of a phase on one device the GPU idles while the host
//! (the scheduler, the sampler, the loop) prepares the next step. Saving: the median gap.

use super::{confidence, median_us, Engine, Finding, Group, Kind};
use crate::analysis::phases::Pass;
use crate::support::median::upper_median;

/// The between-steps finding of `g`, if the gap is worth raising ([`Group::worth`]).
pub fn step_gaps(g: &Group) -> Option<Finding> {
    if g.passes.len() < 2 {
        return None;
    }
    let mut sorted: Vec<&Pass> = g.passes.clone();
    sorted.sort_by_key(|p| p.start_ns);
    let gaps: Vec<i64> = sorted.windows(2).map(|w| (w[1].start_ns - w[0].end_ns).max(0)).collect();
    let gap_ns = upper_median(gaps.clone());
    let gap_us = gap_ns as f64 / 1e3;
    let wall_us = median_us(sorted.iter().map(|p| p.end_ns - p.start_ns));
    let step_us = wall_us + gap_us;
    if !g.worth(gap_us, step_us) {
        return None;
    }
    let k = gaps.iter().enumerate().min_by_key(|(_, &g)| (g - gap_ns).abs()).map_or(0, |(k, _)| k);
    let fix = match g.engine {
        Engine::Vllm => "overlap scheduling with the running step: vLLM --async-scheduling",
        Engine::Sglang => "keep SGLang's overlap scheduler on (no --disable-overlap-schedule)",
        Engine::Jax => "keep dispatch asynchronous: no block_until_ready, device_get or printing of a result inside the loop; a loop of steps as lax.scan or lax.fori_loop in one jit",
        Engine::Torch => "prepare the next step while this one runs: no host synchronisation between steps (a .item() or .cpu() on the step's output waits for the GPU; check stopping criteria every few steps)",
    };
    Some(Finding {
        kind: Kind::StepGaps,
        scope: g.scope.clone(),
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
