//! Warm-up: runs the whole pipeline once on a tiny synthetic trace built in code.
//!
//! In WebAssembly the engine compiles each function on its first call (V8: Liftoff, later
//! TurboFan), and the built-in rule sets (kernel-category and phase regexes) are compiled on first
//! use. Done on the user's file, that first-call work is several times the analysis itself. The page's
//! worker calls [`warm_up`] right after the module is instantiated, while the user is still picking a
//! file, so none of it sits between "drop" and "first table". Natively it is harmless (a few ms).
//!
//! The trace is [`crate::synth`]'s. It is read twice, as plain JSON and as gzip, so both input
//! paths are compiled.

use crate::analysis::{Analysis, Options};
use crate::error::{Error, Result};
use crate::read::Reader;
use crate::synth::{gzip, synthetic_trace};

/// Decode steps of the default warm-up trace: enough to call every function once. (Making the hot
/// functions reach the engine's optimising tier takes more: the page's worker repeats
/// [`warm_up_with`] on a larger trace while no file has arrived.)
pub const WARM_UP_DECODE_STEPS: usize = 3;

/// Reads `bytes` in a few chunks (so chunk boundaries inside events are crossed) and analyses it.
fn read_and_analyse(bytes: &[u8]) -> Result<Analysis> {
    let mut reader = Reader::new();
    for chunk in bytes.chunks(bytes.len() / 3 + 1) {
        reader.push(chunk)?;
    }
    let _ = reader.progress();
    Analysis::new(super::finish(reader)?, Options::default())
}

/// Compiles the built-in rule sets (kernel-category and phase regexes), which every analysis shares
/// once built: the largest single piece of first-use work, and one that needs no trace.
pub fn compile_rules() -> Result<()> {
    crate::rules::categories::RuleSet::load(None)?;
    crate::analysis::phases::rules::PhaseRules::builtin();
    Ok(())
}

/// Warms up the parallel parse path: the synthetic trace of `decode_steps` decode steps read as a
/// first range plus a part (parsed from its guessed start, encoded, decoded and adopted in order).
pub fn warm_up_part(decode_steps: usize) -> Result<()> {
    let text = synthetic_trace(decode_steps);
    let bytes = text.as_bytes();
    let events = text.find("\"traceEvents\"").unwrap_or(0);
    let start = crate::ingest::likely_event_start(bytes, events).ok_or_else(|| Error::new("warm-up: no event start"))?;
    let mut part = crate::read::PartReader::new(crate::ingest::DocumentForm::Object, start as u64);
    part.push(&bytes[start..])?;
    let encoded = part.finish().to_bytes();
    let mut reader = Reader::new();
    reader.push(&bytes[..start])?;
    if !reader.adopt_part_bytes(&encoded) {
        return Err(Error::new("warm-up: the part was refused"));
    }
    reader.finish()?;
    Ok(())
}

/// Runs the whole pipeline on the synthetic trace: the built-in rule sets, reading (plain JSON and
/// gzip), linking, every analysis, every table of [`crate::report::TABLES`] and the summary.
/// Returns the analysis of the plain-JSON form, for callers that also want to warm their own
/// conversions (the wasm face serialises its tables and summary).
pub fn warm_up() -> Result<Analysis> {
    warm_up_with(WARM_UP_DECODE_STEPS)
}

/// [`warm_up`] on a synthetic trace of `decode_steps` decode steps.
pub fn warm_up_with(decode_steps: usize) -> Result<Analysis> {
    compile_rules()?;
    let text = synthetic_trace(decode_steps);
    read_and_analyse(&gzip(text.as_bytes()))?;
    let analysis = read_and_analyse(text.as_bytes())?;
    for def in crate::report::TABLES {
        let table = (def.build)(&analysis);
        let _ = table.to_csv();
    }
    let _ = crate::report::summary::summary(&analysis);
    Ok(analysis)
}
