//! `kernels`: one row per GPU kernel event, in trace order (the `kernels.csv` contract).

use crate::analysis::Analysis;
use crate::model::{GpuKind, NONE};
use crate::table::{Cell, Table};

/// Column names of `kernels.csv` (a contract: other tools read these).
pub const COLUMNS: &[&str] = &[
    "index:int",
    "ts_us:us",
    "dur_us:us",
    "name",
    "category",
    "device:int",
    "stream:int",
    "correlation:int",
    "launcher",
    "cpu_op",
    "phase",
    "phase_confidence:float",
    "pass:int",
    "layer:int",
    "layer_type",
    "op_from",
];

/// One row per kernel (memcpy/memset rows are not kernels and are left out).
pub fn kernels(a: &Analysis) -> Table {
    let mut table = Table::new("kernels", COLUMNS);
    kernel_rows(a).for_each(|r| table.push(r));
    table
}

/// The rows of [`kernels`], one at a time (export streams them to a file instead of holding
/// a million-row table).
pub fn kernel_rows(a: &Analysis) -> impl Iterator<Item = Vec<Cell>> + '_ {
    kernel_rows_shared(a)
}

/// [`kernel_rows`] from an analysis the iterator holds (a reference, an `Arc`), so that an owned
/// handle makes rows long after the call, batch by batch (the Python face's Arrow streams).
pub fn kernel_rows_shared<'a, A>(a: A) -> impl Iterator<Item = Vec<Cell>> + Send + 'a
where
    A: std::ops::Deref<Target = Analysis> + Clone + Send + 'a,
{
    let rows = a.trace.gpu.len();
    let kinds = a.clone();
    (0..rows).filter(move |&i| kinds.trace.gpu.kind[i] == GpuKind::Kernel).enumerate().map(move |(n, i)| kernel_row(&a, n, i))
}

/// Row `n` of [`kernels`]: GPU row `i`, a kernel.
fn kernel_row(a: &Analysis, n: usize, i: usize) -> Vec<Cell> {
    let t = &a.trace;
    let g = &t.gpu;
    let pass = a.phases.pass_of_row[i];
    let layer = a.layers.layer_of_row[i];
    let phase = a.phases.phase_of_row[i];
    vec![
        Cell::from(n),
        Cell::Micros(g.ts[i]),
        Cell::Micros(g.dur[i]),
        Cell::from(t.name(g.name[i])),
        Cell::from(a.categories.name(i)),
        Cell::Int(g.device[i] as i64),
        Cell::Int(g.stream[i] as i64),
        if g.correlation[i] >= 0 { Cell::Int(g.correlation[i]) } else { Cell::Empty },
        Cell::from(t.launcher_name(i)),
        Cell::from(t.cpu_op_name(i)),
        Cell::from(phase.map(|p| p.as_str())),
        if phase.is_some() { Cell::Float(a.phases.confidence_of_row[i] as f64) } else { Cell::Empty },
        if pass != NONE { Cell::from(pass) } else { Cell::Empty },
        if layer != NONE { Cell::from(layer) } else { Cell::Empty },
        Cell::from(a.layers.layer_type(i)),
        Cell::from(t.op_from(i).as_str()),
    ]
}
