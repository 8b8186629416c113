//! Op and kernel tables: `ops_summary`, `ops_summary_by_category`, `ops_all`, `kernel_summary`.
//!
//! Each has a `*_where` form taking a GPU-row filter, so per-phase variants reuse them.

use super::percent as pct;
use crate::analysis::ops::{
    name_label, op_category_ids, op_category_of_family, owner, owner_name, CategoryTimes, Owner, Stats, OP_CATEGORIES,
};
use crate::analysis::Analysis;
use crate::model::graphs::OpFrom;
use crate::model::FastMap as HashMap;
use crate::model::FastSet as HashSet;
use crate::model::{NameId, NO_NAME};
use crate::table::{Cell, Table};

/// A GPU-row filter.
pub type RowFilter<'a> = &'a dyn Fn(usize) -> bool;

const MS: f64 = 1e6;
const US: f64 = 1e3;

/// False for kernels without a launch when `Options.include_unlinked` is off.
pub fn included(a: &Analysis, i: usize) -> bool {
    a.options.include_unlinked || owner(a, i) != Owner::Unlinked
}

/// Adds cumulative-percentage cells after sorting rows by total time.
fn with_cumulative(rows: &mut [(i64, Vec<Cell>)], whole: i64) {
    // Ties (equal time) are ordered by the row's text so the output does not depend on hash order.
    rows.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.iter().map(Cell::text).cmp(b.1.iter().map(Cell::text))));
    let mut cum = 0;
    for (t, cells) in rows.iter_mut() {
        cum += *t;
        cells.push(Cell::Float(pct(*t, whole)));
        cells.push(Cell::Float(pct(cum, whole)));
    }
}

/// Sorts rows by time, adds the percentage columns and builds the table.
fn finish(name: &str, columns: &[&str], mut rows: Vec<(i64, Vec<Cell>)>, whole: i64) -> Table {
    with_cumulative(&mut rows, whole);
    let mut t = Table::new(name, columns);
    rows.into_iter().for_each(|(_, r)| t.push(r));
    t
}

/// `ops_summary` over all GPU rows.
pub fn ops_summary(a: &Analysis) -> Table {
    ops_summary_where(a, "ops_summary", &|_| true)
}

/// Per leaf op name (or launcher): invocations, kernels, total/mean/median/min/max GPU time of its kernels.
pub fn ops_summary_where(a: &Analysis, name: &str, keep: RowFilter) -> Table {
    let g = &a.trace.gpu;
    let op_category = op_category_ids(&a.categories);
    // Per op call (or launch): its kernels' time and count; per name: time per op category.
    let mut per_instance: HashMap<Owner, (i64, usize)> = HashMap::default();
    let mut cats: HashMap<Option<NameId>, CategoryTimes> = HashMap::default();
    let mut whole = 0;
    for i in (0..g.len()).filter(|&i| keep(i) && included(a, i)) {
        let o = owner(a, i);
        let e = per_instance.entry(o).or_default();
        e.0 += g.dur[i];
        e.1 += 1;
        cats.entry(owner_name(a, o)).or_default().add(op_category[a.categories.of_row[i] as usize], g.dur[i]);
        whole += g.dur[i];
    }
    let mut by_name: HashMap<Option<NameId>, (Vec<i64>, usize)> = HashMap::default();
    for (o, (t, k)) in per_instance {
        let e = by_name.entry(owner_name(a, o)).or_default();
        e.0.push(t);
        e.1 += k;
    }
    let rows: Vec<(i64, Vec<Cell>)> = by_name
        .into_iter()
        .map(|(n, (mut v, k))| {
            let s = Stats::of(&mut v);
            let cat = cats[&n].dominant();
            let cells = vec![
                Cell::from(name_label(a, n)),
                Cell::from(cat),
                Cell::from(s.count),
                Cell::from(k),
                Cell::Float(s.total as f64 / MS),
                Cell::Float(s.mean() / US),
                Cell::Float(s.median / US),
                Cell::Float(s.min as f64 / US),
                Cell::Float(s.max as f64 / US),
            ];
            (s.total, cells)
        })
        .collect();
    finish(
        name,
        &[
            "name",
            "op category",
            "Count:int",
            "kernel_count:int",
            "total_direct_kernel_time_ms:float",
            "mean_direct_kernel_time_us:us",
            "median_direct_kernel_time_us:us",
            "min_direct_kernel_time_us:us",
            "max_direct_kernel_time_us:us",
            "Percentage (%):float",
            "Cumulative Percentage (%):float",
        ],
        rows,
        whole,
    )
}

