//! Forward passes and their phases (prefill, decode, mixed), per pass and per GPU row.
//!
//! Steps: [`crate::analysis::workload::inference_check`] (training / non-LLM → `NotInference`),
//! [`crate::analysis::steps::passes`] (segmentation), [`crate::analysis::workload`] (diffusion loops),
//! [`evidence`] (what each pass shows and each method's vote), then voting here, [`doubt`], and the
//! workload verdict. Every GPU row takes its pass's phase.

pub mod doubt;
pub mod evidence;
pub mod mix;

pub use crate::analysis::steps::{rules, Phase};

use super::categories::KernelCategories;
use crate::analysis::options::{Options, PhaseMethod};
use crate::analysis::steps::annotations::find_steps;
use crate::analysis::steps::generation::{generation_kernels, name_evidence};
use crate::analysis::steps::passes::{segment, Disagreement, PassSource};
use crate::analysis::workload::inference_check::not_inference_reason;
use crate::analysis::workload::{self, PassFacts};
use crate::model::{GpuKind, Trace, NONE};
use evidence::{gather, method_vote, relate_passes, EvidenceCache, Method, PassEvidence, Vote, METHODS};
use rules::PhaseRules;
use serde::Serialize;

/// One forward pass (one model step).
#[derive(Debug, Clone, Serialize)]
pub struct Pass {
    /// The pass's index (time order across devices).
    pub index: u32,
    /// Its phase.
    pub phase: Phase,
    /// How sure the phase is, in [0, 1].
    pub confidence: f32,
    /// GPU rows (`trace.gpu`) of the pass, in time order.
    pub rows: Vec<u32>,
    /// Start of its first kernel (ns, trace clock).
    pub start_ns: i64,
    /// End of its last kernel (ns, trace clock).
    pub end_ns: i64,
    /// Device the pass ran on.
    pub device: i32,
    /// How the pass was delimited.
    pub source: PassSource,
    /// Kernels and their summed duration.
    pub kernels: u32,
    /// Summed kernel time (ns).
    pub kernel_time_ns: i64,
    /// Time with at least one kernel running (union of kernel intervals).
    pub busy_ns: i64,
    /// Tokens processed, when the trace reveals them (annotation, or GEMM M).
    pub tokens: Option<u64>,
    /// Requests in the step, when revealed.
    pub batch: Option<u64>,
    /// The trace holds only part of this pass: it stops before the pass's end (the last pass of
    /// its device in a truncated trace), or it starts after the pass began (the first pass, whose
    /// kernels were all launched before the profiler started). Its kernels, layers and time are
    /// what was recorded, not the whole pass.
    pub incomplete: bool,
    /// Output columns of the pass's LM head when its shapes show one (its widest GEMM, run once):
    /// the vocabulary (or this rank's share of it).
    pub lm_head_columns: Option<u64>,
    /// For a stage around a diffusion model's steps: what it is ("before the steps: encoders…").
    pub stage: Option<String>,
    /// For a mixed step: its prefill and decode shares, every estimate the trace allows, best
    /// first (the step annotation's counts, then the shapes' bound).
    pub mix: Vec<mix::MixSplit>,
    /// The votes that decided the phase (method, phase, strength, reason).
    #[serde(skip)]
    pub votes: Vec<Vote>,
    /// Why the phase may be wrong, in words, when the evidence is thin or conflicting
    /// ([`doubt::doubt`]); `None` when it is firm.
    pub doubt: Option<String>,
}

/// Phase answer of one method alone, per pass (for the `phase_methods` table).
#[derive(Debug, Clone, Serialize)]
pub struct MethodResult {
    /// The method's name.
    pub method: String,
    /// Its weight in the union.
    pub weight: f64,
    /// Phase each pass gets from this method alone (`None` = no vote).
    pub phase_of_pass: Vec<Option<Phase>>,
}

/// How one method's votes agree with the final phases, weighed by the passes' kernel time.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodAgreement {
    /// The method's name.
    pub method: String,
    /// Its weight in the union.
    pub weight: f64,
    /// Passes it voted on.
    pub passes_voted: usize,
    /// Kernel time of the passes it voted on (ns).
    pub voted_ns: i64,
    /// Kernel time of the passes where its vote is the final phase (ns).
    pub agreed_ns: i64,
    /// Kernel time of every pass (ns).
    pub all_ns: i64,
}

