//! What a user can set for the analyses ([`Options`]; CLI flags and the page's settings map onto
//! these), and the names of the phase methods they choose among: a leaf every analysis takes
//! them from without climbing to `analysis/mod.rs`.

mod declared;

use crate::error::Result;
pub(crate) use declared::declare_options;
pub use declared::{fraction, parse_share, Declaration, Declared, Given, GivenShare, Kind};
use serde::{Deserialize, Serialize};

declare_options! {
    /// User-settable options for all analyses, declared once: the CLI's flags and usage, MCP's
    /// schema, the Python keywords and the page's settings are made from this declaration
    /// ([`Declared`]).
    #[derive(Debug, Clone, Serialize, Deserialize)]
    #[serde(default, deny_unknown_fields)]
    pub struct Options {
        /// Extra kernel-category rules (TOML, as `rules/categories.toml`), applied before the built-in table.
        category_rules: Option<String> = None, Kind::FileText, ["--rules"] "FILE";
        /// How each pass's phase is decided: the union of the methods' votes, the hybrid weighing, or one method alone.
        phase_method: PhaseMethod = PhaseMethod::Union, Kind::Choice(PhaseMethod::names), ["--phase-method"] "M";
        /// GEMM M above this is prefill-like; 0 = from the trace (the largest M below a 4x gap in its steps' GEMM M, at least 10).
        decode_threshold: i64 = 0, Kind::Integer, ["--decode-threshold", "--decode_threshold"] "N",
            check |v| *v >= 0 => "must be 0 (from the trace) or more";
        /// Idle gaps between GPU work shorter than this are micro-idle (µs).
        micro_idle_us: f64 = 10.0, Kind::Number, ["--micro-idle-us", "--micro_idle_thresh_us"] "X",
            check |v| v.is_finite() && *v >= 0.0 => "must be a number >= 0";
        /// Kernels shorter than this are short (µs).
        short_kernel_us: f64 = 10.0, Kind::Number, ["--short-kernel-us"] "X",
            check |v| v.is_finite() && *v > 0.0 => "must be a number > 0";
        /// Histogram bins below the short-kernel threshold.
        short_kernel_bins: usize = 10, Kind::Count, ["--short-kernel-bins"] "N",
            check |v| *v >= 1 => "must be 1 or more";
        /// Rows of top-k tables (0 = every row).
        topk: usize = 0, Kind::Count, ["--topk"] "N";
        /// Keep the attention and MLP halves of dual-norm layers apart.
        split_half_layers: bool = false, Kind::Switch, ["--split-half-layers"] "";
        /// Roofline device: a key of `rules/devices.toml` (H100-SXM, MI300X, ...) or peaks `bf16=989,fp8=1979,fp32=67,hbm=3.35` (TFLOP/s, TB/s); none: from the trace's `deviceProperties`.
        device: Option<String> = None, Kind::Text, ["--device"] "KEY|PEAKS";
        /// Keep kernels whose launch is not in the trace (`(unlinked)`) in the op tables; the flag leaves them out.
        include_unlinked: bool = true, Kind::Switch, ["--exclude-unlinked"] "";
        /// A trace cut short is an error (with its byte offset) instead of analysed up to its last complete event, with a warning.
        strict: bool = false, Kind::Switch, ["--strict"] "";
        /// Check each gzip member's CRC-32 (the page's setting; the CLI always checks).
        gzip_crc: bool = true, Kind::Switch, [] "";
    }
}

impl Options {
    /// Rejects option values no analysis understands, naming the option and the valid values.
    pub fn validate(&self) -> Result<()> {
        self.check_fields()
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
    /// Every name [`PhaseMethod::parse`] takes: `union`, `hybrid` and each method's.
    pub fn names() -> Vec<&'static str> {
        ["union", "hybrid"].into_iter().chain(METHODS.iter().map(|m| m.as_str())).collect()
    }
    /// A name as `--phase-method` takes it; an unknown one is an error naming every choice.
    pub fn parse(s: &str) -> Result<PhaseMethod> {
        match s {
            "union" => Ok(PhaseMethod::Union),
            "hybrid" => Ok(PhaseMethod::Hybrid),
            other => Method::parse(other).map(PhaseMethod::Only).ok_or_else(|| {
                crate::error::Error::new(format!("unknown phase method '{other}' (one of: {})", PhaseMethod::names().join(", ")))
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
    use super::{Declared, Given, Kind, Method, Options, PhaseMethod};

    #[test]
    fn an_option_is_set_by_flag_alias_or_keyword_and_named_as_given_when_wrong() {
        let mut o = Options::default();
        o.set_given("--micro-idle-us", Given::Text("4")).unwrap();
        o.set_given("--micro_idle_thresh_us", Given::Text("5")).unwrap();
        assert_eq!(o.micro_idle_us, 5.0);
        o.set_given("topk", Given::Json(&serde_json::json!(7))).unwrap();
        assert_eq!(o.topk, 7);
        // A switch given turns its default over, whichever side that is.
        o.set_given("--exclude-unlinked", Given::Text("")).unwrap();
        o.set_given("strict", Given::Json(&serde_json::json!(true))).unwrap();
        assert!(!o.include_unlinked && o.strict);
        let e = o.set_given("--micro_idle_thresh_us", Given::Text("-1")).unwrap_err().to_string();
        assert_eq!(e, "--micro_idle_thresh_us: must be a number >= 0 (got -1.0)");
        assert_eq!(o.micro_idle_us, 5.0, "a refused value leaves the option as it was");
        let e = o.set_given("--topk", Given::Text("x")).unwrap_err().to_string();
        assert_eq!(e, "--topk: 'x' is not a whole number");
        let e = o.set_given("gzip_crc", Given::Json(&serde_json::json!(false))).unwrap_err().to_string();
        assert!(e.starts_with("unknown option 'gzip_crc' (options: rules, phase_method,"), "{e}");
        // The JSON form refuses a field no option declares.
        let e = Options::from_json(r#"{"micro_idle": 3}"#).unwrap_err().to_string();
        assert!(e.contains("unknown field `micro_idle`"), "{e}");
    }

    #[test]
    fn every_declared_option_is_a_field_of_the_json_form_and_shows_in_schema_and_usage() {
        let defaults = serde_json::to_value(Options::default()).unwrap();
        let fields: Vec<&str> = defaults.as_object().unwrap().keys().map(String::as_str).collect();
        let declared: Vec<&str> = Options::DECLARED.iter().map(|d| d.field).collect();
        assert_eq!(fields.len(), declared.len());
        assert!(declared.iter().all(|f| fields.contains(f)), "{declared:?} against {fields:?}");
        let (schema, usage) = (Options::schema_properties(), Options::usage_lines());
        for d in Options::DECLARED.iter().filter(|d| d.given_by_users()) {
            assert!(schema.contains_key(&d.keyword()), "{}", d.field);
            assert!(usage.contains(&format!("  {}", d.flags[0])), "{}", d.field);
            assert!(!d.doc().is_empty(), "{}", d.field);
        }
        assert_eq!(schema["phase_method"]["enum"], serde_json::json!(PhaseMethod::names()));
        assert!(matches!(Options::declaration("--rules").map(|d| d.kind), Some(Kind::FileText)));
    }

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
