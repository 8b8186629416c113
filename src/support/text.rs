//! Text for people: names cut to a width.

/// `text` cut to at most `n` characters, the last one an ellipsis when anything was cut.
pub fn ellipsis(text: &str, n: usize) -> String {
    if text.chars().count() <= n {
        text.to_string()
    } else {
        text.chars().take(n.saturating_sub(1)).collect::<String>() + "…"
    }
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
