//! One byte range of a plain-JSON trace, parsed on its own (another thread, another Web Worker)
//! from a guessed event start, then handed to the [`super::Reader`] that read the text before it.
//!
//! The guess ([`crate::ingest::likely_event_start`]) is never trusted: [`super::Reader::adopt_part`] keeps
//! a [`Part`] only if the reader's own stream stopped exactly at an event boundary where the part
//! begins; otherwise the caller parses that range again, in order, so the model (and any error
//! message, with its byte offset) never depends on the guess.

use crate::error::{Error, Result};
use crate::ingest::{DocumentForm, JsonStream};
use crate::model::transfer::{BuilderInBytes, PartBuilder, PartBytes};
use crate::model::TraceBuilder;
use crate::support::codec::{ByteCount, WireReader, WireSink, WireWriter};

/// Parses a range of the event array that starts at a guessed event start (a `{`).
pub struct PartReader {
    stream: JsonStream,
    builder: TraceBuilder,
    start: u64,
    bytes: u64,
    form: DocumentForm,
}

/// What a [`PartReader`] read: the events (in a builder of their own, or still in byte form when
/// the part came through [`Part::from_vec`]), the stream's state at the end of the range (with
/// its unparsed tail) and the range's length.
pub struct Part {
    pub(crate) stream: JsonStream,
    pub(crate) builder: PartBuilder,
    /// Offset of the range's first byte in the whole text.
    pub(crate) start: u64,
    /// Bytes of text pushed.
    pub(crate) bytes: u64,
    /// The document's form (the part's text alone cannot tell it).
    pub(crate) form: DocumentForm,
}

const MAGIC: &[u8; 8] = b"TPPART\0\0";
/// Version 5: a header (with its own length), the small tables and row counts, then each table's
/// columns as plain values (flow ends by column since version 4, communication parameters since 5).
const VERSION: u32 = 5;
/// Bytes before the header's other fields: magic, version, header length.
const FIXED: usize = 8 + 4 + 8;

impl PartReader {
    /// A reader for a range that starts at byte `start` of the text, at an element of the event
    /// array, of a document of `form` (see [`crate::ingest::document_form`]).
    pub fn new(form: DocumentForm, start: u64) -> Self {
        PartReader { stream: JsonStream::continuation(form, start), builder: TraceBuilder::default(), start, bytes: 0, form }
    }

    /// Feeds the next piece of the range.
    pub fn push(&mut self, chunk: &[u8]) -> Result<()> {
        self.bytes += chunk.len() as u64;
        self.stream.feed(chunk, &mut self.builder)
    }

    /// Events read so far.
    pub fn events(&self) -> u64 {
        self.stream.events()
    }

    /// Ends the range. An event cut by the range's end stays as the part's unparsed tail (the
    /// part is then refused when adopted).
    pub fn finish(self) -> Part {
        let PartReader { stream, builder, start, bytes, form } = self;
        Part { stream, builder: PartBuilder::Parsed(builder), start, bytes, form }
    }
}

impl Part {
    /// Events in the part.
    pub fn events(&self) -> u64 {
        self.stream.events()
    }

    /// Offset of the part's first byte in the whole text.
    pub fn start(&self) -> u64 {
        self.start
    }

    /// Bytes of text the part covers.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The part as bytes (see [`crate::model::transfer`]), to move it to another worker.
    pub fn to_bytes(&self) -> Vec<u8> {
        // Sized exactly once: a part of a 1 GB trace is ~100 MB of bytes.
        let mut out = Vec::with_capacity(self.encoded_len());
        self.write_to(&mut out);
        out
    }

    /// The length of [`Part::to_bytes`].
    pub fn encoded_len(&self) -> usize {
        let mut count = ByteCount::default();
        self.write_to(&mut count);
        count.0
    }

    /// Writes [`Part::to_bytes`] to any sink (the page writes straight into a JS array).
    pub fn write_to<S: WireSink>(&self, sink: &mut S) {
        // The header: the range, the stream's state with its unparsed tail (at most one event),
        // the small tables and the row counts; its length is patched in once known.
        let mut w = WireWriter { out: Vec::with_capacity(4096 + self.stream.tail_len()) };
        w.out.extend_from_slice(MAGIC);
        w.put(VERSION);
        w.put(0u64);
        w.put(self.start);
        w.put(self.bytes);
        w.flag(self.form == DocumentForm::BareArray);
        self.stream.encode(&mut w);
        self.builder.encode_small(&mut w);
        let head = (w.out.len() as u64).to_le_bytes();
        w.out[FIXED - 8..FIXED].copy_from_slice(&head);
        sink.write(&w.out);
        self.builder.write_rows(sink);
    }

