//! The analyses split their work over two threads natively once a trace has 65,536 GPU rows or
//! more (`src/threads.rs`); every fixture is below that, so this test builds a trace above it: the
//! H100 llama trace three times over, each copy shifted in time past the previous one and its ids
//! offset (as the benchmark builds its 1 GB trace). Each copy must come out exactly as the single
//! trace does (read on one thread, below the threshold): the same categories, passes, phases and
//! layers, row for row.

use crate::common;

use serde_json::{json, Value};
use traceprism::{Analysis, Options};

const FIXTURE: &str = "llama_dense_eager.pt.trace.json.gz";
const COPIES: usize = 3;

/// Moves one event `dt` µs later and its correlation, flow and op ids `did` further.
fn shift(ev: &mut Value, dt: f64, did: i64) {
    if let Some(ts) = ev.get("ts").and_then(Value::as_f64) {
        ev["ts"] = json!(ts + dt);
    }
    if ev.get("cat").and_then(Value::as_str) == Some("ac2g") {
        if let Some(id) = ev.get("id").and_then(Value::as_i64) {
            ev["id"] = json!(id + did);
        }
    }
    if let Some(args) = ev.get_mut("args").and_then(Value::as_object_mut) {
        for key in ["correlation", "External id", "Python id", "Python parent id"] {
            if let Some(v) = args.get(key).and_then(Value::as_i64) {
                args.insert(key.to_string(), json!(v + did));
            }
        }
    }
}

/// The fixture's text with its events repeated `copies` times.
fn repeated(copies: usize) -> Vec<u8> {
    let mut doc: Value = serde_json::from_slice(&common::plain_fixture(FIXTURE)).expect("fixture JSON");
    let events = doc["traceEvents"].as_array().cloned().expect("traceEvents");
    let (mut lo, mut hi) = (f64::MAX, f64::MIN);
    for e in &events {
        if let Some(ts) = e.get("ts").and_then(Value::as_f64) {
            lo = lo.min(ts);
            hi = hi.max(ts + e.get("dur").and_then(Value::as_f64).unwrap_or(0.0));
        }
    }
    let span = (hi - lo) + 1000.0;
    let mut all = Vec::with_capacity(events.len() * copies);
    for c in 0..copies {
        for e in &events {
            let mut e = e.clone();
            shift(&mut e, c as f64 * span, c as i64 * 10_000_000);
            all.push(e);
        }
    }
    doc["traceEvents"] = Value::Array(all);
    serde_json::to_vec(&doc).expect("JSON")
}

#[test]
fn each_copy_of_a_trace_above_the_two_thread_threshold_is_analysed_as_the_trace_alone() {
    let one = common::analysis(FIXTURE);
    let many = Analysis::new(common::read_bytes(&repeated(COPIES)).expect("reads"), Options::default()).expect("analysis");
    let n = one.trace.gpu.len();
    assert_eq!(many.trace.gpu.len(), COPIES * n);
    assert!(many.trace.gpu.len() >= 1 << 16, "the repeated trace must reach the two-thread threshold");

    let (p1, pm) = (&one.phases, &many.phases);
    assert_eq!(pm.passes.len(), COPIES * p1.passes.len());
    for (k, pass) in pm.passes.iter().enumerate() {
        let alone = &p1.passes[k % p1.passes.len()];
        assert_eq!(
            (pass.phase, pass.kernels, pass.kernel_time_ns),
            (alone.phase, alone.kernels, alone.kernel_time_ns),
            "pass {k}"
        );
    }
    let per_copy = |v: &[u32]| v.repeat(COPIES);
    assert_eq!(many.layers.layers_per_pass, per_copy(&one.layers.layers_per_pass));
    for i in 0..COPIES * n {
        let r = i % n;
        let what = |name: &str| format!("{name} of row {i} (row {r} alone)");
        assert_eq!(many.categories.of_row[i], one.categories.of_row[r], "{}", what("category"));
        assert_eq!(many.categories.rule_of_row[i], one.categories.rule_of_row[r], "{}", what("rule"));
        assert_eq!(many.phases.phase_of_row[i], one.phases.phase_of_row[r], "{}", what("phase"));
        assert_eq!(many.layers.layer_of_row[i], one.layers.layer_of_row[r], "{}", what("layer"));
        assert_eq!(many.layers.type_of_row[i], one.layers.type_of_row[r], "{}", what("layer type"));
    }
}
