//! The regression gate (issue 35): noise tested, not assumed.
//!
//! - A/A: the odd and the even decode passes of one real trace never give `regression` at 3%.
//! - Power: variants of a real trace (MoE, 24 decode passes) with every GPU kernel stretched by 5%
//!   (stream order and gaps kept), seeded jitter on top of both sides, give `regression` on decode
//!   in at least 95% of 40 variants; with one category's kernels stretched by 15%, `regression`
//!   for that category and the attribution naming it first. The rates are printed.
//! - A pair with one pass each (one SGLang decode step on B300 and on MI300X) is `inconclusive`,
//!   with the passes that would settle it, never a verdict; exit statuses 0/1/2/3. Traces with no
//!   pass at all are inconclusive with a warning that says why.

use crate::common;

use common::*;
use traceprism::analysis::phases::Phase;
use traceprism::gate::{gate, Digest, GateOptions, Verdict};
use traceprism::model::{GpuKind, Trace};
use traceprism::{Analysis, Options};

const MOE: &str = "moe_eager.pt.trace.json.gz";

/// `t` with each kernel's duration times `factor(row)` and ±`jitter` (seeded), every later event
/// of its stream moved by the time added before it (order and gaps kept).
fn stretched(t: &Trace, factor: &dyn Fn(usize) -> f64, jitter: f64, seed: u64) -> Trace {
    let mut t = t.clone();
    let mut mix = traceprism::support::mix::SplitMix64::new(seed);
    let g = &mut t.gpu;
    let mut order: Vec<usize> = (0..g.len()).collect();
    order.sort_by_key(|&i| (g.device[i], g.stream[i], g.ts[i], i));
    let mut shift = 0i64;
    let mut last = None;
    for i in order {
        let key = (g.device[i], g.stream[i]);
        if last != Some(key) {
            shift = 0;
            last = Some(key);
        }
        g.ts[i] += shift;
        if g.kind[i] == GpuKind::Kernel {
            let f = factor(i) * (1.0 + jitter * (2.0 * mix.unit() - 1.0));
            let new = (g.dur[i] as f64 * f).round() as i64;
            shift += new - g.dur[i];
            g.dur[i] = new;
        }
    }
    t
}

fn analysed(t: Trace) -> Analysis {
    Analysis::new(t, Options::default()).expect("analysis")
}

#[test]
fn a_and_a_never_gives_a_regression() {
    for name in [MOE, "llama_dense_eager.pt.trace.json.gz"] {
        let a = analysis(name);
        let odd = Digest::of_passes(&a, "odd", &|p| p.index % 2 == 1);
        let even = Digest::of_passes(&a, "even", &|p| p.index % 2 == 0);
        let r = gate(&even, &odd, &GateOptions::default());
        let decode = r.phases.iter().find(|p| p.phase == "decode").expect("decode passes on both sides");
        eprintln!("{name} A/A: decode {:?} {:?}", decode.test.verdict, decode.test.interval);
        assert!(decode.test.base_passes >= 12 && decode.test.new_passes >= 12);
        assert_ne!(
            r.overall,
            Verdict::Regression,
            "{name}: {:?}",
            r.phases.iter().map(|p| (&p.phase, p.test.verdict)).collect::<Vec<_>>()
        );
        for c in r.phases.iter().flat_map(|p| &p.categories) {
            assert_ne!(c.verdict, Verdict::Regression, "{name}: {}", c.what);
        }
    }
}

#[test]
fn a_five_percent_slowdown_and_a_slower_category_are_found() {
    let base_trace = trace(MOE);
    let base_analysis = analysis(MOE);
    assert!(base_analysis.phases.passes.iter().filter(|p| p.phase == Phase::Decode).count() >= 20);
    // The decode phase's largest category: the one stretched by 15%.
    let digest = Digest::of(&base_analysis, "base");
    let decode = &digest.phases["decode"];
    let (target, _) = decode.categories.iter().max_by_key(|(_, v)| v.iter().sum::<i64>()).unwrap();
    let target_id = base_analysis.categories.id(target).unwrap();
    let of_row = base_analysis.categories.of_row.clone();
    let (variants, mut all_found, mut cat_found, mut cat_first) = (40, 0, 0, 0);
    for seed in 0..variants as u64 {
        let base = Digest::of(&analysed(stretched(&base_trace, &|_| 1.0, 0.03, 1000 + seed)), "base");
        let slower = Digest::of(&analysed(stretched(&base_trace, &|_| 1.05, 0.03, 2000 + seed)), "new");
        let r = gate(&base, &slower, &GateOptions::default());
        let d = r.phases.iter().find(|p| p.phase == "decode").unwrap();
        all_found += usize::from(d.test.verdict == Verdict::Regression);
        let cat = Digest::of(
            &analysed(stretched(&base_trace, &|i| if of_row[i] == target_id { 1.15 } else { 1.0 }, 0.03, 3000 + seed)),
            "new",
        );
        let r = gate(&base, &cat, &GateOptions::default());
        let d = r.phases.iter().find(|p| p.phase == "decode").unwrap();
        let c = d.categories.iter().find(|c| c.what == format!("decode / {target}")).unwrap();
        cat_found += usize::from(c.verdict == Verdict::Regression);
        let first = d.attribution.iter().find(|m| m.level == "category").unwrap();
        cat_first += usize::from(&first.name == target);
    }
    let rate = |n: usize| 100.0 * n as f64 / variants as f64;
    eprintln!(
        "power over {variants} seeded variants: every kernel +5% -> decode regression {:.0}%; {target} +15% -> category regression {:.0}%, named first {:.0}%",
        rate(all_found),
        rate(cat_found),
        rate(cat_first)
    );
    assert!(rate(all_found) >= 95.0 && rate(cat_found) >= 95.0 && rate(cat_first) >= 95.0);
}

