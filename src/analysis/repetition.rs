//! What repeats in a kernel stream, in the primitives every period finder shares: the steps of a
//! generation loop ([`crate::analysis::steps::structure`]), a diffusion model's denoising steps
//! ([`crate::analysis::workload::repetition`]) and the layers of a pass
//! ([`crate::analysis::layers::repeat`]). Names are identities (equal or not), never read.

use crate::model::FastMap;

/// Where each name occurs in a stream, in order.
pub fn occurrences(ids: impl Iterator<Item = u32>) -> FastMap<u32, Vec<usize>> {
    let mut positions: FastMap<u32, Vec<usize>> = FastMap::default();
    for (i, id) in ids.enumerate() {
        positions.entry(id).or_default().push(i);
    }
    positions
}

/// True if `x` occurs exactly `k` times per cycle of anchor positions `p`, in the same phase of
/// each cycle (all after each anchor occurrence, or all before). The primitive of both periods:
/// steps ([`crate::analysis::steps::structure`]) and layers ([`crate::analysis::layers::repeat`]).
pub fn fits(p: &[usize], x: &[usize], k: usize) -> bool {
    if x.len() != k * p.len() {
        return false;
    }
    let c = p.len();
    // After-form: cycle i = [p_i, p_{i+1}); before-form: cycle i = (p_{i-1}, p_i].
    let after = (0..c).all(|i| {
        let lo = p[i];
        let hi = if i + 1 < c { p[i + 1] } else { usize::MAX };
        x[i * k..(i + 1) * k].iter().all(|&q| q >= lo && q < hi)
    });
    after
        || (0..c).all(|i| {
            let lo = if i > 0 { p[i - 1] } else { 0 };
            let hi = p[i];
            x[i * k..(i + 1) * k].iter().all(|&q| (q > lo || i == 0) && q <= hi)
        })
}

/// True if `x` has one occurrence in every gap of anchor positions `p` (all after, or all before, each anchor).
pub fn interleaves(p: &[usize], x: &[usize]) -> bool {
    fits(p, x, 1)
}

/// True if `q` occurs exactly `k` times between every two consecutive anchor occurrences `p`,
/// and `k` times in all before the first and after the last (the first group of layers may start
/// before the anchor's first occurrence, and the last end after its last).
pub fn k_between(p: &[usize], q: &[usize], k: usize) -> bool {
    if q.len() != k * p.len() {
        return false;
    }
    let at = |x: usize| q.partition_point(|&y| y < x);
    p.windows(2).all(|w| at(w[1]) - at(w[0]) == k)
}

/// Share of `len` aligned positions from `a` and `b` holding the same name.
pub fn same_share(ids: &[u32], a: usize, b: usize, len: usize) -> f64 {
    if len == 0 {
        return 0.0;
    }
    let same = (0..len).filter(|&k| b + k < ids.len() && ids[a + k] == ids[b + k]).count();
    same as f64 / len as f64
}

/// Whether the occurrences are spaced evenly, each gap at least `min_gap` kernels and none more
/// than `tolerance` of the shortest (plus 2) longer.
pub fn regular(positions: &[usize], min_gap: usize, tolerance: f64) -> bool {
    let gaps = positions.windows(2).map(|w| w[1] - w[0]);
    let (lo, hi) = gaps.fold((usize::MAX, 0), |(lo, hi), g| (lo.min(g), hi.max(g)));
    lo >= min_gap && (hi - lo) as f64 <= tolerance * lo as f64 + 2.0
}

#[cfg(test)]
mod tests {
    use super::{fits, interleaves, k_between, occurrences, regular, same_share};

    #[test]
    fn occurrences_in_order_and_cycles_fitted() {
        let ids = [7, 1, 2, 7, 1, 2, 7, 1, 2];
        let at = occurrences(ids.iter().copied());
        assert_eq!(at[&7], [0, 3, 6]);
        assert!(fits(&at[&7], &at[&1], 1) && interleaves(&at[&7], &at[&2]));
        assert!(!fits(&at[&7], &at[&1], 2));
        assert!(k_between(&[0, 4], &[1, 2, 5, 6], 2) && !k_between(&[0, 4], &[1, 2, 3, 5], 2));
        assert_eq!(same_share(&ids, 0, 3, 3), 1.0);
        assert!(regular(&at[&7], 3, 0.1) && !regular(&[0, 3, 9], 3, 0.1));
    }
}
