//! The tables of a run of several ranks ([`crate::analysis::ranks::Run`]): per rank, per
//! collective, the straggler summary (TraceLens' columns), waits by phase, pass and layer, the
//! excess compute of late ranks, and what did not match.

use super::percent;
use crate::analysis::categories::time_by_category;
use crate::analysis::ranks::{ranges, Run};
use crate::analysis::timeline::{length, merge};
use crate::model::NONE;
use crate::table::{Cell, Table};
use std::collections::BTreeMap;

/// `ranks --json` (and MCP's and Python's answer): the run's counts, finding, warnings and every
/// table; `left_out`: the ranks that could not be read.
pub fn run_json(run: &Run, left_out: usize, tables: &[Table]) -> serde_json::Value {
    serde_json::json!({
        "ranks": run.ranks.len(),
        "collectives_matched": run.collectives.len(),
        "unmatched_collective_names": run.unmatched_names(),
        "collectives_missing_on_some_ranks": run.missing_collectives(),
        "ranks_left_out": left_out,
        "aligned": run.aligned,
        "finding": run.finding(),
        "cost_finding": run.cost_finding(),
        "warnings": run.warnings,
        "tables": tables,
    })
}

/// Every table of a run, in export order.
pub fn run_tables(run: &Run) -> Vec<Table> {
    vec![
        ranks(run),
        rank_categories(run),
        rank_phases(run),
        collectives(run),
        collective_classes(run),
        lateness(run),
        straggler_summary(run),
        wait_by_layer(run),
        straggler_cause(run),
        run_findings(run),
        unmatched_collectives(run),
    ]
}

/// `run_findings`: the run's findings, one per rank that arrives last (kind `straggler`), with the
/// columns of `findings`.
pub fn run_findings(run: &Run) -> Table {
    super::findings::table_of("run_findings", crate::analysis::findings::stragglers(run))
}

fn id(v: u32) -> Cell {
    if v == NONE {
        Cell::Empty
    } else {
        Cell::from(v)
    }
}

/// `ranks`: one row per rank.
pub fn ranks(run: &Run) -> Table {
    let mut t = Table::new(
        "ranks",
        &[
            "rank:int",
            "rank_from",
            "file",
            "clock_offset_us:us",
            "offset_residual_us:us",
            "kernel_time_us:us",
            "busy_us:us",
            "idle_us:us",
            "comm_time_us:us",
            "collective_transfer_us:us",
            "collective_wait_us:us",
            "comm_share_pct:float",
            "passes:int",
            "layers_per_pass",
            "top_category",
            "graph_replayed_pct:float",
            "graph_attributed_pct:float",
        ],
    );
    for (k, r) in run.ranks.iter().enumerate() {
        let a = &r.trace.analysis;
        let g = &a.trace.gpu;
        let rows: Vec<usize> = a.trace.kernel_rows().collect();
        // Time in matched collectives = transfer + waiting for the others.
        let in_collectives: i64 = run.collectives.iter().map(|c| c.sides[k].dur_ns).sum();
        let waiting: i64 = run.collectives.iter().map(|c| c.sides[k].wait_ns.min(c.sides[k].dur_ns)).sum();
        let kernel: i64 = rows.iter().map(|&i| g.dur[i]).sum();
        let comm: i64 = rows.iter().filter(|&&i| a.categories.is_communication(i)).map(|&i| g.dur[i]).sum();
        let busy_spans = merge(rows.iter().map(|&i| (g.ts[i], g.end(i))).collect());
        let busy = length(&busy_spans);
        let span = busy_spans.last().map_or(0, |l| l.1) - busy_spans.first().map_or(0, |f| f.0);
        let top = time_by_category(&a.trace, &a.categories, rows.iter().copied()).into_iter().max_by_key(|c| c.2);
        let layers: Vec<u32> = a.layers.layers_per_pass.iter().copied().filter(|&n| n > 0).collect();
        // Graph replays: how much of the rank's GPU time they are, and how much of that has an op
        // (from the rank's capture traces, `ranks --capture`, or an eager stretch); empty: none.
        let replays = super::summary::graph_replays(a, g.dur.iter().sum());
        let layers_per_pass = match (layers.iter().min(), layers.iter().max()) {
            (Some(lo), Some(hi)) if lo == hi => lo.to_string(),
            (Some(lo), Some(hi)) => format!("{lo}–{hi}"),
            _ => String::new(),
        };
        t.push(vec![
            Cell::from(r.rank),
            Cell::from(r.rank_from),
            Cell::from(r.trace.file.as_str()),
            Cell::Micros(r.clock_offset_ns),
            Cell::Micros(r.residual_ns),
            Cell::Micros(kernel),
            Cell::Micros(busy),
            Cell::Micros(span - busy),
            Cell::Micros(comm),
            Cell::Micros(in_collectives - waiting),
            Cell::Micros(waiting),
            Cell::Float(percent(comm, kernel)),
            Cell::from(a.phases.passes.len()),
            Cell::from(layers_per_pass),
            top.map_or(Cell::Empty, |c| Cell::from(a.categories.categories[c.0 as usize].name.as_str())),
            replays.as_ref().map_or(Cell::Empty, |g| Cell::Float(g.replayed_pct)),
            replays.as_ref().map_or(Cell::Empty, |g| Cell::Float(g.attributed_pct)),
        ]);
    }
    t
}

