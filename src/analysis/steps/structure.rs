//! Forward passes from the structure of the kernel stream alone: kernel names are identities
//! (equal or not), never read.
//!
//! A generation loop runs the same network once per step, and inside each step one block (a
//! decoder layer) repeats once per layer. So the stream has two periods, and this module finds the
//! outer one:
//!
//! 1. **Anchors**: the names that occur exactly `P` times and alternate with each other (one
//!    occurrence between two of the anchor's) are once-per-step kernels: the embedding, the LM
//!    head, the sampler. Every such `P` (from a few names each) is a candidate.
//! 2. **Step cycle**: a candidate explains every name that occurs `k` times in every cycle the
//!    anchor cuts (the same phase of each cycle), and must explain a fair share of the stream.
//! 3. **A stack inside**: each cycle must hold a repeat of alike blocks: some name occurring
//!    `L ≥ 2` times per cycle whose blocks (from one occurrence to the next) run the same kernels.
//!    A name of every cycle but the first counts too: a compiled model runs its prompt through a
//!    graph of its own, whose kernels no decode step runs (`llama_compiled`, GPU only, names
//!    opaque: 33 passes of 16 layers).
//!    The two halves of one decoder layer (attention, MLP) repeat a norm too, but differ, so a
//!    single layer is never taken for a step.
//!    Once-per-step kernels run outside the stack, and at a step boundary the layers' rhythm
//!    breaks (a repeating group of layers runs straight on). Of the cycles that pass, the finest
//!    wins: several generations in a row repeat as a whole too, with steps as their blocks.
//! 4. **Boundaries**: the anchors split each cycle in gaps; the widest holds the layers. The pass
//!    boundary lies among the other gaps, between one step's last layer and the next step's first
//!    ([`StepCycle::regions`]); the caller places the cut there (where a name says so, else at the
//!    longest GPU idle: the host preparing the next step).

use crate::analysis::repetition::{fits, occurrences, same_share};
use crate::model::FastMap;
use std::ops::Range;

/// The step-level period of one device's kernel stream.
#[derive(Debug, Clone, PartialEq)]
pub struct StepCycle {
    /// Number of steps the anchors cut (cycles).
    pub steps: usize,
    /// For each boundary between step `i` and step `i + 1`: the kernel positions before which
    /// the cut may be placed (between the end of step `i`'s layers and the start of step
    /// `i + 1`'s).
    pub regions: Vec<Range<usize>>,
    /// Share of the stream's kernels whose names repeat with the cycle (0..1).
    pub explained: f64,
    /// Once-per-step names (the anchors), in their order within a step.
    pub anchors: Vec<u32>,
}

/// The fewest steps a cycle must have.
const MIN_STEPS: usize = 2;
/// The fewest kernels a step holds (a layer stack of two blocks).
const MIN_STEP_KERNELS: usize = 8;
/// The anchor's occurrences must spread over this share of the stream.
const MIN_SPAN: f64 = 0.5;
/// Candidate step counts checked in full (the ones whose names could explain the most).
const MAX_CANDIDATES: usize = 8;
/// Anchors tried per step count.
const ANCHORS_PER_COUNT: usize = 4;
/// Two blocks are alike when this share of their aligned positions run the same kernel.
const ALIKE: f64 = 0.8;
/// A cycle holds a stack when this share of its consecutive block pairs are alike.
const ALIKE_PAIRS: f64 = 0.5;
/// The fewest kernels in a block of the stack (a layer launches several).
const MIN_BLOCK: usize = 4;
/// The stack spans at least this share of its step.
const MIN_STACK_SHARE: f64 = 0.5;
/// Kernels a step runs beyond its stack at the least: a compiled model fuses its embedding into
/// the first layer and its final norm into the last, leaving the LM head and the sampler (or the
/// sampler alone). A group of a hybrid's layers runs on with nothing between (see
/// [`runs_straight_on`]).
const MIN_STEP_EXTRA: usize = 1;
/// The least share of the stream a cycle must explain.
const MIN_EXPLAINED: f64 = 0.25;

