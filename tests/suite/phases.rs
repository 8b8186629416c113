//! Phase detection on real traces: accuracy against the truth files, and what the public traces
//! are known to be (from their sources: SGLang/vLLM step annotations, the README).

use crate::common;
use common::fixture;
use traceprism::analysis::phases::Phase;
use traceprism::analysis::truth::score_phases;
use traceprism::{analyze_path, Analysis, Options};

fn analyze(name: &str, options: Options) -> Analysis {
    analyze_path(&fixture(name), options).expect("fixture reads")
}

/// Share of kernel time per phase.
fn phase_share(a: &Analysis, phase: Phase) -> f64 {
    let g = &a.trace.gpu;
    let (mut hit, mut all) = (0i64, 0i64);
    for i in a.trace.kernel_rows() {
        all += g.dur[i];
        if a.phases.phase_of_row[i] == Some(phase) {
            hit += g.dur[i];
        }
    }
    hit as f64 / all.max(1) as f64
}

fn dump(a: &Analysis) {
    let p = &a.phases;
    eprintln!("{}", traceprism::report::table(a, "phase_methods").unwrap().to_csv());
    eprintln!("trace_phase {:?} reason {:?} passes {}", p.trace_phase, p.not_inference_reason, p.passes.len());
    for pass in p.passes.iter().take(6).chain(p.passes.iter().skip(6).last()) {
        eprintln!(
            "  pass {} {:?} conf {:.2} kernels {} time {:.1}us tokens {:?} src {:?}",
            pass.index,
            pass.phase,
            pass.confidence,
            pass.kernels,
            pass.kernel_time_ns as f64 / 1e3,
            pass.tokens,
            pass.source
        );
        for v in &pass.votes {
            eprintln!("     {:?} {:?} {:.2} {}", v.method, v.phase, v.strength, v.why);
        }
    }
}

fn check_truth(trace: &str, truth: &str) {
    let a = analyze(trace, Options::default());
    dump(&a);
    let t = traceprism::pipeline::read_truth(&fixture(truth)).expect("truth reads");
    let s = score_phases(&a, &t);
    eprintln!("{trace}:\n{s}");
    assert_eq!(s.matched_kernels, s.truth_kernels, "every truth kernel matches a trace row");
    assert!(s.phase_accuracy() >= 0.99, "{trace}: phase accuracy {}", s.phase_accuracy());
    assert!(s.pass_count_exact(), "{trace}: {} passes found, truth {:?}", s.passes_found, s.passes_truth);
    assert!(s.pass_agreement >= 0.99, "{trace}: pass agreement {}", s.pass_agreement);
}

#[test]
fn llama_dense_eager_matches_truth() {
    check_truth("llama_dense_eager.pt.trace.json.gz", "llama_dense_eager.truth.json.gz");
}

#[test]
fn moe_eager_matches_truth() {
    check_truth("moe_eager.pt.trace.json.gz", "moe_eager.truth.json.gz");
}

fn options(method: &str, threshold: i64) -> Options {
    Options {
        phase_method: traceprism::analysis::options::PhaseMethod::parse(method).unwrap(),
        decode_threshold: threshold,
        ..Options::default()
    }
}

#[test]
fn single_methods_on_truth_traces() {
    // Shapes alone (record_shapes is on in both H100 traces) must be as right as the union.
    for (trace, truth) in [
        ("llama_dense_eager.pt.trace.json.gz", "llama_dense_eager.truth.json.gz"),
        ("moe_eager.pt.trace.json.gz", "moe_eager.truth.json.gz"),
    ] {
        let t = traceprism::pipeline::read_truth(&fixture(truth)).unwrap();
        for method in ["gemm_params", "attention_patterns", "hybrid"] {
            let a = analyze(trace, options(method, 10));
            let s = score_phases(&a, &t);
            assert!(s.phase_accuracy() >= 0.99, "{trace} {method}: {}", s.phase_accuracy());
        }
        // Every method that votes agrees with the final answer on these traces.
        let a = analyze(trace, Options::default());
        let table = traceprism::report::table(&a, "phase_methods").unwrap();
        assert_eq!(table.rows.len(), 5);
    }
}

