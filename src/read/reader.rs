//! The streaming [`Reader`]: chunks of any size in, the model (unlinked) out. The input's format is
//! told once ([`super::formats::sniff()`], by the reader itself or by its caller) and read by that
//! format's reader.

use super::formats::{self, Detect, FormatReader, ReadSettings};
use super::part::Part;
use crate::error::{Error, Result};
use crate::ingest::Format;
use crate::model::Trace;

/// How far reading has got.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct Progress {
    /// Input bytes pushed so far.
    pub bytes_in: u64,
    /// JSON text bytes seen (after decompression).
    pub json_bytes: u64,
    /// Events read.
    pub events: u64,
}

/// Streaming reader: push chunks, then [`Reader::finish`] for the model (unlinked). The input's
/// format is told once ([`formats::sniff()`], by the reader itself or by the caller) and read by that
/// format's reader ([`formats`]).
pub struct Reader {
    /// The format's reader (none until the first bytes or a format are given).
    format: Option<Box<dyn FormatReader>>,
    settings: ReadSettings,
    bytes_in: u64,
}

impl Default for Reader {
    fn default() -> Self {
        Self::new()
    }
}

impl Reader {
    /// A reader for one trace whose format it tells from the first bytes pushed. A caller that
    /// has [`formats::sniff()`]ed them already hands the answer on instead ([`Reader::with_format`]).
    pub fn new() -> Self {
        Reader { format: None, settings: ReadSettings::default(), bytes_in: 0 }
    }

    /// A reader for one trace of `format` (what [`formats::sniff()`] said of its first bytes): the bytes are
    /// not looked at again. `gzip_crc`: whether a gzip input's CRC-32 is checked (as
    /// [`Reader::check_gzip_crc`] sets it for a reader that tells the format itself).
    pub fn with_format(format: Format, gzip_crc: bool) -> Self {
        Self::of(format, ReadSettings { gzip_crc, ..ReadSettings::default() })
    }

    /// A reader for one trace of `format`, set up by `settings` (e.g. only one process of an
    /// Nsight Systems export: one rank of a run the export holds).
    pub fn of(format: Format, settings: ReadSettings) -> Self {
        Reader { format: Some(formats::open(format, settings)), settings, bytes_in: 0 }
    }

    /// Checks a gzip input's CRC-32 (the default) or not, for a reader that tells the format from
    /// the first bytes ([`Reader::new`]); call before the first [`Reader::push`]. (A reader told
    /// its format takes its settings with it: [`Reader::of`].)
    pub fn check_gzip_crc(&mut self, on: bool) {
        self.settings.gzip_crc = on;
    }

    /// The format's reader: the one told, or one the first bytes will tell.
    fn reader(&mut self) -> &mut Box<dyn FormatReader> {
        let settings = self.settings;
        self.format.get_or_insert_with(|| Box::new(Detect::new(settings)))
    }

    /// The format's reader taken out of this one (as [`Reader::reader`] gives it).
    fn take_reader(&mut self) -> Box<dyn FormatReader> {
        let settings = self.settings;
        self.format.take().unwrap_or_else(|| Box::new(Detect::new(settings)))
    }

    /// Feeds the next chunk of the file (compressed or not).
    pub fn push(&mut self, chunk: &[u8]) -> Result<()> {
        if chunk.is_empty() {
            return Ok(());
        }
        self.reader().push(chunk, false)?;
        self.bytes_in += chunk.len() as u64;
        Ok(())
    }

    /// Continues with `part`, the text right after what this reader has read, parsed elsewhere
    /// from a guessed event start. True if it was kept: the part starts where this reader's text
    /// ends and this reader's stream stopped exactly at an event boundary there (only a comma and
    /// whitespace left), so the guess was right. False means nothing changed: the caller must
    /// push that range of text itself, in order.
    pub fn adopt_part(&mut self, part: Part) -> bool {
        let compressed = part.bytes;
        self.adopt_part_counted(part, compressed)
    }

    /// [`Reader::adopt_part`] for a part of decompressed text: `compressed_bytes` of input are
    /// counted for it (the part's own byte count is text).
    pub(crate) fn adopt_part_counted(&mut self, part: Part, compressed_bytes: u64) -> bool {
        let adopted = self.format.as_mut().and_then(|f| f.json()).is_some_and(|json| json.adopt(part));
        if adopted {
            self.bytes_in += compressed_bytes;
        }
        adopted
    }

    /// [`Reader::adopt_part`] for a part in its byte form ([`Part::to_bytes`]). Bytes that do not
    /// decode are refused like a wrong guess (the range is then parsed in order).
    pub fn adopt_part_bytes(&mut self, bytes: &[u8]) -> bool {
        Part::from_bytes(bytes).is_ok_and(|part| self.adopt_part(part))
    }

    /// Feeds text that is already decompressed (a gzip input inflated elsewhere: from here on the
    /// reader reads what the stream holds), on this thread only (the threaded native readers
    /// run their own parallelism around it).
    pub fn push_json(&mut self, text: &[u8], compressed_bytes: u64) -> Result<()> {
        let contents = self.take_reader().contents();
        self.bytes_in += compressed_bytes;
        self.format.insert(contents).push(text, true)
    }

    /// Progress so far.
    pub fn progress(&self) -> Progress {
        let (json_bytes, events) = self.format.as_ref().map_or((0, 0), |f| f.progress());
        Progress { bytes_in: self.bytes_in, json_bytes, events }
    }

    /// Says that the input (a gzip stream inflated outside this reader, pushed with
    /// [`Reader::push_json`]) did not end cleanly: `what` is [`GzipDecoder::finish`]'s answer.
    /// The text pushed so far is then read as a trace cut short.
    ///
    /// [`GzipDecoder::finish`]: crate::ingest::GzipDecoder::finish
    pub fn input_cut(&mut self, what: String) {
        self.reader().input_cut(what);
    }

    /// Ends the input and returns the model, not linked yet ([`crate::pipeline::finish`] links it).
    /// A trace cut short is read up to its last complete event and carries a
    /// [`crate::ingest::Truncation`] in `stats.truncation` (the faces warn, or refuse in strict
    /// mode); an event array without its closing `]` is complete, with a note.
    pub fn finish(mut self) -> Result<Trace> {
        if self.bytes_in == 0 {
            return Err(Error::new("empty input: the file has no bytes"));
        }
        let bytes_in = self.bytes_in;
        self.take_reader().finish(bytes_in)
    }
}
