//! Each check's fix, chosen by the input's format: a `torch.profiler` argument or an engine's
//! switch for a Kineto trace (and the other JSON and protobuf inputs), an `nsys profile` switch
//! or NVTX range for an Nsight Systems export, since `torch.profiler` arguments mean nothing to a
//! user of `nsys`. A check not listed for a format takes its `torch.profiler` fix; a check not
//! listed at all has none (or builds its own from what it found).

use super::check::{Check, CheckId, Status};
use crate::model::InputFormat;

/// The fixes of a `torch.profiler` trace, by check.
const TORCH: &[(CheckId, &str)] = &[
    (
        CheckId::CpuOps,
        "record the CPU: ProfilerActivity.CPU in activities (torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]))",
    ),
    (CheckId::RuntimeCalls, "record both sides: activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]"),
    (
        CheckId::Kernels,
        "record the GPU: ProfilerActivity.CUDA in activities (ROCm too); on another accelerator, its activity (ProfilerActivity.XPU, ProfilerActivity.MTIA, ...)",
    ),
    (
        CheckId::Shapes,
        "record_shapes=True in torch.profiler.profile(...); vLLM: --profiler-config '{\"profiler\": \"torch\", \"torch_profiler_record_shapes\": true}' (VLLM_TORCH_PROFILER_RECORD_SHAPES=1 before 0.13); SGLang: POST /start_profile with {\"record_shapes\": true}",
    ),
    (
        CheckId::Stacks,
        "with_stack=True in torch.profiler.profile(...); vLLM: --profiler-config '{\"profiler\": \"torch\", \"torch_profiler_with_stack\": true}' (on by default); SGLang: POST /start_profile with {\"with_stack\": true}",
    ),
    (CheckId::Modules, "with_modules=True in torch.profiler.profile(...) (needs with_stack=True)"),
    (
        CheckId::StepAnnotations,
        "call prof.step() once per iteration (with a torch.profiler.schedule); vLLM and SGLang write their own step markers",
    ),
    (
        CheckId::GraphLaunches,
        "give the capture trace: --capture FILE, a profile recorded while the engine captured its graphs (vLLM with TraceLens' patch: --profiler-config.capture_torch_profiler_dir DIR; SGLang with TraceLens' patch: --enable-profile-cuda-graph; or TraceLens' execution_details.json folder); in the page, Add capture traces…",
    ),
    (
        CheckId::DistributedInfo,
        "initialise torch.distributed before the profiler starts (Kineto writes distributedInfo then); or name the files rank0, rank1, ...",
    ),
    (
        CheckId::DeviceProperties,
        "pass --device H100-SXM (or MI300X, ... or custom peaks) to traceprism; a GPU activity in the profiler writes deviceProperties",
    ),
    (
        CheckId::TimeUnit,
        "write ts and dur in µs, as the Trace Event Format requires (displayTimeUnit changes only how a viewer shows them)",
    ),
    (CheckId::Truncation, "copy or download the trace again whole (its writer may have crashed: re-record)"),
    (CheckId::SecretMetadata, "redact those keys before sharing the trace itself (traceprism's outputs never copy them)"),
    (CheckId::RepairedJson, "upgrade PyTorch (kineto#1459, kineto#1508 fixed the escaping of frame names)"),
    (
        CheckId::HeaderValues,
        "none in the profiler: the file was written or edited with broken JSON there (--device names the GPU)",
    ),
    (
        CheckId::UnreadEvents,
        "none in the profiler: traceprism reads CUDA and ROCm kernels, memcpy and memset; tell us the device kind",
    ),
    (
        CheckId::DroppedKernels,
        "start keeping steps after a warm-up: torch.profiler.schedule(wait=1, warmup=1, active=N) with prof.step() each iteration, so the session's first kernels (which the profiler may drop: pytorch#192021) fall outside the steps kept",
    ),
    (CheckId::GpuWithoutCpu, "record both sides: activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]"),
    (CheckId::StreamOverlap, "none: a writer or clock error in the recording"),
    (CheckId::ZeroDurations, "none: the profiler lost their end time"),
    (CheckId::SkippedEvents, "none: the warnings name each kind"),
];

