//! The streaming reader gives the same model whatever the chunk boundaries.

use crate::common;
use common::*;
use traceprism::Reader;

fn read_in_chunks(bytes: &[u8], sizes: &[usize]) -> traceprism::Trace {
    let mut r = Reader::new();
    let (mut pos, mut k) = (0, 0);
    while pos < bytes.len() {
        let n = sizes[k % sizes.len()].min(bytes.len() - pos);
        r.push(&bytes[pos..pos + n]).unwrap();
        pos += n;
        k += 1;
    }
    traceprism::pipeline::finish(r).unwrap()
}

fn fingerprint(t: &traceprism::Trace) -> (usize, i64, usize, usize, usize, u64, Vec<u32>) {
    let names: Vec<u32> = t.gpu.name.iter().take(500).copied().collect();
    (t.gpu.len(), t.gpu.dur.iter().sum(), t.ops.len(), t.launches.len(), t.meta.devices.len(), t.stats.events, names)
}

#[test]
fn odd_chunk_sizes_give_identical_models() {
    for file in ["sglang_qwen3-8b_decode_graph_mi300x.json.gz", "torch_compile_triton_mi300x.json.gz"] {
        let gz = std::fs::read(fixture(file)).unwrap();
        let whole = read_in_chunks(&gz, &[gz.len()]);
        for sizes in [&[1usize][..], &[7, 3, 4096], &[65536]] {
            let t = read_in_chunks(&gz, sizes);
            assert_eq!(fingerprint(&t), fingerprint(&whole), "{file} gz chunks {sizes:?}");
        }
        // Plain JSON in small pieces too (inflate it first with our own reader's decoder).
        let plain = traceprism::ingest::gunzip(&gz).unwrap();
        for sizes in [&[1usize][..], &[13, 1000, 2]] {
            let t = read_in_chunks(&plain, sizes);
            assert_eq!(fingerprint(&t), fingerprint(&whole), "{file} plain chunks {sizes:?}");
        }
    }
}

#[test]
fn two_thread_parsing_of_plain_json_equals_sequential_parsing() {
    let plain = plain_fixture("moe_eager.pt.trace.json.gz");
    // 64 KiB pieces are below the split threshold: parsed on one thread.
    let sequential = read_in_chunks(&plain, &[64 << 10]);
    assert_eq!(sequential.stats.parallel_blocks, 0);
    // 8 MiB pieces are split and parsed on two threads.
    let parallel = read_in_chunks(&plain, &[8 << 20]);
    assert!(parallel.stats.parallel_blocks >= 4, "blocks parsed in parallel: {}", parallel.stats.parallel_blocks);
    assert_eq!(all_columns(&parallel), all_columns(&sequential));
    let names = |t: &traceprism::Trace| t.gpu.name.iter().map(|&n| t.name(n).to_string()).collect::<Vec<_>>();
    assert_eq!(names(&parallel), names(&sequential));
    let dims = |t: &traceprism::Trace| t.ops.input_dims.iter().map(|&n| t.name(n).to_string()).collect::<Vec<_>>();
    assert_eq!(dims(&parallel), dims(&sequential));
}

