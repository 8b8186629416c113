//! The wasm face: the API the page's Web Worker drives.
//!
//! It calls exactly the functions the CLI calls: [`crate::Reader`] (push / progress / finish),
//! [`crate::Analysis::new`], [`crate::report::table`] and [`crate::table::Table::to_csv`], so the page
//! and `traceprism export` agree cell for cell. Errors come back as JS exceptions whose message is the
//! core's [`crate::Error`] text. Exports (`workbook`, `html_report`) and the comparison of two
//! analyzers ([`compare`]) are the same functions `traceprism export --xlsx`, `report --html` and
//! `compare` call.

use crate::analysis::compare::CompareOptions;
use crate::analysis::{Analysis, Options};
use crate::ingest::Reader;
use crate::report;
use serde::Serialize;
use wasm_bindgen::prelude::*;

/// Where the analyzer is in its life: reading chunks, or done with an analysis.
enum State {
    Reading(Box<Reader>),
    Done(Box<Analysis>),
    /// After an error or while `finish` runs: nothing more can be done.
    Spent,
}

/// Streaming trace analyzer: `push` chunks, `finish`, then ask for tables.
#[wasm_bindgen]
pub struct Analyzer {
    options: Options,
    state: State,
    /// The timeline's sorted lanes, built on the first timeline request.
    timeline: Option<crate::analysis::lod::TimelineIndex>,
}

fn js_error(message: impl std::fmt::Display) -> JsValue {
    js_sys::Error::new(&message.to_string()).into()
}

fn to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, JsValue> {
    // Maps become plain objects, u64 counts become numbers (all fit in 2^53 for real traces).
    let serializer = serde_wasm_bindgen::Serializer::new().serialize_maps_as_objects(true);
    value.serialize(&serializer).map_err(|e| js_error(format!("cannot convert to JS: {e}")))
}

#[wasm_bindgen]
impl Analyzer {
    /// A new analyzer. `options_json` is the JSON form of [`Options`] (missing fields take defaults;
    /// an empty string means all defaults).
    #[wasm_bindgen(constructor)]
    pub fn new(options_json: &str) -> Result<Analyzer, JsValue> {
        let options: Options = if options_json.trim().is_empty() {
            Options::default()
        } else {
            serde_json::from_str(options_json).map_err(|e| js_error(format!("bad options: {e}")))?
        };
        Ok(Analyzer { options, state: State::Reading(Box::default()), timeline: None })
    }

