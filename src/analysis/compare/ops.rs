//! Op level: GPU time per owning CPU op (the linked leaf `cpu_op`), paired by op name.
//!
//! Kernels replayed from a graph or launched with no enclosing op belong to their runtime call;
//! runtime names lose their vendor prefix (`cudaGraphLaunch` and `hipGraphLaunch` are both
//! `launch: GraphLaunch`) so they line up across vendors. Kernels with no launch are `(unlinked)`.

use super::{keyed_rows, CompareOptions, LevelRow, Side};
use crate::analysis::ops::{owner, Owner, UNLINKED};

/// Vendor-neutral name of a runtime call: `cudaLaunchKernel`, `hipLaunchKernel`, `cuLaunchKernel` → `LaunchKernel`.
pub fn neutral_runtime_name(name: &str) -> &str {
    for p in ["cuda", "hip", "cu"] {
        if let Some(rest) = name.strip_prefix(p) {
            if rest.starts_with(|c: char| c.is_ascii_uppercase()) {
                return rest;
            }
        }
    }
    name
}

/// Op key of GPU row `i`.
pub fn op_key(s: &Side, i: usize) -> String {
    let t = &s.analysis.trace;
    match owner(s.analysis, i) {
        Owner::Op(op) => t.name(t.ops.name[op as usize]).to_string(),
        Owner::Launch(l) => format!("launch: {}", neutral_runtime_name(t.name(t.launches.name[l as usize]))),
        Owner::Unlinked => UNLINKED.to_string(),
    }
}

/// One row per op name present on either side, sorted by absolute gap per pass.
pub fn compare(a: &Side, b: &Side, opts: &CompareOptions) -> Vec<LevelRow> {
    let mut rows = keyed_rows(a, b, op_key, |k| vec![k.clone()], |s, _| s.pass_divisor(), opts);
    super::sort_by_gap(&mut rows);
    rows
}

#[cfg(test)]
mod tests {
    use super::neutral_runtime_name;

    #[test]
    fn runtime_names_lose_vendor_prefix() {
        assert_eq!(neutral_runtime_name("cudaGraphLaunch"), "GraphLaunch");
        assert_eq!(neutral_runtime_name("hipGraphLaunch"), "GraphLaunch");
        assert_eq!(neutral_runtime_name("cuLaunchKernel"), "LaunchKernel");
        assert_eq!(neutral_runtime_name("hipExtModuleLaunchKernel"), "ExtModuleLaunchKernel");
        assert_eq!(neutral_runtime_name("custom"), "custom");
    }
}
