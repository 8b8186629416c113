//! `step_gaps`: between consecutive passes of a phase on one device the GPU idles while the host
//! is in nothing the trace recorded (the scheduler, the sampler, the loop, uninstrumented): the
//! step budget's **between_steps** rows. What the host did between steps in a named range is a
//! host activity; issuing the next step's first kernels is launch. Saving: that idle.

use super::{Engine, Finding, Group, Kind};
use crate::analysis::budget::Part;

/// The between-steps finding of `g`, if the gap is worth raising ([`Group::worth`]).
pub fn step_gaps(g: &Group) -> Option<Finding> {
    if g.steps.len() < 2 {
        return None;
    }
    // Every step but the last has a next one to be between.
    let last = g.steps.iter().map(|s| s.start_ns).max().unwrap_or(0);
    let gap_us = super::median_us(g.steps.iter().filter(|s| s.start_ns != last).map(|s| s.part_ns(Part::BetweenSteps)));
    let step_us = g.wall_us();
    if !g.worth(gap_us, step_us) {
        return None;
    }
    let i = g.median_pass(|i| g.steps[i].part_ns(Part::BetweenSteps));
    let row = g.steps[i].rows.iter().filter(|r| r.part == Part::BetweenSteps).max_by_key(|r| r.ns)?;
    let fix = match g.engine {
        Engine::Vllm => "overlap scheduling with the running step: vLLM --async-scheduling",
        Engine::Sglang => "keep SGLang's overlap scheduler on (no --disable-overlap-schedule)",
        Engine::Jax => "keep dispatch asynchronous: no block_until_ready, device_get or printing of a result inside the loop; a loop of steps as lax.scan or lax.fori_loop in one jit",
        Engine::Torch => "prepare the next step while this one runs: no host synchronisation between steps (a .item() or .cpu() on the step's output waits for the GPU; check stopping criteria every few steps); record with_stack=True to name what the host does there",
    };
    Some(Finding {
        evidence: format!(
            "between consecutive steps the GPU idles a median {gap_us:.1} µs while the host is in nothing recorded, of a {step_us:.1} µs step (window to the next step's start)"
        ),
        saving_us: gap_us,
        saving_pct: 100.0 * gap_us / step_us,
        fix: fix.to_string(),
        check: format!("steps following each other within a few µs: about {:.1} µs per step instead of {step_us:.1}", step_us - gap_us),
        from_ns: row.longest.0,
        to_ns: row.longest.1,
        ..g.finding(Kind::StepGaps)
    })
}
