//! Comparison of two real traces. Expected counts and totals were read from the fixtures with
//! python3 (gzip + json: sum of `dur` over events with `cat` kernel / gpu_memcpy / gpu_memset)
//! and from the truth files (`kernel_time_us_by_phase`), never from our own output.

use crate::common;
use common::fixture;
use std::sync::OnceLock;
use traceprism::analysis::compare::fusion::Kind;
use traceprism::analysis::compare::overall::Value;
use traceprism::analysis::compare::{compare, CompareOptions, Comparison, LevelRow, Status};
use traceprism::report::compare::{compare_tables, COMPARE_TABLES};
use traceprism::{analyze_path, Analysis, Options};

fn load(name: &str) -> Analysis {
    analyze_path(&fixture(name), Options::default()).expect("fixture loads")
}

const B300: &str = "sglang_qwen3-30b-a3b_decode_b300.trace.json.gz";
const MI300X: &str = "sglang_qwen3-30b-a3b_decode_mi300x.trace.json.gz";
const LLAMA: &str = "llama_dense_eager.pt.trace.json.gz";
const VLLM: &str = "vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz";

fn qwen() -> &'static (Analysis, Analysis) {
    static Q: OnceLock<(Analysis, Analysis)> = OnceLock::new();
    Q.get_or_init(|| (load(B300), load(MI300X)))
}

fn llama() -> &'static Analysis {
    static L: OnceLock<Analysis> = OnceLock::new();
    L.get_or_init(|| load(LLAMA))
}

fn metric<'c>(c: &'c Comparison, name: &str) -> &'c traceprism::analysis::compare::overall::Metric {
    c.overall.metrics.iter().find(|m| m.name == name).unwrap_or_else(|| panic!("no metric {name}"))
}

fn time(v: &Value) -> i64 {
    match v {
        Value::Time(t) => *t,
        other => panic!("not a time: {other:?}"),
    }
}

fn count(v: &Value) -> i64 {
    match v {
        Value::Count(t) => *t,
        other => panic!("not a count: {other:?}"),
    }
}

/// (A events, A ns, B events, B ns) summed over level rows.
fn sums<'r>(rows: impl Iterator<Item = &'r LevelRow>) -> (usize, i64, usize, i64) {
    rows.fold((0, 0, 0, 0), |s, r| (s.0 + r.a.count, s.1 + r.a.time_ns, s.2 + r.b.count, s.3 + r.b.time_ns))
}

/// Every level partitions each side: counts and times add up to the side's GPU totals.
fn assert_levels_partition(c: &Comparison, events: (usize, usize), gpu_ns: (i64, i64)) {
    let want = (events.0, gpu_ns.0, events.1, gpu_ns.1);
    assert_eq!(sums(c.categories.iter().filter(|r| r.key[0] == "family")), want, "family level");
    assert_eq!(sums(c.categories.iter().filter(|r| r.key[0] == "category")), want, "category level");
    assert_eq!(sums(c.ops.iter()), want, "op level");
    assert_eq!(sums(c.layers.iter()), want, "layer level");
    // keys are unique within a level
    for rows in [&c.ops, &c.layers, &c.categories] {
        let mut keys: Vec<&Vec<String>> = rows.iter().map(|r| &r.key).collect();
        let n = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), n, "duplicate keys");
    }
}

/// Every kernel of each aligned block is in exactly one alignment row.
fn assert_alignment_partitions(c: &Comparison) {
    for (k, blk) in c.alignment.blocks.iter().enumerate() {
        let mut a: Vec<usize> = c.alignment.rows.iter().filter(|r| r.block == k).flat_map(|r| r.a_rows.clone()).collect();
        let mut b: Vec<usize> = c.alignment.rows.iter().filter(|r| r.block == k).flat_map(|r| r.b_rows.clone()).collect();
        let (mut wa, mut wb) = (blk.a_rows.clone(), blk.b_rows.clone());
        a.sort_unstable();
        b.sort_unstable();
        wa.sort_unstable();
        wb.sort_unstable();
        assert_eq!(a, wa, "block {} side A", blk.name);
        assert_eq!(b, wb, "block {} side B", blk.name);
    }
    for r in &c.alignment.rows {
        match r.kind {
            Kind::Match | Kind::Substituted => assert!(r.a_rows.len() == 1 && r.b_rows.len() == 1),
            Kind::Fusion => assert!(r.fused_side().is_some(), "fusion row with {} vs {}", r.a_rows.len(), r.b_rows.len()),
            Kind::OnlyA => assert!(r.a_rows.len() == 1 && r.b_rows.is_empty()),
            Kind::OnlyB => assert!(r.b_rows.len() == 1 && r.a_rows.is_empty()),
        }
    }
}

