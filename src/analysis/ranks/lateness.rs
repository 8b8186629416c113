//! Why a rank is late at a collective: its host or its GPU, in figures that add up.
//!
//! A rank's *arrival* at a collective is its collective kernel's start (clocks aligned). Its
//! *window* runs from its end of the previous collective to its arrival; before the first
//! collective of the trace, from the moment the first rank began the step (the earliest start of
//! the pass, or `ProfilerStep#N`, each rank is in), so a rank that began its step late shows it as
//! idle time. In the window the GPU is busy (the union of its kernels, memcpy and memset) or idle.
//! The *median rank* is the one whose arrival is the median (for an even number of ranks, the two
//! middle ones, averaged); a rank's lateness and its busy and idle excesses are measured against
//! it:
//!
//! - `late` = arrival − the median arrival;
//! - `busy excess` = busy time in the window − the median rank's; `idle excess` likewise;
//! - `remainder` = `late` − busy excess − idle excess.
//!
//! Busy + idle = the window's length, so the excesses add up to `late` when the windows open
//! together (remainder 0); the remainder is how much earlier or later this rank's window opened
//! than the median rank's (a previous collective's end skew, a clock residual). A rank whose idle
//! excess is at least ⅔ of its lateness waited for its host (`host`); one whose busy excess is,
//! ran more GPU work (`device`); else `mixed`. For a host-side lateness, the longest GPU idle gap
//! of the window is blamed on what the host was doing then: the innermost CPU op, user annotation
//! or Python frame covering it (from the range overlapping it most, down to a child while one
//! covers at least 90% as much), never a step marker, which covers the whole step.

use super::{Collective, Rank};
use crate::analysis::phases::Phase;
use crate::model::{OpKind, Trace, NONE};

/// Arrivals later than the median by less than this (ns) are noise, not lateness: kernel launch
/// jitter and clock alignment residuals are a few µs to tens of µs.
pub const LATE_FLOOR_NS: i64 = 50_000;

/// Which side of a rank made it late.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LateSide {
    /// Its GPU sat idle waiting for its host (idle excess ≥ ⅔ of the lateness).
    Host,
    /// Its GPU ran more work than the median rank's (busy excess ≥ ⅔).
    Device,
    /// Neither dominates.
    Mixed,
}

impl LateSide {
    /// The name used in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            LateSide::Host => "host",
            LateSide::Device => "device",
            LateSide::Mixed => "mixed",
        }
    }
}

/// One rank's lateness at one collective.
#[derive(Debug, Clone)]
pub struct Lateness {
    /// The collective's index (its row in `collectives`).
    pub collective: usize,
    /// Position of the rank in `Run::ranks`.
    pub rank: usize,
    /// Arrival − the median arrival, ns.
    pub late_ns: i64,
    /// GPU busy time in the window − the median rank's, ns.
    pub busy_excess_ns: i64,
    /// GPU idle time in the window − the median rank's, ns.
    pub idle_excess_ns: i64,
    /// What busy and idle excess leave of `late_ns` (windows that open at different moments on the
    /// ranks: a previous collective's end skew, a clock residual), ns; normally near 0.
    pub remainder_ns: i64,
    /// Which side made it late.
    pub side: LateSide,
    /// What the host was doing during the longest GPU idle gap of the window, and for how long it
    /// covers that gap (ns).
    pub host_op: Option<(String, i64)>,
    /// Phase, pass and layer of the collective on this rank.
    pub phase: Option<Phase>,
    /// The pass it is late in.
    pub pass: u32,
    /// The layer it is late in.
    pub layer: u32,
    /// N of the `ProfilerStep#N` around the collective on this rank.
    pub step: Option<u64>,
}

/// The median of `v` (mean of the two middle values for an even count), and the positions it is
/// taken from.
fn median_of(v: &[i64]) -> (f64, Vec<usize>) {
    let mut idx: Vec<usize> = (0..v.len()).collect();
    idx.sort_by_key(|&i| (v[i], i));
    let n = idx.len();
    if n == 0 {
        return (0.0, Vec::new());
    }
    if n % 2 == 1 {
        (v[idx[n / 2]] as f64, vec![idx[n / 2]])
    } else {
        ((v[idx[n / 2 - 1]] as f64 + v[idx[n / 2]] as f64) / 2.0, vec![idx[n / 2 - 1], idx[n / 2]])
    }
}

/// One rank's GPU activity as merged busy intervals (own clock, ns), sorted.
pub(super) fn busy_intervals(t: &Trace) -> Vec<(i64, i64)> {
    let g = &t.gpu;
    crate::analysis::timeline::merge((0..g.len()).map(|i| (g.ts[i], g.end(i))).filter(|(a, b)| b > a).collect())
}

