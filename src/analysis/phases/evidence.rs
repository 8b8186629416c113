//! Phase evidence of one pass, and the vote each method casts from it.
//!
//! Methods (as in TraceLens' phase detection, extended):
//! - `framework_apis`: step annotations state the phase; graph replays hint decode.
//! - `gemm_params`: GEMM M from `Input Dims` (tokens in the step; S of `[B, S, K]` when 3-D).
//! - `attention_patterns`: SDPA query length (Sq = 1 in decode), attention kernel kinds.
//! - `kernel_names`: explicit words (`_decode_`, `_prefill_`) and skinny GEMM tiles.
//! - `operation_frequency`: decode steps are many, short and alike; prefill stands out.

use super::rules::{PhaseRules, ShapeKind};
use super::Phase;
use crate::analysis::per_name::PerName;
use crate::analysis::steps::annotations::{StepAnnotation, StepInfo};
use crate::analysis::steps::passes::{op_chain, Segment};
use crate::model::{GpuKind, OpKind, Trace};

pub use crate::analysis::options::{Method, METHODS};

/// What each method weighs in the union: the rules' own weights.
impl Method {
    /// Voting weight in `union`.
    pub fn weight(self, rules: &PhaseRules) -> f64 {
        let w = &rules.weights;
        match self {
            Method::FrameworkApis => w.framework_apis,
            Method::AttentionPatterns => w.attention_patterns,
            Method::GemmParams => w.gemm_params,
            Method::KernelNames => w.kernel_names,
            Method::OperationFrequency => w.operation_frequency,
        }
    }
}

/// What a vote rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// Something the trace states or measures: a step annotation, GEMM or attention shapes.
    Measured,
    /// The pass against the other passes: run frequency, attention kernels the run lacks.
    Relative,
    /// Names alone: kernel-name words, GEMM tiles, attention kernel kinds, a graph replay.
    Names,
}

/// One method's vote on one pass.
#[derive(Debug, Clone, PartialEq)]
pub struct Vote {
    /// The method that voted.
    pub method: Method,
    /// The phase it votes for.
    pub phase: Phase,
    /// How sure the method is, in [0, 1].
    pub strength: f64,
    /// Human-readable reason.
    pub why: String,
    /// What the vote rests on.
    pub basis: Basis,
    /// The vote measures how much work the pass did (many tokens by GEMM M, wide GEMM tiles, a
    /// heavy kernel time), not what kind: a prefill vote of this sort backs a mixed step as much,
    /// since a prefill chunk with decodes beside it is as heavy.
    pub amount: bool,
}

impl Vote {
    /// Whether this vote backs `phase`: it names it, or it is a prefill vote by amount of work
    /// and `phase` is mixed.
    pub fn backs(&self, phase: Phase) -> bool {
        self.phase == phase || (phase == Phase::Mixed && self.phase == Phase::Prefill && self.amount)
    }
}

