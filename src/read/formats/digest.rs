//! A traceprism digest (`traceprism digest`'s JSON, a gate's baseline): told by its first key so
//! that a digest given where a trace belongs is refused at once, with what to do instead.

use super::{FormatKind, FormatReader, ReadSettings, Reading};
use crate::error::{Error, Result};
use crate::ingest::{looks_like_digest, Format};
use crate::model::Trace;

/// A traceprism digest.
pub struct Digest;

/// The kind registered in [`super::FORMATS`].
pub static DIGEST: Digest = Digest;

/// What a digest read as a trace is told.
const NOT_A_TRACE: &str = "the input is a traceprism digest (a gate's baseline, from `traceprism digest`), not a trace: give it to `traceprism gate` as the baseline";

impl FormatKind for Digest {
    fn tell(&self, head: &[u8]) -> Option<Format> {
        looks_like_digest(head).then_some(Format::Digest)
    }

    fn is(&self, format: Format) -> bool {
        format == Format::Digest
    }

    fn reading(&self, _: Format) -> Reading {
        Reading::InOrder
    }

    fn open(&self, _: Format, _: ReadSettings) -> Box<dyn FormatReader> {
        Box::new(DigestRefused)
    }
}

/// Refuses a digest at its first bytes.
struct DigestRefused;

impl FormatReader for DigestRefused {
    fn push(&mut self, _: &[u8], _: bool) -> Result<()> {
        Err(Error::new(NOT_A_TRACE))
    }

    fn progress(&self) -> (u64, u64) {
        (0, 0)
    }

    fn contents(self: Box<Self>) -> Box<dyn FormatReader> {
        self
    }

    fn finish(self: Box<Self>, _: u64) -> Result<Trace> {
        Err(Error::new(NOT_A_TRACE))
    }
}
