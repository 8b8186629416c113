//! The trace's health: what the profiler recorded, what that leaves weaker or empty, and the exact
//! switch that records the rest — one [`Check`] per fact (`traceprism doctor`, `summary --json`'s
//! `health`, the `health` table, the report and the page's Health panel).
//!
//! Two kinds of checks. *Recorded* checks (`present`, `partial`, `missing`) say what the trace
//! holds; a fix is given only for what is missing, never for what is there. *Problem* checks
//! (`ok`, `warning`) say what went wrong while the trace was written or read: cut short, broken
//! JSON repaired, kernels dropped, events of a device kind we do not read. Every warning of the
//! second kind is also counted in the summary's `warnings` ([`report`]) with examples, so no
//! analysis is ever empty or partial without saying so.
//!
//! Each check's fix is chosen by the input's format ([`fixes`]): `torch.profiler` arguments for
//! a Kineto trace, `nsys profile` switches for an Nsight Systems export.

mod check;
mod counted;
pub mod fixes;
mod problems;
mod recorded;

pub use check::{Check, CheckId, Status};

use crate::analysis::Analysis;
use crate::model::{InputFormat, Warnings};
use counted::Counted;
use recorded::recorded;

/// A trace's health report: every check, in a fixed order.
pub fn health(a: &Analysis) -> Vec<Check> {
    report(a).0
}

/// The health report and the warnings it finds ([`crate::model::WarningKind`]'s health kinds),
/// counted once.
pub fn report(a: &Analysis) -> (Vec<Check>, Warnings) {
    let c = Counted::of(&a.trace);
    let found = problems::findings_of(&a.trace, &c);
    (checks(a, &c, &found), found)
}

fn checks(a: &Analysis, c: &Counted, found: &Warnings) -> Vec<Check> {
    let t = &a.trace;
    let mut out = vec![
        recorded(
            t,
            CheckId::CpuOps,
            c.cpu_ops,
            format!("{} CPU ops", c.cpu_ops),
            "ops tables and the op of each kernel are empty; passes and phases come from the GPU side alone",
        ),
        recorded(
            t,
            CheckId::RuntimeCalls,
            c.launches,
            format!("{} runtime calls ({} kernel launches, {} graph launches)", c.launches, c.kernel_launches, c.graph_launches),
            "kernels cannot be linked to the CPU op that launched them; launch overhead and CPU-bound gaps are not measured",
        ),
        recorded::kernels_check(t, c),
        recorded::copies_check(c),
        recorded::shapes_check(t, c),
        recorded(
            t,
            CheckId::Stacks,
            c.python,
            match t.call_stacks.len() {
                0 => format!("{} Python frames", c.python),
                n => format!("{} Python frames, read from the `Call stack` argument of {n} CPU ops (Kineto of 2021)", c.python),
            },
            "no Python frame per kernel (hover, the ops' call sites, a late rank's host_op between ops)",
        ),
        recorded(
            t,
            CheckId::Modules,
            c.modules,
            format!("{} nn.Module ranges", c.modules),
            "layers are found from kernel patterns and op names, not from the model's own module names",
        ),
        recorded::steps_check(t, c),
        recorded::graphs_check(a, c),
        recorded::graph_nodes_check(a, c),
        recorded::distributed_check(a),
        recorded::devices_check(t),
        recorded::time_unit_check(t),
        recorded::truncation_check(t),
        recorded::secrets_check(t),
        recorded::coverage_check(a),
        recorded::layer_coverage_check(a),
    ];
    out.extend(problems::problem_checks(a, c, found));
    if c.cpu_ops == 0 {
        // Shapes, stacks and modules hang off CPU ops: the fix starts with recording the CPU.
        let hangs_off_ops = [CheckId::Shapes, CheckId::Stacks, CheckId::Modules];
        for k in out.iter_mut().filter(|k| hangs_off_ops.contains(&k.check) && k.status == Status::Missing) {
            k.fix = fixes::with_cpu_first(k.check, t.stats.format);
        }
    }
    if t.stats.format == InputFormat::NsysSqlite {
        out.push(recorded::whole_graphs_check(t));
    }
    out
}
