//! `exposed_copy`: copies and fills run with no kernel beside them (the step budget's **copy**
//! rows): the GPU computes nothing while data moves. Saving: that time, an upper bound (what full
//! overlap with compute would give).

use super::{Finding, Group, Kind};
use crate::analysis::budget::Part;

/// The exposed-copy finding of `g`, if worth raising.
pub fn exposed_copies(g: &Group) -> Option<Finding> {
    let (saving_us, wall_us, row) = g.raised_part(Part::Copy)?;
    Some(Finding {
        kind: Kind::ExposedCopy,
        scope: g.scope.clone(),
        phase: g.finding_phase(),
        device: Some(g.device),
        passes: g.steps.len(),
        subject: String::new(),
        evidence: format!(
            "copies and fills run with no kernel beside them for {saving_us:.1} µs of the median step's {wall_us:.1} µs ({} stretches in the median step)",
            row.intervals
        ),
        saving_us,
        saving_pct: 100.0 * saving_us / wall_us,
        confidence: g.confidence(),
        fix: "overlap the copies with compute: pinned host memory (pin_memory=True) and .to(device, non_blocking=True) issued ahead of use, or on a side stream; fewer, larger copies; no fills the next kernel overwrites".into(),
        check: "copies under kernels, the copy row of the step budget near zero".into(),
        from_ns: row.longest.0,
        to_ns: row.longest.1,
    })
}