/// `rank_categories`: kernel time by category on each rank.
pub fn rank_categories(run: &Run) -> Table {
    let mut t = Table::new(
        "rank_categories",
        &["rank:int", "category", "family", "count:int", "total_us:us", "pct_of_kernel_time:float"],
    );
    for r in &run.ranks {
        let a = &r.trace.analysis;
        let mut rows = time_by_category(&a.trace, &a.categories, a.trace.kernel_rows());
        rows.sort_by(|x, y| y.2.cmp(&x.2).then(x.0.cmp(&y.0)));
        let total: i64 = rows.iter().map(|c| c.2).sum();
        for (cat, count, ns) in rows {
            let c = &a.categories.categories[cat as usize];
            t.push(vec![
                Cell::from(r.rank),
                Cell::from(c.name.as_str()),
                Cell::from(c.family.as_str()),
                Cell::from(count),
                Cell::Micros(ns),
                Cell::Float(percent(ns, total)),
            ]);
        }
    }
    t
}

/// `rank_phases`: kernel time by phase on each rank.
pub fn rank_phases(run: &Run) -> Table {
    let mut t = Table::new("rank_phases", &["rank:int", "phase", "kernels:int", "total_us:us"]);
    for r in &run.ranks {
        let a = &r.trace.analysis;
        let mut by: BTreeMap<&str, (usize, i64)> = BTreeMap::new();
        for i in a.trace.kernel_rows() {
            let phase = a.phases.phase_of_row.get(i).copied().flatten().map_or("none", |p| p.as_str());
            let e = by.entry(phase).or_default();
            e.0 += 1;
            e.1 += a.trace.gpu.dur[i];
        }
        for (phase, (n, ns)) in by {
            t.push(vec![Cell::from(r.rank), Cell::from(phase), Cell::from(n), Cell::Micros(ns)]);
        }
    }
    t
}

