//! `fusion`: runs of memory-bound kernels (families Norm, Activation, Elementwise/Reduce) one
//! after another between GEMMs and attention. Each kernel pays a fixed cost (launch on the
//! device, reading its inputs back from memory) that one fused kernel would pay once. Saving per
//! run of n kernels: (n − 1) × that floor, taken as the trace's own 10th-percentile duration of a
//! memory-bound kernel (what such a kernel costs doing almost nothing). Host launches saved too
//! are `host_bound`'s, not counted here.

use super::{Engine, Finding, Group, Kind};
use crate::analysis::per_name::PerName;
use crate::analysis::Analysis;
use crate::model::GpuKind;
use crate::support::median::upper_median;

/// Families whose kernels are memory-bound and fusable with their neighbours.
const FUSABLE: &[&str] = &["Norm", "Activation", "Elementwise/Reduce"];
/// A run shorter than this is not worth a finding.
const MIN_RUN: usize = 3;

/// Per kernel name: fusable or not ([`fusable_name`]), looked up once per name.
struct Fusable<'a> {
    a: &'a Analysis,
    by_name: PerName<bool>,
}

impl Fusable<'_> {
    fn row(&mut self, r: usize) -> bool {
        let (a, name) = (self.a, self.a.trace.gpu.name[r]);
        FUSABLE.contains(&a.categories.family(r)) && *self.by_name.get_or_insert_with(name, || fusable_name(a.trace.name(name)))
    }
}

/// Runs of fusable kernels of one pass: (kernels in the run, first row).
fn runs(a: &Analysis, fusable: &mut Fusable, rows: &[u32]) -> Vec<(usize, u32)> {
    let g = &a.trace.gpu;
    let mut out = Vec::new();
    let mut run = (0usize, 0u32);
    for &r in rows.iter().filter(|&&r| g.kind[r as usize] == GpuKind::Kernel) {
        if fusable.row(r as usize) {
            if run.0 == 0 {
                run.1 = r;
            }
            run.0 += 1;
        } else {
            if run.0 >= MIN_RUN {
                out.push(run);
            }
            run.0 = 0;
        }
    }
    if run.0 >= MIN_RUN {
        out.push(run);
    }
    out
}

/// A kernel name not already fused by a compiler (Triton's `triton_…`, XLA's `…fusion…`).
fn fusable_name(name: &str) -> bool {
    !name.starts_with("triton_") && !name.contains("fusion")
}

/// The fusion finding of `g`, if the kernels' floors are worth raising ([`Group::worth`]).
pub fn fusion(a: &Analysis, g: &Group) -> Option<Finding> {
    let gpu = &a.trace.gpu;
    let mut fusable = Fusable { a, by_name: PerName::new(a.trace.names.len()) };
    let mut durations: Vec<f64> = g
        .passes
        .iter()
        .flat_map(|p| p.rows.iter())
        .map(|&r| r as usize)
        .filter(|&r| gpu.kind[r] == GpuKind::Kernel && fusable.row(r))
        .map(|r| gpu.dur[r] as f64 / 1e3)
        .collect();
    if durations.is_empty() {
        return None;
    }
    let tenth = durations.len() / 10;
    let floor_us = *durations.select_nth_unstable_by(tenth, f64::total_cmp).1;
    let per_pass: Vec<Vec<(usize, u32)>> = g.passes.iter().map(|p| runs(a, &mut fusable, &p.rows)).collect();
    // Kernels a step would no longer run: each run of n becomes one.
    let fewer = |r: &[(usize, u32)]| r.iter().map(|&(n, _)| n as i64 - 1).sum::<i64>();
    let saved = |r: &[(usize, u32)]| fewer(r) as f64 * floor_us;
    let saving_us = upper_median(per_pass.iter().map(|r| fewer(r)).collect()) as f64 * floor_us;
    let wall_us = g.wall_us();
    if !g.worth(saving_us, wall_us) {
        return None;
    }
    let i = g.median_pass(|i| (saved(&per_pass[i]) * 1e3) as i64);
    let runs_per_step = per_pass[i].len();
    let kernels: usize = per_pass[i].iter().map(|&(n, _)| n).sum();
    let (longest, first) = per_pass[i].iter().copied().max_by_key(|&(n, _)| n).unwrap_or((0, 0));
    let fix = match g.engine {
        Engine::Vllm => "keep vLLM's compilation on (no --enforce-eager; --compilation-config level 3) so Inductor fuses the elementwise chains, and its fused custom ops (fused_add_rms_norm, silu_and_mul) in the model",
        Engine::Sglang => "SGLang --enable-torch-compile (Inductor fuses elementwise chains), and the model's fused kernels (fused_add_rmsnorm, silu_and_mul)",
        Engine::Jax => "let XLA fuse them: keep the chain inside one jit, with no host callback or custom call between the ops",
        Engine::Torch => "fuse the chain: torch.compile(model) (Inductor writes one Triton kernel per chain of pointwise ops), or fused ops (torch.nn.functional.rms_norm, a fused add + norm, SiLU-and-multiply)",
    };
    Some(Finding {
        evidence: format!(
            "{runs_per_step} runs of {MIN_RUN}+ memory-bound kernels a step ({kernels} kernels; the longest {longest}, from {}); a memory-bound kernel costs at least {floor_us:.2} µs here (10th percentile of {} such kernels)",
            a.trace.name(gpu.name[first as usize]),
            durations.len()
        ),
        saving_us,
        saving_pct: 100.0 * saving_us / wall_us,
        confidence: format!("medium: a floor per kernel, not a fused kernel's measured time; {}", g.confidence()),
        fix: fix.to_string(),
        check: format!("about {} fewer kernels a step", kernels - runs_per_step),
        from_ns: g.passes[i].start_ns,
        to_ns: g.passes[i].end_ns,
        ..g.finding_over_passes(Kind::Fusion)
    })
}
