//! Comparison tables, built from two analyses (so not in the single-trace [`super::TABLES`]):
//! `compare_summary`, `compare_categories`, `compare_ops`, `compare_layers`, `compare_alignment`,
//! `compare_fusions`, `compare_findings` (the first trace's findings, checked in the second),
//! `compare_call_paths` (the differential flame graph). Columns prefixed `a_` / `b_` belong to each side; `ratio = A / B` per pass
//! and `status` says how A fares against B (`slower`, `faster`, `similar`, `only_a`, `only_b`).

use crate::analysis::compare::fusion::{AlignedRow, Kind};
use crate::analysis::compare::overall::Value;
use crate::analysis::compare::{compare, CompareOptions, Comparison, LevelRow, Side, Verdict};
use crate::analysis::Analysis;
use crate::error::Result;
use crate::table::{Cell, Table};

/// Names of the comparison tables, in order.
pub const COMPARE_TABLES: &[&str] = &[
    "compare_verdict",
    "compare_budget",
    "compare_summary",
    "compare_categories",
    "compare_ops",
    "compare_layers",
    "compare_alignment",
    "compare_fusions",
    "compare_findings",
    "compare_call_paths",
    "compare_call_tree",
];

/// Every comparison table for two analyses (A first). Errors only on bad options.
pub fn compare_tables(a: &Analysis, b: &Analysis, opts: &CompareOptions) -> Result<Vec<Table>> {
    let c = compare(a, b, opts)?;
    Ok(tables_of(&c, a, b, opts))
}

/// The tables of a finished comparison.
pub fn tables_of(c: &Comparison, a: &Analysis, b: &Analysis, opts: &CompareOptions) -> Vec<Table> {
    let phase = opts.phase_filter().ok().flatten();
    let sa = Side::new(a, c.label_a.clone(), phase);
    let sb = Side::new(b, c.label_b.clone(), phase);
    let diffs = crate::analysis::code::differential::differential(a.side(), b.side(), phase);
    vec![
        verdict(c),
        budget(c),
        summary(c),
        level("compare_categories", &["level", "family", "category"], &c.categories, "top_kernel"),
        level("compare_ops", &["op"], &c.ops, "top_kernel"),
        level("compare_layers", &["phase", "part", "layer"], &c.layers, "top_kernel"),
        alignment(c, &sa, &sb),
        fusions(c, &sa, &sb),
        findings(&c.outcomes),
        call_paths(&diffs),
        call_tree(&diffs),
    ]
}

/// `compare_verdict`: per phase, A's representative step against B's ([`crate::analysis::compare::budget`]):
/// `slower`, `faster`, `same` or `inconclusive` against the noise of each side's steps
/// ([`crate::analysis::compare::noise`]), the delta a step, its share of B's step, the noise
/// (half-width of the 99% chance interval of the delta) and the samples it rests on; `sentence`
/// says it in words.
fn verdict(c: &Comparison) -> Table {
    let mut t = Table::new(
        "compare_verdict",
        &[
            "phase",
            "verdict",
            "delta_us:us",
            "delta_pct:float",
            "noise_us:us",
            "samples",
            "a_step_us:us",
            "b_step_us:us",
            "sentence",
        ],
    );
    for d in &c.budget {
        let (a, b) = (d.a.as_ref().map(|p| p.wall_ns), d.b.as_ref().map(|p| p.wall_ns));
        t.push(vec![
            Cell::from(d.phase.as_str()),
            Cell::from(d.judged.change.as_str()),
            d.delta_ns().map_or(Cell::Empty, Cell::Micros),
            d.delta_pct().map_or(Cell::Empty, |pct| Cell::Float((10.0 * pct).round() / 10.0)),
            d.judged.noise_us.map_or(Cell::Empty, |n| Cell::Micros((n * 1e3).round() as i64)),
            Cell::from(d.samples()),
            a.map_or(Cell::Empty, Cell::Micros),
            b.map_or(Cell::Empty, Cell::Micros),
            Cell::from(crate::analysis::compare::budget::sentence(d, &c.label_a, &c.label_b)),
        ]);
    }
    t
}

