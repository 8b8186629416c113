//! Reading an alignment: matched pairs, fusions, substitutions and one-side-only kernels.
//!
//! Between two consecutive matched pairs (anchors) lie the kernels the alignment left unpaired:
//! a run `RA` on side A and `RB` on side B.
//! - `RA` ≥ 2 and `RB` = 1 (or the reverse): **fusion**, B's single kernel covers A's run.
//! - `RA` = 1 and `RB` = 1: **substituted**, each side runs a different kind of kernel there.
//! - one run empty: the other run joins a neighbouring anchor as a **fusion** (that anchor's
//!   kernel covers its partner plus the run) when the run plausibly belongs to it: a run kernel
//!   has the anchor's family on its own side, or the covering kernel's name says it fuses
//!   (`fuse`) or names a run kernel's category word (`norm`, `quant`, `rope`...). Otherwise the
//!   run's kernels are **only_a** / **only_b**.
//! - both runs ≥ 2: one-side-only kernels.
//!
//! Every kernel of each aligned block is in exactly one row.

use super::align::{align, NameSimilarity, Step, Token};
use super::blocks::{blocks, Block};
use super::{judge, Agg, CompareOptions, Side, Verdict};
use crate::analysis::phases::Phase;
use std::collections::HashMap;

/// Kind of an aligned row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// One kernel on each side, same family.
    Match,
    /// One kernel on each side, different families, at the same place.
    Substituted,
    /// One kernel on one side covers several on the other.
    Fusion,
    OnlyA,
    OnlyB,
}

impl Kind {
    /// Name as shown in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Match => "match",
            Kind::Substituted => "substituted",
            Kind::Fusion => "fusion",
            Kind::OnlyA => "only_a",
            Kind::OnlyB => "only_b",
        }
    }
}

/// One row of the alignment: the kernels of each side it holds (GPU rows, in time order).
#[derive(Debug, Clone)]
pub struct AlignedRow {
    /// Index into [`AlignmentReport::blocks`].
    pub block: usize,
    pub kind: Kind,
    pub a_rows: Vec<usize>,
    pub b_rows: Vec<usize>,
    pub verdict: Verdict,
}

impl AlignedRow {
    /// The side holding a single kernel of a fusion (`'a'` or `'b'`).
    pub fn fused_side(&self) -> Option<char> {
        match (self.kind, self.a_rows.len(), self.b_rows.len()) {
            (Kind::Fusion, 1, n) if n > 1 => Some('a'),
            (Kind::Fusion, n, 1) if n > 1 => Some('b'),
            _ => None,
        }
    }
}

/// Alignment of every block plus counts.
#[derive(Debug, Clone, Default)]
pub struct AlignmentReport {
    pub blocks: Vec<Block>,
    pub rows: Vec<AlignedRow>,
}

impl AlignmentReport {
    /// Number of rows of a kind.
    pub fn count(&self, kind: Kind) -> usize {
        self.rows.iter().filter(|r| r.kind == kind).count()
    }
}

/// Ids shared by both sides for families and categories.
#[derive(Default)]
struct Ids(HashMap<String, u32>);

impl Ids {
    fn id(&mut self, s: &str) -> u32 {
        let n = self.0.len() as u32;
        *self.0.entry(s.to_string()).or_insert(n)
    }
}

/// Tokens of a sequence and its distinct names.
fn tokens<'s>(s: &'s Side, rows: &[usize], ids: &mut Ids) -> (Vec<Token>, Vec<&'s str>) {
    let mut names: Vec<&str> = Vec::new();
    let mut name_ix: HashMap<u32, u32> = HashMap::new();
    let c = &s.analysis.categories;
    let toks = rows
        .iter()
        .map(|&i| {
            let nid = s.analysis.trace.gpu.name[i];
            let name = *name_ix.entry(nid).or_insert_with(|| {
                names.push(s.name(i));
                names.len() as u32 - 1
            });
            Token { family: ids.id(c.family(i)), category: ids.id(c.name(i)), name }
        })
        .collect();
    (toks, names)
}

/// Lower-case words of a category name that can appear in a fused kernel's name.
fn category_words(category: &str) -> Vec<String> {
    category
        .split(|c: char| !c.is_ascii_alphanumeric())
        .map(|w| w.to_ascii_lowercase())
        .filter(|w| w.len() >= 3 && !matches!(w.as_str(), "other" | "forward" | "compute" | "update" | "fused"))
        .collect()
}

/// Whether a run of unpaired kernels (on side `run_side`) plausibly belongs to an anchor whose
/// kernel on that side is `anchor_own` and on the other side `cover`.
fn belongs(run_side: &Side, run: &[usize], anchor_own: usize, cover_side: &Side, cover: usize) -> bool {
    let c = &run_side.analysis.categories;
    if run.iter().any(|&i| c.family(i) == c.family(anchor_own)) {
        return true;
    }
    let cover_name = cover_side.name(cover).to_ascii_lowercase();
    if cover_name.contains("fuse") {
        return true;
    }
    run.iter().any(|&i| category_words(c.name(i)).iter().any(|w| cover_name.contains(w.as_str())))
}

/// Groups of an alignment being built: anchors keep their index so runs can join them.
struct Group {
    kind: Kind,
    a: Vec<usize>,
    b: Vec<usize>,
}

