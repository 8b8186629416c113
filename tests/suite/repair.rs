//! Broken JSON repaired, not refused: a real trace whose Python frame names hold unescaped double
//! quotes (PyTorch's `with_stack=True` under `torch.compile`, pytorch#146900) and raw Windows
//! paths (kineto#617) reads exactly as the same trace escaped correctly — every table, by every
//! reader (one piece, small pieces, ranges of a file on threads, gzip) — and the repairs are
//! counted with the first one's event index and byte offset.

use crate::common;

use traceprism::{Analysis, Options, Trace};

/// What a frame name gets appended: as the profiler wrote it, and as it should have been written.
const INSERTS: [(&str, &str); 2] = [
    (r#" {"device": "cpu", "dtype": "float32"}"#, r#" {\"device\": \"cpu\", \"dtype\": \"float32\"}"#),
    (r#" C:\Users\me\x.py"#, r#" C:\\Users\\me\\x.py"#),
];

/// The fixture's text twice: with every `every`-th Python frame's name broken as the profiler
/// broke them, and with the same names escaped correctly; plus the byte offset (in the broken
/// text) of each broken name's opening quote.
fn broken_and_escaped(text: &[u8], every: usize, inserts: &[(&str, &str); 2]) -> (Vec<u8>, Vec<u8>, Vec<usize>) {
    let marker = br#""cat": "python_function", "name": ""#;
    let (mut broken, mut escaped, mut at) = (Vec::new(), Vec::new(), Vec::new());
    let mut from = 0;
    let mut k = 0;
    while let Some(off) = memchr::memmem::find(&text[from..], marker) {
        let name = from + off + marker.len();
        let close = name + memchr::memchr(b'"', &text[name..]).expect("name ends");
        broken.extend_from_slice(&text[from..close]);
        escaped.extend_from_slice(&text[from..close]);
        if k % every == 0 {
            let (bad, good) = inserts[(k / every) % 2];
            at.push(broken.len() - (close - name) - 1);
            broken.extend_from_slice(bad.as_bytes());
            escaped.extend_from_slice(good.as_bytes());
        }
        k += 1;
        from = close;
    }
    broken.extend_from_slice(&text[from..]);
    escaped.extend_from_slice(&text[from..]);
    (broken, escaped, at)
}

/// Every table but `trace_input` (its byte counts differ) as CSV; `health` without its
/// `repaired_json` row (which says what was repaired).
fn tables(t: Trace) -> Vec<(String, String)> {
    let a = Analysis::new(t, Options::default()).expect("analysis");
    traceprism::report::table_names()
        .into_iter()
        .filter(|&n| n != "trace_input")
        .map(|n| {
            let csv = traceprism::report::table(&a, n).expect("table").to_csv();
            let csv = if n == "health" {
                csv.lines().filter(|l| !l.starts_with("repaired_json,")).collect::<Vec<_>>().join("\n")
            } else {
                csv
            };
            (n.to_string(), csv)
        })
        .collect()
}

fn assert_same_tables(got: Trace, want: &[(String, String)], how: &str) {
    for ((name, csv), (_, expected)) in tables(got).iter().zip(want) {
        assert!(csv == expected, "{how}: table {name} differs from the correctly escaped trace's");
    }
}

fn read_in_pieces(bytes: &[u8], piece: usize) -> Trace {
    let mut r = traceprism::Reader::new();
    for chunk in bytes.chunks(piece) {
        r.push(chunk).expect("push");
    }
    traceprism::pipeline::finish(r).expect("reads")
}

#[test]
fn a_trace_with_unescaped_quotes_and_raw_paths_reads_as_if_escaped() {
    let text = common::plain_fixture("llama_small_stack.pt.trace.json.gz");
    // Every 7th frame: ~3,600 broken events spread over the whole file, so that every reader's
    // piece and range boundaries fall next to (and inside) broken ones.
    let (broken, escaped, at) = broken_and_escaped(&text, 7, &INSERTS);
    assert!(at.len() > 3000, "{} frames broken", at.len());
    assert!(serde_json::from_slice::<serde_json::Value>(&broken).is_err(), "the broken text is not JSON");
    let reference = common::read_bytes(&escaped).expect("the escaped text reads");
    assert_eq!(reference.warnings.total(), 0, "{:?}", reference.warnings.counts);
    let want = tables(reference);

    // The first broken event's index, from the correctly escaped text.
    let v: serde_json::Value = serde_json::from_slice(&escaped).unwrap();
    let first = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .position(|e| e["name"].as_str().is_some_and(|n| n.ends_with(INSERTS[0].0)))
        .unwrap();

    let check = |t: Trace, how: &str| {
        let repaired = t.warnings.counts.get(&traceprism::model::WarningKind::RepairedJson).copied();
        assert_eq!(repaired, Some(at.len() as u64), "{how}: repaired events counted");
        assert_eq!(t.warnings.total(), at.len() as u64, "{how}: {:?}", t.warnings.counts);
        let ex = t.warnings.examples_of(&traceprism::model::WarningKind::RepairedJson).next().expect("an example");
        assert_eq!(ex.event, first as u64, "{how}: first repaired event");
        assert!(ex.detail.starts_with(&format!("byte {}: an unescaped double quote", at[0])), "{how}: {}", ex.detail);
        assert_same_tables(t, &want, how);
    };
    check(common::read_bytes(&broken).expect("one piece"), "one piece (halves on two threads)");
    check(read_in_pieces(&broken, 64 << 10), "64 kB pieces");
    check(read_in_pieces(&broken, 4099), "4099-byte pieces");

    let dir = std::env::temp_dir().join(format!("traceprism-repair-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plain = dir.join("broken.json");
    std::fs::write(&plain, &broken).unwrap();
    for threads in [1, 2, 4] {
        check(traceprism::pipeline::read_path_on(&plain, threads).expect("file reads"), &format!("file on {threads} threads"));
    }
    let gz = dir.join("broken.json.gz");
    std::fs::write(&gz, common::gzip(&broken)).unwrap();
    check(traceprism::read_path(&gz).expect("gzip reads"), "gzip");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_repair_that_straddles_a_range_boundary_is_taken_up_by_the_next_range() {
    // A frame name holding `}, {`, which the range cutter takes for an event boundary.
    const LIST: [(&str, &str); 2] =
        [(r#" [{"device": "cpu"}, {"device": "cuda"}]"#, r#" [{\"device\": \"cpu\"}, {\"device\": \"cuda\"}]"#); 2];
    let text = common::plain_fixture("llama_small_stack.pt.trace.json.gz");
    let (broken, escaped, at) = broken_and_escaped(&text, 5, &LIST);
    let want = tables(common::read_bytes(&escaped).unwrap());
    for &name in &at[at.len() / 2..at.len() / 2 + 3] {
        // The guess a range makes from inside the broken name: its inner `{`.
        let inserted = name + memchr::memmem::find(&broken[name..], LIST[0].0.as_bytes()).expect("inserted");
        let start = traceprism::ingest::likely_event_start(&broken, inserted).expect("a guess");
        assert!(start < inserted + LIST[0].0.len(), "the guess falls inside the broken name");
        let mut r = traceprism::Reader::new();
        r.push_json(&broken[..start], start as u64)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&broken[start - 300..start + 100])));
        let mut part = traceprism::read::PartReader::new(traceprism::ingest::DocumentForm::Object, start as u64);
        let adopted = part.push(&broken[start..]).is_ok() && r.adopt_part(part.finish());
        assert!(!adopted, "a part that starts inside a string is never adopted");
        r.push_json(&broken[start..], (broken.len() - start) as u64).unwrap();
        let t = traceprism::pipeline::finish(r).expect("reads");
        assert_eq!(t.warnings.counts.get(&traceprism::model::WarningKind::RepairedJson).copied(), Some(at.len() as u64));
        assert_same_tables(t, &want, &format!("range guessed at byte {start}"));
    }
    let dir = std::env::temp_dir().join(format!("traceprism-repair-list-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plain = dir.join("broken.json");
    std::fs::write(&plain, &broken).unwrap();
    for threads in [2, 4] {
        let t = traceprism::pipeline::read_path_on(&plain, threads).expect("file reads");
        assert_same_tables(t, &want, &format!("file on {threads} threads"));
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_event_beyond_repair_is_still_an_error_naming_its_byte() {
    let text =
        br#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2}, {"ph": "X", "name": "a" 12 }]}"#;
    let err = common::read_bytes(text).unwrap_err();
    assert!(err.to_string().contains("expected ',' or '}' in event"), "{err}");
    assert!(err.to_string().contains("event 1"), "{err}");
}
