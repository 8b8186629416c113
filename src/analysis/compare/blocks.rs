//! Which kernels get aligned: per phase, one representative pass of each side (the pass with the
//! median kernel count), split into its pre part, one representative layer (the middle layer
//! index present on both sides) and its post part. When a side has no passes, its whole
//! selection is one block; when a pass has no layers, the whole pass is one block.

use super::{passes_in, Side};
use crate::analysis::layers::Role;
use crate::analysis::phases::Phase;
use crate::model::NONE;

/// A pair of kernel sequences to align.
#[derive(Debug, Clone)]
pub struct Block {
    /// E.g. `decode: layer 12`, `prefill: pre`, `all: whole selection`.
    pub name: String,
    /// Representative pass of each side (`None` when the side has no passes).
    pub a_pass: Option<u32>,
    /// Representative pass of side B.
    pub b_pass: Option<u32>,
    /// GPU rows of each side in time order (possibly cut to the alignment limit).
    pub a_rows: Vec<usize>,
    /// GPU rows of side B, in time order.
    pub b_rows: Vec<usize>,
    /// Rows of each side before any cut.
    pub a_len: usize,
    /// Rows of side B before any cut.
    pub b_len: usize,
}

/// Sorts rows by start time (stable on trace order).
fn in_time_order(s: &Side, mut rows: Vec<usize>) -> Vec<usize> {
    let ts = &s.analysis.trace.gpu.ts;
    rows.sort_by_key(|&i| (ts[i], i));
    rows
}

/// The pass of phase `phase` with the median kernel count (lowest index among equals).
pub fn representative_pass(s: &Side, phase: Phase) -> Option<u32> {
    let mut v: Vec<(usize, u32)> =
        s.analysis.phases.passes.iter().filter(|p| p.phase == phase).map(|p| (p.rows.len(), p.index)).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    Some(v[(v.len() - 1) / 2].1)
}

/// Rows of pass `p` that are in the side's selection, in time order.
fn pass_rows(s: &Side, p: u32) -> Vec<usize> {
    let a = s.analysis;
    let pos = a.phases.passes.iter().position(|x| x.index == p);
    let rows: Vec<usize> = pos.map(|k| a.phases.passes[k].rows.iter().map(|&r| r as usize).collect()).unwrap_or_default();
    let selected: std::collections::HashSet<usize> = s.rows.iter().copied().collect();
    in_time_order(s, rows.into_iter().filter(|r| selected.contains(r)).collect())
}

fn role(s: &Side, i: usize) -> Role {
    s.analysis.layers.role_of_row.get(i).copied().unwrap_or(Role::None)
}

fn layer(s: &Side, i: usize) -> u32 {
    s.analysis.layers.layer_of_row.get(i).copied().unwrap_or(NONE)
}

/// Layer indices present in `rows`, sorted.
fn layer_indices(s: &Side, rows: &[usize]) -> Vec<u32> {
    let mut v: Vec<u32> =
        rows.iter().filter(|&&i| role(s, i) == Role::Layer).map(|&i| layer(s, i)).filter(|&l| l != NONE).collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn block(name: String, a_pass: Option<u32>, b_pass: Option<u32>, a_rows: Vec<usize>, b_rows: Vec<usize>) -> Block {
    Block { name, a_pass, b_pass, a_len: a_rows.len(), b_len: b_rows.len(), a_rows, b_rows }
}

/// Splits a pair of representative passes (rows in time order) into pre / layer / post blocks,
/// or one block when the two share no layer index.
fn pass_blocks(
    a: &Side,
    b: &Side,
    phase: &str,
    (pa, ra): (Option<u32>, Vec<usize>),
    (pb, rb): (Option<u32>, Vec<usize>),
) -> Vec<Block> {
    let (la, lb) = (layer_indices(a, &ra), layer_indices(b, &rb));
    let common: Vec<u32> = la.iter().copied().filter(|l| lb.binary_search(l).is_ok()).collect();
    if common.is_empty() {
        return vec![block(format!("{phase}: whole pass"), pa, pb, ra, rb)];
    }
    let k = common[common.len() / 2];
    let pick = |s: &Side, rows: &[usize], want: Role, l: u32| -> Vec<usize> {
        rows.iter().copied().filter(|&i| role(s, i) == want && (want != Role::Layer || layer(s, i) == l)).collect()
    };
    vec![
        block(format!("{phase}: pre"), pa, pb, pick(a, &ra, Role::Pre, 0), pick(b, &rb, Role::Pre, 0)),
        block(format!("{phase}: layer {k}"), pa, pb, pick(a, &ra, Role::Layer, k), pick(b, &rb, Role::Layer, k)),
        block(format!("{phase}: post"), pa, pb, pick(a, &ra, Role::Post, 0), pick(b, &rb, Role::Post, 0)),
    ]
}

/// The representative pass of a side when the two sides share no phase: its pass of the selected
/// phase, else of its most frequent phase; `None` rows = the whole selection (no passes).
fn fallback_pass(s: &Side, phase: Option<Phase>) -> (Option<u32>, Vec<usize>) {
    let ps = &s.analysis.phases.passes;
    let want = phase.or_else(|| {
        let mut counts: Vec<(usize, Phase)> = Vec::new();
        for p in ps {
            match counts.iter_mut().find(|c| c.1 == p.phase) {
                Some(c) => c.0 += 1,
                None => counts.push((1, p.phase)),
            }
        }
        counts.into_iter().max_by_key(|c| c.0).map(|c| c.1)
    });
    match want.and_then(|p| representative_pass(s, p)) {
        Some(p) => (Some(p), pass_rows(s, p)),
        None => (None, in_time_order(s, s.rows.clone())),
    }
}

/// The blocks to align for a phase selection (`None` = all phases).
pub fn blocks(a: &Side, b: &Side, phase: Option<Phase>, max_cells: usize) -> Vec<Block> {
    let phases: Vec<Phase> = match phase {
        Some(p) => vec![p],
        None => {
            Phase::ALL.into_iter().filter(|&p| passes_in(a.analysis, Some(p)) > 0 && passes_in(b.analysis, Some(p)) > 0).collect()
        }
    };
    let mut out = Vec::new();
    for p in &phases {
        if let (Some(pa), Some(pb)) = (representative_pass(a, *p), representative_pass(b, *p)) {
            out.extend(pass_blocks(a, b, p.as_str(), (Some(pa), pass_rows(a, pa)), (Some(pb), pass_rows(b, pb))));
        }
    }
    if out.is_empty() {
        let name = phase.map_or("all", |p| p.as_str());
        out = pass_blocks(a, b, name, fallback_pass(a, phase), fallback_pass(b, phase));
    }
    for blk in &mut out {
        cut(blk, max_cells);
    }
    out
}

/// Cuts both sequences of a block to their first kernels so that `a × b ≤ max_cells`.
pub fn cut(blk: &mut Block, max_cells: usize) {
    let (n, m) = (blk.a_rows.len(), blk.b_rows.len());
    if n.saturating_mul(m) <= max_cells.max(1) {
        return;
    }
    let f = (max_cells.max(1) as f64 / (n as f64 * m as f64)).sqrt();
    let (cn, cm) = (((n as f64 * f) as usize).max(1), ((m as f64 * f) as usize).max(1));
    blk.a_rows.truncate(cn);
    blk.b_rows.truncate(cm);
}
