//! `layers` and `layer_summary` tables, `layers --json`, and the passes and segments the
//! terminal layer view (`cli/layers.rs`) is drawn from.

use crate::analysis::layers::Role;
use crate::analysis::phases::Phase;
use crate::analysis::Analysis;
use crate::model::{GpuKind, NONE};
use crate::table::{format_micros, Cell, Table};
use std::collections::BTreeMap;

/// One pass as the layer tables see it: index, phase name, GPU rows in time order.
pub struct PassView<'a> {
    /// The pass's index.
    pub index: u32,
    /// Its phase's name.
    pub phase: &'static str,
    /// Its GPU rows, in time order.
    pub rows: &'a [u32],
}

/// Every pass of the layer finder, in order.
pub fn passes(a: &Analysis) -> Vec<PassView<'_>> {
    a.layers.passes.iter().map(|p| PassView { index: p.index, phase: p.phase.as_str(), rows: &p.rows[..] }).collect()
}

/// A run of rows of one pass with one (role, layer).
pub struct Segment {
    /// `pre`, `layer` or `post`.
    pub role: Role,
    /// The layer's index ([`NONE`] outside layers).
    pub layer: u32,
    /// Its kernels' GPU rows.
    pub rows: Vec<u32>,
}

/// Splits a pass's rows into pre / layer 0..N / post segments (kernels only).
pub fn segments(a: &Analysis, rows: &[u32]) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::new();
    for &r in rows {
        let i = r as usize;
        if i >= a.trace.gpu.len() || a.trace.gpu.kind[i] != GpuKind::Kernel {
            continue;
        }
        let (role, layer) = (a.layers.role_of_row[i], a.layers.layer_of_row[i]);
        match out.last_mut() {
            Some(s) if s.role == role && s.layer == layer => s.rows.push(r),
            _ => out.push(Segment { role, layer, rows: vec![r] }),
        }
    }
    out
}

fn families(a: &Analysis) -> Vec<String> {
    let mut f: Vec<String> = a.categories.categories.iter().map(|c| c.family.clone()).collect();
    f.sort();
    f.dedup();
    f
}

/// The GPU time (ns) of `rows`.
pub fn time(a: &Analysis, rows: &[u32]) -> i64 {
    rows.iter().map(|&r| a.trace.gpu.dur[r as usize]).sum()
}

/// `layers`: one row per layer of every pass (plus the pre- and post-layer parts).
pub fn layers(a: &Analysis) -> Table {
    let fams = families(a);
    let mut cols: Vec<String> =
        ["pass:int", "phase", "role", "layer:int", "type", "kernels:int", "time_us:us"].iter().map(|s| s.to_string()).collect();
    cols.extend(fams.iter().map(|f| format!("{f}_us:us")));
    cols.push("first_kernel".into());
    cols.push("last_kernel".into());
    let col_refs: Vec<&str> = cols.iter().map(|s| s.as_str()).collect();
    let mut table = Table::new("layers", &col_refs);
    for pass in passes(a) {
        for seg in segments(a, pass.rows) {
            if seg.role == Role::None {
                continue;
            }
            let mut by_family = vec![0i64; fams.len()];
            for &r in &seg.rows {
                if let Some(k) = fams.iter().position(|f| f == a.categories.family(r as usize)) {
                    by_family[k] += a.trace.gpu.dur[r as usize];
                }
            }
            let name = |r: u32| a.trace.name(a.trace.gpu.name[r as usize]).to_string();
            let mut row = vec![
                Cell::from(pass.index),
                Cell::from(pass.phase),
                Cell::from(seg.role.as_str()),
                if seg.layer != NONE { Cell::from(seg.layer) } else { Cell::Empty },
                Cell::from(a.layers.layer_type(seg.rows[0] as usize)),
                Cell::from(seg.rows.len()),
                Cell::Micros(time(a, &seg.rows)),
            ];
            row.extend(by_family.into_iter().map(Cell::Micros));
            row.push(Cell::from(name(seg.rows[0])));
            row.push(Cell::from(name(seg.rows[seg.rows.len() - 1])));
            table.push(row);
        }
    }
    table
}

/// Per (phase, layer index) statistics across the passes of that phase.
struct LayerStats {
    phase: &'static str,
    kind: String,
    times: Vec<i64>,
    shares: Vec<f64>,
}