/// Finds the step-level period of `ids` (one device's kernel names in time order, as any ids
/// equal for equal names). `None` when the stream does not repeat as whole steps with a stack
/// of alike blocks inside each.
pub fn find_step_cycle(ids: &[u32]) -> Option<StepCycle> {
    let n = ids.len();
    if n < MIN_STEPS * MIN_STEP_KERNELS {
        return None;
    }
    let positions = occurrences(ids.iter().copied());
    let mut by_count: FastMap<usize, Vec<u32>> = FastMap::default();
    for (&id, p) in &positions {
        by_count.entry(p.len()).or_default().push(id);
    }
    // Upper bound of what each step count could explain: every name whose count it divides.
    let mut counts: Vec<(usize, usize)> = by_count
        .keys()
        .filter(|&&c| c >= MIN_STEPS && c <= n / MIN_STEP_KERNELS)
        .map(|&c| (by_count.iter().filter(|(&d, _)| d % c == 0).map(|(&d, names)| d * names.len()).sum(), c))
        .collect();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let mut found: Vec<StepCycle> = Vec::new();
    for &(_, count) in counts.iter().take(MAX_CANDIDATES) {
        let mut names = by_count[&count].clone();
        names.sort_unstable_by_key(|id| positions[id][0]);
        for &a in names.iter().take(ANCHORS_PER_COUNT) {
            let p = &positions[&a];
            if ((p[count - 1] - p[0]) as f64) < MIN_SPAN * n as f64 {
                continue;
            }
            if let Some(cycle) = cycle_at(ids, &positions, &by_count, p) {
                found.push(cycle);
                break;
            }
        }
    }
    // Of the cycles holding a stack, the finest: a trace of several generations (one prompt after
    // another) repeats as a whole too, and each repeat holds a stack of alike steps; the steps
    // hold stacks of layers, and a layer holds no stack.
    found.into_iter().max_by_key(|c| c.steps)
}

