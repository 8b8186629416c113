//! Layer level: GPU time per (phase, part of the pass, layer index), as a mean per pass of that
//! phase, so traces with different step counts compare fairly.
//!
//! Parts: `pre` (before the first layer), `layer` (one row per layer index), `post`, `pass` (a
//! pass in which no layers were found: the whole pass is one block) and `outside` (kernels in no
//! pass). Every GPU row of each side is in exactly one row.

use super::{group, judge, pair, pass_of, passes_in, CompareOptions, LevelRow, Side};
use crate::analysis::layers::Role;
use crate::analysis::phases::Phase;
use crate::model::NONE;
use std::collections::BTreeMap;

/// Where a GPU row sits: (phase name, part order, layer index or `NONE`).
pub type LayerKey = (&'static str, u8, u32);

/// Part names by order in [`LayerKey`].
pub const PARTS: [&str; 5] = ["pre", "layer", "post", "pass", "outside"];

/// Phase of the pass holding GPU row `i` (falls back to the row's own phase).
pub fn row_phase(s: &Side, i: usize) -> Option<Phase> {
    let a = s.analysis;
    match pass_of(a, i).and_then(|p| a.phases.passes.get(p as usize)) {
        Some(p) => Some(p.phase),
        None => a.phases.phase_of_row.get(i).copied().flatten(),
    }
}

/// Layer key of GPU row `i`.
pub fn layer_key(s: &Side, i: usize) -> LayerKey {
    let a = s.analysis;
    let phase = row_phase(s, i).map_or("none", |p| p.as_str());
    if pass_of(a, i).is_none() {
        return (phase, 4, NONE);
    }
    match a.layers.role_of_row.get(i).copied().unwrap_or(Role::None) {
        Role::Pre => (phase, 0, NONE),
        Role::Layer => (phase, 1, a.layers.layer_of_row.get(i).copied().unwrap_or(NONE)),
        Role::Post => (phase, 2, NONE),
        Role::None => (phase, 3, NONE),
    }
}

/// Per-pass divisor of a key on a side: passes of its phase (1 outside passes).
fn divisor(s: &Side, k: &LayerKey) -> f64 {
    if k.1 == 4 {
        return 1.0;
    }
    let phase = s.analysis.phases.passes.iter().map(|p| p.phase).find(|p| p.as_str() == k.0);
    phase.map_or(1, |p| passes_in(s.analysis, Some(p)).max(1)) as f64
}

/// Most common layer type among the rows of each key.
fn layer_types(s: &Side) -> BTreeMap<LayerKey, String> {
    let mut per: BTreeMap<LayerKey, BTreeMap<&str, usize>> = BTreeMap::new();
    for &i in &s.rows {
        if let Some(t) = s.analysis.layers.type_of_row.get(i).filter(|t| !t.is_empty()) {
            *per.entry(layer_key(s, i)).or_default().entry(t.as_str()).or_insert(0) += 1;
        }
    }
    per.into_iter()
        .map(|(k, m)| (k, m.into_iter().max_by(|x, y| x.1.cmp(&y.1).then(y.0.cmp(x.0))).map(|(t, _)| t.to_string()).unwrap_or_default()))
        .collect()
}

/// One row per (phase, part, layer index) present on either side, in pass order.
pub fn compare(a: &Side, b: &Side, opts: &CompareOptions) -> Vec<LevelRow> {
    let (mut ta, mut tb) = (layer_types(a), layer_types(b));
    pair(group(a, |i| layer_key(a, i)), group(b, |i| layer_key(b, i)))
        .into_iter()
        .map(|(k, xa, xb)| {
            let (da, db) = (divisor(a, &k), divisor(b, &k));
            LevelRow {
                key: vec![k.0.to_string(), PARTS[k.1 as usize].to_string(), if k.2 == NONE { String::new() } else { k.2.to_string() }],
                a: xa,
                b: xb,
                a_div: da,
                b_div: db,
                verdict: judge(xa, xb, da, db, opts),
                a_note: ta.remove(&k).unwrap_or_default(),
                b_note: tb.remove(&k).unwrap_or_default(),
            }
        })
        .collect()
}