/// Keyed by (group in order of first appearance, layer index). A group is a phase, whose passes
/// repeat one stack (decode steps, denoising steps), but each stage pass is a group of its own:
/// a diffusion pipeline's text encoders and its VAE are both `stage`, and their layer 0s are no
/// two readings of one layer.
fn layer_stats(a: &Analysis) -> BTreeMap<(usize, u32), LayerStats> {
    let mut stats: BTreeMap<(usize, u32), LayerStats> = BTreeMap::new();
    let mut group_order: Vec<(&'static str, Option<u32>)> = Vec::new();
    for pass in passes(a) {
        let group = (pass.phase, (pass.phase == Phase::Stage.as_str()).then_some(pass.index));
        let rank = group_order.iter().position(|g| *g == group).unwrap_or_else(|| {
            group_order.push(group);
            group_order.len() - 1
        });
        let segs = segments(a, pass.rows);
        let total: i64 = segs.iter().map(|s| time(a, &s.rows)).sum();
        for seg in segs.iter().filter(|s| s.role == Role::Layer) {
            let t = time(a, &seg.rows);
            let e = stats.entry((rank, seg.layer)).or_insert_with(|| LayerStats {
                phase: pass.phase,
                kind: a.layers.layer_type(seg.rows[0] as usize).to_string(),
                times: Vec::new(),
                shares: Vec::new(),
            });
            e.times.push(t);
            e.shares.push(if total > 0 { t as f64 / total as f64 } else { 0.0 });
        }
    }
    stats
}

/// `layer_summary`: per layer index across the passes of one phase (each stage pass on its own):
/// mean/min/max time, share of pass time.
pub fn layer_summary(a: &Analysis) -> Table {
    let mut table = Table::new(
        "layer_summary",
        &["phase", "layer:int", "type", "passes:int", "mean_us:us", "min_us:us", "max_us:us", "share_of_pass_pct:float"],
    );
    for ((_, layer), s) in layer_stats(a) {
        let n = s.times.len();
        let mean = s.times.iter().sum::<i64>() / n.max(1) as i64;
        table.push(vec![
            Cell::from(s.phase),
            Cell::from(layer),
            Cell::from(s.kind),
            Cell::from(n),
            Cell::Micros(mean),
            Cell::Micros(*s.times.iter().min().unwrap_or(&0)),
            Cell::Micros(*s.times.iter().max().unwrap_or(&0)),
            Cell::Float(100.0 * s.shares.iter().sum::<f64>() / n.max(1) as f64),
        ]);
    }
    table
}

/// Runs of equal items: `[(item, count)]`.
pub fn runs<T: PartialEq + Clone>(items: &[T]) -> Vec<(T, usize)> {
    let mut out: Vec<(T, usize)> = Vec::new();
    for x in items {
        match out.last_mut() {
            Some((y, n)) if y == x => *n += 1,
            _ => out.push((x.clone(), 1)),
        }
    }
    out
}

/// `layers --json`: per pass its phase, layer count, kernel time and layer-type sequence
/// (`dense x 16`), and the `layer_summary` table (µs).
pub fn layers_json(a: &Analysis) -> serde_json::Value {
    let passes: Vec<serde_json::Value> = passes(a)
        .iter()
        .map(|pass| {
            let segs = segments(a, pass.rows);
            let types: Vec<String> = segs
                .iter()
                .filter(|s| s.role == Role::Layer)
                .map(|s| a.layers.layer_type(s.rows[0] as usize).to_string())
                .collect();
            let seq: Vec<String> = runs(&types).iter().map(|(t, n)| format!("{t} x {n}")).collect();
            serde_json::json!({
                "index": pass.index,
                "phase": pass.phase,
                "layers": a.layers.layers_per_pass.get(pass.index as usize).copied().unwrap_or(0),
                "kernel_time_us": format_micros(segs.iter().map(|s| time(a, &s.rows)).sum()).parse::<f64>().unwrap_or(0.0),
                "layer_types": seq.join(", "),
            })
        })
        .collect();
    serde_json::json!({
        "whole_trace_pass": a.layers.whole_trace_pass,
        "layers_per_pass": a.layers.layers_per_pass,
        "passes": passes,
        "layer_summary": layer_summary(a),
    })
}
