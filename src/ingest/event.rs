//! Decodes one trace event object, reading only the fields the model keeps and skipping the rest.

use super::number::{self, Quick};
use super::scan::{self, skip_ws, Step, Stop};
use std::borrow::Cow;

/// A process or thread id: Kineto writes numbers, but also strings ("Spans", "Traces").
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Id<'a> {
    #[default]
    Missing,
    Num(i64),
    Text(Cow<'a, str>),
}

/// A numeric field that may be absent or of the wrong type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Field<T> {
    #[default]
    Missing,
    /// Present but not a number.
    Bad,
    Value(T),
}

/// The `args` fields we keep.
#[derive(Debug, Default)]
pub struct Args<'a> {
    pub correlation: Option<i64>,
    pub external_id: Option<i64>,
    pub device: Option<i64>,
    pub stream: Option<i64>,
    pub grid: Option<[u32; 3]>,
    pub block: Option<[u32; 3]>,
    /// Raw JSON text of `Input Dims`, `Input type`, `Concrete Inputs`.
    pub input_dims: Option<&'a [u8]>,
    pub input_types: Option<&'a [u8]>,
    pub concrete_inputs: Option<&'a [u8]>,
    pub python_id: Option<i64>,
    pub python_parent_id: Option<i64>,
    /// `args.name` of metadata (`M`) events.
    pub name: Option<Cow<'a, str>>,
}

/// One event, borrowed from the input buffer.
#[derive(Debug, Default)]
pub struct RawEvent<'a> {
    /// First byte of `ph` (`X`, `s`, `f`, `M`, `i`...), 0 if absent.
    pub ph: u8,
    /// `cat` and `name` as raw (unescaped) bytes: UTF-8 is checked only when a name is first interned.
    pub cat: Cow<'a, [u8]>,
    pub name: Cow<'a, [u8]>,
    pub pid: Id<'a>,
    pub tid: Id<'a>,
    /// Start in ns.
    pub ts: Field<i64>,
    /// Duration in ns.
    pub dur: Field<i64>,
    /// Flow id.
    pub id: Option<i64>,
    pub args: Args<'a>,
}

impl RawEvent<'_> {
    /// The name as text (lossy), for messages.
    pub fn name_text(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.name)
    }
}

/// Walks the members of the object at `pos` (which is `{`): for each key, `on_member` gets the key
/// and the position of its value and returns the position after the value. Returns the position
/// after the closing brace. `what` names the object in syntax errors.
#[inline]
fn members<'a>(
    buf: &'a [u8],
    pos: usize,
    what: &'static str,
    mut on_member: impl FnMut(&'a [u8], usize) -> Step<usize>,
) -> Step<usize> {
    let mut i = pos + 1;
    let mut first = true;
    loop {
        i = skip_ws(buf, i);
        let Some(&b) = buf.get(i) else { return Err(Stop::Incomplete) };
        if b == b'}' {
            return Ok(i + 1);
        }
        if !first {
            if b != b',' {
                return Err(Stop::Bad(what, i));
            }
            i = skip_ws(buf, i + 1);
        }
        first = false;
        let (key, after_key) = raw_key(buf, i)?;
        i = scan::expect(buf, after_key, b':', "expected ':' after key")?;
        i = skip_ws(buf, i);
        if i >= buf.len() {
            return Err(Stop::Incomplete);
        }
        i = on_member(key, i)?;
    }
}

/// Parses the event object starting at `pos` (which is `{`) into `ev`, which must start out as
/// `RawEvent::default()` (the caller owns it, so nothing is copied on return: this runs once per
/// event). Returns the position after the closing brace.
#[inline]
pub fn parse_event<'a>(buf: &'a [u8], pos: usize, ev: &mut RawEvent<'a>) -> Step<usize> {
    members(buf, pos, "expected ',' or '}' in event", |key, i| {
        Ok(match key {
            b"ph" => ph_field(buf, i, &mut ev.ph)?,
            b"cat" => string_field(buf, i, &mut ev.cat)?,
            b"name" => string_field(buf, i, &mut ev.name)?,
            b"pid" => id_field(buf, i, &mut ev.pid)?,
            b"tid" => id_field(buf, i, &mut ev.tid)?,
            b"ts" => time_field(buf, i, &mut ev.ts)?,
            b"dur" => time_field(buf, i, &mut ev.dur)?,
            b"id" => {
                let mut id = Id::Missing;
                let end = id_field(buf, i, &mut id)?;
                ev.id = match id {
                    Id::Num(n) => Some(n),
                    Id::Text(t) => Some(hash_text(&t)),
                    Id::Missing => None,
                };
                end
            }
            b"args" if buf[i] == b'{' => parse_args(buf, i, &mut ev.args)?,
            _ => scan::skip_value(buf, i)?,
        })
    })
}

