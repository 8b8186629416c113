//! What the checks count, in one pass over each of the model's tables.

use crate::model::{GpuKind, OpKind, Trace, WarningKind, NONE};

/// What the checks count, in one pass over each table.
#[derive(Default)]
pub struct Counted {
    pub cpu_ops: u64,
    pub python: u64,
    pub modules: u64,
    pub profiler_steps: u64,
    pub launches: u64,
    pub kernel_launches: u64,
    pub graph_launches: u64,
    pub kernels: u64,
    pub memcpy: u64,
    pub memset: u64,
    pub ops_with_shapes: u64,
    /// Complete events of categories no analysis reads.
    pub unread_device: u64,
    /// Kernel launches whose kernel is not in the trace, with their start times (ns).
    pub launches_without_kernel: Vec<(usize, i64)>,
    /// Kernels (previous, next) of one stream where the next starts over 1 µs before the
    /// previous ends.
    pub overlaps: Vec<(usize, usize)>,
    /// GPU rows with no launch (a graph replay's rows have the graph launch).
    pub gpu_without_cpu: Vec<usize>,
}

impl Counted {
    /// Counts what the checks need of `t`.
    pub fn of(t: &Trace) -> Counted {
        let mut c = Counted { unread_device: unread_device_events(t), ..Default::default() };
        for i in 0..t.ops.len() {
            match t.ops.kind[i] {
                OpKind::CpuOp => {
                    c.cpu_ops += 1;
                    if t.ops.input_dims[i] != crate::model::NO_NAME {
                        c.ops_with_shapes += 1;
                    }
                    // Kineto of 2021 wrote the profiler's step ranges as ops (`Operator`).
                    if t.name(t.ops.name[i]).starts_with("ProfilerStep#") {
                        c.profiler_steps += 1;
                    }
                }
                OpKind::UserAnnotation => {
                    if t.name(t.ops.name[i]).starts_with("ProfilerStep#") {
                        c.profiler_steps += 1;
                    }
                }
                OpKind::PythonFunction => {
                    c.python += 1;
                    if t.name(t.ops.name[i]).starts_with("nn.Module: ") {
                        c.modules += 1;
                    }
                }
            }
        }
        for k in &t.gpu.kind {
            match k {
                GpuKind::Kernel => c.kernels += 1,
                GpuKind::Memcpy => c.memcpy += 1,
                GpuKind::Memset => c.memset += 1,
            }
        }
        let l = &t.launches;
        c.launches = l.len() as u64;
        c.graph_launches = l.is_graph.iter().filter(|&&g| g).count() as u64;
        let gpu_rows = crate::analysis::launches::rows_per_launch(t, 0..t.gpu.len());
        for (i, launches_kernels) in crate::analysis::launches::kernel_launches(t).into_iter().enumerate() {
            if launches_kernels {
                c.kernel_launches += 1;
                if gpu_rows[i] == 0 {
                    c.launches_without_kernel.push((i, l.ts[i]));
                }
            }
        }
        c.overlaps = stream_overlaps(t);
        // A kernel replayed from a graph has the graph launch as its launch.
        c.gpu_without_cpu = (0..t.gpu.len()).filter(|&i| t.gpu.launch[i] == NONE).collect();
        c
    }
}

/// Pairs of kernels of one stream (previous, next) where the next starts over 1 µs before the
/// previous ends (writers round to µs; one stream's clock jitters by less).
fn stream_overlaps(t: &Trace) -> Vec<(usize, usize)> {
    let g = &t.gpu;
    // Each stream's kernels in time order (writers keep a stream's order: usually no sort at all).
    let mut streams: crate::model::FastMap<(i32, i32), Vec<u32>> = Default::default();
    for i in t.kernel_rows() {
        streams.entry((g.device[i], g.stream[i])).or_default().push(i as u32);
    }
    let mut streams: Vec<((i32, i32), Vec<u32>)> = streams.into_iter().collect();
    streams.sort_by_key(|(k, _)| *k);
    let mut out = Vec::new();
    for (_, rows) in &mut streams {
        crate::analysis::rows::sort_by_time(&g.ts, rows);
        out.extend(rows.windows(2).map(|w| (w[0] as usize, w[1] as usize)).filter(|&(p, i)| g.ts[i] + 1_000 < g.end(p)));
    }
    out
}

/// True when `device` is an NVIDIA GPU of compute capability 9.0 or later (Hopper, Blackwell),
/// where programmatic dependent launch starts a kernel before the previous one on its stream
/// has ended, by design (deviceProperties tells; the first device stands for an unnumbered one).
pub fn pdl_device(t: &Trace, device: i32) -> bool {
    let devices = &t.meta.devices;
    let d = devices.iter().find(|d| d.id == device as i64).or(devices.first());
    t.meta.vendor == crate::model::Vendor::Nvidia && d.is_some_and(|d| d.compute_major >= 9)
}

/// Why kernels of `device` may overlap on one stream by design, when they may: programmatic
/// dependent launch on an sm90+ NVIDIA GPU, or a TPU's `XLA Ops` line, where an asynchronous op
/// (`copy-start`/`copy-done`, a collective's `-start`/`-done`) spans the ops run meanwhile.
pub fn overlap_by_design(t: &Trace, device: i32) -> Option<&'static str> {
    if pdl_device(t, device) {
        Some("programmatic dependent launch on sm90+ GPUs overlaps them by design")
    } else if t.meta.vendor == crate::model::Vendor::Google {
        Some("a TPU's asynchronous XLA ops (copy-start/copy-done, a collective's -start/-done) span the ops run meanwhile, by design")
    } else {
        None
    }
}

/// Complete events of categories no analysis reads (a device kind we do not model).
fn unread_device_events(t: &Trace) -> u64 {
    t.warnings.counts.iter().filter(|(k, _)| matches!(k, WarningKind::UnreadCategory(_))).map(|(_, n)| n).sum()
}
