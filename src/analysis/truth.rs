//! Ground-truth files (`*.truth.json.gz`, recorded alongside a trace) and the phase scorer.
//!
//! A truth file lists every kernel event with `correlation`, `ts` (µs, trace clock), `dur`, `phase`,
//! `pass` and `layer`, plus `forward_passes`. Kernels are matched to trace rows by correlation, then
//! by the nearest `ts` among rows sharing that correlation.

use super::Analysis;
use crate::error::{Error, Result};
use crate::ingest::{gunzip, is_gzip};
use crate::model::{GpuKind, NONE};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::fmt;

/// One labelled kernel.
#[derive(Debug, Clone, Deserialize)]
pub struct TruthKernel {
    pub correlation: i64,
    #[serde(default)]
    pub name: String,
    /// Start, µs in the trace's clock.
    pub ts: f64,
    #[serde(default)]
    pub dur: f64,
    pub phase: String,
    #[serde(default)]
    pub pass: Option<u32>,
    #[serde(default)]
    pub layer: Option<u32>,
}

/// A truth file.
#[derive(Debug, Clone, Deserialize)]
pub struct Truth {
    #[serde(default)]
    pub forward_passes: Option<u32>,
    #[serde(default)]
    pub num_layers: Option<u32>,
    #[serde(default)]
    pub batch: Option<u64>,
    #[serde(default)]
    pub prompt_len: Option<u64>,
    #[serde(default)]
    pub decode_steps: Option<u32>,
    pub kernels: Vec<TruthKernel>,
}

/// Parses a truth file (gzip or plain JSON).
pub fn parse_truth(bytes: &[u8]) -> Result<Truth> {
    let text;
    let json: &[u8] = if is_gzip(bytes) {
        text = gunzip(bytes)?;
        &text
    } else {
        bytes
    };
    serde_json::from_slice(json).map_err(|e| Error::new(format!("truth file: {e}")))
}

/// Reads a truth file from disk.
pub fn load_truth(path: &std::path::Path) -> Result<Truth> {
    let bytes = std::fs::read(path).map_err(|e| Error::new(format!("cannot read {}: {e}", path.display())))?;
    parse_truth(&bytes)
}

impl Truth {
    /// Reads a truth file from disk (`.json` or `.json.gz`).
    pub fn load(path: &std::path::Path) -> Result<Truth> {
        load_truth(path)
    }
}

/// GPU row of each truth kernel (`None` when it could not be matched).
pub fn match_rows(a: &Analysis, truth: &Truth) -> Vec<Option<usize>> {
    match_trace_rows(&a.trace, truth)
}

/// GPU row of each truth kernel in a linked trace (`None` when it could not be matched).
pub fn match_trace_rows(t: &crate::model::Trace, truth: &Truth) -> Vec<Option<usize>> {
    let g = &t.gpu;
    let mut by_corr: HashMap<i64, Vec<usize>> = HashMap::new();
    for i in 0..g.len() {
        if g.kind[i] == GpuKind::Kernel {
            by_corr.entry(g.correlation[i]).or_default().push(i);
        }
    }
    truth
        .kernels
        .iter()
        .map(|k| {
            // Model times are absolute ns in the trace clock, like the truth's `ts`.
            let abs = (k.ts * 1000.0).round() as i64;
            let rows = by_corr.get(&k.correlation)?;
            let off = |r: usize| (g.ts[r] - abs).abs();
            let best = rows.iter().copied().min_by_key(|&r| off(r))?;
            (off(best) <= 1000).then_some(best)
        })
        .collect()
}

/// How well the detected phases and passes match the truth.
#[derive(Debug, Clone, Default)]
pub struct PhaseScore {
    pub truth_kernels: usize,
    pub matched_kernels: usize,
    /// Kernel time (ns) of matched kernels, and of those with the right phase.
    pub kernel_time_ns: i64,
    pub right_phase_ns: i64,
    /// Forward passes: detected vs truth.
    pub passes_found: usize,
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
