//! Repairs an event object whose strings break the JSON grammar, as real profilers have written
//! them: a double quote left unescaped inside a value (PyTorch's `with_stack=True` under
//! `torch.compile` wrote a dynamo frame's `co_filename`, such as `{"device": "cpu"}`, straight
//! into `"name"`: pytorch#146900, kineto#1459, kineto#1508), a backslash that starts no escape (a
//! raw Windows path, `C:\Users\...`: kineto#617) and raw control characters.
//!
//! The strict reader ([`super::event`]) runs first; only an event it refuses comes here, so the
//! repair costs nothing on a well-formed trace. The event is walked with the grammar's own
//! expectations: a string ends at the first quote after which comes what may follow it there —
//! in an event, `,` and one of the event keys writers use (`"pid": `, `"ts": `...) or the event's
//! closing `}` and then `,` or `]`; in `args`, `,` and a key, or the closing `}` and the event's
//! own follower; in an array, `,` and a value or `]`. Quotes before that end are text. The event
//! is written out again as valid JSON (inner quotes escaped, a stray backslash doubled, control
//! characters as `\u00XX`) and read by the strict reader, so it reads exactly as the same event
//! escaped correctly would.

use super::scan::{skip_ws, Step, Stop};

/// How far past a string's start the real end is looked for before the event is declared beyond
/// repair (a frame name or path is a few hundred bytes; this bounds the work on a file that is
/// not JSON at all).
const MAX_STRING: usize = 64 << 10;

/// The keys a trace event object has (Trace Event Format and Kineto): a quote followed by `, "pid":`
/// ends the string before it; a quote followed by `, "dtype":` is text.
const EVENT_KEYS: &[&[u8]] = &[
    b"ph",
    b"cat",
    b"name",
    b"pid",
    b"tid",
    b"ts",
    b"dur",
    b"id",
    b"args",
    b"bp",
    b"s",
    b"tts",
    b"tdur",
    b"cname",
    b"id2",
    b"scope",
    b"bind_id",
    b"flow_in",
    b"flow_out",
    b"sf",
    b"esf",
    b"stack",
];

/// An event written out again as valid JSON.
#[derive(Debug)]
pub struct Repaired {
    /// The event's text, repaired.
    pub text: Vec<u8>,
    /// Position after the event's closing brace in the original buffer.
    pub end: usize,
    /// Position (in the original buffer) of the first string repaired.
    pub first_at: usize,
    /// What was repaired there.
    pub what: &'static str,
    /// Strings repaired in the event.
    pub strings: u32,
}

/// What must follow a value for it to have ended there.
#[derive(Clone, Copy)]
enum Follow {
    /// A member of the event object itself.
    EventMember,
    /// A member of an object inside the event (`args`...), at nesting `depth` (1 = `args`).
    Member { depth: usize },
    /// An element of an array inside the event.
    Element,
}

/// The walk's output and findings.
struct Writer<'a> {
    buf: &'a [u8],
    out: Vec<u8>,
    first_at: Option<(usize, &'static str)>,
    strings: u32,
    /// Enclosing containers from the event outwards: `}` or `]` closers with their follows.
    stack: Vec<Follow>,
    /// No more text comes after the buffer: its end may follow the event array's `]`.
    at_end: bool,
}

/// Rewrites the event object at `pos` (a `{`) as valid JSON. `Stop::Incomplete` when the buffer
/// ends before the event could be settled (unless `at_end`: no more text comes); `Stop::Bad`
/// when it cannot be repaired.
pub fn event(buf: &[u8], pos: usize, at_end: bool) -> Step<Repaired> {
    let mut w = Writer { buf, out: Vec::with_capacity(512), first_at: None, strings: 0, stack: Vec::new(), at_end };
    let end = w.object(pos, Follow::EventMember)?;
    let (first_at, what) = w.first_at.unwrap_or((pos, "nothing"));
    Ok(Repaired { text: w.out, end, first_at, what, strings: w.strings })
}

