//! Finds the events of a Trace Event Format document as its text arrives in pieces.
//!
//! Accepts the object form `{"traceEvents": [...], "deviceProperties": ..., ...}` and the bare
//! array form `[...]`. Only the unparsed tail of the text is buffered; each complete event is
//! handed to an [`EventSink`] and forgotten.

use super::event::{parse_event, EventKeys};
use super::scan::{self, skip_ws, Step, Stop};
use crate::error::{Error, Result};
use crate::ingest::format::DocumentForm;
use crate::ingest::interchange::{EventSink, RawEvent};
use crate::support::codec::{WireReader, WireWriter};

/// The document form a stream in the event array of a bare array (or not) reads.
fn form_of(bare: bool) -> DocumentForm {
    if bare {
        DocumentForm::BareArray
    } else {
        DocumentForm::Object
    }
}

/// How a document ended (see [`JsonStream::finish`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextEnd {
    /// The document is whole.
    Complete,
    /// The array form without its closing `]` (with or without a trailing comma): the Trace Event
    /// Format allows it so that a writer that crashed still leaves a readable trace.
    OpenArray,
    /// The text stops before the document's end.
    Cut {
        /// Bytes of text up to the end of the last complete event (or top-level value).
        complete: u64,
        /// Bytes of text in all: where the input stops.
        stops_at: u64,
        /// What the input ends inside, for messages ("an event", "traceEvents", ...).
        inside: &'static str,
    },
}

/// True if `tail` holds nothing but whitespace and at most one comma.
fn only_a_comma_left(tail: &[u8]) -> bool {
    let mut rest = tail.iter().filter(|b| !b.is_ascii_whitespace());
    matches!((rest.next(), rest.next()), (None, _) | (Some(b','), None))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Start,
    ObjectKey { first: bool },
    Events { first: bool, bare: bool },
    Done,
}

/// Top-level values larger than this (other than `traceEvents`) are skipped, not decoded.
const MAX_HEADER_VALUE: usize = 64 << 20;

/// An unparsed tail at least this long (a value cut by the end of the text so far) is read again
/// only once the text after its start has doubled: see [`JsonStream::retry_len`].
const LONG_TAIL: usize = 1 << 20;

/// The incremental document reader.
#[derive(Debug)]
pub struct JsonStream {
    buf: Vec<u8>,
    /// Absolute offset of `buf[0]` in the whole text.
    base: u64,
    state: State,
    events: u64,
    saw_trace_events: bool,
    object_form: bool,
    /// Key orders learned so far (they only speed reading up; never part of the state).
    keys: EventKeys,
    /// The unparsed tail is not read again before it is this long (0: at once). Each attempt
    /// scans the cut value from its start, so a value spanning many pieces of text (a huge
    /// top-level key, one enormous event, a big JSON file that is no trace) would be scanned once
    /// per piece, quadratic in its length; retrying only when a long tail has doubled keeps the
    /// total scan within twice its length. Only a speed hint, never part of the state:
    /// [`JsonStream::finish`] always reads what is left.
    retry_len: usize,
    /// Bytes of unparsed tail read again so far (what `retry_len` keeps linear).
    reread: u64,
    /// Offset of this stream's first byte in the whole text (a part's range start), so that the
    /// byte offsets it reports to its sink are the file's. Not part of the encoded state.
    origin: u64,
    /// Set by [`JsonStream::finish`]: no more text comes, so an event that cannot be repaired with
    /// the text at hand is an error, not a wait for more.
    ending: bool,
}

impl Default for JsonStream {
    fn default() -> Self {
        JsonStream {
            buf: Vec::new(),
            base: 0,
            state: State::Start,
            events: 0,
            saw_trace_events: false,
            object_form: false,
            keys: EventKeys::default(),
            retry_len: 0,
            reread: 0,
            origin: 0,
            ending: false,
        }
    }
}

impl JsonStream {
    /// A stream that starts at an element inside the event array, at byte `origin` of the whole
    /// text: the parallel reader parses the second half of a block with one while the main stream
    /// parses the first half.
    pub fn continuation(form: DocumentForm, origin: u64) -> Self {
        let bare = form == DocumentForm::BareArray;
        JsonStream {
            state: State::Events { first: true, bare },
            object_form: !bare,
            saw_trace_events: !bare,
            origin,
            ..Default::default()
        }
    }

    /// `Some(form)` if the stream stopped exactly between two events (only a comma and whitespace
    /// are left unparsed), so that a [`JsonStream::continuation`] can take over after them.
    pub fn at_event_boundary(&self) -> Option<DocumentForm> {
        match self.state {
            State::Events { first: false, bare } => {
                let mut rest = self.buf.iter().filter(|b| !b.is_ascii_whitespace());
                (rest.next() == Some(&b',') && rest.next().is_none()).then_some(form_of(bare))
            }
            _ => None,
        }
    }

