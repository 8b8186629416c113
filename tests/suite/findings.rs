//! Findings (issue 53): what to fix first and what it saves, each figure checked here against the
//! raw events: kernel intervals and runtime launches read from the JSON with serde_json, passes
//! from the truth file, never from our own output.

use crate::common::*;
use std::collections::HashMap;
use traceprism::analysis::findings::{findings, GRAPH_REPLAY_GAP_NS};

/// Per truth pass of `phase`: (wall, busy, launch wait, kernels) in ns from the raw events. The
/// launch wait is the GPU's idle before each kernel up to when its launch call (a runtime or
/// driver call: cuBLASLt launches through `cuLaunchKernel`) returned, unless a synchronising
/// call (a `…Synchronize`, or a blocking `cudaMemcpy`) returned in that stretch, plus the pass's
/// launch latency: the median of (kernel start − launch returned) over the gaps whose kernel
/// started after its launch returned; less what of it the launching thread spent in nothing
/// recorded beyond its ordinary gap.
fn raw_host_waits(trace: &str, truth: &str, phase: &str) -> Vec<(i64, i64, i64, usize, i64)> {
    let doc: serde_json::Value = serde_json::from_slice(&plain_fixture(trace)).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let ns = |v: &serde_json::Value| (v.as_f64().unwrap() * 1e3).round() as i64;
    let calls: Vec<&serde_json::Value> =
        events.iter().filter(|e| e["cat"] == "cuda_runtime" || e["cat"] == "cuda_driver").collect();
    let issued: HashMap<i64, i64> =
        calls.iter().filter_map(|e| Some((e["args"]["correlation"].as_i64()?, ns(&e["ts"]) + ns(&e["dur"])))).collect();
    let mut sync_ends: Vec<i64> = calls
        .iter()
        .filter(|e| {
            let n = e["name"].as_str().unwrap();
            n.ends_with("Synchronize") || n == "cudaMemcpy"
        })
        .map(|e| ns(&e["ts"]) + ns(&e["dur"]))
        .collect();
    sync_ends.sort();
    let t = traceprism::pipeline::read_truth(&fixture(truth)).unwrap();
    let pass_of: HashMap<(i64, i64), u32> = t
        .kernels
        .iter()
        .filter(|k| k.phase == phase)
        .map(|k| ((k.correlation, (k.ts * 1e3).round() as i64), k.pass.unwrap()))
        .collect();
    let mut by_pass: HashMap<u32, Vec<(i64, i64, i64)>> = HashMap::new();
    for e in events.iter().filter(|e| e["cat"] == "kernel") {
        let c = e["args"]["correlation"].as_i64().unwrap();
        let (s, d) = (ns(&e["ts"]), ns(&e["dur"]));
        if let Some(&p) = pass_of.get(&(c, s)) {
            by_pass.entry(p).or_default().push((s, s + d, issued.get(&c).copied().unwrap_or(i64::MIN)));
        }
    }
    // What the launching thread recorded: its ranges and the calls that launched kernels. A gap
    // in them longer than the thread's ordinary gap (its 90th percentile, at least 50 µs) is in
    // nothing recorded beyond that ordinary gap: the host's own time, which no replay removes.
    let kernel_corr: std::collections::HashSet<i64> =
        events.iter().filter(|e| e["cat"] == "kernel").filter_map(|e| e["args"]["correlation"].as_i64()).collect();
    let launching: Vec<&serde_json::Value> =
        calls.iter().copied().filter(|e| e["args"]["correlation"].as_i64().is_some_and(|c| kernel_corr.contains(&c))).collect();
    let thread = (launching[0]["pid"].clone(), launching[0]["tid"].clone());
    let recorded: Vec<(i64, i64)> = events
        .iter()
        .filter(|e| e["ph"] == "X" && matches!(e["cat"].as_str(), Some("cpu_op" | "user_annotation" | "python_function")))
        .chain(launching.iter().copied())
        .filter(|e| (e["pid"].clone(), e["tid"].clone()) == thread && ns(&e["dur"]) > 0)
        .map(|e| (ns(&e["ts"]), ns(&e["ts"]) + ns(&e["dur"])))
        .collect();
    let union = union(recorded);
    let mut gaps: Vec<i64> = union.windows(2).map(|w| w[1].0 - w[0].1).collect();
    gaps.sort();
    let typical = gaps[gaps.len() * 9 / 10];
    let bound = typical.max(traceprism::analysis::budget::host::MIN_HOST_ACTIVITY_NS);
    let unrecorded: Vec<(i64, i64)> =
        union.windows(2).filter(|w| w[1].0 - w[0].1 > bound).map(|w| (w[0].1 + typical, w[1].0)).collect();
    let outside =
        |from: i64, to: i64| to - from - unrecorded.iter().map(|&(us, ue)| (ue.min(to) - us.max(from)).max(0)).sum::<i64>();
    let mut out = Vec::new();
    for (_, mut k) in by_pass {
        k.sort();
        let (mut end, mut busy) = (k[0].1, k[0].1 - k[0].0);
        let mut gaps = Vec::new();
        for &(s, e, issued) in &k[1..] {
            if s > end {
                gaps.push((end, s, issued));
                busy += e - s;
            } else {
                busy += (e - end).max(0);
            }
            end = end.max(e);
        }
        let mut latency: Vec<i64> = gaps.iter().filter(|g| g.2 >= g.0 && g.1 > g.2).map(|g| g.1 - g.2).collect();
        latency.sort();
        let latency = latency[latency.len() / 2];
        let (mut waiting, mut unseen) = (0, 0);
        for (idle, s, issued) in gaps {
            let after_sync = sync_ends.iter().any(|&x| x >= idle && x <= issued);
            if issued > idle && !after_sync {
                let to = (issued + latency).min(s);
                waiting += outside(idle, to);
                unseen += to - idle - outside(idle, to);
            }
        }
        out.push((end - k[0].0, busy, waiting, k.len(), unseen));
    }
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[test]
fn an_eager_decode_is_host_bound_by_what_the_raw_events_say() {
    for (trace, truth) in [
        ("llama_dense_eager.pt.trace.json.gz", "llama_dense_eager.truth.json.gz"),
        ("moe_eager.pt.trace.json.gz", "moe_eager.truth.json.gz"),
    ] {
        let raw = raw_host_waits(trace, truth, "decode");
        let a = analysis(trace);
        let f = findings(&a);
        for x in &f {
            eprintln!(
                "{trace}: {} {} saves {:.1} µs/step ({:.1}%), {}: {}",
                x.kind, x.scope, x.saving_us, x.saving_pct, x.confidence, x.evidence
            );
        }
        let decode = f.iter().find(|x| x.kind == "host_bound" && x.scope.starts_with("decode")).expect("a host-bound decode");
        // The saving: the median over the truth's decode passes of the host wait, less the gap a
        // replay leaves per kernel.
        let want = median(raw.iter().map(|&(_, _, w, k, _)| (w - k as i64 * GRAPH_REPLAY_GAP_NS) as f64 / 1e3).collect());
        let unseen = median(raw.iter().map(|&(.., u)| u as f64 / 1e3).collect());
        let wall = median(raw.iter().map(|&(w, ..)| w as f64 / 1e3).collect());
        let busy = median(raw.iter().map(|&(_, b, ..)| b as f64 / 1e3).collect());
        eprintln!("{trace}: raw decode median wall {wall:.1} µs, busy {busy:.1} µs, saving {want:.1} µs");
        assert_eq!(decode.passes, raw.len());
        assert!(
            (decode.saving_us / want - 1.0).abs() < 0.01,
            "{trace}: {:.1} µs against {want:.1} from the raw events",
            decode.saving_us
        );
        assert!((decode.saving_pct / (100.0 * want / wall) - 1.0).abs() < 0.02, "{trace}: {:.1}%", decode.saving_pct);
        assert_eq!(decode.confidence, "high");
        assert!(decode.fix.contains("torch.compile") && decode.check.contains("85% busy"), "{decode:?}");
        // The step a replay would leave: the GPU work and a replay's gaps, a few ms here, and the
        // host's time in nothing recorded (which a replay does not remove).
        eprintln!("{trace}: in nothing recorded beyond the ordinary gap: {unseen:.1} µs a decode step");
        assert!(wall - decode.saving_us - unseen < 1.5 * busy, "{trace}");
    }
}

#[test]
fn healthy_graph_replayed_decode_steps_raise_no_host_bound_finding() {
    // vLLM's full-graph decode on MI300X (99% busy), and vLLM's piecewise-graph decode on H100
    // (the GPU busy 84-88% of each step).
    for name in ["vllm_gptoss_decode_fullgraph_mi300x.json.gz", "vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz"] {
        let a = analysis(name);
        let busy: Vec<f64> = a
            .phases
            .passes
            .iter()
            .filter(|p| p.phase.as_str() == "decode")
            .map(|p| p.busy_ns as f64 / (p.end_ns - p.start_ns) as f64)
            .collect();
        assert!(median(busy.clone()) >= 0.85, "{name}: {busy:?}");
        let over: Vec<_> = findings(&a).into_iter().filter(|f| f.kind == "host_bound" && f.saving_pct > 10.0).collect();
        assert!(over.is_empty(), "{name}: {over:?}");
    }
}

#[test]
fn what_was_not_recorded_is_not_blamed_on_the_host() {
    // The GPU alone: no runtime launch, so no wait can be put on the host: the idle is
    // unlinked, and the only findings are about what the GPU ran or what was not recorded.
    let mut doc: serde_json::Value = serde_json::from_slice(&plain_fixture("llama_small_stack.pt.trace.json.gz")).unwrap();
    keep_gpu_only(doc["traceEvents"].as_array_mut().unwrap());
    let a = analyse_bytes(&serde_json::to_vec(&doc).unwrap());
    assert!(a.trace.launches.is_empty());
    let f = findings(&a);
    for x in &f {
        eprintln!("{} {}: {:.1} µs: {}", x.kind, x.scope, x.saving_us, x.evidence);
        assert!(
            ["unlinked_idle", "gpu_bound", "fusion", "exposed_copy", "exposed_communication", "roofline"]
                .contains(&x.kind.as_str()),
            "{x:?}"
        );
    }
    let unlinked = f.iter().find(|x| x.kind == "unlinked_idle").expect("the idle, unexplained, with how to record it");
    assert!(unlinked.fix.contains("ProfilerActivity.CPU"), "{}", unlinked.fix);
}

#[test]
fn idle_between_a_jax_benchmarks_steps_is_a_step_gap_in_jax_terms() {
    // 75 runs of one XLA module (the XSpace profile's module-run annotations): between runs the
    // GPU idles. The gap is recomputed here from each pass's kernels as read (first start, last
    // end), not from the passes' own figures.
    let a = traceprism::analyze_path(&fixture("jax_attention_bench_mi300x.xplane.pb"), traceprism::Options::default()).unwrap();
    let g = &a.trace.gpu;
    let mut spans: Vec<(i64, i64)> = a
        .phases
        .passes
        .iter()
        .filter(|p| !p.incomplete)
        .map(|p| {
            let rows = p.rows.iter().map(|&r| r as usize);
            (rows.clone().map(|r| g.ts[r]).min().unwrap(), rows.map(|r| g.ts[r] + g.dur[r]).max().unwrap())
        })
        .collect();
    spans.sort();
    let gaps: Vec<f64> = spans.windows(2).map(|w| (w[1].0 - w[0].1).max(0) as f64 / 1e3).collect();
    let f = findings(&a);
    let gap = f.iter().find(|x| x.kind == "step_gaps").expect("a step gap");
    eprintln!("{}: {} ({} gaps, median {:.1} µs)", gap.scope, gap.evidence, gaps.len(), median(gaps.clone()));
    assert_eq!(gap.passes, spans.len());
    // Each step's budget spans the raw period (first kernel to the next step's first kernel),
    // its rows adding up to it; between steps the host issues the next run (launch) and is
    // otherwise in nothing recorded (between_steps): the finding is the median of the second.
    let b = a.budget();
    let mut between = Vec::new();
    for (k, s) in b.steps.iter().filter(|s| s.pass.is_some_and(|p| !a.phases.passes[p].incomplete)).enumerate() {
        if k + 1 == spans.len() {
            break;
        }
        assert_eq!(s.wall_ns(), spans[k + 1].0 - spans[k].0, "step {k}");
        assert_eq!(s.rows.iter().map(|r| r.ns).sum::<i64>(), s.wall_ns());
        between.push(s.part_ns(traceprism::analysis::budget::Part::BetweenSteps) as f64 / 1e3);
    }
    assert!(gap.saving_us <= median(gaps.clone()) + 0.01);
    assert!((gap.saving_us - median(between)).abs() < 1.0, "{}", gap.saving_us);
    assert!(gap.fix.contains("block_until_ready") && gap.fix.contains("lax.scan"), "{}", gap.fix);
}

/// A kernel as read by serde_json: (name, start, end, device, correlation), ns.
type RawKernel = (String, i64, i64, i64, i64);

/// The trace's JSON and its kernels.
fn raw_kernels(trace: &str) -> (serde_json::Value, Vec<RawKernel>) {
    let doc: serde_json::Value = serde_json::from_slice(&plain_fixture(trace)).unwrap();
    let ns = |v: &serde_json::Value| (v.as_f64().unwrap() * 1e3).round() as i64;
    let k = doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "kernel")
        .map(|e| {
            let s = ns(&e["ts"]);
            let name = e["name"].as_str().unwrap().to_string();
            (
                name,
                s,
                s + ns(&e["dur"]),
                e["args"]["device"].as_i64().unwrap_or(-1),
                e["args"]["correlation"].as_i64().unwrap_or(-1),
            )
        })
        .collect();
    (doc, k)
}