#[test]
fn a_wrong_boundary_guess_falls_back_to_sequential_parsing() {
    // The second half starts inside a string that looks like an event boundary: `}, {`.
    let mut text = String::from(r#"{"traceEvents": ["#);
    let filler = "x".repeat(700_000);
    text.push_str(&format!(r#"{{"ph":"X","cat":"kernel","name":"{filler}}}, {{ {filler}","ts":1,"dur":1}}"#));
    text.push_str(r#"]}"#);
    let t = read_in_chunks(text.as_bytes(), &[text.len()]);
    assert_eq!(t.gpu.len(), 1);
    assert_eq!(t.stats.parallel_blocks, 0);
}

#[test]
fn memory_mapped_reading_of_a_large_file_equals_streamed_reading() {
    // read_path maps files of 1 MiB and more and cuts them into ranges parsed at once; build a
    // large one from a real fixture's events.
    let plain = plain_fixture("llama_dense_eager.pt.trace.json.gz");
    let text = String::from_utf8(plain).unwrap();
    let start = text.find("\"traceEvents\": [").unwrap() + "\"traceEvents\": [".len();
    let end = text.rfind(']').unwrap();
    let events = &text[start..end];
    let body = format!("{{\"traceEvents\": [{events}, {events}]}}");
    assert!(body.len() >= 64 << 20, "test file must be large enough to be mapped");
    let path = std::env::temp_dir().join(format!("traceprism-mmap-{}.json", std::process::id()));
    std::fs::write(&path, &body).unwrap();
    let streamed = traceprism::read_trace(std::io::Cursor::new(body.clone().into_bytes())).unwrap();
    // Two ranges (this machine's case), five (a bigger machine's), and one (in order).
    for (threads, parts) in [(2, 1), (5, 4), (1, 0)] {
        let mapped = traceprism::pipeline::read_path_on(&path, threads).unwrap();
        assert_eq!(mapped.stats.parallel_blocks, parts, "{threads} threads: every range after the first was adopted");
        assert_eq!(all_columns(&mapped), all_columns(&streamed), "{threads} threads");
        assert_eq!(mapped.kernel_rows().count(), 2 * 22903);
    }
    std::fs::remove_file(&path).ok();
}

#[test]
fn a_wrong_middle_guess_in_a_mapped_file_falls_back_to_sequential_parsing() {
    // A mapped file whose middle lies inside a long kernel name containing `}, {`: the second
    // thread starts there, the first cannot confirm the boundary, and the second half is read again.
    let plain = plain_fixture("llama_dense_eager.pt.trace.json.gz");
    let text = String::from_utf8(plain).unwrap();
    let start = text.find("\"traceEvents\": [").unwrap() + "\"traceEvents\": [".len();
    let events = &text[start..text.rfind(']').unwrap()];
    let prefix = format!("{{\"traceEvents\": [{events}, {{\"ph\":\"X\",\"cat\":\"kernel\",\"ts\":1,\"dur\":1,\"name\":\"");
    let suffix = format!("\"}}, {events}]}}");
    let before = 4 << 20;
    // Put the fake boundary's `{` right at the middle, where the reader looks for one.
    let after = prefix.len() + before + 2 - suffix.len();
    let body = format!("{prefix}{}}}, {{{}{suffix}", "x".repeat(before), "x".repeat(after));
    let brace = prefix.len() + before + 3;
    assert!(brace >= body.len() / 2 && brace - body.len() / 2 < 1 << 20, "fake boundary must be the reader's guess");
    assert!(body.len() >= 64 << 20, "test file must be large enough to be mapped");
    let path = std::env::temp_dir().join(format!("traceprism-mmap-guess-{}.json", std::process::id()));
    std::fs::write(&path, &body).unwrap();
    let mapped = traceprism::pipeline::read_path_on(&path, 2).unwrap();
    // Four ranges: the guess at the middle is wrong, the ones at a quarter and three quarters are
    // right; the range after the wrong guess is read again here and the last one still adopted.
    let quarters = traceprism::pipeline::read_path_on(&path, 4).unwrap();
    std::fs::remove_file(&path).ok();
    let streamed = read_in_chunks(body.as_bytes(), &[64 << 10]);
    assert_eq!(mapped.stats.parallel_blocks, 0, "the wrong guess must not be kept");
    assert_eq!(all_columns(&quarters), all_columns(&streamed));
    assert_eq!(all_columns(&mapped), all_columns(&streamed));
    assert_eq!(mapped.kernel_rows().count(), 2 * 22903 + 1);
}

#[test]
fn negative_numeric_and_text_thread_ids_stay_apart_in_parallel_parsing() {
    // Kineto writes text pids/tids ("Spans") and some traces negative numeric tids (recsys:
    // -1107294656); both kinds must name distinct threads, also when halves are parsed apart.
    let mut text = String::from(r#"{"traceEvents": ["#);
    let tids = [r#"-3"#, r#""PyTorch Profiler""#, r#"-1107294656"#, r#""""#, r#"4"#];
    let mut k = 0;
    while text.len() < 3 << 20 {
        let tid = tids[k % tids.len()];
        text.push_str(&format!(
            r#"{{"ph":"X","cat":"cpu_op","name":"aten::op{}","pid":"Spans","tid":{tid},"ts":{k},"dur":1}}, "#,
            k % 7
        ));
        k += 1;
    }
    text.push_str(r#"{"ph":"M","name":"thread_name","pid":"Spans","tid":-3,"args":{"name":"minus three"}}]}"#);
    let sequential = read_in_chunks(text.as_bytes(), &[64 << 10]);
    let parallel = read_in_chunks(text.as_bytes(), &[8 << 20]);
    assert!(parallel.stats.parallel_blocks >= 1);
    assert_eq!(all_columns(&parallel), all_columns(&sequential));
    assert_eq!(sequential.threads.len(), tids.len(), "one thread per distinct tid");
    let named: Vec<_> =
        sequential.threads.iter().filter(|t| sequential.name(t.thread_name) == "minus three").map(|t| t.tid).collect();
    assert_eq!(named, [-3]);
}
