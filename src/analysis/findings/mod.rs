//! Findings: what to fix first and what it would save, each estimated from the trace's own figures
//! (never a fixed percentage), ranked by the saving per step.
//!
//! Time is accounted for first, causes named second: every step's wall time is split once into
//! the rows of its budget ([`crate::analysis::budget`]), and each finding reads its own rows, so
//! no two findings claim the same idle. Kinds:
//! - **`host_activity`** (`host_activity`): the GPU idles while the launching thread is in a
//!   range that issues no GPU work, named (a data loader, a scheduler, a tokenizer, a Python
//!   frame); the fix from the table of host activities (`rules/host_activities.toml`).
//! - **`gpu_bound`** (`gpu_bound`): the GPU is busy at least 90% (`GPU_BOUND_SHARE`) of the step:
//!   what ran, ranked; judged against the roof where shapes were recorded.
//! - **`exposed_copy`** (`copies`): copies and fills with no kernel beside them.
//! - **`unlinked_idle`** (`unlinked`): idle before GPU work whose launch is not in the trace.
//! - **`host_bound`** (`host`): the GPU waits while the host issues kernels one at a time.
//!   Replaying the step from a graph removes that wait, down to the gap a replay itself leaves
//!   between kernels (measured: [`GRAPH_REPLAY_GAP_NS`]).
//! - **`sync`** (`sync`): the host blocks in a synchronising call (`cudaStreamSynchronize`, a
//!   copy to pageable memory, `.item()`), the GPU runs dry, and waits again while the host refills
//!   it. Keeping the value on the GPU, or copying it without blocking, removes that refill.
//! - **`exposed_communication`** (`comm`): collective kernels run with no compute beside them.
//! - **`fusion`** (`fusion`): runs of memory-bound kernels (norms, activations, elementwise)
//!   between GEMMs, each paying a kernel's fixed cost that one fused kernel would pay once.
//! - **`stalled`** (`stall`): the GPU idles with its next kernel already issued, waiting on an
//!   event, a stream or work the trace does not hold.
//! - **`step_gaps`** (`between_steps`): between consecutive passes the GPU idles while the
//!   scheduler prepares the next step; overlapping that host work with the running step removes it.
//!
//! - **`roofline`** (`roofline`): GEMM and attention shapes far below their roof, against what
//!   the trace's own calls of the family reach on this device.
//! - **`straggler`** (`straggler`, over a run's ranks): one rank arrives last at the collectives
//!   and the others wait for it; the cause on its host or its device.
//!
//! [`outcome`] checks a finding against a second trace of the same workload after the fix.
//!
//! A finding is raised only from what was recorded: host waits need the runtime launches (the
//! health report's `runtime_calls`), so a GPU-only trace raises none. A finding whose evidence is
//! thin (few passes) says so in its `confidence`.

mod between_steps;
mod comm;
mod copies;
mod fusion;
mod gpu_bound;
mod host;
pub mod host_activity;
pub mod kinds;
pub mod outcome;
mod roofline;
mod stall;
mod straggler;
mod sync;
mod unlinked;

pub use kinds::{Kind, KINDS};
pub use straggler::stragglers;

use crate::analysis::budget::{Part, Row, Step};
use crate::analysis::phases::{Pass, Phase};
use crate::analysis::Analysis;
use crate::support::median::upper_median;

