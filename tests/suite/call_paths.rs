//! Where in the code (issue 55): GPU time by call path and by source line, checked against the
//! raw JSON read here with serde_json.

use crate::common::*;
use std::collections::HashMap;
use traceprism::analysis::code::call_paths::{call_paths, node_label};
use traceprism::analysis::code::differential::differential;
use traceprism::analysis::code::sources::sources;

/// Kernel time of a trace from its raw events (ns, each kernel's `dur` rounded as the reader does).
fn raw_kernel_ns(doc: &serde_json::Value) -> i64 {
    doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "kernel")
        .map(|e| (e["dur"].as_f64().unwrap() * 1e3).round() as i64)
        .sum()
}

/// Per Python frame name: the GPU time of kernels whose launch starts inside a range of that
/// name on the same thread (each kernel once per name, however deep the name recurses), ns.
fn raw_frame_ns(doc: &serde_json::Value) -> HashMap<String, i64> {
    let events = doc["traceEvents"].as_array().unwrap();
    let ns = |v: &serde_json::Value| (v.as_f64().unwrap() * 1e3).round() as i64;
    let thread = |e: &serde_json::Value| (e["pid"].to_string(), e["tid"].to_string());
    // Frames by thread, sorted by start.
    type Frames = Vec<(i64, i64, String)>;
    let mut frames: HashMap<(String, String), Frames> = HashMap::new();
    for e in events.iter().filter(|e| e["cat"] == "python_function" && e["ph"] == "X") {
        let s = ns(&e["ts"]);
        frames.entry(thread(e)).or_default().push((s, s + ns(&e["dur"]), node_label(e["name"].as_str().unwrap()).into_owned()));
    }
    for v in frames.values_mut() {
        v.sort_by_key(|f| f.0);
    }
    let launches: HashMap<i64, (i64, (String, String))> = events
        .iter()
        .filter(|e| e["cat"] == "cuda_runtime" || e["cat"] == "cuda_driver")
        .filter_map(|e| Some((e["args"]["correlation"].as_i64()?, (ns(&e["ts"]), thread(e)))))
        .collect();
    let mut out: HashMap<String, i64> = HashMap::new();
    for k in events.iter().filter(|e| e["cat"] == "kernel") {
        let Some((at, th)) = k["args"]["correlation"].as_i64().and_then(|c| launches.get(&c)) else { continue };
        let Some(v) = frames.get(th) else { continue };
        let dur = ns(&k["dur"]);
        let mut names: Vec<&str> = v.iter().take_while(|f| f.0 <= *at).filter(|f| *at < f.1).map(|f| f.2.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        for n in names {
            *out.entry(n.to_string()).or_default() += dur;
        }
    }
    out
}

#[test]
fn every_kernel_is_on_one_path_and_the_weights_sum_to_the_kernel_time() {
    for name in [
        "llama_small_stack.pt.trace.json.gz",
        "llama_dense_eager.pt.trace.json.gz",
        "vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz",
        "sglang_qwen3-8b_decode_graph_mi300x.json.gz",
        "gpu_only_mi210.json.gz",
    ] {
        let doc: serde_json::Value = serde_json::from_slice(&plain_fixture(name)).unwrap();
        let a = analysis(name);
        let cp = call_paths(&a);
        let folded: i64 = cp.folded(None).iter().map(|(_, w)| w).sum();
        let kernels: u64 = cp.nodes.iter().map(|n| u64::from(n.kernels)).sum();
        eprintln!(
            "{name}: {} nodes, {kernels} kernels, {} replayed, {} with no launch",
            cp.nodes.len(),
            cp.replayed,
            cp.no_launch
        );
        assert_eq!(folded, raw_kernel_ns(&doc), "{name}");
        assert_eq!(cp.totals()[0].iter().sum::<i64>(), folded);
        // Per phase, the weights add up to the whole.
        let by_phase: i64 = traceprism::analysis::phases::Phase::ALL
            .iter()
            .map(|&p| cp.folded(Some(p)).iter().map(|(_, w)| w).sum::<i64>())
            .sum();
        assert_eq!(by_phase, folded, "{name}");
    }
}

#[test]
fn a_frames_inclusive_time_is_the_raw_kernels_launched_inside_it() {
    // Every fixture recorded with Python stacks.
    for name in [
        "llama_small_stack.pt.trace.json.gz",
        "vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz",
        "vllm_tp4_mi300x_1000isl_10osl_32con.pt.trace.json.gz",
        "vllm_moe_tp8_eager_b200.json.gz",
        "sglang_qwen3-8b_prefill_mi300x.json.gz",
        "sglang_qwen3-8b_decode_graph_mi300x.json.gz",
        "sglang_qwen3-30b-a3b_decode_b300.trace.json.gz",
        "sglang_qwen3-30b-a3b_decode_mi300x.trace.json.gz",
        "resnet_train_actckpt_mi300x.json.gz",
        "hf_bert_small_forward_h100.json.gz",
        "hf_qwen15_05b_base_forward_h100.json.gz",
        "hf_timesformer_forward_h100.json.gz",
        "xdit_flux1_4steps_mi300x.json.gz",
    ] {
        let doc: serde_json::Value = serde_json::from_slice(&plain_fixture(name)).unwrap();
        let raw = raw_frame_ns(&doc);
        let a = analysis(name);
        let cp = call_paths(&a);
        let totals = cp.totals();
        // Per frame name: the time of nodes of that name with no ancestor of the same name.
        let mut tree: HashMap<&str, i64> = HashMap::new();
        for (i, total) in totals.iter().enumerate().skip(1) {
            if cp.nodes[i].kind != traceprism::analysis::code::call_paths::NodeKind::Python {
                continue;
            }
            let mut p = cp.nodes[i].parent as usize;
            let mut nested = false;
            while p != 0 {
                nested |= cp.nodes[p].label == cp.nodes[i].label;
                p = cp.nodes[p].parent as usize;
            }
            if !nested {
                *tree.entry(cp.name(i)).or_default() += total.iter().sum::<i64>();
            }
        }
        let mut checked = 0;
        let mut wrong = Vec::new();
        for (frame, &want) in &raw {
            if frame.starts_with("nn.Module") || !frame.contains(".py(") {
                continue;
            }
            let got = tree.get(frame.as_str()).copied().unwrap_or(0);
            if got != want {
                wrong.push(format!("{frame}: {got} against {want}"));
            }
            checked += 1;
        }
        eprintln!("{name}: {checked} frames, {} differ from the raw JSON", wrong.len());
        assert!(wrong.is_empty(), "{name}: {:#?}", &wrong[..wrong.len().min(5)]);
        assert!(checked > 5, "{name}: {checked}");
    }
}

#[test]
fn source_lines_say_where_the_gpu_time_comes_from() {
    // llama_small_stack: the RMSNorm forward (modeling_llama.py line 62) and nn.Linear's forward
    // launch 29% and 35% of the GPU time; their lines call only built-ins, so a line's time is its
    // frame's inclusive time from the raw JSON.
    let name = "llama_small_stack.pt.trace.json.gz";
    let doc: serde_json::Value = serde_json::from_slice(&plain_fixture(name)).unwrap();
    let raw = raw_frame_ns(&doc);
    let total = raw_kernel_ns(&doc) as f64;
    let a = analysis(name);
    let s = sources(&call_paths(&a));
    for (frame, share) in
        [("torch/nn/modules/linear.py(130): forward", 35.3), ("transformers/models/llama/modeling_llama.py(62): forward", 29.2)]
    {
        let row = s.iter().find(|x| x.frame == frame).unwrap();
        let ns: i64 = row.ns.iter().sum();
        eprintln!(
            "{frame}: {:.1} µs, {:.1}% of the kernel time; top {:?}",
            ns as f64 / 1e3,
            100.0 * ns as f64 / total,
            row.top_kernels[0]
        );
        assert_eq!(ns, raw[frame], "{frame}");
        assert!((100.0 * ns as f64 / total - share).abs() < 0.05, "{frame}");
    }
    assert_eq!(s[0].frame, "torch/nn/modules/linear.py(130): forward");
    assert_eq!(s[0].parts(), ("torch/nn/modules/linear.py", Some(130), "forward"));
    // Every kernel's time is on exactly one line (or none).
    assert_eq!(s.iter().map(|x| x.ns.iter().sum::<i64>()).sum::<i64>() as f64, total);
}

#[test]
fn without_stacks_the_op_chains_sit_under_phase_and_layer() {
    let name = "llama_dense_eager.pt.trace.json.gz";
    let a = analysis(name);
    let cp = call_paths(&a);
    let folded = cp.folded(None);
    // Every path starts at a phase; inside the layers, at `layer N` of the truth's 16.
    assert!(folded.iter().all(|(p, _)| p.starts_with("prefill;") || p.starts_with("decode;")), "{:?}", &folded[..3]);
    let layers: std::collections::BTreeSet<&str> = folded.iter().filter_map(|(p, _)| p.split(';').nth(1)).collect();
    assert!(layers.contains("layer 0") && layers.contains("layer 15") && !layers.contains("layer 16"), "{layers:?}");
    assert!(folded.iter().any(|(p, _)| p.contains(";aten::linear;aten::matmul;aten::mm;")), "op chains");
    // Those phase and layer nodes are places, not "no launch": every kernel here has its launch.
    assert_eq!(cp.no_launch, 0);
    for i in 1..cp.nodes.len() {
        if cp.name(i) == "layer 0" || cp.name(i) == "decode" {
            assert_eq!(cp.nodes[i].kind, traceprism::analysis::code::call_paths::NodeKind::Place, "{}", cp.name(i));
        }
    }
}

#[test]
fn the_folded_stacks_render_through_inferno_and_a_trace_against_itself_changes_nothing() {
    let name = "llama_small_stack.pt.trace.json.gz";
    let dir = std::env::temp_dir().join(format!("traceprism-flame-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("f.svg");
    let exe = env!("CARGO_BIN_EXE_traceprism");
    let run = |args: &[&str]| std::process::Command::new(exe).args(args).output().unwrap();
    let path = fixture(name);
    let folded = run(&["flame", path.to_str().unwrap()]);
    assert!(folded.status.success());
    let text = String::from_utf8(folded.stdout).unwrap();
    let total: i64 = text.lines().map(|l| l.rsplit_once(' ').unwrap().1.parse::<i64>().unwrap()).sum();
    let out = run(&["flame", path.to_str().unwrap(), "--svg", svg.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let drawn = std::fs::read_to_string(&svg).unwrap();
    assert!(drawn.starts_with("<?xml") && drawn.contains("<svg"), "an SVG");
    // inferno writes the root's total in its title: the folded weights, whole.
    let all = format!("all ({} ns, 100%)", fmt_thousands(total));
    assert!(drawn.contains(&all), "{all} not in the SVG");
    // Against itself: every path the same on both sides.
    let a = analysis(name);
    let d = differential(a.side(), a.side(), None);
    assert!(!d.is_empty() && d.iter().all(|x| x.a_ns_per_pass == x.b_ns_per_pass));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `1234567` as inferno prints counts: `1,234,567`.
fn fmt_thousands(n: i64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[test]
fn with_a_capture_trace_replayed_kernels_sit_under_the_code_that_captured_them() {
    // vLLM's full-graph decode on MI300X: without the capture, every replayed kernel sits under
    // its graph launch alone; with it, under the launch and then the Python frames and ops that
    // dispatched it while the graph was captured. The weights still add up to the kernel time.
    let trace = "vllm_gptoss_decode_fullgraph_mi300x.json.gz";
    let doc: serde_json::Value = serde_json::from_slice(&plain_fixture(trace)).unwrap();
    let captures = [fixture("graph_capture/vllm_decode_full/capture_traces")];
    let a = traceprism::analyze_path_with(&fixture(trace), traceprism::Options::default(), 2, &captures).unwrap();
    let cp = call_paths(&a);
    let folded = cp.folded(None);
    assert_eq!(folded.iter().map(|(_, w)| w).sum::<i64>(), raw_kernel_ns(&doc));
    let under_code = |f: &[(String, i64)]| -> i64 {
        f.iter()
            .filter(|(p, _)| p.split_once("graph replay").is_some_and(|(_, after)| after.contains(".py(")))
            .map(|(_, w)| w)
            .sum()
    };
    let plain = call_paths(&analysis(trace)).folded(None);
    eprintln!(
        "{trace}: {:.1} of {:.1} µs under the captured code (without the capture: {:.1})",
        under_code(&folded) as f64 / 1e3,
        raw_kernel_ns(&doc) as f64 / 1e3,
        under_code(&plain) as f64 / 1e3
    );
    assert_eq!(under_code(&plain), 0);
    assert!(under_code(&folded) as f64 > 0.9 * raw_kernel_ns(&doc) as f64);
}
