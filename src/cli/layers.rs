//! `traceprism layers`: the transformer layers of each forward pass, in the terminal.

use super::args::Args;
use std::fmt::Write;
use traceprism::analysis::layers::Role;
use traceprism::model::NONE;
use traceprism::report::layers::{passes, runs, segments, time};
use traceprism::support::text::ellipsis as short;
use traceprism::table::format_micros;
use traceprism::{Analysis, Result};

/// Prints the layer view; `--debug-layers 0,1,2` also lists the kernels of those layers;
/// `--json` the layers per pass and `layer_summary` as one JSON object.
pub fn run(a: &Args) -> Result<()> {
    let analysis = super::load(a.one_trace()?, a)?;
    if a.json {
        let v = traceprism::report::layers::layers_json(analysis);
        super::out(&format!("{}\n", serde_json::to_string_pretty(&v).map_err(|e| traceprism::Error::new(e.to_string()))?));
        return Ok(());
    }
    super::out(&layers_view(analysis, &a.debug_layers));
    Ok(())
}

/// Terminal view (`traceprism layers TRACE [--debug-layers 0,1,2]`): layers per pass, the layer
/// type sequence, per-layer time for the first pass of each phase, and the kernels of the chosen
/// layers (in the first pass of each phase).
fn layers_view(a: &Analysis, debug_layers: &[u32]) -> String {
    let mut out = String::new();
    let all = passes(a);
    if a.layers.whole_trace_pass {
        let _ = writeln!(out, "no forward passes found: the whole trace is read as one pass");
    }
    let counts = runs(&a.layers.layers_per_pass);
    let counts: Vec<String> = counts.iter().map(|(l, n)| format!("{l} x {n}")).collect();
    let _ = writeln!(out, "passes: {}   layers per pass (layers x passes, in pass order): {}", all.len(), counts.join(", "));
    let mut seen_phase: Vec<&str> = Vec::new();
    for pass in &all {
        if seen_phase.contains(&pass.phase) {
            continue;
        }
        seen_phase.push(pass.phase);
        let segs = segments(a, pass.rows);
        let total: i64 = segs.iter().map(|s| time(a, &s.rows)).sum();
        let _ = writeln!(
            out,
            "\n{} pass {} ({} kernels, {} us):",
            pass.phase,
            pass.index,
            segs.iter().map(|s| s.rows.len()).sum::<usize>(),
            format_micros(total)
        );
        let types: Vec<String> =
            segs.iter().filter(|s| s.role == Role::Layer).map(|s| a.layers.layer_type(s.rows[0] as usize).to_string()).collect();
        let seq: Vec<String> = runs(&types).iter().map(|(t, n)| format!("{t} x{n}")).collect();
        let _ = writeln!(out, "  layer types: {}", if seq.is_empty() { "(no layers found)".into() } else { seq.join(", ") });
        let _ = writeln!(
            out,
            "  {:>5} {:>6} {:<8} {:>7} {:>12} {:>6}  first kernel",
            "role", "layer", "type", "kernels", "time_us", "share"
        );
        for s in &segs {
            let t = time(a, &s.rows);
            let first = a.trace.name(a.trace.gpu.name[s.rows[0] as usize]);
            let _ = writeln!(
                out,
                "  {:>5} {:>6} {:<8} {:>7} {:>12} {:>5.1}%  {}",
                s.role.as_str(),
                if s.layer != NONE { s.layer.to_string() } else { "-".into() },
                a.layers.layer_type(s.rows[0] as usize),
                s.rows.len(),
                format_micros(t),
                if total > 0 { 100.0 * t as f64 / total as f64 } else { 0.0 },
                short(first, 70)
            );
            if s.role == Role::Layer && debug_layers.contains(&s.layer) {
                for &r in &s.rows {
                    let i = r as usize;
                    let _ = writeln!(
                        out,
                        "        {:>10}  {:<24} {}",
                        format_micros(a.trace.gpu.dur[i]),
                        short(a.categories.name(i), 24),
                        short(a.trace.name(a.trace.gpu.name[i]), 100)
                    );
                }
            }
        }
    }
    out
}