/// What one pass shows.
#[derive(Debug, Clone, Default)]
pub struct PassEvidence {
    /// The pass's device.
    pub device: i32,
    /// Kernels of the pass.
    pub kernels: usize,
    /// Their summed duration (ns).
    pub kernel_time_ns: i64,
    /// Kernels replayed from a CUDA/HIP graph.
    pub graph_kernels: usize,
    /// Kernels replayed by graph launches that replay a whole forward (at least
    /// `full_graph_min_kernels` kernels each): what engines capture for decode. vLLM's piecewise
    /// graphs (a dozen kernels between attention calls) replay prefill and mixed steps too.
    pub full_graph_kernels: usize,
    /// What the pass's step annotation says (kind, tokens, batch), when it has one.
    pub annotation: Option<StepInfo>,
    /// Largest GEMM M (tokens) seen in the pass.
    pub gemm_max_tokens: Option<u64>,
    /// Largest sequence length of `[B, S, K]` GEMM activations.
    pub gemm_max_seq: Option<u64>,
    /// Batch of that activation (B of `[B, S, K]`).
    pub gemm_batch: Option<u64>,
    /// Largest T of packed `[T, heads, head_dim]` attention / KV-cache inputs (vLLM, FlashAttention
    /// varlen): the step's tokens, seen even when the GEMMs are replayed from a graph.
    pub varlen_tokens: Option<u64>,
    /// The widest GEMM of the pass (largest N, the LM head when it runs once): N, its largest M,
    /// and how many GEMM ops had that N.
    pub widest_gemm: Option<WidestGemm>,
    /// SDPA calls with one query token, with more, and the largest query length.
    pub sdpa_q1: usize,
    /// SDPA calls with more than one query token.
    pub sdpa_qn: usize,
    /// The largest SDPA query length.
    pub sdpa_max_q: u64,
    /// SDPA calls whose query length equals the key length (no cache before: a prompt).
    pub sdpa_q_eq_k: usize,
    /// Per name-hint method: strongest prefill and decode hint strengths.
    pub attention_hint: [f64; 2],
    /// Per name-hint method: strongest prefill and decode hint strengths of kernel names.
    pub name_hint: [f64; 2],
    /// Attention hint explanations.
    pub hint_names: Vec<String>,
    /// GEMM kernels with a readable tile, with a skinny token tile, with a wide one.
    pub tiles: usize,
    /// GEMM kernels with a skinny token tile.
    pub skinny_tiles: usize,
    /// GEMM kernels with a wide token tile.
    pub wide_tiles: usize,
    /// Passes on the same device, and this pass's kernel time over their median (set by [`relate_passes`]).
    pub passes_on_device: usize,
    /// This pass's kernel time over the median of its device's passes.
    pub time_ratio: Option<f64>,
    /// True when most passes on the device replay graphs but this one runs eagerly.
    pub eager_among_graphs: bool,
    /// Distinct attention kernel names of the pass (ids, sorted).
    pub attention_names: Vec<u32>,
    /// How the pass's attention kernels compare with those most passes on its device run (set by
    /// [`relate_passes`]).
    pub attention_contrast: Option<AttentionContrast>,
    /// The engine's limit on sequences per step, when the trace's metadata states it.
    pub batch_limit: Option<BatchLimit>,
}

/// An engine's limit on the sequences one step batches, read from the trace's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchLimit {
    /// The limit.
    pub sequences: u64,
    /// The metadata key that states it (a dotted path: `vllm_config.scheduler_config.max_num_seqs`).
    pub key: String,
}

/// The smallest batch limit the trace's metadata states ([`PhaseRules::batch_limit_keys`]).
pub fn batch_limit(trace: &Trace, rules: &PhaseRules) -> Option<BatchLimit> {
    trace
        .meta
        .other
        .iter()
        .filter(|(k, _)| rules.batch_limit_keys.iter().any(|r| r.is_match(k)))
        .filter_map(|(k, v)| {
            Some(BatchLimit { sequences: v.trim_matches('"').parse().ok().filter(|&n: &u64| n > 0)?, key: k.clone() })
        })
        .min_by_key(|b| b.sequences)
}

/// A pass's attention kernels against those of the alike passes on its device (the decode run).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttentionContrast {
    /// Kernels the alike passes never run, and not all of theirs (a prefill's own attention path;
    /// generic kernels both paths share, such as KV-cache writes, may be there).
    OwnInstead,
    /// Kernels of its own beside every one of the alike passes' (prefill work batched with the
    /// decodes the alike passes' kernels do; a mixed step when those are named decode attention).
    OwnAndRuns,
}

/// The GEMM with the most output columns in a pass.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WidestGemm {
    /// Output columns (N).
    pub n: u64,
    /// Rows (M): for the LM head, the rows whose logits are computed, one per sampled request.
    pub m: u64,
    /// GEMM ops with this N in the pass (1 for an LM head).
    pub ops: u32,
}

impl PassEvidence {
    /// At least half the pass's kernels are replayed by whole-forward graph launches (what
    /// engines capture for decode batch sizes).
    pub fn replayed_whole(&self) -> bool {
        self.kernels > 0 && self.full_graph_kernels * 2 >= self.kernels
    }

    /// Tokens in the step as its shapes show them: the larger of the GEMM M and the packed
    /// attention inputs' T.
    pub fn shape_tokens(&self) -> Option<u64> {
        match (self.gemm_max_tokens, self.varlen_tokens) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }

    /// Rows the LM head computes logits for (one per request that samples a token): the M of the
    /// widest GEMM when it runs once in the pass (a GEMM of every layer runs many times).
    pub fn sampled_rows(&self) -> Option<u64> {
        self.widest_gemm.filter(|w| w.ops == 1 && w.m > 0).map(|w| w.m)
    }
}

