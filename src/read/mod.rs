//! events → model: [`Reader`] takes a trace's bytes in chunks of any size, runs them through
//! [`crate::ingest`] (inflate, JSON events) and builds the model's columns. What it returns is not
//! linked yet: [`crate::pipeline`] links it ([`crate::link`]) before any analysis.
//!
//! Natively the reader uses more than one thread: large blocks of plain JSON are parsed in two
//! halves, files are read in ranges at once ([`files`]) and gzip is inflated on its own thread
//! ([`gzip_pipeline`]); the page does the same with Web Workers, moving [`Part`]s between them.

pub mod files;
#[cfg(not(target_arch = "wasm32"))]
pub mod gzip_pipeline;
pub mod part;
mod source;
pub use source::whole_text;

pub use files::{default_read_threads, read_path_on, read_trace, MAX_READ_THREADS};
#[cfg(not(target_arch = "wasm32"))]
pub use gzip_pipeline::{read_gzip, Sharing};
pub use part::{Part, PartReader};

use crate::error::{Error, Result};
// Parts of the text read at once are native only.
#[cfg_attr(target_arch = "wasm32", allow(unused_imports))]
use crate::ingest::{
    likely_event_start, read_xspace, sniff, DocumentForm, Format, GzipDecoder, JsonStream, TextEnd, Truncation, OPEN_ARRAY_NOTE,
};
use crate::model::{Trace, TraceBuilder};

enum Input {
    /// Waiting for the first bytes to tell what the input is (a reader not told its [`Format`]).
    Detect,
    /// Text as it is: JSON of the form given (an XSpace or Nsight export is kept whole instead).
    /// (The form is read when a block is parsed in halves, natively only.)
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    Plain(DocumentForm),
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

/// Streaming reader: push chunks, then [`Reader::finish`] for the model (unlinked).
pub struct Reader {
    input: Input,
    json: JsonStream,
    builder: TraceBuilder,
    bytes_in: u64,
    json_bytes: u64,
    parallel_blocks: u64,
    /// What was wrong at the end of a gzip stream inflated elsewhere (see [`Reader::input_cut`]).
    gzip_cut: Option<String>,
    /// Whether a gzip input's CRC-32 is checked ([`Reader::check_gzip_crc`]).
    gzip_crc: bool,
    /// A JAX profile (protobuf `XSpace`, plain or inflated from `*.xplane.pb.gz`), told by its
    /// first bytes and kept whole: it is decoded at the end.
    xspace: Option<Vec<u8>>,
    /// An Nsight Systems export (SQLite, or the row bytes the page's SQLite module makes of one),
    /// told by its first bytes and kept whole: it is read at the end.
    sqlite: Option<Vec<u8>>,
    /// Of an Nsight Systems export, read only this process (one rank of a run).
    nsys_process: Option<i64>,
    /// The input is a traceprism digest, not a trace: refused at the first bytes.
    digest: bool,
}

impl Default for Reader {
    fn default() -> Self {
        Self::new()
    }
}

impl Reader {
    /// A reader for one trace whose format it tells from the first bytes pushed. A caller that
    /// has [`sniff()`]ed them already hands the answer on instead ([`Reader::with_format`]).
    pub fn new() -> Self {
        Reader {
            input: Input::Detect,
            json: JsonStream::default(),
            builder: TraceBuilder::default(),
            bytes_in: 0,
            json_bytes: 0,
            parallel_blocks: 0,
            gzip_cut: None,
            gzip_crc: true,
            xspace: None,
            sqlite: None,
            nsys_process: None,
            digest: false,
        }
    }

    /// A reader for one trace of `format` (what [`sniff()`] said of its first bytes): the bytes are
    /// not looked at again. `gzip_crc`: whether a gzip input's CRC-32 is checked (as
    /// [`Reader::check_gzip_crc`] sets it for a reader that tells the format itself).
    pub fn with_format(format: Format, gzip_crc: bool) -> Self {
        let mut reader = Reader::new();
        reader.gzip_crc = gzip_crc;
        reader.take_format(format);
        reader
    }

    /// Sets up for input of `format`: a gzip decoder, JSON text of its form, or a whole XSpace or
    /// Nsight export kept for the end.
    fn take_format(&mut self, format: Format) {
        self.input = match format {
            Format::Gzip => {
                let mut d = Box::<GzipDecoder>::default();
                d.check_crc(self.gzip_crc);
                Input::Gzip(d)
            }
            _ => Input::Plain(format.form().unwrap_or(DocumentForm::Object)),
        };
        // An Nsight Systems export is kept whole, read at the end; so is a JAX profile (never
        // split for parallel parsing).
        if format.is_nsys() {
            self.sqlite = Some(Vec::new());
        } else if format == Format::Xspace {
            self.xspace = Some(Vec::new());
        }
        self.digest = format == Format::Digest;
    }

