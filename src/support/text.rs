//! Text for people (names cut to a width), and the marks a text pipeline leaves on bytes that
//! were no text (replacement characters, rewritten line endings).

/// `text` cut to at most `n` characters, the last one an ellipsis when anything was cut.
pub fn ellipsis(text: &str, n: usize) -> String {
    if text.chars().count() <= n {
        text.to_string()
    } else {
        text.chars().take(n.saturating_sub(1)).collect::<String>() + "…"
    }
}

/// UTF-8 replacement characters (U+FFFD, bytes `EF BF BD`) in `bytes`: where the first stands
/// and how many there are. Binary bytes decoded as UTF-8 and written back turn into them.
pub fn replacement_characters(bytes: &[u8]) -> Option<(usize, usize)> {
    const FFFD: &[u8] = "\u{FFFD}".as_bytes();
    let at = memchr::memmem::find(bytes, FFFD)?;
    Some((at, memchr::memmem::find_iter(bytes, FFFD).count()))
}

/// When every line feed in `bytes` follows a carriage return (line endings rewritten to CRLF; a
/// binary file has bare `0x0A` bytes): where the first `\r\n` stands and how many line feeds
/// there are.
pub fn crlf_line_endings(bytes: &[u8]) -> Option<(usize, usize)> {
    let at = memchr::memmem::find(bytes, b"\r\n")?;
    let feeds = memchr::memchr_iter(b'\n', bytes).count();
    (memchr::memmem::find_iter(bytes, b"\r\n").count() == feeds).then_some((at, feeds))
}

#[cfg(test)]
mod tests {
    #[test]
    fn cuts_by_characters_with_the_ellipsis_inside_the_width() {
        assert_eq!(super::ellipsis("short", 5), "short");
        assert_eq!(super::ellipsis("longer", 5), "long…");
        assert_eq!(super::ellipsis("µµµµµµ", 3), "µµ…");
    }
}
