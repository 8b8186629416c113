//! Every trace tells the truth about itself: real fixtures changed in a test helper (never in
//! place) the way real traces from elsewhere come — the CPU recorded alone, a device kind we do
//! not read, kernels dropped at the session's start, overlapping and zero-length kernels, ns
//! timestamps, Kineto's 2026 counter and stream-sync events — each gives its loud warning, in the
//! summary's `warnings`, the health report and the CLI; and what is recorded is never asked for.

use crate::common;

use serde_json::{json, Value};
use traceprism::analysis::health::{health, Check, Status};
use traceprism::model::WarningKind;
use traceprism::report::summary::summary;
use traceprism::Analysis;

const FIXTURE: &str = "llama_small_stack.pt.trace.json.gz";

fn events(name: &str) -> Value {
    serde_json::from_slice(&common::plain_fixture(name)).expect("fixture is JSON")
}

fn analyse(v: &Value) -> Analysis {
    common::analyse_bytes(&serde_json::to_vec(v).unwrap())
}

fn check<'a>(checks: &'a [Check], name: &str) -> &'a Check {
    checks.iter().find(|c| c.check.as_str() == name).unwrap_or_else(|| panic!("no check {name}"))
}

fn is_cat(e: &Value, cats: &[&str]) -> bool {
    e["cat"].as_str().is_some_and(|c| cats.contains(&c))
}

fn kernel_launches(v: &Value) -> usize {
    v["traceEvents"].as_array().unwrap().iter().filter(|e| e["name"].as_str().is_some_and(|n| n.contains("LaunchKernel"))).count()
}

/// Runs the CLI on a JSON value written to a temporary file.
fn cli(v: &Value, args: &[&str], tag: &str) -> (i32, String) {
    let path = std::env::temp_dir().join(format!("traceprism-health-{tag}-{}.json", std::process::id()));
    std::fs::write(&path, serde_json::to_vec(v).unwrap()).unwrap();
    let mut all = args.to_vec();
    let p = path.to_string_lossy().into_owned();
    all.insert(1, &p);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_traceprism")).args(&all).output().unwrap();
    std::fs::remove_file(&path).ok();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
}

/// The CLI's `summary --json` of the changed trace says what the library says: the same warning
/// counts and the same status per check (the CLI exits 0).
fn assert_cli_agrees(v: &Value, s: &traceprism::report::summary::Summary, tag: &str) {
    let (code, text) = cli(v, &["summary", "--json"], tag);
    assert_eq!(code, 0, "{tag}: {text}");
    let json: Value = serde_json::from_str(text.trim_start_matches(|c| c != '{')).expect("summary JSON");
    assert_eq!(json["warnings"]["counts"], serde_json::to_value(&s.warnings.counts).unwrap(), "{tag}: warnings");
    for c in &s.health {
        let row = json["health"].as_array().unwrap().iter().find(|r| r["check"] == c.check.as_str()).expect("the same checks");
        assert_eq!(row["status"], c.status.as_str(), "{tag}: {}", c.check);
    }
}

#[test]
fn a_whole_trace_is_never_asked_for_what_it_recorded() {
    let a = common::analysis(FIXTURE);
    let h = health(&a);
    for name in ["cpu_ops", "runtime_calls", "kernels", "shapes", "stacks", "modules", "device_properties"] {
        let c = check(&h, name);
        assert_eq!(c.status, Status::Present, "{name}: {}", c.found);
        assert!(c.fix.is_empty() && c.limits.is_empty(), "{name} asks for nothing: {}", c.fix);
    }
    assert!(
        h.iter().all(|c| c.status != Status::Warning),
        "{:?}",
        h.iter().filter(|c| c.status == Status::Warning).collect::<Vec<_>>()
    );
    // Recorded without shapes or stacks (the profiler's defaults), those two are asked for.
    let mut v = events(FIXTURE);
    common::strip_shapes_and_stacks(v["traceEvents"].as_array_mut().unwrap());
    let h = health(&analyse(&v));
    for name in ["shapes", "stacks"] {
        let c = check(&h, name);
        assert_eq!(c.status, Status::Missing, "{name}");
        assert!(c.fix.contains(if name == "shapes" { "record_shapes=True" } else { "with_stack=True" }), "{}", c.fix);
    }
    assert_eq!(check(&h, "cpu_ops").status, Status::Present);
}

