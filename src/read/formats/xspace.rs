//! A JAX / TensorFlow profile: a serialized `XSpace` protobuf (`.xplane.pb`, or inflated from
//! `.xplane.pb.gz`), kept whole as it comes and decoded at the end ([`read_xspace`]).

use super::{FormatKind, FormatReader, ReadSettings, Reading};
use crate::error::{Error, Result};
use crate::ingest::{looks_like_xspace, read_xspace, Format};
use crate::model::{InputFormat, Trace, TraceBuilder};

/// A JAX / XLA profile.
pub struct Xspace;

/// The kind registered in [`super::FORMATS`].
pub static XSPACE: Xspace = Xspace;

impl FormatKind for Xspace {
    fn tell(&self, head: &[u8]) -> Option<Format> {
        looks_like_xspace(head).then_some(Format::Xspace)
    }

    fn is(&self, format: Format) -> bool {
        format == Format::Xspace
    }

    fn reading(&self, _: Format) -> Reading {
        Reading::InOrder
    }

    fn open(&self, _: Format, _: ReadSettings) -> Box<dyn FormatReader> {
        Box::new(XspaceReader::default())
    }
}

/// Keeps the protobuf's bytes for the end.
#[derive(Default)]
struct XspaceReader {
    bytes: Vec<u8>,
    cut: Option<String>,
}

impl FormatReader for XspaceReader {
    fn push(&mut self, bytes: &[u8], _: bool) -> Result<()> {
        self.bytes.extend_from_slice(bytes);
        Ok(())
    }

    fn progress(&self) -> (u64, u64) {
        (self.bytes.len() as u64, 0)
    }

    fn contents(self: Box<Self>) -> Box<dyn FormatReader> {
        self
    }

    fn input_cut(&mut self, what: String) {
        self.cut = Some(what);
    }

    fn finish(self: Box<Self>, bytes_in: u64) -> Result<Trace> {
        if let Some(what) = self.cut {
            return Err(Error::new(format!("truncated gzip around a JAX profile: {what}")));
        }
        let mut builder = TraceBuilder::default();
        let derived = read_xspace(&self.bytes, &mut builder)?;
        let mut trace = builder.finish(false);
        trace.stats.bytes_in = bytes_in;
        trace.stats.json_bytes = self.bytes.len() as u64;
        trace.stats.format = InputFormat::Xspace;
        trace.stats.notes.push("read as a JAX / XLA profile (protobuf XSpace)".into());
        trace.stats.notes.extend(derived.note());
        if trace.stats.kept == 0 {
            return Err(Error::new(format!(
                "XSpace with {} events, none of them a GPU kernel or host event",
                trace.stats.events
            )));
        }
        Ok(trace)
    }
}
