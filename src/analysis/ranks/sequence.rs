//! Sequence matching: which collective of one rank is which of another's, when the ranks' traces
//! do not hold the same collectives (a kernel dropped at a session's start, a window cut
//! differently, a rank on another code path).
//!
//! A synchronous collective ends at nearly the same moment on every rank of its group, whatever
//! each rank did before it. So once each rank's clock is put on the first rank's, the occurrences of
//! one collective (the same key: process group and collective, or kernel name) on all ranks sit
//! together in time, and one that a rank lacks is a group with that rank missing.
//!
//! 1. The clock offset of each rank against the first is the densest agreement of the ends of its
//!    collectives with the first rank's: each occurrence against the first rank's occurrences near
//!    the same index, near the same index counted from the end (a window cut at the start or the
//!    end shifts the count) and near the same share of the way through (occurrences lost here and
//!    there); the differences, sorted, and the [`AGREEMENT_NS`]-wide window holding the most. Its
//!    *support* is that count over the fewer occurrences of the two ranks. Decode steps repeat
//!    their collectives at a steady period, so an offset one period off agrees nearly as often; it
//!    loses where the period breaks (step boundaries, other collectives), since synchronous ends
//!    agree to the microsecond and periods do not.
//! 2. With every rank supported by at least [`MIN_SUPPORT`], each key's occurrences of all ranks,
//!    on the first rank's clock, are grouped in time order: an occurrence joins the open group when
//!    it ends within the key's tolerance of the group's first end and its rank is not in it yet.
//!    A group with every rank is a matched collective; one without some ranks is a collective those
//!    ranks lack, named and left out.
//! 3. Otherwise (ends that never agree: point-to-point transfers with other peers), keys with the
//!    same count on every rank are paired by occurrence, as recorded; keys whose counts differ are
//!    left out whole, since their occurrences cannot be told apart.

use std::collections::BTreeMap;

/// Collective ends within this much of each other (ns), once clocks are aligned, agree.
pub const AGREEMENT_NS: i64 = 10_000;
/// Support (share of a rank's collectives whose ends agree with the first rank's on one offset)
/// needed to match occurrences by time.
pub const MIN_SUPPORT: f64 = 0.5;
/// Occurrences compared with the first rank's on each side of the same index.
const INDEX_WINDOW: usize = 8;
/// A rank missing more than this share of the collectives the ranks ran while all were traced does
/// not run the same sequence: the run cannot be matched.
pub const MAX_MISSING_SHARE: f64 = 0.2;

/// One key's occurrences on every rank: rows and their ends (own clock, ns), in time order.
pub struct KeyOccurrences<'a> {
    /// The key.
    pub key: &'a str,
    /// Per rank: (row, end).
    pub per_rank: Vec<Vec<(usize, i64)>>,
}

/// A group of one key's occurrences that end together: one collective, on the ranks present.
#[derive(Debug, Clone)]
pub struct Group {
    /// Index into the keys given.
    pub key: usize,
    /// Per rank: the row, if the rank ran it.
    pub rows: Vec<Option<usize>>,
    /// Its first end, on the first rank's clock (ns).
    pub end_ns: i64,
}

impl Group {
    /// Whether every rank ran it.
    pub fn complete(&self) -> bool {
        self.rows.iter().all(Option::is_some)
    }
}

/// How the ranks' sequences were matched.
pub enum Matching {
    /// By time: every group, complete or not, in time order; the offsets used (ns to add to each
    /// rank's clock) and each rank's support.
    ByTime {
        /// Every group, in time order.
        groups: Vec<Group>,
        /// Ns to add to each rank's clock.
        offsets: Vec<i64>,
        /// Each rank's support.
        support: Vec<f64>,
    },
    /// By occurrence (times never agreed): the keys paired, and the support each rank had.
    ByOccurrence {
        /// Each rank's support.
        support: Vec<f64>,
    },
}

