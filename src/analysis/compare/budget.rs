//! The difference of two step budgets, adding up to the step: for each phase both sides ran, one
//! representative step of A against one of B, row by row, and a verdict that knows the noise.
//!
//! **The representative step** is chosen by one rule on both sides: among the phase's whole steps
//! on the device that ran most of them, the step whose window is the median (the lower of the two
//! middle ones for an even count, so it is a real step). Its budget ([`crate::analysis::budget`])
//! adds up to its window to the ns; so do the rows here, each side's column summing to its step,
//! so the deltas add up to the step's delta exactly.
//!
//! **Rows.** Busy compute time is split by the kernels that claimed it (an instant two kernels
//! share goes to the one that started first, as in the budget):
//! - `busy`: kernels both sides run, by category;
//! - `only_a` / `only_b`: kernels one side runs and the other does not, by category, with their
//!   count a step. Two sides on one GPU model match kernels by name (what a compiler generated
//!   folded: [`generated_fold`]); across GPU models names differ by vendor, so they match by the
//!   category's equivalence class (`compare_equivalents.toml`: an nvjet GEMM and a Tensile GEMM
//!   are both GEMM).
//!
//! Then the budget's own parts: `exposed_communication`, `copy`, and the idle: `host` rows matched
//! by their range's name, `sync` by the call, `launch`, `queued`, `between_steps`, `unlinked`.
//!
//! **The verdict** ([`super::noise`]): the delta of the two representative steps against the
//! spread of each side's steps (or of its step's layers when it has one step).

use super::equivalents::class_of;
use super::noise::{self, Change, Judged, Spread};
use crate::analysis::budget::device::Cover;
use crate::analysis::budget::{Part, Step, StepBudget, What};
use crate::analysis::code::call_paths::generated_fold;
use crate::analysis::findings::{groups, Group};
use crate::analysis::layers::Role;
use crate::analysis::phases::Phase;
use crate::analysis::Analysis;
use crate::model::{FastMap, GpuKind};
use std::collections::BTreeMap;

/// Confidence of the verdict's noise interval (two-sided).
pub const CONFIDENCE: f64 = 0.99;

/// One row of a phase's difference: a part, what within it, and each side's time a step.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffRow {
    /// `step`, `busy`, `only_a`, `only_b`, or a budget part's name.
    pub part: &'static str,
    /// What within the part: a category, a range's name, a call.
    pub what: String,
    /// A's time in its representative step (ns).
    pub a_ns: i64,
    /// B's time in its representative step (ns).
    pub b_ns: i64,
    /// Kernels of the row in A's step (busy rows; 0 elsewhere).
    pub a_count: usize,
    /// Kernels of the row in B's step.
    pub b_count: usize,
}

impl DiffRow {
    /// A − B (ns).
    pub fn delta_ns(&self) -> i64 {
        self.a_ns - self.b_ns
    }
}

/// One side's representative step of a phase.
#[derive(Debug, Clone, PartialEq)]
pub struct Pick {
    /// The device its steps ran on.
    pub device: i32,
    /// The pass (row of `phases.passes`), `None` for a capture window.
    pub pass: Option<usize>,
    /// Its window (ns).
    pub wall_ns: i64,
    /// Every step of the phase on that device (µs each): the samples.
    pub steps_us: Vec<f64>,
    /// The spread of one step ([`Spread`]), from steps or the step's layers.
    pub spread: Option<Spread>,
}

/// One phase's difference and verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseDiff {
    /// `decode`, `denoise`, … or `capture` (a capture window, no steps found).
    pub phase: String,
    /// The phase as found, `None` for a capture window.
    pub kind: Option<Phase>,
    /// A's representative step (`None`: A has no step of this phase).
    pub a: Option<Pick>,
    /// B's.
    pub b: Option<Pick>,
    /// The rows, `step` first, then by the size of their delta; each side's column (the step row
    /// apart) sums to its step.
    pub rows: Vec<DiffRow>,
    /// The verdict and its noise.
    pub judged: Judged,
}