/// Reads an object key without unescaping (keys we care about never contain escapes).
#[inline(always)]
fn raw_key(buf: &[u8], i: usize) -> Step<(&[u8], usize)> {
    match buf.get(i) {
        None => Err(Stop::Incomplete),
        Some(b'"') => {
            let (end, _) = scan::string_end(buf, i)?;
            Ok((&buf[i + 1..end - 1], end))
        }
        Some(_) => Err(Stop::Bad("expected a key string", i)),
    }
}

/// The first byte of the phase string (`"X"`): no UTF-8 check or copy for one letter.
#[inline]
fn ph_field(buf: &[u8], i: usize, out: &mut u8) -> Step<usize> {
    if buf[i] == b'"' {
        let (end, escaped) = scan::string_end(buf, i)?;
        if !escaped {
            *out = if end > i + 2 { buf[i + 1] } else { 0 };
            return Ok(end);
        }
    }
    let (s, end) = scan::string(buf, i)?;
    *out = s.as_bytes().first().copied().unwrap_or(0);
    Ok(end)
}

fn string_field<'a>(buf: &'a [u8], i: usize, out: &mut Cow<'a, [u8]>) -> Step<usize> {
    if buf[i] == b'"' {
        let (s, end) = scan::raw_string(buf, i)?;
        *out = s;
        Ok(end)
    } else {
        // Wrong type: keep the raw text so the event is still named.
        let end = scan::skip_value(buf, i)?;
        *out = Cow::Borrowed(&buf[i..end]);
        Ok(end)
    }
}

fn id_field<'a>(buf: &'a [u8], i: usize, out: &mut Id<'a>) -> Step<usize> {
    if buf[i] == b'"' {
        let (s, end) = scan::string(buf, i)?;
        *out = match number::integer(s.as_bytes()) {
            Some(n) => Id::Num(n),
            None => Id::Text(s),
        };
        Ok(end)
    } else {
        match number::quick_integer(buf, i) {
            Quick::Done(v, end) => {
                *out = Id::Num(v);
                return Ok(end);
            }
            Quick::Incomplete => return Err(Stop::Incomplete),
            Quick::Slow => {}
        }
        let end = if matches!(buf[i], b'0'..=b'9' | b'-') { scan::number_end(buf, i)? } else { scan::skip_value(buf, i)? };
        *out = match number::integer(&buf[i..end]) {
            Some(n) => Id::Num(n),
            None => Id::Text(Cow::Owned(String::from_utf8_lossy(&buf[i..end]).into_owned())),
        };
        Ok(end)
    }
}

fn time_field(buf: &[u8], i: usize, out: &mut Field<i64>) -> Step<usize> {
    if buf[i] == b'"' {
        let (s, end) = scan::string(buf, i)?;
        *out = match number::micros_to_ns(s.trim().as_bytes()) {
            Some(v) => Field::Value(v),
            None => Field::Bad,
        };
        return Ok(end);
    }
    match number::quick_micros_to_ns(buf, i) {
        Quick::Done(v, end) => {
            *out = Field::Value(v);
            return Ok(end);
        }
        Quick::Incomplete => return Err(Stop::Incomplete),
        Quick::Slow => {}
    }
    let end = if matches!(buf[i], b'0'..=b'9' | b'-') { scan::number_end(buf, i)? } else { scan::skip_value(buf, i)? };
    *out = match number::micros_to_ns(&buf[i..end]) {
        Some(v) => Field::Value(v),
        None => Field::Bad,
    };
    Ok(end)
}

fn int_field(buf: &[u8], i: usize, out: &mut Option<i64>) -> Step<usize> {
    if buf[i] == b'"' {
        let (s, end) = scan::string(buf, i)?;
        *out = number::integer(s.as_bytes());
        return Ok(end);
    }
    match number::quick_integer(buf, i) {
        Quick::Done(v, end) => {
            *out = Some(v);
            return Ok(end);
        }
        Quick::Incomplete => return Err(Stop::Incomplete),
        Quick::Slow => {}
    }
    let end = if matches!(buf[i], b'0'..=b'9' | b'-') { scan::number_end(buf, i)? } else { scan::skip_value(buf, i)? };
    *out = number::integer(&buf[i..end]);
    Ok(end)
}

fn dim3_field(buf: &[u8], i: usize, out: &mut Option<[u32; 3]>) -> Step<usize> {
    let end = scan::skip_value(buf, i)?;
    let text = &buf[i..end];
    if text.first() != Some(&b'[') {
        return Ok(end);
    }
    let mut v = [1u32; 3];
    for (k, part) in text[1..text.len() - 1].split(|&b| b == b',').enumerate().take(3) {
        let t = trim(part);
        if t.is_empty() {
            continue;
        }
        v[k] = number::integer(t).and_then(|n| u32::try_from(n).ok()).unwrap_or(0);
    }
    *out = Some(v);
    Ok(end)
}

