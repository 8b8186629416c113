//! A plain-JSON trace split into byte ranges at guessed event starts, each range parsed on its
//! own into a `Part`, moved through its byte form and adopted in order, gives exactly the model of
//! a sequential read; a wrong guess is refused and the range is parsed again in order.

use crate::common;
use common::*;
use traceprism::ingest::{document_form, likely_event_start, DocumentForm};
use traceprism::read::{Part, PartReader};
use traceprism::{Reader, Trace};

/// Pushes `text` in 256 KiB pieces (below the native reader's own two-thread split).
fn push_plain(r: &mut Reader, text: &[u8]) {
    for piece in text.chunks(256 << 10) {
        r.push(piece).unwrap();
    }
}

fn sequential(text: &[u8]) -> Trace {
    let mut r = Reader::new();
    push_plain(&mut r, text);
    traceprism::pipeline::finish(r).unwrap()
}

/// Parses `text[start..end]` as a part and sends it through bytes.
fn part_of(text: &[u8], start: usize, end: usize, form: DocumentForm) -> traceprism::Result<Part> {
    let mut p = PartReader::new(form, start as u64);
    for piece in text[start..end].chunks(1 << 20) {
        p.push(piece)?;
    }
    let bytes = p.finish().to_bytes();
    Part::from_bytes(&bytes)
}

/// Reads `text` as range 0 plus parts at `splits`, adopting parts in order and parsing refused
/// ranges in order. Returns the model and the number of parts adopted.
fn read_in_parts(text: &[u8], splits: &[usize]) -> (Trace, usize) {
    let form = document_form(text).unwrap();
    let mut bounds = vec![0];
    bounds.extend_from_slice(splits);
    bounds.push(text.len());
    let mut r = Reader::new();
    push_plain(&mut r, &text[..bounds[1]]);
    let mut adopted = 0;
    for w in bounds[1..].windows(2) {
        let (start, end) = (w[0], w[1]);
        let kept = part_of(text, start, end, form).is_ok_and(|part| r.adopt_part(part));
        if kept {
            adopted += 1;
        } else {
            push_plain(&mut r, &text[start..end]);
        }
    }
    (traceprism::pipeline::finish(r).unwrap(), adopted)
}

/// Guessed event starts near `k * len / n`.
fn guesses(text: &[u8], n: usize) -> Vec<usize> {
    (1..n).filter_map(|k| likely_event_start(text, k * text.len() / n)).collect()
}

#[test]
fn parts_adopted_in_order_equal_a_sequential_read() {
    let text = plain_fixture("llama_dense_eager.pt.trace.json.gz");
    let whole = sequential(&text);
    assert!(whole.stats.events > 10_000, "fixture has events");
    for n in [2, 3, 4] {
        let splits = guesses(&text, n);
        assert_eq!(splits.len(), n - 1, "a guess for every split");
        let (t, adopted) = read_in_parts(&text, &splits);
        assert_eq!(adopted, n - 1, "{n} ranges: every part adopted");
        assert_eq!(t.stats.parallel_blocks, (n - 1) as u64);
        assert_eq!(all_columns(&t), all_columns(&whole), "{n} ranges");
    }
}

#[test]
fn bare_array_parts_equal_a_sequential_read() {
    // The same events as a bare array `[...]`.
    let text = String::from_utf8(plain_fixture("llama_dense_eager.pt.trace.json.gz")).unwrap();
    let start = text.find("\"traceEvents\": [").unwrap() + "\"traceEvents\": ".len();
    let end = text.rfind(']').unwrap();
    let bare = &text.as_bytes()[start..=end];
    assert_eq!(document_form(bare), Some(DocumentForm::BareArray));
    let whole = sequential(bare);
    let (t, adopted) = read_in_parts(bare, &guesses(bare, 3));
    assert_eq!(adopted, 2);
    assert_eq!(all_columns(&t), all_columns(&whole));
}

