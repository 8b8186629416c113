//! One byte range of a plain-JSON trace, parsed on its own (another thread, another Web Worker)
//! from a guessed event start, then handed to the [`super::Reader`] that read the text before it.
//!
//! The guess ([`super::likely_event_start`]) is never trusted: [`super::Reader::adopt_part`] keeps
//! a [`Part`] only if the reader's own stream stopped exactly at an event boundary where the part
//! begins; otherwise the caller parses that range again, in order, so the model (and any error
//! message, with its byte offset) never depends on the guess.

use super::stream::JsonStream;
use crate::error::{Error, Result};
use crate::model::wire::{WireReader, WireWriter};
use crate::model::TraceBuilder;

/// Parses a range of the event array that starts at a guessed event start (a `{`).
pub struct PartReader {
    part: Part,
}

/// What a [`PartReader`] read: the events (in a builder of their own), the stream's state at the
/// end of the range (with its unparsed tail) and the range's length.
pub struct Part {
    pub(crate) stream: JsonStream,
    pub(crate) builder: TraceBuilder,
    /// Offset of the range's first byte in the whole text.
    pub(crate) start: u64,
    /// Bytes of text pushed.
    pub(crate) bytes: u64,
    /// Whether the document is the bare-array form (`[...]`) rather than `{"traceEvents": [...]}`.
    pub(crate) bare: bool,
}

const MAGIC: &[u8; 8] = b"TPPART\0\0";
const VERSION: u32 = 1;

impl PartReader {
    /// A reader for a range that starts at byte `start` of the text, at an element of the event
    /// array; `bare` tells the document's form (see [`document_form`]).
    pub fn new(bare: bool, start: u64) -> Self {
        PartReader {
            part: Part { stream: JsonStream::continuation(bare), builder: TraceBuilder::default(), start, bytes: 0, bare },
        }
    }

    /// Feeds the next piece of the range.
    pub fn push(&mut self, chunk: &[u8]) -> Result<()> {
        let p = &mut self.part;
        p.bytes += chunk.len() as u64;
        p.stream.feed(chunk, &mut p.builder)
    }

    /// Events read so far.
    pub fn events(&self) -> u64 {
        self.part.stream.events()
    }

    /// Ends the range. An event cut by the range's end stays as the part's unparsed tail (the
    /// part is then refused when adopted).
    pub fn finish(self) -> Part {
        self.part
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

    /// The part as bytes (see [`crate::model::wire`]), to move it to another worker.
    pub fn to_bytes(&self) -> Vec<u8> {
        // Sized once: a part of a 1 GB trace is ~100 MB of bytes, and growing by doubling copies it.
        let mut w = WireWriter { out: Vec::with_capacity(self.builder.encoded_len_hint() + self.stream.tail_len() + 64) };
        w.out.extend_from_slice(MAGIC);
        w.put(VERSION);
        w.put(self.start);
        w.put(self.bytes);
        w.flag(self.bare);
        self.stream.encode(&mut w);
        self.builder.encode(&mut w);
        w.out
    }

    /// Reads bytes written by [`Part::to_bytes`]; anything malformed is an error.
    pub fn from_bytes(data: &[u8]) -> Result<Part> {
        let mut r = WireReader::new(data);
        if r.take(MAGIC.len()).ok() != Some(&MAGIC[..]) {
            return Err(Error::new("malformed part bytes: not a traceprism part"));
        }
        let version = r.get::<u32>()?;
        if version != VERSION {
            return Err(Error::new(format!("malformed part bytes: version {version}, expected {VERSION}")));
        }
        let start = r.get::<u64>()?;
        let bytes = r.get::<u64>()?;
        let bare = r.flag()?;
        let stream = JsonStream::decode(&mut r)?;
        // A part's stream consumed `base` bytes of the range and keeps the rest as its tail.
        if !stream.is_continuation_of(bare, bytes) {
            return Err(Error::new("malformed part bytes: stream state does not match the range"));
        }
        let builder = TraceBuilder::decode(&mut r)?;
        if r.remaining() != 0 {
            return Err(Error::new("malformed part bytes: trailing data"));
        }
        Ok(Part { stream, builder, start, bytes, bare })
    }
}

/// The form of a trace document from its first bytes: `Some(true)` for a bare array `[...]`,
/// `Some(false)` for an object `{...}`, `None` if the bytes start with neither (gzip, not JSON,
/// or only whitespace so far). A UTF-8 byte-order mark is skipped.
pub fn document_form(head: &[u8]) -> Option<bool> {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    match head.iter().find(|b| !b.is_ascii_whitespace())? {
        b'[' => Some(true),
        b'{' => Some(false),
        _ => None,
    }
}
