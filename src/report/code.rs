//! Where in the code: `call_paths` (the call-path tree of GPU time) and `sources` (GPU time by
//! source line), from [`crate::analysis::code::call_paths`] and [`crate::analysis::code::sources`].

use crate::analysis::code::call_paths::PHASES;
use crate::analysis::code::sources::sources as by_line;
use crate::analysis::phases::Phase;
use crate::analysis::Analysis;
use crate::table::{Cell, Table};

/// Per-phase time columns (`prefill_us` … `not_inference_us`), in [`Phase::ALL`] order.
fn phase_columns() -> Vec<String> {
    Phase::ALL.iter().map(|p| format!("{}_us:us", p.as_str().replace('-', "_"))).collect()
}

fn with_phases(head: &[&str], tail: &[&str]) -> Vec<String> {
    head.iter().map(|s| s.to_string()).chain(phase_columns()).chain(tail.iter().map(|s| s.to_string())).collect()
}

/// `call_paths`: one row per node of the call-path tree (node 0 the root, a node after its
/// parent): `kind` (annotation, python, op, graph, no_launch, place: a phase or layer, kernel), `name`, `self_us` (its own
/// kernels), `total_us` (with everything under it), `kernels` under it, the total per phase, and
/// for a kernel node its `family` and its first kernel (`first_kernel_us`, `first_kernel_dur_us`).
pub fn call_paths(a: &Analysis) -> Table {
    let cp = a.call_paths();
    let totals = cp.totals();
    let depths = cp.depths();
    let mut kernels: Vec<u64> = cp.nodes.iter().map(|n| u64::from(n.kernels)).collect();
    for i in (1..cp.nodes.len()).rev() {
        let p = cp.nodes[i].parent as usize;
        kernels[p] += kernels[i];
    }
    let cols = with_phases(
        &["node:int", "parent:int", "depth:int", "kind", "name", "self_us:us", "total_us:us", "kernels:int"],
        &["family", "first_kernel_us:us", "first_kernel_dur_us:us"],
    );
    let refs: Vec<&str> = cols.iter().map(String::as_str).collect();
    let mut t = Table::new("call_paths", &refs);
    for (i, n) in cp.nodes.iter().enumerate() {
        let mut row = vec![
            Cell::from(i),
            if i == 0 { Cell::Empty } else { Cell::from(n.parent) },
            Cell::from(depths[i]),
            Cell::from(n.kind.as_str()),
            Cell::from(cp.name(i)),
            Cell::Micros(n.self_ns.iter().sum()),
            Cell::Micros(totals[i].iter().sum()),
            Cell::from(kernels[i]),
        ];
        row.extend((0..PHASES).map(|k| Cell::Micros(totals[i][k])));
        let first = n.first_row as usize;
        if n.first_row == crate::model::NONE {
            row.extend([Cell::Empty, Cell::Empty, Cell::Empty]);
        } else {
            row.push(Cell::from(a.categories.family(first)));
            row.push(Cell::Micros(a.trace.gpu.ts[first]));
            row.push(Cell::Micros(a.trace.gpu.dur[first]));
        }
        t.push(row);
    }
    t
}

/// `sources`: GPU time per source line (the innermost frame that is not plumbing), largest
/// first: `frame`, `file`, `line`, `function`, `total_us`, per phase, `kernels`, `top_kernels`.
pub fn sources(a: &Analysis) -> Table {
    let cols = with_phases(&["frame", "file", "line:int", "function", "total_us:us"], &["kernels:int", "top_kernels"]);
    let refs: Vec<&str> = cols.iter().map(String::as_str).collect();
    let mut t = Table::new("sources", &refs);
    for s in by_line(a.call_paths()) {
        let (file, line, function) = s.parts();
        let top = s.top_kernels.iter().map(|(k, ns)| format!("{k} ({:.1} µs)", *ns as f64 / 1e3)).collect::<Vec<_>>().join("; ");
        let mut row = vec![
            Cell::from(s.frame.as_str()),
            Cell::from(file),
            line.map_or(Cell::Empty, Cell::from),
            Cell::from(function),
            Cell::Micros(s.ns.iter().sum()),
        ];
        row.extend(s.ns.iter().map(|&ns| Cell::Micros(ns)));
        row.push(Cell::from(s.kernels));
        row.push(Cell::from(top));
        t.push(row);
    }
    t
}