impl PhaseDiff {
    /// A's step − B's step (ns; `None` when a side lacks the phase).
    pub fn delta_ns(&self) -> Option<i64> {
        Some(self.a.as_ref()?.wall_ns - self.b.as_ref()?.wall_ns)
    }
    /// The delta as a percentage of B's step (`None` when a side lacks the phase or B's step
    /// is empty).
    pub fn delta_pct(&self) -> Option<f64> {
        let (a, b) = (self.a.as_ref()?.wall_ns, self.b.as_ref()?.wall_ns);
        (b > 0).then(|| 100.0 * (a - b) as f64 / b as f64)
    }
    /// The verdict's samples in words: `4 + 4 steps`, `1 + 1 steps (16 + 16 layers)`.
    pub fn samples(&self) -> String {
        let n = |p: &Option<Pick>| p.as_ref().map_or(0, |p| p.steps_us.len());
        let mut s = format!("{} + {} steps", n(&self.a), n(&self.b));
        let units = |p: &Option<Pick>| p.as_ref().and_then(|p| p.spread).filter(|s| s.from_units).map(|s| s.samples);
        if units(&self.a).is_some() || units(&self.b).is_some() {
            let u = |p: &Option<Pick>| units(p).map_or("-".to_string(), |n| n.to_string());
            s.push_str(&format!(" ({} + {} layers)", u(&self.a), u(&self.b)));
        }
        s
    }
}

/// The difference of the two sides' budgets, phase by phase: the phases both ran first (in A's
/// order), then those one side lacks (a row each, inconclusive, no budget rows). `band` is the
/// share of B's step under which a change is `same`.
pub fn budget_diff(a: &Analysis, b: &Analysis, phase: Option<Phase>, band: f64) -> Vec<PhaseDiff> {
    let (ga, gb) = (phase_groups(a, phase), phase_groups(b, phase));
    let same_gpu = a.trace.meta.device_label() == b.trace.meta.device_label();
    let mut out = Vec::new();
    for (name, kind, g) in &ga {
        let (pa, sa) = pick(a, g);
        let Some((_, _, h)) = gb.iter().find(|x| x.0 == *name) else {
            out.push(one_sided(name, *kind, Some(pa), None));
            continue;
        };
        let (pb, sb) = pick(b, h);
        let rows = rows(a, sa, b, sb, same_gpu);
        let delta_us = (pa.wall_ns - pb.wall_ns) as f64 / 1e3;
        let judged = noise::judge(delta_us, pb.wall_ns as f64 / 1e3, pa.spread, pb.spread, CONFIDENCE, band);
        out.push(PhaseDiff { phase: name.clone(), kind: *kind, a: Some(pa), b: Some(pb), rows, judged });
    }
    for (name, kind, h) in &gb {
        if !ga.iter().any(|x| x.0 == *name) {
            out.push(one_sided(name, *kind, None, Some(pick(b, h).0)));
        }
    }
    out
}

fn one_sided(name: &str, kind: Option<Phase>, a: Option<Pick>, b: Option<Pick>) -> PhaseDiff {
    PhaseDiff {
        phase: name.to_string(),
        kind,
        a,
        b,
        rows: Vec::new(),
        judged: Judged { change: Change::Inconclusive, noise_us: None },
    }
}

/// Per phase (in the order its first step ran), the group of steps on the device that ran most
/// of them (ties: the first found); capture windows as one phase, `capture`, when a side has no
/// steps at all.
fn phase_groups(a: &Analysis, phase: Option<Phase>) -> Vec<(String, Option<Phase>, Group<'_>)> {
    let all = groups(a, 0.0);
    let has_steps = all.iter().any(|g| !g.is_capture());
    let mut out: Vec<(String, Option<Phase>, Group)> = Vec::new();
    for g in all {
        if g.is_capture() && has_steps {
            continue;
        }
        let kind = g.finding_phase();
        if phase.is_some() && kind.is_some() && kind != phase {
            continue;
        }
        let name = kind.map_or("capture".to_string(), |p| p.as_str().to_string());
        match out.iter_mut().find(|x| x.0 == name) {
            Some(x) if g.steps.len() > x.2.steps.len() => x.2 = g,
            Some(_) => {}
            None => out.push((name, kind, g)),
        }
    }
    out
}

