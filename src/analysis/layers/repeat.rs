//! Finds the repeating block of a forward pass and cuts it into layers.
//!
//! Input: one token per kernel of the pass, in time order (the kernel's interned name and its
//! [`Marker`]). The decoder layers of a transformer launch (nearly) the same kernels in the same
//! order N times, so some kernels occur exactly once per layer. The method:
//!
//! 1. **Period**: for every count `c`, take the kernel names that occur exactly `c` times and
//!    alternate with each other (one occurrence between two of the anchor's); the cycle explains
//!    those kernels plus every name occurring `k·c + r` times (`r` small: the same kernel also used
//!    outside the layers). If the number of token-mixer blocks (attention / MLA / linear-attention
//!    runs, from the markers) is one of the counts and explains a fair share, it is the number of
//!    layers (hybrid models); otherwise the largest count explaining nearly as much as the best.
//! 2. **Start**: walk backwards from every anchor occurrence in step. Layers 2..N are preceded by
//!    the previous layer's tail, layer 1 by the embedding: the walk stops where layer 1's
//!    predecessor no longer looks like the majority of the others'. That point, in every cycle, is
//!    a layer start. Markers make equal what only differs by fusion (`rms_norm` vs
//!    `fused_add_rms_norm`), and a layer does not start on a collective. If layers differ before
//!    every possible anchor (a hybrid's mixers), the walk goes forwards instead, through the
//!    uniform layer tail, and stops where the last layer is followed by the post-layer work.
//! 3. **End of the last layer**: it is aligned with the layer before it (from its start and from
//!    each once-per-layer kernel), and ends where it stops matching; the rest is post-layer work.
//! 4. **Stacks of other kinds**: the part of the pass before the stack found and the part after it
//!    are searched in the same way (a text encoder before the diffusion transformer, single-stream
//!    blocks after double-stream ones), and so is each unit of a repeat too short to be a stack
//!    (two runs of three text encoders). A repeat found there that does the pass's work is layers
//!    too; [`Repeat::stacks`] says how many stacks the layers make.
//!
//! Nothing here knows a model: a model never seen works if its layers repeat.

use super::markers::Marker;
use crate::analysis::repetition::{interleaves, k_between, occurrences};
use crate::model::FastMap as HashMap;
use std::ops::Range;

/// One kernel of a pass, as the detector sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    /// Interned kernel name (any id that is equal for equal names).
    pub id: u32,
    /// What the kernel does inside a layer.
    pub marker: Marker,
    /// How long the kernel ran (ns): a stack of layers does the pass's work, a repeat of
    /// tiny kernels before it (a batch's metadata built once per cache group) does not.
    pub ns: u64,
}

impl Token {
    /// Comparison key: kernels of the same step compare equal even if fused differently.
    fn key(self) -> u64 {
        match self.marker {
            Marker::Norm => u64::MAX - 1,
            _ => self.id as u64,
        }
    }
}

/// The repeating structure found in one pass.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Repeat {
    /// Token index ranges of the layers, in order, disjoint.
    pub layers: Vec<Range<usize>>,
    /// Token id of the anchor (occurs once per layer).
    pub anchor: Option<u32>,
    /// Share of the pass's kernels that belong to the detected cycle (0..1): a confidence.
    pub explained: f64,
    /// How many stacks of layers the layers make: 1 for a decoder, 2 for Flux's text encoders
    /// (CLIP, then T5), 4 for SD3.5's (two runs of CLIP, then T5). Layers of different stacks may be
    /// of different kinds though their names say the same.
    pub stacks: usize,
}

/// The smallest number of layers the detector reports.
const MIN_LAYERS: usize = 2;
/// Share of layers 2..N that must agree while walking back to a layer start.
const AGREEMENT: f64 = 0.5;
/// An anchor must spread over at least this share of the pass.
const MIN_SPAN: f64 = 0.3;

/// Finds the layers of one pass. Returns no layers when nothing repeats.
pub fn find_layers(tokens: &[Token], never_start_on: &[Marker]) -> Repeat {
    let n = tokens.len();
    if n < 2 * MIN_LAYERS {
        return Repeat::default();
    }
    let positions = occurrences(tokens.iter().map(|t| t.id));
    let mixers = mixer_blocks(tokens);
    let Some(cycle) = best_cycle(&positions, n, mixers) else { return Repeat::default() };
    // A block holding k token mixers (a hybrid's three linear-attention layers and one
    // full-attention layer) is k layers, cut at the kernel that runs once in each of them.
    // Each layer's mixer is followed by its own feed-forward: a block whose two attentions share
    // one (self and cross attention) stays one layer.
    let members = match finer_anchor(tokens, &positions, &cycle, mixer_runs(tokens, true)) {
        Some(id) => vec![id],
        None => cycle.members.clone(),
    };
    // Names that run once more than the cycle, in a layer cut short at the pass's edge, are
    // placed by their occurrences in the whole layers.
    let in_cycle = if cycle.cut.is_empty() {
        std::borrow::Cow::Borrowed(&positions)
    } else {
        let mut trimmed = positions.clone();
        trimmed.extend(cycle.cut.iter().cloned());
        std::borrow::Cow::Owned(trimmed)
    };
    let (starts, forward_end) = layer_bounds(tokens, &in_cycle, &members, never_start_on);
    let end = forward_end.unwrap_or_else(|| last_layer_end(tokens, &starts, &members, &in_cycle));
    let mut layers: Vec<Range<usize>> = starts.windows(2).map(|w| w[0]..w[1]).collect();
    if let Some(&last) = starts.last() {
        layers.push(last..end.max(last + 1).min(n));
    }
    // Units that are runs of stacks give way to the stacks' layers, trimmed inside each unit
    // already; the ends of a stack of layers are trimmed here.
    let mut stacks = 1;
    match stacks_within(tokens, never_start_on, &layers) {
        Some((inner, within)) => (layers, stacks) = (inner, within),
        None => {
            drop_unlike_ends(tokens, &mut layers);
            if let Some(start) = layer_before(&positions, &layers) {
                layers.insert(0, start..layers[0].start);
            }
        }
    }
    stacks += stack_of_another_kind_before(tokens, never_start_on, &mut layers);
    stacks += stack_of_another_kind_after(tokens, never_start_on, &mut layers);
    Repeat { layers, anchor: Some(cycle.anchor), explained: cycle.kernels as f64 / n as f64, stacks }
}