/// `compare_budget`: per phase, the budget rows of A's representative step beside B's, per step:
/// a `step` row (the two windows), then busy compute by category for kernels both sides run
/// (`busy`), for kernels one side runs (`only_a`, `only_b`, with `a_count`/`b_count` kernels a
/// step), and the budget's other parts. Every phase's rows but `step` add up to the step's
/// `delta_us`, on each side to its `a_us` / `b_us`.
fn budget(c: &Comparison) -> Table {
    let mut t = Table::new(
        "compare_budget",
        &["phase", "part", "what", "a_us:us", "b_us:us", "delta_us:us", "a_count:int", "b_count:int"],
    );
    for d in &c.budget {
        for r in &d.rows {
            let what = if r.part == "step" {
                let pass = |p: &Option<crate::analysis::compare::budget::Pick>| {
                    p.as_ref().map_or("-".to_string(), |p| match p.pass {
                        Some(i) => format!("pass {i}"),
                        None => "capture window".into(),
                    })
                };
                format!(
                    "median step: A {} of {}, B {} of {}",
                    pass(&d.a),
                    d.a.as_ref().map_or(0, |p| p.steps_us.len()),
                    pass(&d.b),
                    d.b.as_ref().map_or(0, |p| p.steps_us.len())
                )
            } else {
                r.what.clone()
            };
            t.push(vec![
                Cell::from(d.phase.as_str()),
                Cell::from(r.part),
                Cell::from(what),
                Cell::Micros(r.a_ns),
                Cell::Micros(r.b_ns),
                Cell::Micros(r.delta_ns()),
                Cell::Int(r.a_count as i64),
                Cell::Int(r.b_count as i64),
            ]);
        }
    }
    t
}

/// `compare_call_paths`: the differential flame graph's data: each call path (frames from the
/// outermost down to the kernel, `;`-joined, as in `traceprism flame`) with its GPU time per pass
/// of the selected phase on each side and `gap_per_pass_us` (A − B), largest change first.
fn call_paths(diffs: &[crate::analysis::code::differential::PathDiff]) -> Table {
    let mut t = Table::new("compare_call_paths", &["path", "a_per_pass_us:us", "b_per_pass_us:us", "gap_per_pass_us:us"]);
    for d in diffs {
        t.push(vec![
            Cell::from(d.path.as_str()),
            Cell::Float(d.a_ns_per_pass / 1e3),
            Cell::Float(d.b_ns_per_pass / 1e3),
            Cell::Float((d.a_ns_per_pass - d.b_ns_per_pass) / 1e3),
        ]);
    }
    t
}

/// `compare_call_tree`: `compare_call_paths` as one tree, a row per frame (`node`, `parent`, `depth`,
/// `name`) with the time per pass of everything under it on each side: what the page's
/// differential icicle draws ([`crate::analysis::code::differential::tree`]).
fn call_tree(diffs: &[crate::analysis::code::differential::PathDiff]) -> Table {
    let mut t =
        Table::new("compare_call_tree", &["node:int", "parent:int", "depth:int", "name", "a_per_pass_us:us", "b_per_pass_us:us"]);
    for (i, n) in crate::analysis::code::differential::tree(diffs).into_iter().enumerate() {
        t.push(vec![
            Cell::Int(i as i64),
            n.parent.map_or(Cell::Empty, |p| Cell::Int(p as i64)),
            Cell::Int(n.depth as i64),
            Cell::from(n.name),
            Cell::Float(n.a_ns_per_pass / 1e3),
            Cell::Float(n.b_ns_per_pass / 1e3),
        ]);
    }
    t
}

/// `compare_findings`: each finding of A (the trace before a change), what its phase's median
/// step took before and after, the measured saving against the predicted one, what of it is
/// left in B, and the verdict ([`crate::analysis::findings::outcome`]).
fn findings(outcomes: &[crate::analysis::findings::outcome::Outcome]) -> Table {
    let mut t = Table::new(
        "compare_findings",
        &["kind", "scope", "predicted_us:us", "a_step_us:us", "b_step_us:us", "measured_us:us", "b_remaining_us:us", "verdict"],
    );
    let us = |v: f64| Cell::Micros((v * 1e3).round() as i64);
    for o in outcomes {
        t.push(vec![
            Cell::from(o.kind.as_str()),
            Cell::from(o.scope.as_str()),
            us(o.predicted_us),
            us(o.before_step_us),
            o.after_step_us.map_or(Cell::Empty, us),
            o.measured_us.map_or(Cell::Empty, us),
            o.remaining_us.map_or(Cell::Empty, us),
            Cell::from(o.verdict.as_str()),
        ]);
    }
    t
}

