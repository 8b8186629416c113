//! Phase detection on real traces: accuracy against the truth files, and what the public traces
//! are known to be (from their sources: SGLang/vLLM step annotations, the README).

use std::path::PathBuf;
use traceprism::analysis::phases::Phase;
use traceprism::analysis::truth::{load_truth, score_phases};
use traceprism::{analyze_path, Analysis, Options};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name)
}

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
    eprintln!("trace_phase {:?} reason {:?} passes {}", p.trace_phase, p.not_inference_reason, p.passes.len());
    for pass in p.passes.iter().take(6).chain(p.passes.iter().skip(6).last()) {
        eprintln!(
            "  pass {} {:?} conf {:.2} kernels {} time {:.1}us tokens {:?} src {:?}",
            pass.index, pass.phase, pass.confidence, pass.kernels, pass.kernel_time_ns as f64 / 1e3, pass.tokens, pass.source
        );
        for v in &pass.votes {
            eprintln!("     {:?} {:?} {:.2} {}", v.method, v.phase, v.strength, v.why);
        }
    }
}

fn check_truth(trace: &str, truth: &str) {
    let a = analyze(trace, Options::default());
    dump(&a);
    let t = load_truth(&fixture(truth)).expect("truth reads");
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

#[test]
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