#[test]
fn a_trace_of_the_cpu_alone_says_so_loudly() {
    let mut v = events(FIXTURE);
    v["traceEvents"]
        .as_array_mut()
        .unwrap()
        .retain(|e| !is_cat(e, &["kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation"]));
    let launches = kernel_launches(&v);
    assert!(launches > 4000);
    let a = analyse(&v);
    let s = summary(&a);
    assert_eq!(s.warnings.counts.get(&WarningKind::CpuOnly).copied(), Some(launches as u64), "{:?}", s.warnings.counts);
    assert!(s.warnings.examples_of(&WarningKind::CpuOnly).next().is_some_and(|e| e.detail.contains("cudaLaunchKernel")));
    let k = check(&s.health, "kernels");
    assert_eq!(k.status, Status::Warning);
    assert!(k.fix.contains("ProfilerActivity.CUDA"), "{}", k.fix);
    assert_cli_agrees(&v, &s, "cpu-json");
    let (code, text) = cli(&v, &["summary"], "cpu");
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("WARNING  kernels: no kernels, though") && !text.contains("warnings: none"), "{text}");
    let (code, text) = cli(&v, &["doctor"], "cpu-doctor");
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("warning  kernels") && text.contains("fix:    record the GPU"), "{text}");
}

#[test]
fn device_events_of_a_kind_we_do_not_read_are_named_and_counted() {
    let mut v = events(FIXTURE);
    let mut device = 0;
    for e in v["traceEvents"].as_array_mut().unwrap() {
        if is_cat(e, &["kernel"]) {
            e["cat"] = json!("mtia_kernel");
            device = e["pid"].as_i64().unwrap();
        }
        if e["ph"] == "M" && e["name"] == "process_name" && e["pid"].as_i64() == Some(device) {
            e["args"]["name"] = json!("MTIA 0");
        }
    }
    // The process name comes after the kernels in Kineto's order: name it here too.
    v["traceEvents"]
        .as_array_mut()
        .unwrap()
        .push(json!({"ph": "M", "name": "process_name", "pid": device, "tid": 0, "args": {"name": "MTIA 0"}}));
    let a = analyse(&v);
    let s = summary(&a);
    let kind = WarningKind::UnreadCategory("mtia_kernel".into());
    assert!(kind.sentence().contains("'mtia_kernel' not read"), "named by its category");
    assert_eq!(s.warnings.counts[&kind], 4555);
    assert!(!s.warnings.counts.contains_key(&WarningKind::CpuOnly), "the device did run: not a CPU-only trace");
    let u = check(&s.health, "unread_events");
    assert_eq!((u.status, u.count), (Status::Warning, 4555));
    assert!(u.found.contains("mtia_kernel") && u.found.contains("not modelled"), "{}", u.found);
    assert_eq!(check(&s.health, "kernels").status, Status::Warning);
    assert!(u.found.contains("process \"MTIA 0\""), "{}", u.found);
    assert_cli_agrees(&v, &s, "mtia");
}

#[test]
fn kernels_dropped_at_the_sessions_start_are_counted_with_their_window() {
    let mut v = events(FIXTURE);
    let evs = v["traceEvents"].as_array_mut().unwrap();
    let mut kernel_ts: Vec<f64> = evs.iter().filter(|e| is_cat(e, &["kernel"])).map(|e| e["ts"].as_f64().unwrap()).collect();
    kernel_ts.sort_by(f64::total_cmp);
    let cut = kernel_ts[20];
    evs.retain(|e| !(is_cat(e, &["kernel"]) && e["ts"].as_f64().unwrap() < cut));
    let s = summary(&analyse(&v));
    assert_eq!(s.warnings.counts.get(&WarningKind::LaunchWithoutKernel).copied(), Some(20), "{:?}", s.warnings.counts);
    let d = check(&s.health, "dropped_kernels");
    assert_eq!((d.status, d.count), (Status::Warning, 20));
    assert!(d.found.contains("all at the session's start"), "{}", d.found);
    assert_cli_agrees(&v, &s, "dropped");
    let (_, text) = cli(&v, &["summary"], "dropped-text");
    assert!(text.contains("WARNING  dropped_kernels: 20 kernel launches have no kernel"), "{text}");
}

/// The fixture with one kernel stretched 5 µs past the start of the next on its stream and three
/// kernels of zero duration.
fn overlapped(name: &str) -> Value {
    let mut v = events(name);
    let evs = v["traceEvents"].as_array_mut().unwrap();
    let mut kernels: Vec<usize> = (0..evs.len()).filter(|&i| is_cat(&evs[i], &["kernel"])).collect();
    kernels.sort_by(|&a, &b| evs[a]["ts"].as_f64().unwrap().total_cmp(&evs[b]["ts"].as_f64().unwrap()));
    let same_stream = |a: &Value, b: &Value| a["args"]["stream"] == b["args"]["stream"];
    let (p, n) = kernels.windows(2).map(|w| (w[0], w[1])).find(|&(p, n)| same_stream(&evs[p], &evs[n])).unwrap();
    let stretched = evs[n]["ts"].as_f64().unwrap() - evs[p]["ts"].as_f64().unwrap() + 5.0;
    evs[p]["dur"] = json!(stretched);
    for &k in &kernels[100..103] {
        evs[k]["dur"] = json!(0);
    }
    v
}