/// The offset putting `other`'s ends on `first`'s clock, and its support.
fn offset_against(keys: &[KeyOccurrences<'_>], other: usize) -> (i64, f64) {
    let mut diffs: Vec<i64> = Vec::new();
    let (mut n_first, mut n_other) = (0usize, 0usize);
    for k in keys {
        let (a, b) = (&k.per_rank[0], &k.per_rank[other]);
        n_first += a.len();
        n_other += b.len();
        if a.is_empty() || b.is_empty() {
            continue;
        }
        let shift = a.len() as i64 - b.len() as i64;
        let ratio = a.len() as f64 / b.len() as f64;
        for (i, &(_, end)) in b.iter().enumerate() {
            let mut near: Vec<usize> = Vec::with_capacity(6 * INDEX_WINDOW + 3);
            for centre in [i as i64, i as i64 + shift, (i as f64 * ratio).round() as i64] {
                let lo = (centre - INDEX_WINDOW as i64).max(0);
                let hi = (centre + INDEX_WINDOW as i64).min(a.len() as i64 - 1);
                near.extend((lo..=hi).map(|j| j as usize));
            }
            near.sort_unstable();
            near.dedup();
            diffs.extend(near.into_iter().map(|j| a[j].1 - end));
        }
    }
    if diffs.is_empty() {
        return (0, 0.0);
    }
    diffs.sort_unstable();
    let (mut best, mut at) = (0usize, (0usize, 0usize));
    let mut lo = 0;
    for hi in 0..diffs.len() {
        while diffs[hi] - diffs[lo] > AGREEMENT_NS {
            lo += 1;
        }
        if hi - lo + 1 > best {
            best = hi - lo + 1;
            at = (lo, hi);
        }
    }
    let offset = diffs[(at.0 + at.1) / 2];
    (offset, best as f64 / n_first.min(n_other).max(1) as f64)
}

/// A key's grouping tolerance: under half the usual spacing of its occurrences on the first rank
/// (so two of them never fall in one group, and an occurrence a rank lacks is never stood in for
/// by its next one), at least 1 µs. Not capped at [`AGREEMENT_NS`]: the ends of point-to-point and
/// all-to-all kernels differ by tens of µs across ranks (a real 2-GPU capture: up to 26 µs),
/// though synchronous all-reduces agree to the µs.
fn tolerance(first: &[(usize, i64)]) -> i64 {
    let mut gaps: Vec<i64> = first.windows(2).map(|w| w[1].1 - w[0].1).filter(|&g| g > 0).collect();
    if gaps.is_empty() {
        return AGREEMENT_NS;
    }
    gaps.sort_unstable();
    (gaps[gaps.len() / 10] * 45 / 100).max(1_000)
}

/// Matches the ranks' occurrences of each key (see the module's text).
pub fn match_sequences(keys: &[KeyOccurrences<'_>], ranks: usize) -> Matching {
    let mut offsets = vec![0i64; ranks];
    let mut support = vec![1.0f64; ranks];
    for r in 1..ranks {
        (offsets[r], support[r]) = offset_against(keys, r);
    }
    if support.iter().any(|&s| s < MIN_SUPPORT) {
        return Matching::ByOccurrence { support };
    }
    let mut groups = Vec::new();
    for (ki, k) in keys.iter().enumerate() {
        let tol = tolerance(&k.per_rank[0]);
        let mut all: Vec<(i64, usize, usize)> = k
            .per_rank
            .iter()
            .enumerate()
            .flat_map(|(r, v)| {
                let offset = offsets[r];
                v.iter().map(move |&(row, end)| (end + offset, r, row))
            })
            .collect();
        all.sort_unstable();
        let mut open: Option<Group> = None;
        for (end, r, row) in all {
            match open.as_mut() {
                Some(g) if end - g.end_ns <= tol && g.rows[r].is_none() => g.rows[r] = Some(row),
                _ => {
                    groups.extend(open.take());
                    let mut rows = vec![None; ranks];
                    rows[r] = Some(row);
                    open = Some(Group { key: ki, rows, end_ns: end });
                }
            }
        }
        groups.extend(open);
    }
    groups.sort_by_key(|g| (g.end_ns, g.key));
    Matching::ByTime { groups, offsets, support }
}

/// The span every rank was traced in, on the first rank's clock: from the latest first collective
/// to the earliest last one (a group outside it is missing because a window was cut, not because
/// a rank skipped it).
pub fn common_span(keys: &[KeyOccurrences<'_>], offsets: &[i64]) -> (i64, i64) {
    let mut bounds: BTreeMap<usize, (i64, i64)> = BTreeMap::new();
    for k in keys {
        for (r, v) in k.per_rank.iter().enumerate() {
            if let (Some(first), Some(last)) = (v.first(), v.last()) {
                let e = bounds.entry(r).or_insert((i64::MAX, i64::MIN));
                e.0 = e.0.min(first.1 + offsets[r]);
                e.1 = e.1.max(last.1 + offsets[r]);
            }
        }
    }
    let from = bounds.values().map(|b| b.0).max().unwrap_or(0);
    let to = bounds.values().map(|b| b.1).min().unwrap_or(0);
    (from, to)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(per_rank: Vec<Vec<i64>>) -> Vec<Vec<(usize, i64)>> {
        per_rank.into_iter().map(|v| v.into_iter().enumerate().collect()).collect()
    }

    #[test]
    fn a_collective_one_rank_lacks_is_a_group_without_it_and_the_rest_pair_right() {
        // Every 100 µs; rank 1's clock is 3 ms behind and it lacks the third collective.
        let first: Vec<i64> = (0..20).map(|k| k * 100_000).collect();
        let mut second: Vec<i64> = first.iter().map(|e| e - 3_000_000).collect();
        second.remove(2);
        let keys = [KeyOccurrences { key: "pg 0 · allreduce", per_rank: key(vec![first, second]) }];
        let Matching::ByTime { groups, offsets, support } = match_sequences(&keys, 2) else { panic!("matched by time") };
        assert_eq!(offsets, [0, 3_000_000]);
        assert!(support[1] > 0.9, "{support:?}");
        assert_eq!(groups.len(), 20);
        let missing: Vec<usize> = (0..20).filter(|&k| !groups[k].complete()).collect();
        assert_eq!(missing, [2]);
        // After the gap, rank 1's occurrence 2 pairs with the first rank's occurrence 3.
        assert_eq!(groups[3].rows, [Some(3), Some(2)]);
    }

    #[test]
    fn ends_that_never_agree_fall_back_to_occurrences() {
        let first: Vec<i64> = vec![0, 31_000, 170_000, 350_000, 490_000];
        let second: Vec<i64> = vec![35_000, 140_000, 204_000, 418_000, 600_000];
        let keys = [KeyOccurrences { key: "SendRecv", per_rank: key(vec![first, second]) }];
        assert!(matches!(match_sequences(&keys, 2), Matching::ByOccurrence { .. }));
    }
}
