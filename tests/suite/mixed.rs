//! A mixed step (chunked prefills batched with decodes) and how it divides between the two.
//!
//! The trace: vLLM serving GPT-OSS on MI300X, one step with piecewise graphs (TraceLens'
//! `vllm_prefilldecode_piecewise`). vLLM names the step
//! `execute_8192_context_9(sq8155…)_generation_37(sq37…)`: 9 requests prefill 8155 tokens beside 37
//! decodes. The test reads those numbers from the raw JSON with its own pattern, then checks our
//! annotation split against them and our shapes-only estimate (which never looks at the
//! annotation) against the bounds they set.

use crate::common;

use serde_json::Value;
use traceprism::analysis::phases::mix::MixSource;
use traceprism::analysis::phases::Phase;
use traceprism::report::summary::summary as summarize;

const MIXED: &str = "vllm_gptoss_mixed_piecewise_mi300x.json.gz";

/// What the step annotation says, parsed here: (total tokens, prefill requests, prefill tokens,
/// decode requests, decode tokens).
fn annotated() -> (u64, u64, u64, u64, u64) {
    let v: Value = serde_json::from_slice(&common::plain_fixture(MIXED)).expect("json");
    let name = v["traceEvents"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["cat"] == "user_annotation")
        .filter_map(|e| e["name"].as_str())
        .find(|n| n.starts_with("execute_"))
        .expect("one step annotation")
        .to_string();
    let re = regex::Regex::new(r"^execute_(\d+)_context_(\d+)\(sq(\d+)sk\d+.*_generation_(\d+)\(sq(\d+)sk").unwrap();
    let c = re.captures(&name).expect("vLLM's step name format");
    let n = |k: usize| c[k].parse::<u64>().unwrap();
    (n(1), n(2), n(3), n(4), n(5))
}

#[test]
fn a_mixed_step_is_split_into_prefill_and_decode_by_its_annotation_and_by_its_shapes() {
    let (total, ctx_requests, ctx_tokens, gen_requests, gen_tokens) = annotated();
    assert_eq!(ctx_tokens + gen_tokens, total, "the annotation adds up");
    let a = common::analysis(MIXED);
    let passes = &a.phases.passes;
    assert_eq!(passes.len(), 1, "one engine step");
    let step = &passes[0];
    assert_eq!(step.phase, Phase::Mixed);

    let by_annotation = step.mix.iter().find(|m| m.source == MixSource::StepAnnotation).expect("annotation split");
    assert_eq!((by_annotation.prefill_tokens, by_annotation.decode_tokens), (ctx_tokens, gen_tokens));
    assert_eq!(step.mix[0].source, MixSource::StepAnnotation, "the stated counts come first");

    // Shapes alone: T from the packed attention inputs ([8192, 64, 64]; the GEMMs are inside
    // graph replays), R from the LM head's M (logits for every request in the step).
    let by_shapes = step.mix.iter().find(|m| m.source == MixSource::Shapes).expect("shapes estimate");
    assert_eq!(by_shapes.prefill_tokens + by_shapes.decode_tokens, total, "every token of the step, once");
    let requests = ctx_requests + gen_requests;
    assert!(
        (gen_tokens..requests).contains(&by_shapes.decode_tokens),
        "decodes between the true {gen_tokens} and the sampled rows less one ({})",
        requests - 1
    );
    let error = ctx_tokens.abs_diff(by_shapes.prefill_tokens);
    assert!(error < ctx_requests, "off by fewer tokens than there are prefill requests: {error}");
    let share_error = (by_shapes.prefill_token_share() - by_annotation.prefill_token_share()).abs() * 100.0;
    eprintln!(
        "mixed step: annotation {ctx_tokens} prefill + {gen_tokens} decode tokens; shapes estimate {} + {} \
         (prefill share off by {share_error:.2} points)",
        by_shapes.prefill_tokens, by_shapes.decode_tokens
    );
    assert!(share_error < 0.5, "prefill share within half a point: {share_error:.2}");

    // The time split covers the step's kernel time exactly, in the tokens' proportion (no kernel
    // here names its phase: vLLM's unified attention serves both).
    for m in &step.mix {
        assert_eq!(m.prefill_time_ns + m.decode_time_ns, step.kernel_time_ns);
        let time_share = m.prefill_time_ns as f64 / step.kernel_time_ns as f64;
        assert!((time_share - m.prefill_token_share()).abs() < 1e-6);
    }

    let s = summarize(&a);
    let mixed = s.mixed.expect("summary states the mixed split");
    assert_eq!((mixed.steps, mixed.estimated, mixed.prefill_tokens, mixed.decode_tokens), (1, 1, ctx_tokens, gen_tokens));
    assert_eq!(mixed.sources, ["step annotation"]);
}

#[test]
fn traces_without_mixed_steps_state_no_split() {
    for name in ["llama_dense_eager.pt.trace.json.gz", "vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz"] {
        let a = common::analysis(name);
        assert!(a.phases.passes.iter().all(|p| p.mix.is_empty()), "{name}");
        assert!(summarize(&a).mixed.is_none(), "{name}");
    }
}
