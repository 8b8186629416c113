//! Analyses that read the linked model. Each fills one part of [`Analysis`]; none re-reads input.

pub mod call_paths;
pub mod categories;
pub mod compare;
pub mod coverage;
pub mod findings;
pub mod health;
pub mod launches;
pub mod layers;
pub mod lod;
pub mod ops;
pub mod per_name;
pub mod phases;
pub mod ranks;
pub mod roofline;
pub mod rows;
pub mod shapes;
pub mod short_kernels;
pub mod sources;
pub mod steps;
pub mod timeline;
pub mod truth;
pub mod workload;

use crate::error::Result;
use crate::model::Trace;
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
    /// [`phases::adaptive_threshold`]), never below `phase_signals.toml`'s `decode_threshold`.
    pub decode_threshold: i64,
    /// Phase method: union, kernel_names, gemm_params, attention_patterns, framework_apis, operation_frequency, hybrid.
    pub phase_method: String,
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
            phase_method: "union".into(),
            split_half_layers: false,
            topk: 0,
            device: None,
            include_unlinked: true,
            strict: false,
            gzip_crc: true,
        }
    }
}

/// The linked trace plus every analysis result.
pub struct Analysis {
    pub trace: Trace,
    pub options: Options,
    pub categories: categories::KernelCategories,
    pub phases: phases::Phases,
    pub layers: layers::Layers,
    /// Filled on first call of [`Analysis::roofline`].
    roofline: std::sync::OnceLock<roofline::Roofline>,
    /// Filled on first call of [`Analysis::call_paths`].
    call_paths: std::sync::OnceLock<call_paths::CallPaths>,
}

impl Options {
    /// Rejects option values no analysis understands, naming the valid ones.
    pub fn validate(&self) -> Result<()> {
        let m = self.phase_method.as_str();
        let known =
            ["union", "hybrid"].iter().copied().chain(phases::evidence::METHODS.iter().map(|m| m.as_str())).collect::<Vec<_>>();
        if !known.contains(&m) {
            return Err(crate::error::Error::new(format!("unknown phase method '{m}' (one of: {})", known.join(", "))));
        }
        let positive = self.short_kernel_us > 0.0 && self.micro_idle_us >= 0.0;
        if !positive {
            return Err(crate::error::Error::new("short-kernel and micro-idle thresholds must be positive numbers"));
        }
        Ok(())
    }
}

impl Analysis {
    /// Runs every analysis over `trace`.
    pub fn new(trace: Trace, options: Options) -> Result<Analysis> {
        options.validate()?;
        if let (true, Some(cut)) = (options.strict, &trace.stats.truncation) {
            return Err(cut.to_error());
        }
        // Passes are cut (sorting every device's kernels by time) while kernels are sorted into
        // categories: neither reads the other.
        let phase_rules = phases::rules::PhaseRules::builtin();
        let (mut categories, mut cut) = (None, None);
        crate::support::threads::both(
            trace.gpu.len(),
            || cut = Some(phases::cut_passes(&trace, phase_rules)),
            || categories = Some(categories::categorize(&trace, &options)),
        );
        let categories = categories.expect("categorized")?;
        let cut = cut.expect("passes cut");
        let phases = phases::detect_in(&trace, &categories, &options, phase_rules, cut);
        let layers = layers::detect(&trace, &categories, &phases, &options);
        Ok(Analysis {
            trace,
            options,
            categories,
            phases,
            layers,
            roofline: std::sync::OnceLock::new(),
            call_paths: std::sync::OnceLock::new(),
        })
    }

    /// Gives the trace back (to analyse it again with other options, e.g. new category rules).
    pub fn into_trace(self) -> Trace {
        self.trace
    }

    /// The roofline analysis, computed on first use and kept (several tables and the report read it).
    pub fn roofline(&self) -> &roofline::Roofline {
        self.roofline.get_or_init(|| roofline::analyze(self))
    }

    /// The call-path tree of the kernels, computed on first use and kept (`call_paths`, `sources`,
    /// the flame graph and the differential read it).
    pub fn call_paths(&self) -> &call_paths::CallPaths {
        self.call_paths.get_or_init(|| call_paths::call_paths(self))
    }

    /// Total duration of all kernels (ns).
    pub fn kernel_time_ns(&self) -> i64 {
        self.trace.kernel_rows().map(|i| self.trace.gpu.dur[i]).sum()
    }
}
