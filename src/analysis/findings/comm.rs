//! `exposed_communication`: collective kernels (category family `Communication`) running with no
//! compute kernel beside them on the device. Saving: that exposed time, an upper bound (what full
//! overlap would give; a tensor-parallel all-reduce whose result the next layer needs cannot be
//! hidden, only made shorter).

use super::{Engine, Finding, Group, Kind};
use crate::analysis::budget::Part;
use crate::analysis::phases::Pass;
use crate::analysis::timeline::merge as union;
use crate::analysis::Analysis;
use crate::model::GpuKind;

/// A pass's collective time: the union of its communication kernels (ns).
pub fn collective_ns(a: &Analysis, p: &Pass) -> i64 {
    let g = &a.trace.gpu;
    let comm = p
        .rows
        .iter()
        .map(|&r| r as usize)
        .filter(|&r| g.kind[r] == GpuKind::Kernel && a.categories.is_communication(r))
        .map(|r| (g.ts[r], g.end(r)))
        .collect();
    union(comm).iter().map(|(s, e)| e - s).sum()
}

/// The exposed-communication finding of `g`, if the exposed time is worth raising
/// ([`Group::worth`]): the step budget's **exposed_communication** rows.
pub fn exposed_communication(a: &Analysis, g: &Group) -> Option<Finding> {
    let (per, ms) = (g.per(), g.median_step());
    let saving_us = g.median_of(|s| s.part_ns(Part::ExposedCommunication));
    let wall_us = g.wall_us();
    if !g.worth(saving_us, wall_us) {
        return None;
    }
    let comm = if g.passes.is_empty() {
        String::new()
    } else {
        format!(
            "collectives run {:.1} µs of {ms}'s {wall_us:.1} µs; ",
            super::median_us(g.passes.iter().map(|p| collective_ns(a, p)))
        )
    };
    let inference = g.phase != crate::analysis::phases::Phase::NotInference;
    let fix = match (g.engine, inference) {
        (Engine::Vllm, _) => "shorten the all-reduces that cannot overlap: keep the custom all-reduce on (no --disable-custom-all-reduce), fuse all-reduce with RMSNorm (vLLM --compilation-config pass_config enable_fi_allreduce_fusion), or fewer tensor-parallel ranks (--tensor-parallel-size) with data parallelism across the rest",
        (Engine::Sglang, _) => "shorten the all-reduces that cannot overlap: keep SGLang's custom all-reduce on (no --disable-custom-all-reduce), try --enable-two-batch-overlap for expert-parallel MoE, or fewer --tp ranks with --dp across the rest",
        (Engine::Jax, _) => "let XLA overlap the collectives: shard with jax.jit and shardings (not pmap), and XLA's latency-hiding scheduler (--xla_gpu_enable_latency_hiding_scheduler=true)",
        (Engine::Torch, false) => "overlap communication with compute: FSDP forward/backward prefetch (FSDP2 reshard_after_forward, forward_prefetch / backward_prefetch), DDP gradient buckets (bucket_cap_mb) so all-reduces start during backward; NCCL_NCHANNELS_PER_NET_PEER / NCCL_MIN_NCHANNELS for bandwidth",
        (Engine::Torch, true) => "shorten the collectives on the critical path: fewer tensor-parallel ranks, a fused all-reduce + norm, or overlap with the next micro-batch",
    };
    let i = g.median_pass(|i| g.steps[i].part_ns(Part::ExposedCommunication));
    let (from_ns, to_ns) = g.window(i);
    Some(Finding {
        evidence: format!(
            "{comm}{saving_us:.1} µs of collective time {per} with no compute kernel beside it, of {ms}'s {wall_us:.1} µs"
        ),
        saving_us,
        saving_pct: 100.0 * saving_us / wall_us,
        confidence: format!("low: an upper bound (full overlap); {}", g.confidence()),
        fix: fix.to_string(),
        check: format!("less than {:.1} µs of collective time alone {per}", saving_us / 2.0),
        from_ns,
        to_ns,
        ..g.finding(Kind::ExposedCommunication)
    })
}
