//! What the budget cannot see, said (issue 70): a long stretch of nothing recorded on the
//! launching thread is a host row of its own, not launch overhead; copies to or from pageable
//! memory are named; a host row names the activity and the user's line; a capture window's
//! findings say what the window holds; torch_npu's step, task queue and op names are read.
//! Checked against the raw events (serde_json) or the model's own columns, never against our
//! output alone.

use crate::common::*;
use traceprism::analysis::budget::{Part, What};
use traceprism::model::{GpuKind, NONE};

#[test]
fn a_long_stretch_of_nothing_recorded_is_the_hosts_not_launch_overhead() {
    // Eager Llama (Hugging Face): between some ops of the decode step the launching thread is in
    // no range for longer than its ordinary gap. Each such row's longest stretch must be one in
    // which the thread really has no range (the model's ops on that thread), and longer than the
    // thread's 90th-percentile gap; the launch rows keep the rest, and every step still adds up.
    let a = analysis("llama_dense_eager.pt.trace.json.gz");
    let b = a.budget();
    let ops = &a.trace.ops;
    let mut checked = 0;
    for s in &b.steps {
        assert_eq!(s.rows.iter().map(|r| r.ns).sum::<i64>(), s.wall_ns());
        for r in s.rows.iter().filter(|r| matches!(r.what, What::Unrecorded { .. })) {
            assert_eq!(r.part, Part::Host);
            let thread = ops.thread[r.example as usize];
            let (from, to) = r.longest;
            let overlapping = (0..ops.len()).filter(|&o| ops.thread[o] == thread && ops.ts[o] < to && ops.end(o) > from).count();
            let names: Vec<String> = (0..ops.len())
                .filter(|&o| ops.thread[o] == thread && ops.ts[o] < to && ops.end(o) > from)
                .map(|o| format!("{} {}..{}", a.trace.name(ops.name[o]), ops.ts[o], ops.end(o)))
                .collect();
            assert_eq!(overlapping, 0, "a range overlaps the unrecorded stretch {from}..{to}: {names:?}");
            let gap = b.typical_gap_ns(&a, r);
            assert!(to - from > 0 && gap < traceprism::analysis::budget::host::MIN_HOST_ACTIVITY_NS * 4, "typical gap {gap}");
            let text = b.describe(&a, r);
            assert!(text.starts_with("nothing recorded between aten::"), "{text}");
            checked += 1;
        }
    }
    eprintln!("llama_dense_eager: {checked} unrecorded host rows, each a real hole in the thread's ranges");
    assert!(checked >= 10, "{checked}");
    // Its finding asks for what to record, not for a CUDA graph.
    let f = traceprism::analysis::findings::findings_from(&a, 0.0);
    let unrec = f.iter().find(|f| f.subject.starts_with("nothing recorded")).expect("an unrecorded stretch raised at any share");
    assert!(unrec.fix.contains("record_function") && !unrec.fix.contains("CUDA graph"), "{}", unrec.fix);
}

#[test]
fn copies_from_pageable_memory_are_named_and_measured_against_the_raw_events() {
    // ResNet-50 training: each step copies its batch from pageable memory. The budget's pageable
    // copy row of a step must equal the raw `Memcpy HtoD (Pageable -> Device)` events' union in
    // the step window, less the raw kernels' union (no kernel runs beside it).
    let name = "dataloader_workers0_rn50_v100.pt.trace.json.gz";
    let a = analysis(name);
    let doc: serde_json::Value = serde_json::from_slice(&plain_fixture(name)).unwrap();
    let ns = |v: &serde_json::Value| (v.as_f64().unwrap_or(0.0) * 1e3).round() as i64;
    let (mut pageable, mut kernels) = (Vec::new(), Vec::new());
    for e in doc["traceEvents"].as_array().unwrap().iter().filter(|e| e["ph"] == "X") {
        let (s, d) = (ns(&e["ts"]), ns(&e["dur"]));
        match e["cat"].as_str().unwrap_or("") {
            "Memcpy" | "gpu_memcpy" if e["name"].as_str().unwrap_or("").contains("Pageable") => pageable.push((s, s + d)),
            "Kernel" | "kernel" => kernels.push((s, s + d)),
            _ => {}
        }
    }
    let (pageable, kernels) = (union(pageable), union(kernels));
    let b = a.budget();
    let mut checked = 0;
    for s in &b.steps {
        let mut want = 0i64;
        for &(ps, pe) in &pageable {
            let (ps, pe) = (ps.max(s.start_ns), pe.min(s.end_ns));
            if pe <= ps {
                continue;
            }
            let covered: i64 = kernels.iter().map(|&(ks, ke)| (ke.min(pe) - ks.max(ps)).max(0)).sum();
            want += pe - ps - covered;
        }
        let got: i64 = s.rows.iter().filter(|r| r.what == What::Pageable).map(|r| r.ns).sum();
        assert_eq!(got, want, "step {:?}", s.pass);
        checked += usize::from(want > 0);
    }
    assert!(checked >= 5, "{checked}");
    let row = b.steps[0].rows.iter().find(|r| r.what == What::Pageable).unwrap();
    assert!(b.describe(&a, row).contains("pageable host memory"));
}

