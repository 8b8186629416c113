//! Global sequence alignment (Needleman-Wunsch) of two kernel sequences over their categories,
//! with kernel-name similarity as tie-breaker.
//!
//! Scores: same category (or equivalence class, see `equivalents`):
//! `SAME_CATEGORY × family weight + SIMILARITY × similarity`; same family only:
//! `SAME_FAMILY + SIMILARITY × similarity`; different families: `DIFFERENT_FAMILY` (worse than
//! two gaps, so such kernels are never paired); gap: `GAP × family weight` (leaving a copy
//! unpaired costs less than a GEMM). Similarity is the Jaccard index of the names' word sets
//! (0..1), so among kernels of one category the alignment prefers the same or a similar name. Time and
//! memory are O(n·m) (one byte of traceback per cell); callers align one layer and the pre/post
//! parts only.

use std::collections::HashSet;

/// Score of pairing two kernels of the same category (before name similarity).
pub const SAME_CATEGORY: f32 = 4.0;
/// Score of pairing two kernels of the same family but different categories.
pub const SAME_FAMILY: f32 = 0.5;
/// Score of pairing kernels of different families.
pub const DIFFERENT_FAMILY: f32 = -3.0;
/// Score of leaving a kernel unpaired.
pub const GAP: f32 = -1.0;
/// Weight of name similarity (0..1): a tie-breaker, smaller than any class difference.
pub const SIMILARITY: f32 = 0.5;

/// What the alignment compares about one kernel (ids in a space shared by both sides).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Token {
    /// Category family of the kernel.
    pub family: u32,
    /// Category of the kernel.
    pub category: u32,
    /// Index into the name list given to [`NameSimilarity`] for this side.
    pub name: u32,
    /// Weight of a same-category pairing of this kernel (its family's weight, 1 by default).
    pub weight: f32,
}

/// One column of an alignment (indices into the aligned sequences).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// `a[i]` paired with `b[j]`.
    Pair(usize, usize),
    /// `a[i]` has no partner.
    OnlyA(usize),
    /// `b[j]` has no partner.
    OnlyB(usize),
}

/// The lower-case words (letters and digits, at least one letter, length ≥ 2) of a kernel name.
pub fn name_words(name: &str) -> HashSet<String> {
    name.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| w.len() >= 2 && w.chars().any(|c| c.is_ascii_alphabetic()))
        .map(|w| w.to_ascii_lowercase())
        .collect()
}

/// Jaccard similarity of the word sets of two names (1.0 for equal names).
pub fn jaccard(x: &HashSet<String>, y: &HashSet<String>) -> f32 {
    if x.is_empty() && y.is_empty() {
        return 1.0;
    }
    let common = x.intersection(y).count();
    common as f32 / (x.len() + y.len() - common) as f32
}

/// Name similarity between the distinct names of side A and side B, computed once per pair.
pub struct NameSimilarity {
    cols: usize,
    sim: Vec<f32>,
}

impl NameSimilarity {
    /// Builds the table from the distinct names of each side.
    pub fn new(names_a: &[&str], names_b: &[&str]) -> Self {
        let wa: Vec<_> = names_a.iter().map(|n| name_words(n)).collect();
        let wb: Vec<_> = names_b.iter().map(|n| name_words(n)).collect();
        let mut sim = Vec::with_capacity(wa.len() * wb.len());
        for (x, nx) in wa.iter().zip(names_a) {
            for (y, ny) in wb.iter().zip(names_b) {
                sim.push(if nx == ny { 1.0 } else { jaccard(x, y).min(0.99) });
            }
        }
        NameSimilarity { cols: wb.len(), sim }
    }
    /// Similarity of name `i` of A and name `j` of B.
    pub fn get(&self, i: u32, j: u32) -> f32 {
        self.sim.get(i as usize * self.cols + j as usize).copied().unwrap_or(0.0)
    }
}

/// Score of pairing two tokens.
pub fn pair_score(x: &Token, y: &Token, sim: &NameSimilarity) -> f32 {
    if x.category == y.category {
        SAME_CATEGORY * x.weight.min(y.weight) + SIMILARITY * sim.get(x.name, y.name)
    } else if x.family == y.family {
        SAME_FAMILY + SIMILARITY * sim.get(x.name, y.name)
    } else {
        DIFFERENT_FAMILY
    }
}

