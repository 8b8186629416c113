//! gzip (`.json.gz`, `.xplane.pb.gz`, any format compressed): inflated as it comes, and what it
//! holds is read by the reader its first inflated bytes tell ([`Detect`]).

use super::{Detect, FormatKind, FormatReader, ReadSettings, Reading};
use crate::error::Result;
use crate::ingest::{is_gzip, Format, GzipDecoder};
use crate::model::Trace;

/// gzip-compressed input.
pub struct Gzip;

/// The kind registered in [`super::FORMATS`].
pub static GZIP: Gzip = Gzip;

impl FormatKind for Gzip {
    fn tell(&self, head: &[u8]) -> Option<Format> {
        is_gzip(head).then_some(Format::Gzip)
    }

    fn is(&self, format: Format) -> bool {
        format == Format::Gzip
    }

    fn reading(&self, _: Format) -> Reading {
        Reading::Inflated
    }

    fn open(&self, _: Format, settings: ReadSettings) -> Box<dyn FormatReader> {
        let mut decoder = Box::<GzipDecoder>::default();
        decoder.check_crc(settings.gzip_crc);
        Box::new(GzipReader { decoder, contents: Box::new(Detect::new(settings)) })
    }
}

/// Inflates a gzip stream into the reader of what it holds.
struct GzipReader {
    decoder: Box<GzipDecoder>,
    contents: Box<dyn FormatReader>,
}

impl FormatReader for GzipReader {
    fn push(&mut self, bytes: &[u8], _: bool) -> Result<()> {
        let contents = &mut self.contents;
        self.decoder.push(bytes, &mut |text| contents.push(text, true))
    }

    fn progress(&self) -> (u64, u64) {
        self.contents.progress()
    }

    fn contents(self: Box<Self>) -> Box<dyn FormatReader> {
        self.contents
    }

    fn input_cut(&mut self, what: String) {
        self.contents.input_cut(what);
    }

    /// The stream ends first: a stream that does not end cleanly leaves its contents cut short.
    fn finish(mut self: Box<Self>, bytes_in: u64) -> Result<Trace> {
        let contents = &mut self.contents;
        if let Some(what) = self.decoder.finish(&mut |text| contents.push(text, true))? {
            self.contents.input_cut(what);
        }
        self.contents.finish(bytes_in)
    }
}

/// The text of an input whose format does not matter to the caller (a splitter copying events):
/// inflated when its first bytes say gzip, else as it is.
#[derive(Default)]
pub struct Inflating {
    /// Told by the first bytes: `Some` for a gzip stream.
    decoder: Option<Box<GzipDecoder>>,
    started: bool,
}

impl Inflating {
    /// Takes the next bytes; `text` gets the text they hold, in order.
    pub fn push(&mut self, bytes: &[u8], text: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        if !self.started {
            self.started = true;
            if GZIP.tell(bytes).is_some() {
                self.decoder = Some(Box::default());
            }
        }
        match &mut self.decoder {
            Some(decoder) => decoder.push(bytes, text),
            None => text(bytes),
        }
    }

    /// Ends the input; `Some(what)` when a gzip stream did not end cleanly.
    pub fn finish(&mut self, text: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<Option<String>> {
        match &mut self.decoder {
            Some(decoder) => decoder.finish(text),
            None => Ok(None),
        }
    }
}