fn ratio_cell(v: &Verdict) -> Cell {
    v.ratio.map_or(Cell::Empty, Cell::Float)
}

fn per_pass(ns: i64, div: f64) -> Cell {
    Cell::Float(ns as f64 / div / 1000.0)
}

fn value_cell(v: &Value) -> Cell {
    match v {
        Value::Text(s) => Cell::Text(s.clone()),
        Value::Count(n) => Cell::Int(*n),
        Value::Time(ns) => Cell::Micros(*ns),
    }
}

const VERDICT_COLUMNS: &[&str] = &["ratio:float", "gap_per_pass_us:us", "status"];

fn summary(c: &Comparison) -> Table {
    let mut t = Table::new(
        "compare_summary",
        &["metric", "a", "b", "a_per_pass_us:us", "b_per_pass_us:us", "ratio:float", "gap_per_pass_us:us", "status"],
    );
    for m in &c.overall.metrics {
        let (pa, pb) = match (&m.a, &m.b, &m.verdict) {
            (Value::Time(x), Value::Time(y), Some(_)) => (per_pass(*x, m.a_div), per_pass(*y, m.b_div)),
            _ => (Cell::Empty, Cell::Empty),
        };
        let (r, g, s) = match &m.verdict {
            Some(v) => (ratio_cell(v), Cell::Float(v.gap_ns / 1000.0), Cell::from(v.status.as_str())),
            None => (Cell::Empty, Cell::Empty, Cell::Empty),
        };
        // `a` and `b` hold metrics of several kinds (times, counts, names): the columns are text.
        let text = |v: &Value| Cell::Text(value_cell(v).text());
        t.push(vec![Cell::from(m.name.as_str()), text(&m.a), text(&m.b), pa, pb, r, g, s]);
    }
    let al = &c.alignment;
    for (k, blk) in al.blocks.iter().enumerate() {
        let desc = |pass: Option<u32>, used: usize, len: usize| {
            let p = pass.map_or("no passes".to_string(), |p| format!("pass {p}"));
            if used < len {
                format!("{p}, first {used} of {len} GPU events aligned")
            } else {
                format!("{p}, {len} GPU events")
            }
        };
        t.push(vec![
            Cell::from(format!("aligned block {k}: {}", blk.name)),
            Cell::from(desc(blk.a_pass, blk.a_rows.len(), blk.a_len)),
            Cell::from(desc(blk.b_pass, blk.b_rows.len(), blk.b_len)),
            Cell::Empty,
            Cell::Empty,
            Cell::Empty,
            Cell::Empty,
            Cell::Empty,
        ]);
    }
    for kind in [Kind::Match, Kind::Substituted, Kind::Fusion, Kind::OnlyA, Kind::OnlyB] {
        let rows: Vec<&AlignedRow> = al.rows.iter().filter(|r| r.kind == kind).collect();
        let ka: usize = rows.iter().map(|r| r.a_rows.len()).sum();
        let kb: usize = rows.iter().map(|r| r.b_rows.len()).sum();
        t.push(vec![
            Cell::from(format!("alignment rows: {} (kernels per side)", kind.as_str())),
            Cell::Text(ka.to_string()),
            Cell::Text(kb.to_string()),
            Cell::Empty,
            Cell::Empty,
            Cell::Empty,
            Cell::Empty,
            // The count of rows, once in the µs column; the status column says it in words.
            Cell::Text(format!("{} rows", rows.len())),
        ]);
    }
    t
}