/// One finding: a cause of lost time, its saving per step, the fix and how to check it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Finding {
    /// What the finding is about.
    pub kind: Kind,
    /// Where it applies, in words: the phase and device (`decode on device 0`).
    pub scope: String,
    /// The phase of the passes it was read from; `None` for a device's capture window (no whole
    /// step), and for what is read across phases (`roofline`) or ranks (`straggler`).
    pub phase: Option<Phase>,
    /// The device it was read on; `None` across devices (`roofline`, `straggler`).
    pub device: Option<i32>,
    /// Passes the figures come from.
    pub passes: usize,
    /// What within its kind the finding is about (a host activity's range name), else empty:
    /// with `kind` and `scope`, what identifies the finding in a second trace.
    pub subject: String,
    /// The figures the finding rests on, in words.
    pub evidence: String,
    /// Time a step would save (µs, median over the passes).
    pub saving_us: f64,
    /// That saving as a share of the step's wall time (%).
    pub saving_pct: f64,
    /// `high`, `medium` or `low`, with why when not high.
    pub confidence: String,
    /// The fix, in the engine's or PyTorch's own terms.
    pub fix: String,
    /// What a re-profile should show if the fix worked.
    pub check: String,
    /// The evidence's window on the timeline (the median pass): start and end, ns in the trace's clock.
    pub from_ns: i64,
    /// End of the evidence's window (ns, trace clock).
    pub to_ns: i64,
}

impl Finding {
    /// Whether it was read from a device's capture window (no whole step in the trace): its
    /// saving is the window's, not a step's.
    pub fn of_capture_window(&self) -> bool {
        self.phase.is_none() && self.device.is_some()
    }
    /// What its saving is per: `a step`, or `in the capture window`.
    pub fn per(&self) -> &'static str {
        if self.of_capture_window() {
            "in the capture window"
        } else {
            "a step"
        }
    }
}

/// The gap a graph replay leaves between two kernels of one stream: the median of 7,938 gaps
/// inside the CUDA-graph replays of `vllm_tp4_h100_1000isl_10osl_32con` (H100, 0.417 µs; MI300X
/// replays in the fixtures show none at their timestamps' resolution, B300's overlap).
pub const GRAPH_REPLAY_GAP_NS: i64 = 417;

/// A finding saving less than this share of its step is not raised.
pub const MIN_SAVING_SHARE: f64 = 0.05;
/// Passes below which a finding's confidence is `low`.
pub(crate) const FEW_PASSES: usize = 3;

/// The steps of one phase on one device (or one device's capture window, where no step was
/// found), with each step's budget: what every kind of finding reads.
pub struct Group<'a> {
    /// The phase of the passes (`Unknown` for a capture window).
    pub phase: Phase,
    /// Their device.
    pub device: i32,
    /// `decode on device 0`, `capture window on device 1`.
    pub scope: String,
    /// The passes, in time order (none for a capture window).
    pub passes: Vec<&'a Pass>,
    /// Per step (same order as `passes`), its budget.
    pub steps: Vec<&'a Step>,
    /// The engine that ran them, for fixes in its terms.
    pub engine: Engine,
    /// The share of its step below which a saving is not raised.
    pub min_share: f64,
}