#[test]
fn cross_vendor_totals_agree_with_independent_counts() {
    let (b300, mi) = qwen();
    let c = compare(b300, mi, &CompareOptions::default()).unwrap();
    assert_eq!(c.label_a, "NVIDIA B300 SXM6 AC");
    assert_eq!(c.label_b, "AMD Instinct MI300X");
    // python: 713 kernels, 6290.304 µs; 802 kernels, 10896.105 µs; memcpy+memset 5 / 7.488 µs and 3 / 12.597 µs
    assert_eq!((count(&metric(&c, "kernels").a), count(&metric(&c, "kernels").b)), (713, 802));
    assert_eq!(time(&metric(&c, "kernel time").a), 6_290_304);
    assert_eq!(time(&metric(&c, "kernel time").b), 10_896_105);
    let gpu = metric(&c, "gpu time (kernels + memcpy + memset)");
    assert_eq!((time(&gpu.a), time(&gpu.b)), (6_290_304 + 7_488, 10_896_105 + 12_597));
    assert_levels_partition(&c, (718, 805), (6_297_792, 10_908_702));
    // the B300 step is faster: status of kernel time for A is "faster"
    assert_eq!(metric(&c, "kernel time").verdict.unwrap().status, Status::Faster);
}

#[test]
fn cross_vendor_categories_line_up_and_alignment_matches() {
    let (b300, mi) = qwen();
    let c = compare(b300, mi, &CompareOptions::default()).unwrap();
    let both = |fam: &str| c.categories.iter().any(|r| r.key[0] == "family" && r.key[1] == fam && r.a.count > 0 && r.b.count > 0);
    assert!(both("GEMM"), "GEMM on both sides");
    assert_alignment_partitions(&c);
    let matches: Vec<_> = c.alignment.rows.iter().filter(|r| r.kind == Kind::Match).collect();
    assert!(!matches.is_empty());
    // matched GEMMs: an nvjet/cuBLAS GEMM on B300 paired with a Tensile Cijk_ GEMM on MI300X
    let gemm_pairs = matches
        .iter()
        .filter(|r| {
            let na = b300.trace.name(b300.trace.gpu.name[r.a_rows[0]]);
            let nb = mi.trace.name(mi.trace.gpu.name[r.b_rows[0]]);
            na.starts_with("nvjet") && nb.starts_with("Cijk_")
        })
        .count();
    assert!(gemm_pairs > 0, "no nvjet ↔ Cijk_ pairs");
    // matched pairs never cross families
    for r in &matches {
        assert_eq!(b300.categories.family(r.a_rows[0]), mi.categories.family(r.b_rows[0]));
    }
}

#[test]
fn self_comparison_is_all_similar_with_ratio_one() {
    let l = llama();
    let c = compare(l, l, &CompareOptions::default()).unwrap();
    for r in c.categories.iter().chain(&c.ops).chain(&c.layers) {
        assert_eq!(r.verdict.status, Status::Similar, "{:?}", r.key);
        assert_eq!(r.verdict.ratio, Some(1.0), "{:?}", r.key);
        assert_eq!(r.a, r.b);
    }
    for m in &c.overall.metrics {
        if let Some(v) = m.verdict {
            assert_eq!(v.status, Status::Similar, "{}", m.name);
            assert_eq!(v.ratio, Some(1.0), "{}", m.name);
        }
    }
    assert_alignment_partitions(&c);
    assert!(c.alignment.rows.iter().all(|r| r.kind == Kind::Match), "self alignment must be all matches");
    assert!(!c.alignment.rows.is_empty());
    // truth: kernel_time_us_by_phase = decode 71748.048 + prefill 9590.696; python: 49 memsets, 38.498 µs
    assert_eq!(time(&metric(&c, "kernel time").a), 71_748_048 + 9_590_696);
    assert_levels_partition(&c, (22_903 + 49, 22_903 + 49), (81_338_744 + 38_498, 81_338_744 + 38_498));
}

