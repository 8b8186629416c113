//! Is this trace LLM inference at all? Training (backward, optimizer) and non-LLM work (no attention
//! anywhere) get no prefill/decode labels.

use super::WorkloadKind;
use crate::analysis::categories::KernelCategories;
use crate::analysis::per_name::PerName;
use crate::analysis::steps::rules::{any_match, PhaseRules};
use crate::model::{GpuKind, OpKind, Trace};

/// What a trace is instead of inference (training, or one forward of a model with no attention)
/// and why, or `None` if it looks like LLM inference.
pub fn not_inference_reason(
    trace: &Trace,
    rules: &PhaseRules,
    categories: &KernelCategories,
    has_steps: bool,
) -> Option<(WorkloadKind, String)> {
    // (training op, attention op) per interned name.
    let mut by_name: PerName<(bool, bool)> = PerName::new(trace.names.len());
    let mut training_ops = 0usize;
    let mut attention_ops = 0usize;
    for i in 0..trace.ops.len() {
        if trace.ops.kind[i] == OpKind::PythonFunction {
            continue;
        }
        let id = trace.ops.name[i];
        let (train, attn) = *by_name.get_or_insert_with(id, || {
            let name = trace.name(id);
            (any_match(&rules.training_ops, name), any_match(&rules.attention_ops, name))
        });
        training_ops += train as usize;
        attention_ops += (attn && trace.ops.kind[i] == OpKind::CpuOp) as usize;
    }
    let mut kernel_class: PerName<(bool, bool)> = PerName::new(trace.names.len());
    let (mut training_kernels, mut attention_kernels, mut kernels, mut named) = (0usize, 0usize, 0usize, 0usize);
    for i in 0..trace.gpu.len() {
        if trace.gpu.kind[i] != GpuKind::Kernel {
            continue;
        }
        kernels += 1;
        let id = trace.gpu.name[i];
        let (train, attn) = *kernel_class.get_or_insert_with(id, || {
            let n = trace.name(id);
            (any_match(&rules.training_kernels, n), any_match(&rules.attention_kernels, n))
        });
        training_kernels += train as usize;
        attention_kernels += (attn || categories.family(i) == "Attention") as usize;
        named += categories.is_named(i) as usize;
    }
    let min = rules.thresholds.min_training_events;
    if training_ops >= min || training_kernels >= min {
        let why = format!("training: {training_ops} backward/optimizer ops, {training_kernels} backward kernels");
        return Some((WorkloadKind::Training, why));
    }
    // "No attention anywhere" is a claim about names: it holds only where the rules know most
    // kernels (a trace of names no rule knows says nothing either way).
    let names_known = crate::analysis::categories::names_known(named, kernels);
    if kernels > 0 && !has_steps && names_known && attention_ops == 0 && attention_kernels == 0 {
        return Some((WorkloadKind::SinglePass, "no attention op or kernel anywhere: not an LLM".into()));
    }
    None
}