    /// Feeds the next chunk of the file (gzip or plain JSON, any size).
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), JsValue> {
        self.feed("push", |reader| reader.push(chunk))
    }

    /// Continues with a part of the text parsed by a [`TextPart`] in another worker (its bytes
    /// from [`TextPart::finish`]), the range right after what this analyzer has read. True if it
    /// was kept; false if the range's guessed start was wrong (or the bytes do not decode): then
    /// push that range's text here, in order. The part's rows are read straight from `part`, piece
    /// by piece, into this analyzer's columns: the array is never copied whole into wasm memory.
    pub fn adopt_part(&mut self, part: js_sys::Uint8Array) -> Result<bool, JsValue> {
        self.adopt("adopt_part", part, |reader, part| reader.adopt_part(part))
    }

    /// Feeds JSON text already inflated elsewhere (an [`Inflater`] in a helper worker), in order,
    /// counting `compressed_bytes` of the file for it: the same reader path and byte counts as
    /// [`Analyzer::push`] of the gzip file itself, so the model and every export are the same.
    pub fn push_inflated(&mut self, text: &[u8], compressed_bytes: f64) -> Result<(), JsValue> {
        self.feed("push", |reader| reader.push_json(text, compressed_bytes as u64))
    }

    /// [`Analyzer::adopt_part`] for a part of inflated text (parsed by the inflating helper from
    /// its own block): no compressed bytes are counted for it ([`Analyzer::push_inflated`] of the
    /// text before it counted the block's). False: push that text with `push_inflated` instead.
    pub fn adopt_inflated_part(&mut self, part: js_sys::Uint8Array) -> Result<bool, JsValue> {
        self.adopt("adopt_inflated_part", part, |reader, part| reader.adopt_part_counted(part, 0))
    }

    /// Says that the gzip stream whose text came through [`Analyzer::push_inflated`] did not end
    /// cleanly (`what`: [`Inflater::finish`]'s answer): the trace is then read as cut short.
    pub fn input_cut(&mut self, what: String) {
        if let State::Reading(reader) = &mut self.state {
            reader.input_cut(what);
        }
    }

    /// `{bytes_in, json_bytes, events}` so far.
    pub fn progress(&self) -> Result<JsValue, JsValue> {
        match &self.state {
            State::Reading(reader) => to_js(&reader.progress()),
            State::Done(a) => to_js(&crate::ingest::Progress {
                bytes_in: a.trace.stats.bytes_in,
                json_bytes: a.trace.stats.json_bytes,
                events: a.trace.stats.events,
            }),
            State::Spent => Err(js_error("analyzer is spent")),
        }
    }

    /// Ends the input, links and analyses the trace; returns the summary object.
    pub fn finish(&mut self) -> Result<JsValue, JsValue> {
        let reader = match std::mem::replace(&mut self.state, State::Spent) {
            State::Reading(reader) => reader,
            State::Done(a) => {
                self.state = State::Done(a);
                return Err(js_error("finish called twice"));
            }
            State::Spent => return Err(js_error("analyzer is spent")),
        };
        let trace = reader.finish().map_err(js_error)?;
        let analysis = Analysis::new(trace, self.options.clone()).map_err(js_error)?;
        let summary = summary_of(&analysis);
        self.state = State::Done(Box::new(analysis));
        to_js(&summary)
    }

    /// The view that shows each table: `{name: view}` (views as the page names them).
    pub fn table_views(&self) -> Result<JsValue, JsValue> {
        let map: std::collections::BTreeMap<&str, report::View> = report::TABLES.iter().map(|t| (t.name, t.view)).collect();
        to_js(&map)
    }

    /// Names of every table, in display/export order.
    pub fn table_names(&self) -> Vec<String> {
        report::table_names().into_iter().map(String::from).collect()
    }

    /// One table as `{name, columns, rows}`; cells are numbers (times in µs), strings or null.
    pub fn table(&self, name: &str) -> Result<JsValue, JsValue> {
        let table = self.build_table(name)?;
        to_js(&table)
    }

    /// One table as RFC 4180 CSV text, byte for byte what `traceprism export` writes.
    /// Long tables are written row by row, so `kernels` never exists as a table here, only as text.
    pub fn csv(&self, name: &str) -> Result<String, JsValue> {
        let mut text = Vec::new();
        match report::write_csv(self.analysis()?, name, &mut text) {
            Ok(Some(_)) => Ok(String::from_utf8(text).expect("CSV of UTF-8 cells is UTF-8")),
            Ok(None) => Err(js_error(format!("no table named {name:?}"))),
            Err(e) => Err(js_error(e)),
        }
    }

    /// The timeline's lanes, families, time span and bands (passes, layers, collectives): see
    /// [`crate::analysis::lod::TimelineMeta`]. Builds the timeline index on first use.
    pub fn timeline_meta(&mut self) -> Result<JsValue, JsValue> {
        to_js(&self.timeline_index()?.meta)
    }

    /// The window `[from_ns, to_ns)` (ns since the time origin) in `width` pixel columns: per lane
    /// `width` family indexes (255: nothing), then per lane `width` busy fractions (0-255).
    pub fn timeline_buckets(&mut self, from_ns: f64, to_ns: f64, width: u32) -> Result<Vec<u8>, JsValue> {
        Ok(self.timeline_index()?.buckets(from_ns, to_ns, width as usize))
    }

    /// The row drawn in `lane` at `at_ns` (or the nearest within `slack_ns`) with what the tooltip
    /// shows ([`crate::analysis::lod::Details`]), or null.
    pub fn timeline_hit(&mut self, lane: u32, at_ns: f64, slack_ns: f64) -> Result<JsValue, JsValue> {
        let hit = self.timeline_index()?.hit(lane as usize, at_ns, slack_ns);
        match hit {
            Some((kind, row)) => to_js(&crate::analysis::lod::details(self.analysis()?, kind, row)),
            None => Ok(JsValue::NULL),
        }
    }

    /// Categorises the trace again with `toml` as the user's category rules (same format as the
    /// CLI's `--rules FILE`; empty: the built-in rules alone) and runs every analysis again on the
    /// model it holds, without reading the file again. Returns the new summary. A bad rule is an
    /// error naming the rule (or the TOML line) and leaves the analysis as it was.
    pub fn set_category_rules(&mut self, toml: &str) -> Result<JsValue, JsValue> {
        let rules = (!toml.trim().is_empty()).then(|| toml.to_string());
        crate::rules::categories::RuleSet::load(rules.as_deref()).map_err(js_error)?;
        let State::Done(analysis) = std::mem::replace(&mut self.state, State::Spent) else {
            return Err(js_error("no trace analysed yet"));
        };
        let mut options = analysis.options.clone();
        options.category_rules = rules;
        // The rules were checked above: what could still fail would fail for the first analysis too.
        let analysis = Analysis::new(analysis.into_trace(), options.clone()).map_err(js_error)?;
        self.options = options;
        self.timeline = None;
        let summary = summary_of(&analysis);
        self.state = State::Done(Box::new(analysis));
        to_js(&summary)
    }

    /// A [`TraceSplitter`] for one window of this trace: `window_json` is `{"pass": N}`,
    /// `{"phase": "prefill"|"decode"|"mixed"}` or `{"from_us": A, "to_us": B}` (µs since the
    /// trace's start). Push the file's bytes into it again, then `finish` gives the `.json.gz`.
    pub fn splitter(&self, window_json: &str) -> Result<TraceSplitter, JsValue> {
        #[derive(serde::Deserialize)]
        struct W {
            pass: Option<u32>,
            phase: Option<String>,
            from_us: Option<f64>,
            to_us: Option<f64>,
        }
        let w: W = serde_json::from_str(window_json).map_err(|e| js_error(format!("bad window: {e}")))?;
        let window = match (w.pass, w.phase, w.from_us, w.to_us) {
            (Some(n), None, None, None) => crate::split::Window::Pass(n),
            (None, Some(p), None, None) => crate::split::Window::Phase(
                crate::analysis::phases::Phase::parse(&p).ok_or_else(|| js_error(format!("unknown phase {p}")))?,
            ),
            (None, None, Some(from_us), Some(to_us)) => crate::split::Window::Time { from_us, to_us },
            _ => return Err(js_error("a window is {pass}, {phase} or {from_us, to_us}")),
        };
        let selection = crate::split::select(self.analysis()?, &window).map_err(js_error)?;
        Ok(TraceSplitter { kernels: selection.kernels as u32, inner: Some(crate::split::Splitter::new(selection)) })
    }

    /// Kernel time rolled up by (category, phase, pass, layer): compact columns for the page's
    /// charts, so no chart needs the full per-kernel table.
    pub fn rollup(&self) -> Result<JsValue, JsValue> {
        let State::Done(analysis) = &self.state else {
            return Err(js_error("no trace analysed yet"));
        };
        to_js(&rollup::rollup(analysis))
    }

    /// Every table as one `.xlsx` workbook, byte for byte what `traceprism export --xlsx` writes.
    pub fn workbook(&self) -> Result<Vec<u8>, JsValue> {
        Ok(report::workbook(self.analysis()?))
    }

    /// The standalone HTML report, byte for byte what `traceprism report --html` writes.
    pub fn html_report(&self) -> Result<String, JsValue> {
        Ok(report::html_report(self.analysis()?))
    }

    /// Bytes of wasm linear memory in use (the high-water mark: wasm memory never shrinks).
    pub fn memory_bytes() -> f64 {
        (core::arch::wasm32::memory_size(0) * 65536) as f64
    }
}

