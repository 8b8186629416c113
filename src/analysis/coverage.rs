//! How much of a trace the name rules know, and what the passes and layers stand on: names (step
//! annotations, step markers, token-mixer kernels) or the structure of the kernel stream alone.
//! The health report's `rule_coverage` check says it; the long tail of kernel names has no end,
//! so a trace whose names the rules miss must say so rather than read as if they knew them.

use crate::analysis::steps::passes::{Disagreement, PassSource};
use crate::analysis::Analysis;
use crate::model::{GpuKind, NONE};
use std::collections::HashMap;

/// The rule coverage of one analysed trace.
#[derive(Debug, Clone, Default)]
pub struct Coverage {
    /// Kernels and their summed time (ns).
    pub kernels: u64,
    /// Kernel time of the trace (ns).
    pub kernel_time_ns: i64,
    /// Kernels no category rule names (`Other`) and their time.
    pub unnamed: u64,
    /// Kernel time no category rule names (ns).
    pub unnamed_time_ns: i64,
    /// The unnamed kernels by family (the name's base: namespace, template and arguments cut),
    /// longest first: (family, kernels, ns).
    pub top_unnamed: Vec<(String, u64, i64)>,
    /// Passes by how they were delimited.
    pub passes_by_source: Vec<(PassSource, usize)>,
    /// Devices where the stream's structure and the names counted passes differently.
    pub disagreements: Vec<Disagreement>,
    /// Layers found, and how many of them hold a kernel the rules name as a token mixer.
    pub layers: u64,
    /// Layers that hold a token mixer a rule names (attention, linear attention, SSM).
    pub layers_with_named_mixer: u64,
}

/// Unnamed kernel families listed.
const TOP: usize = 5;

impl Coverage {
    /// Measures `a`.
    pub fn of(a: &Analysis) -> Coverage {
        let t = &a.trace;
        let g = &t.gpu;
        let mut c = Coverage::default();
        let mut families: HashMap<u32, (u64, i64)> = HashMap::new();
        for i in 0..g.len() {
            if g.kind[i] != GpuKind::Kernel {
                continue;
            }
            c.kernels += 1;
            c.kernel_time_ns += g.dur[i];
            if !a.categories.is_named(i) {
                c.unnamed += 1;
                c.unnamed_time_ns += g.dur[i];
                let f = families.entry(g.name[i]).or_default();
                f.0 += 1;
                f.1 += g.dur[i];
            }
        }
        let mut by_family: HashMap<String, (u64, i64)> = HashMap::new();
        for (name, (n, ns)) in families {
            let f = by_family.entry(family_of(t.name(name)).to_string()).or_default();
            f.0 += n;
            f.1 += ns;
        }
        let mut top: Vec<(String, u64, i64)> = by_family.into_iter().map(|(f, (n, ns))| (f, n, ns)).collect();
        top.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
        top.truncate(TOP);
        c.top_unnamed = top;
        for p in &a.phases.passes {
            match c.passes_by_source.iter_mut().find(|(s, _)| *s == p.source) {
                Some(slot) => slot.1 += 1,
                None => c.passes_by_source.push((p.source, 1)),
            }
        }
        c.disagreements = a.phases.disagreements.clone();
        // Layers: (pass, layer) pairs, and those holding a kernel of the Attention family.
        let mut seen: HashMap<(u32, u32), bool> = HashMap::new();
        for i in 0..g.len() {
            let layer = a.layers.layer_of_row.get(i).copied().unwrap_or(NONE);
            if layer == NONE {
                continue;
            }
            let pass = a.phases.pass_of_row.get(i).copied().unwrap_or(0);
            let mixer = seen.entry((pass, layer)).or_insert(false);
            *mixer |= a.categories.family(i) == "Attention";
        }
        c.layers = seen.len() as u64;
        c.layers_with_named_mixer = seen.values().filter(|&&m| m).count() as u64;
        c
    }

