//! Credentials a trace may carry by accident: public traces hold their recorder's environment
//! (`HF_TOKEN`, `AWS_SECRET_ACCESS_KEY`…) in the trace's metadata. This module knows what a
//! credential looks like — by its key's name or by its value's shape — so the readers can warn
//! that a trace holds one (naming the key, never the value) and the writers ([`Redactor`], used
//! by `split`) never copy one out.
//!
//! The value shapes ([`PATTERNS`]) are the token formats the issuers document: Hugging Face
//! (`hf_` and 34 letters or digits), GitHub (`ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_` and 36, or
//! `github_pat_`), AWS access key ids (`AKIA`/`ASIA` and 16), Slack (`xoxb-`, `xoxp-`, …) and
//! OpenAI-style (`sk-` and 20 or more).

use regex::bytes::Regex;
use std::sync::OnceLock;

/// The credential shapes searched for: a name for people and the regex (ASCII, on bytes).
pub const PATTERNS: &[(&str, &str)] = &[
    ("Hugging Face token", r"(?-u)\bhf_[A-Za-z0-9]{34}\b"),
    ("GitHub token", r"(?-u)\bgh[pousr]_[A-Za-z0-9]{36,}\b"),
    ("GitHub fine-grained token", r"(?-u)\bgithub_pat_[A-Za-z0-9_]{40,}"),
    ("AWS access key id", r"(?-u)\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("Slack token", r"(?-u)\bxox[baprs]-[0-9A-Za-z-]{10,}"),
    ("OpenAI-style secret key", r"(?-u)\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}"),
];

fn compiled() -> &'static [(&'static str, Regex)] {
    static SET: OnceLock<Vec<(&'static str, Regex)>> = OnceLock::new();
    SET.get_or_init(|| PATTERNS.iter().map(|(name, re)| (*name, Regex::new(re).expect("secret pattern compiles"))).collect())
}

/// The name of the first credential shape found in `bytes`, if any (never the match itself).
pub fn find(bytes: &[u8]) -> Option<&'static str> {
    compiled().iter().find(|(_, re)| re.is_match(bytes)).map(|(name, _)| *name)
}

/// Words of a key that name a secret: a key is secret-looking when one of its words (split at
/// `_`, `-`, `.`, spaces and lower-to-upper case changes) is, or ends with, one of these
/// (`HF_TOKEN`, `apiKey`, `HFTOKEN`, `DB_PASSWORD`). `TOKENS` (token counts) and `TOKENIZERS`
/// (`TOKENIZERS_PARALLELISM`) are other words.
const SECRET_WORDS: &[&str] = &["TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "CREDENTIALS"];

/// Whether a metadata key's name says its value is a secret (`HF_TOKEN`, `AWS_SECRET_ACCESS_KEY`,
/// `apiKey`, `DB_PASSWORD`, `GOOGLE_APPLICATION_CREDENTIALS`).
pub fn key_looks_secret(key: &str) -> bool {
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in key.chars() {
        if !c.is_ascii_alphanumeric() {
            words.push(std::mem::take(&mut word));
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower {
            words.push(std::mem::take(&mut word));
        }
        prev_lower = c.is_ascii_lowercase();
        word.push(c.to_ascii_uppercase());
    }
    words.push(word);
    words.iter().any(|w| SECRET_WORDS.iter().any(|s| w.ends_with(s)))
}

/// Whether a value under a secret-looking key holds something: not empty, not already a
/// redaction mark (`REDACTED`, or one character repeated: `xxxx`, `****`), and not a switch or a
/// small number (Nsight Systems' `HOTKEY_ENABLED = false`, `HOT_KEY_VALUE = 0` are settings).
pub fn holds_value(value: &str) -> bool {
    let v = value.trim();
    let mut chars = v.chars();
    let Some(first) = chars.next() else { return false };
    let one_mark = "xX*#.-".contains(first) && chars.all(|c| c == first);
    let word = ["none", "null", "true", "false", "yes", "no", "on", "off"].iter().any(|w| v.eq_ignore_ascii_case(w));
    let small_number = v.len() <= 6 && v.chars().all(|c| c.is_ascii_digit());
    !(one_mark || v == REDACTED || word || small_number)
}

/// What a redacted value is written as.
pub const REDACTED: &str = "REDACTED";

/// Collects the secret-looking entries of a JSON value: the paths (`metadata.env.HF_TOKEN`) of
/// string values under a secret-looking key that hold something, and of any string whose text
/// has a credential's shape. Names only, never values.
pub fn secret_paths(path: &str, value: &serde_json::Value, out: &mut Vec<String>) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                match v {
                    Value::String(s) if key_looks_secret(k) && holds_value(s) => out.push(p),
                    _ => secret_paths(&p, v, out),
                }
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                secret_paths(&format!("{path}[{i}]"), v, out);
            }
        }
        Value::String(s) if find(s.as_bytes()).is_some() => out.push(path.to_string()),
        _ => {}
    }
}

/// A filter over JSON text, fed in pieces of any size: copies the text, except that a string
/// value under a secret-looking key (see [`key_looks_secret`], [`holds_value`]) and any string
/// with a credential's shape come out as `"REDACTED"`. Only strings are held back (until they
/// close); everything else passes at once.
#[derive(Default)]
pub struct Redactor {
    in_string: bool,
    escaped: bool,
    /// The open string's raw text, quotes excluded.
    string: Vec<u8>,
    /// Whether the open string is the value of a key (a `:` came before it).
    string_is_value: bool,
    /// The last string closed, until the next significant byte says whether it was a key.
    last_string: Vec<u8>,
    /// The key of the value being read (set at each `:`).
    key: Vec<u8>,
    /// The last significant byte outside strings.
    prev: u8,
    /// Strings written as `REDACTED`.
    pub redacted: u64,
}