/// One rank's window before a collective (its own clock): GPU busy and idle time in it (ns),
/// and its longest idle gap.
struct Window {
    busy: i64,
    idle: i64,
    gap: (i64, i64),
}

/// The busy and idle time (ns) of the median-arriving ranks' windows, averaged: what a rank's
/// own is measured against.
struct Typical {
    busy: f64,
    idle: f64,
}

/// Busy time within `[from, to)` and the longest idle gap there, from merged intervals.
fn busy_in(busy: &[(i64, i64)], from: i64, to: i64) -> (i64, (i64, i64)) {
    let mut total = 0;
    let mut gap = (from, from);
    let mut cursor = from;
    let first = busy.partition_point(|&(_, b)| b <= from);
    for &(a, b) in &busy[first..] {
        if a >= to {
            break;
        }
        let (a, b) = (a.max(from), b.min(to));
        if a > cursor && a - cursor > gap.1 - gap.0 {
            gap = (cursor, a);
        }
        total += b - a;
        cursor = cursor.max(b);
    }
    if to > cursor && to - cursor > gap.1 - gap.0 {
        gap = (cursor, to);
    }
    (total, gap)
}

/// A rank's host ranges (CPU ops, annotations, Python frames) as the tree their time nesting
/// makes, and its `ProfilerStep#N` markers (for searching by time).
pub(super) struct HostTops {
    /// The tree, built on first use (only a late rank needs it).
    tree: std::cell::OnceCell<Tree>,
    steps: Vec<(i64, i64, u64)>,
}

/// Host ranges by nesting: the roots (no enclosing range) by start, each range's children by start.
struct Tree {
    /// Per thread: its roots by start, and the longest one's duration.
    roots: std::collections::HashMap<u32, (Vec<u32>, i64)>,
    /// Children of range `i`: `children[first[i]..first[i + 1]]`.
    first: Vec<u32>,
    children: Vec<u32>,
    /// Whether a range is a step marker (`ProfilerStep#N`, an engine's step annotation): never the
    /// answer, since it covers the whole step.
    step_marker: Vec<bool>,
}

impl Tree {
    fn new(t: &Trace) -> Tree {
        let o = &t.ops;
        let n = o.len();
        let mut count = vec![0u32; n + 1];
        for i in 0..n {
            if o.parent[i] != NONE {
                count[o.parent[i] as usize] += 1;
            }
        }
        let mut first = vec![0u32; n + 1];
        for i in 0..n {
            first[i + 1] = first[i] + count[i];
        }
        let mut fill = first.clone();
        let mut children = vec![0u32; first[n] as usize];
        let mut roots: std::collections::HashMap<u32, (Vec<u32>, i64)> = std::collections::HashMap::new();
        for i in 0..n {
            match o.parent[i] {
                NONE => {
                    let e = roots.entry(o.thread[i]).or_default();
                    e.0.push(i as u32);
                    e.1 = e.1.max(o.dur[i]);
                }
                p => {
                    children[fill[p as usize] as usize] = i as u32;
                    fill[p as usize] += 1;
                }
            }
        }
        let by_start = |v: &mut [u32]| v.sort_unstable_by_key(|&i| (o.ts[i as usize], i));
        for (list, _) in roots.values_mut() {
            by_start(list);
        }
        for i in 0..n {
            by_start(&mut children[first[i] as usize..first[i + 1] as usize]);
        }
        let rules = crate::analysis::phases::rules::PhaseRules::builtin();
        let mut marker = crate::analysis::per_name::PerName::new(t.names.len());
        let step_marker = (0..n)
            .map(|i| {
                let id = o.name[i];
                *marker.get_or_insert_with(id, || {
                    let name = t.name(id);
                    name.starts_with("ProfilerStep#")
                        || crate::analysis::steps::annotations::parse_step_name(rules, name).is_some_and(|s| !s.module_run)
                })
            })
            .collect();
        Tree { roots, first, children, step_marker }
    }

    /// The range of `list[start..]` (sorted by start) overlapping `[from, to)` the most, with the
    /// overlap.
    fn widest(t: &Trace, list: &[u32], start: usize, from: i64, to: i64) -> Option<(u32, i64)> {
        let o = &t.ops;
        let mut best: Option<(u32, i64)> = None;
        for &i in &list[start..] {
            let i_ = i as usize;
            if o.ts[i_] >= to {
                break;
            }
            let overlap = o.end(i_).min(to) - o.ts[i_].max(from);
            if overlap > 0 && best.is_none_or(|(_, b)| overlap > b) {
                best = Some((i, overlap));
            }
        }
        best
    }

