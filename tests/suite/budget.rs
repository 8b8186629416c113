//! The step budget (issue 60): every step's time accounted for exactly, the host's share checked
//! against the raw events (serde_json, never our model), and findings that read it checked
//! against real before/after pairs.

use crate::common::*;
use std::collections::HashMap;
use traceprism::analysis::budget::{Part, What};
use traceprism::analysis::findings::{findings, outcome::outcomes};

/// Every fixture the budget is checked on: traces of every format.
fn traces() -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(fixture(""))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| (n.ends_with(".json.gz") && !n.contains(".truth.")) || n.ends_with(".xplane.pb"))
        .collect();
    out.extend(["nsys/mfu_2gpu_before.sqlite".to_string(), "nsys/h100_2gpu_1s.sqlite".to_string()]);
    out.sort();
    out
}

#[test]
fn every_step_adds_up_to_its_window_to_the_nanosecond_on_every_fixture() {
    for name in traces() {
        let a = traceprism::analyze_path(&fixture(&name), traceprism::Options::default()).unwrap();
        let b = a.budget();
        let devices: std::collections::BTreeSet<i32> = a.trace.gpu.device.iter().copied().collect();
        let with_work: std::collections::BTreeSet<i32> =
            (0..a.trace.gpu.len()).filter(|&r| a.trace.gpu.dur[r] > 0).map(|r| a.trace.gpu.device[r]).collect();
        // Every device that ran anything has steps, or its capture window: never nothing.
        for d in &with_work {
            assert!(b.steps.iter().any(|s| s.device == *d), "{name}: device {d} has no budget");
        }
        assert!(b.steps.iter().all(|s| devices.contains(&s.device)));
        let mut windows: HashMap<i32, Vec<(i64, i64)>> = HashMap::new();
        for s in &b.steps {
            let sum: i64 = s.rows.iter().map(|r| r.ns).sum();
            assert_eq!(sum, s.wall_ns(), "{name}: device {} step {:?}", s.device, s.pass);
            assert!(s.rows.iter().all(|r| r.ns > 0 && r.longest.1 - r.longest.0 <= r.ns), "{name}");
            // One row per (part, what).
            let mut keys: Vec<(Part, What)> = s.rows.iter().map(|r| (r.part, r.what)).collect();
            keys.sort();
            let n = keys.len();
            keys.dedup();
            assert_eq!(keys.len(), n, "{name}");
            windows.entry(s.device).or_default().push((s.start_ns, s.end_ns));
        }
        // Windows of one device never overlap: no nanosecond is in two steps.
        for (d, mut w) in windows {
            w.sort();
            assert!(w.windows(2).all(|x| x[0].1 <= x[1].0), "{name}: device {d}");
        }
        // The busy rows are the device's busy time: the union of its GPU rows inside the windows,
        // recomputed here from the model's raw intervals.
        for s in b.steps.iter().take(3) {
            let mut spans: Vec<(i64, i64)> = (0..a.trace.gpu.len())
                .filter(|&r| a.trace.gpu.device[r] == s.device && a.trace.gpu.dur[r] > 0)
                .map(|r| (a.trace.gpu.ts[r].max(s.start_ns), a.trace.gpu.end(r).min(s.end_ns)))
                .filter(|x| x.1 > x.0)
                .collect();
            spans.sort();
            let (mut busy, mut end) = (0i64, i64::MIN);
            for (st, e) in spans {
                if e > end {
                    busy += e - st.max(end);
                    end = e;
                }
            }
            assert_eq!(s.busy_ns(), busy, "{name}: device {} step {:?}", s.device, s.pass);
        }
    }
}

/// The raw events of a Kineto JSON trace, either schema: GPU work per device (start, end,
/// correlation), runtime calls' ends by correlation, and ranges by name (thread, start, end).
struct Raw {
    gpu: HashMap<i64, Vec<(i64, i64, i64)>>,
    issued: HashMap<i64, i64>,
    ranges: HashMap<String, Vec<(String, i64, i64)>>,
    call_thread: HashMap<i64, String>,
    /// Per thread, the starts of the runtime calls that launched GPU work, sorted.
    launches: HashMap<String, Vec<i64>>,
    /// Per thread, the ranges of at least 50 µs with no such call inside: (start, end).
    quiet: HashMap<String, Vec<(i64, i64)>>,
}