impl Analyzer {
    /// Runs `step` (named `what` in the error after finish) on the reader; an error leaves the
    /// analyzer spent.
    fn feed(&mut self, what: &str, step: impl FnOnce(&mut Reader) -> crate::error::Result<()>) -> Result<(), JsValue> {
        let State::Reading(reader) = &mut self.state else { return Err(js_error(format!("{what} after finish"))) };
        step(reader).map_err(|e| {
            self.state = State::Spent;
            js_error(e)
        })
    }

    /// Decodes a part's bytes in place and lets `adopt` keep it (false if they do not decode).
    fn adopt(
        &mut self,
        what: &str,
        part: js_sys::Uint8Array,
        adopt: impl FnOnce(&mut Reader, crate::ingest::Part) -> bool,
    ) -> Result<bool, JsValue> {
        let State::Reading(reader) = &mut self.state else { return Err(js_error(format!("{what} after finish"))) };
        let part = crate::ingest::Part::from_source(Box::new(JsBytes(part)));
        Ok(part.is_ok_and(|part| adopt(reader, part)))
    }

    fn timeline_index(&mut self) -> Result<&crate::analysis::lod::TimelineIndex, JsValue> {
        if self.timeline.is_none() {
            self.timeline = Some(crate::analysis::lod::TimelineIndex::new(self.analysis()?));
        }
        Ok(self.timeline.as_ref().expect("built above"))
    }

