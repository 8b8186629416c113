//! The kind of workload, and a diffusion trace read as denoising steps.
//!
//! Expected figures come from outside our analysis: the xDiT Flux.1 trace's raw events (its four
//! `hipGraphLaunch` calls replay the compiled transformer once per denoising step; the kernels of
//! each replay carry that launch's correlation id), Flux.1's published configuration (19
//! dual-stream and 38 single-stream transformer blocks) and the H100 traces' truth files.

use crate::common;

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

const SD35: &str = "xdit_sd35_large_4steps_mi300x.json.gz";

#[test]
fn sd35_steps_each_hold_one_transformer_call_with_its_38_joint_blocks() {
    // Stable Diffusion 3.5 Large through xDiT (the first example): CLIP and T5 encoders,
    // the compiled MMDiT transformer once per denoising step, the VAE decoder. Independent facts
    // from the raw trace: `nn.Module: SD3Transformer2DModel_0` frames (one per transformer call)
    // and the image stream's MLP up-projection, a [8192, 2432] x [2432, 9728] GEMM, once per
    // joint block (hidden 2432 = 38 heads x 64: the Large model, whose published config has 38
    // blocks).
    let a = common::analysis(SD35);
    let s = summarize(&a);
    assert_eq!(s.workload, "diffusion", "{:?}", s.workload_evidence);
    let t = &a.trace;
    let calls: Vec<(i64, i64)> = (0..t.ops.len())
        .filter(|&i| t.name(t.ops.name[i]).starts_with("nn.Module: SD3Transformer2DModel"))
        .map(|i| (t.ops.ts[i], t.ops.end(i)))
        .collect();
    assert_eq!(calls.len(), 4, "four transformer calls in the trace");
    assert_eq!(s.passes, calls.len(), "a denoising step per transformer call");
    let steps: Vec<_> = a.phases.passes.iter().filter(|p| p.phase == Phase::Denoise).collect();
    let g = &t.gpu;
    for (step, &(from, to)) in steps.iter().zip(&calls) {
        // The kernels launched inside the call are the step's (a few launched just around it,
        // like the scheduler's, may fall either side).
        let launched_in: BTreeSet<u32> = (0..g.len() as u32)
            .filter(|&r| {
                let l = g.launch[r as usize];
                l != traceprism::model::NONE && (from..to).contains(&t.launches.ts[l as usize])
            })
            .collect();
        let in_step: BTreeSet<u32> = step.rows.iter().copied().collect();
        let shared = launched_in.intersection(&in_step).count();
        assert!(
            shared + 20 >= launched_in.len().max(in_step.len()),
            "step {}: {} kernels, {} launched in the call, {shared} both",
            step.index,
            in_step.len(),
            launched_in.len()
        );
        let fc1 = step
            .rows
            .iter()
            .filter(|&&r| {
                let op = g.cpu_op[r as usize];
                op != traceprism::model::NONE && t.name(t.ops.input_dims[op as usize]).starts_with("[[8192, 2432], [2432, 9728]")
            })
            .count();
        assert_eq!(fc1, 38, "step {}: the image MLP's up-projection runs once per block", step.index);
    }
    assert_eq!(s.layers_per_pass, vec![38; 4], "38 joint blocks per step");
    assert_eq!(s.stages.len(), 2, "encoders before, VAE after: {:?}", s.stages);
}

#[test]
fn one_forward_with_no_lm_head_is_a_single_pass_model_even_from_an_embedding_lookup() {
    // BERT-small (4 layers) and Qwen1.5-0.5B loaded as a base model (24 layers, no LM head),
    // each run once by TraceLens' model tests: an encoder forward, not token generation.
    for (name, layers) in [("hf_bert_small_forward_h100.json.gz", 4), ("hf_qwen15_05b_base_forward_h100.json.gz", 24)] {
        let s = summarize(&common::analysis(name));
        assert_eq!(s.workload, "single_pass", "{name}: {:?}", s.workload_evidence);
        assert_eq!((s.passes, s.layers_per_pass.clone()), (1, vec![layers]), "{name}");
    }
}

