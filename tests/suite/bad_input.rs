//! Bad input gets a clear error that says what and where, or a result with counted warnings —
//! never a panic, never silent loss.

use crate::common;
use common::*;
use traceprism::model::WarningKind;

fn err(bytes: &[u8]) -> String {
    match read_bytes(bytes) {
        Ok(_) => panic!("expected an error for {:?}", String::from_utf8_lossy(&bytes[..bytes.len().min(80)])),
        Err(e) => e.to_string(),
    }
}

const KERNEL: &str =
    r#"{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":10.5,"dur":2,"args":{"correlation":1,"stream":7,"device":0}}"#;

#[test]
fn empty_file() {
    assert!(err(b"").contains("empty input"));
    assert!(err(b"   \n").contains("empty input"));
}

#[test]
fn not_json() {
    let e = err(b"hello world");
    assert!(e.contains("neither Chrome-trace JSON nor a JAX XSpace") && e.contains("byte 0"), "{e}");
    let e = err(b"\x00\x01\x02 binary");
    assert!(e.contains("neither Chrome-trace JSON nor a JAX XSpace"), "{e}");
}

#[test]
fn truncated_gzip() {
    let text = format!(r#"{{"traceEvents": [{KERNEL}, {KERNEL}]}}"#).repeat(1);
    let gz = gzip(text.as_bytes());
    assert!(read_bytes(&gz).is_ok());
    // Cut short, the complete events before the cut are read, with a warning (tests/truncation.rs
    // cuts real traces everywhere); cut before any event, it is an error that says so.
    match read_bytes(&gz[..gz.len() / 2]) {
        Ok(t) => assert!(t.stats.truncation.as_ref().is_some_and(|c| c.reason.contains("gzip stream ends early"))),
        Err(e) => assert!(e.to_string().contains("gzip stream ends early"), "{e}"),
    }
    let e = err(&gz[..5]);
    assert!(e.contains("truncated gzip"), "{e}");
}

#[test]
fn corrupt_gzip() {
    let text = format!(r#"{{"traceEvents": [{KERNEL}]}}"#);
    let mut gz = gzip(text.as_bytes());
    for b in &mut gz[12..20] {
        *b ^= 0x5a;
    }
    let e = err(&gz);
    assert!(e.contains("gzip") || e.contains("JSON"), "{e}");
}

#[test]
fn truncated_json_names_the_event_and_byte() {
    let text = format!(r#"{{"traceEvents": [{KERNEL}, {KERNEL}, {KERNEL}"#);
    let cut = &text.as_bytes()[..text.len() - 10];
    // Read up to the last complete event, with the warning ...
    let t = read_bytes(cut).unwrap();
    let c = t.stats.truncation.clone().expect("a warning");
    assert_eq!((c.events_read, c.text_stops_at), (2, cut.len() as u64));
    assert_eq!(t.gpu.len(), 2);
    // ... or, in strict mode, an error naming the event and the byte.
    let strict = traceprism::Options { strict: true, ..Default::default() };
    let e = traceprism::Analysis::new(t, strict).err().expect("strict").to_string();
    assert!(e.contains("truncated trace") && e.contains("event 2") && e.contains(&format!("byte {}", cut.len())), "{e}");
}

#[test]
fn json_that_is_not_a_trace() {
    assert!(err(br#"{"foo": 1, "bar": [1,2]}"#).contains("no \"traceEvents\""));
    assert!(err(br#"{"traceEvents": []}"#).contains("empty"));
    assert!(err(b"[1, 2, 3]").contains("not a trace"));
    assert!(err(br#"{"traceEvents": {"a": 1}}"#).contains("not an array"));
}

#[test]
fn syntax_error_inside_an_event_says_where() {
    let text = format!(r#"{{"traceEvents": [{KERNEL}, {{"ph": "X" "cat": "kernel"}}]}}"#);
    let e = err(text.as_bytes());
    assert!(e.contains("event 1") && e.contains("byte"), "{e}");
}

#[test]
fn wrong_types_are_counted_not_fatal() {
    let text = format!(
        r#"{{"traceEvents": [{KERNEL}, {{"ph":"X","cat":"kernel","name":"bad","ts":"soon","dur":1}}, {{"ph":"X","cat":"kernel","name":[1,2],"pid":"gpu","tid":{{}},"ts":1,"dur":1,"args":{{"correlation":"x","grid":"big"}}}}]}}"#
    );
    let t = read_bytes(text.as_bytes()).unwrap();
    assert_eq!(t.kernel_rows().count(), 2, "the event with a bad ts is skipped, the odd-typed one kept");
    assert_eq!(t.warnings.counts.get(&WarningKind::TsNotANumber), Some(&1));
    assert_eq!(t.stats.skipped, 1);
    assert_eq!(t.warnings.examples[0].event, 1, "{:?}", t.warnings.examples);
}

#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    let mut deep = String::from(r#"{"traceEvents": ["#);
    deep.push_str(KERNEL);
    deep.push_str(r#", {"ph":"X","cat":"cpu_op","name":"n","ts":1,"dur":1,"args":{"x":"#);
    deep.push_str(&"[".repeat(100_000));
    deep.push_str(&"]".repeat(100_000));
    deep.push_str("}}]}");
    let t = read_bytes(deep.as_bytes()).unwrap();
    assert_eq!(t.ops.len(), 1);
    let bare = format!("[{}{}]", "[".repeat(100_000), "]".repeat(100_000));
    assert!(err(bare.as_bytes()).contains("not a trace"));
    let unclosed = format!("[{KERNEL}, {}", "[".repeat(100_000));
    let t = read_bytes(unclosed.as_bytes()).unwrap();
    assert!(t.stats.truncation.is_some() && t.gpu.len() == 1);
}

#[test]
fn missing_times_and_negative_durations_are_counted() {
    let text = format!(
        r#"[{KERNEL}, {{"ph":"X","cat":"kernel","name":"no-ts","dur":1}}, {{"ph":"X","cat":"kernel","name":"no-dur","ts":1}}, {{"ph":"X","cat":"kernel","name":"neg","ts":1,"dur":-5}}]"#
    );
    let t = read_bytes(text.as_bytes()).unwrap();
    assert_eq!(t.kernel_rows().count(), 2);
    assert_eq!(t.warnings.counts.get(&WarningKind::EventWithoutTs), Some(&1));
    assert_eq!(t.warnings.counts.get(&WarningKind::CompleteWithoutDur), Some(&1));
    assert_eq!(t.warnings.counts.get(&WarningKind::NegativeDur), Some(&1));
    assert_eq!(t.warnings.total(), 3);
}

#[test]
fn bare_array_form_and_escapes() {
    let text = r#"[{"ph":"X","cat":"kernel","name":"void f<\u0041, \"b\">","ts":1.25,"dur":0.5,"args":{"correlation":3}}]"#;
    let t = read_bytes(text.as_bytes()).unwrap();
    assert_eq!(t.name(t.gpu.name[0]), "void f<A, \"b\">");
    assert_eq!(t.gpu.ts[0], 1250);
    assert!(!t.meta.object_form);
}

#[test]
fn trailing_garbage_is_an_error() {
    let text = format!(r#"{{"traceEvents": [{KERNEL}]}} extra"#);
    assert!(err(text.as_bytes()).contains("after the end"));
}
