//! Op level: GPU time per owning CPU op (the linked leaf `cpu_op`), paired by op name.
//!
//! Kernels replayed from a graph or launched with no enclosing op belong to their runtime call;
//! runtime names lose their vendor prefix (`cudaGraphLaunch` and `hipGraphLaunch` are both
//! `launch: GraphLaunch`) so they line up across vendors. Kernels with no launch are `(unlinked)`.

use super::{keyed_rows, CompareOptions, LevelRow, Side};
use crate::analysis::ops::{owner, Owner, UNLINKED};
use crate::model::NameId;

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

/// What owns GPU row `i`, by name: its op's name, its runtime call's name (no enclosing op),
/// or nothing (no launch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum OwnerName {
    Op(NameId),
    Launch(NameId),
    Unlinked,
}

fn owner_name(s: &Side, i: usize) -> OwnerName {
    let t = &s.analysis.trace;
    match owner(s.analysis, i) {
        Owner::Op(op) => OwnerName::Op(t.ops.name[op as usize]),
        Owner::Launch(l) => OwnerName::Launch(t.launches.name[l as usize]),
        Owner::Unlinked => OwnerName::Unlinked,
    }
}

/// The op key of an owner: the op's name, `launch: GraphLaunch`, or `(unlinked)`.
fn op_key(s: &Side, o: OwnerName) -> String {
    let t = &s.analysis.trace;
    match o {
        OwnerName::Op(name) => t.name(name).to_string(),
        OwnerName::Launch(name) => format!("launch: {}", neutral_runtime_name(t.name(name))),
        OwnerName::Unlinked => UNLINKED.to_string(),
    }
}

/// One row per op name present on either side, sorted by absolute gap per pass.
pub fn compare(a: &Side, b: &Side, opts: &CompareOptions) -> Vec<LevelRow> {
    let mut rows = keyed_rows(a, b, owner_name, op_key, |k| vec![k.clone()], |s, _| s.pass_divisor(), opts);
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
