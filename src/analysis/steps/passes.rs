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
//!    The stream's own repetition ([`super::structure`]: a step-level period holding a stack of
//!    alike blocks) decides how many passes there are; names place each cut inside the boundary
//!    region it allows, and where no name speaks the cut goes at the longest GPU idle there. Names
//!    alone decide only when nothing repeats as whole steps.
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
    /// The step-level period of the kernel stream ([`super::structure`]), with no name to confirm
    /// where one step ends and the next begins (the cut is at the longest GPU idle between them).
    Structure,
}

impl PassSource {
    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            PassSource::Annotation => "annotation",
            PassSource::Markers => "markers",
            PassSource::Whole => "whole",
            PassSource::Repetition => "repetition",
            PassSource::Structure => "structure",
        }
    }
}

/// One forward pass before phase voting.
#[derive(Debug, Clone)]
pub struct Segment {
    /// The device the segment ran on.
    pub device: i32,
    /// GPU rows (kernels, memcpy, memset) in time order.
    pub rows: Vec<u32>,
    /// Index into the step annotations, for annotation-delimited passes.
    pub step: Option<usize>,
    /// What cut it.
    pub source: PassSource,
    /// The stream's step-level period found these passes too (whatever placed the cuts).
    pub structure: bool,
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

/// Where the stream's structure and the names disagree on a device's number of passes (the
/// structure's count is taken).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Disagreement {
    /// The device where the two counts differ.
    pub device: i32,
    /// Passes the step-level period finds.
    pub by_structure: usize,
    /// Passes the names (step markers) find; 1 when they find no boundary.
    pub by_names: usize,
}

/// Splits every device's rows into passes, with every device where structure and names disagree.
pub fn segment(trace: &Trace, rules: &PhaseRules, steps: &[StepAnnotation]) -> (Vec<Segment>, Vec<Disagreement>) {
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
        start_kernel: PerName::new(names),
        kernels_per_launch: None,
    };
    let mut out = Vec::new();
    let mut disagree = Vec::new();
    for (device, mut rows) in by_device {
        crate::analysis::rows::sort_by_time(&g.ts, &mut rows);
        let mut segs = if steps.is_empty() { Vec::new() } else { by_steps(trace, steps, &rows, device) };
        if segs.is_empty() {
            segs = by_structure_and_markers(trace, rules, &mut markers, &rows, device, &mut disagree);
        }
        if segs.is_empty() && !rows.is_empty() {
            segs.push(Segment { device, rows, step: None, source: PassSource::Whole, structure: false });
        }
        out.extend(segs);
    }
    (out, disagree)
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
    per_step
        .into_iter()
        .map(|(s, rows)| Segment { device, rows, step: Some(s), source: PassSource::Annotation, structure: false })
        .collect()
}

/// Passes of one device from the stream's step-level period, each boundary placed by a name
/// where one marks a step's start or end inside the region the period allows, else at the
/// longest GPU idle there; from names alone when the stream does not repeat as whole steps, or
/// when both find the same number of passes (names then place every cut).
fn by_structure_and_markers(
    trace: &Trace,
    rules: &PhaseRules,
    cache: &mut MarkerCache,
    rows: &[u32],
    device: i32,
    disagree: &mut Vec<Disagreement>,
) -> Vec<Segment> {
    let kernels = kernels_of(trace, rows);
    if kernels.is_empty() {
        return Vec::new();
    }
    let (start_mark, end_mark) = marks(trace, rules, cache, &kernels);
    let marked = by_markers(&kernels, &start_mark, &end_mark, rules);
    let ids: Vec<u32> = kernels.iter().map(|&r| trace.gpu.name[r as usize]).collect();
    // Names confirm: a kernel that runs once per step is never attention (that runs once per
    // layer), so a cycle whose once-per-cycle kernels include attention is a repeating group of
    // layers (a hybrid model's), not a step.
    let cycle = super::structure::find_step_cycle(&ids)
        .filter(|c| !c.anchors.iter().any(|&a| any_match(&rules.attention_kernels, trace.name(a))));
    match (cycle, marked) {
        // Both count alike: the names place every cut.
        (Some(cycle), Some(starts)) if starts.len() == cycle.steps => {
            segments_from(trace, rows, &kernels, &starts, device, PassSource::Markers, true)
        }
        (Some(cycle), marked) => {
            disagree.push(Disagreement { device, by_structure: cycle.steps, by_names: marked.as_ref().map_or(1, |m| m.len()) });
            let (starts, named) = place_cuts(trace, &kernels, &cycle, &start_mark, &end_mark);
            let source = if named == cycle.regions.len() { PassSource::Markers } else { PassSource::Structure };
            segments_from(trace, rows, &kernels, &starts, device, source, true)
        }
        (None, Some(starts)) => segments_from(trace, rows, &kernels, &starts, device, PassSource::Markers, false),
        (None, None) => Vec::new(),
    }
}