impl MethodAgreement {
    /// The share (%) of the kernel time it voted on where its vote is the final phase; `None`
    /// when it voted on no pass.
    pub fn agreement_pct_of_voted(&self) -> Option<f64> {
        (self.passes_voted > 0 && self.voted_ns > 0).then(|| 100.0 * self.agreed_ns as f64 / self.voted_ns as f64)
    }
}

impl Phases {
    /// Each method's agreement with the final phases (`phase_methods`, the CLI's verbose lines).
    pub fn method_agreement(&self) -> Vec<MethodAgreement> {
        let all_ns: i64 = self.passes.iter().map(|x| x.kernel_time_ns).sum();
        self.methods
            .iter()
            .map(|m| {
                let mut out = MethodAgreement {
                    method: m.method.clone(),
                    weight: m.weight,
                    passes_voted: 0,
                    voted_ns: 0,
                    agreed_ns: 0,
                    all_ns,
                };
                for (x, phase) in self.passes.iter().zip(&m.phase_of_pass) {
                    let Some(phase) = phase else { continue };
                    out.passes_voted += 1;
                    out.voted_ns += x.kernel_time_ns;
                    if *phase == x.phase {
                        out.agreed_ns += x.kernel_time_ns;
                    }
                }
                out
            })
            .collect()
    }
}

/// Passes and the phase of every GPU row.
#[derive(Debug, Clone, Default)]
pub struct Phases {
    /// The passes, in time order.
    pub passes: Vec<Pass>,
    /// Pass index of each GPU row, or `NONE`.
    pub pass_of_row: Vec<u32>,
    /// Phase of each GPU row (`None` = not assigned).
    pub phase_of_row: Vec<Option<Phase>>,
    /// Confidence of the phase of each GPU row (0 for rows in no pass).
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
    /// What kind of workload the trace is, with the evidence.
    pub workload: workload::Workload,
    /// GEMM M above which a pass is prefill-like, as used.
    pub decode_threshold: i64,
    /// Where that threshold came from.
    pub decode_threshold_reason: String,
    /// Devices whose passes the stream's structure counted otherwise than the names did (the
    /// structure's passes are the ones kept).
    pub disagreements: Vec<Disagreement>,
    /// The batching engine the trace's names show (`vLLM`, `SGLang`…), when an inference trace
    /// shows one.
    pub batching_engine: Option<String>,
}

/// The decode threshold a trace's own GEMMs suggest. Each pass's largest GEMM M (tokens in the
/// step) is taken; decode steps cluster at the batch size and prefill steps far above it. When
/// the widest ratio between neighbouring values (sorted) is at least [`GAP_RATIO`], the values
/// below the gap are decode batches: the threshold is the largest of them (never below
/// `fallback`, so single-token decode keeps the usual threshold). Otherwise `fallback`.
pub fn adaptive_threshold(evs: &[PassEvidence], fallback: i64) -> (i64, String) {
    let mut m: Vec<u64> = evs.iter().filter_map(|e| e.shape_tokens()).filter(|&m| m > 0).collect();
    m.sort_unstable();
    m.dedup();
    let gap = m.windows(2).map(|w| (w[1] as f64 / w[0] as f64, w[0], w[1])).max_by(|a, b| a.0.total_cmp(&b.0));
    match gap {
        Some((ratio, below, above)) if ratio >= GAP_RATIO && below as i64 > fallback => (
            below as i64,
            format!("GEMM M above {below} is prefill-like: the trace's steps have M up to {below}, then from {above} (decode batches below the gap)"),
        ),
        _ => (fallback, format!("GEMM M above {fallback} is prefill-like (default; the steps' GEMM M show no wider decode batch)")),
    }
}

/// Neighbouring GEMM M values this far apart separate decode batches from prefills.
pub const GAP_RATIO: f64 = 4.0;

