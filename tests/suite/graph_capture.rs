//! Inside the graphs (issue 33): kernels replayed from CUDA/HIP graphs take the op that
//! dispatched them in a capture trace. Checked against TraceLens' own reference outputs for its
//! inference test traces (AMD-AGI/TraceLens, `tests/traces/inference/*/perf_csvs`, read here,
//! never our own output): the op table op for op (their rows summed per op name: call count
//! exact, direct kernel time within 0.5%), and GEMM roofline rows per (op, M, N, K): GFLOPs
//! exact, median TFLOP/s within 1%.

use crate::common;
use common::*;
use std::collections::BTreeMap;
use traceprism::model::graphs::OpFrom;
use traceprism::table::{Cell, Table};
use traceprism::{Analysis, Options};

/// The four cases: TraceLens' folder name and our fixture of its execution trace.
const CASES: [(&str, &str); 4] = [
    ("sglang_decode", "sglang_qwen3-8b_decode_graph_mi300x.json.gz"),
    ("vllm_decode_full", "vllm_gptoss_decode_fullgraph_mi300x.json.gz"),
    ("vllm_prefilldecode_piecewise", "vllm_gptoss_mixed_piecewise_mi300x.json.gz"),
    ("xdit_flux.1_aiter_sage", "xdit_flux1_4steps_mi300x.json.gz"),
];

fn case_dir(case: &str) -> std::path::PathBuf {
    fixture(&format!("graph_capture/{case}"))
}

fn with_capture(case: &str, trace: &str) -> Analysis {
    let captures = [case_dir(case).join("capture_traces")];
    traceprism::analyze_path_with(&fixture(trace), Options::default(), 2, &captures).unwrap()
}

/// RFC 4180 CSV (quoted fields, doubled quotes, commas and newlines inside quotes).
fn csv(text: &str) -> Vec<BTreeMap<String, String>> {
    let mut records: Vec<Vec<String>> = Vec::new();
    let (mut field, mut record, mut quoted) = (String::new(), Vec::new(), false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => record.push(std::mem::take(&mut field)),
            ('\n', false) => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            ('\r', false) => {}
            _ => field.push(c),
        }
    }
    if !field.is_empty() || !record.is_empty() {
        record.push(field);
        records.push(record);
    }
    let header = records.remove(0);
    records.into_iter().map(|r| header.iter().cloned().zip(r).collect()).collect()
}

fn reference(case: &str, file: &str) -> Vec<BTreeMap<String, String>> {
    csv(&std::fs::read_to_string(case_dir(case).join("perf_csvs").join(file)).unwrap())
}

fn table(a: &Analysis, name: &str) -> Table {
    let def = traceprism::report::TABLES.iter().find(|d| d.name == name).unwrap();
    (def.build)(a)
}

fn num(c: &Cell) -> f64 {
    c.as_f64().unwrap_or(f64::NAN)
}

fn col(t: &Table, name: &str) -> usize {
    t.column(name).unwrap_or_else(|| panic!("{} has no column {name}", t.name))
}

/// Per op name: (calls, direct kernel time µs), ours.
fn our_ops(a: &Analysis) -> BTreeMap<String, (u64, f64)> {
    let t = table(a, "ops_summary");
    let (n, c, ms) = (col(&t, "name"), col(&t, "Count"), col(&t, "total_direct_kernel_time_ms"));
    t.rows.iter().map(|r| (r[n].text(), (num(&r[c]) as u64, num(&r[ms]) * 1e3))).collect()
}

/// Per op name: (calls, direct kernel time µs), TraceLens' rows (name × parent module) summed.
fn their_ops(case: &str) -> BTreeMap<String, (u64, f64)> {
    let mut out: BTreeMap<String, (u64, f64)> = BTreeMap::new();
    for r in reference(case, "ops_summary.csv") {
        let e = out.entry(r["name"].clone()).or_default();
        e.0 += r["Count"].parse::<u64>().unwrap();
        e.1 += r["total_direct_kernel_time_sum"].parse::<f64>().unwrap();
    }
    out
}

