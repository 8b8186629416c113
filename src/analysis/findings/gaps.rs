//! Why the GPU idled inside one pass: each gap between its kernels is split by cause, so that two
//! findings never claim the same idle time.
//!
//! A gap ends when the next kernel starts. Of the gap:
//! - the part before the host had issued that kernel (its launch call returned) is the host's.
//!   It is **sync** when the host had just come back from a synchronising call (it waited for the
//!   GPU, then had to refill it), else **launch** (the host was busy issuing, one kernel at a time);
//! - the rest is **queued**: the kernel was issued but did not start (it waited on another stream,
//!   an event, or work the trace does not hold). Neither a graph nor fewer syncs remove it.

use crate::analysis::phases::Pass;
use crate::analysis::Analysis;
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

/// The synchronising calls of a trace, by the time each returned.
pub struct Syncs {
    /// (end ns, launch row), sorted by end.
    by_end: Vec<(i64, u32)>,
}

impl Syncs {
    /// Finds every synchronising call of `a`'s trace.
    pub fn of(a: &Analysis) -> Syncs {
        let t = &a.trace;
        let l = &t.launches;
        let sync_names: Vec<u32> = SYNC_CALLS.iter().filter_map(|n| t.names.get(n)).collect();
        let mut is_sync = vec![false; l.len()];
        for (i, s) in is_sync.iter_mut().enumerate() {
            *s = sync_names.contains(&l.name[i]);
        }
        for r in 0..t.gpu.len() {
            let launch = t.gpu.launch[r];
            if t.gpu.kind[r] == GpuKind::Memcpy && launch != NONE && t.name(t.gpu.name[r]).contains(PAGEABLE) {
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

/// One pass's idle, by cause, and what it ran.
#[derive(Debug, Clone, Default)]
pub struct PassGaps {
    /// First kernel's start to last kernel's end.
    pub wall_ns: i64,
    /// Idle while the host was issuing the next kernel.
    pub launch_ns: i64,
    /// Idle while the host came back from a synchronising call and issued the next kernel.
    pub sync_ns: i64,
    /// Idle while the next kernel was already issued.
    pub queued_ns: i64,
    /// The part of `queued_ns` in waits of at least the micro-idle threshold: stalls.
    pub stalled_ns: i64,
    /// The synchronising calls that caused sync idle (launch rows), in time order.
    pub syncs: Vec<u32>,
    /// The longest queued idle: its start and end.
    pub longest_queued: (i64, i64),
    /// Kernels of the pass.
    pub kernels: usize,
    /// Kernels linked to the launch that ran them.
    pub linked: usize,
    /// Kernels the host launched one by one (not replayed from a graph).
    pub eager: usize,
}

/// Splits the idle inside pass `p` (its kernels only; copies and fills come and go between steps).
///
/// A kernel starts a little after its launch call returns even on an idle GPU (about 2 µs on the
/// H100 traces): that latency is the launch's too, and a replay removes it. Each pass measures it
/// as the median of (start − launch returned) over its gaps whose kernel started after its launch
/// returned; only what a gap's kernel waited beyond that is queued.
pub fn pass_gaps(a: &Analysis, syncs: &Syncs, p: &Pass) -> PassGaps {
    let g = &a.trace.gpu;
    let l = &a.trace.launches;
    let mut w = PassGaps::default();
    let mut end: Option<i64> = None;
    let mut first = i64::MAX;
    // Per gap: (idle start, kernel start, launch returned or the idle start when unknown).
    let mut gaps: Vec<(i64, i64, i64)> = Vec::new();
    for &r in &p.rows {
        let r = r as usize;
        if g.kind[r] != GpuKind::Kernel {
            continue;
        }
        w.kernels += 1;
        let launch = g.launch[r];
        w.linked += usize::from(launch != NONE);
        w.eager += usize::from(launch != NONE && !l.is_graph[launch as usize]);
        let s = g.ts[r];
        first = first.min(s);
        if let Some(prev) = end.filter(|&prev| s > prev) {
            // Without its launch, the gap's cause is unknown: it counts as queued.
            let issued = if launch == NONE { prev } else { l.ts[launch as usize] + l.dur[launch as usize] };
            gaps.push((prev, s, issued));
        }
        end = Some(end.map_or(g.end(r), |prev| prev.max(g.end(r))));
    }
    if let Some(e) = end {
        w.wall_ns = e - first;
    }
    let mut latencies: Vec<i64> =
        gaps.iter().filter(|&&(prev, s, issued)| issued >= prev && s > issued).map(|&(_, s, issued)| s - issued).collect();
    latencies.sort_unstable();
    let latency = latencies.get(latencies.len() / 2).copied().unwrap_or(0);
    let micro_idle_ns = (a.options.micro_idle_us * 1e3) as i64;
    for (prev, s, issued) in gaps {
        let gap = s - prev;
        let host = if issued > prev { (issued + latency - prev).min(gap) } else { 0 };
        match syncs.returned_in(prev, issued).filter(|_| host > 0) {
            Some(call) => {
                w.sync_ns += host;
                w.syncs.push(call);
            }
            None => w.launch_ns += host,
        }
        let queued = gap - host;
        w.queued_ns += queued;
        if queued >= micro_idle_ns {
            w.stalled_ns += queued;
        }
        if queued > w.longest_queued.1 - w.longest_queued.0 {
            w.longest_queued = (s - queued, s);
        }
    }
    w
}
