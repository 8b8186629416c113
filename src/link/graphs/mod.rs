//! Kernels replayed from a CUDA/HIP graph hang off one graph launch, with no CPU op of their
//! own. This gives each the op that dispatched it:
//!
//! 1. from capture traces (the profile of the engine capturing its graphs): each launch's
//!    replay is aligned, in order, to the captured graph with the same kernel sequence
//!    ([`align`]); the ops around the dispatches, with their shapes, Python frames and module,
//!    are copied under the launch (`copy`);
//! 2. failing that, from an eager stretch of the same trace that ran the same kernel sequence
//!    (`eager`), names only.
//!
//! What was done is counted in `Trace::graphs`; each row's source is its `op_from`.

pub mod align;
pub mod capture;
mod copy;
mod eager;

pub use capture::{execution_details, Capture, CaptureEntry};

use crate::model::graphs::{CaptureSource, GraphReport, OpFrom};
use crate::model::{FastMap, GpuKind, Trace, NONE};
use align::{Alignment, MEMCPY, MEMSET};
use copy::{Carry, Copies, LaunchCopy, Source};

/// The key a GPU row aligns by: its kernel's name id, or the kind of copy.
fn row_key(t: &Trace, i: usize) -> u32 {
    match t.gpu.kind[i] {
        GpuKind::Kernel => t.gpu.name[i],
        GpuKind::Memcpy => MEMCPY,
        GpuKind::Memset => MEMSET,
    }
}

/// One graph launch's replay: the launch and its rows by start time.
struct Replay {
    launch: u32,
    rows: Vec<u32>,
}

/// Graph launches in time order with the GPU rows each replayed (whose op, if any, is the one
/// around the graph launch: `Torch-Compiled Region`, a graph runner).
fn replays(t: &Trace) -> Vec<Replay> {
    let g = &t.gpu;
    let mut by_launch: FastMap<u32, Vec<u32>> = FastMap::default();
    for i in 0..g.len() {
        let l = g.launch[i];
        if l != NONE && t.launches.is_graph[l as usize] {
            by_launch.entry(l).or_default().push(i as u32);
        }
    }
    let mut out: Vec<Replay> = by_launch
        .into_iter()
        .map(|(launch, mut rows)| {
            rows.sort_by_key(|&i| (g.ts[i as usize], g.stream[i as usize], i));
            Replay { launch, rows }
        })
        .collect();
    out.sort_by_key(|r| (t.launches.ts[r.launch as usize], r.launch));
    out
}

/// The batch size a step annotation around a launch names: vLLM's `execute_<n>_…`, SGLang's
/// `… bs=<n>]`.
fn step_batch(t: &Trace, launch: u32) -> Option<u64> {
    let mut op = t.launches.cpu_op[launch as usize];
    if op == NONE {
        op = t.launches.python[launch as usize];
    }
    for _ in 0..512 {
        if op == NONE {
            return None;
        }
        let name = t.name(t.ops.name[op as usize]);
        if let Some(rest) = name.strip_prefix("execute_") {
            if let Ok(n) = rest.split('_').next().unwrap_or("").parse() {
                return Some(n);
            }
        }
        if let Some(at) = name.find("bs=") {
            let digits: String = name[at + 3..].chars().take_while(|c| c.is_ascii_digit()).collect();
            if let Ok(n) = digits.parse() {
                return Some(n);
            }
        }
        op = t.ops.parent[op as usize];
    }
    None
}

/// Every captured graph of every capture, keyed in the execution trace's names.
struct Graphs {
    /// `(capture, graph, keys)` in capture order.
    list: Vec<(usize, usize, Vec<u32>)>,
    /// Graphs with a given key sequence.
    exact: FastMap<Vec<u32>, Vec<usize>>,
}

impl Graphs {
    fn new(t: &mut Trace, captures: &[Capture]) -> Graphs {
        let mut list = Vec::new();
        let mut exact: FastMap<Vec<u32>, Vec<usize>> = FastMap::default();
        for (c, cap) in captures.iter().enumerate() {
            let mut names = FastMap::default();
            for g in 0..cap.graphs.len() {
                let keys = cap.keys(g, &mut t.names, &mut names);
                exact.entry(keys.clone()).or_default().push(list.len());
                list.push((c, g, keys));
            }
        }
        Graphs { list, exact }
    }

    /// The captured graph a replay runs, and the alignment: the same sequence (among several,
    /// the one captured for the step's batch, then the one after the last chosen), else the
    /// closest sequence whose mismatches are small.
    fn choose(&self, keys: &[u32], batch: Option<u64>, captures: &[Capture], after: usize) -> Option<(usize, Alignment)> {
        let prefer = |ids: &[usize]| -> Vec<usize> {
            // The smallest captured batch that holds the step's batch (as engines pad).
            let fits = |k: usize| captures[self.list[k].0].batch_size;
            let best = batch.and_then(|b| ids.iter().filter_map(|&k| fits(k).filter(|&s| s >= b)).min());
            match best {
                Some(s) => ids.iter().copied().filter(|&k| fits(k) == Some(s)).collect(),
                None => ids.to_vec(),
            }
        };
        if let Some(ids) = self.exact.get(keys) {
            let ids = prefer(ids);
            let k = ids.iter().copied().find(|&k| k >= after).unwrap_or(ids[0]);
            return Some((k, align::align(keys, &self.list[k].2)));
        }
        let slack = (keys.len() / 20).max(4);
        let near: Vec<usize> = (0..self.list.len()).filter(|&k| self.list[k].2.len().abs_diff(keys.len()) <= slack).collect();
        prefer(&near)
            .into_iter()
            .map(|k| (k, align::align(keys, &self.list[k].2)))
            .filter(|(k, a)| a.acceptable(keys.len(), self.list[*k].2.len()))
            .min_by_key(|(k, a)| (a.misses(), *k))
    }
}