/// Fewest layers a stack of another kind after the first holds.
const OTHER_STACK_LAYERS: usize = 3;
/// Share of the rest of the pass a stack of another kind must explain.
const OTHER_STACK_EXPLAINS: f64 = 0.4;
/// Share of the whole pass's GPU time a stack of another kind must hold.
const OTHER_STACK_TIME: f64 = 0.01;

/// Whether `found`, a repeat in `part` of `tokens` (the pass, or the part of it being searched),
/// is a stack of layers of another kind: at least [`OTHER_STACK_LAYERS`] layers, explaining at
/// least [`OTHER_STACK_EXPLAINS`] of the part's kernels and holding at least [`OTHER_STACK_TIME`]
/// of the GPU time of `tokens` (an encoder's layers do
/// the pass's work; a batch's metadata, built three times in a row out of 1 µs integer kernels,
/// repeats as well but does none of it).
fn is_another_stack(found: &Repeat, part: &[Token], tokens: &[Token]) -> bool {
    let time = |t: &[Token]| t.iter().map(|t| t.ns).sum::<u64>();
    let stack: u64 = found.layers.iter().map(|r| time(&part[r.clone()])).sum();
    found.layers.len() >= OTHER_STACK_LAYERS
        && found.explained >= OTHER_STACK_EXPLAINS
        && stack as f64 >= OTHER_STACK_TIME * time(tokens) as f64
}

/// A stack of blocks of another kind after the stack found (a diffusion transformer's 38
/// single-stream blocks after its 19 double-stream ones, a decoder after an encoder): the cycle
/// counts the kind whose kernels explain most of the pass, so the rest of the pass after its last
/// layer is searched again, in the same way. A repeat there of at least [`OTHER_STACK_LAYERS`]
/// layers that explains most of that rest is layers too (and the rest after it is searched in turn);
/// the kernels between the two stacks open the first layer of the second. What is left after the
/// last stack (final norm, head, sampling) stays post-layer work. Returns how many stacks it added.
fn stack_of_another_kind_after(tokens: &[Token], never_start_on: &[Marker], layers: &mut Vec<Range<usize>>) -> usize {
    let Some(end) = layers.last().map(|r| r.end) else { return 0 };
    let rest = &tokens[end.min(tokens.len())..];
    let found = find_layers(rest, never_start_on);
    if !is_another_stack(&found, rest, tokens) {
        return 0;
    }
    append_stack(layers, &found.layers, end);
    found.stacks
}

/// Appends the layers of a stack found at token offset `offset`; the kernels between the last
/// layer so far and the stack open its first layer.
fn append_stack(layers: &mut Vec<Range<usize>>, stack: &[Range<usize>], offset: usize) {
    let joined_at = layers.last().map(|r| r.end);
    let first = layers.len();
    layers.extend(stack.iter().map(|r| r.start + offset..r.end + offset));
    if let (Some(end), Some(opening)) = (joined_at, layers.get_mut(first)) {
        opening.start = end;
    }
}

/// A stack of blocks of another kind before the stack found (a text encoder's layers before the
/// encoder or decoder that explains more of the pass: Flux's CLIP before its T5): the part of the
/// pass before the first layer is searched in the same way, and a repeat there that is a stack
/// (see [`stack_of_another_kind_after`]) is layers too. The kernels between the two stacks (the
/// first stack's final norm and pooling, the second's embedding) open the first layer of the
/// second, as they do after; what is left before the first stack (its embedding) stays pre-layer
/// work. Returns how many stacks it added.
fn stack_of_another_kind_before(tokens: &[Token], never_start_on: &[Marker], layers: &mut Vec<Range<usize>>) -> usize {
    let Some(start) = layers.first().map(|r| r.start) else { return 0 };
    let before = &tokens[..start.min(tokens.len())];
    let found = find_layers(before, never_start_on);
    if !is_another_stack(&found, before, tokens) {
        return 0;
    }
    let end = found.layers.last().map_or(start, |r| r.end);
    layers[0].start = end;
    layers.splice(0..0, found.layers);
    found.stacks
}

