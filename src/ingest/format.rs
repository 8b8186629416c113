//! The formats an input can be ([`Format`]: what `crate::read::sniff` says of its first bytes,
//! carrying everything they told, the JSON document's form too) and the magic bytes that tell some
//! of them. And what a file that is not a trace looks like, so the error can say so ("a zip
//! archive", "an SQLite database") instead of only "not JSON".

/// What an input is, from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// gzip-compressed: the inflated bytes tell what is inside.
    Gzip,
    /// Chrome-trace JSON, in either of its forms (`{"traceEvents": ...}` or a bare `[...]`).
    ChromeJson(DocumentForm),
    /// A JAX / TensorFlow profile: a serialized `XSpace` protobuf (`.xplane.pb`).
    Xspace,
    /// An Nsight Systems SQLite export.
    NsysSqlite,
    /// The row bytes the page's SQLite module made of an Nsight Systems export.
    NsysRows,
    /// A traceprism digest (`traceprism digest`'s JSON: a gate's baseline), not a trace.
    Digest,
    /// None of these (or nothing yet): the JSON reader says what it looks like
    /// ([`not_a_trace`]), with the byte offset.
    Unknown,
}

impl Format {
    /// Every format an input can be (each form of Chrome JSON apart).
    pub const ALL: [Format; 8] = [
        Format::Gzip,
        Format::ChromeJson(DocumentForm::Object),
        Format::ChromeJson(DocumentForm::BareArray),
        Format::Xspace,
        Format::NsysSqlite,
        Format::NsysRows,
        Format::Digest,
        Format::Unknown,
    ];

    /// The format's name as faces and the page spell it (`gzip`, `json`, `xspace`, `nsys`,
    /// `nsys_rows`, `unknown`).
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Gzip => "gzip",
            Format::ChromeJson(_) => "json",
            Format::Xspace => "xspace",
            Format::NsysSqlite => "nsys",
            Format::NsysRows => "nsys_rows",
            Format::Digest => "digest",
            Format::Unknown => "unknown",
        }
    }

    /// The format [`Format::as_str`] and [`DocumentForm::as_str`] name (the page hands back what
    /// wasm's `sniff` told it); `None` for a name of neither.
    pub fn from_names(format: &str, form: Option<&str>) -> Option<Format> {
        Some(match format {
            "gzip" => Format::Gzip,
            "json" => Format::ChromeJson(form.map_or(Some(DocumentForm::Object), DocumentForm::from_name)?),
            "xspace" => Format::Xspace,
            "nsys" => Format::NsysSqlite,
            "nsys_rows" => Format::NsysRows,
            "digest" => Format::Digest,
            "unknown" => Format::Unknown,
            _ => return None,
        })
    }

    /// The document's form of Chrome-trace JSON; `None` for any other format.
    pub fn form(self) -> Option<DocumentForm> {
        match self {
            Format::ChromeJson(form) => Some(form),
            _ => None,
        }
    }

    /// True for an Nsight Systems export, as a database or as the page's row bytes.
    pub fn is_nsys(self) -> bool {
        matches!(self, Format::NsysSqlite | Format::NsysRows)
    }
}

/// The first bytes of every SQLite database (an Nsight Systems export is one).
const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// How a traceprism digest begins (its first key), after any whitespace.
const DIGEST_START: &[u8] = b"{\"traceprism_digest\"";

/// Whether `head` starts like a traceprism digest.
pub fn looks_like_digest(head: &[u8]) -> bool {
    let start = head.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(head.len());
    head[start..].starts_with(DIGEST_START)
}

/// The two shapes of a Chrome-trace document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocumentForm {
    /// A bare event array: `[{...}, {...}]`.
    BareArray,
    /// An object holding the array: `{"traceEvents": [...], ...}`.
    Object,
}

impl DocumentForm {
    /// The form's name as the page spells it: `array` or `object`.
    pub fn as_str(self) -> &'static str {
        match self {
            DocumentForm::BareArray => "array",
            DocumentForm::Object => "object",
        }
    }

    /// The form [`DocumentForm::as_str`] names.
    pub fn from_name(name: &str) -> Option<DocumentForm> {
        match name {
            "array" => Some(DocumentForm::BareArray),
            "object" => Some(DocumentForm::Object),
            _ => None,
        }
    }
}

