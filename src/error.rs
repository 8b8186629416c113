//! The one error type: says what went wrong and where (byte offset, event index).

use std::fmt;

/// A fatal problem with the input or the options. Recoverable oddities are
/// [`crate::model::Warnings`] instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// What went wrong, in one line.
    pub message: String,
    /// Offset in the decompressed JSON text, when known.
    pub byte_offset: Option<u64>,
    /// Index of the event in `traceEvents`, when known.
    pub event_index: Option<u64>,
}

impl Error {
    /// An error with no location.
    pub fn new(message: impl Into<String>) -> Self {
        Error { message: message.into(), byte_offset: None, event_index: None }
    }
    /// An error at a byte offset of the JSON text.
    pub fn at(message: impl Into<String>, byte_offset: u64) -> Self {
        Error { message: message.into(), byte_offset: Some(byte_offset), event_index: None }
    }
    /// Adds the event index.
    pub fn in_event(mut self, index: u64) -> Self {
        self.event_index = Some(index);
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        match (self.event_index, self.byte_offset) {
            (Some(e), Some(b)) => write!(f, " (event {e}, byte {b})"),
            (Some(e), None) => write!(f, " (event {e})"),
            (None, Some(b)) => write!(f, " (byte {b})"),
            (None, None) => Ok(()),
        }
    }
}

impl std::error::Error for Error {}

/// Result alias used across the crate.
pub type Result<T> = std::result::Result<T, Error>;
