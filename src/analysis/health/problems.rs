//! The checks of what went wrong while the trace was written or read (ok or warning), and the
//! warnings health itself finds in the linked model.

use super::check::{Check, CheckId, Status};
use super::counted::{overlap_by_design, Counted};
use super::fixes::{checked, fix};
use crate::analysis::Analysis;
use crate::model::{Trace, WarningKind, Warnings};

/// The warnings health finds in the linked model, with their counts and first examples (event
/// indices): kernel launches without a kernel (all of them when the CPU was recorded alone), GPU
/// events without a launch, kernels overlapping on their stream, kernels of zero duration. The
/// summary adds them to the reader's own warnings.
pub fn findings_of(t: &Trace, c: &Counted) -> Warnings {
    let mut w = Warnings::default();
    let l = &t.launches;
    let g = &t.gpu;
    let at = |ts: i64| format!("{:.3} ms after the trace's start", (ts - t.time_origin_ns) as f64 / 1e6);
    if c.kernels == 0 && c.unread_device > 0 {
        // The device ran, under categories we do not read: `unread_events` says so.
    } else if c.kernels == 0 {
        for &(i, ts) in &c.launches_without_kernel {
            w.add(WarningKind::CpuOnly, l.event_index[i] as u64, &format!("{} at {}", t.name(l.name[i]), at(ts)));
        }
    } else {
        for &(i, ts) in &c.launches_without_kernel {
            w.add(WarningKind::LaunchWithoutKernel, l.event_index[i] as u64, &format!("{} at {}", t.name(l.name[i]), at(ts)));
        }
    }
    // Without any runtime call, every GPU event lacks its CPU side: one warning says it all.
    for &i in &c.gpu_without_cpu {
        w.add(WarningKind::GpuWithoutCpu, g.event_index[i] as u64, &format!("{} at {}", t.name(g.name[i]), at(g.ts[i])));
    }
    for &(p, i) in c.overlaps.iter().filter(|&&(_, i)| overlap_by_design(t, g.device[i]).is_none()) {
        w.add(
            WarningKind::StreamOverlap,
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
        w.add(WarningKind::ZeroDuration, g.event_index[i] as u64, t.name(g.name[i]));
    }
    w
}

/// The problem checks built from the reader's warnings and those health finds.
pub fn problem_checks(a: &Analysis, c: &Counted, found: &Warnings) -> Vec<Check> {
    let t = &a.trace;
    let count = |w: &Warnings, kind: &WarningKind| w.count(kind);
    let first = |w: &Warnings, kind: &WarningKind| {
        w.examples_of(kind).next().map(|e| format!("; first: event {}, {}", e.event, e.detail)).unwrap_or_default()
    };
    let problem = |check: CheckId, n: u64, found: String, limits: &str| {
        checked(check, if n > 0 { Status::Warning } else { Status::Ok }, n, found, limits, t.stats.format)
    };
    let repaired = count(&t.warnings, &WarningKind::RepairedJson);
    let mut out = vec![problem(
        CheckId::RepairedJson,
        repaired,
        if repaired > 0 {
            format!("{repaired} events with broken JSON strings repaired{}", first(&t.warnings, &WarningKind::RepairedJson))
        } else {
            "the JSON is well formed".into()
        },
        "none: the repaired events read as if escaped correctly (json.load, Perfetto and TraceLens refuse this file)",
    )];
    let header = count(&t.warnings, &WarningKind::HeaderUnread);
    out.push(problem(
        CheckId::HeaderValues,
        header,
        if header > 0 {
            let which =
                t.warnings.examples_of(&WarningKind::HeaderUnread).map(|e| e.detail.as_str()).collect::<Vec<_>>().join("; ");
            format!("{header} top-level values not read: {which}")
        } else {
            "every top-level value read".into()
        },
        "the facts they hold are missing (deviceProperties: the device and roofline peaks; distributedInfo: the rank)",
    ));
    // Events of kinds no analysis reads.
    let unread: Vec<(&WarningKind, u64)> =
        t.warnings.counts.iter().filter(|(k, _)| k.is_unread()).map(|(k, &n)| (k, n)).collect();
    let n: u64 = unread.iter().map(|(_, n)| n).sum();
    let described: Vec<String> = unread
        .iter()
        .map(|(k, n)| {
            let what = k.unread_what();
            let device = t.warnings.examples_of(k).next().and_then(|e| e.process.clone());
            match device {
                Some(d) => format!("{n} {what} (process \"{d}\")"),
                None => format!("{n} {what}"),
            }
        })
        .collect();
    out.push(problem(
        CheckId::UnreadEvents,
        n,
        if n > 0 {
            format!("{} not read: this device or event kind is not modelled", described.join("; "))
        } else {
            "every device event is of a kind traceprism reads".into()
        },
        "their time is in no table: an accelerator whose kernels sit under these categories shows no GPU work",
    ));
    let lost = count(found, &WarningKind::LaunchWithoutKernel);
    out.push(problem(
        CheckId::DroppedKernels,
        lost,
        if lost > 0 {
            let window = window_of(t, &c.launches_without_kernel);
            format!(
                "{lost} kernel launches have no kernel in the trace ({window}){}",
                first(found, &WarningKind::LaunchWithoutKernel)
            )
        } else {
            "every kernel launch has its kernel".into()
        },
        "the kernels those launches ran are missing from every table; a pass they fall in is short",
    ));
    let orphan = count(found, &WarningKind::GpuWithoutCpu);
    let orphan_status = if orphan > 0 && c.launches == 0 {
        Status::Warning
    } else if orphan > 0 {
        Status::Partial
    } else {
        Status::Ok
    };
    out.push(Check {
        check: CheckId::GpuWithoutCpu,
        status: orphan_status,
        count: orphan,
        found: if orphan > 0 {
            format!(
                "{orphan} of {} {} events have no launch on the CPU side{}",
                t.gpu.len(),
                t.meta.device_kind(),
                first(found, &WarningKind::GpuWithoutCpu)
            )
        } else {
            format!("every {} event has its launch", t.meta.device_kind())
        },
        limits: if orphan > 0 {
            "those kernels have no CPU op, shapes or stack: op tables count them as (unlinked)".into()
        } else {
            String::new()
        },
        fix: if orphan > 0 && c.launches == 0 { fix(CheckId::GpuWithoutCpu, t.stats.format).into() } else { String::new() },
    });
    let overlaps = count(found, &WarningKind::StreamOverlap);
    let by_design: Vec<(&(usize, usize), &str)> =
        c.overlaps.iter().filter_map(|o| Some((o, overlap_by_design(t, t.gpu.device[o.1])?))).collect();
    let mut overlap = problem(
        CheckId::StreamOverlap,
        overlaps,
        if overlaps > 0 {
            format!(
                "{overlaps} kernels overlap the previous kernel on their own stream{}",
                first(found, &WarningKind::StreamOverlap)
            )
        } else {
            "no kernels overlap on one stream".into()
        },
        "busy time on those streams is counted once (union), but per-kernel times there may be wrong",
    );
    if let (0, Some(&(_, why))) = (overlaps, by_design.first()) {
        let g = &t.gpu;
        let most = by_design.iter().map(|&(&(p, i), _)| g.end(p) - g.ts[i]).max().unwrap_or(0);
        overlap.count = by_design.len() as u64;
        overlap.found = format!(
            "{} kernels start before the previous kernel on their stream ends (by up to {:.3} µs): {why}; busy time counts the union",
            by_design.len(),
            most as f64 / 1e3
        );
    }
    out.push(overlap);
    let zero = count(found, &WarningKind::ZeroDuration);
    out.push(problem(
        CheckId::ZeroDurations,
        zero,
        if zero > 0 {
            format!("{zero} kernels last 0 µs{}", first(found, &WarningKind::ZeroDuration))
        } else {
            "no kernel of zero duration".into()
        },
        "those kernels add nothing to any time; their count still counts",
    ));
    let skipped = t.stats.skipped;
    out.push(problem(
        CheckId::SkippedEvents,
        skipped,
        format!("{skipped} events skipped as malformed"),
        "the skipped events are missing from every table (the warnings say which and why)",
    ));
    out
}

/// Where the lost launches fall: within the first 5% of the trace's span, or spread.
fn window_of(t: &Trace, lost: &[(usize, i64)]) -> String {
    let (Some(lo), Some(hi)) = (lost.iter().map(|l| l.1).min(), lost.iter().map(|l| l.1).max()) else { return String::new() };
    // Trace-supplied times: saturating, so a mangled timestamp never overflows.
    let end = t
        .gpu
        .ts
        .iter()
        .zip(&t.gpu.dur)
        .map(|(s, d)| s.saturating_add(*d))
        .chain(t.launches.ts.iter().copied())
        .max()
        .unwrap_or(hi);
    let span = end.saturating_sub(t.time_origin_ns).max(1);
    let ms = |v: i64| v.saturating_sub(t.time_origin_ns) as f64 / 1e6;
    let at_start = hi.saturating_sub(t.time_origin_ns).saturating_mul(20) <= span;
    format!(
        "launched {:.3}–{:.3} ms after the trace's start{}",
        ms(lo),
        ms(hi),
        if at_start { ", all at the session's start" } else { "" }
    )
}
