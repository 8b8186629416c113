//! Phase tables: `phase_summary`, `passes`, `phase_methods`, and the per-phase op/kernel summaries
//! (`ops_summary_prefill`, …), which reuse the `ops` builders with a row filter.

use super::ops::{kernel_summary_where, ops_summary_where};
use super::percent as pct;
use crate::analysis::phases::Phase;
use crate::analysis::Analysis;
use crate::table::{Cell, Table};

/// One row per phase: passes, kernels, kernel time and share, mean pass time, tokens per step.
pub fn phase_summary(a: &Analysis) -> Table {
    let mut t = Table::new(
        "phase_summary",
        &[
            "phase",
            "passes:int",
            "kernels:int",
            "kernel_time_us:us",
            "pct_kernel_time:float",
            "mean_pass_time_us:us",
            "mean_pass_kernel_time_us:us",
            "mean_confidence:float",
            "tokens_per_step:float",
        ],
    );
    let p = &a.phases;
    let g = &a.trace.gpu;
    let whole: i64 = crate::support::sat::SatSum::sat_sum(a.trace.kernel_rows().map(|i| g.dur[i]));
    for phase in Phase::ALL {
        let (mut kernels, mut time) = (0usize, 0i64);
        for i in a.trace.kernel_rows() {
            if p.phase_of_row[i] == Some(phase) {
                kernels += 1;
                time = time.saturating_add(g.dur[i]);
            }
        }
        let passes: Vec<_> = p.passes.iter().filter(|x| x.phase == phase).collect();
        if kernels == 0 && passes.is_empty() {
            continue;
        }
        let n = passes.len().max(1) as f64;
        let mean_wall = passes.iter().map(|x| x.end_ns - x.start_ns).sum::<i64>() as f64 / n;
        let mean_kt = passes.iter().map(|x| x.kernel_time_ns).sum::<i64>() as f64 / n;
        let conf = passes.iter().map(|x| x.confidence as f64).sum::<f64>() / n;
        let tokens: Vec<u64> = passes.iter().filter_map(|x| x.tokens).collect();
        t.push(vec![
            Cell::from(phase.as_str()),
            Cell::from(passes.len()),
            Cell::from(kernels),
            Cell::Micros(time),
            Cell::Float(pct(time, whole)),
            if passes.is_empty() { Cell::Empty } else { Cell::Float(mean_wall / 1e3) },
            if passes.is_empty() { Cell::Empty } else { Cell::Float(mean_kt / 1e3) },
            if passes.is_empty() { Cell::Empty } else { Cell::Float(conf) },
            if tokens.is_empty() { Cell::Empty } else { Cell::Float(tokens.iter().sum::<u64>() as f64 / tokens.len() as f64) },
        ]);
    }
    t
}

/// One row per forward pass.
pub fn passes(a: &Analysis) -> Table {
    let mut t = Table::new(
        "passes",
        &[
            "index:int",
            "device:int",
            "phase",
            "confidence:float",
            "delimited_by",
            "start_us:us",
            "duration_us:us",
            "kernels:int",
            "kernel_time_us:us",
            "gpu_busy_pct:float",
            "tokens:int",
            "batch:int",
            "prefill_tokens:int",
            "decode_tokens:int",
            "prefill_time_us_est:us",
            "decode_time_us_est:us",
            "split_from",
            "complete:bool",
            "evidence",
            "doubt",
        ],
    );
    for x in &a.phases.passes {
        let dur = x.end_ns - x.start_ns;
        let evidence: Vec<String> = x
            .votes
            .iter()
            .map(|v| format!("{}: {} {:.2} ({})", v.method.as_str(), v.phase.as_str(), v.strength, v.why))
            .collect();
        t.push(vec![
            Cell::from(x.index),
            Cell::Int(x.device as i64),
            Cell::from(x.phase.as_str()),
            Cell::Float(x.confidence as f64),
            Cell::from(x.source.as_str()),
            Cell::Micros(x.start_ns),
            Cell::Micros(dur),
            Cell::from(x.kernels),
            Cell::Micros(x.kernel_time_ns),
            Cell::Float(pct(x.busy_ns, dur)),
            Cell::from(x.tokens),
            Cell::from(x.batch),
            Cell::from(x.mix.first().map(|m| m.prefill_tokens)),
            Cell::from(x.mix.first().map(|m| m.decode_tokens)),
            x.mix.first().map_or(Cell::Empty, |m| Cell::Micros(m.prefill_time_ns)),
            x.mix.first().map_or(Cell::Empty, |m| Cell::Micros(m.decode_time_ns)),
            Cell::from(x.mix.first().map(|m| m.source.as_str())),
            // false: the trace stops inside this pass (truncated traces only).
            Cell::Bool(!x.incomplete),
            Cell::from(evidence.join("; ")),
            Cell::from(x.doubt.as_deref()),
        ]);
    }
    t
}

/// Each phase method alone: which passes it voted on and how often it agrees with the final answer
/// (shares of kernel time).
pub fn phase_methods(a: &Analysis) -> Table {
    let mut t = Table::new(
        "phase_methods",
        &[
            "method",
            "weight:float",
            "passes_voted:int",
            "coverage_pct:float",
            "agreement_pct_of_voted:float",
            "agreement_pct_of_all:float",
            "final_method",
        ],
    );
    let p = &a.phases;
    for m in p.method_agreement() {
        t.push(vec![
            Cell::from(m.method.as_str()),
            Cell::Float(m.weight),
            Cell::from(m.passes_voted),
            Cell::Float(pct(m.voted_ns, m.all_ns)),
            if m.passes_voted == 0 { Cell::Empty } else { Cell::Float(m.agreement_pct_of_voted().unwrap_or(0.0)) },
            Cell::Float(pct(m.agreed_ns, m.all_ns)),
            Cell::from(p.method.as_str()),
        ]);
    }
    t
}

/// GPU rows (kernels, copies, fills: as the unfiltered summaries count them) of one phase.
fn in_phase(a: &Analysis, i: usize, phase: Phase) -> bool {
    a.phases.phase_of_row[i] == Some(phase)
}

/// `ops_summary` over prefill kernels.
pub fn ops_summary_prefill(a: &Analysis) -> Table {
    ops_summary_where(a, "ops_summary_prefill", &|i| in_phase(a, i, Phase::Prefill))
}
/// `ops_summary` over decode kernels.
pub fn ops_summary_decode(a: &Analysis) -> Table {
    ops_summary_where(a, "ops_summary_decode", &|i| in_phase(a, i, Phase::Decode))
}
/// `kernel_summary` over prefill kernels (categories first, % of phase time, cumulative %).
pub fn kernel_summary_prefill(a: &Analysis) -> Table {
    kernel_summary_where(a, "kernel_summary_prefill", &|i| in_phase(a, i, Phase::Prefill))
}
/// `kernel_summary` over decode kernels.
pub fn kernel_summary_decode(a: &Analysis) -> Table {
    kernel_summary_where(a, "kernel_summary_decode", &|i| in_phase(a, i, Phase::Decode))
}