    fn analysis(&self) -> Result<&Analysis, JsValue> {
        match &self.state {
            State::Done(analysis) => Ok(analysis),
            _ => Err(js_error("no trace analysed yet")),
        }
    }

    fn build_table(&self, name: &str) -> Result<crate::table::Table, JsValue> {
        report::table(self.analysis()?, name).ok_or_else(|| js_error(format!("no table named {name:?}")))
    }
}

/// The comparison tables of two analysed traces (A first), as `traceprism compare A B` builds them.
#[wasm_bindgen]
pub struct Comparison {
    tables: Vec<crate::table::Table>,
}

/// Compares two finished analyzers. `options_json` is the JSON form of
/// [`crate::analysis::compare::CompareOptions`] (missing fields take defaults; labels default to
/// each side's GPU name).
#[wasm_bindgen]
pub fn compare(a: &Analyzer, b: &Analyzer, options_json: &str) -> Result<Comparison, JsValue> {
    let opts: CompareOptions = if options_json.trim().is_empty() {
        CompareOptions::default()
    } else {
        serde_json::from_str(options_json).map_err(|e| js_error(format!("bad compare options: {e}")))?
    };
    opts.validate().map_err(js_error)?;
    let tables = report::compare::compare_tables(a.analysis()?, b.analysis()?, &opts).map_err(js_error)?;
    Ok(Comparison { tables })
}

#[wasm_bindgen]
impl Comparison {
    /// Names of the comparison tables, in order.
    pub fn table_names(&self) -> Vec<String> {
        self.tables.iter().map(|t| t.name.clone()).collect()
    }

    /// One comparison table as `{name, columns, rows}`.
    pub fn table(&self, name: &str) -> Result<JsValue, JsValue> {
        to_js(self.find(name)?)
    }

    /// One comparison table as CSV text, byte for byte what `traceprism compare --out` writes.
    pub fn csv(&self, name: &str) -> Result<String, JsValue> {
        Ok(self.find(name)?.to_csv())
    }
}

impl Comparison {
    fn find(&self, name: &str) -> Result<&crate::table::Table, JsValue> {
        self.tables.iter().find(|t| t.name == name).ok_or_else(|| js_error(format!("no comparison table named {name:?}")))
    }
}

/// One byte range of a plain-JSON trace, parsed by a helper worker from a guessed event start
/// ([`find_event_start`]), for the main worker's [`Analyzer::adopt_part`].
#[wasm_bindgen]
pub struct TextPart {
    reader: Option<crate::ingest::PartReader>,
}

#[wasm_bindgen]
impl TextPart {
    /// A part starting at byte `start` of the file; `bare` is the document's form
    /// ([`document_form`] is `"array"`).
    #[wasm_bindgen(constructor)]
    pub fn new(bare: bool, start: f64) -> TextPart {
        TextPart { reader: Some(crate::ingest::PartReader::new(bare, start as u64)) }
    }

    /// Feeds the next piece of the range. An error means the guess or the text is wrong: the
    /// main worker then parses the range itself (and reports any real error with its offset).
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), JsValue> {
        let reader = self.reader.as_mut().ok_or_else(|| js_error("push after finish"))?;
        reader.push(chunk).map_err(|e| {
            self.reader = None;
            js_error(e)
        })
    }

    /// Events read so far.
    pub fn events(&self) -> f64 {
        self.reader.as_ref().map_or(0.0, |r| r.events() as f64)
    }

    /// Ends the range; returns the part as bytes (to transfer to the main worker), written
    /// straight into a JS array of the exact size: no copy of the whole part is made in wasm memory.
    pub fn finish(&mut self) -> Result<js_sys::Uint8Array, JsValue> {
        let reader = self.reader.take().ok_or_else(|| js_error("finish called twice"))?;
        let part = reader.finish();
        let len = u32::try_from(part.encoded_len()).map_err(|_| js_error("part too large to move"))?;
        let mut sink = JsSink { out: js_sys::Uint8Array::new_with_length(len), at: 0 };
        part.write_to(&mut sink);
        Ok(sink.out)
    }
}

