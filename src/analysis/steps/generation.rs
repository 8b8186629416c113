//! The evidence of token generation that both the workload verdict and the phases read: what the
//! trace's names say (a sampler, embedding lookups, an engine's or a diffusion pipeline's names)
//! and kernels whose category shows generation (KV-cache writes, paged or decode attention).

use super::rules::{any_match, PhaseRules};
use crate::analysis::categories::KernelCategories;
use crate::analysis::per_name::PerName;
use crate::model::{OpKind, Trace};

/// What the trace's names say, counted once per trace.
#[derive(Debug, Clone, Default)]
pub struct NameEvidence {
    /// The name of the first CPU op that samples a token (a step-end marker), if any.
    pub sampler: Option<String>,
    /// When each such op started (CPU clock, ns): one entry per sampled token.
    pub sampling_ts: Vec<i64>,
    /// A name that shows a diffusion pipeline.
    pub diffusion: Option<String>,
    /// A name that shows an LLM engine or generation loop.
    pub llm: Option<String>,
    /// A name that shows a serving engine batching requests continuously.
    pub batching_engine: Option<String>,
    /// CPU ops that look up token embeddings (the step-start markers).
    pub embeddings: usize,
}

/// Scans CPU op, Python frame and annotation names once.
pub fn name_evidence(trace: &Trace, rules: &PhaseRules) -> NameEvidence {
    let w = &rules.workload;
    let mut seen: PerName<u8> = PerName::new(trace.names.len());
    let mut out = NameEvidence::default();
    for i in 0..trace.ops.len() {
        let id = trace.ops.name[i];
        let class = *seen.get_or_insert_with(id, || {
            let name = trace.name(id);
            (any_match(&rules.end_ops, name) as u8)
                | ((any_match(&w.diffusion_names, name) as u8) << 1)
                | ((any_match(&w.llm_names, name) as u8) << 2)
                | ((any_match(&rules.start_ops, name) as u8) << 3)
                | ((any_match(&w.batching_engine_names, name) as u8) << 4)
        });
        if class & 8 != 0 && trace.ops.kind[i] == OpKind::CpuOp {
            out.embeddings += 1;
        }
        if class & 1 != 0 && trace.ops.kind[i] == OpKind::CpuOp && !rules.end_op_picks_an_index(trace, i) {
            out.sampling_ts.push(trace.ops.ts[i]);
            out.sampler.get_or_insert_with(|| trace.name(id).to_string());
        }
        if class & 2 != 0 && out.diffusion.is_none() {
            out.diffusion = Some(short(trace.name(id)));
        }
        if class & 4 != 0 && out.llm.is_none() {
            out.llm = Some(short(trace.name(id)));
        }
        if class & 16 != 0 && out.batching_engine.is_none() {
            out.batching_engine = Some(short(trace.name(id)));
        }
    }
    if !trace.ops.kind.contains(&OpKind::CpuOp) {
        sampling_kernels(trace, rules, &mut out);
    }
    out
}

/// In a trace with no CPU op (the GPU profiled alone), the kernels that sample a token stand for
/// the sampling ops: one sample per kernel, at its GPU start.
fn sampling_kernels(trace: &Trace, rules: &PhaseRules, out: &mut NameEvidence) {
    let mut seen: PerName<bool> = PerName::new(trace.names.len());
    for i in trace.kernel_rows() {
        let id = trace.gpu.name[i];
        if *seen.get_or_insert_with(id, || rules.sampling_kernels.matches(trace.name(id))) {
            out.sampling_ts.push(trace.gpu.ts[i]);
            out.sampler.get_or_insert_with(|| format!("kernel {}", short(trace.name(id))));
        }
    }
}

/// Whether the names alone already show LLM generation, before any repetition is looked for:
/// steps annotated by a serving engine, an engine's or generation loop's names, or many tokens
/// sampled. (A diffusion pipeline's text encoders may pool with argmax a few times, once per
/// prompt and encoder, so only many samples count here; fewer are judged against the steps in
/// [`crate::analysis::workload::diffusion_evidence`].) The repetition search costs a pass over every kernel of a large trace.
pub fn generation_shown(names: &NameEvidence, engine_steps: bool) -> bool {
    engine_steps || names.llm.is_some() || names.sampling_ts.len() >= 16
}

/// A name as evidence: at most 81 characters.
pub(crate) fn short(name: &str) -> String {
    crate::support::text::ellipsis(name, 81)
}

/// Kernels whose category shows token generation ([`super::rules::WorkloadRules::generation_categories`]):
/// the first such category with kernels, and how many kernels it has.
pub fn generation_kernels(trace: &Trace, categories: &KernelCategories, rules: &PhaseRules) -> Option<(String, usize)> {
    let wanted: Vec<u16> = rules.workload.generation_categories.iter().filter_map(|c| categories.id(c)).collect();
    if wanted.is_empty() {
        return None;
    }
    let counts = crate::analysis::categories::time_by_category(trace, categories, trace.kernel_rows());
    wanted.iter().find_map(|&c| {
        let &(_, n, _) = counts.iter().find(|x| x.0 == c)?;
        Some((categories.categories[c as usize].name.clone(), n as usize))
    })
}
