//! The health report of an Nsight Systems export: the same checks, but the fixes of its world
//! (`nsys profile` switches, NVTX ranges), since `torch.profiler` arguments mean nothing to a user
//! of `nsys`; and one check of its own, whole-graph replays, whose kernels the export lacks.

use super::health::{Check, Status};
use crate::model::Trace;

/// The fix each check takes for an export, by check name (a check not listed keeps its own).
/// A fix that is empty says there is nothing to switch on in Nsight Systems for it.
const FIXES: &[(&str, &str)] = &[
    (
        "cpu_ops",
        "name each op with an NVTX range: wrap the profiled steps in torch.autograd.profiler.emit_nvtx(), or let Nsight Systems do it (nsys profile --pytorch=autograd-nvtx), with --trace=cuda,nvtx",
    ),
    ("runtime_calls", "nsys profile --trace=cuda (the default) records the CUDA runtime calls that launch each kernel"),
    ("kernels", "nsys profile --trace=cuda (the default) records the GPU's kernels"),
    (
        "shapes",
        "emit_nvtx(record_shapes=True) (nsys profile --pytorch=autograd-shapes-nvtx): each op's NVTX range then carries sizes = [...], which traceprism reads as its input shapes",
    ),
    (
        "stacks",
        "traceprism does not read Nsight Systems' backtraces: for each kernel's Python call site, record a torch.profiler trace with with_stack=True",
    ),
    (
        "modules",
        "traceprism does not read Nsight Systems' backtraces: for nn.Module names, record a torch.profiler trace with with_modules=True",
    ),
    (
        "step_annotations",
        "an NVTX range per iteration, named like torch.profiler's steps: with torch.cuda.nvtx.range(f\"ProfilerStep#{i}\"): ...",
    ),
    ("device_properties", "pass --device H100-SXM (or MI300X, ... or custom peaks) to traceprism; exports that hold TARGET_INFO_GPU name their GPUs"),
    (
        "distributed_info",
        "`traceprism ranks FILE.sqlite` reads each process of the export that ran kernels as a rank (or give one export per rank)",
    ),
    (
        "dropped_kernels",
        "the capture stopped before these launches' kernels ran (or left them out): stop it at a step's end, e.g. nsys profile --capture-range=cudaProfilerApi with torch.cuda.profiler.start() and stop() around whole steps, or lengthen --duration",
    ),
    (
        "graph_launches",
        "--capture takes torch.profiler capture traces only; with Nsight Systems, nsys profile --cuda-graph-trace=node records each kernel a graph replays (the op that dispatched it is not recorded)",
    ),
    ("gpu_without_cpu", "nsys profile --trace=cuda records the launches of the kernels (the default)"),
];

/// Gives `checks` (an export's) the fixes of Nsight Systems and adds the whole-graph check.
pub fn adapt(checks: &mut Vec<Check>, t: &Trace) {
    for k in checks.iter_mut().filter(|k| !k.fix.is_empty()) {
        if let Some((_, fix)) = FIXES.iter().find(|(check, _)| *check == k.check) {
            k.fix = fix.to_string();
        }
    }
    checks.push(whole_graphs(t));
}

/// Whole-graph replays (`--cuda-graph-trace=graph`, Nsight Systems' default): each is one GPU
/// event standing for kernels the export does not hold.
fn whole_graphs(t: &Trace) -> Check {
    use crate::ingest::nsys::{WHOLE_GRAPH_REPLAYS, WHOLE_GRAPH_REPLAY_NS};
    let number = |key: &str| t.meta.setting(key).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    let (n, ns) = (number(WHOLE_GRAPH_REPLAYS), number(WHOLE_GRAPH_REPLAY_NS));
    Check {
        check: "whole_graph_replays",
        status: if n > 0 { Status::Warning } else { Status::Ok },
        count: n,
        found: if n > 0 {
            format!(
                "{n} CUDA graph replays recorded whole ({:.3} ms): the kernels they ran are not in the export",
                ns as f64 / 1e6
            )
        } else {
            "no graph replayed whole: every kernel is in the export".into()
        },
        limits: if n > 0 {
            "each replay is one opaque GPU event: its kernels are in no category, layer or kernel table, and passes inside it are not seen".into()
        } else {
            String::new()
        },
        fix: if n > 0 {
            "nsys profile --cuda-graph-trace=node records every kernel of a replayed graph".into()
        } else {
            String::new()
        },
    }
}