/// The cycle cut at anchor positions `p`, if its steps hold a stack of alike blocks.
fn cycle_at(
    ids: &[u32],
    positions: &FastMap<u32, Vec<usize>>,
    by_count: &FastMap<usize, Vec<u32>>,
    p: &[usize],
) -> Option<StepCycle> {
    let steps = p.len();
    let mut explained = 0usize;
    // Names occurring once per cycle: the anchors (the one cutting included).
    let mut anchors: Vec<u32> = Vec::new();
    // Names occurring k ≥ 2 times per cycle, most per cycle first: the candidates for the stack,
    // with the cycles they skip at the start (0, or 1 for a name of every step but the first: a
    // compiled model runs its prompt through another graph, whose kernels are its own).
    let mut stacked: Vec<(usize, u32, usize)> = Vec::new();
    for (&count, names) in by_count {
        for &id in names {
            let x = &positions[&id];
            if count % steps == 0 && fits(p, x, count / steps) {
                let k = count / steps;
                explained += count;
                if k >= 2 {
                    stacked.push((k, id, 0));
                } else {
                    anchors.push(id);
                }
            } else if steps > MIN_STEPS
                && count % (steps - 1) == 0
                && count / (steps - 1) >= 2
                && x[0] >= p[1]
                && fits(&p[1..], x, count / (steps - 1))
            {
                explained += count;
                stacked.push((count / (steps - 1), id, 1));
            }
        }
    }
    let explained = explained as f64 / ids.len() as f64;
    if explained < MIN_EXPLAINED {
        return None;
    }
    stacked.sort_unstable_by(|a, b| b.cmp(a));
    // In their order within a step.
    anchors.sort_unstable_by_key(|id| positions[id][0]);
    let middle = steps / 2;
    // The middle cycle's length (the anchor's next occurrence, or the stream's end).
    let cycle_len = p.get(middle + 1).unwrap_or(&ids.len()) - p[middle];
    // The stack's name: of those whose blocks are alike, the one of the steadiest rhythm (once
    // per layer, not a kernel run twice in some layers and once in others).
    let stack = stacked
        .iter()
        .take(16)
        .filter_map(|&(k, id, skip)| {
            let q = &positions[&id][(middle - skip) * k..(middle - skip + 1) * k];
            let (shortest, longest) =
                q.windows(2).map(|w| w[1] - w[0]).fold((usize::MAX, 0), |(lo, hi), g| (lo.min(g), hi.max(g)));
            let span = q[k - 1] - q[0] + shortest;
            (shortest >= MIN_BLOCK && span as f64 >= MIN_STACK_SHARE * cycle_len as f64 && alike_blocks(ids, q)).then_some((
                longest - shortest,
                std::cmp::Reverse(k),
                skip,
                q,
            ))
        })
        .min_by_key(|&(spread, k, skip, _)| (spread, k, skip))
        .map(|(_, _, skip, q)| (skip, q))?;
    let (skip, stack) = stack;
    // A step is more than its stack: some once-per-step kernel (embedding, LM head, sampler) runs
    // outside it. A group of layers that repeats (a hybrid model's three linear-attention layers
    // and one full-attention layer) has its once-per-group kernels inside the stack.
    let mut gaps: Vec<usize> = stack.windows(2).map(|w| w[1] - w[0]).collect();
    gaps.sort_unstable();
    let block = gaps[gaps.len() / 2];
    let (first, end) = (stack[0], stack[stack.len() - 1] + block);
    if !anchors.iter().any(|a| positions[a].get(middle).is_some_and(|&x| x < first || x >= end)) {
        return None;
    }
    // And at the boundary the layers' rhythm breaks: from the stack's last block in one step to
    // its first in the next lies more than a block (the LM head, the sampler, the embedding),
    // where a repeating group of layers runs straight on into the next group.
    let k = stack.len();
    let q = &positions[&ids[stack[0]]];
    let mut across: Vec<usize> = (0..steps - skip - 1).map(|i| q[(i + 1) * k] - q[i * k + k - 1]).collect();
    across.sort_unstable();
    if across.is_empty() || across[across.len() / 2] < gaps[gaps.len() - 1] + MIN_STEP_EXTRA {
        return None;
    }
    // The same holds for every name of a steady rhythm: a kernel run once in each layer of a
    // hybrid's group (its feed-forward) keeps its rhythm across the groups' boundaries.
    let steady = by_count.iter().filter(|(&count, _)| count % steps == 0 && count / steps >= 2);
    if steady
        .flat_map(|(&count, names)| names.iter().map(move |id| (count / steps, id)))
        .any(|(k, id)| runs_straight_on(&positions[id], k, steps, ids.len()))
    {
        return None;
    }
    Some(StepCycle { steps, regions: boundary_regions(positions, &anchors, steps), explained, anchors })
}

/// Whether a name occurring `k` times in each of `steps` cycles (positions `q`, taken `k` at a
/// time from the first) keeps one rhythm within every cycle and runs on at it from one cycle to
/// the next: then the cycles are groups of layers, not steps (a step boundary puts an LM head, a
/// sampler and an embedding in between).
fn runs_straight_on(q: &[usize], k: usize, steps: usize, n: usize) -> bool {
    // A name of one pass alone (the prefill's) has no rhythm across steps.
    if k < 2 || q.len() != k * steps || steps < 2 || ((q[q.len() - 1] - q[0]) as f64) < MIN_SPAN * n as f64 {
        return false;
    }
    let mut within: Vec<usize> = (0..steps).flat_map(|i| q[i * k..(i + 1) * k].windows(2).map(|w| w[1] - w[0])).collect();
    within.sort_unstable();
    let (lo, hi) = (within[0], within[within.len() - 1]);
    if lo < MIN_BLOCK || hi > lo + lo / 4 {
        return false;
    }
    let mut across: Vec<usize> = (0..steps - 1).map(|i| q[(i + 1) * k] - q[i * k + k - 1]).collect();
    across.sort_unstable();
    let median = across[across.len() / 2];
    (lo..=hi).contains(&median)
}

