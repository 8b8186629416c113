//! bytes → events: optional gzip inflate, then the streaming JSON event reader.
//!
//! [`Reader`] takes the input in chunks of any size and hands events to the model builder.

mod simd16;
mod ending;
mod event;
#[cfg(not(target_arch = "wasm32"))]
mod gzip_pipeline;
mod inflate;
mod key_order;
pub(crate) mod number;
pub(crate) mod part;
mod scan;
mod stream;

pub use ending::{Truncation, OPEN_ARRAY_NOTE};
pub use event::{Args, Field, Id, RawEvent};
#[cfg(not(target_arch = "wasm32"))]
pub use gzip_pipeline::{read_gzip, Sharing};
pub use inflate::{gunzip, is_gzip, GzipDecoder, Output};
pub use part::{document_form, Part, PartReader};
pub use stream::{EventSink, JsonStream, TextEnd};

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
    parallel_blocks: u64,
    /// What was wrong at the end of a gzip stream inflated elsewhere (see [`Reader::input_cut`]).
    gzip_cut: Option<String>,
}

impl Default for Reader {
    fn default() -> Self {
        Self::new()
    }
}

impl Reader {
    /// A reader for one trace.
    pub fn new() -> Self {
        Reader {
            input: Input::Detect,
            json: JsonStream::default(),
            builder: TraceBuilder::default(),
            bytes_in: 0,
            json_bytes: 0,
            parallel_blocks: 0,
            gzip_cut: None,
        }
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
        #[cfg(not(target_arch = "wasm32"))]
        if let Input::Plain = self.input {
            self.json_bytes += chunk.len() as u64;
            return self.feed_parallel(chunk);
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

    /// Parses a block on two threads: the main stream takes the text up to a likely event
    /// boundary near the middle, a continuation stream takes the rest. The second half is kept only
    /// if the main stream confirms it stopped exactly at that boundary; otherwise the rest is
    /// parsed again in order, so the result never depends on the guess.
    #[cfg(not(target_arch = "wasm32"))]
    fn feed_parallel(&mut self, chunk: &[u8]) -> Result<()> {
        const MIN_SPLIT: usize = 1 << 20;
        let split = if chunk.len() >= MIN_SPLIT { likely_event_start(chunk, chunk.len() / 2) } else { None };
        let Some(p) = split else { return self.json.feed(chunk, &mut self.builder) };
        // Before the first byte is parsed the stream cannot tell the form yet: read it off the text.
        let bare = match self.json.position() {
            0 => document_form(chunk).unwrap_or(false),
            _ => !self.json.object_form(),
        };
        let start = self.json.position() + p as u64;
        let (first, second) = chunk.split_at(p);
        let (main_result, other) = std::thread::scope(|scope| {
            let worker = scope.spawn(move || {
                let mut part = PartReader::new(bare, start);
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
        if !matches!(self.input, Input::Plain)
            || self.json.position() != part.start
            || self.json.at_event_boundary() != Some(part.bare)
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
        self.input = Input::Plain;
        self.bytes_in += compressed_bytes;
        self.json_bytes += text.len() as u64;
        self.json.feed(text, &mut self.builder)
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

    /// Ends the input, links the model and returns it. A trace cut short is read up to its last
    /// complete event and carries a [`Truncation`] in `stats.truncation` (the faces warn, or refuse
    /// in strict mode); an event array without its closing `]` is complete, with a note.
    pub fn finish(mut self) -> Result<Trace> {
        if self.bytes_in == 0 {
            return Err(Error::new("empty input: the file has no bytes"));
        }
        let text_end = {
            let Reader { input, json, builder, json_bytes, gzip_cut, .. } = &mut self;
            if let Input::Gzip(gz) = input {
                let end = gz.finish(&mut |out| {
                    *json_bytes += out.len() as u64;
                    json.feed(out, builder)
                })?;
                if end.is_some() {
                    *gzip_cut = end;
                }
            }
            json.finish(builder).map_err(|e| match gzip_cut {
                Some(what) => Error { message: format!("truncated gzip: {what}: {}", e.message), ..e },
                None => e,
            })?
        };
        if self.json.object_form() && !self.json.saw_trace_events() {
            return Err(Error::new("not a trace: the JSON object has no \"traceEvents\" array"));
        }
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

/// Position of a `{` at or after `from` that looks like the start of an event: preceded (across
/// whitespace) by `,` and before that by `}`, searched up to 4 MiB past `from`. Only a guess:
/// [`Reader::adopt_part`] verifies it. The page calls it on a small window of the file to find
/// where each worker's range starts.
pub fn likely_event_start(text: &[u8], from: usize) -> Option<usize> {
    let limit = (from + (4 << 20)).min(text.len().saturating_sub(1));
    let mut i = from;
    while i < limit {
        let p = i + memchr::memchr(b'{', &text[i..limit])?;
        let before = |mut j: usize| -> Option<(usize, u8)> {
            while j > 0 {
                j -= 1;
                if !text[j].is_ascii_whitespace() {
                    return Some((j, text[j]));
                }
            }
            None
        };
        if let Some((c, b',')) = before(p) {
            if let Some((_, b'}')) = before(c) {
                return Some(p);
            }
        }
        i = p + 1;
    }
    None
}

/// Reads a trace file. Natively on Unix, a plain-JSON file of 1 MB or more is memory-mapped and
/// parsed in place (no copy through `read()`), in ranges parsed at once, one per core (up to
/// [`MAX_READ_THREADS`]), and pages already parsed are handed back to the kernel so resident memory
/// stays small; everything else goes through [`read_trace`]. (Mapping pays off well below 64 MB:
/// the 58 MB llama trace reads in ~70 ms mapped against ~140 ms through `read_trace`'s blocks.)
///
/// The path `-` reads standard input (`zcat trace.json.gz | traceprism summary -`).
pub fn read_path(path: &std::path::Path) -> Result<Trace> {
    read_path_on(path, default_read_threads())
}

/// Threads [`read_path`] uses: one per core, up to [`MAX_READ_THREADS`].
pub fn default_read_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).min(MAX_READ_THREADS)
}

/// Most threads [`read_path`] parses a mapped file on.
pub const MAX_READ_THREADS: usize = 8;

/// Least text a thread of [`read_path_on`] is given: below it, starting a thread and adopting its
/// part costs more than it saves.
#[cfg(unix)]
const MIN_RANGE_BYTES: usize = 4 << 20;

/// [`read_path`] on at most `threads` threads (1: in order, on this thread). The result is the
/// same for any number of threads.
pub fn read_path_on(path: &std::path::Path, threads: usize) -> Result<Trace> {
    if path.as_os_str() == "-" {
        return read_trace(std::io::stdin());
    }
    let file = std::fs::File::open(path).map_err(|e| Error::new(format!("cannot open {}: {e}", path.display())))?;
    #[cfg(unix)]
    {
        const MIN_MAP: u64 = 1 << 20;
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        if len >= MIN_MAP {
            // SAFETY: the map is read-only and private to this function; if another process
            // truncates the file while we read, the OS may raise SIGBUS — the same risk every
            // mmap-based reader accepts for speed.
            if let Ok(map) = unsafe { memmap2::Mmap::map(&file) } {
                if !is_gzip(&map) {
                    return read_mapped(&map, threads);
                }
            }
        }
    }
    #[cfg(not(unix))]
    let _ = threads;
    read_trace(file)
}

/// Parses a memory-mapped plain-JSON file on up to `threads` threads, one per range: each range
/// after the first starts at a likely event boundary near its share of the text and is parsed into
/// a [`Part`] on a thread of its own while this thread parses the first range. The parts are then
/// adopted in order, each only if this thread's stream stopped exactly at the boundary where it
/// begins and the part read without error; otherwise that range is parsed again here, in order, so
/// the result (and any error message) never depends on the guesses. Each thread hands back the
/// pages it has parsed.
#[cfg(unix)]
fn read_mapped(map: &memmap2::Mmap, threads: usize) -> Result<Trace> {
    let _ = map.advise(memmap2::Advice::Sequential);
    let text: &[u8] = map;
    let mut reader = Reader::new();
    if threads <= 1 {
        push_mapped(map, 0, text.len(), |chunk| reader.push_json(chunk, chunk.len() as u64))?;
        return reader.finish();
    }
    let bare = document_form(text).unwrap_or(false);
    let ranges = threads.min(text.len() / MIN_RANGE_BYTES).max(1);
    let mut cuts = vec![0];
    for k in 1..ranges {
        match likely_event_start(text, k * text.len() / ranges) {
            Some(at) if cuts.last().is_some_and(|&last| at > last) => cuts.push(at),
            _ => {}
        }
    }
    cuts.push(text.len());
    if cuts.len() == 2 {
        // One range (a small file, or no event start found): `push` still shares large blocks.
        push_mapped(map, 0, text.len(), |chunk| reader.push(chunk))?;
        return reader.finish();
    }
    let later = &cuts[1..];
    let (main_result, parts) = std::thread::scope(|scope| {
        let workers: Vec<_> = later
            .windows(2)
            .map(|range| {
                let (from, to) = (range[0], range[1]);
                scope.spawn(move || {
                    let mut part = PartReader::new(bare, from as u64);
                    push_mapped(map, from, to, |chunk| part.push(chunk)).map(|()| part.finish())
                })
            })
            .collect();
        let main_result = push_mapped(map, 0, later[0], |chunk| reader.push_json(chunk, chunk.len() as u64));
        (main_result, workers.into_iter().map(|w| w.join()).collect::<Vec<_>>())
    });
    main_result?;
    for (part, range) in parts.into_iter().zip(later.windows(2)) {
        let adopted = match part {
            Ok(Ok(part)) => reader.adopt_part(part),
            _ => false,
        };
        if !adopted {
            push_mapped(map, range[0], range[1], |chunk| reader.push_json(chunk, chunk.len() as u64))?;
        }
    }
    reader.finish()
}

/// Feeds `map[from..to]` to `feed` in blocks, handing each block's pages back to the kernel once
/// parsed (the parser keeps its own copy of any unparsed tail).
#[cfg(unix)]
fn push_mapped(map: &memmap2::Mmap, from: usize, to: usize, mut feed: impl FnMut(&[u8]) -> Result<()>) -> Result<()> {
    const BLOCK: usize = 16 << 20;
    const PAGE: usize = 4096;
    let mut done = from;
    // Whole pages only: the thread of the range next door may still be reading the page two
    // ranges share.
    let mut dropped = from.div_ceil(PAGE) * PAGE;
    while done < to {
        let end = (done + BLOCK).min(to);
        feed(&map[done..end])?;
        let (lo, hi) = (dropped, end / PAGE * PAGE);
        if hi > lo {
            dropped = hi;
            // SAFETY: no borrow of `map[lo..hi]` outlives `feed`; dropping those pages only makes
            // a later access (a re-parse after a wrong guess) read the file again.
            unsafe {
                let _ = map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, lo, hi - lo);
            }
        }
        done = end;
    }
    Ok(())
}

/// Reads a whole trace from any `std::io::Read` (a file, stdin) in 8 MiB chunks. Natively, gzip
/// input is inflated on a second thread while this one parses.
pub fn read_trace(mut source: impl std::io::Read + Send) -> Result<Trace> {
    let mut first = vec![0u8; 16 << 20];
    let n = read_some(&mut source, &mut first)?;
    first.truncate(n);
    #[cfg(not(target_arch = "wasm32"))]
    if is_gzip(&first) {
        return gzip_pipeline::read(first, source, Sharing::WhenBehind);
    }
    let mut reader = Reader::new();
    reader.push(&first)?;
    #[cfg(not(target_arch = "wasm32"))]
    return read_plain_threaded(reader, first, source);
    #[cfg(target_arch = "wasm32")]
    {
        let mut buf = first;
        loop {
            let n = read_some(&mut source, &mut buf)?;
            if n == 0 {
                break;
            }
            reader.push(&buf[..n])?;
        }
        reader.finish()
    }
}

/// Reads the file on a helper thread while this one (and the parallel parser) parse the previous
/// block: one block in flight, so memory stays at three blocks.
#[cfg(not(target_arch = "wasm32"))]
fn read_plain_threaded(mut reader: Reader, first: Vec<u8>, mut source: impl std::io::Read + Send) -> Result<Trace> {
    use std::sync::mpsc::sync_channel;
    let (tx, rx) = sync_channel::<Vec<u8>>(1);
    let (back_tx, back_rx) = sync_channel::<Vec<u8>>(2);
    std::thread::scope(|scope| {
        let block_len = first.len();
        // Two buffers circulate: one being parsed, one being filled.
        let _ = back_tx.send(first);
        let _ = back_tx.send(Vec::new());
        let io = scope.spawn(move || -> Result<()> {
            while let Ok(mut buf) = back_rx.recv() {
                buf.resize(block_len.max(1 << 20), 0);
                let n = read_some(&mut source, &mut buf)?;
                if n == 0 {
                    break;
                }
                buf.truncate(n);
                if tx.send(buf).is_err() {
                    break;
                }
            }
            Ok(())
        });
        let mut parse_error = None;
        for block in rx {
            if let Err(e) = reader.push(&block) {
                parse_error = Some(e);
                break;
            }
            let _ = back_tx.send(block);
        }
        drop(back_tx);
        let io_result = io.join().unwrap_or_else(|_| Err(Error::new("read thread panicked")));
        if let Some(e) = parse_error {
            return Err(e);
        }
        io_result?;
        reader.finish()
    })
}

fn read_some(source: &mut impl std::io::Read, buf: &mut [u8]) -> Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match source.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::new(format!("cannot read input: {e}"))),
        }
    }
    Ok(filled)
}
