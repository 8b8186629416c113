//! Escaping text for markup (HTML, SVG, XML): one function for every writer.

/// Escapes `&`, `<`, `>`, `"` and `'`, and drops characters XML 1.0 does not allow (control
/// characters other than tab and line breaks, U+FFFE, U+FFFF). Safe for element content and
/// quoted attributes in HTML, SVG and XML.
pub fn escape(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    for ch in t.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(ch),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_markup_and_drops_bad_controls() {
        assert_eq!(
            super::escape("<img src=x onerror=\"a('1')\">&\u{1}"),
            "&lt;img src=x onerror=&quot;a(&#39;1&#39;)&quot;&gt;&amp;"
        );
    }
}