    /// Continues as `next`, a continuation that parsed the text right after this stream's.
    pub fn adopt(&mut self, next: JsonStream) {
        let start = self.base + self.buf.len() as u64;
        self.buf = next.buf;
        self.base = start + next.base;
        self.events += next.events;
        self.state = next.state;
        self.retry_len = next.retry_len;
    }

    /// Writes the stream's state (position, counters, unparsed tail) for [`crate::ingest::Part`].
    /// Bytes of text held back unparsed (an event cut by the end of the text so far).
    pub(crate) fn tail_len(&self) -> usize {
        self.buf.len()
    }

    pub(crate) fn encode(&self, w: &mut WireWriter) {
        let (tag, first, bare) = match self.state {
            State::Start => (0u8, false, false),
            State::ObjectKey { first } => (1, first, false),
            State::Events { first, bare } => (2, first, bare),
            State::Done => (3, false, false),
        };
        w.put(tag);
        w.flag(first);
        w.flag(bare);
        w.put(self.base);
        w.put(self.events);
        w.flag(self.saw_trace_events);
        w.flag(self.object_form);
        w.put(self.buf.len() as u64);
        w.out.extend_from_slice(&self.buf);
    }

    /// Reads a state written by [`JsonStream::encode`].
    pub(crate) fn decode(r: &mut WireReader<'_>) -> Result<JsonStream> {
        let (tag, first, bare) = (r.get::<u8>()?, r.flag()?, r.flag()?);
        let state = match tag {
            0 => State::Start,
            1 => State::ObjectKey { first },
            2 => State::Events { first, bare },
            3 => State::Done,
            _ => return Err(Error::new("malformed part bytes: bad stream state")),
        };
        let base = r.get()?;
        let events = r.get()?;
        let saw_trace_events = r.flag()?;
        let object_form = r.flag()?;
        let n = r.count(1)?;
        let buf = r.take(n)?.to_vec();
        Ok(JsonStream { buf, base, state, events, saw_trace_events, object_form, ..Default::default() })
    }

    /// True if this could be a [`JsonStream::continuation`] of `form` that was fed `bytes`
    /// bytes (consumed ones plus its unparsed tail).
    pub(crate) fn is_continuation_of(&self, form: DocumentForm, bytes: u64) -> bool {
        let bare = form == DocumentForm::BareArray;
        self.state != State::Start && self.object_form != bare && self.base.checked_add(self.buf.len() as u64) == Some(bytes)
    }

    /// Bytes of text fed so far (parsed ones plus the unparsed tail).
    pub(crate) fn position(&self) -> u64 {
        self.base + self.buf.len() as u64
    }

    /// Number of events seen so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// True if the document was the object form.
    pub fn object_form(&self) -> bool {
        self.object_form
    }

    /// Feeds the next piece of text.
    pub fn feed(&mut self, data: &[u8], sink: &mut dyn EventSink) -> Result<()> {
        let mut from = 0;
        if !self.buf.is_empty() {
            // Finish the event that straddles the boundary by appending as little of `data` as
            // possible (doubling), so big chunks are not copied behind a small tail.
            let tail = self.buf.len();
            let mut taken = 0;
            let mut step = 64 << 10;
            loop {
                let more = (data.len() - taken).min(step.max(self.retry_len.saturating_sub(self.buf.len())));
                self.buf.extend_from_slice(&data[taken..taken + more]);
                taken += more;
                if self.buf.len() < self.retry_len {
                    // All of `data` is in the tail and it is still too short to be worth reading again.
                    return Ok(());
                }
                let buf = std::mem::take(&mut self.buf);
                self.reread += buf.len() as u64;
                let used = self.run(&buf, sink);
                self.buf = buf;
                let used = used?;
                self.buf.drain(..used);
                self.base += used as u64;
                self.set_retry_len();
                if used >= tail || taken == data.len() {
                    break;
                }
                step *= 2;
            }
            if taken == data.len() || self.buf.len() > taken {
                return Ok(());
            }
            // The old tail is consumed: what is left in the buffer is `data[from..taken]`.
            from = taken - self.buf.len();
            self.buf.clear();
        }
        // Parse straight from the caller's slice; keep only the unparsed tail.
        let rest = &data[from..];
        let used = self.run(rest, sink)?;
        self.buf.extend_from_slice(&rest[used..]);
        self.base += used as u64;
        self.set_retry_len();
        Ok(())
    }

    /// After a run: a long unparsed tail waits until it has doubled (see `retry_len`).
    fn set_retry_len(&mut self) {
        self.retry_len = if self.buf.len() >= LONG_TAIL { 2 * self.buf.len() } else { 0 };
    }

