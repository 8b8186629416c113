//! Short kernels: durations below a threshold, where launch overhead dominates.

use super::Analysis;
use crate::model::GpuKind;

/// Kernel rows (indices into `trace.gpu`) shorter than `options.short_kernel_us`.
pub fn short_kernel_rows(a: &Analysis) -> Vec<usize> {
    let limit = (a.options.short_kernel_us * 1000.0) as i64;
    let g = &a.trace.gpu;
    (0..g.len()).filter(|&i| g.kind[i] == GpuKind::Kernel && g.dur[i] < limit).collect()
}

/// Histogram of short-kernel durations: (bin start ns, bin end ns, count, total ns).
pub fn histogram(a: &Analysis) -> Vec<(i64, i64, u64, i64)> {
    let limit = (a.options.short_kernel_us * 1000.0) as i64;
    let bins = a.options.short_kernel_bins.max(1) as i64;
    let width = (limit / bins).max(1);
    let mut out: Vec<(i64, i64, u64, i64)> =
        (0..bins).map(|b| (b * width, if b == bins - 1 { limit } else { (b + 1) * width }, 0, 0)).collect();
    for i in short_kernel_rows(a) {
        let d = a.trace.gpu.dur[i];
        let b = ((d / width) as usize).min(out.len() - 1);
        out[b].2 += 1;
        out[b].3 += d;
    }
    out
}
