//! The wasm face: the API the page's Web Worker drives.
//!
//! It calls exactly the functions the CLI calls: [`crate::Reader`] (push / progress / finish),
//! [`crate::Analysis::new`], [`crate::report::table`] and [`crate::table::Table::to_csv`], so the page
//! and `traceprism export` agree cell for cell. Errors come back as JS exceptions whose message is the
//! core's [`crate::Error`] text. Exports (`workbook`, `html_report`) and the comparison of two
//! analyzers ([`compare`]) are the same functions `traceprism export --xlsx`, `report --html` and
//! `compare` call.

use crate::analysis::options::Declared;
use crate::analysis::{Analysis, Options};
use crate::read::Reader;
use crate::report;
use serde::Serialize;
use wasm_bindgen::prelude::*;

mod compare;
mod memory;
mod parts;
mod ranks;
mod split;
mod warm_up;

pub use compare::{compare, Comparison};
pub use memory::{allocate_for_test, failed_allocation_bytes};
use parts::JsBytes;
pub use parts::{find_event_start, sniff, Inflater, TextPart};
pub use ranks::RankRun;
pub use split::TraceSplitter;
pub use warm_up::{warm_up, warm_up_inflate, warm_up_part, warm_up_rules};

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
    /// Capture traces whose ops the trace's graph replays take ([`Analyzer::add_capture`]).
    captures: Vec<crate::link::graphs::Capture>,
}

/// A capture trace (recorded while an engine captured its CUDA/HIP graphs), read whole, for
/// [`Analyzer::add_capture`].
#[wasm_bindgen]
pub struct CaptureTrace {
    capture: Option<crate::link::graphs::Capture>,
}

#[wasm_bindgen]
impl CaptureTrace {
    /// Reads a capture trace from its file's bytes (plain or gzip JSON). `batch_size` and `mode`
    /// are what an `execution_details.json` says of it, when the page has one.
    #[wasm_bindgen(constructor)]
    pub fn new(bytes: &[u8], label: String, batch_size: Option<f64>, mode: Option<String>) -> Result<CaptureTrace, JsValue> {
        let mut reader = Reader::new();
        reader.push(bytes).map_err(|e| js_error(format!("capture trace {label}: {e}")))?;
        let trace = crate::pipeline::finish(reader).map_err(|e| js_error(format!("capture trace {label}: {e}")))?;
        let batch = batch_size.filter(|b| *b >= 0.0).map(|b| b as u64);
        Ok(CaptureTrace { capture: Some(crate::link::graphs::Capture::new(trace, label, batch, mode)) })
    }

    /// Graphs captured in it.
    pub fn graphs(&self) -> usize {
        self.capture.as_ref().map_or(0, |c| c.graphs.len())
    }
}

pub(crate) fn js_error(message: impl std::fmt::Display) -> JsValue {
    js_sys::Error::new(&message.to_string()).into()
}

pub(crate) fn to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, JsValue> {
    // Maps become plain objects, u64 counts become numbers (all fit in 2^53 for real traces).
    let serializer = serde_wasm_bindgen::Serializer::new().serialize_maps_as_objects(true);
    value.serialize(&serializer).map_err(|e| js_error(format!("cannot convert to JS: {e}")))
}

#[wasm_bindgen]
impl Analyzer {
    /// A new analyzer. `options_json` is the JSON form of [`Options`] (missing fields take defaults;
    /// an empty string means all defaults). `sniffed` is what [`sniff`] said of the file's first
    /// bytes, handed back so they are not looked at again; without it the first bytes pushed tell.
    #[wasm_bindgen(constructor)]
    pub fn new(options_json: &str, sniffed: JsValue) -> Result<Analyzer, JsValue> {
        let options = Options::from_json(options_json).map_err(js_error)?;
        let reader = match parts::Sniffed::format(sniffed)? {
            Some(format) => Box::new(Reader::with_format(format, options.gzip_crc)),
            None => {
                let mut reader = Box::<Reader>::default();
                reader.check_gzip_crc(options.gzip_crc);
                reader
            }
        };
        Ok(Analyzer { options, state: State::Reading(reader), timeline: None, captures: Vec::new() })
    }

