//! Scoring of the detected layers against a truth file.

use super::Truth;
use crate::analysis::layers::LayerPass;
use crate::analysis::phases::Phase;
use crate::analysis::Analysis;
use crate::model::FastMap as HashMap;
use crate::model::{Trace, NONE};
use std::fmt;

impl Truth {
    /// GPU row of each truth kernel (by correlation, then nearest start time), or `NONE`.
    pub fn rows(&self, trace: &Trace) -> Vec<u32> {
        super::match_trace_rows(trace, self).into_iter().map(|r| r.map_or(NONE, |r| r as u32)).collect()
    }

    /// Passes as the truth file records them (for testing layer detection before pass detection).
    pub fn passes(&self, trace: &Trace) -> Vec<LayerPass> {
        let rows = self.rows(trace);
        let mut passes: Vec<LayerPass> = Vec::new();
        for (k, &r) in self.kernels.iter().zip(&rows) {
            let (Some(p), true) = (k.pass, r != NONE) else { continue };
            let phase = if k.phase == "prefill" { Phase::Prefill } else { Phase::Decode };
            while passes.len() <= p as usize {
                passes.push(LayerPass { index: passes.len() as u32, phase, rows: Vec::new() });
            }
            passes[p as usize].phase = phase;
            passes[p as usize].rows.push(r);
        }
        for pass in &mut passes {
            pass.rows.sort_by_key(|&r| (trace.gpu.ts[r as usize], r));
            pass.rows.dedup();
        }
        passes
    }
}

/// How well detected layers match the truth.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LayerScore {
    /// Truth kernels inside a decoder layer (matched to a trace row).
    pub in_layer: usize,
    /// ... of which we put in the right layer index.
    pub in_layer_right: usize,
    /// Truth kernels outside the layers (pre/post), and how many we also left outside.
    pub outside: usize,
    /// Kernels outside any layer in both the truth and the analysis.
    pub outside_right: usize,
    /// Truth kernels not found in the trace.
    pub unmatched: usize,
    /// Passes whose detected layer count equals the truth's `num_layers`, and all passes.
    pub passes_exact: usize,
    /// Passes scored.
    pub passes: usize,
    /// Layers per pass, by the truth.
    pub truth_layers: u32,
    /// Detected layers per pass, most common first: (layers, passes).
    pub layer_counts: Vec<(u32, usize)>,
}

impl LayerScore {
    /// The share of in-layer kernels with the right layer index, as text: `n/a` where the truth
    /// labels no kernel's layer (the compiled Llama's truth: Inductor's kernels span layers).
    pub fn accuracy_text(&self) -> String {
        if self.in_layer == 0 {
            "n/a".to_string()
        } else {
            format!("{:.2}%", 100.0 * self.accuracy())
        }
    }

    /// Share of in-layer kernels with the right layer index (0..1).
    pub fn accuracy(&self) -> f64 {
        if self.in_layer == 0 {
            0.0
        } else {
            self.in_layer_right as f64 / self.in_layer as f64
        }
    }
}

impl fmt::Display for LayerScore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let counts: Vec<String> = self.layer_counts.iter().map(|(l, n)| format!("{l} layers x {n} passes")).collect();
        if self.in_layer == 0 {
            write!(f, "layers: the truth labels no kernel's layer (only its count per pass)")?;
        } else {
            write!(
                f,
                "layers: {:.2}% of in-layer kernels right ({}/{}), outside-layer kernels right {}/{}",
                100.0 * self.accuracy(),
                self.in_layer_right,
                self.in_layer,
                self.outside_right,
                self.outside
            )?;
        }
        write!(
            f,
            ", layers/pass exact in {}/{} passes (truth {}; detected {}), unmatched truth kernels {}",
            self.passes_exact,
            self.passes,
            self.truth_layers,
            counts.join(", "),
            self.unmatched
        )
    }
}

/// Scores `a.layers` against `truth`.
pub fn score_layers(a: &Analysis, truth: &Truth) -> LayerScore {
    let rows = truth.rows(&a.trace);
    let truth_layers = truth.num_layers.unwrap_or(0);
    let mut s = LayerScore { truth_layers, ..Default::default() };
    for (k, &r) in truth.kernels.iter().zip(&rows) {
        if r == NONE {
            s.unmatched += 1;
            continue;
        }
        let ours = a.layers.layer_of_row[r as usize];
        match k.layer {
            Some(l) => {
                s.in_layer += 1;
                s.in_layer_right += (ours == l) as usize;
            }
            None => {
                s.outside += 1;
                s.outside_right += (ours == NONE) as usize;
            }
        }
    }
    let mut counts: HashMap<u32, usize> = HashMap::default();
    for &l in &a.layers.layers_per_pass {
        *counts.entry(l).or_insert(0) += 1;
    }
    s.passes = a.layers.layers_per_pass.len();
    s.passes_exact = counts.get(&truth_layers).copied().unwrap_or(0);
    s.layer_counts = counts.into_iter().collect();
    s.layer_counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    s
}