/// The form of a trace document from its first bytes: [`DocumentForm::BareArray`] for `[...]`,
/// [`DocumentForm::Object`] for `{...}`, `None` if the bytes start with neither (gzip, not JSON,
/// or only whitespace so far). A UTF-8 byte-order mark is skipped.
pub fn document_form(head: &[u8]) -> Option<DocumentForm> {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    match head.iter().find(|b| !b.is_ascii_whitespace())? {
        b'[' => Some(DocumentForm::BareArray),
        b'{' => Some(DocumentForm::Object),
        _ => None,
    }
}

/// Whether `bytes` start like an SQLite database.
pub fn looks_like_sqlite(bytes: &[u8]) -> bool {
    bytes.starts_with(SQLITE_MAGIC)
}

/// What [`reencoded_xspace_at`] finds, as the error says it.
pub const REENCODED_XSPACE: &str = "not a valid XSpace: the bytes look re-encoded as text here (UTF-8 replacement characters, U+FFFD, where bytes that were no text were, or every line feed after a carriage return: a binary .xplane.pb passed through a text pipeline); fetch or copy it as binary";

/// Where a JAX XSpace passed through a text pipeline shows it, given the document's first bytes:
/// decoded as UTF-8 and written back (undecodable bytes replaced by U+FFFD: the first
/// replacement character), or with its line endings rewritten (it opens with `\r\n` and every
/// line feed follows a carriage return: byte 0). Only when the bytes open like a protobuf message
/// and name an XLA plane near the start.
pub fn reencoded_xspace_at(doc: &[u8]) -> Option<usize> {
    let head = &doc[..doc.len().min(1 << 16)];
    let named = memchr::memmem::find(head, b"/device:").is_some() || memchr::memmem::find(head, b"/host:").is_some();
    if !named {
        return None;
    }
    if doc.starts_with(b"\r\n") {
        return crate::support::text::crlf_line_endings(head).map(|_| 0);
    }
    if doc.first() != Some(&0x0a) {
        return None;
    }
    crate::support::text::replacement_characters(head).map(|(at, _)| at)
}

/// The message for input whose first non-blank bytes are `start` and that is neither Chrome-trace
/// JSON nor a JAX `XSpace`.
pub fn not_a_trace(start: &[u8]) -> &'static str {
    const KNOWN: &[(&[u8], &str)] = &[
        (b"PK\x03\x04", "the input is a zip archive, not a trace: unzip it and open the .json or .json.gz inside"),
        (SQLITE_MAGIC, "the input is an SQLite database (an Nsight Systems export?), not a Chrome-trace JSON"),
        (b"\x28\xb5\x2f\xfd", "the input is zstd-compressed: decompress it first (zstd -d), or give the .json / .json.gz"),
        (b"BZh", "the input is bzip2-compressed: decompress it first (bunzip2), or give the .json / .json.gz"),
        (b"\xfd7zXZ", "the input is xz-compressed: decompress it first (unxz), or give the .json / .json.gz"),
        (b"\x80", "the input looks like a Python pickle, not a trace"),
        (b"<", "the input is HTML or XML (a web page saved instead of the trace?), not a trace"),
        (b"\x0a", "the input looks like protobuf but not a JAX XSpace (a Perfetto .pftrace? Perfetto UI opens it)"),
    ];
    KNOWN
        .iter()
        .find(|(magic, _)| start.starts_with(magic))
        .map_or("the input is neither Chrome-trace JSON nor a JAX XSpace (expected '{' or '[' at the start)", |(_, what)| what)
}

#[cfg(test)]
mod tests {
    use super::{DocumentForm, Format};

    #[test]
    fn a_format_named_is_the_format_read_back() {
        for f in Format::ALL {
            assert_eq!(Format::from_names(f.as_str(), f.form().map(DocumentForm::as_str)), Some(f));
        }
        assert_eq!(Format::from_names("json", Some("list")), None);
        assert_eq!(Format::from_names("zip", None), None);
    }

    #[test]
    fn names_what_the_input_looks_like() {
        assert!(super::not_a_trace(b"PK\x03\x04rest").contains("zip"));
        assert!(super::not_a_trace(b"SQLite format 3\0").contains("SQLite"));
        assert!(super::not_a_trace(b"<!DOCTYPE html>").contains("HTML"));
        assert!(super::not_a_trace(b"hello").contains("neither Chrome-trace JSON nor a JAX XSpace"));
    }
}