/// `collectives`: one row per collective matched across the ranks, with each rank's wait.
pub fn collectives(run: &Run) -> Table {
    let mut columns: Vec<String> = [
        "index:int",
        "kind",
        "name",
        "occurrence:int",
        "group",
        "matched_by",
        "bytes:int",
        "phase",
        "step:int",
        "pass:int",
        "layer:int",
        "comm_latency_us:us",
        "transfer_us:us",
        "skew_us:us",
        "start_skew_us:us",
        "end_skew_us:us",
        "last_rank:int",
        "first_rank:int",
        "algbw_GBps:float",
        "busbw_GBps:float",
        "link_peak_GBps:float",
        "wait_pct:float",
        "cost_class",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    columns.extend(run.ranks.iter().map(|r| format!("wait_us_rank{}:us", r.rank)));
    let column_refs: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut t = Table::new("collectives", &column_refs);
    let link = run.link_peak_gbps();
    for c in &run.collectives {
        let first = &c.sides[0];
        let cost = crate::analysis::ranks::cost::transfer_cost_ns(c) + c.skew_ns();
        let mut row = vec![
            Cell::from(c.index),
            Cell::from(c.kind.as_str()),
            Cell::from(c.name.as_str()),
            Cell::from(c.occurrence),
            Cell::from(c.group.as_str()),
            Cell::from(c.matched_by),
            Cell::from(c.bytes),
            Cell::from(first.phase.map(|p| p.as_str())),
            Cell::from(first.step),
            id(first.pass),
            id(first.layer),
            Cell::Micros(c.comm_latency_ns()),
            Cell::Micros(c.transfer_ns()),
            Cell::Micros(c.skew_ns()),
            Cell::Micros(c.start_skew_ns()),
            Cell::Micros(c.end_skew_ns()),
            Cell::from(run.ranks[c.last()].rank),
            Cell::from(run.ranks[c.first()].rank),
            Cell::from(c.algbw_gbps()),
            Cell::from(c.busbw_gbps()),
            Cell::from(link.filter(|_| c.bytes.is_some())),
            Cell::Float(percent(c.skew_ns(), cost)),
            Cell::from(run.cost_class(c).as_str()),
        ];
        row.extend(c.sides.iter().map(|s| Cell::Micros(s.wait_ns)));
        t.push(row);
    }
    t
}

/// `collective_classes`: the collectives' cost by phase and kind (`layer` empty: all of them) and
/// by phase, kind and layer: their zero-skew cost (n × transfer), their waits, waiting's share and
/// the class of the sum (see [`crate::analysis::ranks::cost`]), how many of each class, and the
/// rank most of the wait was for.
pub fn collective_classes(run: &Run) -> Table {
    let mut t = Table::new(
        "collective_classes",
        &[
            "phase",
            "kind",
            "layer:int",
            "collectives:int",
            "transfer_cost_us:us",
            "wait_us:us",
            "wait_pct:float",
            "class",
            "transfer:int",
            "skew:int",
            "mixed:int",
            "inconclusive:int",
            "waited_for_rank:int",
            "waited_for_pct:float",
            "jitter_us:us",
        ],
    );
    for g in run.class_rollup() {
        let waited = g.waited_for();
        let mut row = vec![
            Cell::from(g.phase.as_str()),
            Cell::from(g.kind.as_str()),
            Cell::from(g.layer),
            Cell::from(g.collectives),
            Cell::Micros(g.transfer_ns),
            Cell::Micros(g.wait_ns),
            Cell::Float(g.wait_pct()),
            Cell::from(g.class().as_str()),
        ];
        row.extend(g.classes.iter().map(|&n| Cell::from(n)));
        row.push(waited.map_or(Cell::Empty, |(r, _)| Cell::from(run.ranks[r].rank)));
        row.push(waited.map_or(Cell::Empty, |(_, pct)| Cell::Float(pct)));
        row.push(Cell::Micros(run.jitter_ns));
        t.push(row);
    }
    t
}

/// `lateness`: one row per (collective, rank) where the rank arrives at least 50 µs
/// ([`crate::analysis::ranks::LATE_FLOOR_NS`]) after the median rank: how late, how much of it its
/// GPU was busy or idle beyond the median rank's in the window since the previous collective, which
/// side that makes it, and what its host was doing in its longest GPU idle gap.
pub fn lateness(run: &Run) -> Table {
    let mut t = Table::new(
        "lateness",
        &[
            "collective:int",
            "rank:int",
            "phase",
            "pass:int",
            "layer:int",
            "late_us:us",
            "gpu_busy_excess_us:us",
            "gpu_idle_excess_us:us",
            "remainder_us:us",
            "side",
            "host_op",
            "host_op_us:us",
            "step:int",
        ],
    );
    for l in run.lateness() {
        t.push(vec![
            Cell::from(l.collective),
            Cell::from(run.ranks[l.rank].rank),
            Cell::from(l.phase.map(|p| p.as_str())),
            id(l.pass),
            id(l.layer),
            Cell::Micros(l.late_ns),
            Cell::Micros(l.busy_excess_ns),
            Cell::Micros(l.idle_excess_ns),
            Cell::Micros(l.remainder_ns),
            Cell::from(l.side.as_str()),
            Cell::from(l.host_op.as_ref().map(|(op, _)| op.as_str())),
            l.host_op.as_ref().map_or(Cell::Empty, |(_, ns)| Cell::Micros(*ns)),
            Cell::from(l.step),
        ]);
    }
    t
}

/// `straggler_summary`: TraceLens' columns first, one row per rank.
pub fn straggler_summary(run: &Run) -> Table {
    let mut t = Table::new(
        "straggler_summary",
        &[
            "rank:int",
            "total_wait_time_us:us",
            "mean_wait_time_us:us",
            "times_arrived_last:int",
            "times_arrived_first:int",
            "pct_arrived_last:float",
            "num_collectives:int",
            "total_comm_dur_us:us",
        ],
    );
    let n = run.collectives.len();
    for (r, st) in run.straggler_stats().into_iter().enumerate() {
        let (wait, last, first, comm) = (st.wait_ns, st.times_last, st.times_first, st.comm_ns);
        t.push(vec![
            Cell::from(run.ranks[r].rank),
            Cell::Micros(wait),
            Cell::Micros(if n == 0 { 0 } else { wait / n as i64 }),
            Cell::from(last),
            Cell::from(first),
            Cell::Float(if n == 0 { 0.0 } else { 100.0 * last as f64 / n as f64 }),
            Cell::from(n),
            Cell::Micros(comm),
        ]);
    }
    t
}

/// `wait_by_layer`: each rank's wait at collectives, by the phase, pass and layer they sit in
/// on that rank (`layer` empty outside the decoder layers).
pub fn wait_by_layer(run: &Run) -> Table {
    let mut t =
        Table::new("wait_by_layer", &["rank:int", "phase", "step:int", "pass:int", "layer:int", "wait_us:us", "collectives:int"]);
    for (r, rank) in run.ranks.iter().enumerate() {
        // (pass, layer, phase, step) → (wait, collectives)
        type Key<'a> = (u32, u32, &'a str, Option<u64>);
        let mut by: BTreeMap<Key, (i64, usize)> = BTreeMap::new();
        for c in &run.collectives {
            let s = &c.sides[r];
            let e = by.entry((s.pass, s.layer, s.phase.map_or("", |p| p.as_str()), s.step)).or_default();
            e.0 += s.wait_ns;
            e.1 += 1;
        }
        for ((pass, layer, phase, step), (wait, count)) in by {
            t.push(vec![
                Cell::from(rank.rank),
                Cell::from(phase),
                Cell::from(step),
                id(pass),
                id(layer),
                Cell::Micros(wait),
                Cell::from(count),
            ]);
        }
    }
    t
}

