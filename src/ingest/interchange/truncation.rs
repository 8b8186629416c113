//! How the input ended: whole, an open event array (allowed), or cut short.
//!
//! Profilers get killed and uploads get cut, so a trace that stops early is read up to its last
//! complete event and analysed, with a [`Truncation`] that every face shows as a warning (and that
//! strict mode turns back into an error). Corruption before the end stays an error.

use crate::error::Error;
use serde::Serialize;

/// Where and how a trace stops before its end. Everything before `text_bytes_read` was read and
/// analysed; nothing after it exists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Truncation {
    /// Complete events read (all of them analysed).
    pub events_read: u64,
    /// Bytes of JSON text up to the end of the last complete event.
    pub text_bytes_read: u64,
    /// Bytes of JSON text in all: the text stops here (for gzip: after decompression).
    pub text_stops_at: u64,
    /// Bytes of the input file (compressed size for gzip).
    pub input_bytes: u64,
    /// What is cut, e.g. "the input ends inside an event" or "the gzip stream ends early (...)".
    pub reason: String,
    /// The JSON document itself is whole (only the gzip stream's end is missing or wrong): no
    /// event is lost, and no pass is incomplete.
    pub document_whole: bool,
    /// The warning every face shows: [`Truncation::message`], kept with the facts so that the page
    /// shows the same words as the CLI.
    pub message: String,
}

impl Truncation {
    /// The facts, with their message.
    pub fn new(
        events_read: u64,
        text_bytes_read: u64,
        text_stops_at: u64,
        input_bytes: u64,
        reason: String,
        document_whole: bool,
    ) -> Self {
        let mut t = Truncation {
            events_read,
            text_bytes_read,
            text_stops_at,
            input_bytes,
            reason,
            document_whole,
            message: String::new(),
        };
        t.message = t.compose();
        t
    }

    /// One paragraph for a warning banner: what was read, where the input stops, what it means.
    pub fn message(&self) -> &str {
        &self.message
    }

    fn compose(&self) -> String {
        let consequence = if self.document_whole {
            "The JSON text itself is whole, so no event is missing."
        } else {
            "Passes, layers and phases near the end may be incomplete: the pass the input stops in is marked incomplete."
        };
        format!(
            "truncated trace: {}; the {} complete events in the first {} bytes of text were analysed \
             (the text stops at byte {}{}). {consequence}",
            self.reason,
            self.events_read,
            self.text_bytes_read,
            self.text_stops_at,
            if self.input_bytes != self.text_stops_at {
                format!(", the file at byte {}", self.input_bytes)
            } else {
                String::new()
            },
        )
    }

    /// The error strict mode reports instead (with the byte offset and event index where the
    /// input stops).
    pub fn to_error(&self) -> Error {
        Error::at(
            format!("truncated trace: {} after {} complete events (strict mode)", self.reason, self.events_read),
            self.text_stops_at,
        )
        .in_event(self.events_read)
    }
}

/// A short note about how the input ended that is not a problem (shown, never warned about).
pub const OPEN_ARRAY_NOTE: &str =
    "the event array has no closing ']' (the Trace Event Format allows this, so that a writer that stopped still leaves a readable trace): read as complete";
