//! Analyses that read the linked model. Each fills one part of [`Analysis`]; none re-reads input.

pub mod budget;
pub mod call_paths;
pub mod categories;
pub mod compare;
pub mod coverage;
pub mod findings;
pub mod graph_nodes;
pub mod health;
pub mod launches;
pub mod layers;
pub mod lod;
pub mod ops;
pub mod options;
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
pub use options::Options;

/// The linked trace plus every analysis result.
pub struct Analysis {
    /// The linked trace every analysis read.
    pub trace: Trace,
    /// The options they ran with.
    pub options: Options,
    /// Each kernel's category.
    pub categories: categories::KernelCategories,
    /// Passes and the phase of every GPU row.
    pub phases: phases::Phases,
    /// Layers of each pass.
    pub layers: layers::Layers,
    /// Filled on first call of [`Analysis::roofline`].
    roofline: std::sync::OnceLock<roofline::Roofline>,
    /// Filled on first call of [`Analysis::budget`].
    budget: std::sync::OnceLock<budget::StepBudget>,
    /// Filled on first call of [`Analysis::call_paths`].
    call_paths: std::sync::OnceLock<call_paths::CallPaths>,
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
            budget: std::sync::OnceLock::new(),
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

    /// Every step's time budget ([`budget`]), computed on first use and kept (its table and the
    /// findings read it).
    pub fn budget(&self) -> &budget::StepBudget {
        self.budget.get_or_init(|| budget::step_budget(self))
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