/// The layers of a repeat too short to be a stack (fewer than [`OTHER_STACK_LAYERS`] units), when
/// its units are whole runs of stacks: a diffusion pipeline encodes the prompt and the negative
/// prompt alike, each run three text encoders of 12, 32 and 24 layers, and read as it comes that is
/// a stack of two "layers" of 1,634 kernels. Each unit is searched for layers in the same way; when
/// one holds a stack (see [`is_another_stack`]), the stacks found are the layers, in order, and the
/// kernels between two of them open the first layer of the second, as between any two stacks.
/// Returns the layers and how many stacks they make.
fn stacks_within(tokens: &[Token], never_start_on: &[Marker], units: &[Range<usize>]) -> Option<(Vec<Range<usize>>, usize)> {
    if units.len() >= OTHER_STACK_LAYERS {
        return None;
    }
    let mut layers: Vec<Range<usize>> = Vec::new();
    let mut stacks = 0;
    for unit in units {
        let part = &tokens[unit.clone()];
        let found = find_layers(part, never_start_on);
        if !is_another_stack(&found, part, tokens) {
            continue;
        }
        stacks += found.stacks;
        append_stack(&mut layers, &found.layers, unit.start);
    }
    (!layers.is_empty()).then_some((layers, stacks))
}

/// Names that must agree on where a layer before the first starts.
const LAYER_BEFORE_WITNESSES: usize = 3;

/// The start of a layer of another kind before the first layer found: a dense first layer before
/// MoE layers, whose token mixer's half is the stack's and whose feed-forward is not, so the
/// cycle (counted by the feed-forward's many kernels) leaves it out. Its witnesses are the names
/// that run once in every layer at the same offset from its start, and once more before the
/// first layer: each says the layer before starts at its position there minus that offset. When
/// at least [`LAYER_BEFORE_WITNESSES`] say so and most agree, that is its start, and it runs to
/// the first layer's. Names alone, no marker: it holds with every kernel name opaque.
fn layer_before(positions: &HashMap<u32, Vec<usize>>, layers: &[Range<usize>]) -> Option<usize> {
    let first = layers.first()?.start;
    if layers.len() < MIN_LAYERS {
        return None;
    }
    let mut starts: HashMap<usize, usize> = HashMap::default();
    let mut witnesses = 0;
    for pos in positions.values() {
        if pos.len() != layers.len() + 1 || pos[0] >= first {
            continue;
        }
        // Once in each layer, at one offset from its start.
        let offsets: Option<Vec<usize>> =
            layers.iter().zip(&pos[1..]).map(|(r, &p)| r.contains(&p).then(|| p - r.start)).collect();
        let Some(offsets) = offsets else { continue };
        if offsets.iter().any(|&o| o != offsets[0]) || offsets[0] > pos[0] {
            continue;
        }
        witnesses += 1;
        *starts.entry(pos[0] - offsets[0]).or_insert(0) += 1;
    }
    let (&start, &votes) = starts.iter().max_by_key(|&(&s, &v)| (v, std::cmp::Reverse(s)))?;
    // The layer before is at least a quarter of a layer long (not an embedding that reuses a
    // norm), and the witnesses mostly agree on its start.
    let typical = layers[layers.len() / 2].len();
    (witnesses >= LAYER_BEFORE_WITNESSES && votes * 2 > witnesses && first - start >= typical / 4).then_some(start)
}

/// A kernel present in this share of the middle layers is one every layer runs.
const EVERY_LAYER: f64 = 0.9;
/// A first or last layer must run at least this share of the kernels every layer runs.
const LIKE_A_LAYER: f64 = 0.5;

/// Drops a first or last "layer" that runs too few of the kernels every other layer runs in its
/// first half (its token mixer's half): the embedding before the layers, or the final norm, LM
/// head and sampler after them, caught by a cycle whose anchor also runs there (a norm used for
/// the final norm too). They become pre- and post-layer work. A first layer whose feed-forward
/// differs from the stack's (a dense MLP before MoE layers) runs the same first half and stays.
fn drop_unlike_ends(tokens: &[Token], layers: &mut Vec<Range<usize>>) {
    if layers.len() < 4 {
        return;
    }
    let keys = |r: &Range<usize>| -> std::collections::BTreeSet<u64> { tokens[r.clone()].iter().map(|t| t.key()).collect() };
    // The first half of a layer (its token mixer's half): what a layer whose feed-forward
    // differs from the stack's (a dense MLP before MoE layers) still runs.
    let first_half = |r: &Range<usize>| r.start..r.start + (r.end - r.start) / 2;
    let middle = &layers[1..layers.len() - 1];
    let mut seen: HashMap<u64, usize> = HashMap::default();
    for r in middle {
        for k in keys(&first_half(r)) {
            *seen.entry(k).or_insert(0) += 1;
        }
    }
    let common: Vec<u64> =
        seen.into_iter().filter(|&(_, c)| c as f64 >= EVERY_LAYER * middle.len() as f64).map(|(k, _)| k).collect();
    if common.len() < 2 {
        return;
    }
    let like = |r: &Range<usize>| {
        let have = keys(r);
        common.iter().filter(|k| have.contains(k)).count() as f64 >= LIKE_A_LAYER * common.len() as f64
    };
    if !like(&layers[layers.len() - 1]) {
        layers.pop();
    }
    if !like(&layers[0]) {
        layers.remove(0);
    }
}