#[test]
fn a_pass_the_profiler_started_inside_is_incomplete() {
    // The Qwen1.5 trace starts with 436 kernels of an earlier forward: their launches happened
    // before the profiler started, so none of them has a runtime call with its correlation id.
    let name = "hf_qwen15_05b_base_forward_h100.json.gz";
    let v: Value = serde_json::from_slice(&common::plain_fixture(name)).expect("json");
    let events = v["traceEvents"].as_array().expect("events");
    let launched: BTreeSet<i64> = events
        .iter()
        .filter(|e| e["cat"] == "cuda_runtime" || e["cat"] == "cuda_driver")
        .filter_map(|e| e["args"]["correlation"].as_i64())
        .collect();
    let orphans: Vec<f64> = events
        .iter()
        .filter(|e| e["cat"] == "kernel" && !e["args"]["correlation"].as_i64().is_some_and(|c| launched.contains(&c)))
        .map(|e| e["ts"].as_f64().unwrap())
        .collect();
    assert_eq!(orphans.len(), 436);
    let a = common::analysis(name);
    let first = &a.phases.passes[0];
    assert!(first.incomplete, "the pass the trace starts inside");
    assert_eq!(first.kernels as usize, orphans.len(), "it holds exactly the kernels launched before the trace");
    assert!(a.phases.passes[1..].iter().all(|p| !p.incomplete));
    assert_eq!(summarize(&a).incomplete_passes, 1);
}

#[test]
fn an_argmax_over_token_ids_is_pooling_not_sampling() {
    // CLIP's text encoder (in Flux's pipeline) pools the end-of-text token with argmax over the
    // integer ids ([1, 77], `Input type` int); the H100 Llama run samples 33 tokens with argmax
    // over bf16 logits ([4, 1, 32000]), once per forward (its truth file's forward_passes).
    use traceprism::analysis::steps::{generation::name_evidence, rules::PhaseRules};
    let rules = PhaseRules::builtin();
    let flux = common::trace(FLUX);
    let argmax_ops = (0..flux.ops.len()).filter(|&i| flux.name(flux.ops.name[i]) == "aten::argmax").count();
    assert!(argmax_ops >= 1, "Flux's CLIP pooling runs argmax");
    assert!(name_evidence(&flux, rules).sampling_ts.is_empty(), "no token sampled in a diffusion pipeline");
    let llama = common::trace("llama_dense_eager.pt.trace.json.gz");
    assert_eq!(name_evidence(&llama, rules).sampling_ts.len(), 33);
}

#[test]
fn a_block_with_two_attentions_and_one_mlp_is_one_layer() {
    // TimeSformer-base: 12 blocks (its published config, num_hidden_layers = 12), each with a
    // time attention, a space attention and one MLP. The trace's own count: 24 attention softmaxes
    // ([8, 12, 3137, 3137] and [3136, 12, 8, 8]), 12 GELUs.
    let name = "hf_timesformer_forward_h100.json.gz";
    let a = common::analysis(name);
    let t = &a.trace;
    let count = |pred: &dyn Fn(&str) -> bool| t.kernel_rows().filter(|&i| pred(t.name(t.gpu.name[i]))).count();
    assert_eq!(count(&|n| n.contains("SoftMax") || n.contains("softmax")), 24);
    assert_eq!(count(&|n| n.contains("GeluCUDAKernelImpl")), 12);
    let s = summarize(&a);
    assert_eq!(s.layers_per_pass, vec![12], "{:?}", s.layer_kinds);
}

#[test]
fn a_micro_benchmark_with_no_sign_of_generation_is_not_an_llm() {
    // A JAX attention micro-benchmark (TraceLens' jax08_attention): 75 module runs of attention
    // kernels, nothing sampled, no embedding, no KV cache, no LM head, no engine. GEMM tiles and
    // run lengths alone once made it "llm_inference, 20 prefill, 22 decode".
    let a = common::analysis("jax_attention_bench_mi300x.xplane.pb");
    let s = summarize(&a);
    assert_ne!(s.workload, "llm_inference", "{:?}", s.workload_evidence);
    assert!(s.workload_evidence.iter().any(|e| e.contains("no sign of token generation")), "{:?}", s.workload_evidence);
    assert!(a.phases.passes.len() > 1, "the module runs stay passes");
    for p in &a.phases.passes {
        assert!(![Phase::Prefill, Phase::Decode, Phase::Mixed].contains(&p.phase), "pass {} is {:?}", p.index, p.phase);
    }
    assert!(
        (0..a.trace.gpu.len()).all(|i| !matches!(a.phases.phase_of_row[i], Some(Phase::Prefill | Phase::Decode | Phase::Mixed)))
    );
}