/// Whether the blocks between consecutive positions `q` (one name's occurrences in one step) run
/// the same kernels: a stack of layers, not the halves of one layer.
fn alike_blocks(ids: &[u32], q: &[usize]) -> bool {
    let pairs = q.len().saturating_sub(2);
    if q.len() < 2 {
        return false;
    }
    // Blocks [q_j, q_{j+1}); with two occurrences, the block before the second and the one after
    // it, as long as the first.
    if pairs == 0 {
        let len = q[1] - q[0];
        return q[1] + len <= ids.len() && same_share(ids, q[0], q[1], len) >= ALIKE;
    }
    let alike = q.windows(3).filter(|w| same_share(ids, w[0], w[1], (w[1] - w[0]).min(w[2] - w[1])) >= ALIKE).count();
    alike as f64 >= ALIKE_PAIRS * pairs as f64
}

/// Where each boundary between steps may be cut: the anchors' occurrences split the stream into
/// gaps that recur in every step (in the anchors' order); the widest (by median length) holds
/// the layers. A boundary lies between the end of one step's layer gap and the start of the next
/// step's.
fn boundary_regions(positions: &FastMap<u32, Vec<usize>>, anchors: &[u32], steps: usize) -> Vec<Range<usize>> {
    let m = anchors.len();
    let mut all: Vec<usize> = anchors.iter().flat_map(|a| positions[a].iter().copied()).collect();
    all.sort_unstable();
    // Gap j: from the j-th anchor of a step to the next one (the last wraps to the next step).
    let mut gaps: Vec<Vec<usize>> = vec![Vec::new(); m];
    for (i, w) in all.windows(2).enumerate() {
        gaps[i % m].push(w[1] - w[0]);
    }
    let median = |g: &mut Vec<usize>| {
        g.sort_unstable();
        g.get(g.len() / 2).copied().unwrap_or(0)
    };
    let layer_gap = (0..m).max_by_key(|&j| median(&mut gaps[j])).unwrap_or(0);
    // Step i's layers end at its anchor after the layer gap; step i+1's begin at its anchor before
    // its layer gap. With one anchor both are that anchor: the whole step is the region.
    (0..steps - 1)
        .map(|i| {
            let end_of_layers = all.get(i * m + layer_gap + 1).copied();
            let start_of_next = all[(i + 1) * m + layer_gap];
            match end_of_layers {
                Some(e) if m > 1 && e < start_of_next => e + 1..start_of_next + 1,
                _ => all[i * m + layer_gap] + 1..start_of_next + 1,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A step: pre `e`, `layers` blocks `n q a o n g u d`, post `n l s`.
    fn step(layers: usize, first: bool) -> Vec<u32> {
        let mut s = vec![if first { 90 } else { 91 }, 92];
        for _ in 0..layers {
            s.extend([1, 2, 3, 4, 1, 5, 6, 7]);
        }
        s.extend([1, if first { 80 } else { 81 }, 82]);
        s
    }

    #[test]
    fn steps_of_a_layer_stack_are_found_whatever_the_names() {
        // A prefill whose embedding and LM head kernels differ from the decode steps'.
        let mut ids = step(4, true);
        for _ in 0..5 {
            ids.extend(step(4, false));
        }
        let c = find_step_cycle(&ids).expect("a cycle");
        assert_eq!(c.steps, 6);
        assert_eq!(c.anchors, vec![92, 82]);
        // Each boundary lies after the sampler (82) of one step, up to the next step's 92.
        let len = step(4, false).len();
        let first = step(4, true).len();
        assert_eq!(c.regions[0], first..first + 2);
        assert_eq!(c.regions[1], first + len..first + len + 2);
    }

    #[test]
    fn generations_in_a_row_are_cut_into_their_steps() {
        // Three prompts one after another, each a prefill and four decode steps.
        let mut ids = Vec::new();
        for _ in 0..3 {
            ids.extend(step(4, true));
            for _ in 0..4 {
                ids.extend(step(4, false));
            }
        }
        assert_eq!(find_step_cycle(&ids).expect("a cycle").steps, 15);
    }

    #[test]
    fn one_step_of_layers_is_not_taken_for_steps() {
        // One pass of 8 layers: each layer repeats a norm twice, but its halves differ.
        assert_eq!(find_step_cycle(&step(8, true)), None);
    }

    #[test]
    fn a_repeating_group_of_layers_is_not_a_step() {
        // One pass of 12 layers in groups of three linear-attention layers and one full-attention
        // layer: the group repeats, with kernels once per group (the full attention), but every
        // such kernel sits inside the stack.
        let mut ids = vec![90, 92];
        for layer in 0..12 {
            ids.extend(if layer % 4 == 3 { [1, 2, 30, 4, 1, 5, 6, 7] } else { [1, 2, 3, 4, 1, 5, 6, 7] });
        }
        ids.extend([1, 80, 82]);
        assert_eq!(find_step_cycle(&ids), None);
    }

    #[test]
    fn steps_of_a_hybrid_model_are_steps_not_its_groups_of_layers() {
        // Six decode steps of 16 layers in groups of three linear-attention layers and one
        // full-attention layer (its own projections and kernels); the activation (6) runs once
        // in every layer, straight on from one group to the next.
        let gdn = [1, 2, 2, 3, 4, 5, 2, 1, 2, 6, 2];
        let att = [1, 20, 21, 22, 30, 23, 20, 1, 2, 6, 2];
        let mut ids = Vec::new();
        for _ in 0..6 {
            ids.extend([90, 91, 92]);
            for layer in 0..16 {
                ids.extend(if layer % 4 == 3 { att } else { gdn });
            }
            ids.extend([1, 80, 81, 82]);
        }
        assert_eq!(find_step_cycle(&ids).expect("a cycle").steps, 6);
    }

    #[test]
    fn compiled_steps_with_little_between_them_are_steps() {
        // torch.compile'd decode: Inductor fuses the embedding into the first layer's norm (30)
        // and the final norm into the last layer's add (31); between one step's layers and the
        // next only the LM head (80) and the argmax (82) run. Layer: mm, fused norm, attention, mm,
        // fused add-norm, mm, fused silu-mul, mm, fused add.
        let layer = [1, 2, 3, 1, 4, 5, 6, 7, 8];
        let mut ids = Vec::new();
        for _ in 0..8 {
            for l in 0..16 {
                let mut k = layer;
                if l == 0 {
                    k[1] = 30;
                }
                if l == 15 {
                    k[8] = 31;
                }
                ids.extend(k);
            }
            ids.extend([80, 82]);
        }
        assert_eq!(find_step_cycle(&ids).expect("a cycle").steps, 8);
    }

    #[test]
    fn a_dense_first_layer_does_not_break_the_step_period() {
        // DeepSeek-style: per step an embedding, one dense layer, five MoE layers, LM head and
        // sampler; six steps.
        let dense = [1, 2, 3, 4, 1, 5, 6, 7];
        let moe = [1, 2, 3, 4, 1, 40, 41, 42];
        let mut ids = Vec::new();
        for _ in 0..6 {
            ids.extend([90, 92]);
            ids.extend(dense);
            for _ in 0..5 {
                ids.extend(moe);
            }
            ids.extend([1, 80, 82]);
        }
        assert_eq!(find_step_cycle(&ids).expect("a cycle").steps, 6);
    }

    #[test]
    fn nothing_repeats() {
        let ids: Vec<u32> = (0..200).collect();
        assert_eq!(find_step_cycle(&ids), None);
    }
}
