//! `compare_budget` and `compare_verdict` on every real pair among the fixtures (issue 71): for
//! each, the verdict, the delta a step and the three rows that moved most are printed (the
//! README's table is this test's output), and each is checked against the raw events: the step
//! rows are the windows the passes give (a pass's first kernel to the next pass's on its device),
//! the busy rows add up to the union of the compute kernels in the window and their counts to the
//! kernels starting in it, and every phase's rows add up to its step's delta to the ns.

use crate::common::fixture;
use traceprism::analysis::compare::budget::{top_terms, PhaseDiff, Pick};
use traceprism::analysis::compare::{compare, CompareOptions};
use traceprism::model::GpuKind;
use traceprism::{analyze_path, Analysis, Options};

/// The pairs: the data-loader pairs, eager against compiled, vLLM and SGLang across vendors, and
/// the Nsight Systems before/after pair.
const PAIRS: &[(&str, &str)] = &[
    ("dataloader_workers0_rn50_v100.pt.trace.json.gz", "dataloader_workers4_rn50_v100.pt.trace.json.gz"),
    ("dataloader_workers0_rn50_v100_run2.pt.trace.json.gz", "dataloader_workers4_rn50_v100_run2.pt.trace.json.gz"),
    ("llama_dense_eager.pt.trace.json.gz", "llama_compiled.pt.trace.json.gz"),
    ("vllm_tp4_mi300x_1000isl_10osl_32con.pt.trace.json.gz", "vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz"),
    ("sglang_qwen3-30b-a3b_decode_b300.trace.json.gz", "sglang_qwen3-30b-a3b_decode_mi300x.trace.json.gz"),
    ("nsys/mfu_2gpu_before.sqlite", "nsys/mfu_2gpu_after.sqlite"),
];

/// The window of a side's chosen step, from the passes alone: its first kernel to the next
/// pass's first kernel on the device (the last pass: its own end); a capture window is the
/// device's first GPU row's start to its last row's end.
fn window(a: &Analysis, p: &Pick) -> (i64, i64) {
    let g = &a.trace.gpu;
    match p.pass {
        Some(i) => {
            let pass = &a.phases.passes[i];
            let next = a
                .phases
                .passes
                .iter()
                .filter(|q| q.device == pass.device && q.start_ns > pass.start_ns)
                .map(|q| q.start_ns)
                .min();
            (pass.start_ns, next.unwrap_or(pass.end_ns))
        }
        None => {
            let rows = (0..g.len()).filter(|&r| g.device[r] == p.device && g.dur[r] > 0);
            let start = rows.clone().map(|r| g.ts[r]).min().unwrap();
            (start, rows.map(|r| g.end(r)).max().unwrap())
        }
    }
}

/// The union of the compute kernels (not collectives) of the device within the window, and the
/// count of those starting in it, from the raw rows.
fn compute_in(a: &Analysis, device: i32, (from, to): (i64, i64)) -> (i64, usize) {
    let g = &a.trace.gpu;
    let mut spans: Vec<(i64, i64)> = Vec::new();
    let mut count = 0;
    for r in 0..g.len() {
        let family = &a.categories.categories[a.categories.of_row[r] as usize].family;
        if g.device[r] != device || g.kind[r] != GpuKind::Kernel || g.dur[r] <= 0 || family == "Communication" {
            continue;
        }
        if g.ts[r] >= from && g.ts[r] < to {
            count += 1;
        }
        let (s, e) = (g.ts[r].max(from), g.end(r).min(to));
        if e > s {
            spans.push((s, e));
        }
    }
    spans.sort_unstable();
    let (mut total, mut end) = (0, i64::MIN);
    for (s, e) in spans {
        if e > end {
            total += e - s.max(end);
            end = e;
        }
    }
    (total, count)
}

fn check(d: &PhaseDiff, a: &Analysis, b: &Analysis) {
    let (Some(pa), Some(pb)) = (&d.a, &d.b) else { return };
    let step = &d.rows[0];
    assert_eq!(step.part, "step");
    for (side, an, p, ns) in [("A", a, pa, step.a_ns), ("B", b, pb, step.b_ns)] {
        let (from, to) = window(an, p);
        assert_eq!(ns, to - from, "{}: {side}'s step is its window", d.phase);
        let busy: Vec<_> = d.rows.iter().filter(|r| matches!(r.part, "busy" | "only_a" | "only_b")).collect();
        let (claimed, count) = if side == "A" {
            (busy.iter().map(|r| r.a_ns).sum::<i64>(), busy.iter().map(|r| r.a_count).sum::<usize>())
        } else {
            (busy.iter().map(|r| r.b_ns).sum::<i64>(), busy.iter().map(|r| r.b_count).sum::<usize>())
        };
        assert_eq!((claimed, count), compute_in(an, p.device, (from, to)), "{}: {side}'s busy compute and kernels", d.phase);
    }
    let rest = &d.rows[1..];
    assert_eq!(rest.iter().map(|r| r.a_ns).sum::<i64>(), step.a_ns, "{}: A's rows add up to its step", d.phase);
    assert_eq!(rest.iter().map(|r| r.b_ns).sum::<i64>(), step.b_ns, "{}: B's rows add up to its step", d.phase);
    assert_eq!(rest.iter().map(|r| r.delta_ns()).sum::<i64>(), step.delta_ns(), "{}: the deltas add up", d.phase);
}

#[test]
fn every_pair_is_accounted_for_to_the_step() {
    let mut lines = vec![
        "| A | B | phase | verdict | delta a step | noise | samples | top three rows |".to_string(),
        "|---|---|---|---|---|---|---|---|".to_string(),
    ];
    for (x, y) in PAIRS {
        let (a, b) = std::thread::scope(|s| {
            let h = s.spawn(|| analyze_path(&fixture(x), Options::default()).expect("A loads"));
            let b = analyze_path(&fixture(y), Options::default()).expect("B loads");
            (h.join().unwrap(), b)
        });
        let opts = CompareOptions { source_a: Some(x.to_string()), source_b: Some(y.to_string()), ..Default::default() };
        let c = compare(&a, &b, &opts).expect("compares");
        assert!(!c.budget.is_empty(), "{x} / {y}: a phase to compare");
        assert_ne!(c.label_a, c.label_b);
        for d in &c.budget {
            check(d, &a, &b);
            let Some((pa, pb)) = d.a.as_ref().zip(d.b.as_ref()) else { continue };
            let pct = 100.0 * (pa.wall_ns - pb.wall_ns) as f64 / pb.wall_ns as f64;
            lines.push(format!(
                "| {} | {} | {} | **{}** | {:+.1} ms ({pct:+.1}%) | {} | {} | {} |",
                c.label_a,
                c.label_b,
                d.phase,
                d.judged.change.as_str(),
                (pa.wall_ns - pb.wall_ns) as f64 / 1e6,
                d.judged.noise_us.map_or("unknown".to_string(), |n| format!("±{:.2} ms", n / 1e3)),
                d.samples(),
                top_terms(d, &c.label_a, &c.label_b, 3).join("; ")
            ));
        }
        eprintln!("{}", c.headline());
    }
    eprintln!("{}", lines.join("\n"));
}
