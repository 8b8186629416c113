//! `exposed_copy`: copies and fills run with no kernel beside them (the step budget's **copy**
//! rows): the GPU computes nothing while data moves. Saving: that time, an upper bound (what full
//! overlap with compute would give). Where most of it is copies to or from pageable host memory,
//! the finding says so, with their bandwidth, and its fix is pinned memory.

use super::{Finding, Group, Kind};
use crate::analysis::budget::{syncs::is_pageable_copy, Part, Step, What};
use crate::analysis::Analysis;

/// The exposed-copy finding of `g`, if worth raising.
pub fn exposed_copies(a: &Analysis, g: &Group) -> Option<Finding> {
    let ms = g.median_step();
    let (saving_us, wall_us, row) = g.raised_part(Part::Copy)?;
    let pageable_ns = |s: &Step| s.rows.iter().filter(|r| r.part == Part::Copy && r.what == What::Pageable).map(|r| r.ns).sum();
    let pageable_us = g.median_of(pageable_ns);
    let pageable = pageable_us * 2.0 >= saving_us;
    let (evidence, fix) = if pageable {
        let i = g.median_pass(|i| pageable_ns(g.steps[i]));
        let (copies, bytes, busy_ns) = pageable_copies(a, g.steps[i]);
        let rate = if busy_ns > 0 && bytes > 0 {
            format!(", {:.1} MB at {:.1} GB/s", bytes as f64 / 1e6, bytes as f64 / busy_ns as f64)
        } else {
            String::new()
        };
        (
            format!(
                "copies between the GPU and pageable host memory run with no kernel beside them for {pageable_us:.1} µs of {ms}'s {wall_us:.1} µs ({copies} such copies in it{rate}); copies and fills in all: {saving_us:.1} µs"
            ),
            "copy from pinned host memory: DataLoader(pin_memory=True) or tensor.pin_memory() once, then .to(device, non_blocking=True) issued ahead of use (a pageable copy is staged through a driver buffer, runs at a fraction of the link's bandwidth and blocks the host); or keep the data on the GPU".to_string(),
        )
    } else {
        (
            format!(
                "copies and fills run with no kernel beside them for {saving_us:.1} µs of {ms}'s {wall_us:.1} µs ({} stretches in it)",
                row.intervals
            ),
            "overlap the copies with compute: pinned host memory (pin_memory=True) and .to(device, non_blocking=True) issued ahead of use, or on a side stream; fewer, larger copies; no fills the next kernel overwrites".to_string(),
        )
    };
    Some(Finding {
        subject: if pageable { "pageable".into() } else { String::new() },
        evidence,
        saving_us,
        saving_pct: 100.0 * saving_us / wall_us,
        fix,
        check: "copies under kernels, the copy row of the step budget near zero".into(),
        from_ns: row.longest.0,
        to_ns: row.longest.1,
        ..g.finding(Kind::ExposedCopy)
    })
}

/// The copies to or from pageable host memory that start in `step`'s window on its device: how
/// many, their bytes (where the trace says) and their time on the GPU (ns, of those with bytes).
fn pageable_copies(a: &Analysis, step: &Step) -> (usize, i64, i64) {
    let (t, g) = (&a.trace, &a.trace.gpu);
    let rows: Vec<usize> = (0..g.len())
        .filter(|&r| g.device[r] == step.device && (step.start_ns..step.end_ns).contains(&g.ts[r]) && is_pageable_copy(t, r))
        .collect();
    let (mut bytes, mut busy) = (0i64, 0i64);
    for (k, &r) in t.copies.gpu.iter().enumerate() {
        if rows.binary_search(&(r as usize)).is_ok() && t.copies.bytes[k] > 0 {
            bytes = bytes.saturating_add(t.copies.bytes[k]);
            busy = busy.saturating_add(g.dur[r as usize]);
        }
    }
    (rows.len(), bytes, busy)
}
