//! Repeated steps found by repetition of the kernel sequence: the denoising steps of a diffusion
//! model, or any loop that runs the same network again and again, with no annotation, module name
//! or graph launch needed.
//!
//! Input: one device's kernels in time order, as interned names, and which of them are attention.
//! The method:
//!
//! 1. **Anchor**: a kernel name that occurs exactly `c ≥ 2` times at nearly equal distances (each
//!    step runs it once). Every such name is a candidate.
//! 2. **Check**: the steps an anchor cuts must run the same kernel at the same offset for most of
//!    their length (`super::rules::WorkloadRules::min_step_alignment`) and each must hold a
//!    stack of blocks (`min_step_kernels`, `min_step_attention`): one transformer layer repeated
//!    is not a step.
//! 3. **Best**: the candidate whose steps cover the most kernels; the most steps among those
//!    covering nearly as many (two steps of a loop that runs four repeat too, as double steps).
//! 4. **Start**: every anchor occurrence walks back while all steps run the same kernel: the step
//!    before the first one is other work (text encoders), so the walk stops at the real start.
//!    The last step is as long as the others and no longer than what still matches.

use crate::analysis::repetition::{occurrences, regular};
use crate::analysis::steps::rules::WorkloadRules;
use crate::model::FastMap;
use std::ops::Range;

/// Steps found in one device's kernel sequence.
#[derive(Debug, Clone, PartialEq)]
pub struct Repeated {
    /// Each step as a range over the input sequence, in order, not overlapping.
    pub steps: Vec<Range<usize>>,
    /// Share of step positions where every step runs the same kernel (0..1).
    pub alignment: f64,
}

impl Repeated {
    /// Kernels in all steps.
    pub fn covered(&self) -> usize {
        self.steps.iter().map(|s| s.len()).sum()
    }
}

/// Most steps considered (a name occurring more often is a per-layer or per-block kernel).
const MAX_STEPS: usize = 4096;
/// Anchors checked per step count, and in all.
const ANCHORS_PER_COUNT: usize = 3;
const MAX_CHECKS: usize = 48;
/// Positions at the end of the last step compared when placing the steps' start.
const END_WINDOW: usize = 256;
/// Distances between an anchor's occurrences may differ by this share (a step launching a few
/// more small kernels than another, e.g. the scheduler's first step).
const GAP_TOLERANCE: f64 = 0.05;

/// Finds repeated steps in `names` (`is_attention[i]` tells whether kernel `i` is attention).
/// `None` when nothing repeats as a whole step.
pub fn find_steps(names: &[u32], is_attention: &[bool], rules: &WorkloadRules) -> Option<Repeated> {
    let n = names.len();
    if n < 2 * rules.min_step_kernels {
        return None;
    }
    let positions = occurrences(names.iter().copied());
    let mut attention_before = Vec::with_capacity(n + 1);
    attention_before.push(0usize);
    for &a in is_attention {
        attention_before.push(attention_before.last().copied().unwrap_or(0) + a as usize);
    }
    let mut candidates: Vec<&Vec<usize>> = positions
        .values()
        .filter(|p| p.len() >= 2 && p.len() <= MAX_STEPS && regular(p, rules.min_step_kernels, GAP_TOLERANCE))
        .collect();
    candidates.sort_by_key(|p| (p.len(), p[0]));
    let mut found_all: Vec<Repeated> = Vec::new();
    // Names in the same slot of a step give the same cut: a few per step count are enough, and a
    // bounded number in all keeps a million-kernel trace quick.
    let mut tried = FastMap::<usize, usize>::default();
    let mut checks = 0;
    for anchor in candidates {
        if checks >= MAX_CHECKS {
            break;
        }
        let seen = tried.entry(anchor.len()).or_insert(0);
        if *seen >= ANCHORS_PER_COUNT {
            continue;
        }
        *seen += 1;
        checks += 1;
        found_all.extend(steps_from(names, anchor, &attention_before, rules));
    }
    // The most kernels covered; among cuts covering nearly as many, the most steps (two steps of
    // a loop that runs four repeat too, as one double step each).
    let most = found_all.iter().map(|f| f.covered()).max()?;
    found_all
        .into_iter()
        .filter(|f| f.covered() as f64 >= NEARLY_ALL * most as f64)
        .max_by_key(|f| (f.steps.len(), f.covered(), std::cmp::Reverse(f.steps[0].start)))
}

/// A cut covering this share of the best cover counts as covering as much.
const NEARLY_ALL: f64 = 0.98;

