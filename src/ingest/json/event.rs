//! Decodes one trace event object, reading only the fields the model keeps and skipping the rest.

use super::key_order::{KeyCursor, KeyOrder};
use super::number::{self, Quick};
use super::scan::{self, skip_ws, Step, Stop};
use crate::ingest::interchange::{Args, Field, Id, RawEvent};
use std::borrow::Cow;

/// Walks the members of the object at `pos` (which is `{`): for each key, `on_member` gets what the
/// key means (read through `order`, see [`KeyOrder`]), the position of its value and the key
/// cursor (to switch context), and returns the position after the value. Returns the position
/// after the closing brace. `what` names the object in syntax errors.
#[inline(always)]
fn members<K: Copy>(
    buf: &[u8],
    pos: usize,
    what: &'static str,
    order: &mut KeyOrder<K>,
    mut at: KeyCursor,
    classify: fn(&[u8]) -> K,
    mut on_member: impl FnMut(K, usize, &mut KeyCursor) -> Step<usize>,
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
        let (key, value) = order.read(buf, i, &mut at, classify)?;
        i = on_member(key, value, &mut at)?;
    }
}

/// What an event's key means to the reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EventKey {
    Ph,
    Cat,
    Name,
    Pid,
    Tid,
    Ts,
    Dur,
    Id,
    Args,
    Other,
}

fn event_key(key: &[u8]) -> EventKey {
    match key {
        b"ph" => EventKey::Ph,
        b"cat" => EventKey::Cat,
        b"name" => EventKey::Name,
        b"pid" => EventKey::Pid,
        b"tid" => EventKey::Tid,
        b"ts" => EventKey::Ts,
        b"dur" => EventKey::Dur,
        b"id" => EventKey::Id,
        b"args" => EventKey::Args,
        _ => EventKey::Other,
    }
}

/// What a key inside `args` means to the reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ArgKey {
    Correlation,
    ExternalId,
    Device,
    Stream,
    Grid,
    Block,
    InputDims,
    InputType,
    ConcreteInputs,
    PythonId,
    PythonParentId,
    CallStack,
    Name,
    Group,
    GroupRanks,
    Collective,
    InNelems,
    OutNelems,
    GroupSize,
    Dtype,
    HloOp,
    HloModule,
    KernelDetails,
    Kernel,
    Bytes,
    Size,
    GraphId,
    GraphNode,
    Other,
}

fn arg_key(key: &[u8]) -> ArgKey {
    match key {
        b"correlation" => ArgKey::Correlation,
        b"External id" => ArgKey::ExternalId,
        b"device" => ArgKey::Device,
        b"stream" => ArgKey::Stream,
        b"grid" => ArgKey::Grid,
        b"graph id" => ArgKey::GraphId,
        b"graph node id" => ArgKey::GraphNode,
        b"block" => ArgKey::Block,
        b"Input Dims" => ArgKey::InputDims,
        b"Input type" => ArgKey::InputType,
        b"Concrete Inputs" => ArgKey::ConcreteInputs,
        b"Python id" => ArgKey::PythonId,
        b"Python parent id" => ArgKey::PythonParentId,
        b"Call stack" => ArgKey::CallStack,
        b"name" => ArgKey::Name,
        b"Process Group Name" => ArgKey::Group,
        b"Process Group Ranks" => ArgKey::GroupRanks,
        b"Collective name" => ArgKey::Collective,
        b"In msg nelems" => ArgKey::InNelems,
        b"Out msg nelems" => ArgKey::OutNelems,
        b"Group size" => ArgKey::GroupSize,
        b"dtype" => ArgKey::Dtype,
        // JAX traces in Chrome JSON (xprof's export).
        b"correlation_id" => ArgKey::Correlation,
        b"hlo_op" => ArgKey::HloOp,
        b"hlo_module" => ArgKey::HloModule,
        b"kernel_details" => ArgKey::KernelDetails,
        b"kernel" => ArgKey::Kernel,
        b"bytes" => ArgKey::Bytes,
        b"size" => ArgKey::Size,
        _ => ArgKey::Other,
    }
}

/// The key orders of events and of their `args`, learned as the text is read (one per reader).
#[derive(Debug, Clone, Default)]
pub struct EventKeys {
    event: KeyOrder<EventKey>,
    args: KeyOrder<ArgKey>,
}

/// A small number standing for a string, to pick a key-order context (`ph` for the event's keys,
/// `cat` for its args' keys: kernels and CPU ops order their args differently).
#[inline(always)]
fn context_of(text: &[u8]) -> usize {
    text.len().wrapping_mul(31) ^ text.first().copied().unwrap_or(0) as usize
}