/// The group's median step (by window): its pick (with the samples) and its budget.
fn pick<'a>(a: &Analysis, g: &Group<'a>) -> (Pick, &'a Step) {
    let s = g.steps[median_index(g)];
    let steps_us: Vec<f64> = g.steps.iter().map(|s| s.wall_ns() as f64 / 1e3).collect();
    let spread = Spread::of_steps(&steps_us).or_else(|| s.pass.and_then(|p| Spread::of_units(&layer_times_us(a, p))));
    (Pick { device: s.device, pass: s.pass, wall_ns: s.wall_ns(), steps_us, spread }, s)
}

fn median_index(g: &Group) -> usize {
    let mut order: Vec<usize> = (0..g.steps.len()).collect();
    order.sort_by_key(|&i| (g.steps[i].wall_ns(), i));
    order[(order.len() - 1) / 2]
}

/// Each layer's time in pass `p` (µs): its first kernel's start to its last kernel's end.
fn layer_times_us(a: &Analysis, p: usize) -> Vec<f64> {
    let g = &a.trace.gpu;
    let mut span: BTreeMap<u32, (i64, i64)> = BTreeMap::new();
    for &r in &a.phases.passes[p].rows {
        let r = r as usize;
        if a.layers.role_of_row.get(r) != Some(&Role::Layer) {
            continue;
        }
        let l = a.layers.layer_of_row[r];
        let e = span.entry(l).or_insert((i64::MAX, i64::MIN));
        e.0 = e.0.min(g.ts[r]);
        e.1 = e.1.max(g.end(r));
    }
    span.values().map(|&(s, e)| (e - s) as f64 / 1e3).collect()
}

/// Busy compute time of a step claimed by each kernel key: (category shown, time, kernels).
type Claims = BTreeMap<String, (String, i64, usize)>;

/// The compute kernels of device `step.device` in the step's window, each claiming the part of
/// its span no earlier-starting kernel covered, by key (the folded name, or the category's class
/// across GPU models).
fn claims(a: &Analysis, step: &Step, by_name: bool) -> Claims {
    let (g, cats) = (&a.trace.gpu, &a.categories);
    let comm = cats.communication_flags();
    let mut rows: Vec<(i64, u32)> = (0..g.len())
        .filter(|&r| {
            g.device[r] == step.device
                && g.kind[r] == GpuKind::Kernel
                && g.dur[r] > 0
                && !comm[cats.of_row[r] as usize]
                && g.ts[r] < step.end_ns
                && g.end(r) > step.start_ns
        })
        .map(|r| (g.ts[r], r as u32))
        .collect();
    rows.sort_unstable();
    let mut key_of: FastMap<(u32, u16), String> = FastMap::default();
    let mut out = Claims::new();
    let mut cover = Cover::default();
    for (s, r) in rows {
        let r = r as usize;
        let e = g.end(r);
        let category = &cats.categories[cats.of_row[r] as usize].name;
        let key = key_of
            .entry((g.name[r], cats.of_row[r]))
            .or_insert_with(|| {
                if by_name {
                    generated_fold(a.trace.name(g.name[r])).into_owned()
                } else {
                    class_of(category).to_string()
                }
            })
            .clone();
        let shown = if by_name { category.clone() } else { class_of(category).to_string() };
        let entry = out.entry(key).or_insert((shown, 0, 0));
        if s >= step.start_ns {
            entry.2 += 1;
        }
        if let Some((from, to)) = cover.claim(s, e) {
            entry.1 += (to.min(step.end_ns) - from.max(step.start_ns)).max(0);
        }
    }
    out
}

