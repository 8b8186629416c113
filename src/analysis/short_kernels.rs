//! Short kernels: durations below a threshold, where launch overhead dominates.

use super::Analysis;
use crate::model::GpuKind;

/// Kernel rows (indices into `trace.gpu`) shorter than `options.short_kernel_us`.
pub fn short_kernel_rows(a: &Analysis) -> Vec<usize> {
    let limit = (a.options.short_kernel_us * 1000.0) as i64;
    let g = &a.trace.gpu;
    (0..g.len()).filter(|&i| g.kind[i] == GpuKind::Kernel && g.dur[i] < limit).collect()
}

/// One bin of the short-kernel histogram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShortBin {
    /// Where the bin starts (ns).
    pub from_ns: i64,
    /// Where it ends (ns).
    pub to_ns: i64,
    /// Kernels in it.
    pub count: u64,
    /// Their summed duration (ns).
    pub total_ns: i64,
}

/// Histogram of short-kernel durations, `options.short_kernel_bins` bins below the threshold.
pub fn histogram(a: &Analysis) -> Vec<ShortBin> {
    let limit = (a.options.short_kernel_us * 1000.0) as i64;
    let bins = a.options.short_kernel_bins.max(1) as i64;
    let width = (limit / bins).max(1);
    let mut out: Vec<ShortBin> = (0..bins)
        .map(|b| ShortBin {
            from_ns: b * width,
            to_ns: if b == bins - 1 { limit } else { (b + 1) * width },
            count: 0,
            total_ns: 0,
        })
        .collect();
    for i in short_kernel_rows(a) {
        let d = a.trace.gpu.dur[i];
        let b = ((d / width) as usize).min(out.len() - 1);
        out[b].count += 1;
        out[b].total_ns += d;
    }
    out
}