impl Group<'_> {
    /// Whether a saving of `saving_us` in a step of `of_us` is worth a finding.
    pub fn worth(&self, saving_us: f64, of_us: f64) -> bool {
        of_us > 0.0 && saving_us > 0.0 && saving_us >= self.min_share * of_us
    }
    /// The phase its findings carry: `None` for a capture window.
    pub fn finding_phase(&self) -> Option<Phase> {
        (!self.is_capture()).then_some(self.phase)
    }
    /// A finding of `kind` read from this group, placed: its scope, phase, device and steps are
    /// the group's, its confidence the group's; the rest is the detector's to fill.
    pub fn finding(&self, kind: Kind) -> Finding {
        Finding {
            kind,
            scope: self.scope.clone(),
            phase: self.finding_phase(),
            device: Some(self.device),
            passes: self.steps.len(),
            subject: String::new(),
            evidence: String::new(),
            saving_us: 0.0,
            saving_pct: 0.0,
            confidence: self.confidence(),
            fix: String::new(),
            check: String::new(),
            from_ns: 0,
            to_ns: 0,
        }
    }
    /// [`Group::finding`], its figures from the group's passes (a chain of kernels read in
    /// every pass) rather than its steps.
    pub fn finding_over_passes(&self, kind: Kind) -> Finding {
        Finding { passes: self.passes.len(), ..self.finding(kind) }
    }
    /// Whether finding `f` was read from this group: its phase and device are the group's.
    pub fn holds(&self, f: &Finding) -> bool {
        f.phase == self.finding_phase() && f.device == Some(self.device)
    }
    /// How a figure of one step reads: `a step`, or `in the window` for a capture window.
    pub fn per(&self) -> &'static str {
        if self.is_capture() {
            "in the window"
        } else {
            "a step"
        }
    }
    /// The step a figure's share is of: `the median step`, or `the capture window`.
    pub fn median_step(&self) -> &'static str {
        if self.is_capture() {
            "the capture window"
        } else {
            "the median step"
        }
    }
    /// Whether the group is a device's capture window rather than steps.
    pub fn is_capture(&self) -> bool {
        self.passes.is_empty()
    }
    /// Median wall time of the steps (µs): each step's window, from its first kernel to the next
    /// step's first kernel.
    pub fn wall_us(&self) -> f64 {
        median_us(self.steps.iter().map(|w| w.wall_ns()))
    }
    /// Median over the steps of `f` (µs).
    pub fn median_of(&self, f: impl Fn(&Step) -> i64) -> f64 {
        median_us(self.steps.iter().map(|s| f(s)))
    }
    /// The confidence of a finding resting on this group's steps.
    pub fn confidence(&self) -> String {
        if self.is_capture() {
            return "low: no whole step in the trace; figures are the capture window's".into();
        }
        let kernels: usize = self.steps.iter().map(|w| w.kernels).sum();
        let linked = self.steps.iter().map(|w| w.linked).sum::<usize>() as f64 / kernels.max(1) as f64;
        confidence(self.steps.len(), linked)
    }
    /// The step whose `key` is the median: its index.
    pub fn median_pass(&self, key: impl Fn(usize) -> i64) -> usize {
        let mut order: Vec<usize> = (0..self.steps.len()).collect();
        order.sort_by_key(|&i| key(i));
        order[order.len() / 2]
    }
    /// The median time a step in rows of `part` (µs), the median step's wall time (µs), and the
    /// longest row of that part in the step with the median such time, when the time is worth a
    /// finding ([`Group::worth`]).
    pub fn raised_part(&self, part: Part) -> Option<(f64, f64, &Row)> {
        let saving_us = self.median_of(|s| s.part_ns(part));
        let wall_us = self.wall_us();
        if !self.worth(saving_us, wall_us) {
            return None;
        }
        let i = self.median_pass(|i| self.steps[i].part_ns(part));
        let row = self.steps[i].rows.iter().filter(|r| r.part == part).max_by_key(|r| r.ns)?;
        Some((saving_us, wall_us, row))
    }
    /// The window of step `i` on the timeline: its start and the end of its pass.
    pub fn window(&self, i: usize) -> (i64, i64) {
        (self.steps[i].start_ns, self.steps[i].pass_end_ns)
    }
}

/// The passes of `a` by phase and device: steps only (a stage around a diffusion model's steps,
/// its encoders or its decoder, is no step), whole passes only; then each device's capture
/// window where no pass was found.
pub fn groups(a: &Analysis, min_share: f64) -> Vec<Group<'_>> {
    let engine = Engine::of(a);
    let budget = a.budget();
    let mut out: Vec<Group> = Vec::new();
    for step in &budget.steps {
        let Some(p) = step.pass else {
            out.push(Group {
                phase: Phase::Unknown,
                device: step.device,
                scope: format!("capture window on device {}", step.device),
                passes: Vec::new(),
                steps: vec![step],
                engine,
                min_share,
            });
            continue;
        };
        let p = &a.phases.passes[p];
        if p.incomplete || p.phase == Phase::Stage {
            continue;
        }
        match out.iter_mut().find(|g| !g.is_capture() && (g.phase, g.device) == (p.phase, p.device)) {
            Some(g) => {
                g.passes.push(p);
                g.steps.push(step);
            }
            None => out.push(Group {
                phase: p.phase,
                device: p.device,
                scope: format!("{} on device {}", p.phase.as_str(), p.device),
                passes: vec![p],
                steps: vec![step],
                engine,
                min_share,
            }),
        }
    }
    out
}

