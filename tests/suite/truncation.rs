//! Traces cut short: real fixtures cut at many points (every few percent, inside strings, numbers
//! and keys, between events, in the gzip trailer) are analysed up to their last complete event with
//! a warning, or refused with the right offset; corruption before the end stays an error.
//!
//! The expected kernel count of every cut is taken independently of our reader: a small scanner in
//! this file (string, escape and depth tracking only) finds where each event of `traceEvents` ends,
//! serde_json reads the events that end before the cut, and a kernel is an event with
//! `ph == "X"` and `cat == "kernel"`. The decompressed prefix of a cut `.gz` comes from
//! miniz_oxide, not from the zlib-rs inflater the reader uses.

use crate::common;
use common::*;
use traceprism::model::GpuKind;
use traceprism::{Analysis, Options, Trace};

/// Byte span (start, end exclusive) of every element of the event array, in order, and the offset
/// of the array's `[`. Written for this test: it knows JSON strings, escapes and nesting, nothing of
/// traces.
fn event_spans(text: &[u8]) -> (usize, Vec<(usize, usize)>) {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let mut string_start = 0;
    let mut last_top_string: Option<(usize, usize)> = None;
    let mut array_depth = None;
    let mut array_at = 0;
    let mut spans = Vec::new();
    let mut start = None;
    let bare = text.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
    for (i, &b) in text.iter().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => {
                    in_string = false;
                    if depth == 1 {
                        last_top_string = Some((string_start, i));
                    }
                }
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                string_start = i + 1;
            }
            b'{' | b'[' => {
                depth += 1;
                if array_depth.is_none() && b == b'[' {
                    let is_events = if bare {
                        depth == 1
                    } else {
                        depth == 2 && last_top_string.is_some_and(|(s, e)| &text[s..e] == b"traceEvents")
                    };
                    if is_events {
                        array_depth = Some(depth);
                        array_at = i;
                    }
                } else if Some(depth - 1) == array_depth && start.is_none() {
                    start = Some(i);
                }
            }
            b'}' | b']' => {
                if Some(depth) == array_depth && b == b']' {
                    array_depth = None;
                    depth -= 1;
                    if bare {
                        break;
                    }
                    continue;
                }
                depth -= 1;
                if let (Some(s), Some(d)) = (start, array_depth) {
                    if depth == d {
                        spans.push((s, i + 1));
                        start = None;
                    }
                }
            }
            _ => {}
        }
    }
    (array_at, spans)
}

/// Kernels among the events of `text` (whole) that end at or before byte `cut`.
fn kernels_before(text: &[u8], spans: &[(usize, usize)], cut: usize) -> usize {
    spans
        .iter()
        .take_while(|s| s.1 <= cut)
        .filter(|&&(s, e)| {
            let v: serde_json::Value = serde_json::from_slice(&text[s..e]).expect("an event is JSON");
            v["ph"] == "X" && v["cat"] == "kernel"
        })
        .count()
}

fn kernels(t: &Trace) -> usize {
    t.gpu.kind.iter().filter(|&&k| k == GpuKind::Kernel).count()
}

/// Reads `bytes` in pieces of `piece` bytes, as the page and a pipe do.
fn read_in_pieces(bytes: &[u8], piece: usize) -> traceprism::Result<Trace> {
    let mut r = traceprism::Reader::new();
    for chunk in bytes.chunks(piece) {
        r.push(chunk)?;
    }
    traceprism::pipeline::finish(r)
}

/// Cut points of a text: every 3% of it, and just inside a string, a number, a key, right after an
/// event's `}` and after the comma that follows it, near the 40% mark.
fn cut_points(text: &[u8], spans: &[(usize, usize)]) -> Vec<(usize, String)> {
    let mut cuts: Vec<(usize, String)> = (1..34).map(|k| (text.len() * k * 3 / 100, format!("{}%", k * 3))).collect();
    let mid = spans[spans.len() * 2 / 5];
    let event = &text[mid.0..mid.1];
    let find = |needle: &[u8]| event.windows(needle.len()).position(|w| w == needle).map(|p| mid.0 + p);
    if let Some(p) = find(b"\"name\"") {
        cuts.push((p + 3, "inside a key".into()));
        let value = p + text[p..].iter().position(|&b| b == b':').unwrap() + 1;
        let quote = value + text[value..].iter().position(|&b| b == b'"').unwrap();
        cuts.push((quote + 2, "inside a string".into()));
    }
    if let Some(p) = find(b"\"ts\"") {
        let colon = p + text[p..].iter().position(|&b| b == b':').unwrap();
        let digit = colon + text[colon..].iter().position(|b| b.is_ascii_digit()).unwrap();
        cuts.push((digit + 2, "inside a number".into()));
    }
    cuts.push((mid.1, "right after an event".into()));
    cuts.push((mid.1 + 1, "after an event and its comma".into()));
    cuts.push((text.len() - 1, "inside the closing brackets".into()));
    cuts
}