/// The steps cut at an anchor's occurrences, or `None` when they do not match as whole steps.
fn steps_from(names: &[u32], anchor: &[usize], attention_before: &[usize], rules: &WorkloadRules) -> Option<Repeated> {
    let n = names.len();
    let min_gap = anchor.windows(2).map(|w| w[1] - w[0]).min()?;
    // Walk back from every occurrence while all steps run the same kernel.
    let mut back = 0usize;
    while back + 1 < min_gap && anchor[0] > back && {
        let id = names[anchor[0] - back - 1];
        anchor.iter().all(|&p| names[p - back - 1] == id)
    } {
        back += 1;
    }
    // The walk can overshoot when the work before the first step happens to end with the kernels
    // a step ends with. The true start is the shortest walk after which the last step, as long as
    // the others, still matches the step before it to its end (past the true end lies other work).
    let (last_anchor, before_anchor) = (anchor[anchor.len() - 1], anchor[anchor.len() - 2]);
    let mismatches = |b: usize| {
        let (last, before) = (last_anchor - b, before_anchor - b);
        (min_gap.saturating_sub(END_WINDOW)..min_gap).filter(|&k| last + k >= n || names[last + k] != names[before + k]).count()
    };
    let back = (0..=back).min_by_key(|&b| (mismatches(b), b)).unwrap_or(0);
    let starts: Vec<usize> = anchor.iter().map(|&p| p - back).collect();
    // The last step: as long as the shortest, shortened to where it stops matching the one before.
    let last = *starts.last()?;
    let before = starts[starts.len() - 2];
    let mut len = min_gap.min(n - last);
    if let Some(stop) = (0..len).rev().find(|&k| names[last + k] == names[before + k]) {
        // Keep up to the last position that still matches.
        len = stop + 1;
    }
    let mut steps: Vec<Range<usize>> = starts.windows(2).map(|w| w[0]..w[1]).collect();
    steps.push(last..last + len);
    // Alignment over the shortest step's positions.
    let shortest = steps.iter().map(|s| s.len()).min()?;
    if shortest < rules.min_step_kernels {
        return None;
    }
    let same = (0..shortest).filter(|&k| steps.iter().all(|s| names[s.start + k] == names[steps[0].start + k])).count();
    let alignment = same as f64 / shortest as f64;
    let attention_ok = steps.iter().all(|s| attention_before[s.end] - attention_before[s.start] >= rules.min_step_attention);
    (alignment >= rules.min_step_alignment && attention_ok).then_some(Repeated { steps, alignment })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> WorkloadRules {
        WorkloadRules {
            min_step_kernels: 6,
            min_step_attention: 2,
            min_step_alignment: 0.9,
            diffusion_names: Vec::new(),
            llm_names: Vec::new(),
            batching_engine_names: Vec::new(),
            generation_categories: Vec::new(),
        }
    }

    /// Kernel ids: 1 = attention. A block is [10, 1, 11, 12]; a step is [20, block, block, 21].
    fn step() -> Vec<u32> {
        let mut s = vec![20];
        for _ in 0..2 {
            s.extend([10, 1, 11, 12]);
        }
        s.push(21);
        s
    }

    fn run(seq: &[u32]) -> Option<Repeated> {
        let attn: Vec<bool> = seq.iter().map(|&k| k == 1).collect();
        find_steps(seq, &attn, &rules())
    }

    #[test]
    fn steps_between_other_work_are_found_with_their_true_start() {
        // An encoder before (ending in a kernel the steps also run, 12) and a decoder after.
        let mut seq = vec![30, 31, 1, 32, 12];
        for _ in 0..4 {
            seq.extend(step());
        }
        seq.extend([40, 41, 42, 1, 43]);
        let found = run(&seq).expect("four steps");
        assert_eq!(found.steps, vec![5..15, 15..25, 25..35, 35..45]);
        assert_eq!(found.alignment, 1.0);
    }

    #[test]
    fn layers_alone_are_not_steps() {
        // One attention per repeat: a single layer, not a step of blocks.
        let mut seq = Vec::new();
        for _ in 0..8 {
            seq.extend([10, 1, 11, 12, 13, 14, 15]);
        }
        assert_eq!(run(&seq), None);
    }

    #[test]
    fn nothing_repeats_in_a_single_pass() {
        let seq: Vec<u32> = (100..200).collect();
        assert_eq!(run(&seq), None);
    }
}