impl Raw {
    /// Whether a launching call starts inside `[s, e]` on `tid`.
    fn issues(&self, tid: &str, s: i64, e: i64) -> bool {
        let Some(l) = self.launches.get(tid) else { return false };
        let k = l.partition_point(|&x| x < s);
        k < l.len() && l[k] <= e
    }
    /// Whether another quiet range on `tid` encloses `[s, e]`: then the outer one is the activity.
    fn enclosed(&self, tid: &str, s: i64, e: i64) -> bool {
        self.quiet.get(tid).is_some_and(|q| q.iter().any(|&(qs, qe)| qs <= s && qe >= e && (qs, qe) != (s, e)))
    }
}

/// `a` is the model of the same trace: only the Python frames it made from `Call stack`
/// arguments (Kineto of 2021, checked against the raw stacks in `call_stacks.rs`) are taken from
/// it, as ranges; no event of the trace says when those frames began or ended.
fn raw(name: &str, a: &traceprism::Analysis) -> Raw {
    let doc: serde_json::Value = serde_json::from_slice(&plain_fixture(name)).unwrap();
    let events = match &doc {
        serde_json::Value::Array(a) => a,
        d => d["traceEvents"].as_array().unwrap(),
    };
    let ns = |v: &serde_json::Value| (v.as_f64().unwrap_or(0.0) * 1e3).round() as i64;
    let mut r = Raw {
        gpu: HashMap::new(),
        issued: HashMap::new(),
        ranges: HashMap::new(),
        call_thread: HashMap::new(),
        launches: HashMap::new(),
        quiet: HashMap::new(),
    };
    let mut call_start: HashMap<i64, i64> = HashMap::new();
    for e in events.iter().filter(|e| e["ph"] == "X") {
        let cat = e["cat"].as_str().unwrap_or("").to_lowercase();
        let (s, d) = (ns(&e["ts"]), ns(&e["dur"]));
        let tid = format!("{}/{}", e["pid"], e["tid"]);
        let corr = e["args"]["correlation"].as_i64().unwrap_or(-1);
        match cat.as_str() {
            "kernel" | "gpu_memcpy" | "gpu_memset" | "memcpy" | "memset" if d > 0 => {
                let dev = e["args"]["device"].as_i64().unwrap_or(-1);
                r.gpu.entry(dev).or_default().push((s, s + d, corr));
            }
            // MTIA: device events on the device's process; its stream waits and records are no work.
            "mtia_ccp_events" if d > 0 && !matches!(e["name"].as_str(), Some("event_wait" | "event_record")) => {
                let dev = e["pid"].as_i64().unwrap_or(-1);
                r.gpu.entry(dev).or_default().push((s, s + d, corr));
            }
            "cuda_runtime" | "cuda_driver" | "runtime" | "mtia_runtime" => {
                r.issued.insert(corr, s + d);
                r.call_thread.insert(corr, tid);
                call_start.insert(corr, s);
            }
            "cpu_op" | "user_annotation" | "python_function" | "operator" => {
                let name = e["name"].as_str().unwrap_or("").to_string();
                r.ranges.entry(name).or_default().push((tid, s, s + d));
            }
            _ => {}
        }
    }
    if !a.trace.call_stacks.is_empty() {
        let t = &a.trace;
        for o in (0..t.ops.len()).filter(|&o| t.ops.kind[o] == traceprism::model::OpKind::PythonFunction) {
            let th = &t.threads[t.ops.thread[o] as usize];
            let tid = format!("{}/\"{}\"", th.pid, th.tid);
            r.ranges.entry(t.name(t.ops.name[o]).to_string()).or_default().push((tid, t.ops.ts[o], t.ops.end(o)));
        }
    }
    for work in r.gpu.values() {
        for &(_, _, corr) in work {
            if let (Some(&s), Some(tid)) = (call_start.get(&corr), r.call_thread.get(&corr)) {
                r.launches.entry(tid.clone()).or_default().push(s);
            }
        }
    }
    r.launches.values_mut().for_each(|l| l.sort_unstable());
    let long = traceprism::analysis::budget::host::MIN_HOST_ACTIVITY_NS;
    let mut quiet: HashMap<String, Vec<(i64, i64)>> = HashMap::new();
    for list in r.ranges.values() {
        for (tid, s, e) in list.iter().filter(|x| x.2 - x.1 >= long) {
            if !r.issues(tid, *s, *e) {
                quiet.entry(tid.clone()).or_default().push((*s, *e));
            }
        }
    }
    r.quiet = quiet;
    r
}