/// Inflates a gzip file in a helper worker for an [`Analyzer::push_inflated`] in another: the
/// decompressed text is inflated straight into blocks of a fixed size, each handed out once full
/// (with the compressed bytes read since the previous one), so the text never piles up in wasm memory.
#[wasm_bindgen]
pub struct Inflater {
    decoder: crate::ingest::GzipDecoder,
    blocks: Blocks,
    /// Compressed bytes pushed since the last block was taken.
    compressed: u64,
}

/// The block being inflated into, and the full ones not yet taken.
struct Blocks {
    /// `block_bytes` long, the first `filled` bytes inflated text.
    block: Vec<u8>,
    filled: usize,
    block_bytes: usize,
    full: std::collections::VecDeque<Vec<u8>>,
    /// A taken block's buffer, for the next block (fresh pages cost page faults).
    spare: Option<Vec<u8>>,
}

impl crate::ingest::Output for Blocks {
    fn room(&mut self) -> &mut [u8] {
        &mut self.block[self.filled..]
    }

    fn wrote(&mut self, n: usize) -> crate::error::Result<()> {
        self.filled += n;
        if self.filled == self.block_bytes {
            let next = self.spare.take().unwrap_or_else(|| vec![0; self.block_bytes]);
            self.full.push_back(std::mem::replace(&mut self.block, next));
            self.filled = 0;
        }
        Ok(())
    }
}

impl Blocks {
    /// Copies the next full block out with `copy` and keeps its buffer for reuse.
    fn pop<T>(&mut self, copy: impl FnOnce(&[u8]) -> T) -> Option<T> {
        let block = self.full.pop_front()?;
        let out = copy(&block);
        self.spare = Some(block);
        Some(out)
    }
}

#[wasm_bindgen]
impl Inflater {
    /// An inflater handing out blocks of `block_bytes` of text (at least 64 KiB).
    #[wasm_bindgen(constructor)]
    pub fn new(block_bytes: u32) -> Inflater {
        let block_bytes = (block_bytes as usize).max(64 << 10);
        let blocks = Blocks { block: vec![0; block_bytes], filled: 0, block_bytes, full: Default::default(), spare: None };
        Inflater { decoder: crate::ingest::GzipDecoder::default(), blocks, compressed: 0 }
    }

    /// Inflates the next compressed bytes of the file. An error is the core's own message
    /// (corrupt data, with the decompressed offset); the text inflated before it stays available
    /// through [`Inflater::finish_block`].
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), JsValue> {
        self.compressed += chunk.len() as u64;
        self.decoder.push_to(chunk, &mut self.blocks).map_err(js_error)
    }

    /// Ends the compressed stream: `undefined` if it ended cleanly, else what is wrong at its end
    /// (cut short, trailer missing or wrong), for [`Analyzer::input_cut`]. The text inflated
    /// before the cut stays available as usual.
    pub fn finish(&mut self) -> Result<Option<String>, JsValue> {
        self.decoder.finish_to(&mut self.blocks).map_err(js_error)
    }

    /// True if a full block is ready for [`Inflater::take`].
    pub fn ready(&self) -> bool {
        !self.blocks.full.is_empty()
    }

    /// The next full block (empty if none is ready), copied out to a JS array.
    pub fn take(&mut self) -> js_sys::Uint8Array {
        self.blocks.pop(|b| js_sys::Uint8Array::from(b)).unwrap_or_else(|| js_sys::Uint8Array::new_with_length(0))
    }

    /// Copies the next full block into `out` (a buffer handed back for reuse: a fresh JS buffer per
    /// block costs more than the copy) and returns its length; 0 if none is ready, -1 if `out` is
    /// too small (the block stays for [`Inflater::take`]).
    pub fn take_into(&mut self, out: &js_sys::Uint8Array) -> i32 {
        let Some(len) = self.blocks.full.front().map(Vec::len) else { return 0 };
        if (out.length() as usize) < len {
            return -1;
        }
        self.blocks.pop(|b| out.subarray(0, len as u32).copy_from(b));
        len as i32
    }

    /// The text inflated but not yet in a full block (after [`Inflater::finish`] or an error).
    pub fn finish_block(&mut self) -> js_sys::Uint8Array {
        let out = js_sys::Uint8Array::from(&self.blocks.block[..self.blocks.filled]);
        self.blocks.filled = 0;
        out
    }

    /// Compressed bytes pushed since the last call, to send with the block just taken.
    pub fn take_compressed(&mut self) -> f64 {
        std::mem::take(&mut self.compressed) as f64
    }
}

