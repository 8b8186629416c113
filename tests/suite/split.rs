//! `split`: a pass, a phase or a time window written out as a .json.gz and read back holds exactly
//! the kernels the kernels table lists for it, the source's metadata events, and is valid JSON.

use crate::common;
use common::*;
use traceprism::analysis::phases::Phase;
use traceprism::split::{select, Splitter, Window};
use traceprism::Analysis;

/// Splits fixture `name` by `window` (reading the source in 1 MB pieces); returns the output text.
fn split(name: &str, a: &Analysis, window: &Window) -> Vec<u8> {
    let bytes = std::fs::read(fixture(name)).unwrap();
    let mut s = Splitter::new(select(a, window).unwrap());
    for piece in bytes.chunks(1 << 20) {
        s.push(piece).unwrap();
    }
    traceprism::ingest::gunzip(&s.finish().unwrap()).unwrap()
}

/// Sorted names of the kernels the kernels table lists where `keep(row)` holds.
fn table_kernels(a: &Analysis, keep: impl Fn(&[traceprism::table::Cell], &[String]) -> bool) -> Vec<String> {
    let t = traceprism::report::table(a, "kernels").unwrap();
    let name = t.columns.iter().position(|c| c == "name").unwrap();
    let mut v: Vec<String> = t.rows.iter().filter(|r| keep(r, &t.columns)).map(|r| r[name].text()).collect();
    v.sort();
    v
}

fn kernel_names(text: &[u8]) -> (Vec<String>, usize) {
    let doc: serde_json::Value = serde_json::from_slice(text).expect("the split is valid JSON");
    let events = doc["traceEvents"].as_array().expect("a traceEvents array");
    let mut v: Vec<String> =
        events.iter().filter(|e| e["cat"] == "kernel").map(|e| e["name"].as_str().unwrap().to_string()).collect();
    v.sort();
    (v, events.iter().filter(|e| e["ph"] == "M").count())
}

/// Splits fixture `name` (analysed as `a`) to `phase`: the split holds exactly the kernels the
/// kernels table lists for that phase. Returns the split's text.
fn assert_phase_split(name: &str, a: &Analysis, phase: Phase) -> Vec<u8> {
    let text = split(name, a, &Window::Phase(phase));
    let want = table_kernels(a, |r, c| r[c.iter().position(|x| x == "phase").unwrap()].text() == phase.as_str());
    assert_eq!(kernel_names(&text).0, want, "{name}: the {} split", phase.as_str());
    text
}

fn metadata_events(name: &str) -> usize {
    let doc: serde_json::Value = serde_json::from_slice(&plain_fixture(name)).unwrap();
    doc["traceEvents"].as_array().unwrap().iter().filter(|e| e["ph"] == "M").count()
}

#[test]
fn a_split_pass_reads_back_with_exactly_its_kernels() {
    for name in ["llama_dense_eager.pt.trace.json.gz", "vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz"] {
        let a = analysis(name);
        let passes = a.phases.passes.len();
        let metadata = metadata_events(name);
        for pass in [0, passes / 2, passes - 1] {
            let text = split(name, &a, &Window::Pass(pass as u32));
            let want = table_kernels(&a, |r, c| r[c.iter().position(|x| x == "pass").unwrap()].text() == pass.to_string());
            let (got, m) = kernel_names(&text);
            assert_eq!(got, want, "{name} pass {pass}: the split's kernels are the kernels table's");
            assert_eq!(m, metadata, "{name}: every metadata event kept");
            // Read back by traceprism: the same kernels, one pass.
            let back = Analysis::new(read_bytes(&text).unwrap(), Default::default()).unwrap();
            assert_eq!(back.trace.kernel_rows().count(), want.len());
            println!("{name} pass {pass}: {} kernels; read back as {} pass(es)", want.len(), back.phases.passes.len());
        }
    }
}

#[test]
fn a_phase_and_a_time_window_split_to_their_kernels() {
    let name = "llama_dense_eager.pt.trace.json.gz";
    let a = analysis(name);
    assert_phase_split(name, &a, Phase::Decode);
    // A time window: the kernels table's rows starting in it (ts_us is on the trace clock).
    let origin_us = a.trace.time_origin_ns as f64 / 1e3;
    let (from, to) = (200_000.0, 450_000.0);
    let text = split(name, &a, &Window::Time { from_us: from, to_us: to });
    let want = table_kernels(&a, |r, c| {
        let ts = r[c.iter().position(|x| x == "ts_us").unwrap()].text().parse::<f64>().unwrap() - origin_us;
        ts >= from - 0.001 && ts < to
    });
    assert_eq!(kernel_names(&text).0, want);
    assert!(!want.is_empty());
}

#[test]
fn nothing_to_split_is_a_clear_error() {
    let a = analysis("llama_dense_eager.pt.trace.json.gz");
    let e = select(&a, &Window::Pass(999)).unwrap_err().to_string();
    assert!(e.contains("no pass 999") && e.contains("33 passes"), "{e}");
}

#[test]
fn a_diffusion_trace_splits_to_its_denoising_steps_and_reads_back_as_them() {
    let name = "xdit_flux1_4steps_mi300x.json.gz";
    let a = analysis(name);
    let text = assert_phase_split(name, &a, Phase::Denoise);
    // Read back: the four steps alone (1573 kernels each, tests/workload.rs), still diffusion.
    let back = Analysis::new(read_bytes(&text).unwrap(), Default::default()).unwrap();
    let s = traceprism::report::summary::summary(&back);
    assert_eq!(s.workload, "diffusion", "{:?}", s.workload_evidence);
    assert_eq!(s.passes, 4);
    assert_eq!(back.trace.kernel_rows().count(), 4 * 1573);
}