impl Writer<'_> {
    /// Copies whitespace from `i`; returns the next position.
    fn ws(&mut self, i: usize) -> usize {
        let j = skip_ws(self.buf, i);
        self.out.extend_from_slice(&self.buf[i..j]);
        j
    }

    fn byte(&self, i: usize) -> Step<u8> {
        self.buf.get(i).copied().ok_or(Stop::Incomplete)
    }

    /// The object at `i` (`{`) whose members are followed as `member`.
    fn object(&mut self, i: usize, member: Follow) -> Step<usize> {
        self.container(i, b'}', member, "expected ',' or '}' in event", Self::member)
    }

    /// The array at `i` (`[`).
    fn array(&mut self, i: usize) -> Step<usize> {
        self.container(i, b']', Follow::Element, "expected ',' or ']' in an array", Self::value)
    }

    /// The container at `i` (its opening bracket) up to `close`: elements separated by commas,
    /// each read by `element` and followed as `follow`; `what` names a missing comma.
    fn container(
        &mut self,
        i: usize,
        close: u8,
        follow: Follow,
        what: &'static str,
        element: fn(&mut Self, usize, Follow) -> Step<usize>,
    ) -> Step<usize> {
        self.out.push(self.buf[i]);
        let mut i = i + 1;
        let mut first = true;
        self.stack.push(follow);
        loop {
            i = self.ws(i);
            match self.byte(i)? {
                b if b == close => {
                    self.out.push(close);
                    self.stack.pop();
                    return Ok(i + 1);
                }
                b',' if !first => {
                    self.out.push(b',');
                    i = self.ws(i + 1);
                }
                _ if first => {}
                _ => return Err(Stop::Bad(what, i)),
            }
            first = false;
            i = element(self, i, follow)?;
        }
    }

    /// One member of an object at `i`: its key, `:` and its value, followed as `follow`.
    fn member(&mut self, i: usize, follow: Follow) -> Step<usize> {
        if self.byte(i)? != b'"' {
            return Err(Stop::Bad("expected a key", i));
        }
        let i = self.string(i, None)?;
        let i = self.ws(i);
        if self.byte(i)? != b':' {
            return Err(Stop::Bad("expected ':' after a key", i));
        }
        self.out.push(b':');
        let i = self.ws(i + 1);
        self.value(i, follow)
    }

    /// One value at `i`, followed as `follow`.
    fn value(&mut self, i: usize, follow: Follow) -> Step<usize> {
        match self.byte(i)? {
            b'"' => self.string(i, Some(follow)),
            b'{' => {
                let depth = match follow {
                    Follow::EventMember => 1,
                    Follow::Member { depth } => depth + 1,
                    Follow::Element => self.stack.len(),
                };
                self.object(i, Follow::Member { depth })
            }
            b'[' => self.array(i),
            _ => {
                let end = super::scan::scalar_end(self.buf, i)?;
                self.out.extend_from_slice(&self.buf[i..end]);
                Ok(end)
            }
        }
    }

    /// The string at `i`; a value string ends at the first quote that `follow` accepts after it,
    /// a key at its first quote (which must be followed by `:`).
    fn string(&mut self, i: usize, follow: Option<Follow>) -> Step<usize> {
        let buf = self.buf;
        let mut j = i + 1;
        let close = loop {
            if j - i > MAX_STRING {
                return Err(Stop::Bad("a string whose end cannot be found", i));
            }
            let Some(off) = memchr::memchr2(b'"', b'\\', buf.get(j..).unwrap_or(&[])) else {
                return Err(if buf.len() - i > MAX_STRING {
                    Stop::Bad("a string whose end cannot be found", i)
                } else {
                    Stop::Incomplete
                });
            };
            let q = j + off;
            if buf[q] == b'\\' {
                j = q + 2;
                continue;
            }
            let ends = match follow {
                // A key is never repaired: its first quote must be followed by `:`.
                None if self.byte(skip_ws(buf, q + 1))? != b':' => return Err(Stop::Bad("expected ':' after a key", q + 1)),
                None => true,
                Some(f) => self.follows(q + 1, f, self.stack.len())?,
            };
            if ends {
                break q;
            }
            j = q + 1;
        };
        if matches!(follow, Some(Follow::EventMember)) && self.holds_an_event_key(i + 1, close)? {
            // `"ph": "X" "cat": "kernel"` is a missing comma, not a quote inside a value.
            return Err(Stop::Bad("expected ',' or '}' in event", i));
        }
        self.write_string(i, close);
        Ok(close + 1)
    }

    /// True if the text at `p` may follow a value of kind `f` whose container is `stack[..level]`.
    fn follows(&self, p: usize, f: Follow, level: usize) -> Step<bool> {
        let buf = self.buf;
        let p = skip_ws(buf, p);
        let b = self.byte(p)?;
        match f {
            Follow::EventMember | Follow::Member { .. } if b == b'}' => self.closed(p + 1, level),
            Follow::Element if b == b']' => self.closed(p + 1, level),
            Follow::EventMember | Follow::Member { .. } if b == b',' => {
                let k = skip_ws(buf, p + 1);
                if self.byte(k)? != b'"' {
                    return Ok(false);
                }
                Ok(match (self.key_at(k)?, f) {
                    (Some(key), Follow::EventMember) => EVENT_KEYS.contains(&key),
                    (Some(_), _) => true,
                    (None, _) => false,
                })
            }
            Follow::Element if b == b',' => {
                let k = skip_ws(buf, p + 1);
                Ok(matches!(self.byte(k)?, b'"' | b'[' | b'{' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n'))
            }
            _ => Ok(false),
        }
    }

    /// True if the text at `p`, right after the container `stack[level - 1]` closed, may follow
    /// that container: for the event itself, `,` and the next event's first key, or the event
    /// array's `]` and what may follow it (`,` and a top-level key, `}`, or the text's end).
    fn closed(&self, p: usize, level: usize) -> Step<bool> {
        if level > 1 {
            return self.follows(p, self.stack[level - 2], level - 1);
        }
        let buf = self.buf;
        let p = skip_ws(buf, p);
        match self.byte(p)? {
            b']' => {
                let q = skip_ws(buf, p + 1);
                match buf.get(q) {
                    None if self.at_end => Ok(true),
                    None => Err(Stop::Incomplete),
                    Some(b'}') => Ok(true),
                    Some(b',') => Ok(self.byte(skip_ws(buf, q + 1))? == b'"'),
                    Some(_) => Ok(false),
                }
            }
            b',' => {
                let q = skip_ws(buf, p + 1);
                if self.byte(q)? != b'{' {
                    return Ok(false);
                }
                let k = skip_ws(buf, q + 1);
                Ok(match self.byte(k)? {
                    b'}' => true,
                    b'"' => self.key_at(k)?.is_some_and(|key| EVENT_KEYS.contains(&key)),
                    _ => false,
                })
            }
            _ => Ok(false),
        }
    }

    /// True if the text between `from` and `to` holds an event key followed by `:` (`"cat": `).
    fn holds_an_event_key(&self, from: usize, to: usize) -> Step<bool> {
        let mut j = from;
        while let Some(off) = memchr::memchr(b'"', &self.buf[j..to]) {
            let q = j + off;
            if self.key_at(q)?.is_some_and(|key| EVENT_KEYS.contains(&key)) {
                return Ok(true);
            }
            j = q + 1;
        }
        Ok(false)
    }

    /// The key at `k` (a quote) when a `:` follows it; `None` when something else does.
    fn key_at(&self, k: usize) -> Step<Option<&[u8]>> {
        let buf = self.buf;
        let Some(len) = memchr::memchr2(b'"', b'\\', &buf[k + 1..]) else { return Err(Stop::Incomplete) };
        if buf[k + 1 + len] != b'"' {
            return Ok(None);
        }
        let colon = skip_ws(buf, k + 2 + len);
        Ok((self.byte(colon)? == b':').then(|| &buf[k + 1..k + 1 + len]))
    }

    /// Writes the string whose quotes are at `open` and `close`, escaping what must be.
    fn write_string(&mut self, open: usize, close: usize) {
        let raw = &self.buf[open + 1..close];
        self.out.push(b'"');
        let mut fixed: Option<&'static str> = None;
        let mut k = 0;
        while k < raw.len() {
            let b = raw[k];
            match b {
                b'\\' => {
                    let valid = match raw.get(k + 1) {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => true,
                        Some(b'u') => raw.get(k + 2..k + 6).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)),
                        _ => false,
                    };
                    if valid {
                        self.out.extend_from_slice(&raw[k..k + 2]);
                        k += 2;
                        continue;
                    }
                    fixed.get_or_insert("a backslash that starts no escape");
                    self.out.extend_from_slice(b"\\\\");
                }
                b'"' => {
                    fixed = Some("an unescaped double quote");
                    self.out.extend_from_slice(b"\\\"");
                }
                0..=0x1f => {
                    fixed.get_or_insert("a raw control character");
                    self.out.extend_from_slice(format!("\\u{b:04x}").as_bytes());
                }
                _ => self.out.push(b),
            }
            k += 1;
        }
        self.out.push(b'"');
        if let Some(what) = fixed {
            self.strings += 1;
            self.first_at.get_or_insert((open, what));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fix(s: &str) -> (String, usize, u32) {
        let r = event(s.as_bytes(), 0, false).unwrap();
        (String::from_utf8(r.text).unwrap(), r.end, r.strings)
    }

    #[test]
    fn an_unescaped_quote_in_a_name_ends_at_the_next_event_key() {
        let s = r#"{"ph": "X", "cat": "python_function", "name": "<eval_with_key>.3 {"device": "cpu", "dtype": "float32"}", "pid": 1, "tid": 2, "ts": 5, "dur": 1, "args": {"Python id": 3}}, {"ph": "X"}"#;
        let (text, end, n) = fix(s);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["name"], r#"<eval_with_key>.3 {"device": "cpu", "dtype": "float32"}"#);
        assert_eq!(v["pid"], 1);
        assert_eq!(v["args"]["Python id"], 3);
        assert_eq!(&s[end..end + 1], ",");
        assert_eq!(n, 1);
    }

    #[test]
    fn json_looking_names_are_text_up_to_the_real_end() {
        for inner in [r#"[{"device": "cpu"}, {"device": "cuda"}]"#, r#"[{"device": "cpu"}]"#, r#"{"a": 1}, {"b": 2"#] {
            let s = format!(r#"{{"ph": "X", "name": "f {inner}", "pid": 1}}, {{"ph": "X", "name": "g"}}]}}"#);
            let (text, _, n) = fix(&s);
            let v: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(v["name"], format!("f {inner}"), "{inner}");
            assert_eq!(n, 1);
        }
        // The last event of a bare array, at the end of the text.
        let s = r#"{"ph": "X", "pid": 1, "name": "f "x""}]"#;
        assert_eq!(event(s.as_bytes(), 0, false).unwrap_err(), Stop::Incomplete);
        let r = event(s.as_bytes(), 0, true).unwrap();
        assert_eq!(r.end, s.len() - 1);
    }

    #[test]
    fn a_quoted_word_at_the_end_of_the_last_member() {
        let s = r#"{"ph": "X", "args": {"Python id": 3, "note": "say "hi""}}], "displayTimeUnit": "ms"}"#;
        let (text, _, n) = fix(s);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["args"]["note"], r#"say "hi""#);
        assert_eq!(n, 1);
    }

    #[test]
    fn stray_backslashes_and_control_characters_are_kept_as_text() {
        let s = "{\"ph\": \"X\", \"name\": \"C:\\Users\\me\\m.py(12): f\tg\", \"pid\": 1}, ";
        let (text, _, n) = fix(s);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["name"], "C:\\Users\\me\\m.py(12): f\tg");
        assert_eq!(n, 1);
    }

    #[test]
    fn valid_escapes_and_arrays_are_untouched() {
        let s = r#"{"ph": "X", "name": "a\"b\u0041", "args": {"Input type": ["c10::BFloat16", ""], "Input Dims": [[1, 2], []]}, "pid": 1}, {"#;
        let (text, _, n) = fix(s);
        assert_eq!(text, &s[..s.len() - 3]);
        assert_eq!(n, 0);
    }

    #[test]
    fn a_cut_event_asks_for_more_and_garbage_is_refused() {
        assert_eq!(event(br#"{"ph": "X", "name": "a "b" c"#, 0, false).unwrap_err(), Stop::Incomplete);
        let mut garbage = br#"{"ph": "X", "name": "a" 12 }, "#.to_vec();
        garbage.resize(garbage.len() + MAX_STRING + 10, b'x');
        assert!(matches!(event(&garbage, 0, false), Err(Stop::Bad(..))));
    }
}