/// The rows of two steps side by side.
fn rows(a: &Analysis, sa: &Step, b: &Analysis, sb: &Step, same_gpu: bool) -> Vec<DiffRow> {
    let mut rows: BTreeMap<(&'static str, String), DiffRow> = BTreeMap::new();
    let mut add = |part: &'static str, what: String, ns: i64, count: usize, side_a: bool| {
        let r = rows.entry((part, what.clone())).or_insert(DiffRow { part, what, a_ns: 0, b_ns: 0, a_count: 0, b_count: 0 });
        if side_a {
            r.a_ns += ns;
            r.a_count += count;
        } else {
            r.b_ns += ns;
            r.b_count += count;
        }
    };
    let (ca, cb) = (claims(a, sa, same_gpu), claims(b, sb, same_gpu));
    for (side_a, mine, theirs, step) in [(true, &ca, &cb, sa), (false, &cb, &ca, sb)] {
        let only = if side_a { "only_a" } else { "only_b" };
        let mut claimed = 0;
        for (key, (shown, ns, count)) in mine {
            let part = if theirs.contains_key(key) { "busy" } else { only };
            add(part, shown.clone(), *ns, *count, side_a);
            claimed += ns;
        }
        // The budget's busy compute and the claims are one sweep over the same kernels; a
        // difference would break the sum, so it is shown rather than lost.
        let rest = step.part_ns(Part::Busy) - claimed;
        if rest != 0 {
            add("busy", "(compute the claims missed)".into(), rest, 0, side_a);
        }
    }
    for (side_a, an, step) in [(true, a, sa), (false, b, sb)] {
        let budget = an.budget();
        for row in step.rows.iter().filter(|r| r.part != Part::Busy) {
            add(row.part.as_str(), what_of(an, budget, row), row.ns, 0, side_a);
        }
    }
    let mut out: Vec<DiffRow> = rows.into_values().collect();
    out.sort_by(|x, y| y.delta_ns().abs().cmp(&x.delta_ns().abs()).then((x.part, &x.what).cmp(&(y.part, &y.what))));
    out.insert(0, DiffRow { part: "step", what: String::new(), a_ns: sa.wall_ns(), b_ns: sb.wall_ns(), a_count: 0, b_count: 0 });
    out
}

/// A budget row's `what`, as both sides can match it: a range by its name (folded), a call by its
/// name, else the part's words.
fn what_of(a: &Analysis, budget: &StepBudget, row: &crate::analysis::budget::Row) -> String {
    match row.what {
        What::Range(name) => crate::analysis::code::call_paths::node_label(a.trace.name(name)).into_owned(),
        What::Call(name) => format!("waiting in {}", a.trace.name(name)),
        _ => budget.describe(a, row),
    }
}

/// The phase in words for "a … step".
pub fn step_words(d: &PhaseDiff) -> String {
    match d.kind {
        None => "capture window".into(),
        Some(Phase::Denoise) => "denoising step".into(),
        Some(Phase::NotInference) => "step".into(),
        Some(p) => format!("{} step", p.as_str()),
    }
}

/// A time in words: `7.4 ms`, `312 µs`, `0.05 ms` (signed when `signed`).
fn time_words(us: f64, signed: bool) -> String {
    let sign = if signed && us >= 0.0 { "+" } else { "" };
    if us.abs() >= 1000.0 {
        format!("{sign}{:.1} ms", us / 1e3)
    } else if us.abs() >= 10.0 {
        format!("{sign}{:.0} µs", us)
    } else {
        format!("{sign}{:.1} µs", us)
    }
}

