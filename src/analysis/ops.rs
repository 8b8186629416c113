//! Attribution of GPU time to CPU ops: which op (or launcher) owns each GPU row, and per-op
//! aggregates. The op of a GPU row is its linked leaf `cpu_op`; a kernel replayed from a CUDA/HIP
//! graph with no enclosing op belongs to its graph launch (`cudaGraphLaunch`); a kernel whose
//! launch is missing from the trace is `(unlinked)`.

use super::base::Base;
use super::categories::KernelCategories;
use crate::model::{NameId, NONE};

/// Who owns a GPU row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Owner {
    /// A CPU op (row index in `trace.ops`).
    Op(u32),
    /// A runtime launch with no enclosing op (row index in `trace.launches`).
    Launch(u32),
    /// No launch found.
    Unlinked,
}

/// Label used for kernels with no launch in the trace.
pub const UNLINKED: &str = "(unlinked)";

/// Owner of GPU row `i`.
pub fn owner(a: &Base, i: usize) -> Owner {
    let g = &a.trace.gpu;
    if g.cpu_op[i] != NONE {
        Owner::Op(g.cpu_op[i])
    } else if g.launch[i] != NONE {
        Owner::Launch(g.launch[i])
    } else {
        Owner::Unlinked
    }
}

/// Name id of an owner (op name or launcher name); `None` for unlinked.
pub fn owner_name(a: &Base, o: Owner) -> Option<NameId> {
    match o {
        Owner::Op(op) => Some(a.trace.ops.name[op as usize]),
        Owner::Launch(l) => Some(a.trace.launches.name[l as usize]),
        Owner::Unlinked => None,
    }
}

/// Display name of an owner.
pub fn owner_label(a: &Base, o: Owner) -> &str {
    name_label(a, owner_name(a, o))
}

/// Display name of an owner's name id ([`owner_name`]; `None` is [`UNLINKED`]).
pub fn name_label(a: &Base, name: Option<NameId>) -> &str {
    name.map_or(UNLINKED, |n| a.trace.name(n))
}

/// Op categories, in the order of [`CategoryTimes`]' slots.
pub const OP_CATEGORIES: [&str; 10] =
    ["GEMM", "SDPA/attention", "norm", "elementwise", "MoE", "communication", "memset", "memcpy", "reduce", "other"];

/// Coarse op category from the family of the op's kernels (GEMM, SDPA/attention, norm,
/// elementwise, reduce, memcpy, communication, MoE, other) — derived from the kernel rules table.
pub fn op_category_of_family(family: &str, category: &str) -> &'static str {
    match family {
        "GEMM" => "GEMM",
        "Attention" => "SDPA/attention",
        "Norm" => "norm",
        "Activation" => "elementwise",
        "MoE" => "MoE",
        "Communication" => "communication",
        "Memory" if category == "Memory-Set" => "memset",
        "Memory" => "memcpy",
        "Elementwise/Reduce" if category.starts_with("Reduce") => "reduce",
        "Elementwise/Reduce" => "elementwise",
        _ => "other",
    }
}

/// Op category (index into [`OP_CATEGORIES`]) of every kernel category id: decided once per
/// category so per-row code does one load instead of string matches.
pub fn op_category_ids(categories: &KernelCategories) -> Vec<u8> {
    categories
        .categories
        .iter()
        .map(|c| {
            let op_category = op_category_of_family(&c.family, &c.name);
            OP_CATEGORIES.iter().position(|&x| x == op_category).unwrap_or(OP_CATEGORIES.len() - 1) as u8
        })
        .collect()
}

/// GPU time per op category of a group of rows, to name the group's dominant category.
#[derive(Debug, Clone, Copy, Default)]
pub struct CategoryTimes {
    time: [i64; OP_CATEGORIES.len()],
    /// Bit `c` set once a row of category `c` was added (even with zero time).
    seen: u16,
}

impl CategoryTimes {
    /// Adds `ns` to op category `c` (an index into [`OP_CATEGORIES`]).
    #[inline]
    pub fn add(&mut self, c: u8, ns: i64) {
        self.time[c as usize] += ns;
        self.seen |= 1 << c;
    }
    /// The category with most time (ties: the alphabetically first); `other` when empty.
    pub fn dominant(&self) -> &'static str {
        (0..OP_CATEGORIES.len())
            .filter(|&c| self.seen & (1 << c) != 0)
            .max_by_key(|&c| (self.time[c], std::cmp::Reverse(OP_CATEGORIES[c])))
            .map_or("other", |c| OP_CATEGORIES[c])
    }
}

/// Statistics over a list of durations (ns).
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// Kernels of the op.
    pub count: usize,
    /// Their summed duration (ns).
    pub total: i64,
    /// The shortest (ns).
    pub min: i64,
    /// The longest (ns).
    pub max: i64,
    /// The median (ns).
    pub median: f64,
}

impl Stats {
    /// Summarises `v` (sorted in place).
    pub fn of(v: &mut [i64]) -> Stats {
        if v.is_empty() {
            return Stats::default();
        }
        v.sort_unstable();
        let n = v.len();
        let median = if n % 2 == 1 { v[n / 2] as f64 } else { (v[n / 2 - 1] + v[n / 2]) as f64 / 2.0 };
        Stats { count: n, total: v.iter().sum(), min: v[0], max: v[n - 1], median }
    }
    /// Mean (ns).
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.total as f64 / self.count as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(name: &str) -> u8 {
        OP_CATEGORIES.iter().position(|&c| c == name).unwrap() as u8
    }

    #[test]
    fn dominant_category_is_the_one_with_most_time_ties_alphabetical() {
        let mut t = CategoryTimes::default();
        assert_eq!(t.dominant(), "other", "nothing added");
        t.add(slot("norm"), 0);
        assert_eq!(t.dominant(), "norm", "a zero-time row still counts as seen");
        t.add(slot("GEMM"), 5);
        t.add(slot("elementwise"), 5);
        assert_eq!(t.dominant(), "GEMM", "equal time: the alphabetically first ('G' < 'e')");
        t.add(slot("elementwise"), 1);
        assert_eq!(t.dominant(), "elementwise");
    }
}