#[test]
fn op_tables_equal_tracelens_op_for_op_with_capture_traces() {
    println!("{:<30} {:>6} {:>8} {:>10} {:>9} {:>9}", "case", "ops", "launches", "rows", "skipped", "max dt %");
    for (case, trace) in CASES {
        let a = with_capture(case, trace);
        let r = &a.trace.graphs.report;
        let (ours, theirs) = (our_ops(&a), their_ops(case));
        let mut worst: f64 = 0.0;
        let mut problems = Vec::new();
        for (name, &(calls, us)) in &theirs {
            match ours.get(name) {
                None => problems.push(format!("{name}: missing (theirs {calls} calls, {us:.3} µs)")),
                Some(&(c, u)) => {
                    let rel = (u - us).abs() / us.max(1e-9);
                    worst = worst.max(rel);
                    if c != calls || rel > 0.005 {
                        problems.push(format!("{name}: ours {c} calls {u:.3} µs, theirs {calls} calls {us:.3} µs"));
                    }
                }
            }
        }
        for name in ours.keys().filter(|n| !theirs.contains_key(*n)) {
            problems.push(format!("{name}: ours only {:?}", ours[name]));
        }
        println!(
            "{case:<30} {:>6} {:>8} {:>10} {:>9} {:>9.4}",
            theirs.len(),
            format!("{}/{}", r.launches_from_capture, r.graph_launches),
            format!("{}/{}", r.rows_from_capture, r.replayed_rows),
            r.dispatches_skipped,
            worst * 100.0
        );
        assert!(problems.is_empty(), "{case}:\n{}", problems.join("\n"));
        assert_eq!(r.launches_from_capture, r.graph_launches, "{case}: every graph launch aligned");
    }
}

#[test]
fn gemm_rows_equal_tracelens_gemm_csv() {
    for (case, trace) in CASES {
        let a = with_capture(case, trace);
        let t = table(&a, "roofline_gemm");
        let (n, shape, gf, med) = (col(&t, "name"), col(&t, "shape"), col(&t, "GFLOPS"), col(&t, "TFLOPS/s median"));
        // Ours per (name, M, N, K); B is part of the shape when it is not 1.
        let mut ours: BTreeMap<(String, String), (f64, f64)> = BTreeMap::new();
        for r in &t.rows {
            let s = r[shape].text();
            let mnk: String = s.split(' ').filter(|p| !p.starts_with("B=")).collect::<Vec<_>>().join(" ");
            let prev = ours.insert((r[n].text(), mnk.clone()), (num(&r[gf]), num(&r[med])));
            assert!(prev.is_none(), "{case}: two rows of ours for {} {mnk}", r[n].text());
        }
        let direct = their_ops(case);
        let mut checked = 0;
        let mut problems = Vec::new();
        for r in reference(case, "GEMM.csv") {
            // Their table also lists the ops around a GEMM (a custom op wrapping aten::mm), which
            // run no kernel directly: ours lists the op that launched the kernels.
            if !direct.contains_key(&r["name"]) {
                continue;
            }
            // An op whose only dispatch the replay did not run (the dispatch skipped when
            // aligning): TraceLens lists it with 0 µs of kernels; ours lists ops by their kernels.
            if r["Kernel Time (µs)_sum"].parse::<f64>().unwrap_or(0.0) == 0.0 {
                continue;
            }
            let key = (r["name"].clone(), format!("M={} N={} K={}", r["param: M"], r["param: N"], r["param: K"]));
            let their_gf: f64 = r["GFLOPS_first"].parse().unwrap();
            let their_med: Option<f64> = r["TFLOPS/s_median"].parse().ok();
            let Some(&(gf_ours, med_ours)) = ours.get(&key) else {
                problems.push(format!("{key:?}: missing"));
                continue;
            };
            if (gf_ours - their_gf).abs() > 1e-9 * their_gf.max(1.0) {
                problems.push(format!("{key:?}: GFLOPs ours {gf_ours}, theirs {their_gf}"));
            }
            if let Some(m) = their_med.filter(|m| *m > 0.0) {
                if (med_ours - m).abs() / m > 0.01 {
                    problems.push(format!("{key:?}: median TFLOP/s ours {med_ours}, theirs {m}"));
                }
            }
            checked += 1;
        }
        println!("{case}: {checked} GEMM rows checked against GEMM.csv");
        assert!(checked > 0, "{case}: no GEMM row compared");
        assert!(problems.is_empty(), "{case}:\n{}", problems.join("\n"));
    }
}

#[test]
fn replayed_kernels_say_where_their_op_came_from() {
    let a = with_capture("sglang_decode", "sglang_qwen3-8b_decode_graph_mi300x.json.gz");
    let t = &a.trace;
    let from: Vec<OpFrom> = (0..t.gpu.len()).map(|i| t.op_from(i)).collect();
    let capture = from.iter().filter(|&&f| f == OpFrom::Capture).count();
    // The raw trace: 544 kernels share the one hipGraphLaunch's correlation; 11 were launched eagerly.
    assert_eq!(capture, 544);
    // The captured op keeps its shapes: every replayed aten::mm has Input Dims with batch 32.
    let mm: Vec<usize> =
        (0..t.gpu.len()).filter(|&i| t.cpu_op_name(i) == Some("aten::mm") && from[i] == OpFrom::Capture).collect();
    assert_eq!(mm.len(), 145, "4 GEMMs in each of 36 layers and the LM head (TraceLens: 145 aten::mm calls)");
    for &i in &mm {
        let dims = t.name(t.ops.input_dims[t.gpu.cpu_op[i] as usize]);
        assert!(dims.starts_with("[[32, "), "{dims}");
    }
    assert_eq!(a.trace.graphs.report.captured_batch, Some(32));
    // Without the capture trace the same kernels keep their graph launch as owner.
    let plain = analysis("sglang_qwen3-8b_decode_graph_mi300x.json.gz");
    let p = &plain.trace;
    assert_eq!((0..p.gpu.len()).filter(|&i| p.op_from(i) == OpFrom::Capture).count(), 0);
    assert_eq!(p.graphs.report.replayed_rows, 544);
    // The eager rows are the same either way.
    for i in (0..t.gpu.len()).filter(|&i| from[i] != OpFrom::Capture) {
        assert_eq!((p.op_from(i), p.cpu_op_name(i)), (from[i], t.cpu_op_name(i)), "row {i}");
    }
}

