//! Which rank a trace file is: `distributedInfo.rank`, else its file name, else its place in the
//! order given.

/// A trace's rank: `distributedInfo.rank`, else the one its file name states.
pub fn trace_rank(t: &crate::model::Trace, file: &str) -> Option<u32> {
    t.meta.rank.and_then(|r| u32::try_from(r).ok()).or_else(|| rank_from_file_name(file))
}

/// The rank a file name states: `rank3`, `rank-3`, `rank_3`, `TP-3`, `tp3`, or a trailing `_3.`
/// (`trace_3.json.gz`). `None` when it states none.
pub fn rank_from_file_name(name: &str) -> Option<u32> {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let lower = base.to_ascii_lowercase();
    let digits_after = |at: usize| -> Option<u32> {
        let rest = &lower[at..];
        let rest = rest.strip_prefix(['-', '_']).unwrap_or(rest);
        let n: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        n.parse().ok()
    };
    for key in ["rank", "tp"] {
        let mut from = 0;
        while let Some(p) = lower[from..].find(key) {
            let at = from + p;
            // `tp` must stand alone (not the end of a word like `http`).
            let starts_word = at == 0 || !lower.as_bytes()[at - 1].is_ascii_alphabetic();
            if starts_word {
                if let Some(n) = digits_after(at + key.len()) {
                    return Some(n);
                }
            }
            from = at + key.len();
        }
    }
    // `_N.`: the last such number before an extension.
    let bytes = lower.as_bytes();
    let mut found = None;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'_' {
            let n: String = lower[i + 1..].chars().take_while(|c| c.is_ascii_digit()).collect();
            if !n.is_empty() && bytes.get(i + 1 + n.len()) == Some(&b'.') {
                found = n.parse().ok();
            }
        }
    }
    found
}

/// A file name with its rank token's number replaced by `*` (`run_rank3.json` → `run_rank*.json`):
/// the files of one window across ranks share it. `None` when the name states no rank.
pub fn rank_group_key(name: &str) -> Option<String> {
    let rank = rank_from_file_name(name)?.to_string();
    let lower = name.to_ascii_lowercase();
    // The first place a rank token's number stands, as `rank_from_file_name` reads it.
    for key in ["rank", "tp"] {
        let mut from = 0;
        while let Some(p) = lower[from..].find(key) {
            let at = from + p;
            let mut i = at + key.len();
            if matches!(lower.as_bytes().get(i), Some(b'-' | b'_')) {
                i += 1;
            }
            let starts_word = at == 0 || !lower.as_bytes()[at - 1].is_ascii_alphabetic();
            if starts_word && lower[i..].starts_with(&rank) && !lower[i + rank.len()..].starts_with(|c: char| c.is_ascii_digit())
            {
                return Some(format!("{}*{}", &name[..i], &name[i + rank.len()..]));
            }
            from = at + key.len();
        }
    }
    let token = format!("_{rank}.");
    let at = lower.rfind(&token)?;
    Some(format!("{}_*{}", &name[..at], &name[at + token.len() - 1..]))
}

#[cfg(test)]
mod tests {
    use super::rank_from_file_name as r;

    #[test]
    fn group_keys_drop_the_rank_number() {
        use super::rank_group_key as k;
        assert_eq!(k("w12_rank3.json.gz").as_deref(), Some("w12_rank*.json.gz"));
        assert_eq!(k("w12_rank-3.json.gz").as_deref(), Some("w12_rank-*.json.gz"));
        assert_eq!(k("step5_trace_3.json").as_deref(), Some("step5_trace_*.json"));
        assert_eq!(k("1761234-TP-5-DECODE.trace.json.gz").as_deref(), Some("1761234-TP-*-DECODE.trace.json.gz"));
        assert_eq!(k("llama.json.gz"), None);
    }

    #[test]
    fn ranks_from_names() {
        assert_eq!(r("hta_sampled_rank0_train_w128.json.gz"), Some(0));
        assert_eq!(r("dir/trace_rank-3.json"), Some(3));
        assert_eq!(r("run_rank_12.pt.trace.json.gz"), Some(12));
        assert_eq!(r("1761234-TP-5-DECODE.trace.json.gz"), Some(5));
        assert_eq!(r("worker_7.json.gz"), Some(7));
        assert_eq!(r("https_trace.json"), None);
        assert_eq!(r("llama.json.gz"), None);
    }
}