fn trim(b: &[u8]) -> &[u8] {
    let s = b.iter().position(|c| !c.is_ascii_whitespace()).unwrap_or(b.len());
    let e = b.iter().rposition(|c| !c.is_ascii_whitespace()).map_or(s, |p| p + 1);
    &b[s..e]
}

fn raw_field<'a>(buf: &'a [u8], i: usize, out: &mut Option<&'a [u8]>) -> Step<usize> {
    let end = scan::skip_value(buf, i)?;
    *out = Some(&buf[i..end]);
    Ok(end)
}

fn parse_args<'a>(buf: &'a [u8], pos: usize, args: &mut Args<'a>) -> Step<usize> {
    members(buf, pos, "expected ',' or '}' in args", |key, i| {
        Ok(match key {
            b"correlation" => int_field(buf, i, &mut args.correlation)?,
            b"External id" => int_field(buf, i, &mut args.external_id)?,
            b"device" => int_field(buf, i, &mut args.device)?,
            b"stream" => int_field(buf, i, &mut args.stream)?,
            b"grid" => dim3_field(buf, i, &mut args.grid)?,
            b"block" => dim3_field(buf, i, &mut args.block)?,
            b"Input Dims" => raw_field(buf, i, &mut args.input_dims)?,
            b"Input type" => raw_field(buf, i, &mut args.input_types)?,
            b"Concrete Inputs" => raw_field(buf, i, &mut args.concrete_inputs)?,
            b"Python id" => int_field(buf, i, &mut args.python_id)?,
            b"Python parent id" => int_field(buf, i, &mut args.python_parent_id)?,
            b"name" if buf[i] == b'"' => {
                let (s, end) = scan::string(buf, i)?;
                args.name = Some(s);
                end
            }
            _ => scan::skip_value(buf, i)?,
        })
    })
}

/// Stable numeric stand-in for a textual id.
fn hash_text(t: &str) -> i64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in t.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x100000001b3);
    }
    (h >> 1) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_event(buf: &[u8], pos: usize) -> Step<(RawEvent<'_>, usize)> {
        let mut ev = RawEvent::default();
        let end = super::parse_event(buf, pos, &mut ev)?;
        Ok((ev, end))
    }

    #[test]
    fn reads_a_kernel_event() {
        let s = br#"{"ph": "X", "cat": "kernel", "name": "a<b>&c", "pid": 0, "tid": 7, "ts": 10.5, "dur": 6.144, "args": {"External id": 29059, "device": 0, "stream": 7, "correlation": 115120, "grid": [4, 8, 4], "block": [128, 1, 1], "est. achieved occupancy %": 0}} "#;
        let (ev, end) = parse_event(s, 0).unwrap();
        assert_eq!(end, s.len() - 1);
        assert_eq!(ev.ph, b'X');
        assert_eq!(&*ev.cat, b"kernel");
        assert_eq!(&*ev.name, b"a<b>&c");
        assert_eq!(ev.ts, Field::Value(10_500));
        assert_eq!(ev.dur, Field::Value(6_144));
        assert_eq!(ev.args.correlation, Some(115120));
        assert_eq!(ev.args.grid, Some([4, 8, 4]));
        assert_eq!(ev.tid, Id::Num(7));
    }

    #[test]
    fn keeps_raw_input_dims_and_text_pids() {
        let s = br#"{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":"Spans","tid":1,"ts":"5","args":{"Input Dims": [[4, 2048], [2048, 16]], "Input type": ["c10::BFloat16", ""]}}"#;
        let (ev, _) = parse_event(s, 0).unwrap();
        assert_eq!(ev.args.input_dims, Some(&b"[[4, 2048], [2048, 16]]"[..]));
        assert_eq!(ev.pid, Id::Text("Spans".into()));
        assert_eq!(ev.ts, Field::Value(5000));
        assert_eq!(ev.dur, Field::Missing);
    }

    #[test]
    fn wrong_types_are_flagged_not_fatal() {
        let (ev, _) = parse_event(br#"{"ph":"X","ts":"soon","dur":[1]}"#, 0).unwrap();
        assert_eq!(ev.ts, Field::Bad);
        assert_eq!(ev.dur, Field::Bad);
    }

    #[test]
    fn truncated_events_are_incomplete() {
        assert_eq!(parse_event(br#"{"ph":"X","name":"ab"#, 0).unwrap_err(), Stop::Incomplete);
    }
}
