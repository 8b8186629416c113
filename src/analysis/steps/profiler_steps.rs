//! `ProfilerStep#N`: the ranges `torch.profiler`'s `schedule` writes around each `prof.step()`
//! (a user annotation since 2022, a `cpu_op` in Kineto of 2021). In a training trace they are
//! the steps: a GPU row belongs to the step its launch was issued in. Rows launched before the
//! first range (the GPU still running the step before the profiler started) are a step of their
//! own, cut short; rows launched between ranges go with the step running on the GPU when they
//! start. Inference traces keep their own passes (one `prof.step()` may hold a whole generation).

use super::passes::{cpu_time, PassSource, Segment};
use crate::model::Trace;
use std::collections::BTreeMap;

/// The `ProfilerStep#N` ranges of the trace's host, as (start, end) in time order (nested or
/// repeated ranges of one step merged).
pub fn profiler_steps(trace: &Trace) -> Vec<(i64, i64)> {
    let ops = &trace.ops;
    let mut is_step: crate::analysis::per_name::PerName<bool> = crate::analysis::per_name::PerName::new(trace.names.len());
    let mut out: Vec<(i64, i64)> = (0..ops.len())
        .filter(|&i| {
            *is_step.get_or_insert_with(ops.name[i], || {
                trace.name(ops.name[i]).strip_prefix("ProfilerStep#").is_some_and(|n| n.parse::<u64>().is_ok())
            })
        })
        .map(|i| (ops.ts[i], ops.end(i)))
        .collect();
    out.sort_unstable();
    let mut merged: Vec<(i64, i64)> = Vec::new();
    for (s, e) in out {
        match merged.last_mut() {
            Some(last) if s < last.1 => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    merged
}

/// The segments of every device by the `ProfilerStep#N` ranges `steps`; the
/// second value of each says whether the segment is the part launched before the first range.
pub fn segments(trace: &Trace, steps: &[(i64, i64)]) -> Vec<(Segment, bool)> {
    let g = &trace.gpu;
    let mut by_device: BTreeMap<i32, Vec<u32>> = BTreeMap::new();
    for i in 0..g.len() {
        by_device.entry(g.device[i]).or_default().push(i as u32);
    }
    let mut out = Vec::new();
    for (device, mut rows) in by_device {
        crate::analysis::rows::sort_by_time(&g.ts, &mut rows);
        // The step each row was launched in (`None`: before the first, or between ranges).
        let step_of: Vec<Option<usize>> = rows
            .iter()
            .map(|&r| {
                let t = cpu_time(trace, r as usize)?;
                let k = steps.partition_point(|s| s.0 <= t);
                (k > 0 && t < steps[k - 1].1).then(|| k - 1)
            })
            .collect();
        let first_launch = steps.first().map_or(i64::MIN, |s| s.0);
        let mut per_step: BTreeMap<usize, Vec<u32>> = BTreeMap::new();
        let mut before: Vec<u32> = Vec::new();
        let mut current: Option<usize> = None;
        for (p, &r) in rows.iter().enumerate() {
            match step_of[p] {
                Some(s) => {
                    current = Some(current.map_or(s, |c| c.max(s)));
                    per_step.entry(s).or_default().push(r);
                }
                None => {
                    let launched_before = cpu_time(trace, r as usize).is_some_and(|t| t < first_launch);
                    match current {
                        Some(c) if !launched_before => per_step.entry(c).or_default().push(r),
                        _ => before.push(r),
                    }
                }
            }
        }
        // Copies and fills alone before the first step are no step of their own: they go with it.
        let has_kernel = before.iter().any(|&r| g.kind[r as usize] == crate::model::GpuKind::Kernel);
        if has_kernel {
            out.push((Segment { device, rows: before, step: None, source: PassSource::Annotation, structure: false }, true));
        } else if let Some((_, first)) = per_step.iter_mut().next() {
            first.extend(before);
        }
        for (s, mut rows) in per_step {
            crate::analysis::rows::sort_by_time(&g.ts, &mut rows);
            out.push((Segment { device, rows, step: Some(s), source: PassSource::Annotation, structure: false }, false));
        }
    }
    out
}

/// Cuts `segments` (inference passes) where the `ProfilerStep#N` range their rows were launched in
/// changes: `prof.step()` is called between engine steps, so no pass crosses one. Nothing changes
/// unless the trace holds two ranges or more (the interned names are looked at first: most traces
/// have none, and then no op is read).
pub fn split_at_profiler_steps(trace: &Trace, segments: Vec<Segment>) -> Vec<Segment> {
    let named =
        (0..trace.names.len()).filter(|&n| trace.name(n as crate::model::NameId).starts_with("ProfilerStep#")).take(2).count();
    if named < 2 {
        return segments;
    }
    let steps = profiler_steps(trace);
    if steps.len() < 2 {
        return segments;
    }
    let mut step_of_row = vec![u32::MAX; trace.gpu.len()];
    for (seg, _) in self::segments(trace, &steps) {
        let step = seg.step.map_or(u32::MAX - 1, |s| s as u32);
        for r in seg.rows {
            step_of_row[r as usize] = step;
        }
    }
    let mut out = Vec::with_capacity(segments.len());
    for seg in segments {
        let step = |k: usize| step_of_row[seg.rows[k] as usize];
        let cuts: Vec<usize> = (1..seg.rows.len()).filter(|&k| step(k) != step(k - 1)).collect();
        if cuts.is_empty() {
            out.push(seg);
            continue;
        }
        let bounds = std::iter::once(0).chain(cuts.iter().copied()).zip(cuts.iter().copied().chain([seg.rows.len()]));
        for (from, to) in bounds {
            let rows = seg.rows[from..to].to_vec();
            out.push(Segment { device: seg.device, rows, step: seg.step, source: seg.source, structure: seg.structure });
        }
    }
    out
}