#[test]
fn overlapping_and_zero_length_kernels_and_ns_timestamps_are_warned() {
    // On an MI300X (no programmatic dependent launch) an overlap on one stream is an error.
    let v = overlapped("sglang_qwen3-8b_prefill_mi300x.json.gz");
    let s = summary(&analyse(&v));
    assert_eq!(s.warnings.counts.get(&WarningKind::StreamOverlap).copied(), Some(1), "{:?}", s.warnings.counts);
    assert_eq!(s.warnings.counts.get(&WarningKind::ZeroDuration).copied(), Some(3));
    assert_eq!(check(&s.health, "stream_overlap").status, Status::Warning);
    assert_eq!(check(&s.health, "time_unit").status, Status::Ok);
    assert_cli_agrees(&v, &s, "overlap");
    // On an H100, programmatic dependent launch overlaps kernels by design: said, not warned.
    let v = overlapped(FIXTURE);
    let s = summary(&analyse(&v));
    assert!(!s.warnings.counts.contains_key(&WarningKind::StreamOverlap), "{:?}", s.warnings.counts);
    let o = check(&s.health, "stream_overlap");
    assert_eq!((o.status, o.count), (Status::Ok, 1));
    assert!(o.found.contains("programmatic dependent launch"), "{}", o.found);

    // Timestamps written in ns while displayTimeUnit says "ns".
    let mut v = events(FIXTURE);
    v["displayTimeUnit"] = json!("ns");
    for e in v["traceEvents"].as_array_mut().unwrap() {
        for k in ["ts", "dur"] {
            if let Some(x) = e[k].as_f64() {
                e[k] = json!((x * 1000.0).round());
            }
        }
    }
    let s = summary(&analyse(&v));
    let c = check(&s.health, "time_unit");
    assert_eq!(c.status, Status::Warning, "{}", c.found);
    assert_cli_agrees(&v, &s, "ns");
}

#[test]
fn kinetos_2026_counters_sync_events_strides_and_comms_ids_read_right() {
    let base = common::analysis(FIXTURE);
    let mut v = events(FIXTURE);
    let evs = v["traceEvents"].as_array_mut().unwrap();
    let kernel = evs.iter().find(|e| is_cat(e, &["kernel"])).unwrap().clone();
    let (ts, device, stream) =
        (kernel["ts"].as_f64().unwrap(), kernel["pid"].clone(), kernel["args"]["stream"].as_i64().unwrap());
    // kineto#1356: a stream sync on the virtual thread "stream N (sync)", stream id + 1000000.
    for k in 0..10 {
        evs.push(json!({"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": device, "tid": stream + 1_000_000,
            "ts": ts + k as f64, "dur": 0.5, "args": {"device": 0, "stream": stream + 1_000_000, "correlation": 900_000 + k}}));
    }
    evs.push(json!({"ph": "M", "name": "thread_name", "pid": device, "tid": stream + 1_000_000, "args": {"name": format!("stream {stream} (sync)")}}));
    // kineto#1530: hardware counters under a "GPU N Counters" process.
    for k in 0..25 {
        evs.push(
            json!({"ph": "C", "name": "sm_efficiency", "pid": 7_000, "tid": 0, "ts": ts + k as f64, "args": {"value": 50 + k}}),
        );
    }
    evs.push(json!({"ph": "M", "name": "process_name", "pid": 7_000, "tid": 0, "args": {"name": "GPU 0 Counters"}}));
    // pytorch#176823 (Input Strides always written) and kineto#1300 (Comms Id).
    for e in evs.iter_mut().filter(|e| is_cat(e, &["cpu_op"])) {
        e["args"]["Input Strides"] = json!([[1], []]);
        e["args"]["Comms Id"] = json!(12345);
    }
    let a = analyse(&v);
    assert_eq!(a.trace.kernel_rows().count(), base.trace.kernel_rows().count(), "sync events are never kernels");
    let streams = |a: &Analysis| {
        let mut s: Vec<i32> = a.trace.gpu.stream.clone();
        s.sort();
        s.dedup();
        s
    };
    assert_eq!(streams(&a), streams(&base), "no phantom stream");
    for name in ["kernels", "passes", "layers", "ops_summary", "category_summary"] {
        let t = |a: &Analysis| traceprism::report::table(a, name).unwrap().to_csv();
        assert!(t(&a) == t(&base), "table {name} unchanged");
    }
    let s = summary(&a);
    assert_eq!(s.warnings.counts.get(&WarningKind::CounterEvents).copied(), Some(25));
    let u = check(&s.health, "unread_events");
    assert_eq!(u.count, 25);
    assert!(u.found.contains("counter events") && u.found.contains("GPU 0 Counters"), "{}", u.found);
    assert_cli_agrees(&v, &s, "kineto2026");
}