/// Union vote: weighted sum per phase. Confidence = winner's share of the weight, damped when
/// little evidence was seen at all.
fn union(votes: &[Vote], rules: &PhaseRules) -> (Phase, f32) {
    let phases = [Phase::Prefill, Phase::Decode, Phase::Mixed];
    let weight = |v: &Vote| v.method.weight(rules) * v.strength;
    let total: f64 = votes.iter().filter(|v| phases.contains(&v.phase)).map(weight).sum();
    if total <= 0.0 {
        return (Phase::Unknown, 0.0);
    }
    // Mixed is in the running only when a vote names it; then prefill votes by amount of work
    // back it too (see `Vote::backs`).
    let mixed_named = votes.iter().any(|v| v.phase == Phase::Mixed);
    let score = phases.map(|p| {
        if p == Phase::Mixed && !mixed_named {
            return 0.0;
        }
        votes.iter().filter(|v| v.backs(p)).map(weight).sum::<f64>()
    });
    let (k, best) = score.iter().enumerate().fold((0, 0.0), |acc, (k, &s)| if s > acc.1 { (k, s) } else { acc });
    let conf = (best / total).min(1.0) * (1.0 - (-total).exp());
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

/// First start and last end of GPU rows `rows` (0, 0 when there are none).
fn span(trace: &Trace, rows: &[u32]) -> (i64, i64) {
    let g = &trace.gpu;
    let start = rows.iter().map(|&r| g.ts[r as usize]).min().unwrap_or(0);
    (start, rows.iter().map(|&r| g.end(r as usize)).max().unwrap_or(start))
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
    steps: Vec<crate::analysis::steps::annotations::StepAnnotation>,
    segments: Vec<crate::analysis::steps::passes::Segment>,
    disagreements: Vec<Disagreement>,
}

/// Finds the step annotations and cuts every device's rows into passes.
pub fn cut_passes(trace: &Trace, rules: &PhaseRules) -> Cut {
    let steps = find_steps(trace, rules);
    let (segments, disagreements) = segment(trace, rules, &steps);
    let segments = crate::analysis::steps::profiler_steps::split_at_profiler_steps(trace, segments);
    Cut { steps, segments, disagreements }
}

/// [`detect_with`] on passes already cut by [`cut_passes`].
pub fn detect_in(trace: &Trace, categories: &KernelCategories, options: &Options, rules: &PhaseRules, cut: Cut) -> Phases {
    let Cut { steps, segments: segs, disagreements } = cut;
    let n = trace.gpu.len();
    let mut out = Phases {
        pass_of_row: vec![NONE; n],
        phase_of_row: vec![None; n],
        confidence_of_row: vec![0.0; n],
        method: options.phase_method.as_str().to_string(),
        disagreements,
        ..Default::default()
    };
    // Step annotations that state a phase are an engine's (vLLM, SGLang); others (a JAX module's
    // executions) only cut passes.
    let engine_steps = steps.iter().any(|s| s.info.phase.is_some() && !s.info.module_run);
    if let Some((kind, reason)) = not_inference_reason(trace, rules, categories, engine_steps) {
        return not_inference_phases(trace, segs, kind, reason, out);
    }
    // A device whose kernels repeat as whole steps with nothing of LLM generation around them is a
    // diffusion loop: its passes are those steps and the stages around them.
    let names = name_evidence(trace, rules);
    out.batching_engine = names.batching_engine.clone();
    let (mut segs, diffusion) = if crate::analysis::steps::generation::generation_shown(&names, engine_steps) {
        (segs.into_iter().map(|segment| workload::Placed { segment, diffusion: None }).collect(), None)
    } else {
        workload::diffusion_segments(trace, categories, rules, &names, segs)
    };
    // Passes in time order across devices.
    segs.sort_by_key(|p| (p.segment.rows.first().map_or(0, |&r| trace.gpu.ts[r as usize]), p.segment.device));
    let attention_category: Vec<bool> =
        categories.categories.iter().map(|c| rules.attention_families.contains(&c.family)).collect();
    // Each pass's evidence depends on that pass only: natively, two threads take half the rows each.
    let mut evs: Vec<PassEvidence> = crate::support::threads::map_in_halves(
        &segs,
        |p| p.segment.rows.len(),
        |some| {
            let mut cache = EvidenceCache::new(trace);
            some.iter().map(|p| gather(trace, rules, &p.segment, &steps, &attention_category, categories, &mut cache)).collect()
        },
    );
    relate_passes(&mut evs, rules);
    let limit = evidence::batch_limit(trace, rules);
    evs.iter_mut().for_each(|e| e.batch_limit = limit.clone());
    let (threshold, threshold_reason) = match options.decode_threshold {
        t if t > 0 => (t, format!("GEMM M above {t} is prefill-like (set by the user)")),
        _ => adaptive_threshold(&evs, rules.thresholds.decode_threshold),
    };
    out.decode_threshold = threshold;
    out.decode_threshold_reason = threshold_reason;
    let chosen = options.phase_method;
    let mut per_method: Vec<Vec<Option<Phase>>> = vec![Vec::with_capacity(segs.len()); METHODS.len()];
    let mut named = mix::NamedPhase::new(trace);
    for (k, (workload::Placed { segment: seg, diffusion: piece }, ev)) in segs.into_iter().zip(&evs).enumerate() {
        let votes: Vec<Vote> = if piece.is_some() {
            Vec::new()
        } else {
            METHODS.iter().filter_map(|&m| method_vote(m, ev, rules, threshold)).collect()
        };
        for (mi, &m) in METHODS.iter().enumerate() {
            per_method[mi].push(votes.iter().find(|v| v.method == m).map(|v| v.phase));
        }
        let (phase, confidence) = match (piece, chosen) {
            (Some(workload::DiffusionPlace { piece: workload::Piece::Step, alignment }), _) => (Phase::Denoise, alignment as f32),
            (Some(_), _) => (Phase::Stage, 1.0),
            (None, PhaseMethod::Hybrid) => hybrid(&votes),
            (None, PhaseMethod::Only(m)) => single(&votes, m),
            (None, PhaseMethod::Union) => union(&votes, rules),
        };
        let stage = match piece.map(|p| p.piece) {
            Some(p @ (workload::Piece::Before | workload::Piece::After)) => {
                Some(workload::stage_label(trace, categories, &seg.rows, p))
            }
            _ => None,
        };
        let (start_ns, end_ns) = span(trace, &seg.rows);
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
            tokens: ann.and_then(|a| a.tokens).or(ev.shape_tokens()),
            batch: ann.and_then(|a| a.batch).or(ev.gemm_batch),
            incomplete: false,
            lm_head_columns: ev.widest_gemm.filter(|w| w.ops == 1).map(|w| w.n),
            stage,
            mix: if phase == Phase::Mixed { mix::estimate(trace, rules, &seg.rows, ev, &mut named) } else { Vec::new() },
            doubt: match piece {
                Some(_) => None,
                None => doubt::may_be_mixed(doubt::doubt(phase, &votes, rules), phase, ann.is_some(), &names),
            },
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
    mark_passes_begun_before_the_trace(trace, &mut out.passes);
    out.workload = settle_workload(&mut out, trace, categories, rules, &names, engine_steps, diffusion);
    let first = out.passes.first().map(|p| p.phase);
    out.trace_phase = first.filter(|f| out.passes.iter().all(|p| p.phase == *f));
    out
}

/// The phases of a trace that is not inference (`reason` says why): every row `NotInference`,
/// and whole steps (the profiler's own step ranges where it wrote them, else the segments step
/// annotations or the stream's structure cut) as passes of no phase.
fn not_inference_phases(
    trace: &Trace,
    segs: Vec<crate::analysis::steps::passes::Segment>,
    kind: workload::WorkloadKind,
    reason: String,
    mut out: Phases,
) -> Phases {
    let n = trace.gpu.len();
    for i in 0..n {
        out.phase_of_row[i] = Some(Phase::NotInference);
        out.confidence_of_row[i] = 1.0;
    }
    out.trace_phase = Some(Phase::NotInference);
    out.workload = workload::Workload { kind, evidence: vec![reason.clone()] };
    out.not_inference_reason = Some(reason);
    // Whole steps still repeat (a training iteration: forward, backward, optimizer): where a
    // step annotation or the stream's structure delimits them, they are passes of no phase,
    // so that the gate and compare can judge per step. Names alone (an embedding, a sampler)
    // mark no training step.
    // The profiler's own step ranges, where it wrote them, are the steps.
    let profiler = crate::analysis::steps::profiler_steps::profiler_steps(trace);
    out.passes = if !profiler.is_empty() {
        let segs = crate::analysis::steps::profiler_steps::segments(trace, &profiler);
        // The profiler's ranges name the steps: what the structure alone would cut is moot.
        out.disagreements.clear();
        training_passes(trace, segs, &mut out.pass_of_row)
    } else {
        training_steps(trace, segs, &mut out.pass_of_row)
    };
    if out.passes.is_empty() {
        out.disagreements.clear();
    }
    out
}

/// What kind of workload the passes are (a diffusion loop found earlier gives its own evidence);
/// passes whose labels the verdict takes become `Unknown`, their rows too, and nothing is
/// doubted of a run that is not an LLM's.
fn settle_workload(
    out: &mut Phases,
    trace: &Trace,
    categories: &KernelCategories,
    rules: &PhaseRules,
    names: &crate::analysis::steps::generation::NameEvidence,
    engine_steps: bool,
    diffusion: Option<Vec<String>>,
) -> workload::Workload {
    match diffusion {
        Some(evidence) => workload::Workload { kind: workload::WorkloadKind::Diffusion, evidence },
        None => {
            let kernels = generation_kernels(trace, categories, rules);
            let facts: Vec<PassFacts> = out
                .passes
                .iter()
                .map(|p| PassFacts { phase: p.phase, incomplete: p.incomplete, lm_head_columns: p.lm_head_columns })
                .collect();
            let (workload, unlabel) = workload::verdict(&facts, names, engine_steps, kernels);
            if unlabel {
                for p in out.passes.iter_mut() {
                    p.phase = Phase::Unknown;
                    p.confidence = 0.0;
                }
            }
            // Passes the verdict took the labels of: their rows follow, and nothing is doubted of a
            // run that is not an LLM's.
            if workload.kind != workload::WorkloadKind::LlmInference {
                out.passes.iter_mut().filter(|p| p.phase == Phase::Unknown).for_each(|p| p.doubt = None);
            }
            for p in out.passes.iter().filter(|p| p.phase == Phase::Unknown) {
                for &r in &p.rows {
                    out.phase_of_row[r as usize] = Some(Phase::Unknown);
                    out.confidence_of_row[r as usize] = 0.0;
                }
            }
            workload
        }
    }
}

/// The steps of a trace that is not inference: the segments that step annotations delimited or
/// the stream's structure found, as passes of phase [`Phase::NotInference`] (no evidence gathered,
/// no vote: nothing here is prefill or decode). Fills `pass_of_row`.
fn training_steps(trace: &Trace, segs: Vec<crate::analysis::steps::passes::Segment>, pass_of_row: &mut [u32]) -> Vec<Pass> {
    let steps: Vec<_> =
        segs.into_iter().filter(|s| s.structure || s.source == PassSource::Annotation).map(|s| (s, false)).collect();
    if steps.len() < 2 {
        return Vec::new();
    }
    training_passes(trace, steps, pass_of_row)
}

/// Training steps as passes of no phase, in time order across devices; a segment flagged `true`
/// holds only part of its step (launched before the profiler's first step range).
fn training_passes(
    trace: &Trace,
    mut steps: Vec<(crate::analysis::steps::passes::Segment, bool)>,
    pass_of_row: &mut [u32],
) -> Vec<Pass> {
    let g = &trace.gpu;
    steps.sort_by_key(|(s, _)| (s.rows.first().map_or(0, |&r| g.ts[r as usize]), s.device));
    steps
        .into_iter()
        .enumerate()
        .map(|(k, (seg, incomplete))| {
            let kernels: Vec<u32> = seg.rows.iter().copied().filter(|&r| g.kind[r as usize] == GpuKind::Kernel).collect();
            for &r in &seg.rows {
                pass_of_row[r as usize] = k as u32;
            }
            let (start_ns, end_ns) = span(trace, &seg.rows);
            Pass {
                index: k as u32,
                phase: Phase::NotInference,
                confidence: 1.0,
                start_ns,
                end_ns,
                device: seg.device,
                source: seg.source,
                kernels: kernels.len() as u32,
                kernel_time_ns: crate::support::sat::SatSum::sat_sum(kernels.iter().map(|&r| g.dur[r as usize])),
                busy_ns: busy_time(trace, &seg.rows),
                tokens: None,
                batch: None,
                incomplete,
                lm_head_columns: None,
                stage: None,
                mix: Vec::new(),
                votes: Vec::new(),
                doubt: None,
                rows: seg.rows,
            }
        })
        .collect()
}

/// Marks the first pass of a device incomplete when the profiler started inside it: its kernels
/// (at least [`BEGUN_UNLINKED_SHARE`] of them) have no launch in the trace, because they were
/// launched before the trace began, while the device's other kernels do link to theirs (so a
/// GPU-only trace, which has no launches at all, is left alone).
fn mark_passes_begun_before_the_trace(trace: &Trace, passes: &mut [Pass]) {
    let g = &trace.gpu;
    // (kernels, kernels with no launch in the trace) of a pass.
    let unlinked = |p: &Pass| {
        let kernels = p.rows.iter().filter(|&&r| g.kind[r as usize] == GpuKind::Kernel);
        kernels.fold((0usize, 0usize), |(n, none), &r| (n + 1, none + usize::from(g.launch[r as usize] == NONE)))
    };
    let mut devices: Vec<i32> = passes.iter().map(|p| p.device).collect();
    devices.sort_unstable();
    devices.dedup();
    for d in devices {
        let on: Vec<usize> = (0..passes.len()).filter(|&k| passes[k].device == d).collect();
        let Some(&first) = on.iter().min_by_key(|&&k| passes[k].start_ns) else { continue };
        let (n, none) = unlinked(&passes[first]);
        let (rest_n, rest_none) =
            on.iter().filter(|&&k| k != first).map(|&k| unlinked(&passes[k])).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        let begun = n > 0 && none as f64 >= BEGUN_UNLINKED_SHARE * n as f64;
        let others_link = rest_n > 0 && (rest_n - rest_none) as f64 >= BEGUN_UNLINKED_SHARE * rest_n as f64;
        if begun && others_link {
            passes[first].incomplete = true;
        }
    }
}

/// Share of a first pass's kernels with no launch in the trace that says the profiler started
/// inside that pass (and of the other passes' kernels that must link, for the comparison to hold).
const BEGUN_UNLINKED_SHARE: f64 = 0.9;

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
    let gpu_rows = crate::analysis::launches::rows_per_launch(trace, 0..trace.gpu.len());
    let kernel_launch = crate::analysis::launches::kernel_launches(trace);
    let is_kernel_launch = |i: usize| kernel_launch[i];
    // Times at which a kernel was launched (or an op that launches kernels ran) with no kernel here.
    let mut lost: Vec<i64> = (0..l.len()).filter(|&i| gpu_rows[i] == 0 && is_kernel_launch(i)).map(|i| l.ts[i]).collect();
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

#[cfg(test)]
mod threshold_tests {
    use super::{adaptive_threshold, PassEvidence};

    fn passes(m: &[u64]) -> Vec<PassEvidence> {
        m.iter().map(|&m| PassEvidence { gemm_max_tokens: Some(m), ..Default::default() }).collect()
    }

    #[test]
    fn a_large_decode_batch_raises_the_threshold_above_it() {
        // 64 requests decoding, prefills of 2 000 and 3 000 tokens.
        assert_eq!(adaptive_threshold(&passes(&[64, 64, 2000, 64, 3000]), 10).0, 64);
    }

    #[test]
    fn small_batches_or_no_gap_keep_the_default() {
        assert_eq!(adaptive_threshold(&passes(&[4, 4, 2048]), 10).0, 10, "single-digit decode batches");
        assert_eq!(adaptive_threshold(&passes(&[512, 600, 700]), 10).0, 10, "no gap: all prefill");
        assert_eq!(adaptive_threshold(&[], 10).0, 10);
    }
}

#[cfg(test)]
mod union_tests {
    use super::evidence::{Basis, Method, Vote};
    use super::{union, Phase, PhaseRules};

    fn v(method: Method, phase: Phase, strength: f64, amount: bool) -> Vote {
        Vote { method, phase, strength, why: "x".into(), basis: Basis::Measured, amount }
    }

    #[test]
    fn prefill_votes_by_amount_back_a_mixed_step_once_a_vote_names_it() {
        let r = PhaseRules::builtin();
        let heavy = v(Method::OperationFrequency, Phase::Prefill, 0.9, true);
        let wide = v(Method::KernelNames, Phase::Prefill, 0.5, true);
        // Both attention kinds in one step, heavy and wide: a prefill with decodes beside it.
        let both = v(Method::AttentionPatterns, Phase::Mixed, 0.7, false);
        assert_eq!(union(&[both.clone(), heavy.clone(), wide.clone()], r).0, Phase::Mixed);
        // Nothing names mixed: heavy and wide say prefill.
        assert_eq!(union(&[heavy.clone(), wide.clone()], r).0, Phase::Prefill);
        // The engine's annotation says prefill: it outweighs the attention kinds.
        let stated = v(Method::FrameworkApis, Phase::Prefill, 1.0, false);
        assert_eq!(union(&[stated, both, heavy], r).0, Phase::Prefill);
    }
}
