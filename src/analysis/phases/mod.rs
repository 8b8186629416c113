//! Forward passes and their phases (prefill, decode, mixed), per pass and per GPU row.
//!
//! Steps: [`inference_check`] (training / non-LLM → `NotInference`),
//! [`passes`] (segmentation), [`evidence`] (what each
//! pass shows and each method's vote), then voting here. Every GPU row takes its pass's phase.

pub mod evidence;
pub mod inference_check;
pub mod passes;
pub mod rules;
pub mod step_annotations;

use super::categories::KernelCategories;
use super::Options;
use crate::model::{GpuKind, Trace, NONE};
use evidence::{gather, method_vote, relate_passes, EvidenceCache, Method, PassEvidence, Vote, METHODS};
use inference_check::not_inference_reason;
use passes::{segment, PassSource};
use rules::PhaseRules;
use serde::Serialize;
use step_annotations::find_steps;

/// Phase of a forward pass or kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    Prefill,
    Decode,
    Mixed,
    Unknown,
    /// Training or non-LLM work: no prefill/decode.
    NotInference,
}

impl Phase {
    /// Lower-case name as used in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Prefill => "prefill",
            Phase::Decode => "decode",
            Phase::Mixed => "mixed",
            Phase::Unknown => "unknown",
            Phase::NotInference => "not-inference",
        }
    }
    /// Parses a table name (`prefill`, `decode`, `mixed`, `unknown`, `not-inference`).
    pub fn parse(s: &str) -> Option<Phase> {
        [Phase::Prefill, Phase::Decode, Phase::Mixed, Phase::Unknown, Phase::NotInference].into_iter().find(|p| p.as_str() == s)
    }
}

/// One forward pass (one model step).
#[derive(Debug, Clone, Serialize)]
pub struct Pass {
    pub index: u32,
    pub phase: Phase,
    pub confidence: f32,
    /// GPU rows (`trace.gpu`) of the pass, in time order.
    pub rows: Vec<u32>,
    pub start_ns: i64,
    pub end_ns: i64,
    /// Device the pass ran on.
    pub device: i32,
    /// How the pass was delimited.
    pub source: PassSource,
    /// Kernels and their summed duration.
    pub kernels: u32,
    pub kernel_time_ns: i64,
    /// Time with at least one kernel running (union of kernel intervals).
    pub busy_ns: i64,
    /// Tokens processed, when the trace reveals them (annotation, or GEMM M).
    pub tokens: Option<u64>,
    /// Requests in the step, when revealed.
    pub batch: Option<u64>,
    /// The trace stops before this pass's end (it is the last pass of its device in a truncated
    /// trace): its kernels, layers and time are what was read, not the whole pass.
    pub incomplete: bool,
    /// The votes that decided the phase (method, phase, strength, reason).
    #[serde(skip)]
    pub votes: Vec<Vote>,
}

/// Phase answer of one method alone, per pass (for the `phase_methods` table).
#[derive(Debug, Clone, Serialize)]
pub struct MethodResult {
    pub method: String,
    pub weight: f64,
    /// Phase each pass gets from this method alone (`None` = no vote).
    pub phase_of_pass: Vec<Option<Phase>>,
}

/// Passes and the phase of every GPU row.
#[derive(Debug, Clone, Default)]
pub struct Phases {
    pub passes: Vec<Pass>,
    /// Pass index of each GPU row, or `NONE`.
    pub pass_of_row: Vec<u32>,
    /// Phase of each GPU row (`None` = not assigned).
    pub phase_of_row: Vec<Option<Phase>>,
    pub confidence_of_row: Vec<f32>,
    /// Trace-level verdict: `NotInference` for training / non-LLM traces; otherwise the phase shared
    /// by every pass, or `None` when passes differ (or there are none).
    pub trace_phase: Option<Phase>,
    /// Why the trace is not inference, when it is not.
    pub not_inference_reason: Option<String>,
    /// Method used for the final answer (`union`, `hybrid` or one method).
    pub method: String,
    /// Each single method's answer.
    pub methods: Vec<MethodResult>,
}

/// Union vote: weighted sum per phase. Confidence = winner's share of the weight, damped when
/// little evidence was seen at all.
fn union(votes: &[Vote], rules: &PhaseRules) -> (Phase, f32) {
    let phases = [Phase::Prefill, Phase::Decode, Phase::Mixed];
    let mut score = [0.0f64; 3];
    for v in votes {
        if let Some(k) = phases.iter().position(|p| *p == v.phase) {
            score[k] += v.method.weight(rules) * v.strength;
        }
    }
    let total: f64 = score.iter().sum();
    if total <= 0.0 {
        return (Phase::Unknown, 0.0);
    }
    let (k, best) = score.iter().enumerate().fold((0, 0.0), |acc, (k, &s)| if s > acc.1 { (k, s) } else { acc });
    let conf = best / total * (1.0 - (-total).exp());
    (phases[k], conf as f32)
}