#[test]
fn a_graph_replayed_step_that_waits_on_another_stream_is_stalled_not_host_bound() {
    // SGLang's one decode step on MI300X: the GPU idles 463 ms with the step's first kernel
    // already launched (the stream waits on an event) while the host blocks in a 256-byte
    // hipMemcpyWithStream. Recomputed from the raw events: the longest gap between kernels,
    // less the part before that kernel's launch returned.
    let trace = "sglang_qwen3-8b_decode_graph_mi300x.json.gz";
    let (doc, mut k) = raw_kernels(trace);
    k.sort_by_key(|x| x.1);
    let ns = |v: &serde_json::Value| (v.as_f64().unwrap() * 1e3).round() as i64;
    let issued: HashMap<i64, i64> = doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "cuda_runtime")
        .filter_map(|e| Some((e["args"]["correlation"].as_i64()?, ns(&e["ts"]) + ns(&e["dur"]))))
        .collect();
    let (mut end, mut longest) = (k[0].2, (0, 0, 0));
    for x in &k[1..] {
        if x.1 - end > longest.1 - longest.0 {
            longest = (end, x.1, issued[&x.4]);
        }
        end = end.max(x.2);
    }
    let (idle, start, launched) = longest;
    let host = launched - idle;
    eprintln!(
        "raw: idle {:.1} µs, the kernel's launch returned {:.1} µs into it",
        (start - idle) as f64 / 1e3,
        host as f64 / 1e3
    );
    let a = analysis(trace);
    let f = findings(&a);
    for x in &f {
        eprintln!("{} {}: {:.1} µs ({:.1}%): {}", x.kind, x.scope, x.saving_us, x.saving_pct, x.evidence);
    }
    assert!(f.iter().all(|x| x.kind != "host_bound"), "a wait no launch causes is not host-bound");
    let s = f.iter().find(|x| x.kind == "stalled").expect("a stall");
    let want = (start - launched) as f64 / 1e3;
    // The stall is the raw idle after the launch returned, less a launch latency of a few µs.
    assert!(s.saving_us <= want && s.saving_us > want - 20.0, "{} against {want}", s.saving_us);
    assert!(s.evidence.contains("hipMemcpyWithStream") && s.evidence.contains("cuda_graph_runner.py(276)"), "{}", s.evidence);
    assert!(s.confidence.starts_with("low"));
    assert_eq!((s.from_ns, s.to_ns).1, start);
}

