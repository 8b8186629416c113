//! What kind of workload a trace is — LLM inference, the denoising loop of a diffusion model, one
//! forward of some other model, training, or unknown — with the evidence, so that prefill and
//! decode are only said of LLM inference.
//!
//! A diffusion model runs the same network once per denoising step, so each step's kernel
//! sequence repeats exactly ([`repetition`]); around the steps run other stages (text
//! encoders before, the VAE decoder after). What tells such steps from LLM decode steps: no token
//! is sampled between them (no argmax / multinomial / sampler), no token embedding is looked up
//! in each, no serving engine annotates them, and no engine or generation loop shows in the names.
//! Repetition alone could still be a benchmark loop over any model, so a diffusion pipeline must
//! also show itself: in its names (`diffusers`, `vae`, `FluxTransformer`…) or in the convolutions
//! of a VAE decoder after the steps (either one is enough: compiled, graph-replayed steps hide
//! the names).
//!
//! Module order: [`crate::analysis::steps`] (rules, pass cutting, the evidence of generation) is
//! below this module and [`crate::analysis::phases`]; phases ask this module whether a device is
//! a diffusion loop before they vote, and for the [`verdict`] after; this module never reads phases.
//! [`inference_check`] tells training and non-LLM work before either.

pub mod inference_check;
pub mod repetition;

use crate::analysis::categories::KernelCategories;
use crate::analysis::steps::generation::{short, NameEvidence};
use crate::analysis::steps::passes::{cpu_time, op_chain, PassSource, Segment};
use crate::analysis::steps::rules::{any_match, PhaseRules};
use crate::analysis::steps::Phase;
use crate::model::{GpuKind, OpKind, Trace};
use repetition::{find_steps, Repeated};
use serde::Serialize;

/// The kind of workload (`summary --json` field `workload`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum WorkloadKind {
    /// LLM inference: prefill, decode or mixed steps.
    LlmInference,
    /// A diffusion model (or other iterative denoiser): repeated denoising steps.
    Diffusion,
    /// One forward of a model that is neither (an encoder, a vision network).
    SinglePass,
    /// Training: backward and optimizer work.
    Training,
    /// None of the above could be told.
    #[default]
    Unknown,
}

impl WorkloadKind {
    /// The name used in JSON and tables.
    pub fn as_str(self) -> &'static str {
        match self {
            WorkloadKind::LlmInference => "llm_inference",
            WorkloadKind::Diffusion => "diffusion",
            WorkloadKind::SinglePass => "single_pass",
            WorkloadKind::Training => "training",
            WorkloadKind::Unknown => "unknown",
        }
    }
}

/// The verdict and what it rests on.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Workload {
    /// The kind of workload.
    pub kind: WorkloadKind,
    /// One sentence per piece of evidence, strongest first.
    pub evidence: Vec<String>,
}

/// One piece of a device's rows once its steps are known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece {
    /// A repeated step.
    Step,
    /// Work before the first step.
    Before,
    /// Work after the last step.
    After,
}

/// A device cut into its stages and repeated steps.
#[derive(Debug, Clone)]
pub struct DiffusionCut {
    /// Segments in time order, each with what it is.
    pub segments: Vec<(Segment, Piece)>,
    /// Share of step positions where every step runs the same kernel.
    pub alignment: f64,
    /// Kernels per step (the shortest step).
    pub step_kernels: usize,
}

/// Cuts one device's rows (any order) into stages and steps when its kernels repeat as whole steps.
pub fn cut_steps(
    trace: &Trace,
    categories: &KernelCategories,
    rules: &PhaseRules,
    device: i32,
    rows: &mut [u32],
) -> Option<DiffusionCut> {
    let g = &trace.gpu;
    crate::analysis::rows::sort_by_time(&g.ts, rows);
    let kernels: Vec<u32> = rows.iter().copied().filter(|&r| g.kind[r as usize] == GpuKind::Kernel).collect();
    let names: Vec<u32> = kernels.iter().map(|&r| g.name[r as usize]).collect();
    let attention: Vec<bool> = kernels.iter().map(|&r| categories.family(r as usize) == "Attention").collect();
    let Repeated { steps, alignment } = find_steps(&names, &attention, &rules.workload)?;
    let step_kernels = steps.iter().map(|s| s.len()).min().unwrap_or(0);
    // Boundaries as GPU start times: every row (copies too) goes to the piece its start falls in.
    let first = steps[0].start;
    let after = steps[steps.len() - 1].end;
    let mut bounds: Vec<(i64, Piece)> = Vec::new();
    if first > 0 {
        bounds.push((i64::MIN, Piece::Before));
    }
    for s in &steps {
        let at = if bounds.is_empty() { i64::MIN } else { g.ts[kernels[s.start] as usize] };
        bounds.push((at, Piece::Step));
    }
    if after < kernels.len() {
        bounds.push((g.ts[kernels[after] as usize], Piece::After));
    }
    let mut pieces: Vec<Vec<u32>> = vec![Vec::new(); bounds.len()];
    for &r in rows.iter() {
        let k = bounds.partition_point(|&(t, _)| t <= g.ts[r as usize]).max(1) - 1;
        pieces[k].push(r);
    }
    let segments = pieces
        .into_iter()
        .zip(bounds)
        .filter(|(rows, _)| !rows.is_empty())
        .map(|(rows, (_, piece))| (Segment { device, rows, step: None, source: PassSource::Repetition, structure: false }, piece))
        .collect();
    Some(DiffusionCut { segments, alignment, step_kernels })
}

