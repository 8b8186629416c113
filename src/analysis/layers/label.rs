//! Names layers (`MHA_FC`, `MLA_MOE`, `GDN_FC`...; halves `ATTN`, `MOE`, `FC`) and splits dual-norm
//! layers into their attention and feed-forward halves.

use super::markers::Marker;
use super::repeat::Token;
use std::ops::Range;

/// Type of a whole layer from the markers of its kernels.
///
/// Token mixer: `MLA` if an MLA kernel is present, else `SSM` for a state-space scan (Mamba), else
/// `GDN` for the gated delta rule, else `LIN` for another linear attention (lightning, retention,
/// GLA), else `SWA` for sliding-window attention, else `MHA` (any other attention, or none
/// recognised). Feed-forward kind: `MOE` if a routing /
/// expert kernel is present, else `FC`.
pub fn layer_type(markers: impl Iterator<Item = Marker> + Clone) -> String {
    let has = |m: Marker| markers.clone().any(|x| x == m);
    let mixer = if has(Marker::Mla) {
        "MLA"
    } else if has(Marker::Ssm) {
        "SSM"
    } else if has(Marker::Gdn) {
        "GDN"
    } else if has(Marker::Linear) {
        "LIN"
    } else if has(Marker::Sliding) {
        "SWA"
    } else {
        "MHA"
    };
    format!("{mixer}_{}", ffn_type(markers))
}

/// Layer kinds told apart by structure where no name says what a layer mixes with (names
/// opaque, or no rule knows them): a block that repeats with another kernel count or sequence is
/// another kind. Each layer joins the first kind whose first layer it is like:
/// lengths within a tenth of each other, and at least `ALIKE_KIND` (80%) of the longer one's positions
/// running the same kernel, aligned from the start or from the end (a layer's edges may hold a
/// kernel of the one before or after). A kind other than the most common one is labelled after the type its markers gave with
/// `/B`, `/C`… in order of first appearance: a hybrid's 48 linear-attention and 16 full-attention
/// layers, a dense first layer before MoE layers.
pub fn kinds_by_structure(tokens: &[Token], spans: &mut [(Range<usize>, String)]) {
    if spans.len() < 3 {
        return;
    }
    let alike = |x: &[u32], y: &[u32]| {
        let (short, long) = (x.len().min(y.len()), x.len().max(y.len()));
        long > 0 && (long - short) * 10 <= long && share(x, y) as f64 >= ALIKE_KIND * long as f64
    };
    // The kinds' first layers, and each layer's kind: the first kind one of whose layers it is
    // like (not only its first: a stack's first layer may open with the kernels between two stacks).
    let seqs: Vec<Vec<u32>> = spans.iter().map(|(r, _)| ids(tokens, r)).collect();
    let mut firsts: Vec<&[u32]> = Vec::new();
    let mut kind_of: Vec<usize> = Vec::with_capacity(spans.len());
    for (i, seq) in seqs.iter().enumerate() {
        let like = (0..i).find(|&j| alike(&seqs[j], seq)).map(|j| kind_of[j]);
        match like {
            Some(k) => kind_of.push(k),
            None => {
                firsts.push(seq);
                kind_of.push(firsts.len() - 1);
            }
        }
    }
    let mut members = vec![0usize; firsts.len()];
    for &k in &kind_of {
        members[k] += 1;
    }
    // A kind is a block that repeats, at least MIN_KIND_LAYERS times in the pass, or a block of
    // its own kind at an edge of the stack (a dense first layer before the MoE layers, a last block
    // built otherwise). A layer of a kind that does not repeat joins the repeating kind it shares
    // most aligned kernels with, unless it is the stack's first or last layer and a variant of no
    // repeating kind. (In the middle of a stack a layer unlike the rest is its neighbours' kind with
    // kernels added: a MoE layer whose routing launched more.) A variant of a kind is a piece of it
    // (every kernel the kind's at the aligned place, from the start or the end: the first layer
    // cut short where the embedding's kernels meet it), or the kind with a few kernels changed
    // (its length within a quarter of the kind's and half the kind's kernels at aligned places:
    // the last layers of a compiled stack with the final norm fused in). A layer that is a variant
    // of none at an edge (a dense block, 65 kernels beside MoE layers of 115) stays a kind of its own.
    let repeating: Vec<usize> = (0..firsts.len()).filter(|&k| members[k] >= MIN_KIND_LAYERS).collect();
    if repeating.is_empty() || repeating.len() > 26 {
        return;
    }
    for (i, seq) in seqs.iter().enumerate() {
        if members[kind_of[i]] < MIN_KIND_LAYERS {
            let nearest = repeating.iter().copied().max_by_key(|&k| (share(firsts[k], seq), std::cmp::Reverse(k)));
            let edge = i == 0 || i + 1 == spans.len();
            if let Some(k) = nearest.filter(|&k| !edge || variant(firsts[k], seq)) {
                kind_of[i] = k;
            }
        }
    }
    let mut members = vec![0usize; firsts.len()];
    for &k in &kind_of {
        members[k] += 1;
    }
    if members.iter().filter(|&&m| m > 0).count() < 2 {
        return;
    }
    let common = (0..firsts.len()).max_by_key(|&k| (members[k], std::cmp::Reverse(k))).unwrap_or(0);
    let mut letter = vec![None; firsts.len()];
    let mut next = b'B';
    for (i, &k) in kind_of.iter().enumerate() {
        if k == common {
            continue;
        }
        let l = *letter[k].get_or_insert_with(|| {
            next += 1;
            (next - 1) as char
        });
        spans[i].1 = format!("{}/{l}", spans[i].1);
    }
}