/// Hybrid: the first method with a firm vote decides (annotations, attention shapes, GEMM shapes,
/// names, frequency), then the weak graph-replay hint.
fn hybrid(votes: &[Vote]) -> (Phase, f32) {
    let order =
        [Method::FrameworkApis, Method::AttentionPatterns, Method::GemmParams, Method::KernelNames, Method::OperationFrequency];
    for min in [0.6, 0.0] {
        for m in order {
            if let Some(v) = votes.iter().find(|v| v.method == m && v.strength > min) {
                return (v.phase, v.strength as f32);
            }
        }
    }
    (Phase::Unknown, 0.0)
}

fn single(votes: &[Vote], m: Method) -> (Phase, f32) {
    votes.iter().find(|v| v.method == m).map_or((Phase::Unknown, 0.0), |v| (v.phase, v.strength as f32))
}

/// Union of `[ts, end)` intervals, rows in time order.
fn busy_time(trace: &Trace, rows: &[u32]) -> i64 {
    let g = &trace.gpu;
    let mut busy = 0;
    let mut cur: Option<(i64, i64)> = None;
    for &r in rows {
        let r = r as usize;
        if g.kind[r] != GpuKind::Kernel {
            continue;
        }
        let (s, e) = (g.ts[r], g.end(r));
        cur = match cur {
            Some((a, b)) if s <= b => Some((a, b.max(e))),
            Some((a, b)) => {
                busy += b - a;
                Some((s, e))
            }
            None => Some((s, e)),
        };
    }
    busy + cur.map_or(0, |(a, b)| b - a)
}

/// Detects passes and phases with the built-in rules.
pub fn detect(trace: &Trace, categories: &KernelCategories, options: &Options) -> Phases {
    detect_with(trace, categories, options, PhaseRules::builtin())
}

/// Detects passes and phases with the given rules.
pub fn detect_with(trace: &Trace, categories: &KernelCategories, options: &Options, rules: &PhaseRules) -> Phases {
    detect_in(trace, categories, options, rules, cut_passes(trace, rules))
}

/// The part of phase detection that does not need kernel categories: the step annotations and
/// the passes cut from them (or from markers). Natively, [`crate::Analysis::new`] cuts them while
/// another thread sorts kernels into categories.
pub struct Cut {
    steps: Vec<step_annotations::StepAnnotation>,
    segments: Vec<passes::Segment>,
}

/// Finds the step annotations and cuts every device's rows into passes.
pub fn cut_passes(trace: &Trace, rules: &PhaseRules) -> Cut {
    let steps = find_steps(trace, rules);
    let segments = segment(trace, rules, &steps);
    Cut { steps, segments }
}

/// [`detect_with`] on passes already cut by [`cut_passes`].
pub fn detect_in(trace: &Trace, categories: &KernelCategories, options: &Options, rules: &PhaseRules, cut: Cut) -> Phases {
    let Cut { steps, segments: mut segs } = cut;
    let n = trace.gpu.len();
    let mut out = Phases {
        pass_of_row: vec![NONE; n],
        phase_of_row: vec![None; n],
        confidence_of_row: vec![0.0; n],
        method: options.phase_method.clone(),
        ..Default::default()
    };
    if let Some(reason) = not_inference_reason(trace, rules, categories, !steps.is_empty()) {
        for i in 0..n {
            out.phase_of_row[i] = Some(Phase::NotInference);
            out.confidence_of_row[i] = 1.0;
        }
        out.trace_phase = Some(Phase::NotInference);
        out.not_inference_reason = Some(reason);
        return out;
    }
    // Passes in time order across devices.
    segs.sort_by_key(|s| (s.rows.first().map_or(0, |&r| trace.gpu.ts[r as usize]), s.device));
    // Each pass's evidence depends on that pass only: natively, two threads take half the rows each.
    let mut evs: Vec<PassEvidence> = crate::support::threads::map_in_halves(
        &segs,
        |s| s.rows.len(),
        |some| {
            let mut cache = EvidenceCache::new(trace);
            some.iter().map(|s| gather(trace, rules, s, &steps, &mut cache)).collect()
        },
    );
    relate_passes(&mut evs, rules);
    let threshold = if options.decode_threshold > 0 { options.decode_threshold } else { rules.thresholds.decode_threshold };
    let chosen = options.phase_method.as_str();
    let mut per_method: Vec<Vec<Option<Phase>>> = vec![Vec::with_capacity(segs.len()); METHODS.len()];
    for (k, (seg, ev)) in segs.into_iter().zip(&evs).enumerate() {
        let votes: Vec<Vote> = METHODS.iter().filter_map(|&m| method_vote(m, ev, rules, threshold)).collect();
        for (mi, &m) in METHODS.iter().enumerate() {
            per_method[mi].push(votes.iter().find(|v| v.method == m).map(|v| v.phase));
        }
        let (phase, confidence) = match chosen {
            "hybrid" => hybrid(&votes),
            other => match Method::parse(other) {
                Some(m) => single(&votes, m),
                None => union(&votes, rules),
            },
        };
        let g = &trace.gpu;
        let start_ns = seg.rows.iter().map(|&r| g.ts[r as usize]).min().unwrap_or(0);
        let end_ns = seg.rows.iter().map(|&r| g.end(r as usize)).max().unwrap_or(start_ns);
        let ann = ev.annotation.as_ref();
        let pass = Pass {
            index: k as u32,
            phase,
            confidence,
            start_ns,
            end_ns,
            device: seg.device,
            source: seg.source,
            kernels: ev.kernels as u32,
            kernel_time_ns: ev.kernel_time_ns,
            busy_ns: busy_time(trace, &seg.rows),
            tokens: ann.and_then(|a| a.tokens).or(ev.gemm_max_tokens),
            batch: ann.and_then(|a| a.batch).or(ev.gemm_batch),
            incomplete: false,
            votes,
            rows: seg.rows,
        };
        for &r in &pass.rows {
            out.pass_of_row[r as usize] = k as u32;
            out.phase_of_row[r as usize] = Some(phase);
            out.confidence_of_row[r as usize] = confidence;
        }
        out.passes.push(pass);
    }
    out.methods = METHODS
        .iter()
        .zip(per_method)
        .map(|(m, phase_of_pass)| MethodResult { method: m.as_str().to_string(), weight: m.weight(rules), phase_of_pass })
        .collect();
    if trace.stats.truncation.as_ref().is_some_and(|cut| !cut.document_whole) {
        mark_cut_passes_incomplete(trace, &mut out.passes);
    }
    let first = out.passes.first().map(|p| p.phase);
    out.trace_phase = first.filter(|f| out.passes.iter().all(|p| p.phase == *f));
    out
}

