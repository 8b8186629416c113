//! Forward-pass segmentation: splits each device's GPU rows into model steps.
//!
//! In order of preference:
//! 1. **Step annotations** (vLLM / SGLang): a kernel belongs to the step whose CPU range holds the
//!    call that launched it (graph replays included: the graph launch sits in the step).
//! 2. **Step markers** from the trace's own structure: every forward begins with the token-embedding
//!    lookup (or with the replay of a whole captured forward graph) and every generation step ends
//!    by picking the next token (argmax / multinomial; for graph-replayed sampling, the sampling
//!    kernel). Cuts go before each start marker
//!    and after each end marker; pieces with no layer stack (few kernels) are merged back.
//! 3. Otherwise the whole device is one pass.

use super::annotations::StepAnnotation;
use super::rules::{any_match, PhaseRules};
use crate::analysis::per_name::PerName;
use crate::model::FastMap;
use crate::model::{GpuKind, OpKind, Trace, NONE};
use std::collections::BTreeMap;

/// How a pass was delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PassSource {
    /// A framework step annotation.
    Annotation,
    /// Embedding-lookup / token-sampling markers.
    Markers,
    /// No boundary found: the whole device.
    Whole,
    /// Repetition of the kernel sequence (the steps of a diffusion model and the stages around them).
    Repetition,
}

impl PassSource {
    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            PassSource::Annotation => "annotation",
            PassSource::Markers => "markers",
            PassSource::Whole => "whole",
            PassSource::Repetition => "repetition",
        }
    }
}

/// One forward pass before phase voting.
#[derive(Debug, Clone)]
pub struct Segment {
    pub device: i32,
    /// GPU rows (kernels, memcpy, memset) in time order.
    pub rows: Vec<u32>,
    /// Index into the step annotations, for annotation-delimited passes.
    pub step: Option<usize>,
    pub source: PassSource,
}

/// The CPU ops enclosing GPU row `row`: its linked op, then its ancestors (at most `depth`).
pub fn op_chain(trace: &Trace, row: usize, depth: usize) -> impl Iterator<Item = usize> + '_ {
    let mut op = trace.gpu.cpu_op[row];
    let mut left = depth + 1;
    std::iter::from_fn(move || {
        if op == NONE || left == 0 {
            return None;
        }
        left -= 1;
        let cur = op as usize;
        op = trace.ops.parent[cur];
        Some(cur)
    })
}

/// Splits every device's rows into passes.
pub fn segment(trace: &Trace, rules: &PhaseRules, steps: &[StepAnnotation]) -> Vec<Segment> {
    let g = &trace.gpu;
    let mut by_device: BTreeMap<i32, Vec<u32>> = BTreeMap::new();
    for i in 0..g.len() {
        by_device.entry(g.device[i]).or_default().push(i as u32);
    }
    let names = trace.names.len();
    let mut markers = MarkerCache {
        start: PerName::new(names),
        end: PerName::new(names),
        end_kernel: PerName::new(names),
        kernels_per_launch: None,
    };
    let mut out = Vec::new();
    for (device, mut rows) in by_device {
        crate::analysis::rows::sort_by_time(&g.ts, &mut rows);
        let mut segs = if steps.is_empty() { Vec::new() } else { by_steps(trace, steps, &rows, device) };
        if segs.is_empty() {
            segs = by_markers(trace, rules, &mut markers, &rows, device);
        }
        if segs.is_empty() && !rows.is_empty() {
            segs.push(Segment { device, rows, step: None, source: PassSource::Whole });
        }
        out.extend(segs);
    }
    out
}

/// CPU time of the call behind GPU row `r`: its launch, else its op.
pub fn cpu_time(trace: &Trace, r: usize) -> Option<i64> {
    let l = trace.gpu.launch[r];
    if l != NONE {
        return Some(trace.launches.ts[l as usize]);
    }
    let o = trace.gpu.cpu_op[r];
    (o != NONE).then(|| trace.ops.ts[o as usize])
}

fn by_steps(trace: &Trace, steps: &[StepAnnotation], rows: &[u32], device: i32) -> Vec<Segment> {
    let g = &trace.gpu;
    let mut step_of: Vec<Option<usize>> = Vec::with_capacity(rows.len());
    for &r in rows {
        let s = cpu_time(trace, r as usize).and_then(|t| {
            let k = steps.partition_point(|s| s.start_ns <= t);
            (k > 0 && t < steps[k - 1].end_ns).then(|| k - 1)
        });
        step_of.push(s);
    }
    // GPU start of each step's own rows, to place rows launched outside every window.
    let mut first_ts: BTreeMap<usize, i64> = BTreeMap::new();
    for (p, s) in step_of.iter().enumerate() {
        if let Some(s) = *s {
            let t = g.ts[rows[p] as usize];
            first_ts.entry(s).and_modify(|v| *v = (*v).min(t)).or_insert(t);
        }
    }
    if first_ts.is_empty() {
        return Vec::new();
    }
    let mut starts: Vec<(i64, usize)> = first_ts.iter().map(|(&s, &t)| (t, s)).collect();
    starts.sort();
    let mut per_step: BTreeMap<usize, Vec<u32>> = BTreeMap::new();
    for (p, s) in step_of.iter().enumerate() {
        let r = rows[p];
        let s = s.unwrap_or_else(|| {
            let t = g.ts[r as usize];
            let k = starts.partition_point(|&(st, _)| st <= t);
            starts[k.saturating_sub(1)].1
        });
        per_step.entry(s).or_default().push(r);
    }
    per_step.into_iter().map(|(s, rows)| Segment { device, rows, step: Some(s), source: PassSource::Annotation }).collect()
}