#[test]
fn a_host_row_names_the_activity_and_the_users_line() {
    // PyTorch 1.9's trace (stacks as `Call stack` arguments): the host's longest range in each
    // step is a frame of the training loop; inside it the data loader's `__next__` ran.
    let a = analysis("dataloader_workers0_rn50_v100.pt.trace.json.gz");
    let b = a.budget();
    let s = &b.steps[1];
    let row = s.rows.iter().filter(|r| r.part == Part::Host).max_by_key(|r| r.ns).unwrap();
    let text = b.describe(&a, row);
    assert!(text.starts_with("enumerate(DataLoader)#") && text.contains(" at ") && text.contains(".py(42)"), "{text}");
    // The activity is an op inside the frame the row's time was in, on the same thread, and the
    // longest such op (the model's own ranges).
    let (frame, op) = (row.example as usize, row.inner as usize);
    let ops = &a.trace.ops;
    assert_eq!(ops.kind[frame], traceprism::model::OpKind::PythonFunction);
    assert!(ops.thread[op] == ops.thread[frame] && ops.ts[op] >= ops.ts[frame] && ops.end(op) <= ops.end(frame));
    let longest = (0..ops.len())
        .filter(|&o| ops.kind[o] != traceprism::model::OpKind::PythonFunction && ops.thread[o] == ops.thread[frame])
        .filter(|&o| ops.ts[o] >= ops.ts[frame] && ops.end(o) <= ops.end(frame))
        .map(|o| ops.dur[o])
        .max();
    assert_eq!(Some(ops.dur[op]), longest);
}

#[test]
fn a_capture_window_finding_says_what_the_window_holds() {
    // An Nsight export with no whole step: the findings are the window's. Its kernel count is
    // the kernels that start in the window (the model's rows), never "0 kernels a step".
    let a = traceprism::analyze_path(&fixture("nsys/mfu_2gpu_before.sqlite"), traceprism::Options::default()).unwrap();
    let f = traceprism::analysis::findings::findings(&a);
    let host = f.iter().find(|f| f.kind.as_str() == "host_bound").expect("host_bound");
    assert!(!host.evidence.contains("a step") && !host.evidence.contains(" 0 kernels"), "{}", host.evidence);
    assert_eq!(host.per(), "in the capture window");
    let s = a.budget().steps.iter().find(|s| Some(s.device) == host.device && s.pass.is_none()).unwrap();
    let g = &a.trace.gpu;
    let want = (0..g.len())
        .filter(|&r| {
            g.device[r] == s.device && g.kind[r] == GpuKind::Kernel && g.dur[r] > 0 && (s.start_ns..s.end_ns).contains(&g.ts[r])
        })
        .count();
    assert_eq!(s.kernels, want);
    assert!(host.evidence.contains(&format!("{want} kernels start in it")), "{}", host.evidence);
}

/// The raw events of the real torch_npu step.
fn ascend_raw() -> Vec<serde_json::Value> {
    serde_json::from_slice(&plain_fixture("ascend_npu_train_step_trace_view.json.gz")).unwrap()
}

