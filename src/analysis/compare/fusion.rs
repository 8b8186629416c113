//! Reading an alignment: matched pairs, fusions, substitutions and one-side-only kernels.
//!
//! Between two consecutive matched pairs (anchors) lie the kernels the alignment left unpaired:
//! a run `RA` on side A and `RB` on side B.
//! - First, kernels at either edge of a run that share the family of the neighbouring anchor's
//!   kernel on their side join that anchor (a split-K reduce after its GEMM, the q/k/v GEMMs of
//!   an eager layer next to the one fused QKV GEMM).
//! - `RA` ≥ 2 and `RB` = 1 (or the reverse): **fusion**, B's single kernel covers A's run, when
//!   it plausibly can (shares a family with the run, or its name says it fuses or names a run
//!   kernel's category word); otherwise one-side-only kernels.
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
    /// Kernels only side A runs here.
    OnlyA,
    /// Kernels only side B runs here.
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
    /// How the two sides' kernels relate.
    pub kind: Kind,
    /// Side A's kernels (GPU rows, in time order).
    pub a_rows: Vec<usize>,
    /// Side B's kernels (GPU rows, in time order).
    pub b_rows: Vec<usize>,
    /// How A's time fares against B's.
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
    /// The blocks aligned.
    pub blocks: Vec<Block>,
    /// Every aligned row, block by block.
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
            Token {
                family: ids.id(c.family(i)),
                category: ids.id(super::equivalents::class_of(c.name(i))),
                name,
                weight: super::equivalents::family_weight(c.family(i)),
            }
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
    if anchor_own != NO_ANCHOR && run.iter().any(|&i| c.family(i) == c.family(anchor_own)) {
        return true;
    }
    let cover_name = cover_side.name(cover).to_ascii_lowercase();
    if cover_name.contains("fuse") {
        return true;
    }
    run.iter().any(|&i| category_words(c.name(i)).iter().any(|w| cover_name.contains(w.as_str())))
}

/// Whether kernel `cover` (on `cover_side`) plausibly does the work of the run `run` (on
/// `run_side`) at the same place: it shares a family with a run kernel, or its name says it fuses
/// or names a run kernel's category word.
fn covers(run_side: &Side, run: &[usize], cover_side: &Side, cover: usize) -> bool {
    let fam = cover_side.analysis.categories.family(cover);
    run.iter().any(|&i| run_side.analysis.categories.family(i) == fam) || belongs(run_side, run, NO_ANCHOR, cover_side, cover)
}

/// "No anchor kernel" for [`belongs`].
const NO_ANCHOR: usize = usize::MAX;

/// Groups of an alignment being built: anchors keep their index so runs can join them.
struct Group {
    kind: Kind,
    a: Vec<usize>,
    b: Vec<usize>,
}

/// Which side a run of unpaired kernels is on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side_ {
    A,
    B,
}

impl Group {
    /// The anchor's first kernel on side `s`.
    fn own(&self, s: Side_) -> usize {
        if s == Side_::A {
            self.a[0]
        } else {
            self.b[0]
        }
    }
    /// An anchor takes runs from one side only, so a fusion is always one kernel against many.
    fn can_take(&self, s: Side_) -> bool {
        if s == Side_::A {
            self.b.len() == 1
        } else {
            self.a.len() == 1
        }
    }
    /// Adds a run of side `s` to this anchor, making it a fusion.
    fn take(&mut self, s: Side_, run: Vec<usize>) {
        self.kind = Kind::Fusion;
        if s == Side_::A {
            self.a.extend(run)
        } else {
            self.b.extend(run)
        }
    }
}

/// Moves the kernels at the start of `run` that share the family of the previous anchor's kernel
/// (on the run's side) into that anchor, and likewise the kernels at its end into the next anchor.
fn peel(groups: &mut [Group], run: &mut Vec<usize>, side: &Side, prev: Option<usize>, next: Option<usize>, which: Side_) {
    let c = &side.analysis.categories;
    if let Some(p) = prev.filter(|&g| groups[g].can_take(which)) {
        let fam = c.family(groups[p].own(which)).to_string();
        let k = run.iter().take_while(|&&i| c.family(i) == fam).count();
        if k > 0 {
            let head: Vec<usize> = run.drain(..k).collect();
            groups[p].take(which, head);
        }
    }
    if let Some(n) = next.filter(|&g| groups[g].can_take(which)) {
        let fam = c.family(groups[n].own(which)).to_string();
        let k = run.iter().rev().take_while(|&&i| c.family(i) == fam).count();
        if k > 0 {
            let tail: Vec<usize> = run.split_off(run.len() - k);
            groups[n].take(which, tail);
        }
    }
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
    for (region, (prev, mut ra, mut rb)) in pending.into_iter().enumerate() {
        let next = (region < n_anchors).then_some(region);
        // 1. kernels at the edges of a run that share the family of the neighbouring anchor's
        //    kernel on their side join that anchor (split-K reduce after its GEMM, paged-attention
        //    reduce after its compute kernel...)
        peel(&mut groups, &mut ra, a, prev, next, Side_::A);
        peel(&mut groups, &mut rb, b, prev, next, Side_::B);
        // 2. what is left
        match (ra.len(), rb.len()) {
            (0, 0) => {}
            (1, 1) => extra.push(Group { kind: Kind::Substituted, a: ra, b: rb }),
            (n, 1) if n >= 2 && covers(a, &ra, b, rb[0]) => extra.push(Group { kind: Kind::Fusion, a: ra, b: rb }),
            (1, n) if n >= 2 && covers(b, &rb, a, ra[0]) => extra.push(Group { kind: Kind::Fusion, a: ra, b: rb }),
            (_, 0) | (0, _) => {
                let run_is_a = rb.is_empty();
                let run = if run_is_a { ra } else { rb };
                let (run_side, cover_side) = if run_is_a { (a, b) } else { (b, a) };
                let which = if run_is_a { Side_::A } else { Side_::B };
                let fits = |g: usize| {
                    let grp = &groups[g];
                    let (own, cover) = if run_is_a { (grp.a[0], grp.b[0]) } else { (grp.b[0], grp.a[0]) };
                    grp.can_take(which) && belongs(run_side, &run, own, cover_side, cover)
                };
                let family_hits = |g: usize| {
                    let own = groups[g].own(which);
                    let c = &run_side.analysis.categories;
                    run.iter().filter(|&&i| c.family(i) == c.family(own)).count()
                };
                let target = match (prev.filter(|&g| fits(g)), next.filter(|&g| fits(g))) {
                    (Some(p), Some(n)) => Some(if family_hits(n) > family_hits(p) { n } else { p }),
                    (p, n) => p.or(n),
                };
                match target {
                    Some(g) => groups[g].take(which, run),
                    None => {
                        for r in run {
                            extra.push(if run_is_a {
                                Group { kind: Kind::OnlyA, a: vec![r], b: vec![] }
                            } else {
                                Group { kind: Kind::OnlyB, a: vec![], b: vec![r] }
                            });
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