/// Caches of per-name decisions shared by all passes.
#[derive(Default)]
pub struct EvidenceCache {
    dims: PerName<Vec<Vec<i64>>>,
    shape_op: PerName<Option<usize>>,
    hints: PerName<Vec<usize>>,
    tile: PerName<Option<u32>>,
    attention: PerName<bool>,
    /// Per CPU op: the number of the last pass that looked at it (each op counts once per pass).
    op_seen_in: Vec<u32>,
    /// Passes gathered so far.
    passes: u32,
    /// Kernels each runtime launch replays (filled at the first graph-replayed kernel).
    replayed: Option<Vec<u32>>,
}

impl EvidenceCache {
    /// Empty caches sized for `trace`.
    pub fn new(trace: &Trace) -> Self {
        let names = trace.names.len();
        EvidenceCache {
            dims: PerName::new(names),
            shape_op: PerName::new(names),
            hints: PerName::new(names),
            tile: PerName::new(names),
            attention: PerName::new(names),
            op_seen_in: vec![0; trace.ops.len()],
            passes: 0,
            replayed: None,
        }
    }

    /// Kernels replayed by launch `l` (a graph launch).
    fn replayed_by(&mut self, trace: &Trace, l: u32) -> u32 {
        self.replayed.get_or_insert_with(|| crate::analysis::launches::rows_per_launch(trace, trace.kernel_rows()))[l as usize]
    }
}

const PREFILL: usize = 0;
const DECODE: usize = 1;

/// Gathers the evidence of one pass.
pub fn gather(
    trace: &Trace,
    rules: &PhaseRules,
    seg: &Segment,
    steps: &[StepAnnotation],
    attention_category: &[bool],
    categories: &crate::analysis::categories::KernelCategories,
    cache: &mut EvidenceCache,
) -> PassEvidence {
    let g = &trace.gpu;
    let mut ev = PassEvidence { device: seg.device, annotation: seg.step.map(|s| steps[s].info.clone()), ..Default::default() };
    cache.passes += 1;
    let pass = cache.passes;
    if cache.op_seen_in.len() < trace.ops.len() {
        cache.op_seen_in.resize(trace.ops.len(), 0);
    }
    let mut hint_seen = vec![false; rules.name_hints.len()];
    for &r in &seg.rows {
        let r = r as usize;
        if g.kind[r] != GpuKind::Kernel {
            continue;
        }
        ev.kernels += 1;
        ev.kernel_time_ns += g.dur[r];
        let l = g.launch[r];
        if l != crate::model::NONE && trace.launches.is_graph[l as usize] {
            ev.graph_kernels += 1;
            if cache.replayed_by(trace, l) as usize >= rules.full_graph_min_kernels {
                ev.full_graph_kernels += 1;
            }
        }
        // One GEMM is often several nested ops (linear > matmul > mm): only the innermost one
        // with shapes counts towards the widest GEMM.
        let mut gemm_counted = false;
        for o in op_chain(trace, r, rules.thresholds.max_op_depth) {
            if trace.ops.kind[o] != OpKind::CpuOp || cache.op_seen_in[o] == pass {
                continue;
            }
            cache.op_seen_in[o] = pass;
            if let Some((n, m)) = shape_evidence(trace, rules, o, cache, &mut ev) {
                if !gemm_counted {
                    gemm_counted = true;
                    ev.widest_gemm = match ev.widest_gemm {
                        Some(w) if w.n > n => Some(w),
                        Some(w) if w.n == n => Some(WidestGemm { m: w.m.max(m), ops: w.ops + 1, ..w }),
                        _ => Some(WidestGemm { n, m, ops: 1 }),
                    };
                }
            }
        }
        let name_id = g.name[r];
        let hints = cache.hints.get_or_insert_with(name_id, || {
            let n = trace.name(name_id);
            rules.name_hints.iter().enumerate().filter(|(_, h)| h.holds(n)).map(|(k, _)| k).collect()
        });
        for &k in hints.iter() {
            let h = &rules.name_hints[k];
            let slot = if h.phase == Phase::Prefill { PREFILL } else { DECODE };
            let target = if h.method == "attention_patterns" { &mut ev.attention_hint } else { &mut ev.name_hint };
            target[slot] = target[slot].max(h.strength);
            if !hint_seen[k] {
                hint_seen[k] = true;
                ev.hint_names.push(format!("{} ~ {}", h.regex.as_str(), h.phase.as_str()));
            }
        }
        let attention = attention_category.get(categories.of_row.get(r).copied().unwrap_or(u16::MAX) as usize) == Some(&true)
            || *cache
                .attention
                .get_or_insert_with(name_id, || super::rules::any_match(&rules.attention_kernels, trace.name(name_id)));
        if attention {
            ev.attention_names.push(name_id);
        }
        let tile = *cache.tile.get_or_insert_with(name_id, || {
            let n = trace.name(name_id);
            rules.gemm_tile_patterns.iter().find_map(|t| {
                let c = t.regex.captures(n)?;
                c.name(&t.tokens_group)?.as_str().parse::<u32>().ok()
            })
        });
        if let Some(t) = tile {
            ev.tiles += 1;
            if t <= rules.gemm_tiles.skinny_max {
                ev.skinny_tiles += 1;
            }
            if t >= rules.gemm_tiles.wide_min {
                ev.wide_tiles += 1;
            }
        }
    }
    ev.attention_names.sort_unstable();
    ev.attention_names.dedup();
    ev
}