/// `straggler_cause`: for each rank that arrived last, the compute it ran beyond the median rank
/// before those collectives, by category, with the layers and phases they sit in.
pub fn straggler_cause(run: &Run) -> Table {
    let mut t =
        Table::new("straggler_cause", &["rank:int", "times_arrived_last:int", "category", "excess_us:us", "layers", "phases"]);
    for e in run.excess() {
        let phases = e.phases.iter().map(|(p, n)| format!("{p}: {n}")).collect::<Vec<_>>().join(", ");
        let layers = ranges(&e.layers);
        if e.by_category.is_empty() {
            t.push(vec![
                Cell::from(run.ranks[e.rank].rank),
                Cell::from(e.times_last),
                Cell::Empty,
                Cell::Micros(0),
                Cell::from(layers.as_str()),
                Cell::from(phases.as_str()),
            ]);
        }
        for (cat, ns) in &e.by_category {
            t.push(vec![
                Cell::from(run.ranks[e.rank].rank),
                Cell::from(e.times_last),
                Cell::from(cat.as_str()),
                Cell::Micros(*ns),
                Cell::from(layers.as_str()),
                Cell::from(phases.as_str()),
            ]);
        }
    }
    t
}

/// `unmatched_collectives`: what could not be paired on every rank. A row per collective that
/// some ranks lack (`position`, `at_us`, `missing_on_ranks`; the count columns say which ranks ran
/// it, 1 or 0), and a row per key whose counts differ where no single missing collective could be
/// told (the count columns are its occurrences per rank).
pub fn unmatched_collectives(run: &Run) -> Table {
    let mut columns: Vec<String> =
        ["name", "kind", "kernel", "bytes:int", "position:int", "at_us:us", "while_all_traced", "missing_on_ranks"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    columns.extend(run.ranks.iter().map(|r| format!("count_rank{}:int", r.rank)));
    let column_refs: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut t = Table::new("unmatched_collectives", &column_refs);
    for u in &run.unmatched {
        let lacking: Vec<String> =
            run.ranks.iter().zip(&u.per_rank).filter(|(_, &c)| c == 0).map(|(r, _)| r.rank.to_string()).collect();
        let mut row = match &u.missing {
            Some(m) => vec![
                Cell::from(u.name.as_str()),
                Cell::from(m.kind.as_str()),
                Cell::from(m.kernel.as_str()),
                Cell::from(m.bytes),
                Cell::from(m.position),
                Cell::Micros(m.at_ns),
                Cell::from(if m.while_all_traced { "yes" } else { "no" }),
                Cell::from(lacking.join(" ")),
            ],
            None => vec![
                Cell::from(u.name.as_str()),
                Cell::from(crate::analysis::ranks::Kind::of(&u.name).as_str()),
                Cell::Empty,
                Cell::Empty,
                Cell::Empty,
                Cell::Empty,
                Cell::Empty,
                Cell::from(lacking.join(" ")),
            ],
        };
        row.extend(u.per_rank.iter().map(|&c| Cell::from(c)));
        t.push(row);
    }
    t
}