    /// Adds a capture trace (before [`Analyzer::finish`]): the trace's graph replays take the ops
    /// that dispatched them in it. The capture is consumed.
    pub fn add_capture(&mut self, capture: &mut CaptureTrace) -> Result<(), JsValue> {
        if !matches!(self.state, State::Reading(_)) {
            return Err(js_error("add_capture after finish"));
        }
        let c = capture.capture.take().ok_or_else(|| js_error("capture trace already added"))?;
        self.captures.push(c);
        Ok(())
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
            State::Done(a) => to_js(&crate::read::Progress {
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
        let captures = std::mem::take(&mut self.captures);
        let trace = crate::pipeline::finish_with_captures(*reader, &captures).map_err(js_error)?;
        drop(captures);
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

    /// Lane `lane`'s pyramid for the page to draw zoomed-out windows itself: `{head, cover}`
    /// (Float64Array, Float32Array; see `analysis::lod`'s `Pyramid::export`), or null.
    pub fn timeline_pyramid(&mut self, lane: u32) -> Result<JsValue, JsValue> {
        let Some((head, cover)) = self.timeline_index()?.pyramid(lane as usize) else { return Ok(JsValue::NULL) };
        let out = js_sys::Object::new();
        js_sys::Reflect::set(&out, &"head".into(), &js_sys::Float64Array::from(head.as_slice()))?;
        js_sys::Reflect::set(&out, &"cover".into(), &js_sys::Float32Array::from(cover.as_slice()))?;
        Ok(out.into())
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
        let given: crate::split::WindowGiven =
            serde_json::from_str(window_json).map_err(|e| js_error(format!("bad window: {e}")))?;
        let window = given.window().map_err(js_error)?;
        let selection = crate::split::select(self.analysis()?, &window).map_err(js_error)?;
        Ok(TraceSplitter { kernels: selection.kernels as u32, inner: Some(crate::split::Splitter::new(selection)) })
    }

    /// Kernel time rolled up by (category, phase, pass, layer): compact columns for the page's
    /// charts, so no chart needs the full per-kernel table.
    pub fn rollup(&self) -> Result<JsValue, JsValue> {
        let State::Done(analysis) = &self.state else {
            return Err(js_error("no trace analysed yet"));
        };
        to_js(&crate::report::rollup::rollup(analysis))
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
        adopt: impl FnOnce(&mut Reader, crate::read::Part) -> bool,
    ) -> Result<bool, JsValue> {
        let State::Reading(reader) = &mut self.state else { return Err(js_error(format!("{what} after finish"))) };
        let part = crate::read::Part::from_source(Box::new(JsBytes(part)));
        Ok(part.is_ok_and(|part| adopt(reader, part)))
    }

    fn timeline_index(&mut self) -> Result<&crate::analysis::lod::TimelineIndex, JsValue> {
        if self.timeline.is_none() {
            self.timeline = Some(crate::analysis::lod::TimelineIndex::new(self.analysis()?));
        }
        Ok(self.timeline.as_ref().expect("built above"))
    }

    /// The finished analysis, moved out (the analyzer is consumed).
    pub(crate) fn into_analysis(self) -> Result<Analysis, JsValue> {
        match self.state {
            State::Done(analysis) => Ok(*analysis),
            _ => Err(js_error("the analyzer has not finished a trace")),
        }
    }

    pub(crate) fn analysis(&self) -> Result<&Analysis, JsValue> {
        match &self.state {
            State::Done(analysis) => Ok(analysis),
            _ => Err(js_error("no trace analysed yet")),
        }
    }

    fn build_table(&self, name: &str) -> Result<crate::table::Table, JsValue> {
        report::table(self.analysis()?, name).ok_or_else(|| js_error(format!("no table named {name:?}")))
    }
}

/// The built-in kernel-category rules (TOML), for the page's rules view.
#[wasm_bindgen]
pub fn builtin_category_rules() -> String {
    crate::rules::categories::BUILTIN.to_string()
}

/// The options the page's settings are made from, as declared: `{analysis: [...], compare: [...]}`,
/// each a list of `{field, keyword, flags, kind, choices, default, doc}` (JSON text).
#[wasm_bindgen]
pub fn declared_options() -> String {
    serde_json::json!({
        "analysis": Options::declarations_json(),
        "compare": crate::analysis::compare::CompareOptions::declarations_json(),
    })
    .to_string()
}

/// What the page's SQLite module is asked of an Nsight Systems export (text: one line per table,
/// its name then its columns), so that the core reads its answer ([`crate::ingest::nsys::WANTED`]).
#[wasm_bindgen]
pub fn nsys_requests() -> String {
    traceprism_sqlite::Request::text_of(&crate::ingest::nsys::requests())
}

/// The overview the page shows first: the same summary `traceprism summary --json` prints.
pub(crate) fn summary_of(a: &Analysis) -> impl Serialize {
    crate::report::summary::summary(a)
}