#[test]
fn the_health_table_and_summary_json_carry_the_same_checks() {
    let a = common::analysis("vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz");
    let table = traceprism::report::table(&a, "health").unwrap();
    assert_eq!(table.columns, vec!["check", "status", "count", "found", "limits", "fix"]);
    let s = summary(&a);
    assert_eq!(table.rows.len(), s.health.len());
    let json = serde_json::to_value(&s).unwrap();
    let shapes = json["health"].as_array().unwrap().iter().find(|c| c["check"] == "shapes").unwrap();
    // This vLLM trace was recorded without shapes, with CUDA graphs and no capture trace.
    assert_eq!(shapes["status"], "missing");
    assert!(shapes["fix"].as_str().unwrap().contains("torch_profiler_record_shapes"));
    let graphs = check(&s.health, "graph_launches");
    assert_eq!(graphs.status, Status::Missing);
    assert!(graphs.fix.contains("--capture"));
    assert_eq!(check(&s.health, "distributed_info").status, Status::Present);
}

#[test]
fn gpu_events_without_their_cpu_side_are_warned_and_an_unreadable_file_is_an_error() {
    let mut v = events(FIXTURE);
    v["traceEvents"]
        .as_array_mut()
        .unwrap()
        .retain(|e| !is_cat(e, &["cuda_runtime", "cuda_driver", "cpu_op", "user_annotation", "python_function"]));
    let s = summary(&analyse(&v));
    let kernels = s.counts.kernels + s.counts.memcpy + s.counts.memset;
    assert_eq!(s.warnings.counts.get(&WarningKind::GpuWithoutCpu).copied(), Some(kernels as u64));
    let g = check(&s.health, "gpu_without_cpu");
    assert_eq!(g.status, Status::Warning);
    assert!(g.fix.contains("ProfilerActivity.CPU"), "{}", g.fix);
    assert_eq!(check(&s.health, "cpu_ops").status, Status::Missing);
    assert!(check(&s.health, "shapes").fix.starts_with("record the CPU first"), "shapes hang off CPU ops");
    assert_cli_agrees(&v, &s, "gpu-only");

    // Not a trace at all: the reader's message, exit 1.
    let path = std::env::temp_dir().join(format!("traceprism-health-bad-{}.json", std::process::id()));
    std::fs::write(&path, b"{\"traceEvents\": [{\"ph\": \"X\" \"cat\": 3}]}").unwrap();
    let out =
        std::process::Command::new(env!("CARGO_BIN_EXE_traceprism")).args(["doctor", &path.to_string_lossy()]).output().unwrap();
    std::fs::remove_file(&path).ok();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a valid trace JSON") && err.contains("byte"), "{err}");
}

#[test]
fn a_header_value_that_is_not_json_is_said_not_dropped() {
    let text = String::from_utf8(common::plain_fixture(FIXTURE)).unwrap();
    let key = "\"deviceProperties\": [";
    assert_eq!(text.matches(key).count(), 1, "the fixture has deviceProperties once");
    let at = text.find(key).unwrap() + key.len() - 1;
    let broken = text.replacen(key, &format!("{key}{{\"name\": \"x\" \"y\"}}, "), 1);
    let a = common::analyse_bytes(broken.as_bytes());
    let s = summary(&a);
    assert_eq!(s.warnings.counts.get(&WarningKind::HeaderUnread).copied(), Some(1), "{:?}", s.warnings.counts);
    let h = check(&s.health, "header_values");
    assert_eq!(h.status, Status::Warning);
    assert!(h.found.contains(&format!("\"deviceProperties\" at byte {at}: not valid JSON")), "{}", h.found);
    assert_eq!(check(&s.health, "device_properties").status, Status::Missing);
}