/// Whether a device's repeated steps are a diffusion loop, with the evidence; `None` when the
/// steps show LLM generation (then they are decode steps, voted on as usual) or nothing shows a
/// diffusion pipeline (then the passes are voted on as usual too). Asked only when
/// `generation_shown` is false.
pub fn diffusion_evidence(
    trace: &Trace,
    categories: &KernelCategories,
    rules: &PhaseRules,
    names: &NameEvidence,
    cut: &DiffusionCut,
) -> Option<Vec<String>> {
    let steps = cut.segments.iter().filter(|(_, p)| *p == Piece::Step).count();
    // A generation loop samples a token after every step, while the steps run; an argmax before
    // them (CLIP's text encoders pool at the end-of-text token with argmax) is no loop.
    let sampled_per_step = {
        let cpu: Vec<i64> = cut
            .segments
            .iter()
            .filter(|(_, p)| *p == Piece::Step)
            .flat_map(|(seg, _)| seg.rows.iter().filter_map(|&r| cpu_time(trace, r as usize)))
            .collect();
        let (from, to) = (cpu.iter().min().copied().unwrap_or(0), cpu.iter().max().copied().unwrap_or(-1));
        let during = names.sampling_ts.iter().filter(|&&t| t >= from && t <= to).count();
        during >= (steps / 2).max(1)
    };
    // An LLM forward starts by looking up token embeddings; a denoising step does not (the text
    // encoders before the steps do, once).
    let embeds_per_step = names.embeddings >= steps && {
        let depth = rules.thresholds.max_op_depth;
        let embeds = |rows: &[u32]| {
            rows.iter().any(|&r| {
                op_chain(trace, r as usize, depth)
                    .any(|o| trace.ops.kind[o] == OpKind::CpuOp && any_match(&rules.start_ops, trace.name(trace.ops.name[o])))
            })
        };
        let with = cut.segments.iter().filter(|(seg, piece)| *piece == Piece::Step && embeds(&seg.rows)).count();
        with * 2 >= steps
    };
    if sampled_per_step || embeds_per_step {
        return None;
    }
    // Repetition alone could be a benchmark loop of any model's forward: a diffusion pipeline
    // also shows in its names or in the convolutions of a VAE decoder after the steps.
    let vae_after = cut
        .segments
        .iter()
        .any(|(seg, piece)| *piece == Piece::After && conv_share(trace, categories, &seg.rows) >= VAE_CONV_SHARE);
    if names.diffusion.is_none() && !vae_after {
        return None;
    }
    let mut evidence = vec![
        format!(
            "{steps} steps run the same {}-kernel sequence ({:.0}% of positions identical)",
            cut.step_kernels,
            cut.alignment * 100.0
        ),
        "no token is sampled after each step (no argmax, multinomial or sampler) and no LLM engine shows in the names".into(),
    ];
    if let Some(name) = &names.diffusion {
        evidence.push(format!("diffusion pipeline names: {name}"));
    }
    if vae_after {
        evidence.push("convolutions after the steps (a VAE decoder)".into());
    }
    Some(evidence)
}

/// A stage after the steps with at least this share of its kernel time in convolutions is a VAE
/// decoder (or another convolutional decoder).
const VAE_CONV_SHARE: f64 = 0.2;