    /// Share of kernel time no category rule names (0..1).
    pub fn unnamed_share(&self) -> f64 {
        if self.kernel_time_ns > 0 {
            self.unnamed_time_ns as f64 / self.kernel_time_ns as f64
        } else {
            0.0
        }
    }

    /// Passes whose boundaries no name confirmed (cut by the stream's structure alone).
    pub fn structure_only_passes(&self) -> usize {
        self.passes_by_source.iter().filter(|(s, _)| *s == PassSource::Structure).map(|(_, n)| n).sum()
    }

    /// The finding in words, with the figures.
    pub fn sentence(&self) -> String {
        let mut parts = vec![format!(
            "{:.2}% of kernel time ({} of {} kernels) named by no category rule",
            100.0 * self.unnamed_share(),
            self.unnamed,
            self.kernels
        )];
        if !self.top_unnamed.is_empty() {
            let top: Vec<String> =
                self.top_unnamed.iter().map(|(f, n, ns)| format!("{f} ({n}×, {:.3} ms)", *ns as f64 / 1e6)).collect();
            parts.push(format!("unnamed families: {}", top.join(", ")));
        }
        if !self.passes_by_source.is_empty() {
            let by: Vec<String> = self.passes_by_source.iter().map(|(s, n)| format!("{n} by {}", source_words(*s))).collect();
            parts.push(format!("passes: {}", by.join(", ")));
        }
        for d in &self.disagreements {
            parts.push(format!(
                "device {}: the stream's structure finds {} passes, the names {} (the structure's are kept)",
                d.device, d.by_structure, d.by_names
            ));
        }
        if self.layers > 0 {
            parts.push(format!(
                "layers: {} found by their repetition, {} of them hold a kernel the rules name as a token mixer",
                self.layers, self.layers_with_named_mixer
            ));
        }
        parts.join("; ")
    }
}

/// How passes of a source were delimited, in words.
fn source_words(s: PassSource) -> &'static str {
    match s {
        PassSource::Annotation => "step annotations (an engine's, or the profiler's ProfilerStep#N)",
        PassSource::Markers => "step markers (names)",
        PassSource::Structure => "the stream's structure alone",
        PassSource::Repetition => "repetition of whole steps",
        PassSource::Whole => "none found (the whole device)",
    }
}

/// The family of a kernel name: the base name, without `void`, namespaces, template arguments,
/// parameters, and a numbered tail (`triton_poi_fused_add_12` and `…_add_7` are one family;
/// `cvt_fp16_to_fp4` keeps its 4).
pub fn family_of(name: &str) -> &str {
    let name = name.strip_prefix("void ").unwrap_or(name);
    let end = name.find(['<', '(']).unwrap_or(name.len());
    let base = &name[..end];
    let base = base.rsplit("::").next().unwrap_or(base);
    // Cut `_<digits>` tails (a compiler's numbering), never digits that are part of the name.
    let mut trimmed = base;
    while let Some(cut) = trimmed.rfind('_') {
        let tail = &trimmed[cut + 1..];
        if cut == 0 || tail.is_empty() || !tail.bytes().all(|b| b.is_ascii_digit()) {
            break;
        }
        trimmed = &trimmed[..cut];
    }
    trimmed
}

#[cfg(test)]
mod tests {
    use super::family_of;

    #[test]
    fn families_cut_namespaces_templates_and_numbered_tails() {
        assert_eq!(family_of("void vllm::cvt_fp16_to_fp4<__nv_bfloat16, false>(int, int)"), "cvt_fp16_to_fp4");
        assert_eq!(family_of("topk_stage1"), "topk_stage1");
        assert_eq!(family_of("triton_poi_fused_add_12"), "triton_poi_fused_add");
        assert_eq!(family_of("kernel_cutlass_gemm_0_1"), "kernel_cutlass_gemm");
        assert_eq!(family_of("_7"), "_7");
    }
}