#[test]
fn a_2021_kineto_trace_is_not_asked_to_record_what_it_recorded() {
    // PyTorch 1.9's profiler wrote `ProfilerStep#5`…`#10` as `Operator` events (counted here from
    // the raw JSON): the report counts them as step ranges, and with the steps named by them it
    // does not ask to record what names the steps.
    let name = "dataloader_workers0_rn50_v100.pt.trace.json.gz";
    let doc: Value = serde_json::from_slice(&common::plain_fixture(name)).unwrap();
    let raw = doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"].as_str().is_some_and(|n| n.starts_with("ProfilerStep#")))
        .count();
    assert_eq!(raw, 6);
    let h = health(&common::analysis(name));
    let steps = check(&h, "step_annotations");
    assert_eq!(steps.status, Status::Present, "{steps:?}");
    assert!(steps.found.starts_with(&format!("{raw} ProfilerStep# ranges")), "{}", steps.found);
    let coverage = check(&h, "rule_coverage");
    assert!(!coverage.fix.contains("record what names the steps"), "{coverage:?}");
}

/// `layer_coverage` names the step with the most kernel time outside its layers, and its share is
/// the truth's: the kernels the truth file puts in no layer (embedding, final norm, head,
/// sampling). With the dense first layer read as a layer, deepseek_mla_moe's passes stay under 10%
/// (its prefill lost 9.2% to `pre` before).
#[test]
fn layer_coverage_is_the_truths_share_outside_the_layers() {
    use common::{analysis, fixture};
    use traceprism::analysis::health::CheckId;
    for (trace, truth) in [
        ("deepseek_mla_moe.pt.trace.json.gz", "deepseek_mla_moe.truth.json.gz"),
        ("llama_dense_eager.pt.trace.json.gz", "llama_dense_eager.truth.json.gz"),
    ] {
        let a = analysis(trace);
        let t = traceprism::pipeline::read_truth(&fixture(truth)).unwrap();
        let mut by_pass: std::collections::HashMap<u32, (f64, f64)> = std::collections::HashMap::new();
        for k in &t.kernels {
            let Some(p) = k.pass else { continue };
            let e = by_pass.entry(p).or_default();
            e.1 += k.dur;
            if k.layer.is_none() {
                e.0 += k.dur;
            }
        }
        let worst = by_pass.values().map(|(out, all)| 100.0 * out / all).fold(0.0, f64::max);
        let check = health(&a).into_iter().find(|k| k.check == CheckId::LayerCoverage).unwrap();
        eprintln!("{trace}: {} (truth: {worst:.1}%)", check.found);
        assert_eq!(check.status, Status::Ok, "{}", check.found);
        assert!(check.found.contains(&format!("{worst:.1}%")), "{} vs truth {worst:.1}%", check.found);
    }
    // The hybrid's decode steps: 14.5% after the last layer, every step: a warning that names the
    // pass and the longest kernel outside the layers, so a reader tells a head from a lost block.
    // There it is the LM head: the raw JSON's longest kernel after the pass's last in-layer kernel
    // is a bf16 GEMM its `aten::mm` launched (the head is not quantized like the layers).
    let name = "vllm_qwen35_hybrid_nvfp4_decode_gb10.pt.trace.json.gz";
    let a = analysis(name);
    let check = health(&a).into_iter().find(|k| k.check == CheckId::LayerCoverage).unwrap();
    assert_eq!((check.status, check.count), (Status::Warning, 10), "{}", check.found);
    let pass: usize = check.found.split("the most: pass ").nth(1).and_then(|r| r.split(',').next()).unwrap().parse().unwrap();
    let rows = &a.phases.passes[pass].rows;
    let last_in_layer = rows.iter().rposition(|&r| a.layers.layer_of_row[r as usize] != traceprism::model::NONE).unwrap();
    let (t0, t1) = (a.trace.gpu.ts[rows[last_in_layer] as usize], a.trace.gpu.ts[*rows.last().unwrap() as usize]);
    let doc: serde_json::Value = serde_json::from_slice(&common::plain_fixture(name)).unwrap();
    let longest = doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "kernel")
        .filter(|e| {
            let ts = e["ts"].as_f64().unwrap() * 1e3;
            ts > t0 as f64 + 1.0 && ts <= t1 as f64 + 1.0
        })
        .max_by(|x, y| x["dur"].as_f64().unwrap().total_cmp(&y["dur"].as_f64().unwrap()))
        .unwrap();
    assert!(longest["name"].as_str().unwrap().contains("gemm"), "{longest}");
    let ms = longest["dur"].as_f64().unwrap() / 1e3;
    assert!(
        check.found.contains(&format!("(after the last layer): aten::mm (GEMM-CUTLASS), {ms:.2} ms")),
        "{} vs {ms:.2} ms",
        check.found
    );
}