#[test]
fn a_torch_npu_step_is_its_profiler_step_and_its_tasks_are_issued_by_the_queue() {
    let a = analysis("ascend_npu_train_step_trace_view.json.gz");
    let raw = ascend_raw();
    // Exact: the µs text split at its point (an f64 of 1.7e18 ns would round).
    let ts = |v: &serde_json::Value| {
        let text = v.as_str().map_or_else(|| v.to_string(), str::to_string);
        let (whole, frac) = text.split_once('.').unwrap_or((&text, ""));
        let frac: String = frac.chars().chain(std::iter::repeat('0')).take(3).collect();
        whole.parse::<i64>().unwrap() * 1000 + frac.parse::<i64>().unwrap()
    };
    // The one `ProfilerStep#1` is the step: one pass holding every task.
    let step = raw.iter().find(|e| e["name"] == "ProfilerStep#1").unwrap();
    let (step_from, step_to) = (ts(&step["ts"]), ts(&step["ts"]) + (step["dur"].as_f64().unwrap() * 1e3).round() as i64);
    assert_eq!(a.phases.passes.len(), 1);
    let tasks = raw.iter().filter(|e| e["ph"] == "X" && e.get("cat").is_none() && e["args"].get("Task Id").is_some()).count();
    assert_eq!(a.phases.passes[0].rows.len(), tasks);
    let b = a.budget();
    assert_eq!(b.steps.len(), 1);
    let s = &b.steps[0];
    assert!(s.start_ns >= step_from && s.pass_end_ns <= step_to);
    // Each task's launch is the runtime call its `HostToDevice` flow starts in (on the queue's
    // worker thread), not the op's enqueue: the latest call before the task, found here from the
    // raw flows.
    let mut starts = std::collections::HashMap::new();
    for e in raw.iter().filter(|e| e["cat"] == "HostToDevice" && e["ph"] == "s") {
        starts.insert(e["id"].as_str().unwrap().to_string(), (e["tid"].as_i64().unwrap(), ts(&e["ts"])));
    }
    let mut task_start = std::collections::HashMap::new();
    for e in raw.iter().filter(|e| e["cat"] == "HostToDevice" && e["ph"] == "f") {
        if let Some(&st) = starts.get(e["id"].as_str().unwrap()) {
            task_start.insert(ts(&e["ts"]), st);
        }
    }
    let (g, l) = (&a.trace.gpu, &a.trace.launches);
    let mut checked = 0;
    for r in 0..g.len() {
        let Some(&(tid, at)) = task_start.get(&g.ts[r]) else { continue };
        let c = g.launch[r];
        assert_ne!(c, NONE);
        let c = c as usize;
        assert_eq!(a.trace.threads[l.thread[c] as usize].tid, tid, "the task's launch is on the flow's thread");
        assert!(l.ts[c] <= at && l.ts[c] + l.dur[c] >= at, "the launch is the call the flow starts in");
        assert_ne!(g.cpu_op[r], NONE, "the op that queued it stays the task's op");
        checked += 1;
    }
    assert!(checked >= 270, "{checked}");
    // So the budget tells the host from the queue: what is queued is the device's own wait.
    let queued = s.part_ns(Part::Queued);
    eprintln!(
        "ascend: step {:.3} ms, queued {:.3} ms, launch {:.3} ms",
        s.wall_ns() as f64 / 1e6,
        queued as f64 / 1e6,
        s.part_ns(Part::Launch) as f64 / 1e6
    );
    assert!(queued * 20 < s.wall_ns(), "queued {queued} of {}", s.wall_ns());
    assert_eq!(s.rows.iter().map(|r| r.ns).sum::<i64>(), s.wall_ns());
}

#[test]
fn ascend_ops_have_categories_and_pooling_is_not_sampling() {
    let a = analysis("ascend_npu_train_step_trace_view.json.gz");
    let (g, c) = (&a.trace.gpu, &a.categories);
    let total: i64 = (0..g.len()).map(|r| g.dur[r]).sum();
    let other: i64 = (0..g.len()).filter(|&r| c.categories[c.of_row[r] as usize].name == "Other").map(|r| g.dur[r]).sum();
    eprintln!("ascend: {:.2}% of device time in no category", 100.0 * other as f64 / total as f64);
    assert!(other * 20 <= total, "{other} of {total} ns uncategorised");
    let cat = |r: usize| c.categories[c.of_row[r] as usize].name.as_str();
    let mut pools = 0;
    for r in 0..g.len() {
        let name = a.trace.name(g.name[r]);
        if name.starts_with("MaxPool") {
            assert_eq!(cat(r), "Pooling", "{name}");
            pools += 1;
        }
        if name.ends_with("_MatMulV2") {
            assert!(cat(r).starts_with("GEMM"), "{name}: {}", cat(r));
        }
        if name.starts_with("Conv2D") && !name.ends_with("_MemSet") {
            assert_eq!(cat(r), "Conv", "{name}");
        }
    }
    assert!(pools >= 4, "{pools}");
}