/// Score of leaving a kernel unpaired: minor kernels (low family weight) cost less.
pub fn gap_score(x: &Token) -> f32 {
    GAP * x.weight
}

const DIAG: u8 = 0;
const UP: u8 = 1; // a[i] unpaired
const LEFT: u8 = 2; // b[j] unpaired

/// Aligns `a` and `b` globally; returns the columns in order. Ties prefer pairing, then
/// leaving the A kernel unpaired.
pub fn align(a: &[Token], b: &[Token], sim: &NameSimilarity) -> Vec<Step> {
    let (n, m) = (a.len(), b.len());
    let mut back = vec![0u8; (n + 1) * (m + 1)];
    let mut prev: Vec<f32> = vec![0.0; m + 1];
    for j in 1..=m {
        prev[j] = prev[j - 1] + gap_score(&b[j - 1]);
        back[j] = LEFT;
    }
    let mut cur = vec![0f32; m + 1];
    for i in 1..=n {
        let gap_a = gap_score(&a[i - 1]);
        cur[0] = prev[0] + gap_a;
        back[i * (m + 1)] = UP;
        for j in 1..=m {
            let d = prev[j - 1] + pair_score(&a[i - 1], &b[j - 1], sim);
            let u = prev[j] + gap_a;
            let l = cur[j - 1] + gap_score(&b[j - 1]);
            let (best, dir) = if d >= u && d >= l {
                (d, DIAG)
            } else if u >= l {
                (u, UP)
            } else {
                (l, LEFT)
            };
            cur[j] = best;
            back[i * (m + 1) + j] = dir;
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    let mut steps = Vec::with_capacity(n + m);
    let (mut i, mut j) = (n, m);
    while i > 0 || j > 0 {
        match back[i * (m + 1) + j] {
            DIAG if i > 0 && j > 0 => {
                steps.push(Step::Pair(i - 1, j - 1));
                i -= 1;
                j -= 1;
            }
            UP if i > 0 => {
                steps.push(Step::OnlyA(i - 1));
                i -= 1;
            }
            _ if j > 0 => {
                steps.push(Step::OnlyB(j - 1));
                j -= 1;
            }
            _ => {
                steps.push(Step::OnlyA(i - 1));
                i -= 1;
            }
        }
    }
    steps.reverse();
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tok(family: u32, category: u32, name: u32) -> Token {
        Token { family, category, name, weight: 1.0 }
    }

    #[test]
    fn pairs_same_categories_and_leaves_extras() {
        // A: gemm norm gemm ; B: gemm extra-elementwise norm gemm
        let sim = NameSimilarity::new(&["gemm_a", "rms_norm"], &["gemm_b", "add_kernel", "fused_norm"]);
        let a = [tok(0, 0, 0), tok(1, 1, 1), tok(0, 0, 0)];
        let b = [tok(0, 0, 0), tok(2, 2, 1), tok(1, 1, 2), tok(0, 0, 0)];
        let s = align(&a, &b, &sim);
        assert_eq!(s, vec![Step::Pair(0, 0), Step::OnlyB(1), Step::Pair(1, 2), Step::Pair(2, 3)]);
    }

    #[test]
    fn never_pairs_different_families() {
        let sim = NameSimilarity::new(&["x"], &["y"]);
        let s = align(&[tok(0, 0, 0)], &[tok(1, 1, 0)], &sim);
        assert_eq!(s.len(), 2);
        assert!(s.iter().all(|x| !matches!(x, Step::Pair(..))));
    }

    #[test]
    fn name_similarity_breaks_ties() {
        // one A kernel, two B kernels of the same category: pair with the similar name
        let sim = NameSimilarity::new(&["flash_fwd_kernel"], &["other_attention", "flash_fwd_splitkv_kernel"]);
        let s = align(&[tok(0, 0, 0)], &[tok(0, 0, 0), tok(0, 0, 1)], &sim);
        assert!(s.contains(&Step::Pair(0, 1)), "{s:?}");
    }

    #[test]
    fn empty_sides() {
        let sim = NameSimilarity::new(&[], &["a"]);
        assert_eq!(align(&[], &[tok(0, 0, 0)], &sim), vec![Step::OnlyB(0)]);
        assert!(align(&[], &[], &sim).is_empty());
    }
}