/// Records what op `o`'s shapes say; returns `(N, M)` when it is a GEMM.
fn shape_evidence(
    trace: &Trace,
    rules: &PhaseRules,
    o: usize,
    cache: &mut EvidenceCache,
    ev: &mut PassEvidence,
) -> Option<(u64, u64)> {
    let name_id = trace.ops.name[o];
    let k = (*cache.shape_op.get_or_insert_with(name_id, || {
        let n = trace.name(name_id);
        rules.shape_ops.iter().position(|s| s.regex.is_match(n))
    }))?;
    let spec = &rules.shape_ops[k];
    let dims_id = trace.ops.input_dims[o];
    let dims = cache.dims.get_or_insert_with(dims_id, || crate::analysis::shapes::parse_dims(trace.name(dims_id)));
    let x = dims.get(spec.input)?;
    let pos = |v: i64| u64::try_from(v).ok();
    match spec.kind {
        ShapeKind::Linear => {
            // Activations [.., S, K] times a 2-D weight sharing K (skips RoPE and attention matmuls).
            let w = dims.get(spec.input + 1)?;
            let &k_dim = x.last()?;
            if !(2..=3).contains(&x.len()) || w.len() != 2 || (w[0] != k_dim && w[1] != k_dim) {
                return None;
            }
            let tokens = pos(x[..x.len() - 1].iter().product())?;
            ev.gemm_max_tokens = Some(ev.gemm_max_tokens.map_or(tokens, |m| m.max(tokens)));
            if x.len() == 3 {
                if let (Some(b), Some(s)) = (pos(x[0]), pos(x[1])) {
                    if ev.gemm_max_seq.is_none_or(|m| s > m) {
                        ev.gemm_max_seq = Some(s);
                        ev.gemm_batch = Some(b);
                    }
                }
            }
            // linear's weight is [N, K]; matmul's is [K, N].
            let n = if w[1] == k_dim { w[0] } else { w[1] };
            Some((pos(n)?, tokens))
        }
        ShapeKind::Mm => {
            let w = dims.get(spec.input + 1)?;
            if x.len() != 2 || w.len() != 2 || x[1] != w[0] {
                return None;
            }
            let t = pos(x[0])?;
            ev.gemm_max_tokens = Some(ev.gemm_max_tokens.map_or(t, |m| m.max(t)));
            Some((pos(w[1])?, t))
        }
        ShapeKind::Varlen => {
            if x.len() == 3 {
                let t = pos(x[0])?;
                ev.varlen_tokens = Some(ev.varlen_tokens.map_or(t, |m| m.max(t)));
            }
            None
        }
        ShapeKind::Sdpa => {
            let key = dims.get(spec.input + 1)?;
            if x.len() != 4 || key.len() != 4 {
                return None;
            }
            let (sq, sk) = (x[2].max(0) as u64, key[2].max(0) as u64);
            if sq == 1 {
                ev.sdpa_q1 += 1;
            } else if sq > 1 {
                ev.sdpa_qn += 1;
            }
            if sq == sk && sq > 1 {
                ev.sdpa_q_eq_k += 1;
            }
            ev.sdpa_max_q = ev.sdpa_max_q.max(sq);
            None
        }
    }
}

