//! Pairs the GPU rows a graph launch replayed with the dispatches recorded when the graph was
//! captured, in order, by key (a kernel's name, or the kind of a copy or fill).
//!
//! Three ways, the first that fits: the same keys in the same order; the same keys in another
//! order (kernels of several streams finish out of program order: the n-th replay of a name is
//! the n-th dispatch of it); else a forward walk that passes over dispatches the replay lacks and
//! leaves replayed rows no dispatch matches unpaired. Whatever is passed over is counted.

use crate::model::FastMap;

/// The key of a captured dispatch whose kernel is not named (it pairs only by position).
pub const ANY: u32 = u32::MAX;
/// The key of a memory copy (replayed or dispatched).
pub const MEMCPY: u32 = u32::MAX - 1;
/// The key of a memory fill.
pub const MEMSET: u32 = u32::MAX - 2;

/// How far past the next dispatch the forward walk looks for a replayed row's match: a little
/// recorded noise is passed over, a different graph is not forced onto the replay.
const WINDOW: usize = 64;

/// Replayed rows paired with dispatches, by index into the two sequences.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Alignment {
    /// `(replayed, dispatched)` index pairs.
    pub pairs: Vec<(u32, u32)>,
    /// Dispatches no replayed row took.
    pub skipped: usize,
    /// Replayed rows no dispatch matched.
    pub unaligned: usize,
}

impl Alignment {
    /// Mismatches (skipped dispatches and unpaired rows).
    pub fn misses(&self) -> usize {
        self.skipped + self.unaligned
    }
    /// True when the two sequences are close enough to trust the pairs: at most 5% of either
    /// side (and at least one row) unpaired.
    pub fn acceptable(&self, replayed: usize, dispatched: usize) -> bool {
        !self.pairs.is_empty() && self.unaligned * 20 <= replayed && self.skipped * 20 <= dispatched.max(20)
    }
}

/// Pairs `replayed` keys (in GPU order) with `dispatched` keys (in capture order).
pub fn align(replayed: &[u32], dispatched: &[u32]) -> Alignment {
    if replayed.len() == dispatched.len() {
        if replayed.iter().zip(dispatched).all(|(&r, &d)| r == d || d == ANY) {
            return Alignment { pairs: (0..replayed.len() as u32).map(|i| (i, i)).collect(), skipped: 0, unaligned: 0 };
        }
        if let Some(pairs) = by_occurrence(replayed, dispatched) {
            return Alignment { pairs, skipped: 0, unaligned: 0 };
        }
    }
    forward(replayed, dispatched)
}

/// The n-th replayed row of a key with the n-th dispatch of it, when both sides hold the same
/// keys the same number of times.
fn by_occurrence(replayed: &[u32], dispatched: &[u32]) -> Option<Vec<(u32, u32)>> {
    let mut queues: FastMap<u32, std::collections::VecDeque<u32>> = FastMap::default();
    for (j, &d) in dispatched.iter().enumerate() {
        queues.entry(d).or_default().push_back(j as u32);
    }
    let mut pairs = Vec::with_capacity(replayed.len());
    for (i, r) in replayed.iter().enumerate() {
        let j = queues.get_mut(r)?.pop_front()?;
        pairs.push((i as u32, j));
    }
    pairs.sort_unstable_by_key(|p| p.0);
    Some(pairs)
}

/// The forward walk: each replayed row takes the next dispatch of its key within [`WINDOW`].
fn forward(replayed: &[u32], dispatched: &[u32]) -> Alignment {
    let mut out = Alignment::default();
    let mut next = 0;
    for (i, &r) in replayed.iter().enumerate() {
        let end = dispatched.len().min(next + WINDOW);
        match dispatched[next.min(end)..end].iter().position(|&d| d == r) {
            Some(k) => {
                out.pairs.push((i as u32, (next + k) as u32));
                out.skipped += k;
                next += k + 1;
            }
            None => out.unaligned += 1,
        }
    }
    out.skipped += dispatched.len() - next.min(dispatched.len());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_sequence_pairs_by_position_and_unnamed_dispatches_follow_it() {
        let a = align(&[1, 2, 3], &[1, ANY, 3]);
        assert_eq!(a.pairs, vec![(0, 0), (1, 1), (2, 2)]);
        assert_eq!(a.misses(), 0);
    }

    #[test]
    fn kernels_finishing_out_of_order_pair_by_occurrence() {
        // Two streams: the replay finished 5 before 4; each name's n-th with its n-th.
        let a = align(&[1, 5, 4, 1], &[1, 4, 5, 1]);
        assert_eq!(a.pairs, vec![(0, 0), (1, 2), (2, 1), (3, 3)]);
        assert_eq!(a.misses(), 0);
    }

    #[test]
    fn extra_dispatches_are_skipped_and_missing_ones_leave_rows_unpaired() {
        // Capture recorded 9 (a warm-up fill) that the replay lacks; the replay ran 7 that no
        // dispatch names.
        let a = align(&[1, 2, 7, 3], &[1, 9, 2, 3, 4]);
        assert_eq!(a.pairs, vec![(0, 0), (1, 2), (3, 3)]);
        assert_eq!((a.skipped, a.unaligned), (2, 1), "9 and the tail 4 skipped, 7 unpaired");
        assert!(!a.acceptable(4, 5), "a quarter unpaired is not a small mismatch");
        let long: Vec<u32> = (0..100).collect();
        let mut captured = long.clone();
        captured.insert(50, 999);
        let a = align(&long, &captured);
        assert_eq!((a.pairs.len(), a.skipped, a.unaligned), (100, 1, 0));
        assert!(a.acceptable(100, 101));
    }

    #[test]
    fn a_different_graph_is_not_forced() {
        let a = align(&[1, 2, 3, 4], &[5, 6, 7, 8]);
        assert!(a.pairs.is_empty());
        assert!(!a.acceptable(4, 4));
    }
}
