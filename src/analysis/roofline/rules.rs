//! Which op names the roofline models (`rules/roofline_ops.toml`).

use serde::Deserialize;
use std::collections::HashMap;

const OPS_TOML: &str = include_str!("../../rules/roofline_ops.toml");

/// A shape model and its op-specific parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelRef {
    /// The shape model.
    pub model: Model,
    /// Position of `is_causal` in the op's arguments (attention only).
    pub causal_arg: Option<usize>,
}

/// Shape models (see `flops.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Model {
    /// `aten::mm`: `[M, K] × [K, N]`.
    Mm,
    /// `aten::addmm`: bias + `[M, K] × [K, N]`.
    Addmm,
    /// `aten::bmm`: `[B, M, K] × [B, K, N]`.
    Bmm,
    /// `aten::baddbmm`: bias + a batched product.
    Baddbmm,
    /// `aten::matmul`, any rank.
    Matmul,
    /// `aten::linear`: `[..., K] × [N, K]ᵀ`.
    Linear,
    /// `aten::_scaled_mm` (FP8).
    ScaledMm,
    /// `aten::_grouped_mm` (experts).
    GroupedMm,
    /// SDPA with `[B, H, S, D]` inputs.
    SdpaBhsd,
    /// Attention with `[B, S, H, D]` inputs (FlashAttention's layout).
    SdpaBshd,
    /// A normalisation: a few passes over its input.
    Norm,
    /// An element-wise op: one pass over inputs and output.
    Elementwise,
    /// A reduction.
    Reduce,
    /// A gather or embedding lookup.
    Gather,
}

impl Model {
    fn parse(s: &str) -> Option<Model> {
        Some(match s {
            "mm" => Model::Mm,
            "addmm" => Model::Addmm,
            "bmm" => Model::Bmm,
            "baddbmm" => Model::Baddbmm,
            "matmul" => Model::Matmul,
            "linear" => Model::Linear,
            "scaled_mm" => Model::ScaledMm,
            "grouped_mm" => Model::GroupedMm,
            "sdpa_bhsd" => Model::SdpaBhsd,
            "sdpa_bshd" => Model::SdpaBshd,
            "norm" => Model::Norm,
            "elementwise" => Model::Elementwise,
            "reduce" => Model::Reduce,
            "gather" => Model::Gather,
            _ => return None,
        })
    }
}

#[derive(Deserialize)]
struct Entry {
    model: String,
    #[serde(default)]
    ops: Vec<String>,
    #[serde(default)]
    contains: Vec<String>,
    #[serde(default)]
    causal_arg: Option<usize>,
}

#[derive(Deserialize)]
struct File {
    model: Vec<Entry>,
}

/// Op name → model lookup.
#[derive(Debug, Default)]
pub struct OpRules {
    exact: HashMap<String, ModelRef>,
    contains: Vec<(String, ModelRef)>,
}

impl OpRules {
    /// The built-in rules.
    pub fn builtin() -> OpRules {
        let mut rules = OpRules::default();
        let Ok(file) = toml::from_str::<File>(OPS_TOML) else { return rules };
        for e in file.model {
            let Some(model) = Model::parse(&e.model) else { continue };
            let r = ModelRef { model, causal_arg: e.causal_arg };
            for op in e.ops {
                rules.exact.entry(op).or_insert(r);
            }
            rules.contains.extend(e.contains.into_iter().map(|c| (c.to_ascii_lowercase(), r)));
        }
        rules
    }
    /// Model of an op name, if any.
    pub fn lookup(&self, name: &str) -> Option<ModelRef> {
        if let Some(r) = self.exact.get(name) {
            return Some(*r);
        }
        let lower = name.to_ascii_lowercase();
        self.contains.iter().find(|(c, _)| lower.contains(c.as_str())).map(|(_, r)| *r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_rules_load() {
        let r = OpRules::builtin();
        assert_eq!(r.lookup("aten::mm").unwrap().model, Model::Mm);
        assert_eq!(r.lookup("aten::_cudnn_attention_forward").unwrap().causal_arg, Some(10));
        assert_eq!(r.lookup("_C::fused_add_rms_norm").unwrap().model, Model::Norm);
        assert!(r.lookup("aten::view").is_none());
    }
}
