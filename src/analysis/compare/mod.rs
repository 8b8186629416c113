//! Comparison of two analysed traces: where is one GPU, build or configuration slower than the
//! other, and why.
//!
//! Each side is an [`Analysis`] reduced to the GPU rows of the selected phase ([`Side`]). Every
//! level groups those rows by a key and pairs the groups of both sides by key; nothing is
//! dropped: every GPU row (kernel, memcpy, memset) of each side falls into exactly one row of
//! each level, as a matched row or a one-side-only row, so each side's column sums to that
//! side's total.
//!
//! Levels, one module each: [`overall`] (totals, busy/idle, per phase), [`categories`]
//! (family and category), [`ops`] (the CPU op or launcher that owns the kernels), [`layers`]
//! (per phase and layer index, mean per pass), [`align`] (sequence alignment of one
//! representative layer and the pre/post parts) and [`fusion`] (reading the alignment: matched
//! pairs, fusions, one-side-only kernels).
//!
//! Times are compared per pass (total / number of forward passes of the selection on that side),
//! so traces with different step counts compare fairly; `ratio = A / B` and the status says how
//! side A fares against side B.

pub mod align;
pub mod blocks;
pub mod budget;
pub mod categories;
pub mod equivalents;
pub mod fusion;
pub mod layers;
pub mod noise;
pub mod ops;
pub mod overall;

use super::options::{Declared, Kind};
use super::phases::Phase;
use super::Analysis;
use crate::error::Result;
use crate::model::NONE;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

super::options::declare_options! {
    /// User-settable options of a comparison, declared once (see [`Declared`]): the CLI's flags,
    /// MCP's schema, the Python keywords and the page's settings are made from it.
    #[derive(Debug, Clone, Serialize, Deserialize)]
    #[serde(default, deny_unknown_fields)]
    pub struct CompareOptions {
        /// Which kernels to compare, by each kernel's phase.
        phase: String = "all".into(), Kind::Choice(Phase::selectable), ["--phase"] "P";
        /// Side A's label in tables (default: its GPU name).
        label_a: Option<String> = None, Kind::Text, ["--label-a"] "NAME";
        /// Side B's label in tables (default: its GPU name).
        label_b: Option<String> = None, Kind::Text, ["--label-b"] "NAME";
        /// A is `slower` when A/B exceeds this ratio, `faster` when below its inverse.
        ratio_threshold: f64 = 1.1, Kind::Number, ["--ratio-threshold"] "R",
            check |r| r.is_finite() && *r >= 1.0 => "must be a number >= 1";
        /// Differences smaller than this (µs per pass) are `similar` whatever the ratio.
        min_gap_us: f64 = 1.0, Kind::Number, ["--min-gap-us"] "X",
            check |g| g.is_finite() && *g >= 0.0 => "must be a number >= 0";
        /// A step change under this share of B's step is `same` in `compare_verdict`, however steady the steps (0.01 or 1%).
        min_change: f64 = 0.01, Kind::Share, ["--min-change"] "S",
            check |m| m.is_finite() && (0.0..1.0).contains(m) => "must be a share in [0, 1)";
        /// Largest alignment matrix (kernels of A x kernels of B) per aligned block; longer blocks are aligned on their first kernels (said in the summary).
        max_align_cells: usize = 16_000_000, Kind::Count, ["--max-align-cells"] "N";
        /// Side A's file name: labels the side when both ran on one GPU model.
        source_a: Option<String> = None, Kind::Internal, [] "";
        /// Side B's file name.
        source_b: Option<String> = None, Kind::Internal, [] "";
    }
}

impl CompareOptions {
    /// The selected phase (`None` = all phases). Errors on an unknown name.
    pub fn phase_filter(&self) -> Result<Option<Phase>> {
        Phase::select("phase", &self.phase)
    }
    /// Checks the phase and the thresholds.
    pub fn validate(&self) -> Result<()> {
        self.phase_filter()?;
        self.check_fields()
    }
}