#[test]
fn ascend_lanes_the_profiler_derived_are_counted_not_asked_about() {
    let a = analysis("ascend_npu_train_step_trace_view.json.gz");
    let raw = ascend_raw();
    let overlap_pid = raw.iter().find(|e| e["ph"] == "M" && e["args"]["name"] == "Overlap Analysis").unwrap()["pid"].clone();
    let derived = raw.iter().filter(|e| e["ph"] == "X" && e["pid"] == overlap_pid).count();
    let w = &a.trace.warnings;
    assert_eq!(w.count(&traceprism::model::WarningKind::DerivedLanes), derived as u64);
    for cat in ["enqueue", "dequeue", "(no cat)"] {
        assert_eq!(w.count(&traceprism::model::WarningKind::UnreadCategory(cat.into())), 0, "{cat} read");
    }
}

#[test]
fn launch_and_queued_rows_name_the_op_they_waited_on_and_its_line() {
    // PyTorch 1.9's ResNet trace: a launch or queued row's longest stretch ends when a kernel
    // starts. Its activity is the op that launched that kernel: in the raw events, the kernel's
    // correlation gives its runtime call, and the innermost `Operator` around the call on the
    // same thread is the op; the row's site is a frame of that op's `Call stack`.
    let a = analysis("dataloader_workers0_rn50_v100.pt.trace.json.gz");
    let raw: serde_json::Value =
        serde_json::from_slice(&plain_fixture("dataloader_workers0_rn50_v100.pt.trace.json.gz")).unwrap();
    let events = raw["traceEvents"].as_array().unwrap();
    let of = |cat: &'static str| events.iter().filter(move |e| e["cat"] == cat);
    let num = |e: &serde_json::Value, k: &str| e[k].as_i64().unwrap_or(-1);
    let b = a.budget();
    let (mut checked, mut with_site) = (0, 0);
    for s in &b.steps {
        for r in s.rows.iter().filter(|r| matches!(r.part, Part::Launch | Part::Queued)) {
            let activity = b.activity(&a, r);
            let to_us = r.longest.1 / 1000;
            let kernels: Vec<&serde_json::Value> = events
                .iter()
                .filter(|e| matches!(e["cat"].as_str(), Some("Kernel" | "Memcpy" | "Memset")) && num(e, "ts") == to_us)
                .collect();
            let [kernel] = kernels.as_slice() else { continue };
            let corr = kernel["args"]["correlation"].as_i64().unwrap();
            let call = of("Runtime").find(|e| e["args"]["correlation"].as_i64() == Some(corr)).expect("its runtime call");
            let (ts, end) = (num(call, "ts"), num(call, "ts") + num(call, "dur"));
            let op = of("Operator")
                .filter(|o| o["tid"] == call["tid"] && num(o, "ts") <= ts && num(o, "ts") + num(o, "dur") >= end)
                .max_by_key(|o| num(o, "ts"))
                .expect("an op around the call");
            assert_eq!(activity.name, op["name"].as_str().unwrap(), "{:?} row of pass {:?}", r.part, s.pass);
            if let Some(site) = &activity.site {
                let stack = op["args"]["Call stack"].as_str().unwrap_or("");
                assert!(stack.split(';').any(|f| f == site), "{site} not in {stack}");
                with_site += 1;
            }
            checked += 1;
        }
        // Every row of the step names an activity.
        for r in &s.rows {
            assert!(!b.activity(&a, r).name.is_empty(), "{:?} {:?}", r.part, r.what);
        }
    }
    println!("launch/queued rows checked against the raw events: {checked}, {with_site} with the user's line");
    assert!(checked >= 10 && with_site >= 5, "{checked} {with_site}");
}
