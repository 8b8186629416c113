//! Runtime launches and the GPU rows they ran: which calls launch kernels, and how many rows each
//! launch has in the trace (a graph launch's replayed kernels hang off it). Shared by the phases
//! (passes a cut took kernels from, whole-forward graph replays) and the health report (kernels
//! dropped by the profiler).

use crate::analysis::per_name::PerName;
use crate::model::{Trace, NONE};

/// Per runtime call: whether it launches kernels — a graph launch, or a call named like one
/// (`cudaLaunchKernel`, `cuLaunchKernel`, `hipExtModuleLaunchKernel`, `cudaLaunchCooperativeKernel`),
/// decided once per distinct name (a trace has millions of launches and a handful of names).
pub fn kernel_launches(trace: &Trace) -> Vec<bool> {
    let l = &trace.launches;
    let mut named: PerName<bool> = PerName::new(trace.names.len());
    (0..l.len())
        .map(|i| {
            l.is_graph[i]
                || *named.get_or_insert_with(l.name[i], || {
                    let name = trace.name(l.name[i]);
                    name.contains("LaunchKernel") || name.contains("LaunchCooperativeKernel")
                })
        })
        .collect()
}

/// Per runtime call: how many of `rows` (GPU rows) it launched.
pub fn rows_per_launch(trace: &Trace, rows: impl Iterator<Item = usize>) -> Vec<u32> {
    let mut n = vec![0u32; trace.launches.len()];
    for r in rows {
        let l = trace.gpu.launch[r];
        if l != NONE {
            n[l as usize] += 1;
        }
    }
    n
}