    /// Of an Nsight Systems export, reads only the events of process `process` (its id): one rank
    /// of a run whose processes one export holds. Other inputs ignore it.
    pub fn only_process(&mut self, process: i64) {
        self.nsys_process = Some(process);
    }

    /// Checks a gzip input's CRC-32 (the default) or not; call before the first [`Reader::push`].
    pub fn check_gzip_crc(&mut self, on: bool) {
        self.gzip_crc = on;
    }

    /// Feeds the next chunk of the file (compressed or not).
    pub fn push(&mut self, chunk: &[u8]) -> Result<()> {
        if chunk.is_empty() {
            return Ok(());
        }
        if let Input::Detect = self.input {
            // What the input is, decided once from its first bytes. One byte is enough to rule
            // gzip out; a lone 0x1f waits for the second byte.
            let format = match chunk {
                [0x1f] if self.bytes_in == 0 => Format::Gzip,
                _ => sniff(chunk),
            };
            self.take_format(format);
        }
        if self.digest && self.bytes_in == 0 {
            return Err(Error::new(
                "the input is a traceprism digest (a gate's baseline, from `traceprism digest`), not a trace: give it to `traceprism gate` as the baseline",
            ));
        }
        self.bytes_in += chunk.len() as u64;
        if let Some(export) = &mut self.sqlite {
            export.extend_from_slice(chunk);
            return Ok(());
        }
        let Reader { input, json, builder, json_bytes, xspace, .. } = self;
        if let (Input::Plain(_), Some(_)) = (&input, &xspace) {
            return inflated(chunk, json_bytes, xspace, json, builder);
        }
        #[cfg(not(target_arch = "wasm32"))]
        if let Input::Plain(_) = self.input {
            self.json_bytes += chunk.len() as u64;
            return self.feed_parallel(chunk);
        }
        let Reader { input, json, builder, json_bytes, xspace, .. } = self;
        match input {
            Input::Plain(_) => {
                *json_bytes += chunk.len() as u64;
                json.feed(chunk, builder)
            }
            Input::Gzip(gz) => gz.push(chunk, &mut |out| inflated(out, json_bytes, xspace, json, builder)),
            Input::Detect => unreachable!(),
        }
    }

    /// Parses a block on two threads: the main stream takes the text up to a likely event
    /// boundary near the middle, a continuation stream takes the rest. The second half is kept only
    /// if the main stream confirms it stopped exactly at that boundary; otherwise the rest is
    /// parsed again in order, so the result never depends on the guess.
    #[cfg(not(target_arch = "wasm32"))]
    fn feed_parallel(&mut self, chunk: &[u8]) -> Result<()> {
        const MIN_SPLIT: usize = 1 << 20;
        let split = if chunk.len() >= MIN_SPLIT { likely_event_start(chunk, chunk.len() / 2) } else { None };
        let Some(p) = split else { return self.json.feed(chunk, &mut self.builder) };
        // Before the first byte is parsed the stream cannot tell the form yet: the format told it.
        let form = match (self.json.position(), &self.input) {
            (0, Input::Plain(form)) => *form,
            _ if self.json.object_form() => DocumentForm::Object,
            _ => DocumentForm::BareArray,
        };
        let start = self.json.position() + p as u64;
        let (first, second) = chunk.split_at(p);
        let (main_result, other) = std::thread::scope(|scope| {
            let worker = scope.spawn(move || {
                let mut part = PartReader::new(form, start);
                part.push(second).map(|()| part.finish())
            });
            let main_result = self.json.feed(first, &mut self.builder);
            (main_result, worker.join())
        });
        main_result?;
        // `push` already counted the whole chunk: the part's bytes must not be counted again.
        if let Ok(Ok(mut part)) = other {
            part.bytes = 0;
            if self.adopt_part(part) {
                return Ok(());
            }
        }
        self.json.feed(second, &mut self.builder)
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
        if !matches!(self.input, Input::Plain(_))
            // A trace read by its process names (a JAX trace in Chrome JSON, an NPU timeline) is
            // read in order: a part never saw the process names.
            || self.builder.reads_in_order()
            || self.json.position() != part.start
            || self.json.at_event_boundary() != Some(part.form)
        {
            return false;
        }
        self.builder.absorb(part.builder, self.json.events());
        self.json.adopt(part.stream);
        self.bytes_in += compressed_bytes;
        self.json_bytes += part.bytes;
        self.parallel_blocks += 1;
        true
    }