/// Per-op-name marker decisions, computed once per interned name.
struct MarkerCache {
    start: PerName<bool>,
    end: PerName<bool>,
    end_kernel: PerName<bool>,
    /// Kernels each runtime launch ran (filled at the first graph launch met).
    kernels_per_launch: Option<Vec<u32>>,
}

impl MarkerCache {
    /// Kernels launch `l` ran (for a graph launch: the kernels it replayed).
    fn kernels_of(&mut self, trace: &Trace, l: u32) -> usize {
        self.kernels_per_launch.get_or_insert_with(|| crate::analysis::launches::rows_per_launch(trace, trace.kernel_rows()))
            [l as usize] as usize
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Mark {
    None,
    /// Inside the op with this row.
    Op(usize),
    /// An end-marker kernel on its own.
    Kernel(usize),
    /// A whole-forward graph replay (launch row).
    Graph(u32),
}

fn by_markers(trace: &Trace, rules: &PhaseRules, cache: &mut MarkerCache, rows: &[u32], device: i32) -> Vec<Segment> {
    let g = &trace.gpu;
    let depth = rules.thresholds.max_op_depth;
    let kernels: Vec<u32> = rows.iter().copied().filter(|&r| g.kind[r as usize] == GpuKind::Kernel).collect();
    if kernels.is_empty() {
        return Vec::new();
    }
    let mut start_mark = Vec::with_capacity(kernels.len());
    let mut end_mark = Vec::with_capacity(kernels.len());
    for &r in &kernels {
        let r = r as usize;
        let (mut s, mut e) = (Mark::None, Mark::None);
        // An argmax over token ids (CLIP's pooling) ends no step, by its op or by its kernel.
        let mut pooling = false;
        for o in op_chain(trace, r, depth) {
            if trace.ops.kind[o] != OpKind::CpuOp {
                continue;
            }
            let id = trace.ops.name[o];
            let name = trace.name(id);
            if s == Mark::None && *cache.start.get_or_insert_with(id, || any_match(&rules.start_ops, name)) {
                s = Mark::Op(o);
            }
            if e == Mark::None && !pooling && *cache.end.get_or_insert_with(id, || any_match(&rules.end_ops, name)) {
                if rules.end_op_picks_an_index(trace, o) {
                    pooling = true;
                } else {
                    e = Mark::Op(o);
                }
            }
        }
        let l = g.launch[r];
        // A big replay is a whole captured forward.
        if s == Mark::None
            && l != NONE
            && trace.launches.is_graph[l as usize]
            && cache.kernels_of(trace, l) >= rules.full_graph_min_kernels
        {
            s = Mark::Graph(l);
        }
        if e == Mark::None && !pooling {
            let id = g.name[r];
            if *cache.end_kernel.get_or_insert_with(id, || any_match(&rules.end_kernels, trace.name(id))) {
                e = Mark::Kernel(r);
            }
        }
        start_mark.push(s);
        end_mark.push(e);
    }
    let n = kernels.len();
    let mut cut = vec![false; n + 1];
    // A start marker cuts before its first kernel, an end marker after its last: another stream's
    // kernels may run inside one (an overlap scheduler's next batch launches small eager kernels
    // that land inside the current step's graph replay), and must not cut it in two.
    let mut first_of: FastMap<Mark, usize> = FastMap::default();
    let mut last_of: FastMap<Mark, usize> = FastMap::default();
    for p in 0..n {
        if start_mark[p] != Mark::None {
            first_of.entry(start_mark[p]).or_insert(p);
        }
        if end_mark[p] != Mark::None {
            last_of.insert(end_mark[p], p);
        }
    }
    for p in first_of.into_values() {
        cut[p] = true;
    }
    for p in last_of.into_values() {
        cut[p + 1] = true;
    }
    cut[0] = true;
    cut[n] = true;
    let bounds: Vec<usize> = (0..=n).filter(|&p| cut[p]).collect();
    if bounds.len() <= 2 && !start_mark.iter().chain(end_mark.iter()).any(|m| *m != Mark::None) {
        return Vec::new();
    }
    // Pieces as [from, to) over the kernel list; merge those without a layer stack.
    let mut pieces: Vec<(usize, usize)> = bounds.windows(2).map(|w| (w[0], w[1])).filter(|(a, b)| b > a).collect();
    let largest = pieces.iter().map(|(a, b)| b - a).max().unwrap_or(0);
    let min_len = ((largest as f64) * rules.thresholds.min_pass_kernel_share).ceil() as usize;
    let mut merged: Vec<(usize, usize)> = Vec::new();
    let mut pending_front: Option<usize> = None;
    for (a, b) in pieces.drain(..) {
        if b - a >= min_len {
            let a = pending_front.take().unwrap_or(a);
            merged.push((a, b));
        } else if let Some(last) = merged.last_mut() {
            last.1 = b;
        } else {
            pending_front.get_or_insert(a);
        }
    }
    if let Some(a) = pending_front {
        match merged.first_mut() {
            Some(first) => first.0 = a,
            None => merged.push((a, n)),
        }
    }
    // GPU start time of each pass (after the first); every device row goes by its start time.
    let cut_ts: Vec<i64> = merged.iter().skip(1).map(|&(a, _)| g.ts[kernels[a] as usize]).collect();
    let mut out: Vec<Vec<u32>> = vec![Vec::new(); merged.len()];
    for &r in rows {
        let k = cut_ts.partition_point(|&t| t <= g.ts[r as usize]);
        out[k].push(r);
    }
    out.into_iter()
        .filter(|rows| !rows.is_empty())
        .map(|rows| Segment { device, rows, step: None, source: PassSource::Markers })
        .collect()
}