/// (fixture, expected phase of all kernel time, expected passes) — from the trace's own
/// framework annotations (`execute_…`, `step[…]`) and the README's description of each trace.
const SINGLE_STEP_TRACES: &[(&str, Phase)] = &[
    ("sglang_qwen3-8b_prefill_mi300x.json.gz", Phase::Prefill),
    ("vllm_moe_tp8_eager_b200.json.gz", Phase::Prefill),
    ("sglang_qwen3-8b_decode_graph_mi300x.json.gz", Phase::Decode),
    ("vllm_gptoss_decode_fullgraph_mi300x.json.gz", Phase::Decode),
    ("sglang_qwen3-30b-a3b_decode_b300.trace.json.gz", Phase::Decode),
    ("sglang_qwen3-30b-a3b_decode_mi300x.trace.json.gz", Phase::Decode),
];

#[test]
fn public_single_step_traces() {
    for &(name, phase) in SINGLE_STEP_TRACES {
        let a = analyze(name, Options::default());
        assert_eq!(a.phases.passes.len(), 1, "{name}: one engine step");
        assert!(phase_share(&a, phase) >= 0.999, "{name}: {:?} share {}", phase, phase_share(&a, phase));
        assert_eq!(a.phases.trace_phase, Some(phase), "{name}");
    }
}

#[test]
fn public_single_step_traces_without_annotations() {
    // The same traces judged without framework annotations: shapes and kernel kinds alone.
    for &(name, phase) in SINGLE_STEP_TRACES {
        let a = analyze(name, options("attention_patterns", 10));
        assert!(phase_share(&a, phase) >= 0.999, "{name}: attention_patterns alone gives {:?}", a.phases.trace_phase);
    }
}

#[test]
fn vllm_tp4_ten_steps_prefill_then_decode() {
    // 10 output tokens → 10 engine steps (10 aten::argmax ops in the trace); step 0 carries the
    // prompts (eager, no graph), steps 1-9 replay CUDA graphs.
    let a = analyze("vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz", Options::default());
    let p = &a.phases;
    assert_eq!(p.passes.len(), 10);
    assert_eq!(p.passes[0].phase, Phase::Prefill);
    assert!(p.passes[1..].iter().all(|x| x.phase == Phase::Decode));
}

#[test]
fn training_and_non_llm_traces_are_not_inference() {
    for name in [
        "llama_train.pt.trace.json.gz",
        "resnet_train_actckpt_mi300x.json.gz",
        "recsys_train_rank0_a100.json.gz",
        "deepseek_v3_train_h800.json.gz",
        "gpu_only_mi210.json.gz",
    ] {
        let a = analyze(name, Options::default());
        assert_eq!(a.phases.trace_phase, Some(Phase::NotInference), "{name}");
        // Training steps, where found (tests/suite/training_steps.rs), are passes of no phase.
        assert!(a.phases.passes.iter().all(|p| p.phase == Phase::NotInference), "{name}");
        assert!((phase_share(&a, Phase::NotInference) - 1.0).abs() < 1e-9, "{name}");
    }
}

#[test]
fn torch_compile_block_is_one_prompt_forward() {
    // One compiled transformer block over [8, 4096, 2048] activations (Input Dims), no cache.
    let a = analyze("torch_compile_triton_mi300x.json.gz", Options::default());
    assert_eq!(a.phases.passes.len(), 1);
    assert_eq!(a.phases.passes[0].tokens, Some(8 * 4096));
    assert_eq!(a.phases.trace_phase, Some(Phase::Prefill));
}

#[test]
fn decode_threshold_is_honoured() {
    // vllm_moe_tp8_eager_b200: addmm M = 888 tokens; with a threshold above that, GEMM M says decode.
    let a = analyze("vllm_moe_tp8_eager_b200.json.gz", options("gemm_params", 1000));
    assert_eq!(a.phases.trace_phase, Some(Phase::Decode));
    let a = analyze("vllm_moe_tp8_eager_b200.json.gz", options("gemm_params", 10));
    assert_eq!(a.phases.trace_phase, Some(Phase::Prefill));
}

