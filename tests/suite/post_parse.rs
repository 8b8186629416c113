//! The work after the parse (link, analyses, summary) gives the same answers whichever way it is
//! reached, and the link finds launches by correlation however the ids are spread.

use crate::common;

use traceprism::model::NONE;
use traceprism::{Analysis, Options};

/// `analyze_path` compiles the rule sets on a second thread while reading: same result as reading
/// and analysing in sequence.
#[test]
fn analyze_path_equals_read_then_analyse() {
    for name in ["llama_dense_eager.pt.trace.json.gz", "sglang_qwen3-8b_decode_graph_mi300x.json.gz"] {
        let a = traceprism::analyze_path(&common::fixture(name), Options::default()).expect("analyze_path");
        let b = common::analysis(name);
        assert_eq!(common::all_columns(&a.trace), common::all_columns(&b.trace), "{name}: model");
        assert_eq!(a.categories.of_row, b.categories.of_row, "{name}: categories");
        assert_eq!(a.phases.pass_of_row, b.phases.pass_of_row, "{name}: passes");
        assert_eq!(a.phases.phase_of_row, b.phases.phase_of_row, "{name}: phases");
        assert_eq!(a.layers.layer_of_row, b.layers.layer_of_row, "{name}: layers");
        let (mut sa, sb) = (traceprism::report::summary::summary(&a), traceprism::report::summary::summary(&b));
        // How the bytes were read (parallel blocks of the CLI's reader) is the one fact allowed to differ.
        sa.input.parallel_blocks = sb.input.parallel_blocks;
        assert_eq!(serde_json::to_string(&sa).unwrap(), serde_json::to_string(&sb).unwrap(), "{name}: summary");
    }
}

/// A trace whose correlation ids come in runs 10^9 apart (as when captures are stitched together):
/// every kernel links to the launch with its correlation, and to the op around that launch.
#[test]
fn correlation_runs_far_apart_link() {
    let mut events = Vec::new();
    let mut expected = Vec::new();
    let mut ts = 1000u64;
    for run in 0..3u64 {
        for k in 0..2500u64 {
            // Every third id skipped: runs with gaps.
            let corr = run * 1_000_000_000 + 7 + 3 * k;
            let op = format!("op_{run}_{k}");
            events.push(format!(
                r#"{{"ph":"X","cat":"cpu_op","name":"{op}","pid":1,"tid":1,"ts":{ts},"dur":10,"args":{{"External id":{corr}}}}}"#
            ));
            events.push(format!(
                r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{},"dur":3,"args":{{"correlation":{corr}}}}}"#,
                ts + 2
            ));
            events.push(format!(
                r#"{{"ph":"X","cat":"kernel","name":"kernel_{k}","pid":0,"tid":7,"ts":{},"dur":4,"args":{{"device":0,"stream":7,"correlation":{corr}}}}}"#,
                ts + 5
            ));
            expected.push((corr as i64, op));
            ts += 20;
        }
    }
    // Kernels listed last and in reverse, so rows and ids are in different orders.
    let (cpu, gpu): (Vec<_>, Vec<_>) = events.into_iter().partition(|e| !e.contains(r#""cat":"kernel""#));
    let text = format!(r#"{{"traceEvents":[{}]}}"#, cpu.into_iter().chain(gpu.into_iter().rev()).collect::<Vec<_>>().join(","));
    let trace = traceprism::read_trace(text.as_bytes()).expect("reads");
    let a = Analysis::new(trace, Options::default()).expect("analyses");
    let t = &a.trace;
    assert_eq!(t.gpu.len(), expected.len());
    let mut linked = 0;
    for i in 0..t.gpu.len() {
        let l = t.gpu.launch[i];
        assert_ne!(l, NONE, "kernel {i} unlinked");
        assert_eq!(t.launches.correlation[l as usize], t.gpu.correlation[i]);
        let op = t.gpu.cpu_op[i];
        assert_ne!(op, NONE, "kernel {i} has no op");
        let want = &expected.iter().find(|(c, _)| *c == t.gpu.correlation[i]).expect("known id").1;
        assert_eq!(t.name(t.ops.name[op as usize]), want);
        linked += 1;
    }
    assert_eq!(linked, 7500);
}