/// The built-in kernel-category rules (TOML), for the page's rules view.
#[wasm_bindgen]
pub fn builtin_category_rules() -> String {
    crate::rules::categories::BUILTIN.to_string()
}

/// Writes one window of a trace as a `.json.gz` ([`crate::split`]), from the file's bytes pushed
/// again.
#[wasm_bindgen]
pub struct TraceSplitter {
    inner: Option<crate::split::Splitter>,
    kernels: u32,
}

#[wasm_bindgen]
impl TraceSplitter {
    /// Feeds the next bytes of the trace file.
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), JsValue> {
        self.inner.as_mut().ok_or_else(|| js_error("splitter finished"))?.push(chunk).map_err(js_error)
    }
    /// The `.json.gz` of the window.
    pub fn finish(&mut self) -> Result<Vec<u8>, JsValue> {
        self.inner.take().ok_or_else(|| js_error("splitter finished"))?.finish().map_err(js_error)
    }
    /// Kernels in the window (what the kernels table lists for it).
    pub fn kernels(&self) -> u32 {
        self.kernels
    }
}

/// Writes a part's bytes into a JS array, piece by piece.
struct JsSink {
    out: js_sys::Uint8Array,
    at: u32,
}

impl crate::model::wire::WireSink for JsSink {
    fn write(&mut self, bytes: &[u8]) {
        let end = self.at.saturating_add(bytes.len() as u32);
        // The array was sized by `Part::encoded_len`, so this always holds.
        if end <= self.out.length() {
            self.out.subarray(self.at, end).copy_from(bytes);
        }
        self.at = end;
    }
}

/// A part's bytes in the JS array they were moved in.
struct JsBytes(js_sys::Uint8Array);

impl crate::model::wire::ByteSource for JsBytes {
    fn len(&self) -> usize {
        self.0.length() as usize
    }
    fn read(&self, at: usize, dst: &mut [u8]) {
        let end = at + dst.len();
        // Callers keep inside `len()`; `copy_to` would panic on a short range.
        if end <= self.len() {
            self.0.subarray(at as u32, end as u32).copy_to(dst);
        }
    }
}

/// Where an event likely starts in `window` at or after index `from` (see
/// [`crate::ingest::likely_event_start`]): the index into `window`, or -1 if none was found.
#[wasm_bindgen]
pub fn find_event_start(window: &[u8], from: u32) -> i32 {
    crate::ingest::likely_event_start(window, from as usize).map_or(-1, |p| p as i32)
}

/// The form of a trace from its first bytes: `"gzip"`, `"array"` (`[...]`), `"object"`
/// (`{"traceEvents": ...}`) or `"unknown"`.
#[wasm_bindgen]
pub fn document_form(head: &[u8]) -> String {
    if crate::ingest::is_gzip(head) {
        return "gzip".into();
    }
    match crate::ingest::document_form(head) {
        Some(true) => "array",
        Some(false) => "object",
        None => "unknown",
    }
    .into()
}

/// Warms up the parallel parse path ([`crate::warm_up::warm_up_part`]). Helper workers call it
/// for their parse path; the main worker for the adopting side.
#[wasm_bindgen]
pub fn warm_up_part(decode_steps: u32) -> Result<(), JsValue> {
    crate::warm_up::warm_up_part(decode_steps.max(1) as usize).map_err(js_error)
}

/// Warms up inflating for a helper worker: the synthetic trace of `decode_steps` decode steps
/// ([`crate::warm_up::synthetic_trace`]) as a gzip member, inflated by an [`Inflater`] in small
/// pieces (many calls of the hot functions, so the engine's optimising tier picks them up).
#[wasm_bindgen]
pub fn warm_up_inflate(decode_steps: u32) -> Result<(), JsValue> {
    let member = crate::warm_up::gzip(crate::warm_up::synthetic_trace(decode_steps.max(1) as usize).as_bytes());
    let mut inflater = Inflater::new(64 << 10);
    for piece in member.chunks(4 << 10) {
        inflater.push(piece)?;
        while inflater.ready() {
            inflater.take();
        }
    }
    match inflater.finish()? {
        None => Ok(()),
        Some(what) => Err(js_error(what)),
    }
}