#[test]
fn a_guess_inside_a_string_is_refused_and_the_range_reparsed() {
    // An event whose name contains `}, {`: the guess lands inside that string.
    let mut text = String::from(r#"{"traceEvents": [{"ph":"X","cat":"kernel","name":"a","ts":1,"dur":1}, "#);
    text.push_str(r#"{"ph":"X","cat":"kernel","name":"looks like }, {\"ph\":\"X\"} a boundary","ts":2,"dur":1}, "#);
    text.push_str(r#"{"ph":"X","cat":"cpu_op","name":"op","ts":3,"dur":1,"pid":1,"tid":1}]}"#);
    let bytes = text.as_bytes();
    let guess = likely_event_start(bytes, text.find("looks").unwrap()).unwrap();
    assert!(text[guess..].starts_with(r#"{\"ph"#), "the guess is inside the string");
    let whole = sequential(bytes);
    assert_eq!(whole.gpu.len(), 2);
    // Whether the part itself parses or not, it must not be kept.
    let mut r = Reader::new();
    push_plain(&mut r, &bytes[..guess]);
    if let Ok(part) = part_of(bytes, guess, bytes.len(), DocumentForm::Object) {
        assert!(!r.adopt_part(part), "a part starting inside a string was adopted");
    }
    let (t, adopted) = read_in_parts(bytes, &[guess]);
    assert_eq!(adopted, 0);
    assert_eq!(all_columns(&t), all_columns(&whole));
}

#[test]
fn a_part_that_parses_but_starts_inside_an_event_is_refused() {
    // The guess lands on an object inside an event's args; the range ends right after that
    // inner array, so the part parses cleanly (as if the event array had ended) — and is refused.
    let text = r#"[{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":1,"args":{"list":[{"a":1}, {"ph":"X","cat":"kernel","name":"fake","ts":5,"dur":1}]}}, {"ph":"X","cat":"kernel","name":"real","ts":9,"dur":1}]"#;
    let bytes = text.as_bytes();
    let guess = likely_event_start(bytes, 1).unwrap();
    assert!(text[guess..].starts_with(r#"{"ph":"X","cat":"kernel","name":"fake""#));
    let inner_end = text.find("]}}").unwrap() + 1;
    let part = part_of(bytes, guess, inner_end, DocumentForm::BareArray).expect("the inner range parses");
    assert_eq!(part.events(), 1);
    let mut r = Reader::new();
    push_plain(&mut r, &bytes[..guess]);
    assert!(!r.adopt_part(part));
    let (t, adopted) = read_in_parts(bytes, &[guess, inner_end]);
    assert_eq!(adopted, 0);
    let names: Vec<_> = t.gpu.name.iter().map(|&n| t.name(n).to_string()).collect();
    assert_eq!(names, ["k", "real"]);
    assert_eq!(all_columns(&t), all_columns(&sequential(bytes)));
}

#[test]
fn parts_adopted_out_of_order_are_refused() {
    let text = plain_fixture("llama_dense_eager.pt.trace.json.gz");
    let splits = guesses(&text, 3);
    let mut r = Reader::new();
    push_plain(&mut r, &text[..splits[0]]);
    let second = part_of(&text, splits[1], text.len(), DocumentForm::Object).unwrap();
    assert!(!r.adopt_part(second), "a part that does not start where the reader stopped");
}

#[test]
fn corrupt_part_bytes_give_an_error_not_a_panic() {
    let text = plain_fixture("llama_dense_eager.pt.trace.json.gz");
    // A small part near the start, so each flipped copy is quick to decode and adopt.
    let split = likely_event_start(&text, 200_000).unwrap();
    let mut p = PartReader::new(DocumentForm::Object, split as u64);
    p.push(&text[split..split + (200 << 10)]).unwrap();
    let good = p.finish().to_bytes();
    assert!(Part::from_bytes(&good).is_ok());
    assert!(Part::from_bytes(&[]).is_err());
    assert!(Part::from_bytes(b"not a part at all").is_err());
    // Every truncation fails cleanly.
    for cut in (0..good.len()).step_by(good.len() / 997 + 1) {
        assert!(Part::from_bytes(&good[..cut]).is_err(), "truncated at {cut}");
    }
    assert!(Part::from_bytes(&[&good[..], b"x"].concat()).is_err(), "trailing byte");
    // Flipped bytes: either an error or a part, never a panic; a decoded part can be adopted or
    // refused without panicking either.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..2000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let mut bad = good.clone();
        let at = (state % bad.len() as u64) as usize;
        bad[at] ^= 1 << (state >> 61);
        if let Ok(part) = Part::from_bytes(&bad) {
            let mut r = Reader::new();
            push_plain(&mut r, &text[..split]);
            let _ = r.adopt_part(part);
        }
    }
    // A wrong version is named.
    let mut v2 = good.clone();
    v2[8] = 2;
    let err = Part::from_bytes(&v2).err().unwrap().to_string();
    assert!(err.contains("version"), "{err}");
}
