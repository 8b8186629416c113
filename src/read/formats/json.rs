//! Chrome-trace JSON (`{"traceEvents": [...]}` or a bare `[...]`), the torch.profiler / Kineto
//! format: streamed through [`JsonStream`] into the model's builder. Its text can be read in parts:
//! ranges parsed elsewhere from a guessed event start ([`crate::read::Part`]) are adopted when the
//! guess was right.

use super::{FormatKind, FormatReader, ReadSettings, Reading};
use crate::error::{Error, Result};
use crate::ingest::{document_form, DocumentForm, Format, JsonStream, TextEnd, Truncation, OPEN_ARRAY_NOTE};
use crate::model::{Trace, TraceBuilder};
use crate::read::part::Part;

/// Chrome-trace JSON, and what no other kind tells (its reader names what the input looks like).
pub struct ChromeJson;

/// The kind registered in [`super::FORMATS`].
pub static CHROME_JSON: ChromeJson = ChromeJson;

impl FormatKind for ChromeJson {
    fn tell(&self, head: &[u8]) -> Option<Format> {
        document_form(head).map(Format::ChromeJson)
    }

    fn is(&self, format: Format) -> bool {
        matches!(format, Format::ChromeJson(_) | Format::Unknown)
    }

    fn reading(&self, _: Format) -> Reading {
        Reading::InParts
    }

    fn open(&self, format: Format, _: ReadSettings) -> Box<dyn FormatReader> {
        Box::new(JsonReader::new(format.form().unwrap_or(DocumentForm::Object)))
    }
}

/// Reads Chrome-trace JSON text into the model's builder.
pub struct JsonReader {
    /// The document's form as the first bytes told it (the stream finds it again as it parses;
    /// a block split before the first byte is parsed needs it).
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    form: DocumentForm,
    json: JsonStream,
    builder: TraceBuilder,
    json_bytes: u64,
    parallel_blocks: u64,
    /// What was wrong at the end of a gzip stream this text was inflated from.
    cut: Option<String>,
}

impl JsonReader {
    /// A reader of text of `form`.
    pub fn new(form: DocumentForm) -> Self {
        JsonReader {
            form,
            json: JsonStream::default(),
            builder: TraceBuilder::default(),
            json_bytes: 0,
            parallel_blocks: 0,
            cut: None,
        }
    }

    /// Continues with `part`, the text right after what this reader has read, parsed elsewhere
    /// from a guessed event start. True if it was kept: the part starts where this reader's text
    /// ends and this reader's stream stopped exactly at an event boundary there (only a comma and
    /// whitespace left), so the guess was right. False means nothing changed.
    pub(crate) fn adopt(&mut self, part: Part) -> bool {
        // A trace read by its process names (a JAX trace in Chrome JSON, an NPU timeline) is
        // read in order: a part never saw the process names.
        if self.builder.reads_in_order() || self.json.position() != part.start || self.json.at_event_boundary() != Some(part.form)
        {
            return false;
        }
        self.builder.absorb(part.builder, self.json.events());
        self.json.adopt(part.stream);
        self.json_bytes += part.bytes;
        self.parallel_blocks += 1;
        true
    }

    /// Parses a block on two threads: the main stream takes the text up to a likely event
    /// boundary near the middle, a continuation stream takes the rest. The second half is kept only
    /// if the main stream confirms it stopped exactly at that boundary; otherwise the rest is
    /// parsed again in order, so the result never depends on the guess.
    #[cfg(not(target_arch = "wasm32"))]
    fn feed_parallel(&mut self, chunk: &[u8]) -> Result<()> {
        use crate::ingest::likely_event_start;
        use crate::read::part::PartReader;
        const MIN_SPLIT: usize = 1 << 20;
        let split = if chunk.len() >= MIN_SPLIT { likely_event_start(chunk, chunk.len() / 2) } else { None };
        let Some(p) = split else { return self.json.feed(chunk, &mut self.builder) };
        // Before the first byte is parsed the stream cannot tell the form yet: the format told it.
        let form = match self.json.position() {
            0 => self.form,
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
        if let Ok(Ok(mut part)) = other {
            // The chunk's bytes are counted already.
            part.bytes = 0;
            if self.adopt(part) {
                return Ok(());
            }
        }
        self.json.feed(second, &mut self.builder)
    }
}

impl FormatReader for JsonReader {
    fn push(&mut self, bytes: &[u8], in_order: bool) -> Result<()> {
        self.json_bytes += bytes.len() as u64;
        #[cfg(not(target_arch = "wasm32"))]
        if !in_order {
            return self.feed_parallel(bytes);
        }
        let _ = in_order;
        self.json.feed(bytes, &mut self.builder)
    }

    fn progress(&self) -> (u64, u64) {
        (self.json_bytes, self.json.events())
    }

    fn contents(self: Box<Self>) -> Box<dyn FormatReader> {
        self
    }

    fn json(&mut self) -> Option<&mut JsonReader> {
        Some(self)
    }

    fn input_cut(&mut self, what: String) {
        self.cut = Some(what);
    }

    /// A trace cut short is read up to its last complete event and carries a [`Truncation`] in
    /// `stats.truncation` (the faces warn, or refuse in strict mode); an event array without its
    /// closing `]` is complete, with a note.
    fn finish(mut self: Box<Self>, bytes_in: u64) -> Result<Trace> {
        let text_end = {
            let JsonReader { json, builder, cut, .. } = &mut *self;
            json.finish(builder).map_err(|e| match cut {
                Some(what) => Error { message: format!("truncated gzip: {what}: {}", e.message), ..e },
                None => e,
            })?
        };
        if self.json.object_form() && !self.json.saw_trace_events() {
            return Err(Error::new("not a trace: the JSON object has no \"traceEvents\" array"));
        }
        let JsonReader { json, builder, json_bytes, parallel_blocks, cut, .. } = *self;
        let process_note = builder.process_name_note();
        let xla_json = builder.is_jax_json();
        let mut trace = builder.finish(json.object_form());
        trace.stats.bytes_in = bytes_in;
        trace.stats.json_bytes = json_bytes;
        trace.stats.parallel_blocks = parallel_blocks;
        let events_read = json.events();
        trace.stats.truncation = match (text_end, cut) {
            (TextEnd::Cut { complete, stops_at, inside }, gzip) => Some(Truncation::new(
                events_read,
                complete,
                stops_at,
                bytes_in,
                match gzip {
                    Some(what) => format!("{what}; the text ends inside {inside}"),
                    None => format!("the input ends inside {inside}"),
                },
                false,
            )),
            (_, Some(what)) => Some(Truncation::new(events_read, json_bytes, json_bytes, bytes_in, what, true)),
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
