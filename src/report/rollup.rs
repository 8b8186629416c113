//! Kernel time grouped by category, phase, pass and layer: the page's charts are drawn from it.

use crate::analysis::Analysis;
use crate::model::NONE;
use serde::Serialize;
use std::collections::HashMap;

/// Column-wise groups; `category` indexes `categories`, `pass`/`layer` are -1 when unassigned.
#[derive(Serialize, Default)]
pub struct Rollup {
    /// Category names (what `category` indexes).
    pub categories: Vec<String>,
    /// Each category's family, parallel to `categories`.
    pub families: Vec<String>,
    /// Each family's colour (`crate::rules::palette`): the same in every view and trace.
    pub family_colours: std::collections::BTreeMap<String, &'static str>,
    /// Category of each group (index into `categories`).
    pub category: Vec<u32>,
    /// Phase of each group (`prefill`, `decode`...), or none.
    pub phase: Vec<Option<&'static str>>,
    /// Pass of each group, or -1.
    pub pass: Vec<i64>,
    /// Layer of each group, or -1.
    pub layer: Vec<i64>,
    /// Kernels in each group.
    pub count: Vec<u64>,
    /// Summed kernel duration, µs.
    pub dur_us: Vec<f64>,
}

/// (category id, phase, pass, layer).
type GroupKey = (u32, Option<&'static str>, u32, u32);

/// Groups every kernel row.
pub fn rollup(a: &Analysis) -> Rollup {
    let mut out = Rollup::default();
    let mut cat_ids: HashMap<&str, u32> = HashMap::new();
    let mut groups: HashMap<GroupKey, (u64, i64)> = HashMap::new();
    for i in a.trace.kernel_rows() {
        let name = a.categories.name(i);
        let cat = *cat_ids.entry(name).or_insert_with(|| {
            out.categories.push(name.to_string());
            out.families.push(a.categories.family(i).to_string());
            (out.categories.len() - 1) as u32
        });
        let phase = a.phases.phase_of_row.get(i).copied().flatten().map(|p| p.as_str());
        let pass = a.phases.pass_of_row.get(i).copied().unwrap_or(NONE);
        let layer = a.layers.layer_of_row.get(i).copied().unwrap_or(NONE);
        let g = groups.entry((cat, phase, pass, layer)).or_insert((0, 0));
        g.0 += 1;
        g.1 += a.trace.gpu.dur[i];
    }
    let mut keys: Vec<_> = groups.into_iter().collect();
    keys.sort_unstable_by_key(|((c, ph, p, l), _)| (*p, *l, *c, *ph));
    let id = |v: u32| if v == NONE { -1 } else { v as i64 };
    for ((cat, phase, pass, layer), (count, dur)) in keys {
        out.category.push(cat);
        out.phase.push(phase);
        out.pass.push(id(pass));
        out.layer.push(id(layer));
        out.count.push(count);
        out.dur_us.push(dur as f64 / 1000.0);
    }
    out.family_colours = crate::rules::palette::family_colours(out.families.iter().map(String::as_str));
    out
}
