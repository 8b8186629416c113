//! The warm-up the page runs before the user's file arrives: it must run without error and reach
//! the code paths a real inference trace reaches (otherwise it warms nothing).

use traceprism::pipeline::warm_up::{warm_up, warm_up_part, WARM_UP_DECODE_STEPS};
use traceprism::synth::synthetic_trace;
use traceprism::{read_trace, Analysis, Options};

#[test]
fn warm_up_runs_without_error() {
    let a = warm_up().expect("warm-up runs");
    assert_eq!(a.phases.passes.len(), 1 + WARM_UP_DECODE_STEPS);
}

#[test]
fn synthetic_trace_reaches_the_analyses() {
    let trace = read_trace(synthetic_trace(3).as_bytes()).expect("reads");
    let a = Analysis::new(trace, Options::default()).expect("analyses");
    let s = traceprism::report::summary::summary(&a);
    // Counted from the generator: 3 eager steps of 1 embedding + 2 layers x 7 kernels + 1 argmax,
    // one graph step of 2 x 7 kernels + 1 argmax; each step also does one memcpy and one memset.
    assert_eq!(s.counts.kernels, 3 * 16 + 15, "kernels");
    assert_eq!(s.counts.memcpy, 4);
    assert_eq!(s.counts.memset, 4);
    assert_eq!(s.counts.graph_launches, 1);
    assert_eq!(s.links.kernels_unlinked, 0, "every kernel has its launch");
    assert_eq!(s.links.kernels_from_graph_launch, 14);
    // One prefill and three decode steps, found from the step annotations.
    assert_eq!(s.passes, 4, "passes");
    let phases: Vec<_> = a.phases.passes.iter().map(|p| format!("{:?}", p.phase).to_lowercase()).collect();
    assert_eq!(phases, ["prefill", "decode", "decode", "decode"]);
    // Two decoder layers in every pass.
    assert_eq!(a.layers.layers_per_pass, [2, 2, 2, 2], "layers per pass");
    // The kernels fall into several categories (norm, GEMM, attention, collective, elementwise...).
    let used: std::collections::BTreeSet<&str> = a.trace.kernel_rows().map(|i| a.categories.name(i)).collect();
    assert!(used.len() >= 5, "categories used: {used:?}");
    // Every table builds.
    for name in traceprism::report::table_names() {
        assert!(traceprism::report::table(&a, name).is_some(), "{name}");
    }
}

#[test]
fn synthetic_trace_is_valid_json() {
    let text = synthetic_trace(3);
    let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    let events = v["traceEvents"].as_array().expect("traceEvents");
    assert!(events.len() > 200 && text.len() < 200_000, "{} events, {} bytes", events.len(), text.len());
}

#[test]
fn the_parallel_parse_warm_up_adopts_its_part() {
    for steps in [1, 40] {
        warm_up_part(steps).expect("the part is parsed, encoded, decoded and adopted");
    }
}