#[test]
fn exposed_communication_is_collective_time_no_compute_kernel_covers() {
    // vLLM on H100, rank 0 of TP4: its prefill step's all-reduces (custom cross_device_reduce and
    // NCCL) recomputed from the raw kernels inside the pass's window on its device.
    let trace = "vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz";
    let a = analysis(trace);
    let f = findings(&a);
    let x = f
        .iter()
        .find(|x| x.kind == "exposed_communication" && x.scope.starts_with("prefill"))
        .expect("exposed prefill collectives");
    let p = a.phases.passes.iter().find(|p| p.phase.as_str() == "prefill").unwrap();
    let (_, k) = raw_kernels(trace);
    let inside: Vec<_> = k.iter().filter(|x| x.3 == p.device as i64 && x.1 >= p.start_ns && x.2 <= p.end_ns).collect();
    let is_comm = |n: &str| n.starts_with("ncclDevKernel") || n.contains("cross_device_reduce");
    // Exposed = per ns of collective, no compute kernel running: a sweep over both sets.
    let mut edges: Vec<(i64, i32, i32)> = Vec::new();
    for x in &inside {
        let c = i32::from(is_comm(&x.0));
        edges.push((x.1, 1, c));
        edges.push((x.2, -1, c));
    }
    edges.sort_by_key(|e| (e.0, e.1));
    let (mut comm, mut compute, mut last, mut exposed) = (0, 0, 0i64, 0i64);
    for (t, d, c) in edges {
        if comm > 0 && compute == 0 {
            exposed += t - last;
        }
        if c == 1 {
            comm += d;
        } else {
            compute += d;
        }
        last = t;
    }
    eprintln!("{}: {} — raw exposed {:.1} µs", x.scope, x.evidence, exposed as f64 / 1e3);
    assert!((x.saving_us - exposed as f64 / 1e3).abs() < 0.01 * x.saving_us, "{} against {exposed}", x.saving_us);
    assert!(x.confidence.starts_with("low: an upper bound"));
    assert!(x.fix.contains("custom all-reduce"), "{}", x.fix);
}

