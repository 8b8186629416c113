//! What phases and the workload verdict both stand on, below both so that neither imports the
//! other: the phase rule table (`rules/phase_signals.toml`), step annotations, the primitives that
//! cut a device's kernels into passes, the evidence of token generation, and the [`Phase`] type.

pub mod annotations;
pub mod generation;
pub mod passes;
pub mod profiler_steps;
pub mod rules;
pub mod structure;

use serde::Serialize;

/// Phase of a forward pass or kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// A prompt's step.
    Prefill,
    /// A generation step.
    Decode,
    /// Both at once (chunked prefill beside decodes).
    Mixed,
    /// One step of an iterative denoiser (a diffusion model's denoising step).
    Denoise,
    /// Work around the repeated steps of a diffusion model (text encoders, VAE decoder).
    Stage,
    /// The annotation does not say.
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
            Phase::Denoise => "denoise",
            Phase::Stage => "stage",
        }
    }
    /// Every phase, in the order tables list them (declaration order: `phase as usize` indexes it).
    pub const ALL: [Phase; 7] =
        [Phase::Prefill, Phase::Decode, Phase::Mixed, Phase::Denoise, Phase::Stage, Phase::Unknown, Phase::NotInference];
    /// Parses a table name (`prefill`, `decode`, `mixed`, `denoise`, `stage`, `unknown`, `not-inference`).
    pub fn parse(s: &str) -> Option<Phase> {
        Phase::ALL.into_iter().find(|p| p.as_str() == s)
    }
}
