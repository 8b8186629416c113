//! How a mixed step (prefill chunks batched with decodes) divides between prefill and decode.
//!
//! Two estimates, best first:
//! - **step annotation**: vLLM names the step `execute_N_context_C(sqP…)_generation_G(sqD…)`, which
//!   states the prefill tokens P and decode tokens D outright;
//! - **shapes**: with no such name, the step's tokens T (GEMM M, or T of the packed `[T, heads,
//!   head_dim]` attention inputs) and the rows the LM head computes logits for, R (one per request
//!   that samples, the widest GEMM's M) bound the split: each decode is one token and one row, and
//!   at least one row is a prefill's, so at most R − 1 decodes ran beside T − R + 1 or more prefill
//!   tokens. The estimate takes those bounds; it is off by the number of prefill requests less one.
//!
//! Kernel time follows the tokens: GEMMs, norms and activations scale with them. Attention kernels
//! whose names say prefill or decode (FlashInfer's `BatchPrefill` / `BatchDecode`, …) are counted
//! to that phase outright.

use super::evidence::PassEvidence;
use super::rules::PhaseRules;
use super::Phase;
use crate::analysis::per_name::PerName;
use crate::model::{GpuKind, Trace};
use serde::Serialize;

/// Where a mixed step's split comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MixSource {
    /// The engine's step annotation states both token counts.
    StepAnnotation,
    /// Estimated from the step's tokens and the rows its LM head samples.
    Shapes,
}

impl MixSource {
    /// `step annotation` or `shapes`.
    pub fn as_str(self) -> &'static str {
        match self {
            MixSource::StepAnnotation => "step annotation",
            MixSource::Shapes => "shapes",
        }
    }
}

/// One estimate of a mixed step's prefill and decode shares.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MixSplit {
    /// Where the token counts come from.
    pub source: MixSource,
    /// Prefill (context) tokens in the step.
    pub prefill_tokens: u64,
    /// Decode tokens (one per decoding request).
    pub decode_tokens: u64,
    /// Kernel time of the step estimated as prefill work, ns.
    pub prefill_time_ns: i64,
    /// Kernel time of the step estimated as decode work, ns.
    pub decode_time_ns: i64,
    /// How the counts were read, in a sentence.
    pub why: String,
}

impl MixSplit {
    /// Prefill's share of the step's tokens, in [0, 1].
    pub fn prefill_token_share(&self) -> f64 {
        let all = self.prefill_tokens + self.decode_tokens;
        if all == 0 {
            0.0
        } else {
            self.prefill_tokens as f64 / all as f64
        }
    }
}

/// Token counts of a mixed step from its shapes alone: `(prefill, decode)`, or `None` when the
/// shapes do not show both the step's tokens and its sampled rows (or show no room for a prefill).
pub fn tokens_from_shapes(ev: &PassEvidence) -> Option<(u64, u64, String)> {
    let t = ev.shape_tokens()?;
    let r = ev.sampled_rows()?;
    if r < 2 || t <= r {
        return None;
    }
    let decode = r - 1;
    Some((
        t - decode,
        decode,
        format!(
            "{t} tokens in the step, logits for {r} rows: at most {decode} decodes (a token and a row each) \
             beside at least one prefill"
        ),
    ))
}

/// Per kernel name: the phase an attention kernel's name states, if any.
pub struct NamedPhase {
    cache: PerName<Option<Phase>>,
}

impl NamedPhase {
    /// An empty cache for `trace`'s names.
    pub fn new(trace: &Trace) -> Self {
        NamedPhase { cache: PerName::new(trace.names.len()) }
    }

    fn of(&mut self, trace: &Trace, rules: &PhaseRules, row: usize) -> Option<Phase> {
        let id = trace.gpu.name[row];
        *self.cache.get_or_insert_with(id, || {
            let n = trace.name(id);
            rules
                .name_hints
                .iter()
                .filter(|h| h.method == "attention_patterns" && h.strength >= 0.8)
                .find(|h| h.holds(n))
                .map(|h| h.phase)
        })
    }
}

/// Every estimate available for a mixed step, best first (empty when none can be made).
pub fn estimate(trace: &Trace, rules: &PhaseRules, rows: &[u32], ev: &PassEvidence, named: &mut NamedPhase) -> Vec<MixSplit> {
    let mut counts: Vec<(MixSource, u64, u64, String)> = Vec::new();
    if let Some((p, d)) = ev.annotation.as_ref().and_then(|a| a.split) {
        counts.push((MixSource::StepAnnotation, p, d, format!("the step annotation states {p} prefill and {d} decode tokens")));
    }
    if let Some((p, d, why)) = tokens_from_shapes(ev) {
        counts.push((MixSource::Shapes, p, d, why));
    }
    if counts.is_empty() {
        return Vec::new();
    }
    // Kernel time: named attention kernels go to their phase, the rest is shared by tokens.
    let g = &trace.gpu;
    let (mut prefill_named, mut decode_named, mut shared) = (0i64, 0i64, 0i64);
    for &r in rows {
        let r = r as usize;
        if g.kind[r] != GpuKind::Kernel {
            continue;
        }
        match named.of(trace, rules, r) {
            Some(Phase::Prefill) => prefill_named += g.dur[r],
            Some(Phase::Decode) => decode_named += g.dur[r],
            _ => shared += g.dur[r],
        }
    }
    counts
        .into_iter()
        .map(|(source, prefill_tokens, decode_tokens, why)| {
            let all = (prefill_tokens + decode_tokens).max(1);
            let prefill_shared = (shared as f64 * prefill_tokens as f64 / all as f64).round() as i64;
            MixSplit {
                source,
                prefill_tokens,
                decode_tokens,
                prefill_time_ns: prefill_named + prefill_shared,
                decode_time_ns: decode_named + shared - prefill_shared,
                why,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::phases::evidence::WidestGemm;

    fn ev(tokens: u64, rows: u64, ops: u32) -> PassEvidence {
        PassEvidence {
            varlen_tokens: Some(tokens),
            widest_gemm: Some(WidestGemm { n: 151_936, m: rows, ops }),
            ..Default::default()
        }
    }

    #[test]
    fn shapes_bound_the_decodes_by_the_sampled_rows() {
        let (p, d, _) = tokens_from_shapes(&ev(8192, 46, 1)).unwrap();
        assert_eq!((p, d), (8147, 45));
        assert_eq!(p + d, 8192, "every token is counted once");
    }

    #[test]
    fn no_estimate_without_room_for_a_prefill_or_an_lm_head() {
        assert!(tokens_from_shapes(&ev(46, 46, 1)).is_none(), "a token per row is a decode step");
        assert!(tokens_from_shapes(&ev(8192, 1, 1)).is_none(), "one row: a lone prefill");
        assert!(tokens_from_shapes(&ev(8192, 46, 16)).is_none(), "a GEMM that runs per layer is not the LM head");
    }
}