/// One pass a side: the noise comes from the pass's layers (48 decoder layers each), so the
/// MI300X's decode step, 65% longer than the B300's in kernel time, is a regression; timed by
/// wall (no layers to time a pass's wall by) it stays inconclusive and says what would settle it.
#[test]
fn one_pass_each_is_judged_by_its_layers_else_inconclusive() {
    let (b, n) = ("sglang_qwen3-30b-a3b_decode_b300.trace.json.gz", "sglang_qwen3-30b-a3b_decode_mi300x.trace.json.gz");
    let (ab, an) = (analysis(b), analysis(n));
    let (db, dn) = (Digest::of(&ab, b), Digest::of(&an, n));
    let r = gate(&db, &dn, &GateOptions::default());
    let d = &r.phases[0];
    assert_eq!((d.test.base_passes, d.test.new_passes), (1, 1));
    // The medians are the one pass's kernel time on each side, as the raw events give it.
    let kernel_us = |a: &traceprism::Analysis| {
        let p = &a.phases.passes[0];
        p.rows
            .iter()
            .filter(|&&r| a.trace.gpu.kind[r as usize] == traceprism::model::GpuKind::Kernel)
            .map(|&r| a.trace.gpu.dur[r as usize])
            .sum::<i64>() as f64
            / 1e3
    };
    assert!((d.test.base_median_us - kernel_us(&ab)).abs() < 1.0 && (d.test.new_median_us - kernel_us(&an)).abs() < 1.0);
    assert!(d.test.new_median_us > 1.5 * d.test.base_median_us);
    assert_eq!(r.overall, Verdict::Regression, "{:?}", d.test.note);
    assert!(d.test.note.as_deref().is_some_and(|n| n.contains("from its layers")), "{:?}", d.test.note);
    assert!(r.warnings.iter().any(|w| w.starts_with("different devices")), "{:?}", r.warnings);
    let wall = GateOptions { metric: traceprism::gate::Metric::Wall, ..GateOptions::default() };
    let r = gate(&db, &dn, &wall);
    assert_eq!(r.overall, Verdict::Inconclusive);
    assert!(r.phases[0].test.note.as_deref().is_some_and(|n| n.contains("at least 2 per side")), "{:?}", r.phases[0].test.note);
}

/// Traces with no pass (a training window with no step marker: the real two-GPU Nsight Systems
/// capture, as an export) are inconclusive, and the gate says why instead of staying silent.
#[test]
fn traces_with_no_pass_are_inconclusive_and_say_why() {
    let name = "nsys/mfu_2gpu_before.sqlite";
    let a = traceprism::analyze_path(&fixture(name), Options::default()).unwrap();
    assert_eq!(a.phases.passes.len(), 0, "the capture has no pass");
    let d = Digest::of(&a, name);
    let r = gate(&d, &d, &GateOptions::default());
    assert_eq!((r.overall, r.phases.len()), (Verdict::Inconclusive, 0));
    assert!(
        r.warnings.iter().any(|w| w.starts_with("neither trace has a pass to time (workload training and training)")),
        "{:?}",
        r.warnings
    );
    // A trace with passes says nothing of the kind.
    let moe = Digest::of(&analysis(MOE), MOE);
    assert!(!gate(&moe, &moe, &GateOptions::default()).warnings.iter().any(|w| w.contains("neither trace")));
}

