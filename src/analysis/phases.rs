//! Forward passes and prefill/decode phases. PLACEHOLDER until issue 4 lands.
//! The interface (`Phases`, `Phase`, `Pass`) is the contract other analyses use.

use super::categories::KernelCategories;
use super::Options;
use crate::model::{Trace, NONE};
use serde::Serialize;

/// Phase of a forward pass or kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    Prefill,
    Decode,
    Mixed,
    Unknown,
    /// Training or non-LLM work: no prefill/decode.
    NotInference,
}

impl Phase {
    /// Lower-case name as used in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Prefill => "prefill",
            Phase::Decode => "decode",
            Phase::Mixed => "mixed",
            Phase::Unknown => "unknown",
            Phase::NotInference => "not-inference",
        }
    }
}

/// One forward pass (one model step).
#[derive(Debug, Clone, Serialize)]
pub struct Pass {
    pub index: u32,
    pub phase: Phase,
    pub confidence: f32,
    /// GPU rows (`trace.gpu`) of the pass, in time order.
    pub rows: Vec<u32>,
    pub start_ns: i64,
    pub end_ns: i64,
}

/// Passes and the phase of every GPU row.
#[derive(Debug, Clone, Default)]
pub struct Phases {
    pub passes: Vec<Pass>,
    /// Pass index of each GPU row, or `NONE`.
    pub pass_of_row: Vec<u32>,
    /// Phase of each GPU row (`None` = not assigned).
    pub phase_of_row: Vec<Option<Phase>>,
    pub confidence_of_row: Vec<f32>,
    /// Trace-level verdict: `NotInference` for training / non-LLM traces.
    pub trace_phase: Option<Phase>,
}

/// Detects passes and phases.
pub fn detect(trace: &Trace, _categories: &KernelCategories, _options: &Options) -> Phases {
    let n = trace.gpu.len();
    Phases { passes: Vec::new(), pass_of_row: vec![NONE; n], phase_of_row: vec![None; n], confidence_of_row: vec![0.0; n], trace_phase: None }
}
