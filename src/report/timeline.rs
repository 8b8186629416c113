//! `gpu_timeline`, `short_kernels_histogram` and `short_kernels` tables.

use crate::analysis::ops::{owner, owner_label};
use crate::analysis::{short_kernels, timeline, Analysis};
use crate::model::FastMap as HashMap;
use crate::table::{Cell, Table};

/// One row per timeline quantity per device (TraceLens' `gpu_timeline` row names).
pub fn gpu_timeline(a: &Analysis) -> Table {
    let mut t = Table::new("gpu_timeline", &["device:int", "type", "time ms:float", "percent:float"]);
    for tl in timeline::timelines(a) {
        let rows: [(&str, i64); 13] = [
            ("computation_time", tl.compute),
            ("exposed_comm_time", tl.exposed_comm),
            ("exposed_memcpy_time", tl.exposed_memcpy),
            ("busy_time", tl.busy),
            ("idle_time", tl.idle),
            ("micro_idle_time", tl.micro_idle),
            ("macro_idle_time", tl.idle - tl.micro_idle),
            ("total_time", tl.total),
            ("total_comm_time", tl.comm),
            ("total_memcpy_time", tl.memcpy),
            ("total_memset_time", tl.memset),
            ("compute_comm_overlap_time", tl.compute_comm_overlap),
            ("kernel_time_sum", kernel_sum(a, tl.device)),
        ];
        for (name, ns) in rows {
            let pct = if tl.total > 0 { 100.0 * ns as f64 / tl.total as f64 } else { 0.0 };
            t.push(vec![Cell::Int(tl.device as i64), Cell::from(name), Cell::Float(ns as f64 / 1e6), Cell::Float(pct)]);
        }
    }
    t
}

fn kernel_sum(a: &Analysis, device: i32) -> i64 {
    let g = &a.trace.gpu;
    a.trace.kernel_rows().filter(|&i| g.device[i] == device).map(|i| g.dur[i]).sum()
}

/// Histogram of kernel durations below the short-kernel threshold.
pub fn short_kernels_histogram(a: &Analysis) -> Table {
    let mut t = Table::new("short_kernels_histogram", &["bin_start_us:us", "bin_end_us:us", "count:int", "total_us:us"]);
    for short_kernels::ShortBin { from_ns: s, to_ns: e, count: n, total_ns: total } in short_kernels::histogram(a) {
        t.push(vec![Cell::Float(s as f64 / 1e3), Cell::Float(e as f64 / 1e3), Cell::from(n), Cell::Float(total as f64 / 1e3)]);
    }
    t
}

/// The short kernels by name and parent op, most time first.
pub fn short_kernels(a: &Analysis) -> Table {
    let g = &a.trace.gpu;
    let kernel_total: i64 = a.kernel_time_ns();
    let mut agg: HashMap<(u32, String), (u64, i64)> = HashMap::default();
    for i in short_kernels::short_kernel_rows(a) {
        let e = agg.entry((g.name[i], owner_label(a, owner(a, i)).to_string())).or_default();
        e.0 += 1;
        e.1 += g.dur[i];
    }
    let mut rows: Vec<_> = agg.into_iter().collect();
    // Ties (same time and count) by name and parent text, not by map order or name ids.
    rows.sort_by(|x, y| {
        y.1 .1
            .cmp(&x.1 .1)
            .then(y.1 .0.cmp(&x.1 .0))
            .then_with(|| a.trace.name(x.0 .0).cmp(a.trace.name(y.0 .0)))
            .then_with(|| x.0 .1.cmp(&y.0 .1))
    });
    if a.options.topk > 0 {
        rows.truncate(a.options.topk);
    }
    let mut t = Table::new(
        "short_kernels",
        &["Kernel name", "Parent cpu_op", "count:int", "total_us:us", "mean_us:us", "Percent of kernels time (%):float"],
    );
    for ((name, parent), (n, total)) in rows {
        t.push(vec![
            Cell::from(a.trace.name(name)),
            Cell::from(parent),
            Cell::from(n),
            Cell::Float(total as f64 / 1e3),
            Cell::Float(total as f64 / 1e3 / n as f64),
            Cell::Float(if kernel_total > 0 { 100.0 * total as f64 / kernel_total as f64 } else { 0.0 }),
        ]);
    }
    t
}
