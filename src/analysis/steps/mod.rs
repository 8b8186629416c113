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
    /// Every name [`Phase::select`] takes: `all` and each phase's.
    pub fn selectable() -> Vec<&'static str> {
        std::iter::once("all").chain(Phase::ALL.iter().map(|p| p.as_str())).collect()
    }
    /// The phase a user selects (the CLI's `--phase`, MCP's `phase`, the page's window), the one
    /// reading every face uses: `all` or nothing is every phase (`None`); a phase's table name,
    /// in any case, is that phase; anything else is an error naming `key` and the choices.
    pub fn select(key: &str, s: &str) -> crate::error::Result<Option<Phase>> {
        let lower = s.trim().to_ascii_lowercase();
        match lower.as_str() {
            "" | "all" => Ok(None),
            name => Phase::parse(name).map(Some).ok_or_else(|| {
                let names: Vec<&str> = Phase::ALL.iter().map(|p| p.as_str()).collect();
                crate::error::Error::new(format!("{key}: unknown phase '{s}' (one of: all, {})", names.join(", ")))
            }),
        }
    }
}

#[cfg(test)]
mod phase_tests {
    use super::Phase;

    #[test]
    fn a_selected_phase_is_read_one_way_for_every_face() {
        assert_eq!(Phase::select("--phase", "all").unwrap(), None);
        assert_eq!(Phase::select("--phase", "").unwrap(), None);
        assert_eq!(Phase::select("phase", "Decode").unwrap(), Some(Phase::Decode));
        assert_eq!(Phase::select("phase", "not-inference").unwrap(), Some(Phase::NotInference));
        let e = Phase::select("--phase", "decoding").unwrap_err().to_string();
        assert_eq!(
            e,
            "--phase: unknown phase 'decoding' (one of: all, prefill, decode, mixed, denoise, stage, unknown, not-inference)"
        );
    }
}