    /// Ends the document and says how it ended. A document that stops before its end is not an
    /// error here: [`TextEnd::Cut`] says where, and the caller decides (analyse the complete
    /// events with a warning, or refuse in strict mode). Errors only when nothing usable was read
    /// (empty input, or the input ends inside the top-level object before any `traceEvents`).
    pub fn finish(&mut self, sink: &mut dyn EventSink) -> Result<TextEnd> {
        self.ending = true;
        if !self.buf.is_empty() {
            let buf = std::mem::take(&mut self.buf);
            let used = self.run(&buf, sink)?;
            self.base += used as u64;
            self.buf = buf[used..].to_vec();
        }
        let complete = self.base;
        let stops_at = self.base + self.buf.len() as u64;
        let cut = |inside: &'static str| TextEnd::Cut { complete, stops_at, inside };
        match self.state {
            State::Done => Ok(TextEnd::Complete),
            State::Start => Err(Error::new("empty input: no JSON text")),
            State::ObjectKey { .. } if !self.saw_trace_events => {
                Err(Error::at("truncated JSON: the input ends inside the top-level object", stops_at))
            }
            State::ObjectKey { .. } => Ok(cut("the top-level object, after traceEvents")),
            State::Events { bare: true, .. } if only_a_comma_left(&self.buf) => Ok(TextEnd::OpenArray),
            State::Events { bare, .. } => {
                let in_event = self.buf.iter().any(|b| !b.is_ascii_whitespace() && *b != b',');
                Ok(cut(match (in_event, bare) {
                    (true, _) => "an event",
                    (false, true) => "the event array",
                    (false, false) => "traceEvents",
                }))
            }
        }
    }

    /// Whether a `traceEvents` array was found (object form) — a JSON object without one is not a trace.
    pub fn saw_trace_events(&self) -> bool {
        self.saw_trace_events
    }

    fn bad(&self, what: &str, pos: usize) -> Error {
        let mut e = Error::at(format!("not a valid trace JSON: {what}"), self.base + pos as u64);
        if matches!(self.state, State::Events { .. }) {
            e = e.in_event(self.events);
        }
        e
    }

    /// The event at `i` that the strict reader refused with `refusal`: repaired and handed to the
    /// sink when it can be ([`super::repair`]); otherwise the strict reader's refusal stands.
    /// Runs only for broken events, so a well-formed trace never pays for it.
    #[cold]
    fn repair_event(&mut self, buf: &[u8], i: usize, index: u64, sink: &mut dyn EventSink, refusal: Stop) -> Step<usize> {
        let fixed = match super::repair::event(buf, i, self.ending) {
            Ok(fixed) => fixed,
            Err(Stop::Incomplete) if !self.ending => return Err(Stop::Incomplete),
            Err(_) => return Err(refusal),
        };
        let mut ev = RawEvent::default();
        if parse_event(&fixed.text, 0, &mut ev, &mut self.keys).is_err() {
            return Err(refusal);
        }
        let at = |p: usize| self.origin + self.base + p as u64;
        sink.repaired(index, at(fixed.first_at), fixed.what, fixed.strings);
        sink.event(&ev, index, at(i));
        Ok(fixed.end)
    }

    /// Parses as much of `buf` as possible; returns how many bytes were consumed.
    fn run(&mut self, buf: &[u8], sink: &mut dyn EventSink) -> Result<usize> {
        let mut pos = 0;
        loop {
            match self.step(buf, pos, sink) {
                Ok(Some(next)) => pos = next,
                Ok(None) => return Ok(pos),
                Err(Stop::Incomplete) => return Ok(pos),
                Err(Stop::Bad(what, at)) => return Err(self.bad(what, at)),
            }
        }
    }