#[test]
fn findings_checked_against_the_second_trace_of_every_real_pair() {
    use traceprism::analysis::findings::outcome::outcomes;
    // Every pair of traces of one workload among the fixtures, before → after. None of them
    // isolates one fix: the vLLM pair is one serving run on two GPUs (the H100 replays whole
    // decode steps from CUDA graphs, the MI300X launches 19% of its decode kernels one by one);
    // the SGLang pair is one decode step on two GPUs, graph settings alike; the nsys pair is one
    // training job before and after an undocumented change.
    let pairs = [
        ("vllm_tp4_mi300x_1000isl_10osl_32con.pt.trace.json.gz", "vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz"),
        ("sglang_qwen3-30b-a3b_decode_b300.trace.json.gz", "sglang_qwen3-30b-a3b_decode_mi300x.trace.json.gz"),
        ("nsys/mfu_2gpu_before.sqlite", "nsys/mfu_2gpu_after.sqlite"),
    ];
    let mut seen = HashMap::new();
    for (before, after) in pairs {
        let open = |f: &str| traceprism::analyze_path(&fixture(f), traceprism::Options::default()).unwrap();
        let (a, b) = (open(before), open(after));
        let o = outcomes(&a, &b);
        let kernel_ms = |x: &traceprism::Analysis| {
            let g = &x.trace.gpu;
            (0..g.len()).filter(|&r| g.kind[r] == traceprism::model::GpuKind::Kernel).map(|r| g.dur[r]).sum::<i64>() as f64 / 1e6
        };
        eprintln!("{before} → {after}: kernel time {:.2} → {:.2} ms", kernel_ms(&a), kernel_ms(&b));
        if o.is_empty() {
            eprintln!("  no finding in the first trace: nothing predicted the change");
        }
        for x in &o {
            eprintln!(
                "  {} ({}): predicted {:.1} µs, measured {:?} µs: {}",
                x.kind,
                x.scope,
                x.predicted_us,
                x.measured_us.map(|m| (m * 10.0).round() / 10.0),
                x.verdict
            );
        }
        seen.insert(before, o);
    }
    // The GPUs differ too: the decode steps' GPU work, read from the passes' rows.
    let busy = |f: &str| {
        let a = analysis(f);
        let v: Vec<f64> =
            a.phases.passes.iter().filter(|p| p.phase.as_str() == "decode").map(|p| p.busy_ns as f64 / 1e3).collect();
        median(v)
    };
    let (mi300x, h100) = (busy(pairs[0].0), busy(pairs[0].1));
    eprintln!("decode GPU work a step: MI300X {mi300x:.1} µs, H100 {h100:.1} µs");
    // vLLM: the MI300X run's host-bound decode is gone on the H100, whose decode step is shorter
    // by about what the finding predicted, with the two GPUs' work within 10% of each other.
    let host = seen[pairs[0].0].iter().find(|x| x.kind == "host_bound" && x.scope.starts_with("decode")).unwrap();
    assert!(host.gone && host.verdict.starts_with("held"), "{host:?}");
    assert!((mi300x / h100 - 1.0).abs() < 0.1);
    // SGLang: the same graph settings on the other GPU: the host-bound decode is still there.
    let same = &seen[pairs[1].0];
    assert!(same.iter().any(|x| x.kind == "host_bound" && !x.gone && x.verdict.starts_with("still there")), "{same:?}");
    // The nsys pair: no whole step captured, so each device's capture window is budgeted:
    // nsys-ai 0.3's `diagnose` on the same file finds 17 ms of NCCL SendRecv not hidden behind
    // compute; so does the exposed-communication finding of device 0's window.
    let nsys = &seen[pairs[2].0];
    let comm = nsys.iter().find(|x| x.kind == "exposed_communication" && x.scope.contains("capture window")).expect("exposed");
    assert!((comm.predicted_us / 17_000.0 - 1.0).abs() < 0.1, "{comm:?}");
}