/// Parses the event object starting at `pos` (which is `{`) into `ev`, which must start out as
/// `RawEvent::default()` (the caller owns it, so nothing is copied on return: this runs once per
/// event). Returns the position after the closing brace.
#[inline]
pub fn parse_event<'a>(buf: &'a [u8], pos: usize, ev: &mut RawEvent<'a>, keys: &mut EventKeys) -> Step<usize> {
    let EventKeys { event, args } = keys;
    members(buf, pos, "expected ',' or '}' in event", event, KeyCursor::new(0), event_key, |key, i, at| {
        Ok(match key {
            EventKey::Ph => {
                let end = ph_field(buf, i, &mut ev.ph)?;
                at.switch_to(ev.ph as usize);
                end
            }
            EventKey::Cat => string_field(buf, i, &mut ev.cat)?,
            EventKey::Name => string_field(buf, i, &mut ev.name)?,
            EventKey::Pid => id_field(buf, i, &mut ev.pid)?,
            EventKey::Tid => id_field(buf, i, &mut ev.tid)?,
            EventKey::Ts => time_field(buf, i, &mut ev.ts)?,
            EventKey::Dur => time_field(buf, i, &mut ev.dur)?,
            EventKey::Id => {
                let mut id = Id::Missing;
                let end = id_field(buf, i, &mut id)?;
                ev.id = match id {
                    Id::Num(n) => Some(n),
                    Id::Text(t) => Some(hash_text(&t)),
                    Id::Missing => None,
                };
                end
            }
            EventKey::Args if buf[i] == b'{' => parse_args(buf, i, &mut ev.args, args, KeyCursor::new(context_of(&ev.cat)))?,
            EventKey::Args | EventKey::Other => scan::skip_value(buf, i)?,
        })
    })
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

/// A string value (anything else is skipped and left unset).
fn text_field<'a>(buf: &'a [u8], i: usize, out: &mut Option<Cow<'a, str>>) -> Step<usize> {
    if buf[i] != b'"' {
        return scan::skip_value(buf, i);
    }
    let (s, end) = scan::string(buf, i)?;
    *out = Some(s);
    Ok(end)
}

fn raw_field<'a>(buf: &'a [u8], i: usize, out: &mut Option<&'a [u8]>) -> Step<usize> {
    let end = scan::skip_value(buf, i)?;
    *out = Some(&buf[i..end]);
    Ok(end)
}

fn parse_args<'a>(buf: &'a [u8], pos: usize, args: &mut Args<'a>, order: &mut KeyOrder<ArgKey>, at: KeyCursor) -> Step<usize> {
    members(buf, pos, "expected ',' or '}' in args", order, at, arg_key, |key, i, _| {
        Ok(match key {
            ArgKey::Correlation => int_field(buf, i, &mut args.correlation)?,
            ArgKey::Bytes => int_field(buf, i, &mut args.bytes)?,
            ArgKey::Size => int_field(buf, i, &mut args.size)?,
            ArgKey::GraphId => int_field(buf, i, &mut args.graph_id)?,
            ArgKey::GraphNode => int_field(buf, i, &mut args.graph_node)?,
            ArgKey::ExternalId => int_field(buf, i, &mut args.external_id)?,
            ArgKey::Device => int_field(buf, i, &mut args.device)?,
            ArgKey::Stream => int_field(buf, i, &mut args.stream)?,
            ArgKey::Grid => dim3_field(buf, i, &mut args.grid)?,
            ArgKey::Block => dim3_field(buf, i, &mut args.block)?,
            ArgKey::InputDims => raw_field(buf, i, &mut args.input_dims)?,
            ArgKey::InputType => raw_field(buf, i, &mut args.input_types)?,
            ArgKey::ConcreteInputs => raw_field(buf, i, &mut args.concrete_inputs)?,
            ArgKey::PythonId => int_field(buf, i, &mut args.python_id)?,
            ArgKey::PythonParentId => int_field(buf, i, &mut args.python_parent_id)?,
            ArgKey::CallStack => text_field(buf, i, &mut args.call_stack)?,
            ArgKey::Name if buf[i] == b'"' => {
                let (s, end) = scan::string(buf, i)?;
                args.name = Some(s);
                end
            }
            ArgKey::Group => text_field(buf, i, &mut args.comm.group)?,
            ArgKey::GroupRanks => text_field(buf, i, &mut args.comm.group_ranks)?,
            ArgKey::Collective => text_field(buf, i, &mut args.comm.collective)?,
            ArgKey::Dtype => text_field(buf, i, &mut args.comm.dtype)?,
            ArgKey::InNelems => int_field(buf, i, &mut args.comm.in_nelems)?,
            ArgKey::OutNelems => int_field(buf, i, &mut args.comm.out_nelems)?,
            ArgKey::GroupSize => int_field(buf, i, &mut args.comm.group_size)?,
            ArgKey::HloOp => text_field(buf, i, &mut args.xla.hlo_op)?,
            ArgKey::HloModule => text_field(buf, i, &mut args.xla.hlo_module)?,
            ArgKey::KernelDetails => text_field(buf, i, &mut args.xla.kernel_details)?,
            ArgKey::Kernel => text_field(buf, i, &mut args.kernel)?,
            ArgKey::Name | ArgKey::Other => scan::skip_value(buf, i)?,
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
        let end = super::parse_event(buf, pos, &mut ev, &mut EventKeys::default())?;
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
