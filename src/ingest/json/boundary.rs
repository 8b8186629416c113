//! Where the event array's elements begin: a likely event start anywhere in the text (for
//! reading ranges of one file at once).

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