/// One side of a comparison: an analysis, its label and the GPU rows selected by phase.
pub struct Side<'a> {
    /// The side's analysis.
    pub analysis: &'a Analysis,
    /// The side's label in tables (`A`, a file name, a `--label-a`).
    pub label: String,
    /// Selected GPU rows, in trace order.
    pub rows: Vec<usize>,
    /// Forward passes of the selection (0 when the trace has no detected passes).
    pub passes: usize,
}

impl<'a> Side<'a> {
    /// Selects the rows of `analysis` in phase `phase` (`None` = every GPU row).
    pub fn new(analysis: &'a Analysis, label: String, phase: Option<Phase>) -> Side<'a> {
        let n = analysis.trace.gpu.len();
        let rows = match phase {
            None => (0..n).collect(),
            Some(p) => (0..n).filter(|&i| analysis.phases.phase_of_row.get(i).copied().flatten() == Some(p)).collect(),
        };
        let passes = passes_in(analysis, phase);
        Side { analysis, label, rows, passes }
    }
    /// Divisor for per-pass means: the number of passes, at least 1.
    pub fn pass_divisor(&self) -> f64 {
        self.passes.max(1) as f64
    }
    /// Duration (ns) of GPU row `i`.
    pub fn dur(&self, i: usize) -> i64 {
        self.analysis.trace.gpu.dur[i]
    }
    /// Total time (ns) of the selected rows.
    pub fn total_ns(&self) -> i64 {
        self.rows.iter().map(|&i| self.dur(i)).sum()
    }
    /// Kernel name of GPU row `i`.
    pub fn name(&self, i: usize) -> &str {
        self.analysis.trace.name(self.analysis.trace.gpu.name[i])
    }
}

/// Number of passes of phase `phase` (`None` = all passes).
pub fn passes_in(a: &Analysis, phase: Option<Phase>) -> usize {
    a.phases.passes.iter().filter(|p| phase.is_none_or(|ph| p.phase == ph)).count()
}

/// Pass index of GPU row `i`, if any.
pub fn pass_of(a: &Analysis, i: usize) -> Option<u32> {
    a.phases.pass_of_row.get(i).copied().filter(|&p| p != NONE)
}

/// The two labels: given ones; else the GPU names when they differ; else (one GPU model on both
/// sides) the part of the two file names that tells them apart ([`distinct_names`]); else `A`
/// and `B` after the GPU's name.
pub fn labels(a: &Analysis, b: &Analysis, opts: &CompareOptions) -> (String, String) {
    let given = |l: &Option<String>| l.clone().filter(|s| !s.is_empty());
    let (da, db) = (a.trace.meta.device_label(), b.trace.meta.device_label());
    let (fallback_a, fallback_b) = match (&opts.source_a, &opts.source_b) {
        _ if da != db => (da, db),
        (Some(x), Some(y)) => distinct_names(x, y),
        _ => (format!("{da} (A)"), format!("{db} (B)")),
    };
    let la = given(&opts.label_a).unwrap_or(fallback_a);
    let lb = given(&opts.label_b).unwrap_or(fallback_b);
    if la == lb {
        (format!("{la} (A)"), format!("{lb} (B)"))
    } else {
        (la, lb)
    }
}

/// The shortest parts of two file names that tell them apart: each name's base (no folder, no
/// `.json.gz`-like endings) split at `_`, `-` and `.`, without the words both share at the start
/// and at the end (`dataloader_workers0_rn50_v100…` and `dataloader_workers4_rn50_v100…` are
/// `workers0` and `workers4`). A side left with nothing keeps its whole base name; names equal
/// after that are the bases with `(A)` and `(B)`.
pub fn distinct_names(a: &str, b: &str) -> (String, String) {
    fn base(p: &str) -> &str {
        let name = p.rsplit(['/', '\\']).next().unwrap_or(p);
        let mut n = name;
        while let Some(shorter) =
            [".gz", ".json", ".trace", ".pt", ".sqlite", ".pb", ".xplane"].iter().find_map(|e| n.strip_suffix(e))
        {
            n = shorter;
        }
        n
    }
    let (ba, bb) = (base(a), base(b));
    if ba == bb {
        return (format!("{ba} (A)"), format!("{bb} (B)"));
    }
    let split = |s: &str| -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut start = 0;
        for (i, c) in s.char_indices() {
            if matches!(c, '_' | '-' | '.') {
                if i > start {
                    out.push((start, i));
                }
                start = i + 1;
            }
        }
        if start < s.len() {
            out.push((start, s.len()));
        }
        out
    };
    let (wa, wb) = (split(ba), split(bb));
    let word = |s: &str, w: (usize, usize)| s[w.0..w.1].to_string();
    let head = wa.iter().zip(&wb).take_while(|(x, y)| word(ba, **x) == word(bb, **y)).count();
    let tail = wa[head..].iter().rev().zip(wb[head..].iter().rev()).take_while(|(x, y)| word(ba, **x) == word(bb, **y)).count();
    let part = |s: &str, w: &[(usize, usize)]| -> String {
        let w = &w[head..w.len() - tail];
        match (w.first(), w.last()) {
            (Some(f), Some(l)) => s[f.0..l.1].to_string(),
            _ => s.to_string(),
        }
    };
    let (pa, pb) = (part(ba, &wa), part(bb, &wb));
    if pa == pb {
        (format!("{ba} (A)"), format!("{bb} (B)"))
    } else {
        (pa, pb)
    }
}