fn vote(method: Method, phase: Phase, strength: f64, why: String) -> Option<Vote> {
    let basis = match method {
        Method::GemmParams | Method::FrameworkApis | Method::AttentionPatterns => Basis::Measured,
        Method::OperationFrequency => Basis::Relative,
        Method::KernelNames => Basis::Names,
    };
    Some(Vote { method, phase, strength: strength.clamp(0.0, 1.0), why, basis, amount: false })
}

/// `v` as a vote by amount of work (see [`Vote::amount`]).
fn by_amount(v: Option<Vote>) -> Option<Vote> {
    v.map(|v| Vote { amount: true, ..v })
}

/// `v` resting on `basis` instead of its method's usual one.
fn on(basis: Basis, v: Option<Vote>) -> Option<Vote> {
    v.map(|v| Vote { basis, ..v })
}

/// Prefill vs decode from two hint strengths: both strong → mixed.
fn hint_vote(method: Method, s: [f64; 2], why: &str) -> Option<Vote> {
    let (p, d) = (s[PREFILL], s[DECODE]);
    if p >= 0.8 && d >= 0.8 {
        vote(method, Phase::Mixed, p.min(d), format!("{why}: prefill and decode kinds"))
    } else if p > d {
        vote(method, Phase::Prefill, p - d, format!("{why}: prefill kind"))
    } else if d > p {
        vote(method, Phase::Decode, d - p, format!("{why}: decode kind"))
    } else {
        None
    }
}