/// `ops_summary_by_category` over all GPU rows.
pub fn ops_summary_by_category(a: &Analysis) -> Table {
    ops_summary_by_category_where(a, "ops_summary_by_category", &|_| true)
}

/// GPU time per op category (from the kernel family of each row).
pub fn ops_summary_by_category_where(a: &Analysis, name: &str, keep: RowFilter) -> Table {
    let g = &a.trace.gpu;
    let op_category = op_category_ids(&a.categories);
    // Per op category: kernels, time, and the distinct owners (op calls) that ran them.
    let mut agg = [(0usize, 0i64); OP_CATEGORIES.len()];
    let mut owners: HashSet<(u8, Owner)> = HashSet::default();
    let mut whole = 0;
    for i in (0..g.len()).filter(|&i| keep(i) && included(a, i)) {
        let c = op_category[a.categories.of_row[i] as usize];
        let e = &mut agg[c as usize];
        e.0 += 1;
        e.1 += g.dur[i];
        owners.insert((c, owner(a, i)));
        whole += g.dur[i];
    }
    let mut calls = [0usize; OP_CATEGORIES.len()];
    owners.iter().for_each(|(c, _)| calls[*c as usize] += 1);
    let rows: Vec<(i64, Vec<Cell>)> = (0..OP_CATEGORIES.len())
        .filter(|&c| agg[c].0 > 0)
        .map(|c| {
            let (k, t) = agg[c];
            (t, vec![Cell::from(OP_CATEGORIES[c]), Cell::from(calls[c]), Cell::from(k), Cell::Float(t as f64 / MS)])
        })
        .collect();
    finish(
        name,
        &[
            "op category",
            "Count:int",
            "kernel_count:int",
            "total_direct_kernel_time_ms:float",
            "Percentage (%):float",
            "Cumulative Percentage (%):float",
        ],
        rows,
        whole,
    )
}

/// `ops_all` over all GPU rows.
pub fn ops_all(a: &Analysis) -> Table {
    ops_all_where(a, "ops_all", &|_| true)
}

