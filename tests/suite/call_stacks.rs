//! Python stacks written as a `Call stack` argument (issue 62): Kineto of 2021 (PyTorch 1.9,
//! ResNet-50 on a V100, kineto's own tb_plugin sample) wrote no `python_function` events; each op
//! carries its stack as text. The model turns them into Python frames, checked here kernel by
//! kernel against the raw JSON read with serde_json.

use crate::common::*;
use std::collections::HashMap;
use traceprism::analysis::code::sources::sources;
use traceprism::model::{GpuKind, OpKind, NONE};

const TRACE: &str = "dataloader_workers0_rn50_v100.pt.trace.json.gz";

/// Per kernel (by correlation id): the Python stack, outermost first, of the innermost op with a
/// `Call stack` that encloses the kernel's runtime launch on the launching thread.
fn raw_stacks_by_correlation() -> HashMap<i64, Vec<String>> {
    let doc: serde_json::Value = serde_json::from_slice(&plain_fixture(TRACE)).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let ns = |v: &serde_json::Value| (v.as_f64().unwrap() * 1e3).round() as i64;
    // (start, end, stack) of each op carrying a stack, per thread.
    let mut ops: HashMap<String, Vec<(i64, i64, &str)>> = HashMap::new();
    for e in events.iter().filter(|e| e["cat"] == "Operator") {
        if let Some(stack) = e["args"]["Call stack"].as_str() {
            let s = ns(&e["ts"]);
            ops.entry(e["tid"].to_string()).or_default().push((s, s + ns(&e["dur"]), stack));
        }
    }
    let mut out = HashMap::new();
    for e in events.iter().filter(|e| e["cat"] == "Runtime") {
        let (Some(c), Some(v)) = (e["args"]["correlation"].as_i64(), ops.get(&e["tid"].to_string())) else { continue };
        let at = ns(&e["ts"]);
        // Innermost: the latest start, then the shortest.
        let Some(op) = v.iter().filter(|o| o.0 <= at && at < o.1).max_by_key(|o| (o.0, -(o.1 - o.0))) else { continue };
        out.insert(c, op.2.split(';').rev().map(str::to_owned).collect());
    }
    out
}

#[test]
fn each_kernel_sits_under_the_python_stack_its_launching_op_carried() {
    let raw = raw_stacks_by_correlation();
    assert!(raw.len() > 1000, "{} launches under an op with a stack", raw.len());
    let a = analysis(TRACE);
    let t = &a.trace;
    assert_eq!(t.call_stacks.len(), 14994, "ops with a Call stack (counted with grep)");
    let (mut same, mut checked) = (0, 0);
    for g in (0..t.gpu.len()).filter(|&g| t.gpu.kind[g] == GpuKind::Kernel) {
        let Some(want) = raw.get(&t.gpu.correlation[g]) else { continue };
        let l = t.gpu.launch[g];
        assert_ne!(l, NONE, "kernel {g} has a launch in the raw trace");
        let mut got = Vec::new();
        let mut f = t.launches.python[l as usize];
        while f != NONE {
            if t.ops.kind[f as usize] == OpKind::PythonFunction {
                got.push(t.name(t.ops.name[f as usize]).to_owned());
            }
            f = t.ops.parent[f as usize];
        }
        got.reverse();
        checked += 1;
        same += (&got == want) as usize;
    }
    println!("kernels whose Python stack is the one their launching op carried: {same} of {checked}");
    assert!(checked > 4000, "{checked}");
    assert_eq!(same, checked);
}

#[test]
fn sources_and_health_read_the_stacks_and_frames_events_win_over_them() {
    let a = analysis(TRACE);
    let s = sources(a.call_paths());
    let conv = s.iter().find(|s| s.frame.ends_with("conv.py(440): _conv_forward")).expect("the convolution's line");
    let (file, line, function) = conv.parts();
    assert!(file.ends_with("torch/nn/modules/conv.py"), "{file}");
    assert_eq!((line, function), (Some(440), "_conv_forward"));
    assert!(conv.kernels > 100, "{}", conv.kernels);
    let h = traceprism::analysis::health::health(&a);
    let stacks = h.iter().find(|c| c.check.as_str() == "stacks").unwrap();
    assert!(stacks.found.contains("Call stack` argument of 14994 CPU ops"), "{}", stacks.found);
}

#[test]
fn a_trace_with_frames_of_its_own_keeps_only_those() {
    // A `with_stack` trace of today, each op given a `Call stack` as well: the frames the
    // profiler measured are kept, none is made from the stacks.
    let mut doc: serde_json::Value = serde_json::from_slice(&plain_fixture("llama_small_stack.pt.trace.json.gz")).unwrap();
    let events = doc["traceEvents"].as_array_mut().unwrap();
    let frames = events.iter().filter(|e| e["cat"] == "python_function").count();
    assert!(frames > 1000, "{frames}");
    let mut given = 0;
    for e in events.iter_mut().filter(|e| e["cat"] == "cpu_op") {
        e["args"]["Call stack"] = "made_up.py(1): f;made_up.py(9): <module>".into();
        given += 1;
    }
    let a = analyse_bytes(&serde_json::to_vec(&doc).unwrap());
    let t = &a.trace;
    assert_eq!(t.call_stacks.len(), given);
    assert_eq!(t.ops.kind.iter().filter(|&&k| k == OpKind::PythonFunction).count(), frames);
}
