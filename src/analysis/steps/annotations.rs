//! Framework step annotations (vLLM `execute_…context_…generation_…`, SGLang `step[EXTEND|DECODE|MIXED …]`).
//!
//! Each top-level matching `user_annotation` range is one engine step (or, for a format marked
//! `module_runs`, one run of a compiled module: a pass, never an engine's statement of its phase); nested matches (SGLang writes
//! both formats, one inside the other) are merged into the outer one.

use super::rules::PhaseRules;
use super::Phase;
use crate::model::{OpKind, Trace};

/// What one annotation name says about its step.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepInfo {
    /// Phase stated by the annotation (`None` for idle steps).
    pub phase: Option<Phase>,
    /// Tokens processed in the step, when stated.
    pub tokens: Option<u64>,
    /// Requests in the step (context + generation, or `bs=`), when stated.
    pub batch: Option<u64>,
    /// Prefill (context) tokens and decode (generation) tokens, when the name states both
    /// (vLLM's `context_9(sq8155…)_generation_37(sq37…)`).
    pub split: Option<(u64, u64)>,
    /// The annotation is a compiled module's run (JAX `XlaModule:`), not an engine's step.
    pub module_run: bool,
}

/// One step window on the CPU timeline.
#[derive(Debug, Clone)]
pub struct StepAnnotation {
    /// Start and end on the CPU clock (ns, trace-relative).
    pub start_ns: i64,
    /// End of the annotation (ns, trace clock).
    pub end_ns: i64,
    /// The annotation name (the outermost one).
    pub name: String,
    /// What it says of its step.
    pub info: StepInfo,
}

fn num(c: &regex::Captures<'_>, group: &str) -> Option<u64> {
    c.name(group).and_then(|m| m.as_str().parse().ok())
}

/// Leading integer of a detail text like `888_788544` or `sq15360sk…`.
fn detail_tokens(detail: &str) -> Option<u64> {
    let digits: String =
        detail.trim_start_matches(|ch: char| ch.is_ascii_alphabetic()).chars().take_while(|ch| ch.is_ascii_digit()).collect();
    digits.parse().ok()
}

/// Parses one annotation name against the rule formats; `None` if it is not a step annotation.
pub fn parse_step_name(rules: &PhaseRules, name: &str) -> Option<StepInfo> {
    for format in &rules.annotations {
        let Some(c) = format.regex.captures(name) else { continue };
        let mut info =
            StepInfo { tokens: num(&c, "tokens"), batch: num(&c, "bs"), module_run: format.module_runs, ..Default::default() };
        if let Some(kind) = c.name("kind") {
            info.phase = rules.annotation_kinds.get(kind.as_str()).copied();
        } else if let (Some(ctx), Some(gen)) = (num(&c, "ctx"), num(&c, "gen")) {
            info.phase = match (ctx > 0, gen > 0) {
                (true, true) => Some(Phase::Mixed),
                (true, false) => Some(Phase::Prefill),
                (false, true) => Some(Phase::Decode),
                (false, false) => None,
            };
            info.batch = info.batch.or(Some(ctx + gen));
            // `context_1(888_788544)`, `context_9(sq8155sk…)`: the first number in a detail is its
            // query tokens; a generation without one has a token per request.
            let ctx_tokens = c.name("ctx_detail").and_then(|d| detail_tokens(d.as_str()));
            let gen_tokens = c.name("gen_detail").and_then(|d| detail_tokens(d.as_str())).unwrap_or(gen);
            if info.tokens.is_none() {
                info.tokens = Some(ctx_tokens.unwrap_or(0) + gen);
            }
            if let Some(ctx_tokens) = ctx_tokens {
                info.split = Some((if ctx > 0 { ctx_tokens } else { 0 }, if gen > 0 { gen_tokens } else { 0 }));
            }
        }
        return Some(info);
    }
    None
}