/// Checks one cut of a plain text: the prefix's complete kernels with a warning, or an error only
/// when no kernel precedes the cut.
fn check_cut(name: &str, text: &[u8], spans: &[(usize, usize)], cut: usize, what: &str, trace: traceprism::Result<Trace>) {
    let want = kernels_before(text, spans, cut);
    match trace {
        Ok(t) => {
            assert_eq!(kernels(&t), want, "{name} cut at {cut} ({what}): kernels");
            let truncation = t.stats.truncation.as_ref().unwrap_or_else(|| panic!("{name} cut at {cut} ({what}): no warning"));
            assert_eq!(truncation.text_stops_at, cut as u64, "{name} cut at {cut}: where the text stops");
            let complete_end = spans.iter().take_while(|s| s.1 <= cut).last().map_or(0, |s| s.1);
            assert!(
                truncation.text_bytes_read as usize >= complete_end && truncation.text_bytes_read as usize <= cut,
                "{name} cut at {cut}: text read {} vs last complete event ending at {complete_end}",
                truncation.text_bytes_read
            );
            assert!(!truncation.document_whole);
        }
        Err(e) => assert_eq!(want, 0, "{name} cut at {cut} ({what}): refused ({e}) although {want} kernels precede the cut"),
    }
}

const PLAIN: &[&str] = &[
    "torch_compile_triton_mi300x.json.gz",
    "sglang_qwen3-8b_decode_graph_mi300x.json.gz",
    "gpu_only_mi210.json.gz",
    "vllm_gptoss_decode_fullgraph_mi300x.json.gz",
];

#[test]
fn plain_traces_cut_anywhere_keep_every_complete_kernel() {
    println!("{:<48} {:>5} {:>8} {:>8}", "trace", "cuts", "analysed", "refused");
    for name in PLAIN {
        let text = plain_fixture(name);
        let (_, spans) = event_spans(&text);
        let whole = read_bytes(&text).unwrap();
        assert_eq!(kernels(&whole), kernels_before(&text, &spans, text.len()), "{name}: the scanner agrees on the whole trace");
        assert!(whole.stats.truncation.is_none() && whole.stats.notes.is_empty());
        let (mut analysed, mut refused) = (0, 0);
        for (cut, what) in cut_points(&text, &spans) {
            let trace = read_in_pieces(&text[..cut], 4099);
            if trace.is_ok() {
                analysed += 1
            } else {
                refused += 1
            }
            check_cut(name, &text, &spans, cut, &what, trace);
        }
        println!("{name:<48} {:>5} {analysed:>8} {refused:>8}", analysed + refused);
        assert!(analysed > 25, "{name}: most cuts are analysed");
    }
}

#[test]
fn the_triton_trace_cut_in_half_is_analysed_with_its_last_pass_marked() {
    // The first example.
    let text = plain_fixture("torch_compile_triton_mi300x.json.gz");
    let (_, spans) = event_spans(&text);
    let cut = text.len() / 2;
    let t = read_bytes(&text[..cut]).expect("half a trace is analysed");
    assert_eq!(kernels(&t), kernels_before(&text, &spans, cut));
    let cut_info = t.stats.truncation.clone().expect("warned");
    assert!(
        cut_info.message.contains("truncated trace") && cut_info.message.contains(&format!("stops at byte {cut}")),
        "{}",
        cut_info.message
    );
    let strict = Options { strict: true, ..Options::default() };
    let e = Analysis::new(t, strict).err().expect("strict mode refuses it");
    assert_eq!((e.byte_offset, e.event_index), (Some(cut as u64), Some(cut_info.events_read)), "{e}");
}

