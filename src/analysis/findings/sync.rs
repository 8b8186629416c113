//! `sync`: inside a step the host blocks in a synchronising call (`cudaStreamSynchronize`, a
//! blocking copy to the host, the copy behind `.item()` or `.cpu()`), the GPU runs dry, then waits
//! again while the host refills it. Saving: that refill idle (the step budget's **sync** rows:
//! the host issuing, or in nothing recorded, after the call returned); what the host did in a
//! named range after the call is a host activity of its own, and the evidence names it. A graph
//! cannot remove it (a sync cannot be captured).

use super::{code_site, Engine, Finding, Group, Kind};
use crate::analysis::budget::Part;
use crate::analysis::Analysis;
use crate::model::NONE;
use crate::support::median::upper_median;

/// The sync finding of `g`, if the refill idle is worth raising ([`Group::worth`]).
pub fn syncs(a: &Analysis, g: &Group) -> Option<Finding> {
    let (per, ms) = (g.per(), g.median_step());
    let saving_us = g.median_of(|w| w.part_ns(Part::Sync));
    let wall_us = g.wall_us();
    if !g.worth(saving_us, wall_us) {
        return None;
    }
    let t = &a.trace;
    let l = &t.launches;
    let per_step = upper_median(g.steps.iter().map(|w| w.syncs.len() as i64).collect());
    // The call, op and Python frame that blocked most often.
    let mut sites: Vec<((u32, u32, u32), usize)> = Vec::new();
    for &c in g.steps.iter().flat_map(|w| &w.syncs) {
        let c = c as usize;
        let op = if l.cpu_op[c] == NONE { u32::MAX } else { t.ops.name[l.cpu_op[c] as usize] };
        let frame = code_site(t, c).and_then(|s| t.names.get(s)).unwrap_or(u32::MAX);
        let key = (l.name[c], op, frame);
        match sites.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => *n += 1,
            None => sites.push((key, 1)),
        }
    }
    sites.sort_by_key(|s| std::cmp::Reverse(s.1));
    let ((call, op, frame), n) = *sites.first()?;
    let name = |id: u32| if id == u32::MAX { None } else { Some(t.name(id)) };
    let mut site = t.name(call).to_string();
    if let Some(op) = name(op) {
        site.push_str(&format!(" in {op}"));
    }
    if let Some(frame) = name(frame) {
        site.push_str(&format!(" from {frame}"));
    }
    // What the host did after the call returned, in the median step: issuing (this finding's
    // time) and, in named ranges, host activities (findings of their own).
    let i = g.median_pass(|i| g.steps[i].part_ns(Part::Sync));
    let step = g.steps[i];
    let after = match step.rows.iter().filter(|r| r.part == Part::Host).max_by_key(|r| r.ns) {
        Some(r) => format!(
            "; after it returned the host issued kernels again ({:.1} µs of idle), and was in `{}` for {:.1} µs of idle (a host_activity finding when above the line)",
            step.part_ns(Part::Sync) as f64 / 1e3,
            a.budget().describe(a, r),
            r.ns as f64 / 1e3
        ),
        None => format!("; after it returned the host issued kernels again: {:.1} µs of idle", step.part_ns(Part::Sync) as f64 / 1e3),
    };
    let op = name(op).unwrap_or("");
    let fix = match (g.engine, op) {
        (Engine::Jax, _) => "no block_until_ready, device_get or float() of a result inside the step; keep values on the device until the loop ends",
        (_, "aten::item" | "aten::_local_scalar_dense" | "aten::is_nonzero") => "keep the value on the GPU: no .item(), bool() or Python if on a GPU tensor inside the step; check it every few steps, or copy it with non_blocking=True into pinned memory and read it a step later",
        (_, "aten::copy_" | "aten::to" | "aten::_to_copy" | "aten::tolist") => "copy to the host without blocking: .to('cpu', non_blocking=True) into pinned memory (tensor.pin_memory()), read it after an event a step later; no .cpu() or .tolist() inside the step",
        _ => "remove the explicit synchronisation from the step (torch.cuda.synchronize(), stream.synchronize(), event.synchronize()): wait on an event from another stream instead (stream.wait_event), or only where the host must read a result",
    };
    let (from_ns, to_ns) = g.window(i);
    Some(Finding {
        evidence: format!(
            "{per_step:.0} synchronising call(s) {per}; after each the GPU waits while the host refills it: {saving_us:.1} µs of {ms}'s {wall_us:.1} µs; most often ({n}×) {site}{after}"
        ),
        saving_us,
        saving_pct: 100.0 * saving_us / wall_us,
        fix: fix.to_string(),
        check: format!("no {} inside the steps, and the GPU's idle after it gone", t.name(call)),
        from_ns,
        to_ns,
        ..g.finding(Kind::Sync)
    })
}