/// Turns the steps of one block into rows (GPU row ids).
pub fn classify(a: &Side, b: &Side, a_seq: &[usize], b_seq: &[usize], steps: &[Step]) -> Vec<(Kind, Vec<usize>, Vec<usize>)> {
    let mut groups: Vec<Group> = Vec::new();
    // (index of previous anchor group, runs)
    let mut pending: Vec<(Option<usize>, Vec<usize>, Vec<usize>)> = Vec::new();
    let (mut ra, mut rb) = (Vec::new(), Vec::new());
    let mut last_anchor: Option<usize> = None;
    for st in steps {
        match *st {
            Step::OnlyA(i) => ra.push(a_seq[i]),
            Step::OnlyB(j) => rb.push(b_seq[j]),
            Step::Pair(i, j) => {
                pending.push((last_anchor, std::mem::take(&mut ra), std::mem::take(&mut rb)));
                groups.push(Group { kind: Kind::Match, a: vec![a_seq[i]], b: vec![b_seq[j]] });
                last_anchor = Some(groups.len() - 1);
            }
        }
    }
    pending.push((last_anchor, ra, rb));
    // region r lies between anchor r-1 (`prev`) and anchor r (groups hold only anchors so far)
    let n_anchors = groups.len();
    let mut extra: Vec<Group> = Vec::new();
    for (region, (prev, ra, rb)) in pending.into_iter().enumerate() {
        let next = (region < n_anchors).then_some(region);
        match (ra.len(), rb.len()) {
            (0, 0) => {}
            (1, 1) => extra.push(Group { kind: Kind::Substituted, a: ra, b: rb }),
            (n, 1) | (1, n) if n >= 2 => extra.push(Group { kind: Kind::Fusion, a: ra, b: rb }),
            (_, 0) | (0, _) => {
                let run_is_a = rb.is_empty();
                let run = if run_is_a { ra } else { rb };
                let (run_side, cover_side) = if run_is_a { (a, b) } else { (b, a) };
                let fits = |g: usize| {
                    let grp = &groups[g];
                    let (own, cover) = if run_is_a { (grp.a[0], grp.b[0]) } else { (grp.b[0], grp.a[0]) };
                    belongs(run_side, &run, own, cover_side, cover)
                };
                let family_hits = |g: usize| {
                    let grp = &groups[g];
                    let own = if run_is_a { grp.a[0] } else { grp.b[0] };
                    let c = &run_side.analysis.categories;
                    run.iter().filter(|&&i| c.family(i) == c.family(own)).count()
                };
                let target = match (prev.filter(|&g| fits(g)), next.filter(|&g| fits(g))) {
                    (Some(p), Some(n)) => Some(if family_hits(n) > family_hits(p) { n } else { p }),
                    (p, n) => p.or(n),
                };
                match target {
                    Some(g) => {
                        let grp = &mut groups[g];
                        grp.kind = Kind::Fusion;
                        if run_is_a { grp.a.extend(run) } else { grp.b.extend(run) }
                    }
                    None => {
                        for r in run {
                            extra.push(if run_is_a { Group { kind: Kind::OnlyA, a: vec![r], b: vec![] } } else { Group { kind: Kind::OnlyB, a: vec![], b: vec![r] } });
                        }
                    }
                }
            }
            _ => {
                extra.extend(ra.into_iter().map(|r| Group { kind: Kind::OnlyA, a: vec![r], b: vec![] }));
                extra.extend(rb.into_iter().map(|r| Group { kind: Kind::OnlyB, a: vec![], b: vec![r] }));
            }
        }
    }
    groups.extend(extra);
    // order rows along the alignment: by the first column holding one of their kernels
    let mut col_a = HashMap::new();
    let mut col_b = HashMap::new();
    for (col, st) in steps.iter().enumerate() {
        match *st {
            Step::Pair(i, j) => {
                col_a.insert(a_seq[i], col);
                col_b.insert(b_seq[j], col);
            }
            Step::OnlyA(i) => {
                col_a.insert(a_seq[i], col);
            }
            Step::OnlyB(j) => {
                col_b.insert(b_seq[j], col);
            }
        }
    }
    let first_col = |g: &Group| {
        let ca = g.a.iter().filter_map(|r| col_a.get(r)).min().copied();
        let cb = g.b.iter().filter_map(|r| col_b.get(r)).min().copied();
        ca.into_iter().chain(cb).min().unwrap_or(usize::MAX)
    };
    groups.sort_by_key(|g| first_col(g));
    groups
        .into_iter()
        .map(|mut g| {
            g.a.sort_by_key(|r| col_a.get(r).copied().unwrap_or(usize::MAX));
            g.b.sort_by_key(|r| col_b.get(r).copied().unwrap_or(usize::MAX));
            (g.kind, g.a, g.b)
        })
        .collect()
}

/// Aligns every block of the comparison and reads the alignments.
pub fn report(a: &Side, b: &Side, phase: Option<Phase>, opts: &CompareOptions) -> AlignmentReport {
    let blocks = blocks(a, b, phase, opts.max_align_cells);
    let mut rows = Vec::new();
    for (k, blk) in blocks.iter().enumerate() {
        let mut ids = Ids::default();
        let (ta, na) = tokens(a, &blk.a_rows, &mut ids);
        let (tb, nb) = tokens(b, &blk.b_rows, &mut ids);
        let sim = NameSimilarity::new(&na, &nb);
        let steps = align(&ta, &tb, &sim);
        for (kind, ar, br) in classify(a, b, &blk.a_rows, &blk.b_rows, &steps) {
            let agg = |s: &Side, v: &[usize]| Agg { count: v.len(), time_ns: v.iter().map(|&i| s.dur(i)).sum() };
            let verdict = judge(agg(a, &ar), agg(b, &br), 1.0, 1.0, opts);
            rows.push(AlignedRow { block: k, kind, a_rows: ar, b_rows: br, verdict });
        }
    }
    AlignmentReport { blocks, rows }
}
