//! Two traces' call paths side by side: the differential flame graph's data.

use super::call_paths::CallPaths;
use crate::analysis::base::Base;
use crate::analysis::phases::Phase;

/// One trace's side of a differential: its analyses and its call paths.
pub struct Side<'a> {
    /// The trace and its passes.
    pub base: &'a Base,
    /// Its call-path tree.
    pub paths: &'a CallPaths,
}

/// One call path in two traces: its GPU time per pass on each side (ns).
#[derive(Debug, Clone, PartialEq)]
pub struct PathDiff {
    /// Frames from the outermost down to the kernel, joined by `;` (the folded format's stack).
    pub path: String,
    /// GPU time per pass in A (ns).
    pub a_ns_per_pass: f64,
    /// GPU time per pass in B (ns).
    pub b_ns_per_pass: f64,
}

/// Passes of `a` in `phase` (all phases: `None`), at least 1: what a path's time is divided by.
pub fn passes_in(a: &Base, phase: Option<Phase>) -> usize {
    a.phases.passes.iter().filter(|p| phase.is_none_or(|ph| p.phase == ph)).count().max(1)
}

/// The call paths of two traces aligned by path, each side's time per pass of `phase`: the
/// differential flame graph's data, largest absolute change first. Paths one side lacks have 0
/// there.
pub fn differential(a: Side, b: Side, phase: Option<Phase>) -> Vec<PathDiff> {
    let (pa, pb) = (passes_in(a.base, phase) as f64, passes_in(b.base, phase) as f64);
    let mut by_path: std::collections::HashMap<String, (f64, f64)> = std::collections::HashMap::new();
    for (path, ns) in a.paths.folded(phase) {
        by_path.entry(path).or_default().0 += ns as f64 / pa;
    }
    for (path, ns) in b.paths.folded(phase) {
        by_path.entry(path).or_default().1 += ns as f64 / pb;
    }
    let mut out: Vec<PathDiff> =
        by_path.into_iter().map(|(path, (x, y))| PathDiff { path, a_ns_per_pass: x, b_ns_per_pass: y }).collect();
    out.sort_by(|x, y| {
        (y.a_ns_per_pass - y.b_ns_per_pass)
            .abs()
            .total_cmp(&(x.a_ns_per_pass - x.b_ns_per_pass).abs())
            .then_with(|| x.path.cmp(&y.path))
    });
    out
}