#[test]
fn host_rows_are_the_gpu_idle_under_their_ranges_on_the_launching_thread() {
    // For every host row of at least 1 ms in all of a trace's steps, on every Kineto fixture: the GPU's idle (gaps between the device's work, inside the steps'
    // windows), cut where the work ending each gap was issued (its runtime call returned),
    // intersected with the ranges of that name on the thread that issued it that are host
    // activities by the raw events: at least 50 µs long, no launching call inside, and inside no
    // other such range. The budget adds
    // the device's launch latency (a few µs) to each issue; the tolerance is that per stretch.
    let mut checked = 0;
    for name in traces().into_iter().filter(|n| n.ends_with(".json.gz")) {
        let name = name.as_str();
        let a = analysis(name);
        let b = a.budget();
        let mut totals: HashMap<(i32, String), (i64, u32)> = HashMap::new();
        for s in &b.steps {
            for r in s.rows.iter().filter(|r| r.part == Part::Host) {
                // Stretches in nothing recorded are checked against the thread's ranges in
                // `unseen.rs`; every other host row names its range.
                let n = match r.what {
                    What::Range(n) => n,
                    What::Unrecorded { .. } => continue,
                    w => panic!("a host row names its range: {w:?}"),
                };
                let t = totals.entry((s.device, a.trace.name(n).to_string())).or_default();
                t.0 += r.ns;
                t.1 += r.intervals;
            }
        }
        let totals: Vec<_> = totals.into_iter().filter(|x| x.1 .0 >= 1_000_000).collect();
        if totals.is_empty() {
            continue;
        }
        let raw = raw(name, &a);
        for ((device, range), (ns, stretches)) in totals {
            let mut work = raw.gpu[&(device as i64)].clone();
            work.sort();
            // The ranges of that name that are host activities by the raw events (they do not
            // depend on the gap).
            let activities: Vec<&(String, i64, i64)> = raw
                .ranges
                .get(&range)
                .into_iter()
                .flatten()
                .filter(|(tid, rs, re)| {
                    re - rs >= traceprism::analysis::budget::host::MIN_HOST_ACTIVITY_NS
                        && !raw.issues(tid, *rs, *re)
                        && !raw.enclosed(tid, *rs, *re)
                })
                .collect();
            let windows: Vec<(i64, i64)> =
                b.steps.iter().filter(|s| s.device == device).map(|s| (s.start_ns, s.end_ns)).collect();
            let in_window = |t: i64| windows.iter().any(|&(s, e)| t >= s && t < e);
            let mut want = 0i64;
            let mut end = work[0].1;
            for &(s, e, corr) in &work[1..] {
                if s > end && in_window(end) {
                    // The idle [end, s), the host's up to the issue of the work that ended it.
                    let first = work.partition_point(|w| w.0 < s);
                    let enders: Vec<i64> = work[first..].iter().take_while(|w| w.0 == s).map(|w| w.2).collect();
                    let ender = enders.iter().find(|c| raw.issued.contains_key(c)).copied().unwrap_or(corr);
                    if let (Some(&issued), Some(thread)) = (raw.issued.get(&ender), raw.call_thread.get(&ender)) {
                        let to = issued.min(s);
                        // A range that issues no GPU work is a host activity from 50 µs on
                        // (shorter ones are the dispatch between launches).
                        for (tid, rs, re) in &activities {
                            if tid == thread {
                                want += (re.min(&to) - rs.max(&end)).max(0);
                            }
                        }
                    }
                }
                end = end.max(e);
            }
            let slack = 10_000 * stretches as i64;
            eprintln!("{name}: device {device}: `{range}`: budget {:.3} ms, raw {:.3} ms", ns as f64 / 1e6, want as f64 / 1e6);
            assert!((ns - want).abs() <= slack.max(ns / 1000), "{name}: `{range}`: {ns} against {want} ns");
            checked += 1;
        }
    }
    assert!(checked >= 2, "host rows checked: {checked}");
}

