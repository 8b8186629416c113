//! `straggler`: across the ranks of a run, one rank arrives last at the collectives and every
//! other rank waits for it. Saving: what the others wait for it (its arrival minus the median
//! arrival, summed over its late arrivals), per step. The cause is the late rank's host (its GPU
//! idle, waiting for launches) or its device (more GPU work than the median rank), from
//! [`crate::analysis::ranks`]' lateness.

use super::{Finding, Kind};
use crate::analysis::phases::Phase;
use crate::analysis::ranks::{LateSide, Run, LATE_FLOOR_NS};

/// One finding per rank that arrives last, the most often late first.
pub fn stragglers(run: &Run) -> Vec<Finding> {
    let late = run.lateness();
    let top = run.finding();
    let mut out = Vec::new();
    for (k, e) in run.excess().into_iter().enumerate() {
        let own: Vec<_> = late.iter().filter(|l| l.rank == e.rank).collect();
        let total_ns: i64 = own.iter().map(|l| l.late_ns).sum();
        if total_ns <= 0 {
            continue;
        }
        let rank = &run.ranks[e.rank];
        // Steps: the ProfilerStep numbers its collectives ran in, else its passes, else the window.
        let mut steps: Vec<u64> = run.collectives.iter().filter_map(|c| c.sides[e.rank].step).collect();
        steps.sort_unstable();
        steps.dedup();
        let passes = rank.trace.analysis.phases.passes.iter().filter(|p| !p.incomplete && p.phase != Phase::Stage).count();
        let per = if !steps.is_empty() { steps.len() } else { passes.max(1) };
        let (from, to) = run
            .collectives
            .iter()
            .fold((i64::MAX, i64::MIN), |(lo, hi), c| (lo.min(c.sides[e.rank].start_ns), hi.max(c.sides[e.rank].end_ns)));
        let step_us = (to - from).max(1) as f64 / 1e3 / per as f64;
        let saving_us = total_ns as f64 / 1e3 / per as f64;
        let host_ns: i64 = own.iter().filter(|l| l.side == LateSide::Host).map(|l| l.late_ns).sum();
        let host = 2 * host_ns >= total_ns;
        let evidence = match (&top, k) {
            (Some(s), 0) => s.clone(),
            _ => format!(
                "rank {} arrives last at {} collectives, {:.1} µs late in all",
                rank.rank,
                e.times_last,
                total_ns as f64 / 1e3
            ),
        };
        let fix = if host {
            let op = own.iter().filter_map(|l| l.host_op.as_ref()).max_by_key(|(_, ns)| *ns).map(|(op, _)| op.as_str());
            format!(
                "free the late rank's host ({:.0}% of its lateness is its GPU idle, waiting for launches{}): pin each rank to its own cores (numactl --cpunodebind, taskset; OMP_NUM_THREADS), keep data loading off the step (DataLoader num_workers, pin_memory=True), gc.freeze() after warm-up",
                100.0 * host_ns as f64 / total_ns as f64,
                op.map_or(String::new(), |op| format!(" while the host runs {op}"))
            )
        } else {
            format!(
                "balance the GPU work ({:.0}% of the late rank's lateness is more GPU work): it runs more {} than the median rank (MoE expert load: vLLM/SGLang --enable-eplb; uneven sequence lengths across data-parallel ranks: batch by length); if the work is equal, check its clocks and power (nvidia-smi -q -d CLOCK,PERFORMANCE)",
                100.0 - 100.0 * host_ns as f64 / total_ns as f64,
                e.by_category.first().map_or("work", |(c, _)| c.as_str())
            )
        };
        let residual = run.ranks.iter().map(|r| r.residual_ns).max().unwrap_or(0);
        let confidence = if residual > LATE_FLOOR_NS {
            format!("low: the ranks' clocks align only within {:.1} ms", residual as f64 / 1e6)
        } else if own.len() < 3 {
            format!("low: {} late arrival(s) only", own.len())
        } else {
            "high".to_string()
        };
        let worst = own.iter().max_by_key(|l| l.late_ns).map(|l| &run.collectives[l.collective].sides[e.rank]);
        out.push(Finding {
            kind: Kind::Straggler,
            scope: format!("rank {} of {} ranks given", rank.rank, run.ranks.len()),
            phase: None,
            device: None,
            passes: per,
            subject: String::new(),
            evidence,
            saving_us,
            saving_pct: 100.0 * saving_us / step_us,
            confidence,
            fix,
            check: format!(
                "rank {} within {:.0} µs of the median arrival at every collective",
                rank.rank,
                LATE_FLOOR_NS as f64 / 1e3
            ),
            from_ns: worst.map_or(from, |s| s.start_ns - rank.clock_offset_ns),
            to_ns: worst.map_or(to, |s| s.end_ns - rank.clock_offset_ns),
        });
    }
    out.sort_by(|x, y| y.saving_us.total_cmp(&x.saving_us));
    out
}