/// Per op name + input dims + input types + concrete inputs (TraceLens' unique-args table).
pub fn ops_all_where(a: &Analysis, name: &str, keep: RowFilter) -> Table {
    let g = &a.trace.gpu;
    let ops = &a.trace.ops;
    let op_category = op_category_ids(&a.categories);
    // Calls that took their op from a capture or an eager stretch are kept apart from launched ones.
    type Key = (Option<NameId>, NameId, NameId, NameId, OpFrom);
    let key_of = |o: Owner, from: OpFrom| -> Key {
        match o {
            Owner::Op(op) => {
                let op = op as usize;
                (owner_name(a, o), ops.input_dims[op], ops.input_types[op], ops.concrete_inputs[op], from)
            }
            _ => (owner_name(a, o), NO_NAME, NO_NAME, NO_NAME, from),
        }
    };
    // Per op call: its kernels' time and count; per key: time per op category.
    let mut per_instance: HashMap<Owner, (i64, usize, OpFrom)> = HashMap::default();
    let mut cats: HashMap<Key, CategoryTimes> = HashMap::default();
    let mut whole = 0;
    for i in (0..g.len()).filter(|&i| keep(i) && included(a, i)) {
        let o = owner(a, i);
        let from = a.trace.op_from(i);
        let e = per_instance.entry(o).or_insert((0, 0, from));
        e.0 += g.dur[i];
        e.1 += 1;
        cats.entry(key_of(o, from)).or_default().add(op_category[a.categories.of_row[i] as usize], g.dur[i]);
        whole += g.dur[i];
    }
    // Per key: each instance's kernel time, kernel count.
    let mut by_key: HashMap<Key, (Vec<i64>, usize)> = HashMap::default();
    for (o, (t, k, from)) in per_instance {
        let e = by_key.entry(key_of(o, from)).or_default();
        e.0.push(t);
        e.1 += k;
    }
    let name_of = |id: NameId| a.trace.name(id).to_string();
    let rows: Vec<(i64, Vec<Cell>)> = by_key
        .into_iter()
        .map(|(key, (mut v, k))| {
            let (n, dims, types, concrete, from) = key;
            let s = Stats::of(&mut v);
            let cells = vec![
                Cell::from(name_label(a, n)),
                Cell::from(cats[&key].dominant()),
                Cell::from(name_of(dims)),
                Cell::from(name_of(types)),
                Cell::from(name_of(concrete)),
                Cell::from(s.count),
                Cell::from(k),
                Cell::Float(s.total as f64 / US),
                Cell::Float(s.mean() / US),
                Cell::Float(s.median / US),
                Cell::Float(s.min as f64 / US),
                Cell::Float(s.max as f64 / US),
                Cell::from(from.as_str()),
            ];
            (s.total, cells)
        })
        .collect();
    finish(
        name,
        &[
            "name",
            "op category",
            "Input Dims",
            "Input type",
            "Concrete Inputs",
            "operation_count:int",
            "kernel_count:int",
            "total_direct_kernel_time_us:us",
            "mean_direct_kernel_time_us:us",
            "median_direct_kernel_time_us:us",
            "min_direct_kernel_time_us:us",
            "max_direct_kernel_time_us:us",
            "op_from",
            "Percentage (%):float",
            "Cumulative Percentage (%):float",
        ],
        rows,
        whole,
    )
}

/// `kernel_summary` over all GPU rows.
pub fn kernel_summary(a: &Analysis) -> Table {
    kernel_summary_where(a, "kernel_summary", &|_| true)
}

/// Per kernel name under its parent op: count, total, mean, min, max, % of GPU time. Category first.
pub fn kernel_summary_where(a: &Analysis, name: &str, keep: RowFilter) -> Table {
    let g = &a.trace.gpu;
    let mut agg: HashMap<(Option<NameId>, NameId, u16), Vec<i64>> = HashMap::default();
    let mut whole = 0;
    for i in (0..g.len()).filter(|&i| keep(i) && included(a, i)) {
        let parent = owner_name(a, owner(a, i));
        agg.entry((parent, g.name[i], a.categories.of_row[i])).or_default().push(g.dur[i]);
        whole += g.dur[i];
    }
    let rows: Vec<(i64, Vec<Cell>)> = agg
        .into_iter()
        .map(|((parent, kname, cat), mut v)| {
            let c = &a.categories.categories[cat as usize];
            let s = Stats::of(&mut v);
            let cells = vec![
                Cell::from(c.name.as_str()),
                Cell::from(op_category_of_family(&c.family, &c.name)),
                Cell::from(name_label(a, parent)),
                Cell::from(a.trace.name(kname)),
                Cell::from(s.count),
                Cell::Float(s.total as f64 / US),
                Cell::Float(s.mean() / US),
                Cell::Float(s.min as f64 / US),
                Cell::Float(s.max as f64 / US),
            ];
            (s.total, cells)
        })
        .collect();
    finish(
        name,
        &[
            "kernel_category",
            "Parent op category",
            "Parent cpu_op",
            "Kernel name",
            "Kernel duration (µs)_count:int",
            "Kernel duration (µs)_sum:us",
            "Kernel duration (µs)_mean:us",
            "Kernel duration (µs)_min:us",
            "Kernel duration (µs)_max:us",
            "Percent of kernels time (%):float",
            "Cumulative Percentage (%):float",
        ],
        rows,
        whole,
    )
}