/// Where each pass of a step cycle starts (kernel positions, the first 0), and how many of the
/// cuts a name placed: before a start mark in the boundary region, else after an end mark, else
/// before the kernel with the longest GPU idle before it (the host preparing the next step).
fn place_cuts(
    trace: &Trace,
    kernels: &[u32],
    cycle: &super::structure::StepCycle,
    start: &[Mark],
    end: &[Mark],
) -> (Vec<usize>, usize) {
    let g = &trace.gpu;
    // GPU idle before each kernel: its start after the latest end so far.
    let mut idle = Vec::with_capacity(kernels.len());
    let mut latest = i64::MIN;
    for &r in kernels {
        let r = r as usize;
        idle.push(if latest == i64::MIN { 0 } else { g.ts[r] - latest });
        latest = latest.max(g.end(r));
    }
    let mut starts = vec![0];
    let mut named = 0;
    for region in &cycle.regions {
        let by_start = region.clone().find(|&c| start[c] != Mark::None);
        let by_end = region.clone().rev().find(|&c| c > 0 && end[c - 1] != Mark::None);
        let cut = match by_start.or(by_end) {
            Some(c) => {
                named += 1;
                c
            }
            None => region.clone().max_by_key(|&c| (idle[c], std::cmp::Reverse(c))).unwrap_or(region.start),
        };
        if cut > *starts.last().unwrap_or(&0) {
            starts.push(cut);
        }
    }
    (starts, named)
}

/// Per-op-name marker decisions, computed once per interned name.
struct MarkerCache {
    start: PerName<bool>,
    end: PerName<bool>,
    end_kernel: PerName<bool>,
    start_kernel: PerName<bool>,
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
    /// A start- or end-marker kernel on its own.
    Kernel(usize),
    /// A whole-forward graph replay (launch row).
    Graph(u32),
}

/// The start and end marks of each kernel of `kernels` (one device's, in time order): the ops,
/// graph replays and kernels whose names say a step starts or ends there.
fn marks(trace: &Trace, rules: &PhaseRules, cache: &mut MarkerCache, kernels: &[u32]) -> (Vec<Mark>, Vec<Mark>) {
    let g = &trace.gpu;
    let depth = rules.thresholds.max_op_depth;
    let mut start_mark = Vec::with_capacity(kernels.len());
    let mut end_mark = Vec::with_capacity(kernels.len());
    for &r in kernels {
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
        let id = g.name[r];
        if s == Mark::None && *cache.start_kernel.get_or_insert_with(id, || rules.start_kernels.matches(trace.name(id))) {
            s = Mark::Kernel(r);
        }
        if e == Mark::None && !pooling && *cache.end_kernel.get_or_insert_with(id, || rules.end_kernels.matches(trace.name(id))) {
            e = Mark::Kernel(r);
        }
        start_mark.push(s);
        end_mark.push(e);
    }
    (start_mark, end_mark)
}

/// The kernels of `rows` (GPU rows of one device in time order).
fn kernels_of(trace: &Trace, rows: &[u32]) -> Vec<u32> {
    rows.iter().copied().filter(|&r| trace.gpu.kind[r as usize] == GpuKind::Kernel).collect()
}

/// Where passes start (kernel positions, the first 0) by the step markers alone; `None` when no
/// kernel is marked. `kernels` is not empty.
fn by_markers(kernels: &[u32], start_mark: &[Mark], end_mark: &[Mark], rules: &PhaseRules) -> Option<Vec<usize>> {
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
        return None;
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
    Some(merged.iter().map(|&(a, _)| a).collect())
}

/// Segments of one device from the kernel positions where its passes start (the first at 0):
/// every device row goes by its start time.
fn segments_from(
    trace: &Trace,
    rows: &[u32],
    kernels: &[u32],
    starts: &[usize],
    device: i32,
    source: PassSource,
    structure: bool,
) -> Vec<Segment> {
    let g = &trace.gpu;
    let cut_ts: Vec<i64> = starts.iter().skip(1).map(|&a| g.ts[kernels[a] as usize]).collect();
    let mut out: Vec<Vec<u32>> = vec![Vec::new(); starts.len()];
    for &r in rows {
        let k = cut_ts.partition_point(|&t| t <= g.ts[r as usize]);
        out[k].push(r);
    }
    out.into_iter().filter(|rows| !rows.is_empty()).map(|rows| Segment { device, rows, step: None, source, structure }).collect()
}