/// The vote of `method` on one pass ([`relate_passes`] must have run for operation_frequency).
pub fn method_vote(method: Method, ev: &PassEvidence, rules: &PhaseRules, decode_threshold: i64) -> Option<Vote> {
    let thr = decode_threshold.max(0) as u64;
    match method {
        Method::FrameworkApis => {
            if let Some(a) = ev.annotation.as_ref() {
                match a.phase {
                    Some(p) if a.module_run => {
                        return on(Basis::Names, vote(method, p, 0.5, format!("the compiled module's name says {}", p.as_str())))
                    }
                    Some(p) => return vote(method, p, 1.0, "step annotation".into()),
                    None => {}
                }
            }
            // Engines capture whole-forward graphs for decode batch sizes; a graph-replayed pass far
            // heavier than its neighbours (a compiled prefill) gets no such hint, nor does one
            // replayed piecewise (vLLM's piecewise graphs replay prefill and mixed steps too).
            let heavy = ev.time_ratio.is_some_and(|r| r >= rules.thresholds.prefill_time_ratio);
            if ev.replayed_whole() && !heavy {
                return on(
                    Basis::Names,
                    vote(method, Phase::Decode, 0.3, "replayed from a CUDA/HIP graph (engines capture decode)".into()),
                );
            }
            None
        }
        Method::GemmParams => {
            if let Some(s) = ev.gemm_max_seq {
                if s > thr {
                    return vote(method, Phase::Prefill, 0.9, format!("GEMM activations [B, S={s}, K], S > {thr}"));
                }
                if ev.gemm_max_tokens.is_none_or(|t| t <= s * ev.gemm_batch.unwrap_or(1)) {
                    let strength = if s == 1 { 0.9 } else { 0.5 };
                    return vote(method, Phase::Decode, strength, format!("GEMM activations [B, S={s}, K]"));
                }
            }
            let m = ev.shape_tokens()?;
            let what = if ev.gemm_max_tokens == Some(m) { "GEMM M" } else { "tokens of the packed attention inputs" };
            // 2-D M = batch x sequence: a large decode batch looks like a short prompt, so weaker.
            let lone = ev.passes_on_device <= 1;
            let limit = ev.batch_limit.as_ref().filter(|_| lone);
            if let Some(l) = limit.filter(|l| m > l.sequences) {
                return vote(method, Phase::Prefill, 0.9, format!("{what} = {m} in the device's only pass, above the engine's limit of {} sequences a step ({}): no decode batch is that large", l.sequences, l.key));
            }
            let max_decode = limit.map_or(rules.thresholds.single_pass_decode_max_tokens, |l| l.sequences);
            let lone_decode =
                lone && m <= max_decode && (ev.replayed_whole() || ev.attention_hint[DECODE] > ev.attention_hint[PREFILL]);
            if limit.is_some() && m > thr && !lone_decode {
                // Within the engine's limit and nothing else says decode: GEMM M cannot tell a
                // decode batch from a short prompt.
                return None;
            }
            if m > thr && lone_decode {
                let why = if ev.replayed_whole() { "a whole-forward graph replay" } else { "decode attention kernels" };
                let within = match limit {
                    Some(l) => format!(", within the engine's limit of {} sequences a step ({})", l.sequences, l.key),
                    None => String::new(),
                };
                vote(method, Phase::Decode, 0.5, format!("{what} = {m} in the device's only pass, beside {why}{within}: a decode batch (one pass: no gap to learn a threshold from)"))
            } else if m > thr {
                by_amount(vote(method, Phase::Prefill, 0.5, format!("{what} = {m} > {thr}")))
            } else {
                vote(method, Phase::Decode, 0.7, format!("{what} = {m} <= {thr}"))
            }
        }
        Method::AttentionPatterns => {
            if ev.sdpa_q1 > 0 && ev.sdpa_qn > 0 {
                return vote(method, Phase::Mixed, 0.7, "SDPA with one and with many query tokens".into());
            }
            if ev.sdpa_q1 > 0 {
                return vote(method, Phase::Decode, 1.0, "SDPA query length 1".into());
            }
            if ev.sdpa_qn > 0 {
                let q = ev.sdpa_max_q;
                if q > thr || ev.sdpa_q_eq_k > 0 {
                    return vote(method, Phase::Prefill, 1.0, format!("SDPA query length {q}"));
                }
                return vote(method, Phase::Decode, 0.5, format!("SDPA query length {q} against a longer cache (speculative?)"));
            }
            on(Basis::Relative, contrast_vote(ev, rules))
                .or_else(|| on(Basis::Names, hint_vote(method, ev.attention_hint, "attention kernels")))
        }
        Method::KernelNames => {
            let names = hint_vote(method, ev.name_hint, "kernel names");
            let t = &rules.gemm_tiles;
            let tiles = if ev.tiles == 0 {
                None
            } else {
                let skinny = ev.skinny_tiles as f64 / ev.tiles as f64;
                let wide = ev.wide_tiles as f64 / ev.tiles as f64;
                if skinny >= t.skinny_min_share {
                    vote(method, Phase::Decode, t.strength, format!("{:.0}% of GEMM tiles skinny on tokens", 100.0 * skinny))
                } else if wide >= t.wide_min_share {
                    by_amount(vote(
                        method,
                        Phase::Prefill,
                        t.strength,
                        format!("{:.0}% of GEMM tiles wide on tokens", 100.0 * wide),
                    ))
                } else {
                    None
                }
            };
            match (names, tiles) {
                (Some(a), Some(b)) if a.phase == b.phase => Some(if a.strength >= b.strength { a } else { b }),
                (Some(a), Some(b)) => {
                    let (hi, lo) = if a.strength >= b.strength { (a, b) } else { (b, a) };
                    (hi.strength > lo.strength).then_some(Vote { strength: hi.strength - lo.strength, ..hi })
                }
                (a, b) => a.or(b),
            }
        }
        Method::OperationFrequency => frequency_vote(ev, rules),
    }
}

