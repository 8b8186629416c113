//! Analyses that read the linked model. Each fills one part of [`Analysis`]; none re-reads input.

pub mod base;
pub mod budget;
pub mod categories;
pub mod code;
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
pub mod repetition;
pub mod roofline;
pub mod rows;
pub mod shapes;
pub mod short_kernels;
pub mod steps;
pub mod timeline;
pub mod truth;
pub mod workload;

use crate::error::Result;
use crate::model::Trace;
pub use base::Base;
pub use options::Options;

/// The linked trace, the analyses every other reads ([`Base`]: categories, phases, layers) and,
/// beside them, the results derived from those on first use and kept (roofline, step budget,
/// call paths). The derived analyses read the [`Base`] only (a leaf module), so none imports
/// this one back. Fields of the base read through: `a.trace`, `a.phases`.
pub struct Analysis {
    /// The trace and the analyses run on every read.
    base: Base,
    /// Filled on first call of [`Analysis::roofline`].
    roofline: std::sync::OnceLock<roofline::Roofline>,
    /// Filled on first call of [`Analysis::budget`].
    budget: std::sync::OnceLock<budget::StepBudget>,
    /// Filled on first call of [`Analysis::call_paths`].
    call_paths: std::sync::OnceLock<code::call_paths::CallPaths>,
}

impl std::ops::Deref for Analysis {
    type Target = Base;
    fn deref(&self) -> &Base {
        &self.base
    }
}

impl Analysis {
    /// Runs every analysis over `trace` ([`Base::new`]); the derived ones wait for their first use.
    pub fn new(trace: Trace, options: Options) -> Result<Analysis> {
        Ok(Analysis {
            base: Base::new(trace, options)?,
            roofline: std::sync::OnceLock::new(),
            budget: std::sync::OnceLock::new(),
            call_paths: std::sync::OnceLock::new(),
        })
    }

    /// The base, to change (a test re-detecting phases with other rules): what was derived from
    /// it is dropped, to be derived again on next use.
    pub fn base_mut(&mut self) -> &mut Base {
        self.roofline = std::sync::OnceLock::new();
        self.budget = std::sync::OnceLock::new();
        self.call_paths = std::sync::OnceLock::new();
        &mut self.base
    }

    /// This trace's side of a differential flame graph ([`code::differential`]).
    pub fn side(&self) -> code::differential::Side<'_> {
        code::differential::Side { base: &self.base, paths: self.call_paths() }
    }

    /// Gives the trace back (to analyse it again with other options, e.g. new category rules).
    pub fn into_trace(self) -> Trace {
        self.base.trace
    }

    /// The roofline analysis, computed on first use and kept (several tables and the report read it).
    pub fn roofline(&self) -> &roofline::Roofline {
        self.roofline.get_or_init(|| roofline::analyze(&self.base))
    }

    /// Every step's time budget ([`budget`]), computed on first use and kept (its table and the
    /// findings read it).
    pub fn budget(&self) -> &budget::StepBudget {
        self.budget.get_or_init(|| budget::step_budget(&self.base))
    }

    /// The call-path tree of the kernels, computed on first use and kept (`call_paths`, `sources`,
    /// the flame graph and the differential read it).
    pub fn call_paths(&self) -> &code::call_paths::CallPaths {
        self.call_paths.get_or_init(|| code::call_paths::call_paths(&self.base))
    }
}