/// A candidate cycle: its anchor and the names that repeat with it.
struct Cycle {
    anchor: u32,
    /// Names occurring exactly once per cycle (anchor included), in order of first use.
    members: Vec<u32>,
    /// Members that run once more, in a layer cut short where the pass begins or ends (a profiler
    /// started or stopped mid-forward), with their occurrences in the whole layers.
    cut: Vec<(u32, Vec<usize>)>,
    /// Kernels explained by the cycle (see [`best_cycle`]).
    kernels: usize,
    count: usize,
}

impl Cycle {
    /// Whether the cycle is one only thanks to the names of a layer cut short: fewer than two
    /// names run exactly once per layer.
    fn needs_cut(&self) -> bool {
        self.members.len() - self.cut.len() < 2
    }
}

/// A candidate number of layers within this share of the best-explaining one counts as equally
/// good; the largest such wins (half the true count explains as much as the true count does).
const NEAR_BEST: f64 = 0.9;

/// Occurrences beyond a multiple of the cycle count that a name may have and still repeat with
/// the cycle (the same kernel also used before the first or after the last layer).
fn tolerance(count: usize) -> usize {
    ((count - 1) / 2).min(4)
}

/// The cycle that explains the pass best. A count `c` is a candidate when at least two names occur
/// exactly `c` times and alternate with each other; it explains those names' kernels plus every
/// name occurring `k·c + r` times (`r` small: a few uses outside the layers).
fn best_cycle(positions: &HashMap<u32, Vec<usize>>, n: usize, mixers: usize) -> Option<Cycle> {
    let mut by_count: HashMap<usize, Vec<u32>> = HashMap::default();
    for (&id, pos) in positions {
        by_count.entry(pos.len()).or_default().push(id);
    }
    let mut candidates: Vec<Cycle> = Vec::new();
    for (&count, ids) in &by_count {
        if count < MIN_LAYERS || count > n / 2 {
            continue;
        }
        let tol = tolerance(count);
        let others: usize = by_count
            .iter()
            .filter(|(&c, _)| c > count && c % count <= tol)
            .map(|(&c, names)| names.len() * (c - c % count))
            .sum();
        let mut ids = ids.clone();
        ids.sort_by_key(|id| positions[id][0]);
        let mut best: Option<Cycle> = None;
        // Try a few anchors per count (the earliest names first).
        for &a in ids.iter().take(6) {
            let p = &positions[&a];
            if ((p[count - 1] - p[0]) as f64) < MIN_SPAN * n as f64 {
                continue;
            }
            let mut members: Vec<u32> = ids.iter().copied().filter(|x| interleaves(p, &positions[x])).collect();
            // Where the markers count the token mixers, names that run once more than they do
            // are members too when one occurrence less interleaves with the anchor: a layer cut
            // short at the pass's edge ran them, but not its mixer. (Their kernels count among
            // `others` already: `count + 1` is within the tolerance.)
            let more = by_count.get(&(count + 1)).filter(|_| count == mixers);
            let cut: Vec<(u32, Vec<usize>)> = more.map_or_else(Vec::new, |more| {
                more.iter()
                    .filter_map(|&x| {
                        let q = &positions[&x];
                        [&q[1..], &q[..count]].into_iter().find(|whole| interleaves(p, whole)).map(|whole| (x, whole.to_vec()))
                    })
                    .collect()
            });
            let kernels = members.len() * count + others;
            if members.len() + cut.len() >= 2 && best.as_ref().is_none_or(|b| kernels > b.kernels) {
                members.extend(cut.iter().map(|(x, _)| *x));
                let first_use = |x: &u32| cut.iter().find(|(y, _)| y == x).map_or(positions[x][0], |(_, q)| q[0]);
                members.sort_by_key(first_use);
                best = Some(Cycle { anchor: a, members, cut, kernels, count });
            }
        }
        candidates.extend(best);
    }
    let top = candidates.iter().map(|c| c.kernels).max()?;
    // Every layer has one token mixer (attention, MLA or linear attention): when the mixers say
    // how many layers there are, and that many layers is a fair explanation, believe them. This
    // keeps hybrid models (3 linear-attention layers per full-attention layer) from being read as
    // blocks of 4 layers.
    // A cycle that is one only thanks to names of a layer cut short (see `Cycle::cut`) must
    // explain nearly as much as the best, and is never taken but for the mixers' count: where a
    // block runs two attentions (the FSDP training window `nsys/mfu_2gpu_after`), the count of
    // attention runs is no layer count, and a few names one occurrence off must not make it one.
    let floor = |c: &Cycle| if c.needs_cut() { NEAR_BEST } else { MIXER_FLOOR };
    if mixers >= MIN_LAYERS {
        if let Some(i) = candidates.iter().position(|c| c.count == mixers && c.kernels as f64 >= floor(c) * top as f64) {
            return Some(candidates.swap_remove(i));
        }
    }
    candidates.into_iter().filter(|c| !c.needs_cut() && c.kernels as f64 >= NEAR_BEST * top as f64).max_by_key(|c| c.count)
}

/// A cycle whose count equals the number of token-mixer blocks needs to explain only this share
/// of what the best cycle explains.
const MIXER_FLOOR: f64 = 0.25;