#[test]
fn phase_tables_are_consistent() {
    let a = analyze("llama_dense_eager.pt.trace.json.gz", Options::default());
    let s = traceprism::report::table(&a, "phase_summary").unwrap();
    let phase = s.column("phase").unwrap();
    let passes = s.column("passes").unwrap();
    let rows: Vec<(String, f64)> = s.rows.iter().map(|r| (r[phase].text(), r[passes].as_f64().unwrap())).collect();
    assert_eq!(rows, vec![("prefill".to_string(), 1.0), ("decode".to_string(), 32.0)]);
    let p = traceprism::report::table(&a, "passes").unwrap();
    assert_eq!(p.rows.len(), 33);
    for name in ["ops_summary_prefill", "ops_summary_decode", "kernel_summary_prefill", "kernel_summary_decode"] {
        let t = traceprism::report::table(&a, name).unwrap();
        assert!(!t.rows.is_empty(), "{name}");
    }
}

#[test]
#[ignore = "prints every fixture's passes and votes"]
fn dump_all() {
    for f in std::fs::read_dir(fixture("")).unwrap() {
        let name = f.unwrap().file_name().into_string().unwrap();
        if name.contains("truth") || !name.ends_with(".gz") {
            continue;
        }
        eprintln!("== {name}");
        dump(&analyze(&name, Options::default()));
    }
}

/// Re-runs phase detection on a modified copy of the linked trace.
fn redetect(a: &mut Analysis, options: &Options) {
    a.base_mut().phases = traceprism::analysis::phases::detect(&a.trace, &a.categories, options);
}

#[test]
fn truth_traces_without_shapes_or_cpu_ops() {
    // Held-back traces may lack `record_shapes` or CPU ops entirely: the same two runs with that
    // information removed from the model must still split and label right.
    for (trace, truth) in [
        ("llama_dense_eager.pt.trace.json.gz", "llama_dense_eager.truth.json.gz"),
        ("moe_eager.pt.trace.json.gz", "moe_eager.truth.json.gz"),
    ] {
        let t = traceprism::pipeline::read_truth(&fixture(truth)).unwrap();
        let mut a = analyze(trace, Options::default());
        for d in a.base_mut().trace.ops.input_dims.iter_mut() {
            *d = traceprism::model::NO_NAME;
        }
        redetect(&mut a, &Options::default());
        let s = score_phases(&a, &t);
        eprintln!("{trace} without shapes:\n{s}");
        assert!(s.phase_accuracy() >= 0.99 && s.pass_count_exact(), "{trace} without shapes");
        for r in a.base_mut().trace.gpu.cpu_op.iter_mut() {
            *r = traceprism::model::NONE;
        }
        redetect(&mut a, &Options::default());
        let s = score_phases(&a, &t);
        eprintln!("{trace} without CPU ops:\n{s}");
        assert!(s.phase_accuracy() >= 0.99 && s.pass_count_exact(), "{trace} without CPU ops");
    }
}

#[test]
fn piecewise_graph_replays_are_not_steps() {
    // vllm_tp4 with the sampler's argmax links removed: the 9 decode steps replay 81 piecewise
    // graphs of 7-12 kernels each (counted with python from the trace), which must not become steps.
    let mut a = analyze("vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz", Options::default());
    let argmax: Vec<usize> = a.trace.kernel_rows().filter(|&i| a.trace.name(a.trace.gpu.name[i]).contains("ArgMaxOps")).collect();
    assert_eq!(argmax.len(), 10);
    // Without any step marker the device is one pass, not 729 graph pieces.
    let names: Vec<u32> = a.trace.gpu.name.clone();
    for &i in &argmax {
        a.base_mut().trace.gpu.cpu_op[i] = traceprism::model::NONE;
        a.base_mut().trace.gpu.name[i] = traceprism::model::NO_NAME;
    }
    redetect(&mut a, &Options::default());
    assert_eq!(a.phases.passes.len(), 1);
    a.base_mut().trace.gpu.name = names;
    redetect(&mut a, &Options::default());
    assert_eq!(a.phases.passes.len(), 10);
}
