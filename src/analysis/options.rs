//! What a user can set for the analyses ([`Options`]; CLI flags and the page's settings map onto
//! these), and the names of the phase methods they choose among: a leaf every analysis takes
//! them from without climbing to `analysis/mod.rs`.

use crate::error::Result;
use serde::{Deserialize, Serialize};

/// User-settable options for all analyses (CLI flags and the page's settings map onto these).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct Options {
    /// Extra kernel-category rules (TOML text, same format as `rules/categories.toml`), applied first.
    pub category_rules: Option<String>,
    /// Gaps between GPU work shorter than this count as micro-idle (µs).
    pub micro_idle_us: f64,
    /// Kernels shorter than this are "short" (µs).
    pub short_kernel_us: f64,
    /// Number of histogram bins below `short_kernel_us`.
    pub short_kernel_bins: usize,
    /// GEMM M above this is prefill-like; 0 (the default) = from the trace's own GEMMs (see
    /// `phases::adaptive_threshold`), never below `phase_signals.toml`'s `decode_threshold`.
    pub decode_threshold: i64,
    /// How each pass's phase is decided from the methods' votes (written as its name: `union`,
    /// `hybrid` or one method's, in the page's settings and the Python face too).
    pub phase_method: PhaseMethod,
    /// Keep attention and MLP halves of dual-norm layers as separate layers.
    pub split_half_layers: bool,
    /// Row limit for top-k tables (0 = no limit).
    pub topk: usize,
    /// Roofline device: a key of `rules/devices.toml` (`H100-SXM`, `MI300X`...) or custom peaks
    /// `bf16=989,fp8=1979,fp32=67,hbm=3.35` (TFLOP/s, TB/s). `None`: from `deviceProperties`.
    pub device: Option<String>,
    /// Keep kernels with no launch in the trace (`(unlinked)`) in the op tables.
    pub include_unlinked: bool,
    /// Refuse a trace cut short (an error with its byte offset) instead of analysing what was read.
    pub strict: bool,
    /// Check each gzip member's CRC-32 (the CLI always does; the page may skip it for large files).
    pub gzip_crc: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            category_rules: None,
            micro_idle_us: 10.0,
            short_kernel_us: 10.0,
            short_kernel_bins: 10,
            decode_threshold: 0,
            phase_method: PhaseMethod::Union,
            split_half_layers: false,
            topk: 0,
            device: None,
            include_unlinked: true,
            strict: false,
            gzip_crc: true,
        }
    }
}

impl Options {
    /// Rejects option values no analysis understands, naming the valid ones.
    pub fn validate(&self) -> Result<()> {
        let positive = self.short_kernel_us > 0.0 && self.micro_idle_us >= 0.0;
        if !positive {
            return Err(crate::error::Error::new("short-kernel and micro-idle thresholds must be positive numbers"));
        }
        Ok(())
    }
}

/// How a pass's phase is decided (`--phase-method`): the union of the methods' votes (the
/// default), the hybrid weighing, or one method alone. Parsed once, by [`PhaseMethod::parse`];
/// written and read as its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum PhaseMethod {
    /// Every method votes; the rules combine them.
    Union,
    /// Votes weighed by each method's confidence.
    Hybrid,
    /// One method alone.
    Only(Method),
}

impl PhaseMethod {
    /// Its name: `union`, `hybrid` or the method's.
    pub fn as_str(self) -> &'static str {
        match self {
            PhaseMethod::Union => "union",
            PhaseMethod::Hybrid => "hybrid",
            PhaseMethod::Only(m) => m.as_str(),
        }
    }
    /// A name as `--phase-method` takes it; an unknown one is an error naming every choice.
    pub fn parse(s: &str) -> Result<PhaseMethod> {
        match s {
            "union" => Ok(PhaseMethod::Union),
            "hybrid" => Ok(PhaseMethod::Hybrid),
            other => Method::parse(other).map(PhaseMethod::Only).ok_or_else(|| {
                let known: Vec<&str> = ["union", "hybrid"].into_iter().chain(METHODS.iter().map(|m| m.as_str())).collect();
                crate::error::Error::new(format!("unknown phase method '{other}' (one of: {})", known.join(", ")))
            }),
        }
    }
}

impl TryFrom<String> for PhaseMethod {
    type Error = String;
    fn try_from(s: String) -> std::result::Result<Self, String> {
        PhaseMethod::parse(&s).map_err(|e| e.to_string())
    }
}

impl From<PhaseMethod> for String {
    fn from(m: PhaseMethod) -> String {
        m.as_str().to_string()
    }
}

/// A phase-detection method: each votes on a pass's phase from its own evidence
/// (`phases::evidence`); `--phase-method` takes one of their names, `union` or `hybrid`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// Step annotations state the phase; graph replays hint decode.
    FrameworkApis,
    /// SDPA query length (Sq = 1 in decode) and attention kernel kinds.
    AttentionPatterns,
    /// GEMM M from `Input Dims` (tokens in the step).
    GemmParams,
    /// Explicit words in kernel names (`_decode_`, `_prefill_`) and skinny GEMM tiles.
    KernelNames,
    /// Decode steps are many, short and alike; prefill stands out.
    OperationFrequency,
}

/// Every single method, in the order they are reported.
pub const METHODS: [Method; 5] =
    [Method::FrameworkApis, Method::AttentionPatterns, Method::GemmParams, Method::KernelNames, Method::OperationFrequency];

impl Method {
    /// Name as used by `--phase-method`.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::FrameworkApis => "framework_apis",
            Method::AttentionPatterns => "attention_patterns",
            Method::GemmParams => "gemm_params",
            Method::KernelNames => "kernel_names",
            Method::OperationFrequency => "operation_frequency",
        }
    }
    /// Parses a method name.
    pub fn parse(s: &str) -> Option<Method> {
        METHODS.iter().copied().find(|m| m.as_str() == s)
    }
}

#[cfg(test)]
mod tests {
    use super::{Method, Options, PhaseMethod};

    #[test]
    fn the_phase_method_is_parsed_once_and_travels_as_its_name() {
        assert_eq!(PhaseMethod::parse("gemm_params").unwrap(), PhaseMethod::Only(Method::GemmParams));
        let e = PhaseMethod::parse("vibes").unwrap_err().to_string();
        assert!(e.starts_with("unknown phase method 'vibes' (one of: union, hybrid, framework_apis"), "{e}");
        // The page's and Python's settings are JSON: the name in, the name out, an unknown name refused.
        let o: Options = serde_json::from_str(r#"{"phase_method": "hybrid"}"#).unwrap();
        assert_eq!(o.phase_method, PhaseMethod::Hybrid);
        assert_eq!(serde_json::to_value(&o).unwrap()["phase_method"], "hybrid");
        let bad = serde_json::from_str::<Options>(r#"{"phase_method": "vibes"}"#).unwrap_err().to_string();
        assert!(bad.contains("unknown phase method 'vibes'"), "{bad}");
    }
}