/// The kernel that runs once in each of the k layers of a repeating block, when the block holds
/// k ≥ 2 layers (a hybrid model repeats a group: three gated-delta-net layers, one full-attention
/// layer).
///
/// A candidate occurs exactly `k` times in every block of `cycle` (and so `k · blocks` times in the
/// pass). Where the kernel names say how many token mixers run, each with a feed-forward after
/// it (`mixers`, from the markers), `k` is that count per block. Where they do not (opaque
/// names), the candidate must cut each block into segments that look like layers: each at least
/// [`MIN_LAYER_KERNELS`] kernels, two neighbours identical (the layers of the group's common
/// kind), and every segment sharing at least half its kernels with that kind (the feed-forward
/// every layer runs). The largest `k` wins.
fn finer_anchor(tokens: &[Token], positions: &HashMap<u32, Vec<usize>>, cycle: &Cycle, mixers: usize) -> Option<u32> {
    let c = cycle.count;
    let p = &positions[&cycle.anchor];
    let named_k = (mixers >= 2 * c && mixers.is_multiple_of(c)).then_some(mixers / c);
    if mixers >= MIN_LAYERS && named_k.is_none() {
        // The markers see the mixers, and they say one per block: nothing finer.
        return None;
    }
    let mut best: Option<(usize, usize, u32)> = None; // (k, spread, id)
    for (&id, q) in positions {
        let count = q.len();
        if count < 2 * c || count % c != 0 {
            continue;
        }
        let k = count / c;
        if named_k.is_some_and(|want| want != k) || best.is_some_and(|(bk, _, _)| bk > k) || !k_between(p, q, k) {
            continue;
        }
        // The middle block's segments, the last running to the next block's first occurrence.
        let middle = c / 2;
        let Some(seg) = q.get(middle * k..(middle + 1) * k + 1) else { continue };
        let lens: Vec<usize> = seg.windows(2).map(|w| w[1] - w[0]).collect();
        let spread = lens.iter().max().unwrap_or(&0) - lens.iter().min().unwrap_or(&0);
        if named_k.is_none() && !segments_look_like_layers(tokens, seg) {
            continue;
        }
        if best.is_none_or(|(bk, bs, bid)| k > bk || (k == bk && (spread, id) < (bs, bid))) {
            best = Some((k, spread, id));
        }
    }
    best.map(|(_, _, id)| id)
}

/// The fewest kernels a layer of a group launches (norm, projections, mixer, feed-forward).
const MIN_LAYER_KERNELS: usize = 8;

/// Whether the segments between consecutive occurrences `seg` (one block's, plus the next
/// block's first) are layers of a group: see [`finer_anchor`].
fn segments_look_like_layers(tokens: &[Token], seg: &[usize]) -> bool {
    let parts: Vec<&[Token]> = seg.windows(2).map(|w| &tokens[w[0]..w[1]]).collect();
    if parts.iter().any(|s| s.len() < MIN_LAYER_KERNELS) {
        return false;
    }
    let same = |a: &[Token], b: &[Token]| a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.key() == y.key());
    let Some(common) = parts.windows(2).find(|w| same(w[0], w[1])).map(|w| w[0]) else { return false };
    let mut kinds: HashMap<u64, usize> = HashMap::default();
    for t in common {
        *kinds.entry(t.key()).or_insert(0) += 1;
    }
    // Kernels a segment shares with the common kind, as multisets (each of the kind's kernels
    // matched once).
    let shared = |s: &[Token]| {
        let mut left = kinds.clone();
        let mut n = 0;
        for t in s {
            if let Some(c) = left.get_mut(&t.key()).filter(|c| **c > 0) {
                *c -= 1;
                n += 1;
            }
        }
        n
    };
    parts.iter().all(|s| 2 * shared(s) >= s.len().min(common.len()))
}

/// Number of token-mixer blocks: runs of attention-like kernels, a run ending at a GEMM or MoE
/// kernel. When exactly two such runs share each feed-forward (a video transformer's time and
/// space attention, a decoder's self and cross attention), a block is the pair: the runs are
/// counted again with a new block only after a feed-forward (activation or MoE) since the last.
fn mixer_blocks(tokens: &[Token]) -> usize {
    let runs = mixer_runs(tokens, false);
    let with_ffn = mixer_runs(tokens, true);
    if with_ffn >= MIN_LAYERS && runs == 2 * with_ffn {
        with_ffn
    } else {
        runs
    }
}

/// Runs of attention-like kernels; with `need_ffn`, a run starts a block only if a feed-forward
/// kernel came since the previous block (or none came in the whole pass).
fn mixer_runs(tokens: &[Token], need_ffn: bool) -> usize {
    let need_ffn = need_ffn && tokens.iter().any(|t| t.marker.is_ffn());
    let (mut blocks, mut inside, mut ffn_since) = (0, false, true);
    for t in tokens {
        if t.marker.is_mixer() {
            if !inside && (ffn_since || !need_ffn) {
                blocks += 1;
                ffn_since = false;
            }
            inside = true;
        } else if matches!(t.marker, Marker::Gemm | Marker::Moe | Marker::Activation) {
            inside = false;
            ffn_since |= t.marker.is_ffn();
        }
    }
    blocks
}

/// Result of walking from every anchor occurrence in step.
#[derive(Debug, Clone, Copy)]
struct Walk {
    /// Steps taken while the layers agreed.
    shift: usize,
    /// Lowest share of layers that agreed on any step taken (1 = all layers identical there).
    quality: f64,
}