    /// The innermost range of thread `thread` (of any, when unknown) covering `[from, to)` (see
    /// [`HostTops::covering`]). Siblings on one thread do not overlap, so their ends are sorted
    /// too; a thread's roots are searched back by its longest one.
    fn innermost(&self, t: &Trace, thread: Option<u32>, from: i64, to: i64) -> Option<(u32, i64)> {
        let o = &t.ops;
        let roots = self.roots.iter().filter(|(th, _)| thread.is_none_or(|want| **th == want));
        let mut cur = roots
            .filter_map(|(_, (list, longest))| {
                let start = list.partition_point(|&i| o.ts[i as usize] < from.saturating_sub(*longest));
                Self::widest(t, list, start, from, to)
            })
            .max_by_key(|&(i, overlap)| (overlap, std::cmp::Reverse(i)))?;
        loop {
            let i = cur.0 as usize;
            let kids = &self.children[self.first[i] as usize..self.first[i + 1] as usize];
            let start = kids.partition_point(|&k| o.end(k as usize) <= from);
            let Some(kid) = Self::widest(t, kids, start, from, to) else { break };
            if self.step_marker[i] || kid.1 * 10 >= cur.1 * 9 {
                cur = kid;
            } else {
                break;
            }
        }
        (!self.step_marker[cur.0 as usize]).then_some(cur)
    }
}

impl HostTops {
    pub(super) fn new(t: &Trace) -> Self {
        let o = &t.ops;
        // One look per distinct name, not per op.
        let mut step_of: crate::analysis::per_name::PerName<Option<u64>> = crate::analysis::per_name::PerName::new(t.names.len());
        let mut steps: Vec<(i64, i64, u64)> = (0..o.len())
            .filter(|&i| o.kind[i] != OpKind::PythonFunction)
            .filter_map(|i| {
                let id = o.name[i];
                let n = (*step_of.get_or_insert_with(id, || t.name(id).strip_prefix("ProfilerStep#")?.parse().ok()))?;
                Some((o.ts[i], o.end(i), n))
            })
            .collect();
        steps.sort_unstable();
        HostTops { tree: std::cell::OnceCell::new(), steps }
    }

    /// What the host thread that launches the GPU work (`thread`; any when unknown) was doing in
    /// `[from, to)`: the innermost CPU op, annotation or Python frame that covers it, found from the range overlapping it the most by going down to a child
    /// while one covers at least 90% as much; never a step marker (it covers the whole step: the
    /// search goes on into its widest child). The range's name and overlap (ns).
    fn covering(&self, t: &Trace, thread: Option<u32>, from: i64, to: i64) -> Option<(u32, i64)> {
        let tree = self.tree.get_or_init(|| Tree::new(t));
        tree.innermost(t, thread, from, to).map(|(i, overlap)| (t.ops.name[i as usize], overlap))
    }

    /// N of the `ProfilerStep#N` covering time `t`.
    pub(super) fn step_at(&self, t: i64) -> Option<u64> {
        self.step_covering(t).map(|s| s.2)
    }

    /// Start of the `ProfilerStep#N` covering time `t`.
    pub(super) fn step_start_at(&self, t: i64) -> Option<i64> {
        self.step_covering(t).map(|s| s.0)
    }

    fn step_covering(&self, t: i64) -> Option<(i64, i64, u64)> {
        let k = self.steps.partition_point(|&(a, _, _)| a <= t);
        self.steps[..k].iter().rev().find(|&&(_, b, _)| b > t).copied()
    }
}

/// The host thread that launched GPU row `row` (its runtime call's, else its op's).
fn launching_thread(t: &Trace, row: usize) -> Option<u32> {
    let l = t.gpu.launch[row];
    if l != NONE {
        return Some(t.launches.thread[l as usize]);
    }
    let o = t.gpu.cpu_op[row];
    (o != NONE).then(|| t.ops.thread[o as usize])
}

/// When a rank's host asked for GPU row `row`: its launch (or op) time, else the kernel's own start.
pub(super) fn host_time(t: &Trace, row: usize) -> i64 {
    crate::analysis::steps::passes::cpu_time(t, row).unwrap_or(t.gpu.ts[row])
}

/// Every (collective, rank) where the rank arrives at least [`LATE_FLOOR_NS`] after the median
/// rank, with its busy and idle excess, side, and host op; in collective then rank order.
/// `hosts` are the ranks' host ranges, in `ranks` order.
pub(super) fn lateness(ranks: &[Rank], collectives: &[Collective], hosts: &[HostTops]) -> Vec<Lateness> {
    Finder { ranks, collectives }.all(hosts)
}

/// What [`lateness`] reads.
struct Finder<'a> {
    ranks: &'a [Rank],
    collectives: &'a [Collective],
}