fn cli(args: &[&str]) -> (i32, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_traceprism")).args(args).output().expect("runs");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn digests_are_small_and_deterministic_and_the_gate_exits_with_its_verdict() {
    let dir = std::env::temp_dir().join(format!("traceprism-gate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let moe = fixture(MOE);
    let (d1, d2) = (dir.join("a.json"), dir.join("b.json"));
    for d in [&d1, &d2] {
        assert_eq!(cli(&["digest", moe.to_str().unwrap(), "--out", d.to_str().unwrap()]).0, 0);
    }
    let (a, b) = (std::fs::read(&d1).unwrap(), std::fs::read(&d2).unwrap());
    assert_eq!(a, b, "the same trace gives the same bytes");
    assert!(a.starts_with(b"{\"traceprism_digest\":1"));
    // A digest against its own trace: no change on decode, exit 0.
    let md = dir.join("gate.md");
    let (code, text) = cli(&["gate", d1.to_str().unwrap(), moe.to_str().unwrap(), "--markdown", md.to_str().unwrap()]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("decode   no change"), "{text}");
    assert!(std::fs::read_to_string(&md).unwrap().starts_with("## traceprism gate: ✅ no change"));
    // One pass each, judged by its layers: 1 (the MI300X is 65% slower); by wall time, with
    // nothing to time its noise by: 2. A missing file: 3, never a verdict.
    let (b300, mi) =
        (fixture("sglang_qwen3-30b-a3b_decode_b300.trace.json.gz"), fixture("sglang_qwen3-30b-a3b_decode_mi300x.trace.json.gz"));
    assert_eq!(cli(&["gate", b300.to_str().unwrap(), mi.to_str().unwrap()]).0, 1);
    assert_eq!(cli(&["gate", b300.to_str().unwrap(), mi.to_str().unwrap(), "--metric", "wall"]).0, 2);
    assert_eq!(cli(&["gate", "/nonexistent.json", mi.to_str().unwrap()]).0, 3);
    assert_eq!(cli(&["gate", b300.to_str().unwrap(), mi.to_str().unwrap(), "--max-slowdown", "abc"]).0, 3);
    let json: serde_json::Value =
        serde_json::from_str(&cli(&["gate", d1.to_str().unwrap(), moe.to_str().unwrap(), "--json"]).1).unwrap();
    assert_eq!(json["overall"], "no_change");
    // A digest given where a trace is read is named as a digest (the format's first bytes tell).
    let out =
        std::process::Command::new(env!("CARGO_BIN_EXE_traceprism")).args(["summary", d1.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is a traceprism digest"), "{}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_digest_of_ten_thousand_passes_stays_under_a_megabyte() {
    use traceprism::gate::digest::{PhaseDigest, MAX_SAMPLES, TOP};
    // The largest a phase can be: MAX_SAMPLES samples of 20 categories and 20 kernels with long
    // names, times of 7 digits (ns), and 200 layers.
    let v = vec![1_234_567i64; MAX_SAMPLES];
    let p = PhaseDigest {
        passes: 10_000,
        sampled: MAX_SAMPLES,
        kernel_ns: v.clone(),
        wall_ns: v.clone(),
        categories: (0..TOP).map(|k| (format!("Category-{k}"), vec![12_345i64; MAX_SAMPLES])).collect(),
        kernels: (0..TOP)
            .map(|k| (format!("void some::templated_kernel<{k}, {}>(...)", "x".repeat(200)), vec![12_345i64; MAX_SAMPLES]))
            .collect(),
        layer_median_ns: (0..200).map(|l| (l, 123_456)).collect(),
    };
    let size = serde_json::to_string(&p).unwrap().len();
    eprintln!("the largest phase digest: {size} bytes");
    // Decode and prefill at that size would be twice this; every digest has at most 4 phases but
    // only decode-like phases reach 10,000 passes.
    assert!(2 * size < 1_000_000, "{size} bytes");
}

/// Four denoising steps a side (xDiT Flux, steps steady to well under 1%) settle a 4.9% slowdown
/// of every kernel: the gate says regression and exits 1 where it said "inconclusive: at least 5
/// passes"; the same steps against themselves are no change.
#[test]
fn four_tight_steps_a_side_settle_a_five_percent_change() {
    let name = "xdit_flux1_4steps_mi300x.json.gz";
    let base_trace = trace(name);
    let base = analysed(base_trace.clone());
    let slower = analysed(stretched(&base_trace, &|_| 1.049, 0.0, 1));
    let (db, dn) = (Digest::of(&base, "base"), Digest::of(&slower, "new"));
    let r = gate(&db, &dn, &GateOptions::default());
    let d = r.phases.iter().find(|p| p.phase == "denoise").expect("denoising steps");
    eprintln!("denoise: {} + {} passes, {:?}, {:?}", d.test.base_passes, d.test.new_passes, d.test.verdict, d.test.note);
    assert_eq!((d.test.base_passes, d.test.new_passes), (4, 4));
    assert_eq!(d.test.verdict, Verdict::Regression);
    assert_eq!(r.overall, Verdict::Regression);
    let same = gate(&db, &db, &GateOptions::default());
    assert_ne!(same.phases.iter().find(|p| p.phase == "denoise").unwrap().test.verdict, Verdict::Regression);
    // compare's verdict reads the same rule: slower, by the step's 4.9%.
    let c = traceprism::analysis::compare::compare(&slower, &base, &Default::default()).unwrap();
    let v = c.budget.iter().find(|p| p.phase == "denoise").expect("denoise compared");
    let pct = v.delta_pct().expect("both sides have denoising steps");
    eprintln!("{}", c.headline());
    assert_eq!(v.judged.change, traceprism::analysis::compare::noise::Change::Slower);
    assert!((4.0..5.5).contains(&pct), "{pct}");
}