/// How side A fares against side B in one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// A takes longer than B (beyond the thresholds).
    Slower,
    /// A takes less time than B (beyond the thresholds).
    Faster,
    /// Within the thresholds.
    Similar,
    /// Present in A only.
    OnlyA,
    /// Present in B only.
    OnlyB,
}

impl Status {
    /// Name as shown in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Slower => "slower",
            Status::Faster => "faster",
            Status::Similar => "similar",
            Status::OnlyA => "only_a",
            Status::OnlyB => "only_b",
        }
    }
}

/// Count and time of a group of GPU rows on one side.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Agg {
    /// Rows in the group.
    pub count: usize,
    /// Their summed duration (ns).
    pub time_ns: i64,
}

impl Agg {
    /// Adds one row.
    pub fn add(&mut self, dur_ns: i64) {
        self.count += 1;
        self.time_ns += dur_ns;
    }
}

/// Ratio, gap and status of one compared row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Verdict {
    /// A per pass / B per pass; `None` when B took no time.
    pub ratio: Option<f64>,
    /// A per pass − B per pass (ns).
    pub gap_ns: f64,
    /// How A fares against B.
    pub status: Status,
}

/// Judges one row from the per-pass times (ns) and counts of both sides.
pub fn judge(a: Agg, b: Agg, a_div: f64, b_div: f64, opts: &CompareOptions) -> Verdict {
    let (ta, tb) = (a.time_ns as f64 / a_div, b.time_ns as f64 / b_div);
    let gap_ns = ta - tb;
    let ratio = if tb > 0.0 {
        Some(ta / tb)
    } else if ta == 0.0 {
        Some(1.0)
    } else {
        None
    };
    let status = if b.count == 0 && a.count > 0 {
        Status::OnlyA
    } else if a.count == 0 && b.count > 0 {
        Status::OnlyB
    } else if gap_ns.abs() < opts.min_gap_us * 1000.0 {
        Status::Similar
    } else {
        match ratio {
            None => Status::Slower,
            Some(r) if r > opts.ratio_threshold => Status::Slower,
            Some(r) if r < 1.0 / opts.ratio_threshold => Status::Faster,
            Some(_) => Status::Similar,
        }
    };
    Verdict { ratio, gap_ns, status }
}

/// A group of one side's rows: their aggregate and top kernel's name.
type Grouped = (Agg, String);