/// Every finding of `a` worth at least [`MIN_SAVING_SHARE`] of its step, largest saving first.
pub fn findings(a: &Analysis) -> Vec<Finding> {
    findings_from(a, MIN_SAVING_SHARE)
}

/// Every finding of `a` worth at least `min_share` of its step (0: any saving at all), largest first.
pub fn findings_from(a: &Analysis, min_share: f64) -> Vec<Finding> {
    findings_and_groups(a, min_share).0
}

/// [`findings_from`] with the groups of passes the findings were read from.
pub fn findings_and_groups(a: &Analysis, min_share: f64) -> (Vec<Finding>, Vec<Group<'_>>) {
    // The roofline (shared with its tables, kept once computed) is made beside the walk over
    // the passes and the findings it gives.
    let (mut groups, mut out) = (Vec::new(), Vec::new());
    crate::support::threads::both(
        a.trace.gpu.len(),
        || {
            a.roofline();
        },
        || {
            groups = self::groups(a, min_share);
            let launches = !a.trace.launches.is_empty();
            for g in &groups {
                for spec in &KINDS {
                    if let kinds::Detect::Each { run, needs_launches, steps_only } = spec.detect {
                        if (launches || !needs_launches) && !(steps_only && g.is_capture()) {
                            out.extend(run(a, g));
                        }
                    }
                }
            }
        },
    );
    for spec in &KINDS {
        if let kinds::Detect::All(run) = spec.detect {
            out.extend(run(a, &groups));
        }
    }
    out.sort_by(|x, y| y.saving_us.total_cmp(&x.saving_us));
    (out, groups)
}

/// Which engine ran the trace, for fixes in its own terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// vLLM.
    Vllm,
    /// SGLang.
    Sglang,
    /// JAX / XLA (an XSpace profile, or XLA module runs in the trace).
    Jax,
    /// PyTorch alone (Hugging Face `generate`, a training loop).
    Torch,
}

impl Engine {
    fn of(a: &Analysis) -> Engine {
        let t = &a.trace;
        let xla = t.stats.format == crate::model::InputFormat::Xspace
            || (0..t.names.len() as u32).any(|i| t.name(i).starts_with("XlaModule"));
        if xla {
            return Engine::Jax;
        }
        let engine = a.phases.batching_engine.as_deref().unwrap_or_default().to_lowercase();
        if engine.contains("vllm") {
            Engine::Vllm
        } else if engine.contains("sglang") || engine.contains("sgl") {
            Engine::Sglang
        } else {
            Engine::Torch
        }
    }
}

/// Where launch call `c` came from: the nearest Python frame with a file and line outside
/// PyTorch's own package (a builtin's or `torch/…`'s frame is skipped for its caller's; the
/// nearest file frame when every one is PyTorch's), else its CPU op.
pub fn code_site(t: &crate::model::Trace, c: usize) -> Option<&str> {
    let l = &t.launches;
    crate::analysis::budget::user_frame(t, l.python[c])
        .or_else(|| (l.cpu_op[c] != crate::model::NONE).then(|| t.name(t.ops.name[l.cpu_op[c] as usize])))
}

/// The median (the upper of the two middle ones for an even count) of durations in ns, in µs.
pub fn median_us(ns: impl IntoIterator<Item = i64>) -> f64 {
    upper_median(ns.into_iter().collect()) as f64 / 1e3
}

fn confidence(passes: usize, linked: f64) -> String {
    if passes < FEW_PASSES {
        format!("low: {passes} pass(es) only")
    } else if linked < 0.9 {
        format!("medium: {:.0}% of the kernels link to their launch", 100.0 * linked)
    } else {
        "high".into()
    }
}