impl Finder<'_> {
    fn all(&self, hosts: &[HostTops]) -> Vec<Lateness> {
        let n = self.ranks.len();
        if n < 2 || self.collectives.is_empty() {
            return Vec::new();
        }
        let busy: Vec<Vec<(i64, i64)>> = self.ranks.iter().map(|r| busy_intervals(&r.trace.analysis.trace)).collect();
        // The moment every rank is being traced (aligned): the latest of the ranks' first events.
        let traced_from = self.ranks.iter().map(|r| r.trace.analysis.trace.time_origin_ns + r.clock_offset_ns).max().unwrap_or(0);
        let mut out = Vec::new();
        for (ci, c) in self.collectives.iter().enumerate() {
            let arrivals: Vec<i64> = c.sides.iter().map(|s| s.start_ns).collect();
            let (median_arrival, middle) = median_of(&arrivals);
            // Before the first collective, every rank's window opens when the first rank began the
            // step (the earliest start of the pass, or step marker, each rank is in).
            let step_start = if ci == 0 { self.step_start(c, hosts).unwrap_or(traced_from) } else { traced_from };
            let windows: Vec<(i64, i64)> = (0..n)
                .map(|r| {
                    let from = if ci == 0 { step_start } else { self.collectives[ci - 1].sides[r].end_ns };
                    (from.min(arrivals[r]), arrivals[r])
                })
                .collect();
            let mut stats: Vec<Window> = Vec::with_capacity(n);
            for (r, &(from, to)) in windows.iter().enumerate() {
                let offset = self.ranks[r].clock_offset_ns;
                let (busy, gap) = busy_in(&busy[r], from - offset, to - offset);
                stats.push(Window { busy, idle: (to - from) - busy, gap });
            }
            let mean = |f: fn(&Window) -> i64| middle.iter().map(|&r| f(&stats[r]) as f64).sum::<f64>() / middle.len() as f64;
            let typical = Typical { busy: mean(|w| w.busy), idle: mean(|w| w.idle) };
            for r in 0..n {
                let late = (arrivals[r] as f64 - median_arrival).round() as i64;
                if late < LATE_FLOOR_NS {
                    continue;
                }
                out.push(self.late_row(c, r, late, &stats[r], &typical, &hosts[r]));
            }
        }
        out
    }

    /// The earliest start, over the ranks, of the step each is in at collective `c` (its pass's
    /// first kernel, else the `ProfilerStep#N` around its launch), aligned.
    fn step_start(&self, c: &Collective, hosts: &[HostTops]) -> Option<i64> {
        (0..self.ranks.len())
            .filter_map(|r| {
                let a = &self.ranks[r].trace.analysis;
                let s = &c.sides[r];
                let pass = a.phases.passes.get(s.pass as usize).map(|p| p.start_ns);
                let own = pass.or_else(|| hosts[r].step_start_at(host_time(&a.trace, s.row)))?;
                Some(own + self.ranks[r].clock_offset_ns)
            })
            .min()
    }

    /// Rank `r`'s lateness `late` (ns) at collective `c`, split by how its window before the
    /// collective differs from the typical rank's.
    fn late_row(&self, c: &Collective, r: usize, late: i64, window: &Window, typical: &Typical, host: &HostTops) -> Lateness {
        let busy_excess = (window.busy as f64 - typical.busy).round() as i64;
        let idle_excess = (window.idle as f64 - typical.idle).round() as i64;
        let side = if idle_excess * 3 >= late * 2 {
            LateSide::Host
        } else if busy_excess * 3 >= late * 2 {
            LateSide::Device
        } else {
            LateSide::Mixed
        };
        let gap = window.gap;
        let t = &self.ranks[r].trace.analysis.trace;
        let thread = launching_thread(t, c.sides[r].row);
        let host_op = (gap.1 > gap.0)
            .then(|| host.covering(t, thread, gap.0, gap.1))
            .flatten()
            .map(|(name, covers)| (crate::support::text::ellipsis(t.name(name), 120), covers));
        let s = &c.sides[r];
        Lateness {
            collective: c.index,
            rank: r,
            late_ns: late,
            busy_excess_ns: busy_excess,
            idle_excess_ns: idle_excess,
            remainder_ns: late - busy_excess - idle_excess,
            side,
            host_op,
            phase: s.phase,
            pass: s.pass,
            layer: s.layer,
            step: s.step,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median_of(&[5, 1, 3]), (3.0, vec![2]));
        assert_eq!(median_of(&[4, 1, 3, 10]), (3.5, vec![2, 0]));
    }

    #[test]
    fn busy_time_and_longest_gap_in_a_window() {
        let busy = [(0, 10), (20, 30), (60, 70)];
        assert_eq!(busy_in(&busy, 5, 65), (5 + 10 + 5, (30, 60)));
        assert_eq!(busy_in(&busy, 70, 100), (0, (70, 100)));
    }
}
