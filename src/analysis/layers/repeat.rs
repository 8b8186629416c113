//! Finds the repeating block of a forward pass and cuts it into layers.
//!
//! Input: one token per kernel of the pass, in time order (the kernel's interned name and its
//! [`Marker`]). The decoder layers of a transformer launch (nearly) the same kernels in the same
//! order N times, so some kernels occur exactly once per layer. The method:
//!
//! 1. **Period**: for every count `c`, take the kernel names that occur exactly `c` times; a name
//!    that alternates with them (one occurrence between two of theirs) belongs to the same cycle,
//!    names occurring `k·c` times with exactly `k` per cycle do too. The `c` whose cycle explains
//!    the most kernels is the number of layers; its earliest such name is the anchor.
//! 2. **Start**: walk backwards from every anchor occurrence in step. Layers 2..N are preceded by
//!    the previous layer's tail, layer 1 by the embedding: the walk stops where layer 1's
//!    predecessor no longer looks like the others'. That point, in every cycle, is a layer start.
//!    Markers make equal what only differs by fusion (`rms_norm` vs `fused_add_rms_norm`), and a
//!    layer does not start on a collective.
//! 3. **End of the last layer**: it is aligned with the layer before it (from its start and from
//!    each once-per-layer kernel), and ends where it stops matching; the rest is post-layer work.
//!
//! Nothing here knows a model: a model never seen works if its layers repeat.

use super::markers::Marker;
use std::collections::HashMap;
use std::ops::Range;

/// One kernel of a pass, as the detector sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    /// Interned kernel name (any id that is equal for equal names).
    pub id: u32,
    pub marker: Marker,
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
    let mut positions: HashMap<u32, Vec<usize>> = HashMap::new();
    for (i, t) in tokens.iter().enumerate() {
        positions.entry(t.id).or_default().push(i);
    }
    let Some(cycle) = best_cycle(&positions, n) else { return Repeat::default() };
    let anchor = &positions[&cycle.anchor];
    let starts = layer_starts(tokens, anchor, never_start_on);
    let end = last_layer_end(tokens, &starts, &cycle.members, &positions);
    let mut layers: Vec<Range<usize>> = starts.windows(2).map(|w| w[0]..w[1]).collect();
    if let Some(&last) = starts.last() {
        layers.push(last..end.max(last + 1).min(n));
    }
    Repeat { layers, anchor: Some(cycle.anchor), explained: cycle.kernels as f64 / n as f64 }
}

/// A candidate cycle: its anchor and the names that repeat with it.
struct Cycle {
    anchor: u32,
    /// Names occurring exactly once per cycle (anchor included).
    members: Vec<u32>,
    /// Kernels explained by the cycle (once- and k-times-per-cycle names).
    kernels: usize,
    count: usize,
}

fn best_cycle(positions: &HashMap<u32, Vec<usize>>, n: usize) -> Option<Cycle> {
    let mut by_count: HashMap<usize, Vec<u32>> = HashMap::new();
    for (&id, pos) in positions {
        if pos.len() >= MIN_LAYERS && pos.len() <= n / 2 {
            by_count.entry(pos.len()).or_default().push(id);
        }
    }
    let mut best: Option<Cycle> = None;
    for (&count, ids) in &by_count {
        let mut ids = ids.clone();
        ids.sort_by_key(|id| positions[id][0]);
        // Try a few anchors per count (the earliest names first).
        for &a in ids.iter().take(6) {
            let p = &positions[&a];
            if ((p[count - 1] - p[0]) as f64) < MIN_SPAN * n as f64 {
                continue;
            }
            let members: Vec<u32> = ids.iter().copied().filter(|x| interleaves(p, &positions[x])).collect();
            let mut kernels = members.len() * count;
            for k in 2..=4 {
                if let Some(multi) = by_count.get(&(k * count)) {
                    kernels += multi.iter().filter(|x| fits(p, &positions[x], k)).count() * k * count;
                }
            }
            let better = match &best {
                None => true,
                Some(b) => kernels > b.kernels || (kernels == b.kernels && count > b.count),
            };
            if better && members.len() >= 2 {
                best = Some(Cycle { anchor: a, members, kernels, count });
            }
        }
    }
    best
}

/// True if `x` has one occurrence in every gap of anchor positions `p` (all after, or all before, each anchor).
fn interleaves(p: &[usize], x: &[usize]) -> bool {
    fits(p, x, 1)
}

/// True if `x` occurs exactly `k` times per cycle of anchor positions `p`, in the same phase.
fn fits(p: &[usize], x: &[usize], k: usize) -> bool {
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

/// Layer starts: walk back from every anchor occurrence while the layers agree (see module doc).
fn layer_starts(tokens: &[Token], anchor: &[usize], never_start_on: &[Marker]) -> Vec<usize> {
    let l = anchor.len();
    let min_gap = anchor.windows(2).map(|w| w[1] - w[0]).min().unwrap_or(0);
    let mut shift = 0;
    let mut tally: HashMap<u64, usize> = HashMap::new();
    for s in 1..=min_gap.min(anchor[0]) {
        tally.clear();
        for &p in &anchor[1..] {
            *tally.entry(tokens[p - s].key()).or_insert(0) += 1;
        }
        let (&key, &votes) = tally.iter().max_by_key(|(_, v)| **v).expect("at least two layers");
        if (votes as f64) < AGREEMENT * (l - 1) as f64 || tokens[anchor[0] - s].key() != key {
            break;
        }
        shift = s;
    }
    let mut starts: Vec<usize> = anchor
        .iter()
        .map(|&p| {
            let mut c = p - shift;
            while c < p && never_start_on.contains(&tokens[c].marker) {
                c += 1;
            }
            c
        })
        .collect();
    starts.dedup();
    starts
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
    use super::*;

    fn toks(s: &str) -> Vec<Token> {
        s.chars()
            .map(|c| Token { id: c as u32, marker: if c == 'n' || c == 'N' { Marker::Norm } else if c == 'r' { Marker::Communication } else { Marker::Plain } })
            .collect()
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
    fn nothing_repeats() {
        assert!(find_layers(&toks("abcdefg"), &[]).layers.is_empty());
    }
}