/// Walks backwards (from each anchor towards the layer start) or forwards (towards the layer end).
///
/// The odd one out is the first layer going backwards (preceded by the embedding, not by a layer)
/// and the last layer going forwards (followed by the final norm and LM head): the walk stops
/// when it no longer looks like the majority of the others, or when there is no majority.
fn walk(tokens: &[Token], anchor: &[usize], backward: bool) -> Walk {
    let l = anchor.len();
    let min_gap = anchor.windows(2).map(|w| w[1] - w[0]).min().unwrap_or(0);
    let (odd, others) = if backward { (anchor[0], &anchor[1..]) } else { (anchor[l - 1], &anchor[..l - 1]) };
    let room = if backward { odd } else { tokens.len() - 1 - odd };
    let limit = if backward { min_gap } else { min_gap.saturating_sub(1) }.min(room);
    let at = |p: usize, s: usize| if backward { p - s } else { p + s };
    let mut result = Walk { shift: 0, quality: 1.0 };
    let mut tally: HashMap<u64, usize> = HashMap::default();
    for s in 1..=limit {
        tally.clear();
        for &p in others {
            *tally.entry(tokens[at(p, s)].key()).or_insert(0) += 1;
        }
        let Some((&key, &votes)) = tally.iter().max_by_key(|(_, v)| **v) else { break };
        // A tie at the top is no majority (and which key a map yields first differs by platform).
        let tied = tally.values().filter(|&&v| v == votes).count() > 1;
        let share = votes as f64 / others.len() as f64;
        if tied || share < AGREEMENT || tokens[at(odd, s)].key() != key {
            break;
        }
        result = Walk { shift: s, quality: result.quality.min(share) };
    }
    result
}

/// Below this walk quality the layers differ before the anchor (hybrid models): a forward walk
/// through a uniform layer tail is tried instead.
const UNIFORM: f64 = 0.9;

/// Layer boundaries from the best anchor among `members`: the start of every layer, and the end
/// of the last one if a forward walk decided it.
fn layer_bounds(
    tokens: &[Token],
    positions: &HashMap<u32, Vec<usize>>,
    members: &[u32],
    never_start_on: &[Marker],
) -> (Vec<usize>, Option<usize>) {
    let tried: Vec<(&Vec<usize>, Walk)> =
        members.iter().take(8).map(|m| (&positions[m], walk(tokens, &positions[m], true))).collect();
    // Best backward walk: most uniform; among equals the earliest anchor (members are in order of first use).
    let Some(&(anchor, back)) = tried.iter().fold(None, |best: Option<&(&Vec<usize>, Walk)>, t| match best {
        Some(b) if b.1.quality >= t.1.quality => Some(b),
        _ => Some(t),
    }) else {
        return (Vec::new(), None);
    };
    let skip_start = |mut c: usize, limit: usize| {
        while c < limit && never_start_on.contains(&tokens[c].marker) {
            c += 1;
        }
        c
    };
    if back.quality < UNIFORM {
        let forward = members.iter().take(8).map(|m| (&positions[m], walk(tokens, &positions[m], false))).fold(
            None,
            |best: Option<(&Vec<usize>, Walk)>, t| match best {
                Some(b) if b.1.quality >= t.1.quality => Some(b),
                _ => Some(t),
            },
        );
        if let Some((p, fw)) = forward.filter(|(_, fw)| fw.quality > back.quality) {
            // Layer k ends after p_k + shift; a norm the walk ran into opens the next layer.
            let ends: Vec<usize> = p
                .iter()
                .map(|&q| {
                    let mut e = q + fw.shift + 1;
                    while e > q + 1 && tokens[e - 1].marker == Marker::Norm {
                        e -= 1;
                    }
                    e
                })
                .collect();
            let first = skip_start(p[0] - walk(tokens, p, true).shift, p[0]);
            let mut starts = vec![first];
            starts.extend(ends[..ends.len() - 1].iter().copied());
            starts.dedup();
            return (starts, ends.last().copied());
        }
    }
    let mut starts: Vec<usize> = anchor.iter().map(|&p| skip_start(p - back.shift, p)).collect();
    starts.dedup();
    (starts, None)
}

/// End (exclusive) of the last layer: as far as it keeps matching the layer before it.
fn last_layer_end(tokens: &[Token], starts: &[usize], members: &[u32], positions: &HashMap<u32, Vec<usize>>) -> usize {
    let n = tokens.len();
    let Some(&last) = starts.last() else { return n };
    if starts.len() < 2 {
        return n;
    }
    let prev = starts[starts.len() - 2];
    let matched = |from: usize, like: usize| {
        let mut j = 0;
        while from + j < n && like + j < last && tokens[from + j].key() == tokens[like + j].key() {
            j += 1;
        }
        from + j
    };
    let mut end = matched(last, prev);
    for id in members {
        let p = &positions[id];
        let (Some(&r), Some(&r_prev)) = (p.last(), p.len().checked_sub(2).and_then(|i| p.get(i))) else { continue };
        if r >= last && r_prev >= prev && r_prev < last {
            end = end.max(matched(r, r_prev)).max(r + 1);
        }
    }
    end
}

