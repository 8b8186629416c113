//! What kind of workload a trace is — LLM inference, the denoising loop of a diffusion model, one
//! forward of some other model, training, or unknown — with the evidence, so that prefill and
//! decode are only said of LLM inference.
//!
//! A diffusion model runs the same network once per denoising step, so each step's kernel
//! sequence repeats exactly ([`super::repetition`]); around the steps run other stages (text
//! encoders before, the VAE decoder after). What tells such steps from LLM decode steps: no token
//! is sampled between them (no argmax / multinomial / sampler), no token embedding is looked up
//! in each, no serving engine annotates them, and no engine or generation loop shows in the names.
//! Repetition alone could still be a benchmark loop over any model, so a diffusion pipeline must
//! also show itself: in its names (`diffusers`, `vae`, `FluxTransformer`…) or in the convolutions
//! of a VAE decoder after the steps (either one is enough: compiled, graph-replayed steps hide
//! the names).

use super::passes::{cpu_time, op_chain, PassSource, Segment};
use super::repetition::{find_steps, Repeated};
use super::rules::{any_match, PhaseRules};
use crate::analysis::categories::KernelCategories;
use crate::analysis::per_name::PerName;
use crate::model::{GpuKind, OpKind, Trace};
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
    pub kind: WorkloadKind,
    /// One sentence per piece of evidence, strongest first.
    pub evidence: Vec<String>,
}

/// What the trace's names say, counted once per trace.
#[derive(Debug, Clone, Default)]
pub struct NameEvidence {
    /// The name of the first CPU op that samples a token (a step-end marker), if any.
    pub sampler: Option<String>,
    /// When each such op started (CPU clock, ns): one entry per sampled token.
    pub sampling_ts: Vec<i64>,
    /// A name that shows a diffusion pipeline.
    pub diffusion: Option<String>,
    /// A name that shows an LLM engine or generation loop.
    pub llm: Option<String>,
    /// CPU ops that look up token embeddings (the step-start markers).
    pub embeddings: usize,
}

/// Scans CPU op, Python frame and annotation names once.
pub fn name_evidence(trace: &Trace, rules: &PhaseRules) -> NameEvidence {
    let w = &rules.workload;
    let mut seen: PerName<u8> = PerName::new(trace.names.len());
    let mut out = NameEvidence::default();
    for i in 0..trace.ops.len() {
        let id = trace.ops.name[i];
        let class = *seen.get_or_insert_with(id, || {
            let name = trace.name(id);
            (any_match(&rules.end_ops, name) as u8)
                | ((any_match(&w.diffusion_names, name) as u8) << 1)
                | ((any_match(&w.llm_names, name) as u8) << 2)
                | ((any_match(&rules.start_ops, name) as u8) << 3)
        });
        if class & 8 != 0 && trace.ops.kind[i] == OpKind::CpuOp {
            out.embeddings += 1;
        }
        if class & 1 != 0 && trace.ops.kind[i] == OpKind::CpuOp && !rules.end_op_picks_an_index(trace, i) {
            out.sampling_ts.push(trace.ops.ts[i]);
            out.sampler.get_or_insert_with(|| trace.name(id).to_string());
        }
        if class & 2 != 0 && out.diffusion.is_none() {
            out.diffusion = Some(short(trace.name(id)));
        }
        if class & 4 != 0 && out.llm.is_none() {
            out.llm = Some(short(trace.name(id)));
        }
    }
    out
}

/// Whether the names alone already show LLM generation, before any repetition is looked for:
/// steps annotated by a serving engine, an engine's or generation loop's names, or many tokens
/// sampled. (A diffusion pipeline's text encoders may pool with argmax a few times, once per
/// prompt and encoder, so only many samples count here; fewer are judged against the steps in
/// [`diffusion_evidence`].) The repetition search costs a pass over every kernel of a large trace.
pub fn generation_shown(names: &NameEvidence, engine_steps: bool) -> bool {
    engine_steps || names.llm.is_some() || names.sampling_ts.len() >= 16
}

/// A name as evidence: at most 81 characters.
fn short(name: &str) -> String {
    crate::support::text::ellipsis(name, 81)
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
        .map(|(rows, (_, piece))| (Segment { device, rows, step: None, source: PassSource::Repetition }, piece))
        .collect();
    Some(DiffusionCut { segments, alignment, step_kernels })
}

/// Whether a device's repeated steps are a diffusion loop, with the evidence; `None` when the
/// steps show LLM generation (then they are decode steps, voted on as usual) or nothing shows a
/// diffusion pipeline (then the passes are voted on as usual too). Asked only when
/// [`generation_shown`] is false.
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
