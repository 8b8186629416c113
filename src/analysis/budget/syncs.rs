//! The synchronising calls of a trace: what the step budget's **sync** rows start from
//! ([`crate::analysis::budget`]).

use crate::analysis::base::Base;
use crate::model::{GpuKind, NONE};

/// Runtime and driver calls that block the host until the GPU (or a stream) is done. A copy to
/// pageable host memory blocks too; those are found by their GPU copy's name ([`PAGEABLE`]).
pub const SYNC_CALLS: &[&str] = &[
    "cudaDeviceSynchronize",
    "cudaStreamSynchronize",
    "cudaEventSynchronize",
    "cudaMemcpy",
    "cudaMemcpy2D",
    "cuCtxSynchronize",
    "cuStreamSynchronize",
    "cuEventSynchronize",
    "cuMemcpyDtoH_v2",
    "hipDeviceSynchronize",
    "hipStreamSynchronize",
    "hipEventSynchronize",
    "hipMemcpy",
    "hipMemcpyWithStream",
    "hipMemcpyDtoH",
];

/// What Kineto and Nsight Systems name a copy into pageable host memory: an `…Async` call that
/// still blocks the host.
pub const PAGEABLE: &str = "Pageable";

/// Whether GPU row `r` is a copy to or from pageable host memory (its name says [`PAGEABLE`]).
pub fn is_pageable_copy(t: &crate::model::Trace, r: usize) -> bool {
    t.gpu.kind[r] == GpuKind::Memcpy && t.name(t.gpu.name[r]).contains(PAGEABLE)
}

/// The synchronising calls of a trace, by the time each returned.
pub struct Syncs {
    /// (end ns, launch row), sorted by end.
    by_end: Vec<(i64, u32)>,
}

impl Syncs {
    /// Finds every synchronising call of `a`'s trace.
    pub fn of(a: &Base) -> Syncs {
        let t = &a.trace;
        let l = &t.launches;
        let mut sync_name = vec![false; t.names.len()];
        for id in SYNC_CALLS.iter().filter_map(|n| t.names.get(n)) {
            sync_name[id as usize] = true;
        }
        let mut is_sync = vec![false; l.len()];
        for (i, s) in is_sync.iter_mut().enumerate() {
            *s = sync_name.get(l.name[i] as usize).copied().unwrap_or(false);
        }
        for r in 0..t.gpu.len() {
            let launch = t.gpu.launch[r];
            if launch != NONE && is_pageable_copy(t, r) {
                is_sync[launch as usize] = true;
            }
        }
        let mut by_end: Vec<(i64, u32)> =
            is_sync.iter().enumerate().filter(|(_, &s)| s).map(|(i, _)| (l.ts[i] + l.dur[i], i as u32)).collect();
        by_end.sort_unstable();
        Syncs { by_end }
    }

    /// The last synchronising call that returned inside `[from, to]`, if any.
    pub fn returned_in(&self, from: i64, to: i64) -> Option<u32> {
        let k = self.by_end.partition_point(|&(e, _)| e <= to);
        self.by_end[..k].last().filter(|&&(e, _)| e >= from).map(|&(_, i)| i)
    }
}