#[test]
fn options_are_checked_and_thresholds_apply() {
    let (b300, mi) = qwen();
    let bad = CompareOptions { phase: "training".into(), ..Default::default() };
    assert!(compare(b300, mi, &bad).is_err());
    let bad = CompareOptions { ratio_threshold: 0.5, ..Default::default() };
    assert!(compare(b300, mi, &bad).is_err());
    let lax = CompareOptions { ratio_threshold: 1e9, ..Default::default() };
    let c = compare(b300, mi, &lax).unwrap();
    for r in c.categories.iter().chain(&c.ops) {
        assert!(matches!(r.verdict.status, Status::Similar | Status::OnlyA | Status::OnlyB), "{:?}", r.key);
    }
    let labels = CompareOptions { label_a: Some("new build".into()), label_b: Some("old build".into()), ..Default::default() };
    let c = compare(b300, mi, &labels).unwrap();
    assert_eq!((c.label_a.as_str(), c.label_b.as_str()), ("new build", "old build"));
}

#[test]
fn tables_have_their_columns_and_csv() {
    let (b300, mi) = qwen();
    let tables = compare_tables(b300, mi, &CompareOptions::default()).unwrap();
    let names: Vec<&str> = tables.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, COMPARE_TABLES);
    for t in &tables {
        for r in &t.rows {
            assert_eq!(r.len(), t.columns.len(), "{}", t.name);
        }
        assert!(t.to_csv().lines().count() >= 1);
    }
    // per-side totals of the category table's family rows sum to the GPU totals (µs, exact)
    let cats = tables.iter().find(|t| t.name == "compare_categories").unwrap();
    let (lvl, at) = (cats.column("level").unwrap(), cats.column("a_time_us").unwrap());
    let sum: f64 = cats.rows.iter().filter(|r| r[lvl].text() == "family").map(|r| r[at].as_f64().unwrap()).sum();
    assert!((sum - 6297.792).abs() < 1e-6, "{sum}");
}