#[test]
fn an_item_inside_the_forward_is_a_sync_with_its_python_line() {
    // BERT-small's forward on H100: Hugging Face's SDPA mask helper calls .item() (is_nonzero):
    // the host blocks in cudaStreamSynchronize, the GPU drains, then waits while the host
    // launches again. From the raw events: the idle around the call's return, from the last
    // kernel to end before it to the first kernel to start after it. 4.7% of the step: below the
    // raising threshold, so it shows at any size only (`findings_from(a, 0.0)`).
    let trace = "hf_bert_small_forward_h100.json.gz";
    let (doc, k) = raw_kernels(trace);
    let ns = |v: &serde_json::Value| (v.as_f64().unwrap() * 1e3).round() as i64;
    let call = doc["traceEvents"].as_array().unwrap().iter().find(|e| e["name"] == "cudaStreamSynchronize").unwrap();
    let back = ns(&call["ts"]) + ns(&call["dur"]);
    // The GPU drains when its last work before the return ends: the kernels, and the copy the
    // .item() itself issued.
    let copies = doc["traceEvents"].as_array().unwrap().iter().filter(|e| e["cat"] == "gpu_memcpy");
    let copy_ends = copies.map(|e| ns(&e["ts"]) + ns(&e["dur"]));
    let drained = k.iter().map(|x| x.2).chain(copy_ends).filter(|&e| e <= back).max().unwrap();
    let refilled = k.iter().map(|x| x.1).filter(|&s| s >= back).min().unwrap();
    let want = (refilled - drained) as f64 / 1e3;
    let a = analysis(trace);
    assert!(findings(&a).iter().all(|x| x.kind != "sync"), "under 5% of the step: not raised");
    let all = traceprism::analysis::findings::findings_from(&a, 0.0);
    let s = all.iter().find(|x| x.kind == "sync").expect("a sync at any size");
    eprintln!("{}: {:.1} µs ({:.1}%), raw idle {want:.1} µs: {}", s.scope, s.saving_us, s.saving_pct, s.evidence);
    assert!((s.saving_us - want).abs() < 0.01 * want, "{} against {want}", s.saving_us);
    assert!(
        s.evidence
            .contains("cudaStreamSynchronize in aten::_local_scalar_dense from transformers/modeling_attn_mask_utils.py(429)"),
        "{}",
        s.evidence
    );
    assert!(s.fix.contains(".item()"), "{}", s.fix);
}