/// Relates each pass to the others on its device: count and kernel time over the median.
pub fn relate_passes(evs: &mut [PassEvidence], rules: &PhaseRules) {
    let mut devices: Vec<i32> = evs.iter().map(|e| e.device).collect();
    devices.sort_unstable();
    devices.dedup();
    for d in devices {
        let idx: Vec<usize> = (0..evs.len()).filter(|&i| evs[i].device == d).collect();
        let mut times: Vec<i64> = idx.iter().map(|&i| evs[i].kernel_time_ns).collect();
        times.sort_unstable();
        let median = times[times.len() / 2].max(1) as f64;
        let graphed = |e: &PassEvidence| e.kernels > 0 && e.graph_kernels * 2 >= e.kernels;
        let graph_passes = idx.iter().filter(|&&i| graphed(&evs[i])).count();
        let run = attention_run(evs, &idx, rules);
        // How many passes run each attention kernel: a prefill's own kernels are rare (prefills
        // are few beside the decode steps); kernels that many passes run beside the run's (a
        // split-KV combine once the cache is long) are decode variants, not a prefill's.
        let mut runs_of: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
        for &i in &idx {
            for &n in &evs[i].attention_names {
                *runs_of.entry(n).or_default() += 1;
            }
        }
        let rare = (idx.len() / 4).max(1);
        for &i in &idx {
            evs[i].attention_contrast = run.as_ref().and_then(|run| {
                let names = &evs[i].attention_names;
                let own_names: Vec<u32> = names.iter().copied().filter(|n| run.binary_search(n).is_err()).collect();
                let own = !own_names.is_empty() && own_names.iter().all(|n| runs_of.get(n).copied().unwrap_or(0) <= rare);
                let all_of_run = run.iter().all(|n| names.binary_search(n).is_ok());
                match (own, all_of_run) {
                    (true, false) => Some(AttentionContrast::OwnInstead),
                    (true, true) => Some(AttentionContrast::OwnAndRuns),
                    _ => None,
                }
            });
            evs[i].eager_among_graphs = graph_passes * 2 > idx.len() && evs[i].graph_kernels * 10 < evs[i].kernels;
            evs[i].passes_on_device = idx.len();
            evs[i].time_ratio =
                (idx.len() >= rules.thresholds.min_passes_for_frequency).then(|| evs[i].kernel_time_ns as f64 / median);
        }
    }
}

/// The attention kernel names that more than half the passes `idx` run, as one set (the decode
/// run's), when there are enough passes to speak of a run and they run any attention at all.
fn attention_run(evs: &[PassEvidence], idx: &[usize], rules: &PhaseRules) -> Option<Vec<u32>> {
    if idx.len() < rules.thresholds.min_passes_for_frequency {
        return None;
    }
    let mut sets: Vec<&Vec<u32>> = idx.iter().map(|&i| &evs[i].attention_names).collect();
    sets.sort_unstable();
    let mut best: (usize, Option<&Vec<u32>>) = (0, None);
    for group in sets.chunk_by(|a, b| a == b) {
        if group.len() > best.0 {
            best = (group.len(), Some(group[0]));
        }
    }
    let run = best.1.filter(|set| best.0 * 2 > idx.len() && !set.is_empty())?;
    Some(run.clone())
}

/// attention_patterns without shapes: a pass heavier than the alike passes whose attention kernels
/// are not theirs is a prefill (or mixed, with theirs beside).
fn contrast_vote(ev: &PassEvidence, rules: &PhaseRules) -> Option<Vote> {
    let ratio = ev.time_ratio?;
    if ratio < rules.thresholds.attention_contrast_ratio {
        return None;
    }
    let runs = ev.passes_on_device;
    let contrast = ev.attention_contrast?;
    // Beside the run's own kernels, only a pass far heavier than the run counts (as run frequency
    // would say): a decode step with an extra kernel is not a prefill.
    if contrast == AttentionContrast::OwnAndRuns && ratio < rules.thresholds.prefill_time_ratio {
        return None;
    }
    match contrast {
        AttentionContrast::OwnInstead => vote(
            Method::AttentionPatterns,
            Phase::Prefill,
            0.8,
            format!("attention kernels of its own instead of those most of the {runs} passes run, kernel time {ratio:.1}x the median pass"),
        ),
        // Engines launch decode attention only for the decodes a step holds (vLLM's backends run
        // it when the step has decode metadata; FlashInfer's and TensorRT-LLM's decode kernels
        // likewise): the run's decode-named kernels beside a prefill's own make a mixed step.
        AttentionContrast::OwnAndRuns if ev.attention_hint[DECODE] >= 0.8 => vote(
            Method::AttentionPatterns,
            Phase::Mixed,
            0.7,
            format!("attention kernels of its own (a prefill's) beside the decode attention the alike passes run: decodes batched with a prefill, kernel time {ratio:.1}x the median pass"),
        ),
        // Beside generic kernels of the run (KV-cache writes): prefill, less sure.
        AttentionContrast::OwnAndRuns => vote(
            Method::AttentionPatterns,
            Phase::Prefill,
            0.6,
            format!("attention kernels of its own beside those the alike passes run (none named for decode), kernel time {ratio:.1}x the median pass"),
        ),
    }
}