/// A level table: key columns, counts, totals, per-pass means, verdict, notes.
fn level(name: &str, key_cols: &[&str], rows: &[LevelRow], note: &str) -> Table {
    let mut cols: Vec<String> = key_cols.iter().map(|s| s.to_string()).collect();
    for c in ["a_count:int", "b_count:int", "a_time_us:us", "b_time_us:us", "a_per_pass_us:us", "b_per_pass_us:us"] {
        cols.push(c.into());
    }
    cols.extend(VERDICT_COLUMNS.iter().map(|s| s.to_string()));
    cols.push(format!("a_{note}"));
    cols.push(format!("b_{note}"));
    let col_refs: Vec<&str> = cols.iter().map(|s| s.as_str()).collect();
    let mut t = Table::new(name, &col_refs);
    for r in rows {
        let mut cells: Vec<Cell> = r.key.iter().map(|k| Cell::from(k.as_str())).collect();
        cells.extend([
            Cell::from(r.a.count),
            Cell::from(r.b.count),
            Cell::Micros(r.a.time_ns),
            Cell::Micros(r.b.time_ns),
            per_pass(r.a.time_ns, r.a_div),
            per_pass(r.b.time_ns, r.b_div),
            ratio_cell(&r.verdict),
            Cell::Float(r.verdict.gap_ns / 1000.0),
            Cell::from(r.verdict.status.as_str()),
            Cell::from(r.a_note.as_str()),
            Cell::from(r.b_note.as_str()),
        ]);
        t.push(cells);
    }
    t
}

fn joined<'s>(s: &'s Side, rows: &[usize], f: impl Fn(&'s Side, usize) -> String) -> String {
    rows.iter().map(|&i| f(s, i)).collect::<Vec<_>>().join(" + ")
}

fn time(s: &Side, rows: &[usize]) -> i64 {
    rows.iter().map(|&i| s.dur(i)).sum()
}

fn category(s: &Side, i: usize) -> String {
    s.analysis.categories.name(i).to_string()
}

fn kernel(s: &Side, i: usize) -> String {
    s.name(i).to_string()
}

fn alignment(c: &Comparison, a: &Side, b: &Side) -> Table {
    let mut t = Table::new(
        "compare_alignment",
        &[
            "block",
            "position:int",
            "kind",
            "a_count:int",
            "b_count:int",
            "a_category",
            "b_category",
            "a_kernel",
            "b_kernel",
            "a_time_us:us",
            "b_time_us:us",
            "ratio:float",
            "gap_us:us",
            "status",
        ],
    );
    let mut pos = vec![0usize; c.alignment.blocks.len()];
    for r in &c.alignment.rows {
        pos[r.block] += 1;
        t.push(vec![
            Cell::from(c.alignment.blocks[r.block].name.as_str()),
            Cell::from(pos[r.block]),
            Cell::from(r.kind.as_str()),
            Cell::from(r.a_rows.len()),
            Cell::from(r.b_rows.len()),
            Cell::from(joined(a, &r.a_rows, category)),
            Cell::from(joined(b, &r.b_rows, category)),
            Cell::from(joined(a, &r.a_rows, kernel)),
            Cell::from(joined(b, &r.b_rows, kernel)),
            Cell::Micros(time(a, &r.a_rows)),
            Cell::Micros(time(b, &r.b_rows)),
            ratio_cell(&r.verdict),
            Cell::Float(r.verdict.gap_ns / 1000.0),
            Cell::from(r.verdict.status.as_str()),
        ]);
    }
    t
}

fn fusions(c: &Comparison, a: &Side, b: &Side) -> Table {
    let mut t = Table::new(
        "compare_fusions",
        &[
            "block",
            "fused_side",
            "fused_label",
            "fused_kernel",
            "fused_category",
            "fused_time_us:us",
            "unfused_count:int",
            "unfused_kernels",
            "unfused_categories",
            "unfused_time_us:us",
            "ratio:float",
            "gap_us:us",
            "status",
        ],
    );
    for r in c.alignment.rows.iter().filter(|r| r.kind == Kind::Fusion) {
        let Some(side) = r.fused_side() else { continue };
        let (fs, fr, us, ur) = if side == 'a' { (a, &r.a_rows, b, &r.b_rows) } else { (b, &r.b_rows, a, &r.a_rows) };
        t.push(vec![
            Cell::from(c.alignment.blocks[r.block].name.as_str()),
            Cell::from(side.to_string()),
            Cell::from(fs.label.as_str()),
            Cell::from(joined(fs, fr, kernel)),
            Cell::from(joined(fs, fr, category)),
            Cell::Micros(time(fs, fr)),
            Cell::from(ur.len()),
            Cell::from(joined(us, ur, kernel)),
            Cell::from(joined(us, ur, category)),
            Cell::Micros(time(us, ur)),
            ratio_cell(&r.verdict),
            Cell::Float(r.verdict.gap_ns / 1000.0),
            Cell::from(r.verdict.status.as_str()),
        ]);
    }
    t
}