/// The op that made graph launch `l` (its innermost op, else its Python frame).
fn launch_parent(t: &Trace, l: u32) -> u32 {
    let op = t.launches.cpu_op[l as usize];
    if op != NONE {
        op
    } else {
        t.launches.python[l as usize]
    }
}

/// GPU span (first start, last end) of some rows.
fn span(t: &Trace, rows: &[u32]) -> (i64, i64) {
    let g = &t.gpu;
    let from = rows.iter().map(|&i| g.ts[i as usize]).min().unwrap_or(0);
    let to = rows.iter().map(|&i| g.end(i as usize)).max().unwrap_or(from);
    (from, to)
}

/// Attributes the replayed rows of `t`: from `captures` first, then from eager stretches.
/// Call once, after linking.
pub fn attribute(t: &mut Trace, captures: &[Capture]) {
    let all = replays(t);
    let mut report = GraphReport {
        graph_launches: all.len(),
        replayed_rows: all.iter().map(|r| r.rows.len()).sum(),
        replayed_ns: all.iter().flat_map(|r| &r.rows).map(|&i| t.gpu.dur[i as usize]).sum(),
        captures: captures
            .iter()
            .map(|c| CaptureSource {
                label: c.label.clone(),
                graphs: c.graphs.len(),
                dispatches: c.dispatches(),
                batch_size: c.batch_size,
                mode: c.mode.clone(),
            })
            .collect(),
        ..GraphReport::default()
    };
    if all.is_empty() {
        t.graphs.report = report;
        return;
    }
    let mut left: Vec<&Replay> = Vec::new();
    if !captures.is_empty() {
        let graphs = Graphs::new(t, captures);
        let mut copies = Copies::default();
        let pid = t.threads.first().map_or(0, |th| th.pid);
        let thread = copy::copies_thread(t, pid, "graph replays: ops from capture traces");
        let mut after = 0;
        for r in &all {
            let keys: Vec<u32> = r.rows.iter().map(|&i| row_key(t, i as usize)).collect();
            let batch = step_batch(t, r.launch);
            let Some((k, alignment)) = graphs.choose(&keys, batch, captures, after) else {
                report.launches_unmatched += 1;
                left.push(r);
                continue;
            };
            after = k + 1;
            let (c, g, _) = graphs.list[k];
            let cap = &captures[c];
            let graph = &cap.graphs[g];
            let source = Source { trace: Some(&cap.trace), window: (graph.start, graph.end), carry: Carry::Whole };
            let mut copy = LaunchCopy::new(&source, span(t, &r.rows), launch_parent(t, r.launch));
            for &(ri, di) in &alignment.pairs {
                let op = capture::dispatch_op(cap, graph.dispatches[di as usize]);
                if op != NONE {
                    copy.attribute(r.rows[ri as usize], op, t, &mut copies, thread);
                }
            }
            report.launches_from_capture += 1;
            report.dispatches_skipped += alignment.skipped;
            report.rows_unaligned += alignment.unaligned;
            if let Some(b) = cap.batch_size {
                report.captured_batch = Some(report.captured_batch.map_or(b, |x: u64| x.max(b)));
            }
        }
        report.rows_from_capture = copies.apply(t, OpFrom::Capture);
    } else {
        left = all.iter().collect();
    }
    // Eager stretches for what the captures did not cover (nothing to index when they covered all).
    if left.is_empty() {
        report.attributed_ns = attributed_ns(t);
        t.graphs.report = report;
        return;
    }
    let index = eager::EagerIndex::new(t, |i| row_key(t, i));
    let mut copies = Copies::default();
    let pid = t.threads.first().map_or(0, |th| th.pid);
    let mut thread = None;
    for r in left {
        let keys: Vec<u32> = r.rows.iter().map(|&i| row_key(t, i as usize)).collect();
        let runs = index.runs(&keys);
        if runs.is_empty() {
            continue;
        }
        let th = *thread.get_or_insert_with(|| copy::copies_thread(t, pid, "graph replays: ops from eager passes"));
        for (p, e, len) in runs {
            let replay_rows = &r.rows[p..p + len];
            let eager_rows: Vec<u32> = index.rows[e..e + len].to_vec();
            let ops: Vec<u32> = eager_rows.iter().map(|&i| t.gpu.cpu_op[i as usize]).collect();
            let window = (
                ops.iter().map(|&o| t.ops.ts[o as usize]).min().unwrap_or(0),
                ops.iter().map(|&o| t.ops.end(o as usize)).max().unwrap_or(0),
            );
            let source = Source { trace: None, window, carry: Carry::NamesOnly };
            let mut copy = LaunchCopy::new(&source, span(t, replay_rows), launch_parent(t, r.launch));
            for (&row, &op) in replay_rows.iter().zip(&ops) {
                copy.attribute(row, op, t, &mut copies, th);
            }
        }
        report.launches_from_eager += 1;
    }
    report.rows_from_eager = copies.apply(t, OpFrom::EagerPass);
    report.attributed_ns = attributed_ns(t);
    t.graphs.report = report;
}

/// GPU time of the rows that took their op from a capture or an eager stretch.
fn attributed_ns(t: &Trace) -> i64 {
    (0..t.gpu.len())
        .filter(|&i| matches!(t.graphs.from.get(i), Some(OpFrom::Capture | OpFrom::EagerPass)))
        .map(|i| t.gpu.dur[i])
        .sum()
}
