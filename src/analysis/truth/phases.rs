//! Scoring of the detected phases and passes against a truth file.

use super::{match_rows, Truth};
use crate::analysis::Analysis;
use crate::model::NONE;
use std::collections::{BTreeMap, HashMap};
use std::fmt;

/// How well the detected phases and passes match the truth.
#[derive(Debug, Clone, Default)]
pub struct PhaseScore {
    /// Kernels the truth labels.
    pub truth_kernels: usize,
    /// Of those, matched to a trace row.
    pub matched_kernels: usize,
    /// Kernel time (ns) of matched kernels, and of those with the right phase.
    pub kernel_time_ns: i64,
    /// Kernel time of matched kernels given the truth's phase (ns).
    pub right_phase_ns: i64,
    /// Forward passes: detected vs truth.
    pub passes_found: usize,
    /// Forward passes by the truth.
    pub passes_truth: Option<u32>,
    /// Share of kernel time whose detected pass is the one mapped to its truth pass (each truth
    /// pass maps to the detected pass holding most of its time).
    pub pass_agreement: f64,
    /// Kernel time by (truth phase, detected phase).
    pub confusion: BTreeMap<(String, String), i64>,
}

impl PhaseScore {
    /// Share of matched kernel time with the right phase, in [0, 1].
    pub fn phase_accuracy(&self) -> f64 {
        if self.kernel_time_ns == 0 {
            0.0
        } else {
            self.right_phase_ns as f64 / self.kernel_time_ns as f64
        }
    }
    /// True when the detected pass count equals the truth's.
    pub fn pass_count_exact(&self) -> bool {
        self.passes_truth.is_some_and(|t| t as usize == self.passes_found)
    }
}

impl fmt::Display for PhaseScore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "phase accuracy: {:.3}% of kernel time right ({} of {} truth kernels matched)",
            100.0 * self.phase_accuracy(),
            self.matched_kernels,
            self.truth_kernels
        )?;
        let truth = self.passes_truth.map_or("?".to_string(), |t| t.to_string());
        writeln!(
            f,
            "forward passes: {} found, {} in truth; pass agreement {:.3}%",
            self.passes_found,
            truth,
            100.0 * self.pass_agreement
        )?;
        for ((t, d), ns) in &self.confusion {
            writeln!(f, "  truth {t:<8} detected {d:<14} {:>12.3} ms", *ns as f64 / 1e6)?;
        }
        Ok(())
    }
}

/// Scores `a`'s phases and passes against `truth`.
pub fn score_phases(a: &Analysis, truth: &Truth) -> PhaseScore {
    let rows = match_rows(a, truth);
    let g = &a.trace.gpu;
    let p = &a.phases;
    let mut s = PhaseScore {
        truth_kernels: truth.kernels.len(),
        passes_found: p.passes.len(),
        passes_truth: truth.forward_passes,
        ..Default::default()
    };
    // truth pass → detected pass → time
    let mut overlap: HashMap<u32, HashMap<u32, i64>> = HashMap::new();
    for (k, row) in truth.kernels.iter().zip(&rows) {
        let Some(r) = *row else { continue };
        s.matched_kernels += 1;
        let dur = g.dur[r];
        s.kernel_time_ns += dur;
        let detected = p.phase_of_row[r].map_or("none", |x| x.as_str());
        if detected == k.phase {
            s.right_phase_ns += dur;
        }
        *s.confusion.entry((k.phase.clone(), detected.to_string())).or_insert(0) += dur;
        if let Some(tp) = k.pass {
            *overlap.entry(tp).or_default().entry(p.pass_of_row[r]).or_insert(0) += dur;
        }
    }
    let agreeing: i64 = overlap.values().map(|m| m.iter().filter(|(&d, _)| d != NONE).map(|(_, &t)| t).max().unwrap_or(0)).sum();
    let total: i64 = overlap.values().flat_map(|m| m.values()).sum();
    s.pass_agreement = if total == 0 { 0.0 } else { agreeing as f64 / total as f64 };
    s
}