/// The phase's verdict in one sentence: who is slower, by how much a step, how much the steps
/// vary, and the three rows that moved most (kernels one side runs taken together).
pub fn sentence(d: &PhaseDiff, label_a: &str, label_b: &str) -> String {
    let unit = step_words(d);
    let (Some(a), Some(b)) = (&d.a, &d.b) else {
        let (has, lacks) = if d.a.is_some() { (label_a, label_b) } else { (label_b, label_a) };
        return format!(
            "{has} has {} {unit}s and {lacks} none: nothing to set them against",
            d.a.as_ref().or(d.b.as_ref()).map_or(0, |p| p.steps_us.len())
        );
    };
    let delta = (a.wall_ns - b.wall_ns) as f64 / 1e3;
    let pct = d.delta_pct().unwrap_or(0.0);
    let vary =
        [a.spread, b.spread].iter().flatten().map(|s| s.sd_us).fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
    let vary_words = match (vary, a.spread.is_some_and(|s| s.from_units) || b.spread.is_some_and(|s| s.from_units)) {
        (Some(v), false) => format!("steps vary by {}", time_words(v, false)),
        (Some(v), true) => format!("{} from its layers' spread", time_words(v, false)),
        (None, _) => "one step a side: its noise unknown".into(),
    };
    let head = match d.judged.change {
        Change::Slower => {
            format!("{label_a} is slower than {label_b} by {} a {unit} ({pct:+.1}%; {vary_words})", time_words(delta, false))
        }
        Change::Faster => {
            format!("{label_a} is faster than {label_b} by {} a {unit} ({pct:+.1}%; {vary_words})", time_words(-delta, false))
        }
        Change::Same => {
            format!("{label_a} and {label_b} take the same time a {unit} ({} {pct:+.1}%; {vary_words})", time_words(delta, true))
        }
        Change::Inconclusive => {
            format!("{label_a} against {label_b}: {} a {unit} ({pct:+.1}%), inconclusive ({vary_words})", time_words(delta, true))
        }
    };
    let terms = top_terms(d, label_a, label_b, 3);
    if terms.is_empty() {
        head
    } else {
        format!("{head}: {}", terms.join(", "))
    }
}

/// The rows that moved most, in words; each side's one-side-only kernels as one term.
pub fn top_terms(d: &PhaseDiff, label_a: &str, label_b: &str, n: usize) -> Vec<String> {
    let mut terms: Vec<(i64, String)> = Vec::new();
    for (part, label) in [("only_a", label_a), ("only_b", label_b)] {
        let rows: Vec<&DiffRow> = d.rows.iter().filter(|r| r.part == part).collect();
        if rows.is_empty() {
            continue;
        }
        let delta: i64 = rows.iter().map(|r| r.delta_ns()).sum();
        let count: usize = rows.iter().map(|r| r.a_count + r.b_count).sum();
        let mut by_time = rows.clone();
        by_time.sort_by_key(|r| -(r.a_ns + r.b_ns));
        let names: Vec<&str> = by_time.iter().take(4).map(|r| r.what.as_str()).collect();
        let more = if by_time.len() > 4 { ", …" } else { "" };
        terms.push((
            delta,
            format!(
                "kernels only {label} runs {} ({count} a step: {}{more})",
                time_words(delta as f64 / 1e3, true),
                names.join(", ")
            ),
        ));
    }
    for r in d.rows.iter().filter(|r| !matches!(r.part, "step" | "only_a" | "only_b")) {
        let what = if r.part == "busy" {
            r.what.clone()
        } else if r.what.is_empty() {
            r.part.to_string()
        } else {
            format!("{} ({})", r.part, r.what)
        };
        terms.push((r.delta_ns(), format!("{what} {}", time_words(r.delta_ns() as f64 / 1e3, true))));
    }
    terms.sort_by_key(|t| -t.0.abs());
    terms.into_iter().filter(|t| t.0 != 0).take(n).map(|t| t.1).collect()
}

/// The phase the first line speaks of: the one with the most time on both sides (steps × step).
pub fn main_phase(diffs: &[PhaseDiff]) -> Option<&PhaseDiff> {
    let total = |p: &Option<Pick>| p.as_ref().map_or(0.0, |p| p.steps_us.iter().sum::<f64>());
    diffs
        .iter()
        .filter(|d| d.a.is_some() && d.b.is_some())
        .max_by(|x, y| (total(&x.a) + total(&x.b)).total_cmp(&(total(&y.a) + total(&y.b))))
        .or_else(|| diffs.first())
}
