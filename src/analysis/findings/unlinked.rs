//! `unlinked_idle`: the GPU idles before work whose launch the trace does not hold (a GPU-only
//! recording, or launches dropped), so nothing can say what held it: the step budget's
//! **unlinked** rows. Saving: unknown until recorded; the finding says how to record it.

use super::{Finding, Group, Kind};
use crate::analysis::budget::Part;

/// The unlinked-idle finding of `g`, if worth raising.
pub fn unlinked(g: &Group) -> Option<Finding> {
    let ms = g.median_step();
    let (idle_us, wall_us, row) = g.raised_part(Part::Unlinked)?;
    Some(Finding {
        evidence: format!(
            "the GPU idles {idle_us:.1} µs of {ms}'s {wall_us:.1} µs before work whose launch is not in the trace: what held it cannot be told"
        ),
        saving_us: idle_us,
        saving_pct: 100.0 * idle_us / wall_us,
        confidence: "low: the cause is not in the trace".into(),
        fix: "record the host side to name it: torch.profiler(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], with_stack=True); Nsight Systems --trace=cuda,nvtx,osrt".into(),
        check: "the same idle, now split into host, launch, sync and queued rows".into(),
        from_ns: row.longest.0,
        to_ns: row.longest.1,
        ..g.finding(Kind::UnlinkedIdle)
    })
}