impl Redactor {
    /// Filters `text`, appending what may be written to `out`.
    pub fn push(&mut self, text: &[u8], out: &mut Vec<u8>) {
        let mut pass_from = 0;
        for (i, &b) in text.iter().enumerate() {
            if self.in_string {
                match (self.escaped, b) {
                    (true, _) => self.escaped = false,
                    (false, b'\\') => self.escaped = true,
                    (false, b'"') => {
                        self.in_string = false;
                        self.close_string(out);
                        pass_from = i + 1;
                        continue;
                    }
                    _ => {}
                }
                self.string.push(b);
                pass_from = i + 1;
                continue;
            }
            match b {
                b'"' => {
                    out.extend_from_slice(&text[pass_from..i]);
                    pass_from = i + 1;
                    self.in_string = true;
                    self.string.clear();
                    self.string_is_value = self.prev == b':';
                }
                b':' => {
                    self.key = std::mem::take(&mut self.last_string);
                    self.prev = b;
                }
                b' ' | b'\t' | b'\n' | b'\r' => {}
                _ => self.prev = b,
            }
        }
        if !self.in_string {
            out.extend_from_slice(&text[pass_from..]);
        }
    }

    fn close_string(&mut self, out: &mut Vec<u8>) {
        let s = std::mem::take(&mut self.string);
        let secret_by_key = self.string_is_value
            && key_looks_secret(&String::from_utf8_lossy(&self.key))
            && holds_value(&String::from_utf8_lossy(&s));
        if secret_by_key || find(&s).is_some() {
            out.push(b'"');
            out.extend_from_slice(REDACTED.as_bytes());
            out.push(b'"');
            self.redacted += 1;
        } else {
            out.push(b'"');
            out.extend_from_slice(&s);
            out.push(b'"');
        }
        self.prev = b'"';
        self.last_string = s;
        self.string = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A token of `prefix` and `n` letters, made at run time so that no source file holds one.
    fn fake(prefix: &str, n: usize) -> String {
        prefix.to_string() + &"aB3".repeat(n).chars().take(n).collect::<String>()
    }

    #[test]
    fn finds_each_documented_shape_and_names_only_the_kind() {
        assert_eq!(find(fake("hf_", 34).as_bytes()), Some("Hugging Face token"));
        assert_eq!(find(fake("ghp_", 36).as_bytes()), Some("GitHub token"));
        assert_eq!(find(fake("github_pat_", 82).as_bytes()), Some("GitHub fine-grained token"));
        assert_eq!(find(("AKIA".to_string() + "ABCDEFGHIJKLMNOP").as_bytes()), Some("AWS access key id"));
        assert_eq!(find(fake("xoxb-", 24).as_bytes()), Some("Slack token"));
        assert_eq!(find(fake("sk-", 48).as_bytes()), Some("OpenAI-style secret key"));
        // Kernel and op names that only resemble them.
        for name in ["hf_bert_small_forward_h100", "task-local", "aten::sk-x", "AKIA", "hf_kernel"] {
            assert_eq!(find(name.as_bytes()), None, "{name}");
        }
    }

    #[test]
    fn keys_by_their_words() {
        for k in [
            "HF_TOKEN",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "apiKey",
            "OPENAI_API_KEY",
            "HFTOKEN",
            "DB_PASSWORD",
            "GOOGLE_APPLICATION_CREDENTIALS",
        ] {
            assert!(key_looks_secret(k), "{k}");
        }
        for k in ["TOKENIZERS_PARALLELISM", "max_num_batched_tokens", "HF_HOME", "CUDA_VERSION", "tokenizer"] {
            assert!(!key_looks_secret(k), "{k}");
        }
        assert!(!holds_value("") && !holds_value("xxxxxxxx") && !holds_value("REDACTED") && holds_value("abc"));
    }

    #[test]
    fn redacts_in_any_chunking_and_copies_the_rest_byte_for_byte() {
        let token = fake("hf_", 34);
        let text = format!(
            r#"{{"env": {{"HF_TOKEN": "abc\"def", "HOME": "/root", "note": "uses {token} here", "n_tokens": "12"}}, "traceEvents": [{{"name": "a<b>"}}]}}"#
        );
        let want = r#"{"env": {"HF_TOKEN": "REDACTED", "HOME": "/root", "note": "REDACTED", "n_tokens": "12"}, "traceEvents": [{"name": "a<b>"}]}"#;
        for size in [1, 2, 3, 7, 1000] {
            let mut r = Redactor::default();
            let mut out = Vec::new();
            for piece in text.as_bytes().chunks(size) {
                r.push(piece, &mut out);
            }
            assert_eq!(String::from_utf8(out).unwrap(), want, "pieces of {size}");
            assert_eq!(r.redacted, 2);
        }
    }

    #[test]
    fn paths_of_secret_values() {
        let token = fake("ghp_", 36);
        let v = serde_json::json!({"env": {"HF_TOKEN": "abc", "WANDB_API_KEY": "", "HOME": "/root"}, "args": ["x", token], "num_key_value_heads": 8});
        let mut out = Vec::new();
        secret_paths("metadata", &v, &mut out);
        assert_eq!(out, vec!["metadata.args[1]".to_string(), "metadata.env.HF_TOKEN".to_string()]);
    }
}
