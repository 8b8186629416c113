//! Layer markers (`rules/layer_markers.toml`): what a kernel does inside a layer, by name.
//!
//! Markers never decide where layers are; they anchor and name (see the TOML file's header).

use serde::Deserialize;

/// What a kernel does inside a decoder layer, as far as layer detection cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Marker {
    /// Multi-head latent attention (DeepSeek's MLA).
    Mla,
    /// Gated delta-net linear attention (Qwen3-Next's GDN).
    Gdn,
    /// A state-space mixer (Mamba's selective scan, Mamba2's chunked SSD).
    Ssm,
    /// Another linear attention (lightning attention, retention, GLA).
    Linear,
    /// Sliding-window softmax attention (a window of recent tokens: GPT-OSS's and Gemma's local
    /// layers).
    Sliding,
    /// Softmax attention.
    Attention,
    /// A normalisation (RMSNorm, LayerNorm).
    Norm,
    /// A collective (tensor-parallel all-reduce, expert all-to-all).
    Communication,
    /// Mixture-of-experts routing or expert GEMMs.
    Moe,
    /// A dense GEMM.
    Gemm,
    /// The feed-forward's activation (GELU, SiLU-and-mul...): it tells a block's MLP apart from
    /// its attention projections.
    Activation,
    /// No marker matched.
    Plain,
}

impl Marker {
    fn parse(s: &str) -> Option<Marker> {
        Some(match s {
            "mla" => Marker::Mla,
            "gdn" => Marker::Gdn,
            "ssm" => Marker::Ssm,
            "linear" => Marker::Linear,
            "sliding" => Marker::Sliding,
            "attention" => Marker::Attention,
            "norm" => Marker::Norm,
            "communication" => Marker::Communication,
            "moe" => Marker::Moe,
            "gemm" => Marker::Gemm,
            "activation" => Marker::Activation,
            _ => return None,
        })
    }
    /// True for the token mixers: attention of any kind (MLA too), linear attention (gated delta
    /// rule, lightning, retention) and state-space scans.
    pub fn is_mixer(self) -> bool {
        matches!(self, Marker::Attention | Marker::Sliding | Marker::Mla | Marker::Gdn | Marker::Ssm | Marker::Linear)
    }
    /// True for the markers of a feed-forward (an activation, or an MoE's kernels).
    pub fn is_ffn(self) -> bool {
        matches!(self, Marker::Activation | Marker::Moe)
    }
}

#[derive(Deserialize)]
struct ClassRule {
    name: String,
    #[serde(default)]
    ignore_case: bool,
    #[serde(default)]
    contains: Vec<String>,
    #[serde(default)]
    family: Vec<String>,
}

#[derive(Deserialize, Default)]
struct CutRule {
    #[serde(default)]
    never_start_on: Vec<String>,
}

#[derive(Deserialize)]
struct MarkerFile {
    class: Vec<ClassRule>,
    #[serde(default)]
    cut: CutRule,
}

struct Class {
    marker: Marker,
    ignore_case: bool,
    contains: Vec<String>,
    families: Vec<String>,
}

/// The parsed marker table.
pub struct Markers {
    classes: Vec<Class>,
    /// Classes a layer must not start on.
    pub never_start_on: Vec<Marker>,
}

/// The built-in marker table.
pub const BUILTIN: &str = include_str!("../../rules/layer_markers.toml");

impl Markers {
    /// The built-in table (`rules/layer_markers.toml`).
    pub fn builtin() -> Markers {
        Markers::parse(BUILTIN).unwrap_or(Markers { classes: Vec::new(), never_start_on: Vec::new() })
    }

    /// Parses a marker table; unknown class names are skipped.
    pub fn parse(text: &str) -> Result<Markers, String> {
        let file: MarkerFile = toml::from_str(text).map_err(|e| format!("layer markers: {e}"))?;
        let classes = file
            .class
            .into_iter()
            .filter_map(|c| {
                let marker = Marker::parse(&c.name)?;
                let contains = if c.ignore_case { c.contains.iter().map(|s| s.to_lowercase()).collect() } else { c.contains };
                Some(Class { marker, ignore_case: c.ignore_case, contains, families: c.family })
            })
            .collect();
        let never_start_on = file.cut.never_start_on.iter().filter_map(|s| Marker::parse(s)).collect();
        Ok(Markers { classes, never_start_on })
    }

    /// Marker of a kernel from its name, falling back to its category family.
    pub fn classify(&self, name: &str, family: &str) -> Marker {
        let mut lower: Option<String> = None;
        for class in &self.classes {
            let hit = if class.ignore_case {
                let l = lower.get_or_insert_with(|| name.to_lowercase());
                class.contains.iter().any(|s| l.contains(s.as_str()))
            } else {
                class.contains.iter().any(|s| name.contains(s.as_str()))
            };
            if hit {
                return class.marker;
            }
        }
        self.classes.iter().find(|c| c.families.iter().any(|f| f == family)).map_or(Marker::Plain, |c| c.marker)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_table_parses_and_classifies() {
        let m = Markers::builtin();
        assert!(!m.classes.is_empty());
        assert_eq!(
            m.classify("std::enable_if<true, void>::type vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>", "Other"),
            Marker::Norm
        );
        assert_eq!(m.classify("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "Other"), Marker::Communication);
        assert_eq!(m.classify("aiter::topksoftmax_4x128x8_bf16", "Other"), Marker::Moe);
        assert_eq!(m.classify("kernel_unified_attention_3d", "Other"), Marker::Attention);
        assert_eq!(m.classify("nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT", "Other"), Marker::Gemm);
        assert_eq!(m.classify("some_fused_thing", "Attention"), Marker::Attention);
        assert_eq!(m.classify("some_fused_thing", "Other"), Marker::Plain);
        assert_eq!(m.never_start_on, vec![Marker::Communication]);
        // Token mixers of hybrid models (vLLM's and flash-linear-attention's kernels).
        assert_eq!(m.classify("fused_recurrent_gated_delta_rule_fwd_kernel", "Attention"), Marker::Gdn);
        assert_eq!(m.classify("_causal_conv1d_update_kernel", "Attention"), Marker::Gdn);
        assert_eq!(m.classify("_chunk_scan_fwd_kernel", "Attention"), Marker::Ssm);
        assert_eq!(m.classify("_selective_scan_update_kernel", "Attention"), Marker::Ssm);
        assert_eq!(m.classify("_linear_attn_decode_kernel", "Attention"), Marker::Linear);
        // TRT-LLM's sliding-window attention (GPT-OSS's local layers).
        assert_eq!(
            m.classify("fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvSlidingOrChunkedCausalP16VarSeqQ128Kv128", "Attention"),
            Marker::Sliding
        );
    }
}
