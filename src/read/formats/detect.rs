//! The reader of an input not told its format: its first bytes tell ([`super::sniff()`]), then the
//! format's own reader takes over. A gzip stream's contents are read this way too.

use super::{open, sniff, FormatReader, JsonReader, ReadSettings};
use crate::error::Result;
use crate::ingest::Format;
use crate::model::Trace;

/// Waits for the first bytes, then hands everything to the reader of the format they tell.
pub struct Detect {
    settings: ReadSettings,
    reader: Option<Box<dyn FormatReader>>,
}

impl Detect {
    /// A reader set up by `settings` whose format the first bytes pushed will tell.
    pub fn new(settings: ReadSettings) -> Self {
        Detect { settings, reader: None }
    }

    /// The reader of the format told, opened with the first bytes (`head`; none: Chrome JSON,
    /// whose reader says what an empty input is).
    fn reader(&mut self, head: &[u8]) -> &mut Box<dyn FormatReader> {
        let settings = self.settings;
        self.reader.get_or_insert_with(|| {
            // One byte is enough to rule gzip out; a lone 0x1f is taken for gzip's first byte.
            let format = match head {
                [0x1f] => Format::Gzip,
                _ => sniff(head),
            };
            open(format, settings)
        })
    }
}

impl FormatReader for Detect {
    fn push(&mut self, bytes: &[u8], in_order: bool) -> Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        self.reader(bytes).push(bytes, in_order)
    }

    fn progress(&self) -> (u64, u64) {
        self.reader.as_ref().map_or((0, 0), |r| r.progress())
    }

    fn contents(self: Box<Self>) -> Box<dyn FormatReader> {
        match self.reader {
            Some(reader) => reader.contents(),
            None => self,
        }
    }

    fn json(&mut self) -> Option<&mut JsonReader> {
        self.reader.as_mut()?.json()
    }

    fn input_cut(&mut self, what: String) {
        self.reader(b"").input_cut(what);
    }

    fn finish(self: Box<Self>, bytes_in: u64) -> Result<Trace> {
        let settings = self.settings;
        self.reader.unwrap_or_else(|| open(Format::Unknown, settings)).finish(bytes_in)
    }
}