/// The selected rows of a side grouped by `key`: each key's aggregate and its top kernel (the
/// kernel name with most time under it; ties: the name interned first). Rows are grouped in one
/// pass by `raw`, a cheap key (an id); `key` names each distinct raw key once, so a level keyed
/// by strings makes one string per group, not one per row.
fn grouped<R: std::hash::Hash + Eq + Copy, K: Ord>(
    side: &Side,
    raw: impl Fn(&Side, usize) -> R,
    key: impl Fn(&Side, R) -> K,
) -> BTreeMap<K, Grouped> {
    let g = &side.analysis.trace.gpu;
    let mut per_raw: crate::model::FastMap<R, (Agg, crate::model::FastMap<u32, i64>)> = Default::default();
    for &i in &side.rows {
        let (agg, names) = per_raw.entry(raw(side, i)).or_default();
        agg.add(side.dur(i));
        *names.entry(g.name[i]).or_insert(0) += g.dur[i];
    }
    let mut per_key: BTreeMap<K, (Agg, crate::model::FastMap<u32, i64>)> = BTreeMap::new();
    for (r, (agg, names)) in per_raw {
        let (total, all) = per_key.entry(key(side, r)).or_default();
        total.count += agg.count;
        total.time_ns += agg.time_ns;
        for (n, t) in names {
            *all.entry(n).or_insert(0) += t;
        }
    }
    per_key
        .into_iter()
        .map(|(k, (agg, names))| {
            let top = names.into_iter().max_by(|x, y| x.1.cmp(&y.1).then(y.0.cmp(&x.0))).map(|(n, _)| n);
            (k, (agg, top.map(|n| side.analysis.trace.name(n).to_string()).unwrap_or_default()))
        })
        .collect()
}

/// One row per key present on either side: both sides grouped by `raw` then `key` (see
/// `grouped`), paired, judged with the per-pass divisors `divisor` gives for that key, and
/// noted with each side's top kernel under it. Rows come in key order; levels that rank by gap
/// sort them with [`sort_by_gap`].
pub fn keyed_rows<R: std::hash::Hash + Eq + Copy, K: Ord>(
    a: &Side,
    b: &Side,
    raw: impl Fn(&Side, usize) -> R,
    key: impl Fn(&Side, R) -> K,
    show: impl Fn(&K) -> Vec<String>,
    divisor: impl Fn(&Side, &K) -> f64,
    opts: &CompareOptions,
) -> Vec<LevelRow> {
    let mut both: BTreeMap<K, (Grouped, Grouped)> = BTreeMap::new();
    for (k, v) in grouped(a, &raw, &key) {
        both.entry(k).or_default().0 = v;
    }
    for (k, v) in grouped(b, &raw, &key) {
        both.entry(k).or_default().1 = v;
    }
    both.into_iter()
        .map(|(k, ((xa, a_note), (xb, b_note)))| {
            let (da, db) = (divisor(a, &k), divisor(b, &k));
            LevelRow { key: show(&k), a: xa, b: xb, a_div: da, b_div: db, verdict: judge(xa, xb, da, db, opts), a_note, b_note }
        })
        .collect()
}

/// A keyed row of a level: the key's display cells, both sides' aggregates and the verdict.
#[derive(Debug, Clone)]
pub struct LevelRow {
    /// Key parts (e.g. family and category), as shown.
    pub key: Vec<String>,
    /// Side A's aggregate.
    pub a: Agg,
    /// Side B's aggregate.
    pub b: Agg,
    /// Per-pass divisors used for this row.
    pub a_div: f64,
    /// Side B's per-pass divisor.
    pub b_div: f64,
    /// Ratio, gap and status.
    pub verdict: Verdict,
    /// Free-text details per side (representative kernel, dominant category...).
    pub a_note: String,
    /// Side B's details.
    pub b_note: String,
}

/// Sorts level rows by absolute per-pass gap, largest first (ties by key).
pub fn sort_by_gap(rows: &mut [LevelRow]) {
    rows.sort_by(|x, y| {
        y.verdict
            .gap_ns
            .abs()
            .partial_cmp(&x.verdict.gap_ns.abs())
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| x.key.cmp(&y.key))
    });
}

