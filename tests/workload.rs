//! The kind of workload, and a diffusion trace read as denoising steps.
//!
//! Expected figures come from outside our analysis: the xDiT Flux.1 trace's raw events (its four
//! `hipGraphLaunch` calls replay the compiled transformer once per denoising step; the kernels of
//! each replay carry that launch's correlation id), Flux.1's published configuration (19
//! dual-stream and 38 single-stream transformer blocks) and the H100 traces' truth files.

mod common;

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use traceprism::analysis::phases::Phase;
use traceprism::report::summary::summary as summarize;

const FLUX: &str = "xdit_flux1_4steps_mi300x.json.gz";

/// From the raw JSON: correlation id of every graph launch, and the (ts, correlation) of every kernel.
fn flux_raw() -> (Vec<i64>, Vec<(f64, i64, String)>) {
    let v: Value = serde_json::from_slice(&common::plain_fixture(FLUX)).expect("json");
    let mut graphs = Vec::new();
    let mut kernels = Vec::new();
    for e in v["traceEvents"].as_array().expect("events") {
        let corr = e["args"]["correlation"].as_i64();
        let name = e["name"].as_str().unwrap_or("");
        match e["cat"].as_str() {
            Some("cuda_runtime") | Some("cuda_driver") if name.contains("GraphLaunch") => {
                graphs.push(corr.expect("launch correlation"))
            }
            Some("kernel") => kernels.push((e["ts"].as_f64().expect("ts"), corr.unwrap_or(-1), name.to_string())),
            _ => {}
        }
    }
    (graphs, kernels)
}

#[test]
fn flux_is_diffusion_with_one_step_per_graph_replay_and_the_stages_around_them() {
    let (graphs, raw_kernels) = flux_raw();
    assert_eq!(graphs.len(), 4, "the trace replays the compiled transformer four times");
    let a = common::analysis(FLUX);
    let s = summarize(&a);
    assert_eq!(s.workload, "diffusion", "evidence: {:?}", s.workload_evidence);
    assert_eq!(s.passes, 4, "passes count the denoising steps");
    let steps: Vec<_> = a.phases.passes.iter().filter(|p| p.phase == Phase::Denoise).collect();
    assert_eq!(steps.len(), 4);
    // Each graph replay's kernels lie in exactly one step, a different step for each replay.
    let g = &a.trace.gpu;
    let mut step_of_graph: BTreeMap<i64, BTreeSet<u32>> = BTreeMap::new();
    for p in &steps {
        for &r in &p.rows {
            if graphs.contains(&g.correlation[r as usize]) {
                step_of_graph.entry(g.correlation[r as usize]).or_default().insert(p.index);
            }
        }
    }
    let graph_kernels = |c: i64| raw_kernels.iter().filter(|k| k.1 == c).count();
    let mut seen_steps = BTreeSet::new();
    for &c in &graphs {
        let in_steps = step_of_graph.get(&c).cloned().unwrap_or_default();
        assert_eq!(in_steps.len(), 1, "graph launch {c}'s kernels are in one step, not {in_steps:?}");
        let step = *in_steps.iter().next().unwrap();
        assert!(seen_steps.insert(step), "two replays in step {step}");
        let pass = &a.phases.passes[step as usize];
        let in_pass = pass.rows.iter().filter(|&&r| g.correlation[r as usize] == c).count();
        assert_eq!(in_pass, graph_kernels(c), "every kernel of replay {c} is in its step");
        // The step is the replay plus a few eager kernels (the scheduler's update), not other work.
        assert!(pass.kernels as usize - in_pass < 20, "step {step}: {} kernels, {in_pass} from the replay", pass.kernels);
    }
    // Stages: the text encoders before the first replay, the VAE decoder (all convolutions) after the last.
    let stages: Vec<_> = a.phases.passes.iter().filter(|p| p.phase == Phase::Stage).collect();
    assert_eq!(stages.len(), 2, "{:?}", s.stages);
    let first_step = steps[0].start_ns;
    let last_step_end = steps[3].end_ns;
    assert!(stages[0].end_ns <= first_step && stages[1].start_ns >= last_step_end);
    assert!(stages[0].stage.as_deref().unwrap().contains("encoders"), "{:?}", stages[0].stage);
    assert!(stages[1].stage.as_deref().unwrap().contains("VAE"), "{:?}", stages[1].stage);
    let conv_rows: Vec<usize> =
        a.trace.kernel_rows().filter(|&r| a.trace.cpu_op_name(r).is_some_and(|n| n.contains("convolution"))).collect();
    assert!(!conv_rows.is_empty());
    assert!(conv_rows.iter().all(|&r| a.phases.pass_of_row[r] == stages[1].index), "every convolution is in the VAE stage");
    // Every kernel is in a step or a stage: nothing dropped.
    let counted: usize = a.phases.passes.iter().map(|p| p.kernels as usize).sum();
    assert_eq!(counted, raw_kernels.len());
}

#[test]
fn flux_steps_have_the_published_blocks_dual_stream_then_single_stream() {
    let a = common::analysis(FLUX);
    let s = summarize(&a);
    // Flux.1 [dev/schnell] config: num_layers = 19 (dual-stream), num_single_layers = 38.
    assert_eq!(s.layers_per_pass, vec![57; 4]);
    let kinds: Vec<u32> = s.layer_kinds.iter().map(|k| k.count).collect();
    assert_eq!(kinds, vec![19, 38], "{:?}", s.layer_kinds);
    assert_ne!(s.layer_kinds[0].kind, s.layer_kinds[1].kind);
}

#[test]
fn llm_and_training_traces_keep_their_kind() {
    for (name, truth) in [
        ("llama_dense_eager.pt.trace.json.gz", "llama_dense_eager.truth.json.gz"),
        ("moe_eager.pt.trace.json.gz", "moe_eager.truth.json.gz"),
    ] {
        let s = summarize(&common::analysis(name));
        let t: Value =
            serde_json::from_slice(&traceprism::ingest::gunzip(&std::fs::read(common::fixture(truth)).unwrap()).unwrap())
                .unwrap();
        assert_eq!(s.workload, "llm_inference", "{name}: {:?}", s.workload_evidence);
        assert_eq!(s.passes as u64, t["forward_passes"].as_u64().unwrap(), "{name}");
    }
    for name in ["sglang_qwen3-8b_decode_graph_mi300x.json.gz", "vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz"] {
        assert_eq!(summarize(&common::analysis(name)).workload, "llm_inference", "{name}");
    }
    for name in ["llama_train.pt.trace.json.gz", "resnet_train_actckpt_mi300x.json.gz", "deepseek_v3_train_h800.json.gz"] {
        assert_eq!(summarize(&common::analysis(name)).workload, "training", "{name}");
    }
}

#[test]
fn summary_json_states_the_workload() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_traceprism"))
        .args(["summary", "--json"])
        .arg(common::fixture(FLUX))
        .output()
        .expect("runs");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["workload"], "diffusion");
    assert_eq!(v["passes"], 4);
    assert!(v["workload_evidence"].as_array().is_some_and(|e| !e.is_empty()));
}