#[test]
fn eager_attention_scores_far_from_the_roof_are_a_roofline_finding() {
    // TimeSformer on H100 computes attention op by op: aten::bmm [96, 3137, 64] × [96, 64, 3137]
    // writes the scores. Its achieved TFLOP/s recomputed from the raw events: the op calls with
    // those Input Dims, and the kernels that carry their External id.
    let trace = "hf_timesformer_forward_h100.json.gz";
    let doc: serde_json::Value = serde_json::from_slice(&plain_fixture(trace)).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let dims = serde_json::json!([[96, 3137, 64], [96, 64, 3137]]);
    let calls: Vec<&serde_json::Value> =
        events.iter().filter(|e| e["cat"] == "cpu_op" && e["name"] == "aten::bmm" && e["args"]["Input Dims"] == dims).collect();
    let ext: std::collections::HashSet<i64> = calls.iter().map(|e| e["args"]["External id"].as_i64().unwrap()).collect();
    let gpu_us: f64 = events
        .iter()
        .filter(|e| e["cat"] == "kernel" && e["args"]["External id"].as_i64().is_some_and(|x| ext.contains(&x)))
        .map(|e| e["dur"].as_f64().unwrap())
        .sum();
    let flops = 2.0 * 96.0 * 3137.0 * 64.0 * 3137.0;
    let tflops = flops / (gpu_us / calls.len() as f64) / 1e6;
    let a = analysis(trace);
    let f = findings(&a);
    let r = f.iter().find(|x| x.kind == "roofline").expect("a roofline finding");
    eprintln!("raw: {} calls, {gpu_us:.1} µs, {tflops:.1} TFLOP/s; {}: {}", calls.len(), r.evidence, r.saving_us);
    assert!(
        r.evidence.contains(&format!("aten::bmm [[96, 3137, 64], [96, 64, 3137]] × {} calls", calls.len())),
        "{}",
        r.evidence
    );
    assert!(r.evidence.contains(&format!("({tflops:.1} of")), "{tflops:.1} TFLOP/s: {}", r.evidence);
    assert!(r.fix.contains("scaled_dot_product_attention"), "{}", r.fix);
    // The finding never claims more than the step's kernel time.
    let kernels_us = a.phases.passes.iter().map(|p| p.kernel_time_ns).sum::<i64>() as f64 / 1e3;
    assert!(r.saving_us < kernels_us, "{} of {kernels_us}", r.saving_us);
}