#[test]
fn a_cut_trace_on_many_threads_reads_like_one_read_in_order() {
    // The mapped reader cuts a file into ranges parsed at once: a cut falls in the last range.
    let name = "llama_dense_eager.pt.trace.json.gz";
    let text = plain_fixture(name);
    let (_, spans) = event_spans(&text);
    let dir = std::env::temp_dir().join(format!("traceprism-truncation-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for percent in [37, 71, 96] {
        let cut = text.len() * percent / 100;
        let path = dir.join(format!("cut{percent}.json"));
        std::fs::write(&path, &text[..cut]).unwrap();
        for threads in [1, 3] {
            let trace = traceprism::pipeline::read_path_on(&path, threads);
            check_cut(name, &text, &spans, cut, &format!("{percent}%, {threads} threads"), trace);
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_passes_the_cut_runs_through_are_marked_incomplete() {
    // Every pass still called complete in a cut trace must hold exactly the kernels of the same
    // pass in the whole trace (whose passes the phase tests score against the recorded truth: 33
    // passes), so the pass the cut runs through cannot be counted as a whole pass.
    let name = "llama_dense_eager.pt.trace.json.gz";
    let whole = analysis(name);
    assert_eq!(whole.phases.passes.len(), 33, "the recorded truth's pass count");
    let text = plain_fixture(name);
    let (_, spans) = event_spans(&text);
    // Cuts among the kernel events (each at the end of a kernel's event, so every pass before the
    // cut is whole): an early, a middle and a late one.
    let kernel_ends: Vec<usize> = spans
        .iter()
        .filter(|&&(s, e)| {
            let v: serde_json::Value = serde_json::from_slice(&text[s..e]).unwrap();
            v["cat"] == "kernel"
        })
        .map(|s| s.1)
        .collect();
    for frac in [0.2, 0.5, 0.9] {
        let cut = kernel_ends[(kernel_ends.len() as f64 * frac) as usize] + 20;
        let a = Analysis::new(read_bytes(&text[..cut]).unwrap(), Options::default()).unwrap();
        let passes = &a.phases.passes;
        let incomplete = passes.iter().filter(|p| p.incomplete).count();
        let last = passes.iter().max_by_key(|p| p.end_ns).unwrap();
        assert!(last.incomplete, "cut at {cut}: the pass that ends last is incomplete");
        let complete: Vec<_> = passes.iter().filter(|p| !p.incomplete).collect();
        for p in &complete {
            let full = whole.phases.passes.iter().find(|f| f.start_ns == p.start_ns);
            let full = full.unwrap_or_else(|| {
                panic!("cut at {cut}: complete pass {} starts where no pass of the whole trace does", p.index)
            });
            assert_eq!((p.kernels, p.end_ns), (full.kernels, full.end_ns), "cut at {cut}: complete pass {} is whole", p.index);
        }
        let s = traceprism::report::summary::summary(&a);
        assert_eq!((s.passes, s.incomplete_passes), (complete.len(), incomplete));
        println!(
            "cut at {:.0}% of the kernel events: {} complete passes (each equal to the whole trace's), {incomplete} incomplete",
            frac * 100.0,
            s.passes
        );
    }
}

/// The event array of a real trace as a document of its own (the array form of the format).
fn array_form(text: &[u8]) -> Vec<u8> {
    let (at, spans) = event_spans(text);
    let end = spans.last().unwrap().1;
    let mut doc = text[at..end].to_vec();
    doc.extend_from_slice(b"\n]");
    doc
}

#[test]
fn an_open_event_array_is_a_complete_trace_with_a_note() {
    let text = plain_fixture("sglang_qwen3-8b_decode_graph_mi300x.json.gz");
    let doc = array_form(&text);
    let whole = read_bytes(&doc).unwrap();
    assert!(whole.stats.truncation.is_none() && whole.stats.notes.is_empty());
    let open = &doc[..doc.len() - 1];
    let mut open_comma = open.to_vec();
    open_comma.extend_from_slice(b",\n");
    for (what, bytes) in [("no ]", open), ("no ] but a comma", &open_comma[..])] {
        let t = read_in_pieces(bytes, 65_536).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(t.stats.truncation.is_none(), "{what}: not a truncation");
        assert_eq!(t.stats.notes.len(), 1, "{what}: one note");
        assert_eq!(kernels(&t), kernels(&whole), "{what}");
        assert_eq!(t.stats.events, whole.stats.events, "{what}");
    }
    // Cut inside its last event, the array form is truncated like the object form.
    let (_, spans) = event_spans(&doc);
    let cut = spans.last().unwrap().0 + 10;
    check_cut("array form", &doc, &spans, cut, "inside the last event", read_bytes(&doc[..cut]));
}

/// Skips a gzip header (independently of the reader): returns where the DEFLATE data starts.
fn deflate_start(gz: &[u8]) -> usize {
    let flags = gz[3];
    let mut i = 10;
    if flags & 4 != 0 {
        i += 2 + u16::from_le_bytes([gz[10], gz[11]]) as usize;
    }
    for bit in [8, 16] {
        if flags & bit != 0 {
            i += gz[i..].iter().position(|&b| b == 0).unwrap() + 1;
        }
    }
    if flags & 2 != 0 {
        i += 2;
    }
    i
}

/// The text miniz_oxide inflates from a cut gzip member (all it can decode).
fn inflate_prefix(gz: &[u8]) -> Vec<u8> {
    use miniz_oxide::inflate::stream::{inflate, InflateState};
    use miniz_oxide::{DataFormat, MZFlush};
    let mut state = InflateState::new_boxed(DataFormat::Raw);
    let mut input = &gz[deflate_start(gz)..];
    let (mut text, mut room) = (Vec::new(), vec![0u8; 1 << 16]);
    loop {
        let r = inflate(&mut state, input, &mut room, MZFlush::None);
        text.extend_from_slice(&room[..r.bytes_written]);
        input = &input[r.bytes_consumed..];
        if r.status.is_err()
            || (r.bytes_written == 0 && r.bytes_consumed == 0)
            || r.status == Ok(miniz_oxide::MZStatus::StreamEnd)
        {
            return text;
        }
    }
}

#[test]
fn gzip_traces_cut_anywhere_keep_every_complete_kernel() {
    for name in ["sglang_qwen3-8b_decode_graph_mi300x.json.gz", "vllm_gptoss_decode_fullgraph_mi300x.json.gz"] {
        let gz = std::fs::read(fixture(name)).unwrap();
        let text = plain_fixture(name);
        let (_, spans) = event_spans(&text);
        let mut cuts: Vec<usize> = (1..20).map(|k| gz.len() * k * 5 / 100).collect();
        cuts.extend((1..=8).map(|k| gz.len() - k));
        for cut in cuts {
            let prefix = inflate_prefix(&gz[..cut]);
            assert!(text.starts_with(&prefix));
            let want = kernels_before(&text, &spans, prefix.len());
            let t = read_in_pieces(&gz[..cut], 8191);
            let t = match t {
                Ok(t) => t,
                Err(e) => {
                    assert_eq!(want, 0, "{name} cut at {cut} of {}: refused ({e})", gz.len());
                    continue;
                }
            };
            // Our inflater may hold back the last few bytes of an unfinished block that
            // miniz_oxide gives out (or the other way round): the kernels must agree unless an
            // event ends in between.
            let got = kernels(&t);
            let read = t.stats.json_bytes as usize;
            let lo = kernels_before(&text, &spans, read.min(prefix.len()));
            let hi = kernels_before(&text, &spans, read.max(prefix.len()));
            assert!((lo..=hi).contains(&got), "{name} cut at {cut}: {got} kernels, want {want} ({lo}..={hi})");
            let cut_info = t.stats.truncation.as_ref().unwrap_or_else(|| panic!("{name} cut at {cut}: no warning"));
            assert_eq!(cut_info.input_bytes, cut as u64);
            if cut >= gz.len() - 8 {
                assert!(
                    cut_info.document_whole && cut_info.reason.contains("trailer"),
                    "{name} cut at {cut}: {}",
                    cut_info.reason
                );
                assert_eq!(got, kernels_before(&text, &spans, text.len()));
            } else {
                assert!(cut_info.reason.contains("ends early"), "{}", cut_info.reason);
            }
        }
    }
}

#[test]
fn a_wrong_crc_at_the_end_is_a_warning_and_every_event_is_kept() {
    let name = "sglang_qwen3-8b_decode_graph_mi300x.json.gz";
    let mut gz = std::fs::read(fixture(name)).unwrap();
    let n = gz.len();
    gz[n - 8] ^= 0x55;
    let t = read_in_pieces(&gz, 1 << 20).unwrap();
    let whole = trace(name);
    assert_eq!(kernels(&t), kernels(&whole));
    let cut = t.stats.truncation.expect("warned");
    assert!(cut.document_whole && cut.reason.contains("CRC-32"), "{}", cut.reason);
}

#[test]
fn corruption_before_the_end_stays_an_error_with_its_offset_and_event() {
    let text = plain_fixture("sglang_qwen3-8b_decode_graph_mi300x.json.gz");
    let (_, spans) = event_spans(&text);
    for k in [spans.len() / 4, spans.len() / 2, spans.len() * 3 / 4] {
        let (s, e) = spans[k];
        let colon = s + text[s..e].iter().position(|&b| b == b':').unwrap();
        let mut bad = text.clone();
        bad[colon] = b'#';
        let err = read_in_pieces(&bad, 4099).expect_err("a corrupt event is an error");
        assert_eq!((err.byte_offset, err.event_index), (Some(colon as u64), Some(k as u64)), "{err}");
        // Gzipped, the same.
        let err = read_in_pieces(&gzip(&bad), 4099).expect_err("gzipped too");
        assert_eq!((err.byte_offset, err.event_index), (Some(colon as u64), Some(k as u64)), "{err}");
    }
}
