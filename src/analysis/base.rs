//! The analyses every read runs, in order, and that every other analysis reads: each kernel's
//! category, the passes and their phases, the layers of each pass. [`Base`] holds them with the
//! trace; derived analyses (roofline, step budget, call paths) take a `&Base` and are kept beside
//! it by [`super::Analysis`].

use crate::analysis::options::Options;
use crate::analysis::{categories, layers, phases};
use crate::error::Result;
use crate::model::Trace;

/// The linked trace and the analyses run on every read.
pub struct Base {
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
}

impl Base {
    /// Runs the base analyses over `trace`.
    pub fn new(trace: Trace, options: Options) -> Result<Base> {
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
        Ok(Base { trace, options, categories, phases, layers })
    }

    /// Total duration of all kernels (ns).
    pub fn kernel_time_ns(&self) -> i64 {
        self.trace.kernel_rows().map(|i| self.trace.gpu.dur[i]).sum()
    }
}