/// Every kind of finding is named where users read of them: the README's list of kinds (each
/// its own bullet), the skill's `findings` entry and the CLI's usage (made from the table).
#[test]
fn every_finding_kind_is_named_where_users_read_of_them() {
    use traceprism::analysis::findings::{Kind, KINDS};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let list = &readme[readme.find("**What to fix first.**").unwrap()..readme.find("Each row has `saving_us`").unwrap()];
    let skill = std::fs::read_to_string(root.join("skills/traceprism/SKILL.md")).unwrap();
    let entry = &skill[skill.find("- `findings`: what to fix first").unwrap()..];
    let entry = &entry[..entry.find("\n- `").unwrap()];
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_traceprism")).arg("--help").output().unwrap();
    let usage = String::from_utf8_lossy(&out.stdout);
    let kinds_block = &usage[usage.find("FINDING KINDS").expect("the usage lists the kinds")..];
    let mut missing = Vec::new();
    for spec in &KINDS {
        if !list.contains(&format!("- `{}`", spec.name)) && !list.contains(&format!(". `{}`:", spec.name)) {
            missing.push(format!("README misses `{}`", spec.name));
        }
        if !kinds_block.lines().any(|l| l.split_whitespace().next() == Some(spec.name)) {
            missing.push(format!("the usage misses {}", spec.name));
        }
    }
    for spec in Kind::of_one_trace() {
        if !entry.contains(&format!("`{}`", spec.name)) {
            missing.push(format!("SKILL's findings entry misses `{}`", spec.name));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}