#[cfg(test)]
mod tests {
    #[test]
    fn two_attentions_sharing_one_mlp_count_as_one_block() {
        use super::super::markers::Marker as M;
        let tok = |id: u32, marker: M| Token { id, marker, ns: 1 };
        // Per block: norm, qkv, attention (time), proj, norm, qkv, attention (space), proj,
        // norm, fc1, GELU, fc2.
        let block = [
            tok(1, M::Norm),
            tok(2, M::Gemm),
            tok(3, M::Attention),
            tok(4, M::Gemm),
            tok(1, M::Norm),
            tok(2, M::Gemm),
            tok(3, M::Attention),
            tok(4, M::Gemm),
            tok(1, M::Norm),
            tok(5, M::Gemm),
            tok(6, M::Activation),
            tok(7, M::Gemm),
        ];
        let tokens: Vec<Token> = (0..4).flat_map(|_| block).collect();
        assert_eq!(mixer_runs(&tokens, false), 8);
        assert_eq!(mixer_blocks(&tokens), 4);
        // A decoder layer (one attention, one MLP) keeps one block per attention.
        let layer: Vec<Token> = block[4..].to_vec();
        let tokens: Vec<Token> = (0..4).flat_map(|_| layer.clone()).collect();
        assert_eq!(mixer_blocks(&tokens), 4);
    }

    use super::*;

    /// The token ranges of `kinds` laid end to end from token `from`.
    fn end_to_end(kinds: &[&str], from: usize) -> Vec<Range<usize>> {
        let mut at = from;
        kinds
            .iter()
            .map(|k| {
                at += k.len();
                at - k.len()..at
            })
            .collect()
    }

    fn toks(s: &str) -> Vec<Token> {
        s.chars()
            .map(|c| {
                let marker = match c {
                    'n' | 'N' => Marker::Norm,
                    'r' => Marker::Communication,
                    'a' => Marker::Attention,
                    'g' | 'h' | 'k' => Marker::Gdn,
                    'q' | 'o' | 'Q' => Marker::Gemm,
                    'x' | 'y' => Marker::Moe,
                    'v' => Marker::Activation,
                    _ => Marker::Plain,
                };
                Token { id: c as u32, marker, ns: 1 }
            })
            .collect()
    }

    #[test]
    fn a_stack_of_another_kind_before_the_first_is_layers_if_it_does_the_work() {
        // A text encoder's 4 layers, then a transformer's 8: the cycle counts the 8 (more
        // kernels), and the part before them is searched again.
        let (enc, dec) = ("NQcQnQuQ", "nqaqnqvqdq");
        let kinds: Vec<&str> = std::iter::repeat_n(enc, 4).chain(std::iter::repeat_n(dec, 8)).collect();
        let s = format!("e{}nlS", kinds.concat());
        let found = find_layers(&toks(&s), &[]);
        assert_eq!(found.layers, end_to_end(&kinds, 1));
        assert_eq!(found.stacks, 2);
        // A repeat of tiny kernels before the stack (metadata built three times) holds none of
        // the pass's time: it stays pre-layer work.
        let mut tokens = toks(&format!("{}{}nlS", "ijkm".repeat(3), dec.repeat(8)));
        for t in tokens.iter_mut().skip(12) {
            t.ns = 1000;
        }
        let found = find_layers(&tokens, &[]);
        assert_eq!((found.layers.len(), found.layers[0].start, found.stacks), (8, 12, 1));
    }

    #[test]
    fn a_tie_among_the_other_layers_stops_the_walk() {
        // Before the layers at 6 and 9 come `b` and `c`: no majority, so the walk back from the
        // first layer (at 3, preceded by `b`) must not take `b` as the layers' shared start.
        let t = toks("efbAmbAmcA");
        let w = walk(&t, &[3, 6, 9], true);
        assert_eq!(w.shift, 0);
        // With a majority (`b` twice) it does.
        let t = toks("efbAmbAmbAmcA");
        assert_eq!(walk(&t, &[3, 6, 9, 12], true).shift, 1);
    }

    #[test]
    fn plain_repeat_with_pre_and_post() {
        // pre "ep", layers "nqaogu" x4, post "nlS"
        let t = toks("epnqaogunqaogunqaogunqaogunlS");
        let r = find_layers(&t, &[Marker::Communication]);
        assert_eq!(r.layers, vec![2..8, 8..14, 14..20, 20..26]);
    }

    #[test]
    fn first_layer_norm_differs_and_embedding_all_reduce() {
        // pre "er" (embedding + all-reduce); layer 0 starts with plain norm N, later layers with fused n.
        let t = toks("erNqaorgurnqaorgurnqaorgurnlS");
        let r = find_layers(&t, &[Marker::Communication]);
        assert_eq!(r.layers, vec![2..10, 10..18, 18..26]);
    }

    #[test]
    fn dense_first_layers_then_moe_layers() {
        // pre "e"; 3 dense layers "nqaongud", 5 MoE layers "nqaonrxy"; post "nlS".
        let s = format!("e{}{}nlS", "nqaongud".repeat(3), "nqaonrxy".repeat(5));
        let r = find_layers(&toks(&s), &[]);
        let want: Vec<_> = (0..8).map(|k| 1 + 8 * k..9 + 8 * k).collect();
        assert_eq!(r.layers, want);
    }

