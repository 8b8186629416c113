//! `category_summary` and `graph_launch_breakdown`: GPU time by kernel category.

use super::percent;
use crate::analysis::categories::time_by_category;
use crate::analysis::Analysis;
use crate::model::{Trace, NONE};
use crate::table::{Cell, Table};
use std::collections::HashMap;

/// Columns of `category_summary`.
pub const SUMMARY_COLUMNS: &[&str] =
    &["category", "family", "count:int", "total_us:us", "pct_of_gpu_time:float", "cumulative_pct:float"];

/// One row per category over every GPU row (kernels, memcpy, memset), largest total first.
/// `pct_of_gpu_time` is the share of the summed duration of all GPU rows; `cumulative_pct` runs
/// down the table.
pub fn category_summary(a: &Analysis) -> Table {
    let t = &a.trace;
    let mut rows = time_by_category(t, &a.categories, 0..t.gpu.len());
    rows.sort_by(|x, y| y.2.cmp(&x.2).then(x.0.cmp(&y.0)));
    let total: i64 = rows.iter().map(|r| r.2).sum();
    let mut table = Table::new("category_summary", SUMMARY_COLUMNS);
    let mut running = 0i64;
    for (cat, count, ns) in rows {
        running += ns;
        let c = &a.categories.categories[cat as usize];
        table.push(vec![
            Cell::from(c.name.as_str()),
            Cell::from(c.family.as_str()),
            Cell::from(count),
            Cell::Micros(ns),
            Cell::Float(percent(ns, total)),
            Cell::Float(percent(running, total)),
        ]);
    }
    table
}

/// Columns of `graph_launch_breakdown`.
pub const GRAPH_COLUMNS: &[&str] =
    &["graph_op", "graph_launches:int", "category", "family", "count:int", "total_us:us", "pct_of_op_time:float"];

/// Name under which a graph launch is reported: the CPU op around the `cudaGraphLaunch` /
/// `hipGraphLaunch`, else its python frame, else the runtime call itself.
pub fn graph_launch_label(t: &Trace, launch: usize) -> &str {
    let l = &t.launches;
    if l.cpu_op[launch] != NONE {
        return t.name(t.ops.name[l.cpu_op[launch] as usize]);
    }
    if l.python[launch] != NONE {
        return t.name(t.ops.name[l.python[launch] as usize]);
    }
    t.name(l.name[launch])
}

/// Kernels replayed by graph launches, grouped by the op that launched the graph, then by
/// category: what each graph spends its time on (graph replays hide the per-kernel CPU op, so
/// the category is the only per-kernel label). Ops with the most graph time first.
pub fn graph_launch_breakdown(a: &Analysis) -> Table {
    let t = &a.trace;
    let g = &t.gpu;
    let mut table = Table::new("graph_launch_breakdown", GRAPH_COLUMNS);
    // label -> (rows, distinct launches)
    let mut groups: HashMap<&str, (Vec<usize>, Vec<u32>)> = HashMap::new();
    for i in 0..g.len() {
        let l = g.launch[i];
        if l == NONE || !t.launches.is_graph[l as usize] {
            continue;
        }
        let e = groups.entry(graph_launch_label(t, l as usize)).or_default();
        e.0.push(i);
        e.1.push(l);
    }
    let mut groups: Vec<(&str, Vec<usize>, usize, i64)> = groups
        .into_iter()
        .map(|(label, (rows, mut launches))| {
            launches.sort_unstable();
            launches.dedup();
            let time: i64 = crate::support::sat::SatSum::sat_sum(rows.iter().map(|&i| g.dur[i]));
            (label, rows, launches.len(), time)
        })
        .collect();
    groups.sort_by(|x, y| y.3.cmp(&x.3).then(x.0.cmp(y.0)));
    for (label, rows, launches, op_time) in groups {
        let mut cats = time_by_category(t, &a.categories, rows.into_iter());
        cats.sort_by(|x, y| y.2.cmp(&x.2).then(x.0.cmp(&y.0)));
        for (cat, count, ns) in cats {
            let c = &a.categories.categories[cat as usize];
            table.push(vec![
                Cell::from(label),
                Cell::from(launches),
                Cell::from(c.name.as_str()),
                Cell::from(c.family.as_str()),
                Cell::from(count),
                Cell::Micros(ns),
                Cell::Float(percent(ns, op_time)),
            ]);
        }
    }
    table
}