/// Runs the whole pipeline once on a synthetic trace of `decode_steps` decode steps
/// ([`crate::warm_up::warm_up_with`]; 0 means [`crate::warm_up::WARM_UP_DECODE_STEPS`]) and
/// converts its summary, rollup and every table to JS values, so the engine has compiled all of it
/// before the user's file arrives. The worker calls this right after instantiating the module, then
/// a few more times (while no file has arrived) so the hot functions reach the optimising tier.
#[wasm_bindgen]
pub fn warm_up(decode_steps: u32) -> Result<(), JsValue> {
    let steps = if decode_steps == 0 { crate::warm_up::WARM_UP_DECODE_STEPS } else { decode_steps as usize };
    let analysis = crate::warm_up::warm_up_with(steps).map_err(js_error)?;
    to_js(&summary_of(&analysis))?;
    to_js(&rollup::rollup(&analysis))?;
    for def in report::TABLES {
        to_js(&(def.build)(&analysis))?;
    }
    Ok(())
}

/// Compiles the built-in rule sets ([`crate::warm_up::compile_rules`]): the first, cheapest step of
/// the worker's warm-up.
#[wasm_bindgen]
pub fn warm_up_rules() -> Result<(), JsValue> {
    crate::warm_up::compile_rules().map_err(js_error)
}

/// The overview the page shows first: the same summary `traceprism summary --json` prints.
fn summary_of(a: &Analysis) -> impl Serialize {
    crate::summary::summary(a)
}

/// Kernel time grouped by category, phase, pass and layer.
mod rollup {
    use crate::analysis::Analysis;
    use crate::model::NONE;
    use serde::Serialize;
    use std::collections::HashMap;

    /// Column-wise groups; `category` indexes `categories`, `pass`/`layer` are -1 when unassigned.
    #[derive(Serialize, Default)]
    pub struct Rollup {
        pub categories: Vec<String>,
        pub families: Vec<String>,
        pub category: Vec<u32>,
        pub phase: Vec<Option<&'static str>>,
        pub pass: Vec<i64>,
        pub layer: Vec<i64>,
        pub count: Vec<u64>,
        /// Summed kernel duration, µs.
        pub dur_us: Vec<f64>,
    }

    /// (category id, phase, pass, layer).
    type GroupKey = (u32, Option<&'static str>, u32, u32);

    /// Groups every kernel row.
    pub fn rollup(a: &Analysis) -> Rollup {
        let mut out = Rollup::default();
        let mut cat_ids: HashMap<&str, u32> = HashMap::new();
        let mut groups: HashMap<GroupKey, (u64, i64)> = HashMap::new();
        for i in a.trace.kernel_rows() {
            let name = a.categories.name(i);
            let cat = *cat_ids.entry(name).or_insert_with(|| {
                out.categories.push(name.to_string());
                out.families.push(a.categories.family(i).to_string());
                (out.categories.len() - 1) as u32
            });
            let phase = a.phases.phase_of_row.get(i).copied().flatten().map(|p| p.as_str());
            let pass = a.phases.pass_of_row.get(i).copied().unwrap_or(NONE);
            let layer = a.layers.layer_of_row.get(i).copied().unwrap_or(NONE);
            let g = groups.entry((cat, phase, pass, layer)).or_insert((0, 0));
            g.0 += 1;
            g.1 += a.trace.gpu.dur[i];
        }
        let mut keys: Vec<_> = groups.into_iter().collect();
        keys.sort_unstable_by_key(|((c, ph, p, l), _)| (*p, *l, *c, *ph));
        let id = |v: u32| if v == NONE { -1 } else { v as i64 };
        for ((cat, phase, pass, layer), (count, dur)) in keys {
            out.category.push(cat);
            out.phase.push(phase);
            out.pass.push(id(pass));
            out.layer.push(id(layer));
            out.count.push(count);
            out.dur_us.push(dur as f64 / 1000.0);
        }
        out
    }
}