/// Share of kernel time in convolutions.
fn conv_share(trace: &Trace, categories: &KernelCategories, rows: &[u32]) -> f64 {
    let g = &trace.gpu;
    let (mut conv, mut all) = (0i64, 0i64);
    for &r in rows {
        let r = r as usize;
        if g.kind[r] != GpuKind::Kernel {
            continue;
        }
        all += g.dur[r];
        if categories.name(r).starts_with("Conv") {
            conv += g.dur[r];
        }
    }
    if all > 0 {
        conv as f64 / all as f64
    } else {
        0.0
    }
}

/// Names a stage around the steps by what it runs.
pub fn stage_label(trace: &Trace, categories: &KernelCategories, rows: &[u32], piece: Piece) -> String {
    let when = if piece == Piece::Before { "before the steps" } else { "after the steps" };
    let attention = rows.iter().any(|&r| categories.family(r as usize) == "Attention");
    let what = if conv_share(trace, categories, rows) >= VAE_CONV_SHARE {
        "decoder with convolutions (VAE)"
    } else if attention && piece == Piece::Before {
        "encoders (text encoders)"
    } else if attention {
        "transformer work"
    } else {
        "other work"
    };
    let ops = stage_op_hint(trace, rows);
    match ops {
        Some(op) => format!("{when}: {what}, e.g. {op}"),
        None => format!("{when}: {what}"),
    }
}

/// The outermost Python frame or CPU op of a stage's first linked kernel that says something and
/// belongs to the stage: it lasts at most half again the stage's own time (launch of its first
/// kernel to end of its last), so a frame around the whole pipeline (`__call__`,
/// `check_naive_forward`) is passed over for the encoder's or decoder's own.
fn stage_op_hint(trace: &Trace, rows: &[u32]) -> Option<String> {
    let g = &trace.gpu;
    let start = rows.iter().map(|&r| cpu_time(trace, r as usize).unwrap_or(g.ts[r as usize])).min()?;
    let end = rows.iter().map(|&r| g.end(r as usize)).max()?;
    let longest = (end - start).saturating_mul(3) / 2;
    let row = *rows.iter().find(|&&r| g.cpu_op[r as usize] != crate::model::NONE)? as usize;
    let chain: Vec<usize> = op_chain(trace, row, 64).collect();
    chain
        .iter()
        .rev()
        .filter(|&&o| trace.ops.dur[o] <= longest)
        .map(|&o| trace.name(trace.ops.name[o]))
        .find(|n| n.contains("forward") || n.contains("encode") || n.contains("decode"))
        // A Python frame's file, not its whole path: `pipeline_flux.py(311): encode_prompt`.
        .map(|n| short(n.rsplit_once('/').filter(|(_, file)| file.contains(".py(")).map_or(n, |(_, file)| file)))
}

/// A segment and, for a diffusion device, its place in the loop.
#[derive(Debug, Clone)]
pub struct Placed {
    /// The segment (a pass to be).
    pub segment: Segment,
    /// Its place in a diffusion loop; `None` on a device that runs no such loop.
    pub diffusion: Option<DiffusionPlace>,
}

/// Where a segment of a diffusion device sits.
#[derive(Debug, Clone, Copy)]
pub struct DiffusionPlace {
    /// A step of the loop, or a stage before or after it.
    pub piece: Piece,
    /// How alike the loop's steps are (0 to 1).
    pub alignment: f64,
}

/// Each device's segments, or for a device whose kernels repeat as a diffusion loop its steps and
/// the stages around them, each with its piece and the steps' alignment; and the evidence of the
/// first diffusion device.
pub fn diffusion_segments(
    trace: &Trace,
    categories: &KernelCategories,
    rules: &PhaseRules,
    names: &NameEvidence,
    segs: Vec<Segment>,
) -> (Vec<Placed>, Option<Vec<String>>) {
    let mut devices: std::collections::BTreeMap<i32, Vec<u32>> = Default::default();
    for s in &segs {
        devices.entry(s.device).or_default().extend_from_slice(&s.rows);
    }
    let mut evidence = None;
    let mut cuts = Vec::new();
    for (device, mut rows) in devices {
        let Some(cut) = cut_steps(trace, categories, rules, device, &mut rows) else { continue };
        let Some(found) = diffusion_evidence(trace, categories, rules, names, &cut) else { continue };
        evidence.get_or_insert(found);
        cuts.push((device, cut));
    }
    let mut out: Vec<Placed> = segs
        .into_iter()
        .filter(|s| !cuts.iter().any(|(d, _)| *d == s.device))
        .map(|segment| Placed { segment, diffusion: None })
        .collect();
    for (_, cut) in cuts {
        let alignment = cut.alignment;
        out.extend(
            cut.segments
                .into_iter()
                .map(|(segment, piece)| Placed { segment, diffusion: Some(DiffusionPlace { piece, alignment }) }),
        );
    }
    (out, evidence)
}