    /// [`Reader::adopt_part`] for a part in its byte form ([`Part::to_bytes`]). Bytes that do not
    /// decode are refused like a wrong guess (the range is then parsed in order).
    pub fn adopt_part_bytes(&mut self, bytes: &[u8]) -> bool {
        Part::from_bytes(bytes).is_ok_and(|part| self.adopt_part(part))
    }

    /// Feeds text that is already decompressed, on this thread only (the threaded native readers
    /// run their own parallelism around it).
    pub fn push_json(&mut self, text: &[u8], compressed_bytes: u64) -> Result<()> {
        if !matches!(self.input, Input::Plain(_)) {
            // The text's own form is the stream's to find: it is parsed here in order.
            self.input = Input::Plain(DocumentForm::Object);
        }
        self.bytes_in += compressed_bytes;
        inflated(text, &mut self.json_bytes, &mut self.xspace, &mut self.json, &mut self.builder)
    }

    /// Progress so far.
    pub fn progress(&self) -> Progress {
        Progress { bytes_in: self.bytes_in, json_bytes: self.json_bytes, events: self.json.events() }
    }

    /// Says that the input (a gzip stream inflated outside this reader, pushed with
    /// [`Reader::push_json`]) did not end cleanly: `what` is [`GzipDecoder::finish`]'s answer.
    /// The text pushed so far is then read as a trace cut short.
    pub fn input_cut(&mut self, what: String) {
        self.gzip_cut = Some(what);
    }

    /// Ends the input and returns the model, not linked yet ([`crate::pipeline::finish`] links it). A trace cut short is read up to its last
    /// complete event and carries a [`Truncation`] in `stats.truncation` (the faces warn, or refuse
    /// in strict mode); an event array without its closing `]` is complete, with a note.
    pub fn finish(mut self) -> Result<Trace> {
        if self.bytes_in == 0 {
            return Err(Error::new("empty input: the file has no bytes"));
        }
        // A gzip stream ends first: what it held may be a JAX profile.
        {
            let Reader { input, json, builder, json_bytes, xspace, gzip_cut, .. } = &mut self;
            if let Input::Gzip(gz) = input {
                let end = gz.finish(&mut |out| inflated(out, json_bytes, xspace, json, builder))?;
                if end.is_some() {
                    *gzip_cut = end;
                }
            }
        }
        if let Some(bytes) = self.sqlite.take() {
            return self.finish_nsys(&bytes);
        }
        if let Some(bytes) = self.xspace.take() {
            if let Some(what) = self.gzip_cut.take() {
                return Err(Error::new(format!("truncated gzip around a JAX profile: {what}")));
            }
            let derived = read_xspace(&bytes, &mut self.builder)?;
            let mut trace = std::mem::take(&mut self.builder).finish(false);
            trace.stats.bytes_in = self.bytes_in;
            trace.stats.json_bytes = self.json_bytes;
            trace.stats.format = crate::model::InputFormat::Xspace;
            trace.stats.notes.push("read as a JAX / XLA profile (protobuf XSpace)".into());
            trace.stats.notes.extend(derived.note());
            if trace.stats.kept == 0 {
                return Err(Error::new(format!(
                    "XSpace with {} events, none of them a GPU kernel or host event",
                    trace.stats.events
                )));
            }
            return Ok(trace);
        }
        let text_end = {
            let Reader { json, builder, gzip_cut, .. } = &mut self;
            json.finish(builder).map_err(|e| match gzip_cut {
                Some(what) => Error { message: format!("truncated gzip: {what}: {}", e.message), ..e },
                None => e,
            })?
        };
        if self.json.object_form() && !self.json.saw_trace_events() {
            return Err(Error::new("not a trace: the JSON object has no \"traceEvents\" array"));
        }
        let process_note = self.builder.process_name_note();
        let xla_json = self.builder.is_jax_json();
        let mut trace = self.builder.finish(self.json.object_form());
        trace.stats.bytes_in = self.bytes_in;
        trace.stats.json_bytes = self.json_bytes;
        trace.stats.parallel_blocks = self.parallel_blocks;
        let events_read = self.json.events();
        trace.stats.truncation = match (text_end, self.gzip_cut) {
            (TextEnd::Cut { complete, stops_at, inside }, gzip) => Some(Truncation::new(
                events_read,
                complete,
                stops_at,
                self.bytes_in,
                match gzip {
                    Some(what) => format!("{what}; the text ends inside {inside}"),
                    None => format!("the input ends inside {inside}"),
                },
                false,
            )),
            (_, Some(what)) => Some(Truncation::new(events_read, self.json_bytes, self.json_bytes, self.bytes_in, what, true)),
            (TextEnd::OpenArray, None) => {
                trace.stats.notes.push(OPEN_ARRAY_NOTE.to_string());
                None
            }
            (TextEnd::Complete, None) => None,
        };
        if trace.stats.events == 0 {
            return Err(match &trace.stats.truncation {
                Some(cut) => {
                    Error::at(format!("truncated trace: {} before the first complete event", cut.reason), cut.text_stops_at)
                }
                None => Error::new("not a trace: traceEvents is empty"),
            });
        }
        if trace.stats.kept == 0 && xla_json {
            return Err(Error::new(format!(
                "a JAX / XLA trace in Chrome JSON with {} events, none on a `Stream` thread of a /device: process or on \
                 the /host: process: traceprism also reads the *.xplane.pb that jax.profiler writes beside it",
                trace.stats.events
            )));
        }
        if let Some(note) = process_note {
            trace.stats.notes.push(note);
        }
        if trace.stats.kept == 0 {
            return Err(Error::new(format!(
                "not a trace: none of the {} events is a kernel, CPU op or runtime call",
                trace.stats.events
            )));
        }
        Ok(trace)
    }
}

impl Reader {
    /// The trace of an Nsight Systems export (`bytes`: the whole SQLite database, or its row
    /// bytes from the page's SQLite module).
    fn finish_nsys(mut self, bytes: &[u8]) -> Result<Trace> {
        // Row bytes stand for the database they were made of: its size is the input's.
        let (read, database_bytes) = if crate::ingest::looks_like_rows(bytes) {
            crate::ingest::read_nsys_rows(bytes, &mut self.builder, self.nsys_process)?
        } else {
            (self.read_sqlite(bytes)?, bytes.len() as u64)
        };
        let mut trace = std::mem::take(&mut self.builder).finish(false);
        trace.stats.bytes_in = database_bytes;
        trace.stats.json_bytes = database_bytes;
        trace.stats.format = crate::model::InputFormat::NsysSqlite;
        let [kernels, runtime, memcpy, memset, nvtx, graphs] = read.counts;
        let graphs = if graphs > 0 { format!(", {graphs} whole-graph replays") } else { String::new() };
        trace.stats.notes.push(format!(
            "read as an Nsight Systems export (SQLite, schema {}): {kernels} kernels, {runtime} runtime calls, {memcpy} memcpy, {memset} memset, {nvtx} NVTX ranges{graphs}",
            read.schema_version
        ));
        trace.stats.notes.extend(read.notes);
        if let Some(p) = self.nsys_process {
            trace.stats.notes.push(format!("process {p} of the export only (one rank of the run it holds)"));
        }
        if trace.stats.kept == 0 {
            return Err(Error::new(format!(
                "an Nsight Systems export (schema {}) with no kernel, runtime call or NVTX range",
                read.schema_version
            )));
        }
        Ok(trace)
    }

