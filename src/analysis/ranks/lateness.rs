//! Why a rank is late at a collective: its host or its GPU, in figures that add up.
//!
//! A rank's *arrival* at a collective is its collective kernel's start (clocks aligned). Its
//! *window* runs from its end of the previous collective (for the first one, from the moment every
//! rank is being traced: the latest of the ranks' first events) to its arrival. In the window the
//! GPU is busy (the union of its kernels, memcpy and memset) or idle. The *median rank* is the one
//! whose arrival is the median (for an even number of ranks, the two middle ones, averaged); a
//! rank's lateness and its busy and idle excesses are measured against it:
//!
//! - `late` = arrival − the median arrival;
//! - `busy excess` = busy time in the window − the median rank's; `idle excess` likewise.
//!
//! Busy + idle = the window's length, so the two excesses add up to `late` exactly when the ranks
//! left the previous collective together (same window start); when they did not, the difference is
//! how much earlier or later this rank left it than the median rank. A rank whose idle excess is at
//! least ⅔ of its lateness waited for its host (`host`); one whose busy excess is, ran more GPU work
//! (`device`); else `mixed`. For a host-side lateness, the longest GPU idle gap of the window is
//! blamed on what the host was doing then: the outermost CPU op, user annotation or Python frame
//! covering most of it.

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
    /// Position of the rank in [`Run::ranks`].
    pub rank: usize,
    /// Arrival − the median arrival, ns.
    pub late_ns: i64,
    /// GPU busy time in the window − the median rank's, ns.
    pub busy_excess_ns: i64,
    /// GPU idle time in the window − the median rank's, ns.
    pub idle_excess_ns: i64,
    /// Which side made it late.
    pub side: LateSide,
    /// What the host was doing during the longest GPU idle gap of the window, and for how long it
    /// covers that gap (ns).
    pub host_op: Option<(String, i64)>,
    /// Phase, pass and layer of the collective on this rank.
    pub phase: Option<Phase>,
    pub pass: u32,
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

/// Frames looked at, walking back from a gap's middle, for the one open there.
const FRAME_WALK: usize = 100_000;

/// The outermost host ranges of a trace (CPU ops, annotations, Python frames with no parent),
/// sorted by start, with the longest one's duration (for searching by time).
pub(super) struct HostTops {
    /// The outermost ranges and Python frames, built on first use (only a late rank needs them).
    ranges: std::cell::OnceCell<Ranges>,
    steps: Vec<(i64, i64, u64)>,
}