/// Everything a comparison computes.
pub struct Comparison {
    /// Side A's label.
    pub label_a: String,
    /// Side B's label.
    pub label_b: String,
    /// The whole-trace metrics side by side.
    pub overall: overall::Overall,
    /// Kernel categories and families compared.
    pub categories: Vec<LevelRow>,
    /// CPU ops compared.
    pub ops: Vec<LevelRow>,
    /// Layers compared, by phase and part.
    pub layers: Vec<LevelRow>,
    /// The kernel-by-kernel alignment of both sides, with fusions.
    pub alignment: fusion::AlignmentReport,
    /// Per phase, one representative step of each side, their budgets side by side, and the
    /// verdict against the steps' noise.
    pub budget: Vec<budget::PhaseDiff>,
    /// A's findings checked in B (B as the trace after a fix), computed once for every face.
    pub outcomes: Vec<crate::analysis::findings::outcome::Outcome>,
}

impl Comparison {
    /// The comparison in one sentence: the main phase's verdict, delta, noise and what moved
    /// most (the first line of every compare answer).
    pub fn headline(&self) -> String {
        match budget::main_phase(&self.budget) {
            Some(d) => budget::sentence(d, &self.label_a, &self.label_b),
            None => format!("{} and {}: no step or capture window to set against each other", self.label_a, self.label_b),
        }
    }
}

/// Compares two analyses.
pub fn compare(a: &Analysis, b: &Analysis, opts: &CompareOptions) -> Result<Comparison> {
    opts.validate()?;
    let phase = opts.phase_filter()?;
    let (la, lb) = labels(a, b, opts);
    let sa = Side::new(a, la.clone(), phase);
    let sb = Side::new(b, lb.clone(), phase);
    Ok(Comparison {
        overall: overall::overall(&sa, &sb, phase, opts),
        categories: categories::compare(&sa, &sb, opts),
        ops: ops::compare(&sa, &sb, opts),
        layers: layers::compare(&sa, &sb, opts),
        alignment: fusion::report(&sa, &sb, phase, opts),
        budget: budget::budget_diff(a, b, phase, opts.min_change),
        outcomes: crate::analysis::findings::outcome::outcomes(a, b),
        label_a: la,
        label_b: lb,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_told_apart_by_their_shortest_differing_part() {
        let d = |a, b| distinct_names(a, b);
        assert_eq!(
            d("fixtures/dataloader_workers0_rn50_v100.pt.trace.json.gz", "x/dataloader_workers4_rn50_v100.pt.trace.json.gz"),
            ("workers0".into(), "workers4".into())
        );
        assert_eq!(d("mfu_2gpu_before.sqlite", "mfu_2gpu_after.sqlite"), ("before".into(), "after".into()));
        assert_eq!(d("xdit_flux1.json.gz", "xdit_flux1_aiter_sage.json.gz"), ("xdit_flux1".into(), "aiter_sage".into()));
        assert_eq!(d("a/t.json", "b/t.json"), ("t (A)".into(), "t (B)".into()));
    }

    #[test]
    fn judge_thresholds() {
        let o = CompareOptions::default();
        let agg = |t: i64| Agg { count: 1, time_ns: t };
        assert_eq!(judge(agg(12_000), agg(10_000), 1.0, 1.0, &o).status, Status::Slower);
        assert_eq!(judge(agg(9_000), agg(10_000), 1.0, 1.0, &o).status, Status::Faster);
        assert_eq!(judge(agg(10_500), agg(10_000), 1.0, 1.0, &o).status, Status::Similar);
        // below the minimum gap: similar whatever the ratio
        assert_eq!(judge(agg(900), agg(100), 1.0, 1.0, &o).status, Status::Similar);
        assert_eq!(judge(agg(5_000), Agg::default(), 1.0, 1.0, &o).status, Status::OnlyA);
        assert_eq!(judge(Agg::default(), agg(5_000), 1.0, 1.0, &o).status, Status::OnlyB);
        // per pass: 2 passes of 10 µs vs 1 pass of 10 µs
        let v = judge(agg(20_000), agg(10_000), 2.0, 1.0, &o);
        assert_eq!(v.ratio, Some(1.0));
        assert_eq!(v.status, Status::Similar);
    }
}