    /// An SQLite database's tables, read natively.
    #[cfg(all(not(target_arch = "wasm32"), feature = "nsys"))]
    fn read_sqlite(&mut self, bytes: &[u8]) -> Result<crate::ingest::NsysRead> {
        crate::ingest::read_nsys_process(bytes, &mut self.builder, self.nsys_process)
    }

    /// The core in the page reads an export only as row bytes (its SQLite is a module of its own,
    /// which the page runs first); a build without the `nsys` feature not at all.
    #[cfg(any(target_arch = "wasm32", not(feature = "nsys")))]
    fn read_sqlite(&mut self, _bytes: &[u8]) -> Result<crate::ingest::NsysRead> {
        Err(Error::new(if cfg!(target_arch = "wasm32") {
            "the input is an SQLite database (an Nsight Systems export?) handed to the core as it is: the page reads these through its SQLite module, which makes row bytes of the export first"
        } else {
            "the input is an SQLite database (an Nsight Systems export?): this build of traceprism has no SQLite reader (the `nsys` feature)"
        }))
    }
}

/// Text inflated from a gzip stream (or pushed already inflated): JSON goes to the event stream;
/// a JAX profile (`*.xplane.pb.gz`), told by its first bytes, is kept whole for the XSpace reader.
fn inflated(
    out: &[u8],
    json_bytes: &mut u64,
    xspace: &mut Option<Vec<u8>>,
    json: &mut JsonStream,
    builder: &mut TraceBuilder,
) -> Result<()> {
    if *json_bytes == 0 && xspace.is_none() && sniff(out) == Format::Xspace {
        *xspace = Some(Vec::new());
    }
    *json_bytes += out.len() as u64;
    match xspace {
        Some(bytes) => {
            bytes.extend_from_slice(out);
            Ok(())
        }
        None => json.feed(out, builder),
    }
}