/// The fewest layers a kind of its own holds, but for a block at an edge of the stack (one is enough).
const MIN_KIND_LAYERS: usize = 3;

/// Kernels two layers run at the same aligned position, aligned from the start or the end, or
/// both: their common opening and common ending together (a layer with one kernel more or changed
/// in its middle, as some of Flux.1's single-stream blocks launch, still shares all the others).
fn share(x: &[u32], y: &[u32]) -> usize {
    let from_start = x.iter().zip(y).filter(|(a, b)| a == b).count();
    let from_end = x.iter().rev().zip(y.iter().rev()).filter(|(a, b)| a == b).count();
    let opening = x.iter().zip(y).take_while(|(a, b)| a == b).count();
    let ending = x.iter().rev().zip(y.iter().rev()).take_while(|(a, b)| a == b).count();
    let both = (opening + ending).min(x.len().min(y.len()));
    from_start.max(from_end).max(both)
}

/// Whether one layer is a variant of another's kind (see [`kinds_by_structure`]): a piece of it,
/// or it with a few kernels changed.
fn variant(x: &[u32], y: &[u32]) -> bool {
    let (short, long) = (x.len().min(y.len()), x.len().max(y.len()));
    let aligned = share(x, y);
    long > 0 && (aligned == short || ((long - short) * 4 <= long && aligned * 2 >= long))
}

/// Whether the first and the last layer of a pass are each a block of their own kind: no variant
/// of the layer next to it (SD3.5's last joint block, which has no context branch after it, runs 21
/// kernels where the others run 28 or 29), rather than a layer of the stack cut short where the
/// work before or after it meets it.
pub fn edges_of_their_own(tokens: &[Token], spans: &[(Range<usize>, String)]) -> [bool; 2] {
    let n = spans.len();
    if n < MIN_KIND_LAYERS {
        return [false; 2];
    }
    let ids = |k: usize| ids(tokens, &spans[k].0);
    [!variant(&ids(0), &ids(1)), !variant(&ids(n - 1), &ids(n - 2))]
}

/// The kernel ids of a layer.
fn ids(tokens: &[Token], layer: &Range<usize>) -> Vec<u32> {
    tokens[layer.clone()].iter().map(|t| t.id).collect()
}

/// Share of aligned positions two layers of one kind run the same kernel at.
const ALIKE_KIND: f64 = 0.8;

/// Type of a feed-forward half: `MOE` or `FC`.
pub fn ffn_type(mut markers: impl Iterator<Item = Marker>) -> &'static str {
    if markers.any(|m| m == Marker::Moe) {
        "MOE"
    } else {
        "FC"
    }
}

