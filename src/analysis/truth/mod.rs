//! Ground truth (`*.truth.json.gz` files, recorded alongside a trace, read by the faces) and the
//! scoring of the analysis against it: phases and passes (`phases.rs`), layers (`layers.rs`), and whether
//! confidence and doubt mean something (`calibration.rs`), in one place.
//!
//! A truth file lists every kernel event with `correlation`, `ts` (µs, trace clock), `dur`, `phase`,
//! `pass` and `layer`, plus `forward_passes`. Kernels are matched to trace rows by correlation, then
//! by the nearest `ts` among rows sharing that correlation.

use super::Analysis;
use crate::error::{Error, Result};
use crate::model::GpuKind;
use serde::Deserialize;
use std::collections::HashMap;

mod calibration;
mod layers;
mod phases;

pub use calibration::{Bucket, Calibration, BUCKETS};

pub use layers::{score_layers, LayerScore};
pub use phases::{score_phases, PhaseScore};

/// One labelled kernel.
#[derive(Debug, Clone, Deserialize)]
pub struct TruthKernel {
    /// The kernel's correlation id.
    pub correlation: i64,
    #[serde(default)]
    /// Its name.
    pub name: String,
    /// Start, µs in the trace's clock.
    pub ts: f64,
    #[serde(default)]
    /// Duration, µs.
    pub dur: f64,
    /// Its phase (`prefill`, `decode`...); `none` for a kernel of no forward pass (a warm-up
    /// fill before the first, written `null`).
    #[serde(deserialize_with = "phase_or_none")]
    pub phase: String,
    #[serde(default)]
    /// Its forward pass.
    pub pass: Option<u32>,
    #[serde(default)]
    /// Its layer.
    pub layer: Option<u32>,
}

/// A kernel's phase, `null` read as `none`.
fn phase_or_none<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_else(|| "none".to_string()))
}

/// A truth file.
#[derive(Debug, Clone, Deserialize)]
pub struct Truth {
    #[serde(default)]
    /// Forward passes recorded.
    pub forward_passes: Option<u32>,
    #[serde(default)]
    /// Layers of the model.
    pub num_layers: Option<u32>,
    #[serde(default)]
    /// Batch size.
    pub batch: Option<u64>,
    #[serde(default)]
    /// Prompt length.
    pub prompt_len: Option<u64>,
    #[serde(default)]
    /// Decode steps.
    pub decode_steps: Option<u32>,
    /// Every labelled kernel.
    pub kernels: Vec<TruthKernel>,
}

impl Truth {
    /// A truth file's JSON text (inflated already: reading and inflating files is the faces' job,
    /// [`crate::pipeline::read_truth`]).
    pub fn from_json(text: &[u8]) -> Result<Truth> {
        serde_json::from_slice(text).map_err(|e| Error::new(format!("truth file: {e}")))
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