#[test]
fn cli_compare_writes_csv_and_json() {
    let exe = env!("CARGO_BIN_EXE_traceprism");
    let dir = std::env::temp_dir().join(format!("traceprism-compare-{}", std::process::id()));
    let out = std::process::Command::new(exe)
        .args(["compare", fixture(B300).to_str().unwrap(), fixture(MI300X).to_str().unwrap(), "--out", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for name in COMPARE_TABLES {
        assert!(dir.join(format!("{name}.csv")).exists(), "{name}.csv");
    }
    let _ = std::fs::remove_dir_all(&dir);
    let out = std::process::Command::new(exe)
        .args(["compare", fixture(B300).to_str().unwrap(), fixture(MI300X).to_str().unwrap(), "--json", "--phase", "all"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["tables"].as_array().map(|a| a.len()), Some(COMPARE_TABLES.len()));
    // The answer's first line says the verdict in words: the MI300X's decode step is the slower.
    let headline = v["headline"].as_str().unwrap();
    assert!(headline.starts_with("NVIDIA B300 SXM6 AC is faster than AMD Instinct MI300X by "), "{headline}");
    let bad = std::process::Command::new(exe)
        .args(["compare", fixture(B300).to_str().unwrap(), fixture(MI300X).to_str().unwrap(), "--bogus", "1"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
}

/// True when the categories, passes and layers of issues 3–5 are in the build (the placeholders
/// have one rule named "placeholder" and no passes). The tests below need them and say so when
/// they are absent instead of asserting on placeholder output.
fn real_analyses(a: &Analysis) -> bool {
    let real = a.categories.rules.iter().all(|r| r != "placeholder") && !a.phases.passes.is_empty();
    if !real {
        eprintln!("note: placeholder categories/phases in this build; analysis-dependent checks skipped");
    }
    real
}

#[test]
fn per_phase_and_per_layer_levels_agree_with_truth() {
    let l = llama();
    if !real_analyses(l) {
        return;
    }
    let c = compare(l, l, &CompareOptions::default()).unwrap();
    // truth: 33 forward passes (1 prefill + 32 decode), 16 layers
    assert_eq!(count(&metric(&c, "forward passes").a), 33);
    assert_eq!(time(&metric(&c, "kernel time, phase prefill").a), 9_590_696);
    assert_eq!(time(&metric(&c, "kernel time, phase decode").a), 71_748_048);
    let decode_layers: Vec<&LevelRow> = c.layers.iter().filter(|r| r.key[0] == "decode" && r.key[1] == "layer").collect();
    assert_eq!(decode_layers.len(), 16, "one row per decode layer index");
    // per pass: decode rows are divided by the 32 decode passes, prefill rows by 1
    assert!(decode_layers.iter().all(|r| r.a_div == 32.0));
    assert!(c.layers.iter().filter(|r| r.key[0] == "prefill").all(|r| r.a_div == 1.0));
    // decode-only selection keeps exactly the decode kernels (plus nothing else)
    let d = compare(l, l, &CompareOptions { phase: "decode".into(), ..Default::default() }).unwrap();
    assert_eq!(time(&metric(&d, "kernel time").a), 71_748_048);
    assert!(d.alignment.blocks.iter().all(|b| b.name.starts_with("decode")));
    assert!(d.alignment.blocks.iter().any(|b| b.name.contains("layer")), "a representative decode layer is aligned");
}

#[test]
fn cross_vendor_attention_and_gemm_pair_up() {
    let (b300, mi) = qwen();
    if !real_analyses(b300) {
        return;
    }
    let c = compare(b300, mi, &CompareOptions::default()).unwrap();
    let both = |fam: &str| c.categories.iter().any(|r| r.key[0] == "family" && r.key[1] == fam && r.a.count > 0 && r.b.count > 0);
    for fam in ["GEMM", "Attention", "MoE", "Norm"] {
        assert!(both(fam), "{fam} on both sides");
    }
    let layer_block = c.alignment.blocks.iter().position(|b| b.name.contains("layer")).expect("a layer block");
    let in_layer: Vec<_> = c.alignment.rows.iter().filter(|r| r.block == layer_block).collect();
    // the flashinfer/trtllm decode attention (fmha) lines up with the paged attention kernels
    let attention = in_layer.iter().any(|r| {
        matches!(r.kind, Kind::Match | Kind::Fusion)
            && r.a_rows.iter().any(|&i| b300.trace.name(b300.trace.gpu.name[i]).starts_with("fmha"))
            && r.b_rows.iter().any(|&i| mi.trace.name(mi.trace.gpu.name[i]).contains("paged_attention"))
    });
    assert!(attention, "fmha ↔ paged_attention");
    // MoE expert GEMMs line up: B300 bmm_* with CK moe_gemm
    let moe = in_layer.iter().any(|r| {
        r.a_rows.iter().any(|&i| b300.trace.name(b300.trace.gpu.name[i]).starts_with("bmm_"))
            && r.b_rows.iter().any(|&i| mi.trace.name(mi.trace.gpu.name[i]).contains("moe_gemm"))
    });
    assert!(moe, "bmm ↔ moe_gemm");
}

#[test]
fn eager_vs_fused_build_shows_norm_and_qkv_fusions() {
    // different models (Llama eager vs a vLLM torch.compile/CUDA-graph build): only the fusion
    // patterns are checked, not times
    let l = llama();
    if !real_analyses(l) {
        return;
    }
    let v = load(VLLM);
    let c = compare(l, &v, &CompareOptions::default()).unwrap();
    assert_alignment_partitions(&c);
    let fusions: Vec<_> = c.alignment.rows.iter().filter(|r| r.kind == Kind::Fusion && r.fused_side() == Some('b')).collect();
    // eager RMSNorm (pow, mean, add, rsqrt, mul... ≥ 5 kernels) covered by one fused Triton norm
    let norm = fusions.iter().any(|r| {
        let fused = v.trace.name(v.trace.gpu.name[r.b_rows[0]]);
        fused.contains("rsqrt") && r.a_rows.len() >= 5 && r.a_rows.iter().all(|&i| l.categories.family(i) == "Norm")
    });
    assert!(norm, "norm fusion not found");
    // separate q, k, v projections covered by one fused QKV GEMM
    let qkv = fusions.iter().any(|r| {
        v.categories.family(r.b_rows[0]) == "GEMM"
            && r.a_rows.len() >= 2
            && r.a_rows.iter().all(|&i| l.categories.family(i) == "GEMM")
    });
    assert!(qkv, "QKV GEMM fusion not found");
}

#[test]
fn a_diffusion_trace_compares_step_by_step() {
    // The xDiT Flux trace against itself, denoising steps only: every block lines up, ratio 1,
    // and the steps' kernels are the four graph replays' (4 × 1573, tests/workload.rs).
    let f = load("xdit_flux1_4steps_mi300x.json.gz");
    let options = CompareOptions { phase: "denoise".into(), ..CompareOptions::default() };
    let c = compare(&f, &f, &options).unwrap();
    assert!(!c.layers.is_empty(), "the blocks of a step are compared");
    for r in c.categories.iter().chain(&c.ops).chain(&c.layers) {
        assert_eq!(r.verdict.ratio, Some(1.0), "{:?}", r.key);
    }
    assert_alignment_partitions(&c);
    assert!(c.alignment.rows.iter().all(|r| r.kind == Kind::Match));
    assert_eq!(count(&metric(&c, "kernels").a), 4 * 1573);
}