/// The fixes of an Nsight Systems export, by check. A fix that is empty says there is nothing to
/// switch on in Nsight Systems for it.
const NSYS: &[(CheckId, &str)] = &[
    (
        CheckId::CpuOps,
        "name each op with an NVTX range: wrap the profiled steps in torch.autograd.profiler.emit_nvtx(), or let Nsight Systems do it (nsys profile --pytorch=autograd-nvtx), with --trace=cuda,nvtx",
    ),
    (CheckId::RuntimeCalls, "nsys profile --trace=cuda (the default) records the CUDA runtime calls that launch each kernel"),
    (CheckId::Kernels, "nsys profile --trace=cuda (the default) records the GPU's kernels"),
    (
        CheckId::Shapes,
        "emit_nvtx(record_shapes=True) (nsys profile --pytorch=autograd-shapes-nvtx): each op's NVTX range then carries sizes = [...], which traceprism reads as its input shapes",
    ),
    (
        CheckId::Stacks,
        "traceprism does not read Nsight Systems' backtraces: for each kernel's Python call site, record a torch.profiler trace with with_stack=True",
    ),
    (
        CheckId::Modules,
        "traceprism does not read Nsight Systems' backtraces: for nn.Module names, record a torch.profiler trace with with_modules=True",
    ),
    (
        CheckId::StepAnnotations,
        "an NVTX range per iteration, named like torch.profiler's steps: with torch.cuda.nvtx.range(f\"ProfilerStep#{i}\"): ...",
    ),
    (CheckId::DeviceProperties, "pass --device H100-SXM (or MI300X, ... or custom peaks) to traceprism; exports that hold TARGET_INFO_GPU name their GPUs"),
    (
        CheckId::DistributedInfo,
        "`traceprism ranks FILE.sqlite` reads each process of the export that ran kernels as a rank (or give one export per rank)",
    ),
    (
        CheckId::DroppedKernels,
        "the capture stopped before these launches' kernels ran (or left them out): stop it at a step's end, e.g. nsys profile --capture-range=cudaProfilerApi with torch.cuda.profiler.start() and stop() around whole steps, or lengthen --duration",
    ),
    (
        CheckId::GraphLaunches,
        "--capture takes torch.profiler capture traces only; with Nsight Systems, nsys profile --cuda-graph-trace=node records each kernel a graph replays (the op that dispatched it is not recorded)",
    ),
    (CheckId::GpuWithoutCpu, "nsys profile --trace=cuda records the launches of the kernels (the default)"),
    (CheckId::WholeGraphReplays, "nsys profile --cuda-graph-trace=node records every kernel of a replayed graph"),
];

/// Fixes for a JAX / TensorFlow XSpace: `jax.profiler`'s options, or "nothing to record" where
/// the profile has it in a form traceprism does not read yet (never torch.profiler's switches).
const XSPACE: &[(CheckId, &str)] = &[
    (CheckId::RuntimeCalls, "none in jax.profiler for a TPU (its ops reach the host by run id, which traceprism does not read yet); on a GPU the XSpace's host launches are read"),
    (CheckId::GpuWithoutCpu, "none in jax.profiler for a TPU (its ops reach the host by run id, which traceprism does not read yet); on a GPU the XSpace's host launches are read"),
    (CheckId::Shapes, "none to record: an XSpace carries the HLO ops' shapes on their own, which traceprism does not read yet"),
    (CheckId::Stacks, "jax.profiler.ProfileOptions(python_tracer_level=1) records Python frames (traceprism does not read them from an XSpace yet)"),
    (CheckId::Modules, "none: JAX has no nn.Module; jax.named_scope names show in the HLO op names"),
    (CheckId::StepAnnotations, "wrap each step in jax.profiler.StepTraceAnnotation(\"step\", step_num=i)"),
    (CheckId::CpuOps, "jax.profiler.ProfileOptions(host_tracer_level=2) records more of the host"),
];

/// The fix of `check` for an input of `format` (empty when none is known).
pub fn fix(check: CheckId, format: InputFormat) -> &'static str {
    let of = |table: &[(CheckId, &'static str)]| table.iter().find(|(c, _)| *c == check).map(|&(_, f)| f);
    let own = match format {
        InputFormat::NsysSqlite => of(NSYS),
        InputFormat::Xspace => Some(of(XSPACE).unwrap_or("")),
        _ => None,
    };
    own.or_else(|| of(TORCH)).unwrap_or("")
}

/// A check of `status`: what it limits and its fix for an input of `format` are given only when
/// the status needs attention (missing, partial, warning), never for what is there.
pub fn checked(check: CheckId, status: Status, count: u64, found: String, limits: &str, format: InputFormat) -> Check {
    let act = status.needs_attention();
    Check {
        check,
        status,
        count,
        found,
        limits: if act { limits.to_string() } else { String::new() },
        fix: if act { fix(check, format).to_string() } else { String::new() },
    }
}

/// The fix of a missing `shapes`, `stacks` or `modules` check in a trace without CPU ops: those
/// hang off CPU ops, so the fix starts with recording the CPU (an export keeps its own fix).
pub fn with_cpu_first(check: CheckId, format: InputFormat) -> String {
    if format == InputFormat::NsysSqlite {
        return fix(check, format).to_string();
    }
    let arg = match check {
        CheckId::Shapes => "record_shapes=True",
        CheckId::Stacks => "with_stack=True",
        _ => "with_modules=True",
    };
    format!("record the CPU first (see cpu_ops), with {arg}: torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], {arg})")
}

#[cfg(test)]
mod tests {
    use super::{fix, CheckId, InputFormat};

    #[test]
    fn an_export_gets_the_fixes_of_nsys_and_falls_back_to_torch_ones() {
        assert!(fix(CheckId::Shapes, InputFormat::ChromeJson).starts_with("record_shapes=True"));
        assert!(fix(CheckId::Shapes, InputFormat::NsysSqlite).contains("autograd-shapes-nvtx"));
        assert_eq!(fix(CheckId::Truncation, InputFormat::NsysSqlite), fix(CheckId::Truncation, InputFormat::ChromeJson));
        assert_eq!(fix(CheckId::RuleCoverage, InputFormat::ChromeJson), "");
    }
}
