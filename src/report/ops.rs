//! Op and kernel tables: `ops_summary`, `ops_summary_by_category`, `ops_all`, `kernel_summary`.
//!
//! Each has a `*_where` form taking a GPU-row filter, so per-phase variants reuse them.

use crate::analysis::ops::{op_category_of_family, owner, owner_label, Owner, Stats};
use crate::analysis::Analysis;
use crate::model::FastMap as HashMap;
use crate::model::{NameId, NO_NAME};
use crate::table::{Cell, Table};

/// A GPU-row filter.
pub type RowFilter<'a> = &'a dyn Fn(usize) -> bool;

const MS: f64 = 1e6;
const US: f64 = 1e3;

fn pct(part: i64, whole: i64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// False for kernels without a launch when `Options.include_unlinked` is off.
pub fn included(a: &Analysis, i: usize) -> bool {
    a.options.include_unlinked || owner(a, i) != Owner::Unlinked
}

/// Op category of GPU row `i`.
pub fn row_op_category(a: &Analysis, i: usize) -> &'static str {
    op_category_of_family(a.categories.family(i), a.categories.name(i))
}

/// The label with most time in a map of label → time.
fn dominant(m: &HashMap<&'static str, i64>) -> &'static str {
    m.iter().max_by_key(|(k, v)| (**v, std::cmp::Reverse(**k))).map_or("other", |(k, _)| *k)
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
    let mut per_instance: HashMap<Owner, i64> = HashMap::default();
    let mut kernels: HashMap<Owner, usize> = HashMap::default();
    let mut cats: HashMap<String, HashMap<&'static str, i64>> = HashMap::default();
    let mut whole = 0;
    for i in (0..g.len()).filter(|&i| keep(i) && included(a, i)) {
        let o = owner(a, i);
        *per_instance.entry(o).or_insert(0) += g.dur[i];
        *kernels.entry(o).or_insert(0) += 1;
        *cats.entry(owner_label(a, o).to_string()).or_default().entry(row_op_category(a, i)).or_insert(0) += g.dur[i];
        whole += g.dur[i];
    }
    let mut by_name: HashMap<String, (Vec<i64>, usize)> = HashMap::default();
    for (o, t) in &per_instance {
        let e = by_name.entry(owner_label(a, *o).to_string()).or_default();
        e.0.push(*t);
        e.1 += kernels[o];
    }
    let rows: Vec<(i64, Vec<Cell>)> = by_name
        .into_iter()
        .map(|(n, (mut v, k))| {
            let s = Stats::of(&mut v);
            let cat = dominant(&cats[&n]);
            let cells = vec![
                Cell::from(n),
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
            "Count",
            "kernel_count",
            "total_direct_kernel_time_ms",
            "mean_direct_kernel_time_us",
            "median_direct_kernel_time_us",
            "min_direct_kernel_time_us",
            "max_direct_kernel_time_us",
            "Percentage (%)",
            "Cumulative Percentage (%)",
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
    let mut agg: HashMap<&'static str, (usize, i64, std::collections::HashSet<Owner>)> = HashMap::default();
    let mut whole = 0;
    for i in (0..g.len()).filter(|&i| keep(i) && included(a, i)) {
        let e = agg.entry(row_op_category(a, i)).or_default();
        e.0 += 1;
        e.1 += g.dur[i];
        e.2.insert(owner(a, i));
        whole += g.dur[i];
    }
    let rows: Vec<(i64, Vec<Cell>)> = agg
        .into_iter()
        .map(|(c, (k, t, owners))| (t, vec![Cell::from(c), Cell::from(owners.len()), Cell::from(k), Cell::Float(t as f64 / MS)]))
        .collect();
    finish(
        name,
        &["op category", "Count", "kernel_count", "total_direct_kernel_time_ms", "Percentage (%)", "Cumulative Percentage (%)"],
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
    type Key = (String, NameId, NameId, NameId);
    let key_of = |o: Owner| -> Key {
        match o {
            Owner::Op(op) => {
                let op = op as usize;
                (owner_label(a, o).to_string(), ops.input_dims[op], ops.input_types[op], ops.concrete_inputs[op])
            }
            _ => (owner_label(a, o).to_string(), NO_NAME, NO_NAME, NO_NAME),
        }
    };
    let mut per_instance: HashMap<Owner, (i64, usize, HashMap<&'static str, i64>)> = HashMap::default();
    let mut whole = 0;
    for i in (0..g.len()).filter(|&i| keep(i) && included(a, i)) {
        let e = per_instance.entry(owner(a, i)).or_default();
        e.0 += g.dur[i];
        e.1 += 1;
        *e.2.entry(row_op_category(a, i)).or_insert(0) += g.dur[i];
        whole += g.dur[i];
    }
    /// Per key: each instance's kernel time, kernel count, time per op category.
    type Group = (Vec<i64>, usize, HashMap<&'static str, i64>);
    let mut by_key: HashMap<Key, Group> = HashMap::default();
    for (o, (t, k, cats)) in per_instance {
        let e = by_key.entry(key_of(o)).or_default();
        e.0.push(t);
        e.1 += k;
        for (c, v) in cats {
            *e.2.entry(c).or_insert(0) += v;
        }
    }
    let name_of = |id: NameId| a.trace.name(id).to_string();
    let rows: Vec<(i64, Vec<Cell>)> = by_key
        .into_iter()
        .map(|((n, dims, types, concrete), (mut v, k, cats))| {
            let s = Stats::of(&mut v);
            let cells = vec![
                Cell::from(n),
                Cell::from(dominant(&cats)),
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
            "operation_count",
            "kernel_count",
            "total_direct_kernel_time_us",
            "mean_direct_kernel_time_us",
            "median_direct_kernel_time_us",
            "min_direct_kernel_time_us",
            "max_direct_kernel_time_us",
            "Percentage (%)",
            "Cumulative Percentage (%)",
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
    let mut agg: HashMap<(String, NameId, u16), Vec<i64>> = HashMap::default();
    let mut whole = 0;
    for i in (0..g.len()).filter(|&i| keep(i) && included(a, i)) {
        let parent = owner_label(a, owner(a, i)).to_string();
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
                Cell::from(parent),
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
            "Kernel duration (µs)_count",
            "Kernel duration (µs)_sum",
            "Kernel duration (µs)_mean",
            "Kernel duration (µs)_min",
            "Kernel duration (µs)_max",
            "Percent of kernels time (%)",
            "Cumulative Percentage (%)",
        ],
        rows,
        whole,
    )
}