    /// Reads bytes written by [`Part::to_bytes`]; anything malformed is an error.
    pub fn from_bytes(data: &[u8]) -> Result<Part> {
        Part::from_vec(data.to_vec())
    }

    /// [`Part::from_bytes`] that keeps `data`: the part's rows stay in it until the part is
    /// adopted, which appends them to the reader's columns (no decoded copy is made).
    pub fn from_vec(data: Vec<u8>) -> Result<Part> {
        Part::from_source(Box::new(data))
    }

    /// [`Part::from_bytes`] for bytes held anywhere (in the page: the JS array the part was moved
    /// in, read piece by piece). Only the header is copied; the rows are checked in place.
    pub fn from_source(bytes: PartBytes) -> Result<Part> {
        let mut fixed = [0u8; FIXED];
        let n = bytes.len().min(FIXED);
        bytes.read(0, &mut fixed[..n]);
        if fixed[..n.min(MAGIC.len())] != MAGIC[..] {
            return Err(Error::new("malformed part bytes: not a traceprism part"));
        }
        let mut r = WireReader::new(&fixed[..n]);
        r.take(MAGIC.len())?;
        let version = r.get::<u32>()?;
        if version != VERSION {
            return Err(Error::new(format!("malformed part bytes: version {version}, expected {VERSION}")));
        }
        let head_len = usize::try_from(r.get::<u64>()?).unwrap_or(usize::MAX);
        if head_len < FIXED || head_len > bytes.len() {
            return Err(Error::new("malformed part bytes: ends early"));
        }
        let mut head = vec![0u8; head_len];
        bytes.read(0, &mut head);
        let mut r = WireReader::new(&head);
        r.take(FIXED)?;
        let start = r.get::<u64>()?;
        let range = r.get::<u64>()?;
        let form = if r.flag()? { DocumentForm::BareArray } else { DocumentForm::Object };
        let stream = JsonStream::decode(&mut r)?;
        // A part's stream consumed `base` bytes of the range and keeps the rest as its tail.
        if !stream.is_continuation_of(form, range) {
            return Err(Error::new("malformed part bytes: stream state does not match the range"));
        }
        let (small, rows) = TraceBuilder::decode_small(&mut r)?;
        if r.remaining() != 0 {
            return Err(Error::new("malformed part bytes: header length does not match"));
        }
        let builder = PartBuilder::InBytes(BuilderInBytes::new(small, rows, bytes, head_len)?);
        Ok(Part { stream, builder, start, bytes: range, form })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::{document_form, gunzip, likely_event_start};
    use crate::read::Reader;

    /// The model after adopting the second half of `text` as a part, moved through bytes or not.
    fn read_with_part(text: &[u8], split: usize, through_bytes: bool) -> String {
        let mut part = PartReader::new(document_form(text).unwrap(), split as u64);
        for piece in text[split..].chunks(1 << 20) {
            part.push(piece).unwrap();
        }
        let mut part = part.finish();
        if through_bytes {
            let bytes = part.to_bytes();
            assert_eq!(bytes.len(), part.encoded_len());
            part = Part::from_bytes(&bytes).unwrap();
            // A decoded part writes as many bytes again (its name maps may list in another order).
            assert_eq!(part.encoded_len(), bytes.len());
        }
        let mut r = Reader::new();
        for piece in text[..split].chunks(256 << 10) {
            r.push(piece).unwrap();
        }
        assert!(r.adopt_part(part));
        format!("{:?}", r.finish().unwrap())
    }

    #[test]
    fn a_part_moved_through_bytes_gives_every_column_unchanged() {
        for fixture in ["sglang_qwen3-8b_decode_graph_mi300x.json.gz", "llama_train.pt.trace.json.gz"] {
            let path = format!("{}/fixtures/{fixture}", env!("CARGO_MANIFEST_DIR"));
            let text = gunzip(&std::fs::read(path).unwrap()).unwrap();
            let split = likely_event_start(&text, text.len() / 2).unwrap();
            let (moved, kept) = (read_with_part(&text, split, true), read_with_part(&text, split, false));
            assert!(moved == kept, "{fixture}: the models differ");
        }
    }
}