#[test]
fn a_data_loader_in_the_main_process_is_the_first_finding_and_its_fix_is_the_measured_saving() {
    // The same ResNet-50 training job on one V100 with the DataLoader's num_workers=0, then 4
    // (the one change). Before: the host loads each batch inside the single-process iterator's
    // __next__ while the GPU idles. The finding must come first, name the data loader and
    // num_workers, and predict the step's measured change within ±20%; after, it is gone.
    let before = analysis("dataloader_workers0_rn50_v100.pt.trace.json.gz");
    let after = analysis("dataloader_workers4_rn50_v100.pt.trace.json.gz");
    let f = findings(&before);
    for x in &f {
        eprintln!("{} {}: {:.1} µs ({:.1}%): {}", x.kind, x.scope, x.saving_us, x.saving_pct, x.evidence);
    }
    let first = &f[0];
    assert_eq!(first.kind.as_str(), "host_activity");
    assert!(first.evidence.contains("_SingleProcessDataLoaderIter.__next__"), "{}", first.evidence);
    assert!(first.fix.contains("num_workers") && first.fix.contains("pin_memory"), "{}", first.fix);
    assert!(f.iter().all(|x| x.kind != "sync" || x.saving_us < first.saving_us / 10.0), "no sync blamed");
    let o = outcomes(&before, &after);
    let loader = o.iter().find(|x| x.kind.as_str() == "host_activity").unwrap();
    eprintln!("{loader:?}");
    let measured = loader.measured_us.unwrap();
    assert!(loader.gone, "{loader:?}");
    assert!((measured / loader.predicted_us - 1.0).abs() <= 0.20, "predicted {} measured {measured}", loader.predicted_us);
    assert!(loader.verdict.starts_with("held"), "{}", loader.verdict);
    // After: no finding names the single-process loader.
    assert!(findings(&after).iter().all(|x| !x.evidence.contains("_SingleProcessDataLoaderIter")));
}

#[test]
fn a_step_the_gpu_fills_is_gpu_bound_and_ranked_by_what_ran() {
    // vLLM's hybrid Qwen3.5 on a GB10: ~99% busy decode steps, 81% of their kernel time FP4
    // GEMMs (the profiler's own table beside the trace in ../shared agrees). Never "none".
    let a = analysis("vllm_qwen35_hybrid_nvfp4_decode_gb10.pt.trace.json.gz");
    let f = findings(&a);
    let g = f.iter().find(|x| x.kind.as_str() == "gpu_bound").expect("gpu-bound");
    eprintln!("{}", g.evidence);
    // The share recomputed from the steps' budgets.
    let b = a.budget();
    let busy: Vec<f64> = b.steps.iter().map(|s| s.busy_ns() as f64 / s.wall_ns() as f64).collect();
    assert!(busy.iter().filter(|&&x| x >= 0.9).count() * 2 > busy.len(), "{busy:?}");
    assert!(g.evidence.contains("GEMM-FP4"), "{}", g.evidence);
    assert!(g.fix.contains("record_shapes=True"), "no shapes here: {}", g.fix);
}

#[test]
fn every_before_after_pair_predicted_against_measured() {
    // Every before/after pair among the fixtures: the two data-loader pairs isolate one change
    // (num_workers 0 → 4); the others change more (another GPU, an undocumented change). Prints
    // the table the README carries: each finding of the first trace, its predicted saving, the
    // measured change of its phase's median step, and the compare verdict.
    let pairs = [
        ("dataloader_workers0_rn50_v100.pt.trace.json.gz", "dataloader_workers4_rn50_v100.pt.trace.json.gz", true),
        ("dataloader_workers0_rn50_v100_run2.pt.trace.json.gz", "dataloader_workers4_rn50_v100_run2.pt.trace.json.gz", true),
        ("vllm_tp4_mi300x_1000isl_10osl_32con.pt.trace.json.gz", "vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz", false),
        ("sglang_qwen3-30b-a3b_decode_b300.trace.json.gz", "sglang_qwen3-30b-a3b_decode_mi300x.trace.json.gz", false),
        ("nsys/mfu_2gpu_before.sqlite", "nsys/mfu_2gpu_after.sqlite", false),
    ];
    eprintln!("| before → after | finding (rank) | scope | predicted µs | measured µs | off | verdict |");
    eprintln!("|---|---|---|---|---|---|---|");
    for (before, after, isolated) in pairs {
        let open = |f: &str| traceprism::analyze_path(&fixture(f), traceprism::Options::default()).unwrap();
        let (a, b) = (open(before), open(after));
        let ranked = findings(&a);
        for o in outcomes(&a, &b) {
            let rank = ranked.iter().position(|f| f.kind == o.kind && f.scope == o.scope).map_or(0, |k| k + 1);
            let off = o.measured_us.map_or(String::new(), |m| format!("{:+.0}%", 100.0 * (m / o.predicted_us - 1.0)));
            eprintln!(
                "| {before} → {after} | {} ({rank}) | {} | {:.1} | {} | {off} | {} |",
                o.kind,
                o.scope,
                o.predicted_us,
                o.measured_us.map_or("—".into(), |m| format!("{m:.1}")),
                o.verdict
            );
            if isolated && rank == 1 {
                // The change's finding is first, and gone after it.
                assert_eq!(o.kind.as_str(), "host_activity", "{before}");
                assert!(o.gone, "{before}: {o:?}");
            }
        }
    }
}