/// The real eager Llama trace with its last decode step turned into a graph replay, as an engine
/// that graphs only some batch sizes records it: the step's kernels keep their names, times and
/// streams, but hang off one `cudaGraphLaunch` (its correlation) and their own launches are gone.
/// Returns the trace's JSON and, per replayed kernel (by start time), the op the original trace
/// gave it.
fn last_step_as_graph_replay() -> (Vec<u8>, Vec<(i64, String)>) {
    let truth: serde_json::Value = serde_json::from_slice(&plain_fixture("llama_dense_eager.truth.json.gz")).unwrap();
    let last = truth["forward_passes"].as_u64().unwrap() - 1;
    let corr: std::collections::BTreeSet<i64> = truth["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| k["pass"].as_u64() == Some(last))
        .map(|k| k["correlation"].as_i64().unwrap())
        .collect();
    let before = trace("llama_dense_eager.pt.trace.json.gz");
    let mut expected: Vec<(i64, String)> = (0..before.gpu.len())
        .filter(|&i| corr.contains(&before.gpu.correlation[i]))
        .map(|i| (before.gpu.ts[i], before.cpu_op_name(i).unwrap_or("").to_string()))
        .collect();
    expected.sort();
    let mut doc: serde_json::Value = serde_json::from_slice(&plain_fixture("llama_dense_eager.pt.trace.json.gz")).unwrap();
    let graph_corr = *corr.iter().next().unwrap();
    let events = doc["traceEvents"].as_array_mut().unwrap();
    let mut graph_launch_written = false;
    events.retain_mut(|e| {
        let c = e["args"]["correlation"].as_i64();
        let Some(c) = c.filter(|c| corr.contains(c)) else { return true };
        match e["cat"].as_str() {
            Some("cuda_runtime") | Some("cuda_driver") => {
                if graph_launch_written {
                    return false;
                }
                graph_launch_written = true;
                e["name"] = "cudaGraphLaunch".into();
                true
            }
            Some("ac2g") => false,
            _ => {
                e["args"]["correlation"] = graph_corr.into();
                let _ = c;
                true
            }
        }
    });
    (serde_json::to_vec(&doc).unwrap(), expected)
}

#[test]
fn a_replay_of_a_step_the_trace_also_ran_eagerly_takes_its_ops_by_name() {
    let (json, expected) = last_step_as_graph_replay();
    let t = read_bytes(&json).unwrap();
    let r = &t.graphs.report;
    assert_eq!((r.graph_launches, r.replayed_rows), (1, expected.len()));
    let mut got: Vec<(i64, String, OpFrom, u32)> = (0..t.gpu.len())
        .filter(|&i| t.gpu.launch[i] != traceprism::model::NONE && t.launches.is_graph[t.gpu.launch[i] as usize])
        .map(|i| {
            let op = t.gpu.cpu_op[i];
            let dims = if op == traceprism::model::NONE { 0 } else { t.ops.input_dims[op as usize] };
            (t.gpu.ts[i], t.cpu_op_name(i).unwrap_or("").to_string(), t.op_from(i), dims)
        })
        .collect();
    got.sort_by_key(|g| g.0);
    let same = got.iter().zip(&expected).filter(|(g, e)| g.1 == e.1).count();
    let from_eager = got.iter().filter(|g| g.2 == OpFrom::EagerPass).count();
    println!(
        "replayed step: {} kernels, {from_eager} given eager ops, {same} with the op the eager trace gave them ({:.1}%)",
        got.len(),
        100.0 * same as f64 / got.len() as f64
    );
    assert_eq!(from_eager, got.len(), "every kernel of the step matches an earlier decode step");
    assert_eq!(same, got.len(), "each takes the op that launched it in the original trace");
    assert!(got.iter().all(|g| g.3 == traceprism::model::NO_NAME), "names only: an eager step's shapes are not carried");
    assert_eq!(r.rows_from_eager, got.len());
    // The prefill step runs other kernels: a replay of it would match nothing. Here the replay is a
    // decode step, so no kernel is matched to prefill's ops (whose shapes would say prefill).
    let a = traceprism::Analysis::new(t, traceprism::Options::default()).unwrap();
    let s = traceprism::report::summary::summary(&a);
    let g = s.graph_replays.expect("graph replays reported");
    assert!(g.note.contains("given the ops of an eager stretch"), "{}", g.note);
    assert!((g.attributed_pct - 100.0).abs() < 1e-9);
}

#[test]
fn different_kernel_sequences_take_no_eager_ops() {
    // vLLM on H100: an eager prefill step, then 729 piecewise-graph decode launches whose kernels
    // the prefill never ran (checked: no three replayed kernels in a row appear in the eager step).
    let a = analysis("vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz");
    let r = &a.trace.graphs.report;
    assert_eq!((r.graph_launches, r.rows_from_eager), (729, 0));
    let s = traceprism::report::summary::summary(&a).graph_replays.unwrap();
    assert!(s.note.contains("a capture trace (--capture) would attribute the rest"), "{}", s.note);
}

fn cli(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_traceprism")).args(args).output().unwrap()
}

#[test]
fn the_cli_takes_capture_traces_where_it_reads_one_trace_and_refuses_them_elsewhere() {
    let trace = fixture("sglang_qwen3-8b_decode_graph_mi300x.json.gz");
    let dir = case_dir("sglang_decode").join("capture_traces");
    let (trace, dir) = (trace.to_str().unwrap(), dir.to_str().unwrap());
    let out = cli(&["summary", trace, "--capture", dir]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("graphs   9.656 ms"), "{text}");
    assert!(text.contains("544 kernels given their captured op") && text.contains("padded batch (32)"), "{text}");
    // Two capture files: the same graph twice is still one alignment per launch.
    let file = case_dir("sglang_decode").join("capture_traces/bs_32_rank0.json.gz");
    let file = file.to_str().unwrap();
    let out = cli(&["table", trace, "ops_summary", "--csv", "--capture", file, "--capture", file]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = String::from_utf8_lossy(&out.stdout);
    assert!(csv.lines().any(|l| l.starts_with("aten::mm,GEMM,145,145,")), "{csv}");
    // compare takes one set per side.
    let out = cli(&["compare", trace, trace, "--capture-a", dir, "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // A missing list, a wrong folder and a command that reads no replays say so.
    let out = cli(&["summary", trace, "--capture", fixture("graph_capture").to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("needs its execution_details.json"), "{err}");
    let out = cli(&["digest", trace, "--out", "/dev/null", "--capture", dir]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("--capture is not an option of `digest`"), "{err}");
}

#[test]
fn ranks_match_capture_traces_to_their_rank() {
    let dir = std::env::temp_dir().join(format!("traceprism-capture-ranks-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // Two ranks of a real graph-replaying serving run (the matching itself: `captures_of_rank`'s
    // unit test); a rank-0 capture file goes to rank 0 only.
    let trace = fixture("vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz");
    let out = cli(&["synth-ranks", trace.to_str().unwrap(), "--out", dir.to_str().unwrap(), "--ranks", "2", "--straggler", "1"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let caps = case_dir("sglang_decode").join("capture_traces");
    let out = cli(&["ranks", dir.to_str().unwrap(), "--capture", caps.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The `ranks` table shows each rank's graph replays as that rank's own summary does, the
    // rank-0 capture given to rank 0 only.
    let run: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let table = run["tables"].as_array().unwrap().iter().find(|t| t["name"] == "ranks").unwrap();
    let col = |name: &str| table["columns"].as_array().unwrap().iter().position(|c| c == name).unwrap();
    for row in table["rows"].as_array().unwrap() {
        let rank = row[col("rank")].as_u64().unwrap();
        let file = row[col("file")].as_str().unwrap();
        let mut args = vec!["summary", file, "--json"];
        if rank == 0 {
            args.extend(["--capture", caps.to_str().unwrap()]);
        }
        let summary: serde_json::Value = serde_json::from_slice(&cli(&args).stdout).unwrap();
        let replays = &summary["graph_replays"];
        assert!(replays["replayed_pct"].as_f64().unwrap() > 50.0, "rank {rank}: a graph-replaying run");
        for (column, key) in [("graph_replayed_pct", "replayed_pct"), ("graph_attributed_pct", "attributed_pct")] {
            let (got, want) = (row[col(column)].as_f64().unwrap(), replays[key].as_f64().unwrap());
            assert!((got - want).abs() < 1e-9, "rank {rank} {column}: {got} in the ranks table, {want} in its summary");
        }
    }
    let out = cli(&["ranks", dir.to_str().unwrap(), "--capture", "/nonexistent/capture.json.gz"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("capture trace /nonexistent/capture.json.gz"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
