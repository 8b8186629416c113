//! Layer level: GPU time per (phase, part of the pass, layer index), as a mean per pass of that
//! phase, so traces with different step counts compare fairly.
//!
//! Parts: `pre` (before the first layer), `layer` (one row per layer index), `post`, `pass` (a
//! pass in which no layers were found: the whole pass is one block) and `outside` (kernels in no
//! pass). Every GPU row of each side is in exactly one row.

use super::{keyed_rows, pass_of, passes_in, CompareOptions, LevelRow, Side};
use crate::analysis::layers::Role;
use crate::analysis::phases::Phase;
use crate::model::NONE;

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
    // a trace with no passes may still have layers (read as one pass): roles decide
    match a.layers.role_of_row.get(i).copied().unwrap_or(Role::None) {
        Role::Pre => (phase, 0, NONE),
        Role::Layer => (phase, 1, a.layers.layer_of_row.get(i).copied().unwrap_or(NONE)),
        Role::Post => (phase, 2, NONE),
        Role::None if pass_of(a, i).is_some() => (phase, 3, NONE),
        Role::None => (phase, 4, NONE),
    }
}

/// Per-pass divisor of a key on a side: passes of its phase (1 outside passes or when the
/// trace has no passes).
fn divisor(s: &Side, k: &LayerKey) -> f64 {
    if k.1 == 4 || s.analysis.phases.passes.is_empty() {
        return 1.0;
    }
    let phase = s.analysis.phases.passes.iter().map(|p| p.phase).find(|p| p.as_str() == k.0);
    phase.map_or(1, |p| passes_in(s.analysis, Some(p)).max(1)) as f64
}

/// One row per (phase, part, layer index) present on either side, in pass order.
pub fn compare(a: &Side, b: &Side, opts: &CompareOptions) -> Vec<LevelRow> {
    let show = |k: &LayerKey| {
        vec![k.0.to_string(), PARTS[k.1 as usize].to_string(), if k.2 == NONE { String::new() } else { k.2.to_string() }]
    };
    keyed_rows(a, b, layer_key, |_, k| k, show, divisor, opts)
}