    /// One atomic step. `Ok(None)` means nothing more can be done with this buffer.
    fn step(&mut self, buf: &[u8], pos: usize, sink: &mut dyn EventSink) -> Step<Option<usize>> {
        let mut i = skip_ws(buf, pos);
        if self.state == State::Start && buf[i..].starts_with(b"\xEF\xBB\xBF") {
            i += 3;
            i = skip_ws(buf, i);
        }
        if i >= buf.len() {
            return Ok(if i > pos { Some(i) } else { None });
        }
        match self.state {
            State::Start => match buf[i] {
                b'{' => {
                    self.object_form = true;
                    self.state = State::ObjectKey { first: true };
                    Ok(Some(i + 1))
                }
                b'[' => {
                    self.state = State::Events { first: true, bare: true };
                    Ok(Some(i + 1))
                }
                // The document's start: what came before `i` was blank (a CRLF-rewritten XSpace
                // opens with the carriage return put before its first 0x0A).
                _ => match crate::ingest::format::reencoded_xspace_at(buf) {
                    Some(k) => Err(Stop::Bad(crate::ingest::format::REENCODED_XSPACE, k)),
                    None => Err(Stop::Bad(crate::ingest::format::not_a_trace(&buf[i..]), i)),
                },
            },
            State::ObjectKey { first } => {
                if buf[i] == b'}' {
                    self.state = State::Done;
                    return Ok(Some(i + 1));
                }
                if !first {
                    if buf[i] != b',' {
                        return Err(Stop::Bad("expected ',' or '}' between top-level keys", i));
                    }
                    i = skip_ws(buf, i + 1);
                }
                let (key, after) = scan::string(buf, i)?;
                let v = scan::expect(buf, after, b':', "expected ':' after a top-level key")?;
                let v = skip_ws(buf, v);
                if v >= buf.len() {
                    return Err(Stop::Incomplete);
                }
                if key == "traceEvents" {
                    if buf[v] != b'[' {
                        return Err(Stop::Bad("traceEvents is not an array", v));
                    }
                    self.saw_trace_events = true;
                    self.state = State::Events { first: true, bare: false };
                    return Ok(Some(v + 1));
                }
                let end = scan::skip_value(buf, v)?;
                let at = self.origin + self.base + v as u64;
                if end - v <= MAX_HEADER_VALUE {
                    match serde_json::from_slice::<serde_json::Value>(&buf[v..end]) {
                        Ok(value) => sink.header(&key, value),
                        Err(e) => sink.header_unread(&key, at, &format!("not valid JSON ({e})")),
                    }
                } else {
                    sink.header_unread(
                        &key,
                        at,
                        &format!("{} bytes, over the {} MiB read for a top-level value", end - v, MAX_HEADER_VALUE >> 20),
                    );
                }
                self.state = State::ObjectKey { first: false };
                Ok(Some(end))
            }
            State::Events { first, bare } => {
                if buf[i] == b']' {
                    self.state = if bare { State::Done } else { State::ObjectKey { first: false } };
                    return Ok(Some(i + 1));
                }
                if !first {
                    if buf[i] != b',' {
                        return Err(Stop::Bad("expected ',' or ']' between events", i));
                    }
                    i = skip_ws(buf, i + 1);
                    if i >= buf.len() {
                        return Err(Stop::Incomplete);
                    }
                }
                let index = self.events;
                let offset = self.origin + self.base + i as u64;
                let end = if buf[i] == b'{' {
                    let mut ev = RawEvent::default();
                    match parse_event(buf, i, &mut ev, &mut self.keys) {
                        Ok(end) => {
                            sink.event(&ev, index, offset);
                            end
                        }
                        Err(Stop::Bad(what, at)) => self.repair_event(buf, i, index, sink, Stop::Bad(what, at))?,
                        Err(Stop::Incomplete) => return Err(Stop::Incomplete),
                    }
                } else {
                    let end = scan::skip_value(buf, i)?;
                    sink.not_an_object(index, offset);
                    end
                };
                self.events += 1;
                self.state = State::Events { first: false, bare };
                Ok(Some(end))
            }
            State::Done => Err(Stop::Bad("unexpected text after the end of the JSON document", i)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts events and header keys.
    #[derive(Default)]
    struct Count {
        events: u64,
        headers: Vec<String>,
    }

    impl EventSink for Count {
        fn event(&mut self, _: &RawEvent<'_>, _: u64, _: u64) {
            self.events += 1;
        }
        fn header(&mut self, key: &str, _: serde_json::Value) {
            self.headers.push(key.to_string());
        }
        fn not_an_object(&mut self, _: u64, _: u64) {}
    }

    #[test]
    fn a_value_spanning_many_pieces_is_read_again_a_bounded_number_of_times() {
        // An 8 MB top-level value before the events, fed in 64 kB pieces: read again from its
        // start at every piece, that would be ~128 rereads averaging 4 MB (~512 MB in all).
        let mut text = b"{\"samples\": [".to_vec();
        while text.len() < 8 << 20 {
            text.extend_from_slice(b"[1, \"x]\", {\"a\": 2}], ");
        }
        text.extend_from_slice(b"0], \"traceEvents\": [");
        for k in 0..3 {
            let comma = if k > 0 { "," } else { "" };
            text.extend_from_slice(
                format!(r#"{comma}{{"ph": "X", "cat": "kernel", "name": "k", "ts": {k}, "dur": 1}}"#).as_bytes(),
            );
        }
        text.extend_from_slice(b"]}");
        let (mut stream, mut sink) = (JsonStream::default(), Count::default());
        for piece in text.chunks(64 << 10) {
            stream.feed(piece, &mut sink).unwrap();
        }
        stream.finish(&mut sink).unwrap();
        assert_eq!((sink.events, sink.headers), (3, vec!["samples".to_string()]));
        assert!(stream.reread < 4 * text.len() as u64, "read again {} bytes of {}", stream.reread, text.len());
    }
}
