//! One module per input format. Each registers a [`FormatKind`] in [`FORMATS`]: how its first
//! bytes tell it, how it is best read ([`Reading`]) and how to open a [`FormatReader`] for it, which
//! takes the bytes and finishes the model. [`sniff()`] asks the kinds in turn, once per input; the
//! answer ([`Format`]) is handed on to every reader of that input (a thread, a worker, the page),
//! which [`open`]s the kind's reader without looking at the bytes again.
//!
//! Adding a format is a decoder in [`crate::ingest`] (bytes → events), a module here (its kind and
//! reader) and a line in [`FORMATS`].

mod detect;
mod digest;
mod gzip;
mod json;
mod nsys;
mod xspace;

pub use detect::Detect;
pub use gzip::Inflating;
pub(crate) use json::JsonReader;

use crate::error::Result;
use crate::ingest::Format;
use crate::model::Trace;

/// How an input of a format is best read: what the native readers and the page's worker choose
/// their strategy by (the page never names a format).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// Text whose ranges can be parsed at once, apart, and adopted in order (plain Chrome JSON).
    InParts,
    /// Compressed: inflated (on a thread or worker of its own), then read as what it holds.
    Inflated,
    /// A database the page's SQLite module first makes row bytes of (natively, read as it is).
    AsRows,
    /// Read in order and kept whole until the end (a protobuf, a digest).
    InOrder,
}

impl Reading {
    /// The name the page's worker chooses its strategy by: `parts`, `inflate`, `rows`, `stream`.
    pub fn as_str(self) -> &'static str {
        match self {
            Reading::InParts => "parts",
            Reading::Inflated => "inflate",
            Reading::AsRows => "rows",
            Reading::InOrder => "stream",
        }
    }
}

/// How one reader of an input is set up, whatever its format.
#[derive(Debug, Clone, Copy)]
pub struct ReadSettings {
    /// Whether a gzip input's CRC-32 is checked.
    pub gzip_crc: bool,
    /// Of an Nsight Systems export, read only this process (one rank of a run it holds).
    pub nsys_process: Option<i64>,
}

impl Default for ReadSettings {
    fn default() -> Self {
        ReadSettings { gzip_crc: true, nsys_process: None }
    }
}

/// One input format: what it is, how its first bytes tell it, how it is read, and its reader.
pub trait FormatKind: Sync {
    /// The format `head` (an input's first bytes) is, if it is this kind's.
    fn tell(&self, head: &[u8]) -> Option<Format>;
    /// Whether `format` is this kind's (the one [`FormatKind::tell`] says).
    fn is(&self, format: Format) -> bool;
    /// How an input of `format` (one of this kind's) is best read.
    fn reading(&self, format: Format) -> Reading;
    /// A reader of an input of `format`.
    fn open(&self, format: Format, settings: ReadSettings) -> Box<dyn FormatReader>;
}

/// Reads one input of one format: takes its bytes in chunks of any size, then finishes the model
/// (not linked yet).
pub trait FormatReader {
    /// Takes the next bytes. `in_order`: parse on this thread only (the caller runs its own
    /// parallelism around it); otherwise a reader may share a large chunk between threads.
    fn push(&mut self, bytes: &[u8], in_order: bool) -> Result<()>;
    /// Text bytes seen so far (after any decompression), and events read.
    fn progress(&self) -> (u64, u64);
    /// The reader of what this input holds, for bytes that arrive already decompressed from here
    /// on (a gzip stream inflated elsewhere); itself for an input that holds no other.
    fn contents(self: Box<Self>) -> Box<dyn FormatReader>;
    /// The Chrome-JSON text reader this input is read with, when it is one (ranges of its text
    /// parsed elsewhere can then be adopted).
    fn json(&mut self) -> Option<&mut JsonReader> {
        None
    }
    /// Says that the input (decompressed elsewhere) did not end cleanly: `what` went wrong. A
    /// format read whole from a database or refused at once has nothing to cut.
    fn input_cut(&mut self, what: String) {
        let _ = what;
    }
    /// Ends the input (`bytes_in` of it were pushed) and returns the model, not linked yet.
    fn finish(self: Box<Self>, bytes_in: u64) -> Result<Trace>;
}

/// Every format, in the order [`sniff()`] asks them. Chrome JSON comes last: it also reads what no
/// kind tells ([`Format::Unknown`]), and its error names what the input looks like instead.
pub static FORMATS: &[&dyn FormatKind] = &[&gzip::GZIP, &nsys::NSYS, &xspace::XSPACE, &digest::DIGEST, &json::CHROME_JSON];

/// What an input is, from its first bytes (64 are plenty): the first kind of [`FORMATS`] that
/// tells it, else [`Format::Unknown`]. Only magic bytes are looked at; whether the rest is well
/// formed is the reader's to say.
pub fn sniff(head: &[u8]) -> Format {
    FORMATS.iter().find_map(|kind| kind.tell(head)).unwrap_or(Format::Unknown)
}

/// The kind `format` is ([`Format::Unknown`] is Chrome JSON's: its reader says what the input
/// looks like).
pub fn kind_of(format: Format) -> &'static dyn FormatKind {
    FORMATS.iter().copied().find(|kind| kind.is(format)).unwrap_or(&json::CHROME_JSON)
}

/// How an input of `format` is best read.
pub fn reading(format: Format) -> Reading {
    kind_of(format).reading(format)
}

/// A reader of one input of `format`.
pub fn open(format: Format, settings: ReadSettings) -> Box<dyn FormatReader> {
    kind_of(format).open(format, settings)
}

#[cfg(test)]
mod tests {
    use super::{reading, sniff, Reading, FORMATS};
    use crate::ingest::{DocumentForm, Format};

    #[test]
    fn each_format_is_told_by_its_first_bytes() {
        assert_eq!(sniff(b"\x1f\x8b\x08\x00"), Format::Gzip);
        assert_eq!(sniff(b"SQLite format 3\0rest"), Format::NsysSqlite);
        assert_eq!(sniff(b"\xEF\xBB\xBF  {\"traceEvents\": []}"), Format::ChromeJson(DocumentForm::Object));
        assert_eq!(sniff(b"[{\"ph\": \"X\"}"), Format::ChromeJson(DocumentForm::BareArray));
        assert_eq!(sniff(b"  {\"traceprism_digest\": 1"), Format::Digest);
        // An XSpace: plane (field 1, length 9), its id (field 1), then its name "/device:GPU:0".
        assert_eq!(sniff(b"\x0a\x09\x08\x01\x12\x05/devi"), Format::Xspace);
        assert_eq!(sniff(b"PK\x03\x04"), Format::Unknown);
        assert_eq!(sniff(b""), Format::Unknown);
    }

    #[test]
    fn every_format_has_one_kind_and_a_way_to_be_read() {
        for format in Format::ALL {
            let kinds = FORMATS.iter().filter(|k| k.is(format)).count();
            assert_eq!(kinds, 1, "{format:?} is claimed by {kinds} kinds");
        }
        assert_eq!(reading(Format::ChromeJson(DocumentForm::Object)), Reading::InParts);
        assert_eq!(reading(Format::Unknown), Reading::InParts);
        assert_eq!(reading(Format::Gzip), Reading::Inflated);
        assert_eq!(reading(Format::NsysSqlite), Reading::AsRows);
        assert_eq!(reading(Format::NsysRows), Reading::InOrder);
        assert_eq!(reading(Format::Xspace), Reading::InOrder);
    }
}