/// Where the feed-forward half of layer `range` starts (token index), if it can be told.
///
/// The feed-forward half starts with a norm just like the layer does: the layer's own opening
/// (its tokens up to and including its first norm kernel) is looked for again after the last
/// attention kernel; failing that, the first norm kernel after the attention is taken.
pub fn half_split(tokens: &[Token], range: Range<usize>) -> Option<usize> {
    let layer = &tokens[range.clone()];
    let last_mixer = layer.iter().rposition(|t| t.marker.is_mixer())?;
    let first_norm = layer.iter().position(|t| t.marker == Marker::Norm);
    let same = |a: &Token, b: &Token| a.id == b.id || (a.marker == Marker::Norm && b.marker == Marker::Norm);
    if let Some(f) = first_norm.filter(|&f| f < last_mixer) {
        let opening = &layer[..=f];
        if let Some(at) = (last_mixer + 1..layer.len().saturating_sub(f))
            .find(|&i| layer[i..i + opening.len()].iter().zip(opening).all(|(a, b)| same(a, b)))
        {
            return Some(range.start + at);
        }
    }
    let norm_after = (last_mixer + 1..layer.len()).find(|&i| layer[i].marker == Marker::Norm)?;
    Some(range.start + norm_after)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(id: u32, marker: Marker) -> Token {
        Token { id, marker, ns: 1 }
    }

    #[test]
    fn names_layers() {
        assert_eq!(layer_type([Marker::Norm, Marker::Attention, Marker::Gemm].into_iter()), "MHA_FC");
        assert_eq!(layer_type([Marker::Mla, Marker::Moe].into_iter()), "MLA_MOE");
        assert_eq!(layer_type([Marker::Gdn, Marker::Gemm].into_iter()), "GDN_FC");
        // A Mamba2 layer runs causal_conv1d (a gdn marker) beside its scan.
        assert_eq!(layer_type([Marker::Gdn, Marker::Ssm, Marker::Gemm].into_iter()), "SSM_FC");
        assert_eq!(layer_type([Marker::Linear, Marker::Moe].into_iter()), "LIN_MOE");
        assert_eq!(layer_type([Marker::Sliding, Marker::Moe].into_iter()), "SWA_MOE");
    }

    #[test]
    fn splits_after_attention_at_the_repeated_opening() {
        // copy, norm, gemm, attention, gemm, add, copy, norm, gemm, act, gemm, add
        let p = Marker::Plain;
        let toks = vec![
            t(1, p),
            t(2, Marker::Norm),
            t(3, Marker::Gemm),
            t(4, Marker::Attention),
            t(3, Marker::Gemm),
            t(5, p),
            t(1, p),
            t(2, Marker::Norm),
            t(3, Marker::Gemm),
            t(6, p),
            t(3, Marker::Gemm),
            t(5, p),
        ];
        assert_eq!(half_split(&toks, 0..12), Some(6));
        assert_eq!(half_split(&toks[..4], 0..4), None);
    }
}

/// Tells apart the kinds of blocks of a diffusion transformer's step (Flux runs 19 dual-stream
/// blocks, then 38 single-stream ones; the kinds launch different numbers of GEMMs). Consecutive
/// layers with the same GEMM count form a run; a run of one layer (a boundary layer cut a few
/// kernels off) joins the run before it, unless it is the first or the last layer and `own` (from
/// [`edges_of_their_own`]) says that one is a block of its own kind. With two or more runs, each
/// layer's type gets its run's GEMM count: `MHA_FC·10gemm`, `MHA_FC·4gemm`.
pub fn block_kinds(types: &mut [String], gemms: &[u32], own: [bool; 2]) {
    let mut runs: Vec<(usize, usize, u32)> = Vec::new(); // (first, end, gemms)
    for (l, &g) in gemms.iter().enumerate() {
        match runs.last_mut() {
            Some(run) if run.2 == g => run.1 = l + 1,
            _ => runs.push((l, l + 1, g)),
        }
    }
    let n = gemms.len();
    let mut merged: Vec<(usize, usize, u32)> = Vec::new();
    for run in runs {
        match merged.last_mut() {
            Some(last) if run.1 - run.0 < 2 && !(own[1] && run.1 == n) => last.1 = run.1,
            Some(last) if last.1 - last.0 < 2 && last.0 == 0 && !own[0] => *last = (last.0, run.1, run.2),
            Some(last) if last.2 == run.2 => last.1 = run.1,
            _ => merged.push(run),
        }
    }
    if merged.len() < 2 {
        return;
    }
    for (first, end, g) in merged {
        for t in &mut types[first..end] {
            *t = format!("{t}·{g}gemm");
        }
    }
}

#[cfg(test)]
mod block_tests {
    #[test]
    fn two_kinds_of_blocks_are_told_apart_and_a_cut_boundary_layer_joins_its_run() {
        let mut types = vec!["MHA_FC".to_string(); 7];
        super::block_kinds(&mut types, &[6, 6, 6, 5, 2, 2, 2], [false; 2]);
        assert_eq!(types[..4], ["MHA_FC·6gemm"; 4].map(String::from));
        assert_eq!(types[4..], ["MHA_FC·2gemm"; 3].map(String::from));
        let mut same = vec!["ATTN".to_string(); 3];
        super::block_kinds(&mut same, &[4, 4, 4], [false; 2]);
        assert_eq!(same, ["ATTN"; 3].map(String::from));
    }
}