/// All step windows of the trace, outermost first in time order.
pub fn find_steps(trace: &Trace, rules: &PhaseRules) -> Vec<StepAnnotation> {
    let ops = &trace.ops;
    let mut found: Vec<StepAnnotation> = Vec::new();
    let mut cache: crate::analysis::per_name::PerName<Option<StepInfo>> =
        crate::analysis::per_name::PerName::new(trace.names.len());
    for i in 0..ops.len() {
        if ops.kind[i] != OpKind::UserAnnotation {
            continue;
        }
        let id = ops.name[i];
        let info = cache.get_or_insert_with(id, || parse_step_name(rules, trace.name(id))).clone();
        if let Some(info) = info {
            found.push(StepAnnotation { start_ns: ops.ts[i], end_ns: ops.end(i), name: trace.name(id).to_string(), info });
        }
    }
    found.sort_by(|a, b| a.start_ns.cmp(&b.start_ns).then(b.end_ns.cmp(&a.end_ns)));
    let mut merged: Vec<StepAnnotation> = Vec::new();
    for s in found {
        match merged.last_mut() {
            Some(outer) if s.start_ns < outer.end_ns => {
                // Nested (or overlapping) step marker: the same step, maybe with more detail.
                outer.end_ns = outer.end_ns.max(s.end_ns);
                outer.info.phase = outer.info.phase.or(s.info.phase);
                outer.info.tokens = outer.info.tokens.or(s.info.tokens);
                outer.info.batch = outer.info.batch.or(s.info.batch);
                outer.info.split = outer.info.split.or(s.info.split);
            }
            _ => merged.push(s),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xla_module_runs_are_steps_with_the_phase_their_name_says() {
        let r = PhaseRules::builtin();
        assert_eq!(parse_step_name(r, "XlaModule:jit_decode_step").unwrap().phase, Some(Phase::Decode));
        assert_eq!(parse_step_name(r, "XlaModule:jit__prefill_fn").unwrap().phase, Some(Phase::Prefill));
        let conv = parse_step_name(r, "XlaModule:jit_forward_3d_conv").expect("a step");
        assert_eq!(conv.phase, None, "a module name that says no phase cuts passes only");
        // Module runs, never an engine's steps.
        assert!(parse_step_name(r, "XlaModule:jit_decode_step").unwrap().module_run);
        assert!(!parse_step_name(r, "step[DECODE bs=16]").unwrap().module_run);
    }

    #[test]
    fn parses_real_annotation_names() {
        let r = PhaseRules::builtin();
        let v = parse_step_name(r, "execute_context_1(888_788544)_generation_0(0)").unwrap();
        assert_eq!(v.phase, Some(Phase::Prefill));
        assert_eq!(v.tokens, Some(888));
        let v = parse_step_name(r, "execute_16_context_0(sq0sk0sqsq0sqsk0)_generation_16(sq16sk8193sqsq16sqsk8193)").unwrap();
        assert_eq!((v.phase, v.tokens, v.batch), (Some(Phase::Decode), Some(16), Some(16)));
        let v =
            parse_step_name(r, "execute_15360_context_15(sq15360sk15360sqsq15728640sqsk15728640)_generation_0(sq0sk0sqsq0sqsk0)")
                .unwrap();
        assert_eq!((v.phase, v.tokens), (Some(Phase::Prefill), Some(15360)));
        let v = parse_step_name(r, "step[EXTEND bs=15 toks=15360]").unwrap();
        assert_eq!((v.phase, v.batch, v.tokens), (Some(Phase::Prefill), Some(15), Some(15360)));
        assert_eq!(parse_step_name(r, "step[DECODE bs=16]").unwrap().phase, Some(Phase::Decode));
        assert_eq!(parse_step_name(r, "step[MIXED bs=3 toks=700]").unwrap().phase, Some(Phase::Mixed));
        assert_eq!(parse_step_name(r, "execute_4_context_1(sq3sk3)_generation_3(x)").unwrap().phase, Some(Phase::Mixed));
        let v = parse_step_name(
            r,
            "execute_8192_context_9(sq8155sk8430sqsq7475785sqsk7671310)_generation_37(sq37sk34489sqsq37sqsk34489)",
        )
        .unwrap();
        assert_eq!((v.phase, v.tokens, v.batch, v.split), (Some(Phase::Mixed), Some(8192), Some(46), Some((8155, 37))));
        let v = parse_step_name(r, "execute_context_1(888_788544)_generation_0(0)").unwrap();
        assert_eq!(v.split, Some((888, 0)));
        assert!(parse_step_name(r, "nccl:_all_gather_base").is_none());
        assert!(parse_step_name(r, "ProfilerStep#1").is_none());
    }
}
