//! Where the event array's elements begin: the document's form from its first bytes, and a
//! likely event start anywhere in the text (for reading ranges of one file at once).

/// The two shapes of a Chrome-trace document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocumentForm {
    /// A bare event array: `[{...}, {...}]`.
    BareArray,
    /// An object holding the array: `{"traceEvents": [...], ...}`.
    Object,
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

/// Position of a `{` at or after `from` that looks like the start of an event: preceded (across
/// whitespace) by `,` and before that by `}`, searched up to 4 MiB past `from`. Only a guess:
/// [`crate::read::Reader::adopt_part`] verifies it. The page calls it on a small window of the file to find
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