/// What the verdict needs of a pass.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PassFacts {
    /// The phase the votes gave it.
    pub phase: Phase,
    /// The trace starts or stops inside it.
    pub incomplete: bool,
    /// Output columns of its LM head, when one ran once in it.
    pub lm_head_columns: Option<u64>,
}

/// Fewest output columns of a GEMM read as an LM head over a vocabulary (Llama 2 has 32000;
/// BERT's 30522-word masked-LM head and an encoder's pooler stay below).
pub const VOCABULARY_MIN: u64 = 32_000;

/// LLM inference when the trace shows generation positively: a serving engine's step annotations,
/// tokens sampled, an engine's or generation loop's names, kernels that write a KV cache or attend
/// over a paged or decode cache, or an LM head over a vocabulary. Decode votes from kernel names or
/// run frequency alone are no such sign: a run with nothing else is not called an LLM (its passes
/// lose their prefill/decode labels). One forward over whole inputs is a single-pass model.
///
/// Returns the verdict, and whether the passes' phases must be dropped (set to unknown).
pub fn verdict(
    passes: &[PassFacts],
    names: &NameEvidence,
    annotated: bool,
    generation_kernels: Option<(String, usize)>,
) -> (Workload, bool) {
    let mut evidence = Vec::new();
    if annotated {
        evidence.push("serving-engine step annotations".to_string());
    }
    if let Some(name) = &names.sampler {
        evidence.push(format!("tokens sampled {} times ({name})", names.sampling_ts.len()));
    }
    if let Some(name) = &names.llm {
        evidence.push(format!("LLM engine or generation names: {name}"));
    }
    if let Some((category, n)) = &generation_kernels {
        evidence.push(format!("{n} {category} kernels"));
    }
    let complete: Vec<&PassFacts> = passes.iter().filter(|p| !p.incomplete).collect();
    let lm_head = complete.iter().filter_map(|p| p.lm_head_columns).filter(|&n| n >= VOCABULARY_MIN).max();
    let count = |ph: Phase| passes.iter().filter(|p| p.phase == ph).count();
    let (prefill, decode, mixed) = (count(Phase::Prefill), count(Phase::Decode), count(Phase::Mixed));
    if !evidence.is_empty() {
        if decode + mixed > 0 {
            evidence.push(format!("{prefill} prefill, {decode} decode and {mixed} mixed steps"));
        }
        return (Workload { kind: WorkloadKind::LlmInference, evidence }, false);
    }
    let all_prefill = !complete.is_empty() && complete.iter().all(|p| p.phase == Phase::Prefill);
    let forwards = match complete.len() {
        1 => "one forward".to_string(),
        n => format!("{n} forwards"),
    };
    if decode + mixed > 0 {
        // Only weak votes said decode: no sign of generation backs them.
        let reason = format!(
            "{} passes, {decode} of them decode-like and {mixed} mixed by kernel names or run frequency alone, with no sign \
             of token generation (no token sampled, no KV-cache write, no paged or decode attention, no LM head over a \
             vocabulary, no engine): not called LLM inference",
            passes.len()
        );
        return (Workload { kind: WorkloadKind::Unknown, evidence: vec![reason] }, true);
    }
    let workload = match (all_prefill, lm_head) {
        // Forwards cut at embedding lookups, with nothing decoded or sampled: prompts of a language
        // model when they end in an LM head over a vocabulary, else an encoder's inputs (BERT, a
        // CLIP or OWL-ViT text and image tower).
        (true, Some(n)) => Workload {
            kind: WorkloadKind::LlmInference,
            evidence: vec![format!(
                "{forwards} over prompts that end in an LM head over {n} columns (a vocabulary): a language model's \
                 prefill, with no token sampled in the trace"
            )],
        },
        (true, None) => Workload {
            kind: WorkloadKind::SinglePass,
            evidence: vec![format!(
                "{forwards} over whole inputs with attention, and nothing of token generation (no decode step, no \
                 sampling, no LM head over a vocabulary, no engine)"
            )],
        },
        _ => Workload {
            kind: WorkloadKind::Unknown,
            evidence: vec![format!("{} passes with no sign of token generation or of repeated denoising steps", passes.len())],
        },
    };
    (workload, false)
}