    #[test]
    fn one_dense_layer_before_moe_layers_is_a_layer_named_or_not() {
        // DeepSeek-style: the first layer's MLP is dense, the other five route to experts.
        let s = format!("e{}{}nlS", "nqaongud", "nqaonrxy".repeat(5));
        let want: Vec<_> = (0..6).map(|k| 1 + 8 * k..9 + 8 * k).collect();
        let named = toks(&s);
        assert_eq!(find_layers(&named, &[]).layers, want, "named");
        let blind: Vec<Token> = named.iter().map(|t| Token { id: t.id, marker: Marker::Plain, ns: t.ns }).collect();
        assert_eq!(find_layers(&blind, &[]).layers.len(), 6, "name-blind");
    }

    #[test]
    fn hybrid_three_linear_one_full_attention() {
        // pre "e"; 8 layers, the mixer alternates g,g,g,a (GDN x3, attention x1), MoE tail "rx".
        let layer = |m: char| format!("nq{m}on rx").replace(' ', "");
        let body: String = (0..8).map(|k| layer(if k % 4 == 3 { 'a' } else { 'g' })).collect();
        let s = format!("e{body}nlS");
        let r = find_layers(&toks(&s), &[]);
        let want: Vec<_> = (0..8).map(|k| 1 + 7 * k..8 + 7 * k).collect();
        assert_eq!(r.layers, want);
    }

    #[test]
    fn hybrid_with_long_linear_attention_before_the_anchor() {
        // 8 layers: GDN layers "n Q g c h k o n x y" (long mixer), every 4th a full-attention layer
        // "n q a o n x y"; pre "e", post "n l S". The mixer part differs between layers, the MoE tail does not.
        let gdn = "nQgchkonxy";
        let att = "nqaonxy";
        let kinds: Vec<&str> = (0..8).map(|k| if k % 4 == 3 { att } else { gdn }).collect();
        let s = format!("e{}nlS", kinds.concat());
        let r = find_layers(&toks(&s), &[]);
        assert_eq!(r.layers, end_to_end(&kinds, 1));
    }

    #[test]
    fn a_group_of_hybrid_layers_is_a_layer_per_mixer_named_or_not() {
        // Qwen3.5's decode: groups of three gated-delta-net layers and one full-attention layer,
        // every GEMM one kernel, the activation the only kernel run once per layer. Layer:
        // norm, projections, mixer (conv + delta rule, or rope + cache + attention), out
        // projection, norm, MLP (up, activation, down).
        let gdn = "nqqhgtNqnqvq";
        let att = "nqtpzatqnqvq";
        let kinds: Vec<&str> = (0..16).map(|k| if k % 4 == 3 { att } else { gdn }).collect();
        let s = format!("e{}nlS", kinds.concat());
        let want = end_to_end(&kinds, 1);
        let named = toks(&s);
        assert_eq!(find_layers(&named, &[]).layers, want, "named");
        // With no name known, the group's segments between activations look like layers: one
        // layer per mixer, each with its MLP (where the norm between two layers goes, no name
        // says: here it closes the layer before).
        let blind: Vec<Token> = named.iter().map(|t| Token { id: t.id, marker: Marker::Plain, ns: t.ns }).collect();
        let layers = find_layers(&blind, &[]).layers;
        assert_eq!(layers.len(), 16, "name-blind");
        for (l, r) in layers.iter().enumerate() {
            let text: String = s[r.clone()].to_string();
            let mixers = text.chars().filter(|&c| c == 'g' || c == 'a').count();
            assert!(mixers == 1 && text.matches('v').count() == 1, "layer {l}: {text}");
        }
        assert!(layers[0].start == 1 && layers.windows(2).all(|w| w[0].end == w[1].start));
        // A block of two attentions sharing one MLP (self and cross attention) stays one layer.
        let block = "nqaoNQaOnqvo";
        let s = format!("e{}nlS", block.repeat(8));
        let want: Vec<_> = (0..8).map(|k| 1 + 12 * k..13 + 12 * k).collect();
        assert_eq!(find_layers(&toks(&s), &[]).layers, want);
    }

    #[test]
    fn an_lm_head_or_embedding_taken_for_a_layer_is_dropped() {
        // Four layers "n q a o n g u d", then the final norm, LM head and sampler "n l S" read as
        // a fifth layer (its norm the anchor's last occurrence), and the embedding "e r" as a
        // first one: both go, the layers stay.
        let s = format!("er{}nlS", "nqaongud".repeat(4));
        let t = toks(&s);
        let mut layers: Vec<Range<usize>> = std::iter::once(0..2).chain((0..4).map(|k| 2 + 8 * k..10 + 8 * k)).collect();
        layers.push(34..37);
        drop_unlike_ends(&t, &mut layers);
        assert_eq!(layers, (0..4).map(|k| 2 + 8 * k..10 + 8 * k).collect::<Vec<_>>());
        // A dense first layer before MoE layers runs the attention half every layer runs: it stays.
        let s = format!("e{}{}nlS", "nqaongud", "nqaonrxy".repeat(5));
        let want: Vec<_> = (0..6).map(|k| 1 + 8 * k..9 + 8 * k).collect();
        let mut layers = want.clone();
        drop_unlike_ends(&toks(&s), &mut layers);
        assert_eq!(layers, want);
    }

    #[test]
    fn nothing_repeats() {
        assert!(find_layers(&toks("abcdefg"), &[]).layers.is_empty());
    }
}