/// A rank's outermost host ranges (and the longest one's duration) and its Python frames, by start.
struct Ranges {
    tops: Vec<(i64, i64, u32)>,
    longest: i64,
    frames: Vec<(i64, i64, u32)>,
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
        HostTops { ranges: std::cell::OnceCell::new(), steps }
    }

    fn ranges(&self, t: &Trace) -> &Ranges {
        self.ranges.get_or_init(|| {
            let o = &t.ops;
            // The outermost CPU ops and annotations (Python frames around them do not count: the
            // outermost frame is the interpreter's own bootstrap, which covers everything).
            let python = |i: usize| o.kind[i] == OpKind::PythonFunction;
            let outermost_op = |i: usize| {
                let mut p = o.parent[i];
                for _ in 0..256 {
                    if p == NONE {
                        return true;
                    }
                    if !python(p as usize) {
                        return false;
                    }
                    p = o.parent[p as usize];
                }
                true
            };
            let mut tops: Vec<(i64, i64, u32)> =
                (0..o.len()).filter(|&i| !python(i) && outermost_op(i)).map(|i| (o.ts[i], o.end(i), o.name[i])).collect();
            let mut frames: Vec<(i64, i64, u32)> =
                (0..o.len()).filter(|&i| python(i)).map(|i| (o.ts[i], o.end(i), o.name[i])).collect();
            frames.sort_unstable();
            tops.sort_unstable();
            let longest = tops.iter().map(|(a, b, _)| b - a).max().unwrap_or(0);
            Ranges { tops, longest, frames }
        })
    }

    /// What the host was doing in `[from, to)`: the outermost CPU op or annotation overlapping it
    /// the most, unless a Python frame covers more of it (between ops: the innermost frame open at
    /// the gap's middle, found by walking back from it past the frames that closed before).
    fn covering(&self, t: &Trace, from: i64, to: i64) -> Option<(u32, i64)> {
        let r = self.ranges(t);
        let op = Self::outermost(r, from, to);
        let mid = from + (to - from) / 2;
        let end = r.frames.partition_point(|&(a, _, _)| a <= mid);
        let frame = r.frames[..end]
            .iter()
            .rev()
            .take(FRAME_WALK)
            .find(|&&(_, b, _)| b > mid)
            .map(|&(a, b, name)| (name, b.min(to) - a.max(from)));
        match (op, frame) {
            (Some(o), Some(f)) if f.1 > o.1 => Some(f),
            (Some(o), _) => Some(o),
            (None, f) => f,
        }
    }

    /// The outermost CPU op or annotation overlapping `[from, to)` the most, with the overlap (ns).
    fn outermost(r: &Ranges, from: i64, to: i64) -> Option<(u32, i64)> {
        let start = r.tops.partition_point(|&(a, _, _)| a < from.saturating_sub(r.longest));
        let mut best: Option<(u32, i64)> = None;
        for &(a, b, name) in &r.tops[start..] {
            if a >= to {
                break;
            }
            let overlap = b.min(to) - a.max(from);
            if overlap > 0 && best.is_none_or(|(_, o)| overlap > o) {
                best = Some((name, overlap));
            }
        }
        best
    }

    /// N of the `ProfilerStep#N` covering time `t`.
    pub(super) fn step_at(&self, t: i64) -> Option<u64> {
        let k = self.steps.partition_point(|&(a, _, _)| a <= t);
        self.steps[..k].iter().rev().find(|&&(_, b, _)| b > t).map(|&(_, _, n)| n)
    }
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
            let windows: Vec<(i64, i64)> = (0..n)
                .map(|r| {
                    let from = if ci == 0 { traced_from } else { self.collectives[ci - 1].sides[r].end_ns };
                    (from.min(arrivals[r]), arrivals[r])
                })
                .collect();
            let mut stats: Vec<(i64, i64, (i64, i64))> = Vec::with_capacity(n); // busy, idle, gap (own clock)
            for (r, &(from, to)) in windows.iter().enumerate() {
                let offset = self.ranks[r].clock_offset_ns;
                let (b, gap) = busy_in(&busy[r], from - offset, to - offset);
                stats.push((b, (to - from) - b, gap));
            }
            let mid = |k: usize| middle.iter().map(|&r| [stats[r].0, stats[r].1][k] as f64).sum::<f64>() / middle.len() as f64;
            let (busy_mid, idle_mid) = (mid(0), mid(1));
            for r in 0..n {
                let late = (arrivals[r] as f64 - median_arrival).round() as i64;
                if late < LATE_FLOOR_NS {
                    continue;
                }
                out.push(self.late_row(c, r, late, stats[r], busy_mid, idle_mid, &hosts[r]));
            }
        }
        out
    }

    #[allow(clippy::too_many_arguments)]
    fn late_row(
        &self,
        c: &Collective,
        r: usize,
        late: i64,
        (busy, idle, gap): (i64, i64, (i64, i64)),
        busy_mid: f64,
        idle_mid: f64,
        host: &HostTops,
    ) -> Lateness {
        let busy_excess = (busy as f64 - busy_mid).round() as i64;
        let idle_excess = (idle as f64 - idle_mid).round() as i64;
        let side = if idle_excess * 3 >= late * 2 {
            LateSide::Host
        } else if busy_excess * 3 >= late * 2 {
            LateSide::Device
        } else {
            LateSide::Mixed
        };
        let t = &self.ranks[r].trace.analysis.trace;
        let host_op = (gap.1 > gap.0)
            .then(|| host.covering(t, gap.0, gap.1))
            .flatten()
            .map(|(name, covers)| (crate::support::text::ellipsis(t.name(name), 120), covers));
        let s = &c.sides[r];
        Lateness {
            collective: c.index,
            rank: r,
            late_ns: late,
            busy_excess_ns: busy_excess,
            idle_excess_ns: idle_excess,
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