/// operation_frequency: passes whose kernel time is near the median of their device are the many
/// alike decode steps; one far above it is a prefill (needs [`relate_passes`] first).
/// Engines replay captured graphs only up to a token budget; a step run eagerly while most steps
/// replay graphs carried more tokens (a prefill).
pub fn frequency_vote(ev: &PassEvidence, rules: &PhaseRules) -> Option<Vote> {
    let th = &rules.thresholds;
    let ratio = ev.time_ratio?;
    if ratio >= th.prefill_time_ratio {
        let (strength, eager) = if ev.eager_among_graphs { (0.9, ", eager among graph replays") } else { (0.8, "") };
        by_amount(vote(
            Method::OperationFrequency,
            Phase::Prefill,
            strength,
            format!("kernel time {ratio:.1}x the median pass{eager}"),
        ))
    } else if ev.eager_among_graphs {
        by_amount(vote(Method::OperationFrequency, Phase::Prefill, 0.6, "eager while most passes replay graphs".into()))
    } else if ratio <= th.alike_time_ratio && ratio >= 1.0 / th.alike_time_ratio {
        vote(Method::OperationFrequency, Phase::Decode, 0.5, format!("one of {} alike passes", ev.passes_on_device))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Passes on one device with these attention kernel sets and kernel times.
    fn passes(sets: &[(&[u32], i64)]) -> Vec<PassEvidence> {
        sets.iter()
            .map(|&(names, t)| PassEvidence {
                kernels: 10,
                kernel_time_ns: t,
                attention_names: names.to_vec(),
                ..Default::default()
            })
            .collect()
    }

    #[test]
    fn the_attention_contrast_finds_a_prefill_but_not_decode_variants() {
        let r = PhaseRules::builtin();
        // One prefill with its own attention kernel (7) among 12 decode steps running kernel 1.
        let mut sets: Vec<(&[u32], i64)> = vec![(&[7], 140)];
        sets.extend(std::iter::repeat_n((&[1][..], 100), 12));
        let mut evs = passes(&sets);
        relate_passes(&mut evs, r);
        assert_eq!(evs[0].attention_contrast, Some(AttentionContrast::OwnInstead));
        assert_eq!(contrast_vote(&evs[0], r).map(|v| v.phase), Some(Phase::Prefill));
        assert!(evs[1..].iter().all(|e| e.attention_contrast.is_none()));
        // Decode steps that add a split-KV combine (kernel 2) once the cache is long: 5 of 12,
        // heavier than the median; a decode variant, never a prefill.
        let mut sets: Vec<(&[u32], i64)> = std::iter::repeat_n((&[1][..], 100), 7).collect();
        sets.extend(std::iter::repeat_n((&[1, 2][..], 130), 5));
        let mut evs = passes(&sets);
        relate_passes(&mut evs, r);
        assert!(evs.iter().all(|e| contrast_vote(e, r).is_none()));
        // Or that switch to another decode kernel (3) in 5 of 12 steps: not rare, not a prefill.
        let mut sets: Vec<(&[u32], i64)> = std::iter::repeat_n((&[1][..], 100), 7).collect();
        sets.extend(std::iter::repeat_n((&[3][..], 130), 5));
        let mut evs = passes(&sets);
        relate_passes(&mut evs, r);
        assert!(evs.iter().all(|e| contrast_vote(e, r).is_none()));
    }

    #[test]
    fn a_module_name_is_a_weak_name_hint_and_an_engine_annotation_a_statement() {
        let r = PhaseRules::builtin();
        let pass = |name: &str| PassEvidence {
            annotation: crate::analysis::steps::annotations::parse_step_name(r, name),
            ..Default::default()
        };
        let module = method_vote(Method::FrameworkApis, &pass("XlaModule:jit_decode_step"), r, 10).unwrap();
        assert_eq!((module.phase, module.strength, module.basis), (Phase::Decode, 0.5, Basis::Names));
        let engine = method_vote(Method::FrameworkApis, &pass("step[DECODE bs=16]"), r, 10).unwrap();
        assert_eq!((engine.phase, engine.strength, engine.basis), (Phase::Decode, 1.0, Basis::Measured));
    }
}