/// In a trace cut short, marks the passes the cut may have taken kernels from: the pass that ends
/// last on each device (a writer that keeps time order loses the end) and every pass that a lost
/// kernel would have run in. Writers also emit GPU events in buffers out of time order (the H100
/// llama trace holds its later kernels before its earlier ones), so a cut can take kernels from
/// the start too. A lost kernel shows as a launch with no kernel, or, when its launch was lost as
/// well, as a CPU op of a kind that launches kernels elsewhere in the trace with no launch under it
/// (CPU ops are written first, so they usually survive the cut). Its kernel would start no earlier
/// than the launch, so it falls in the first pass ending after that time: that pass is marked.
fn mark_cut_passes_incomplete(trace: &Trace, passes: &mut [Pass]) {
    let mut last: std::collections::BTreeMap<i32, usize> = Default::default();
    for (k, p) in passes.iter().enumerate() {
        let slot = last.entry(p.device).or_insert(k);
        if p.end_ns > passes[*slot].end_ns {
            *slot = k;
        }
    }
    for k in last.into_values() {
        passes[k].incomplete = true;
    }
    let (l, ops) = (&trace.launches, &trace.ops);
    let mut launch_has_kernel = vec![false; l.len()];
    for &launch in &trace.gpu.launch {
        if launch != NONE {
            launch_has_kernel[launch as usize] = true;
        }
    }
    let is_kernel_launch = |i: usize| {
        let name = trace.name(l.name[i]);
        l.is_graph[i] || name.contains("LaunchKernel") || name.contains("LaunchCooperativeKernel")
    };
    // Times at which a kernel was launched (or an op that launches kernels ran) with no kernel here.
    let mut lost: Vec<i64> = (0..l.len()).filter(|&i| !launch_has_kernel[i] && is_kernel_launch(i)).map(|i| l.ts[i]).collect();
    let mut op_launches = vec![false; ops.len()];
    let mut launching_names = std::collections::HashSet::new();
    for i in (0..l.len()).filter(|&i| is_kernel_launch(i) && l.cpu_op[i] != NONE) {
        op_launches[l.cpu_op[i] as usize] = true;
        launching_names.insert(ops.name[l.cpu_op[i] as usize]);
    }
    // Only ops with no child op: an outer op's launches sit under its children.
    let mut has_child = vec![false; ops.len()];
    for &parent in &ops.parent {
        if parent != NONE {
            has_child[parent as usize] = true;
        }
    }
    lost.extend(
        (0..ops.len()).filter(|&i| !op_launches[i] && !has_child[i] && launching_names.contains(&ops.name[i])).map(|i| ops.ts[i]),
    );
    let mut by_end: Vec<usize> = (0..passes.len()).collect();
    by_end.sort_by_key(|&k| passes[k].end_ns);
    for t in lost {
        let at = by_end.partition_point(|&k| passes[k].end_ns < t);
        if let Some(&k) = by_end.get(at) {
            passes[k].incomplete = true;
        }
    }
}
