//! Kernel categories. PLACEHOLDER until issue 3 lands: a handful of name tests.
//! The interface (`KernelCategories` and its methods) is the contract other analyses use.

use super::Options;
use crate::error::Result;
use crate::model::{GpuKind, Trace};

/// A category and its coarse family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Category {
    pub name: String,
    pub family: String,
}

/// Category of every GPU row of the trace.
#[derive(Debug, Clone, Default)]
pub struct KernelCategories {
    /// All categories, indexed by category id.
    pub categories: Vec<Category>,
    /// Category id of each GPU row (`trace.gpu`).
    pub of_row: Vec<u16>,
    /// Which rule decided each row (human-readable).
    pub rule_of_row: Vec<u16>,
    /// Rule descriptions, indexed by rule id.
    pub rules: Vec<String>,
}

impl KernelCategories {
    /// Category name of GPU row `i`.
    pub fn name(&self, i: usize) -> &str {
        &self.categories[self.of_row[i] as usize].name
    }
    /// Family of GPU row `i` (GEMM, Attention, Norm, Activation, MoE, Communication, Memory, Elementwise/Reduce, Other).
    pub fn family(&self, i: usize) -> &str {
        &self.categories[self.of_row[i] as usize].family
    }
    /// True if row `i` is a collective / communication kernel.
    pub fn is_communication(&self, i: usize) -> bool {
        self.family(i) == "Communication"
    }
    /// The rule that decided row `i`.
    pub fn rule(&self, i: usize) -> &str {
        &self.rules[self.rule_of_row[i] as usize]
    }
}

/// Categorises every GPU row.
pub fn categorize(trace: &Trace, _options: &Options) -> Result<KernelCategories> {
    let cats = [("Other", "Other"), ("GEMM-cuBLAS", "GEMM"), ("Communication-AllReduce", "Communication"), ("Memory-Copy", "Memory"), ("Memory-Set", "Memory")];
    let mut out = KernelCategories {
        categories: cats.iter().map(|(n, f)| Category { name: n.to_string(), family: f.to_string() }).collect(),
        rules: vec!["placeholder".into()],
        ..Default::default()
    };
    for i in 0..trace.gpu.len() {
        let n = trace.name(trace.gpu.name[i]);
        let c = match trace.gpu.kind[i] {
            GpuKind::Memcpy => 3,
            GpuKind::Memset => 4,
            GpuKind::Kernel if n.contains("nccl") || n.contains("all_reduce") || n.contains("cross_device_reduce") => 2,
            GpuKind::Kernel if n.contains("gemm") || n.starts_with("nvjet") || n.starts_with("Cijk") => 1,
            _ => 0,
        };
        out.of_row.push(c);
        out.rule_of_row.push(0);
    }
    Ok(out)
}
