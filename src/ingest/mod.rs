//! bytes → events: optional gzip inflate, then the streaming JSON event reader.
//!
//! [`Reader`] takes the input in chunks of any size and hands events to the model builder.

mod event;
mod inflate;
pub(crate) mod number;
mod scan;
mod stream;

pub use event::{Args, Field, Id, RawEvent};
pub use inflate::{is_gzip, GzipDecoder};
pub use stream::{EventSink, JsonStream};

use crate::error::{Error, Result};
use crate::model::{Trace, TraceBuilder};

enum Input {
    /// Waiting for the first bytes to tell gzip from plain text.
    Detect,
    Plain,
    Gzip(Box<GzipDecoder>),
}

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

/// Streaming reader: push chunks, then [`Reader::finish`] to get the linked [`Trace`].
pub struct Reader {
    input: Input,
    json: JsonStream,
    builder: TraceBuilder,
    bytes_in: u64,
    json_bytes: u64,
}

impl Default for Reader {
    fn default() -> Self {
        Self::new()
    }
}

impl Reader {
    /// A reader for one trace.
    pub fn new() -> Self {
        Reader { input: Input::Detect, json: JsonStream::default(), builder: TraceBuilder::default(), bytes_in: 0, json_bytes: 0 }
    }

    /// Feeds the next chunk of the file (compressed or not).
    pub fn push(&mut self, chunk: &[u8]) -> Result<()> {
        if chunk.is_empty() {
            return Ok(());
        }
        self.bytes_in += chunk.len() as u64;
        if let Input::Detect = self.input {
            // One byte is enough to rule gzip out; a lone 0x1f waits for the second byte.
            if chunk.len() == 1 && chunk[0] == 0x1f && self.bytes_in == 1 {
                self.input = Input::Gzip(Box::default());
            } else {
                self.input = if is_gzip(chunk) { Input::Gzip(Box::default()) } else { Input::Plain };
            }
        }
        let Reader { input, json, builder, json_bytes, .. } = self;
        match input {
            Input::Plain => {
                *json_bytes += chunk.len() as u64;
                json.feed(chunk, builder)
            }
            Input::Gzip(gz) => gz.push(chunk, &mut |out| {
                *json_bytes += out.len() as u64;
                json.feed(out, builder)
            }),
            Input::Detect => unreachable!(),
        }
    }

    /// Progress so far.
    pub fn progress(&self) -> Progress {
        Progress { bytes_in: self.bytes_in, json_bytes: self.json_bytes, events: self.json.events() }
    }

    /// Ends the input, links the model and returns it.
    pub fn finish(mut self) -> Result<Trace> {
        if self.bytes_in == 0 {
            return Err(Error::new("empty input: the file has no bytes"));
        }
        {
            let Reader { input, json, builder, json_bytes, .. } = &mut self;
            if let Input::Gzip(gz) = input {
                gz.finish(&mut |out| {
                    *json_bytes += out.len() as u64;
                    json.feed(out, builder)
                })?;
            }
            json.finish(builder)?;
        }
        if self.json.object_form() && !self.json.saw_trace_events() {
            return Err(Error::new("not a trace: the JSON object has no \"traceEvents\" array"));
        }
        let mut trace = self.builder.finish(self.json.object_form());
        trace.stats.bytes_in = self.bytes_in;
        trace.stats.json_bytes = self.json_bytes;
        if trace.stats.events == 0 {
            return Err(Error::new("not a trace: traceEvents is empty"));
        }
        if trace.stats.kept == 0 {
            return Err(Error::new(format!(
                "not a trace: none of the {} events is a kernel, CPU op or runtime call",
                trace.stats.events
            )));
        }
        crate::link::link(&mut trace);
        Ok(trace)
    }
}

/// Reads a whole trace from any `std::io::Read` (a file, stdin) in 8 MiB chunks.
pub fn read_trace(mut source: impl std::io::Read) -> Result<Trace> {
    let mut reader = Reader::new();
    let mut buf = vec![0u8; 8 << 20];
    loop {
        let n = source.read(&mut buf).map_err(|e| Error::new(format!("cannot read input: {e}")))?;
        if n == 0 {
            break;
        }
        reader.push(&buf[..n])?;
    }
    reader.finish()
}
