//! Roofline tables: `roofline_summary` (one row per family, with the device roofs) and one
//! `roofline_<family>` table per op family (one row per unique op call, most GPU time first).

use super::percent as pct;
use crate::analysis::roofline::{Family, OpRow, Roofline};
use crate::analysis::Analysis;
use crate::table::{Cell, Table};

/// Columns of the per-family tables (TraceLens' perf-report names where they exist).
pub const COLUMNS: &[&str] = &[
    "name",
    "Input Dims",
    "Input type",
    "Concrete Inputs",
    "shape",
    "precision",
    "operation_count:int",
    "kernel_count:int",
    "total_direct_kernel_time_us:us",
    "mean_direct_kernel_time_us:us",
    "GFLOPS:float",
    "Data Moved (MB):float",
    "FLOPS/Byte:float",
    "TFLOPS/s:float",
    "TFLOPS/s median:float",
    "TB/s:float",
    "peak TFLOPS/s:float",
    "roof TFLOPS/s:float",
    "bound",
    "% of roofline:float",
];

/// One table row for an op group.
pub fn row_cells(r: &OpRow, roof: &Roofline) -> Vec<Cell> {
    let verdict = roof.peaks.as_ref().map(|p| r.against(p));
    vec![
        Cell::from(r.name.as_str()),
        Cell::from(r.input_dims.as_str()),
        Cell::from(r.input_types.as_str()),
        Cell::from(r.concrete_inputs.as_str()),
        Cell::from(r.work.shape.as_str()),
        Cell::from(r.work.precision.as_str()),
        Cell::from(r.calls),
        Cell::from(r.kernels),
        Cell::Float(r.total_ns as f64 / 1e3),
        Cell::Float(r.mean_ns() / 1e3),
        Cell::Float(r.work.flops / 1e9),
        Cell::Float(r.work.bytes / 1e6),
        Cell::Float(r.intensity()),
        Cell::Float(r.tflops()),
        Cell::Float(r.median_tflops),
        Cell::Float(r.tbs()),
        verdict.map_or(Cell::Empty, |v| Cell::Float(v.peak_tflops)),
        verdict.map_or(Cell::Empty, |v| Cell::Float(v.roof_tflops)),
        verdict.map_or(Cell::Empty, |v| Cell::from(v.bound)),
        verdict.map_or(Cell::Empty, |v| Cell::Float(v.pct_of_roof)),
    ]
}

/// The table of one family from a computed roofline (honours `Options.topk`).
pub fn family_table(a: &Analysis, roof: &Roofline, family: Family, name: &str) -> Table {
    let mut t = Table::new(name, COLUMNS);
    let limit = if a.options.topk > 0 { a.options.topk } else { usize::MAX };
    for r in roof.family(family).take(limit) {
        t.push(row_cells(r, roof));
    }
    t
}

/// `roofline_gemm`: aten::mm/addmm/bmm/matmul/linear, `_scaled_mm` and custom GEMMs.
pub fn roofline_gemm(a: &Analysis) -> Table {
    family_table(a, a.roofline(), Family::Gemm, "roofline_gemm")
}

/// `roofline_grouped_gemm`: MoE grouped GEMMs (`aten::_grouped_mm`).
pub fn roofline_grouped_gemm(a: &Analysis) -> Table {
    family_table(a, a.roofline(), Family::GroupedGemm, "roofline_grouped_gemm")
}

/// `roofline_attention`: SDPA, flash / efficient / cuDNN attention.
pub fn roofline_attention(a: &Analysis) -> Table {
    family_table(a, a.roofline(), Family::Attention, "roofline_attention")
}

/// `roofline_norm`: layer/RMS norms and softmax.
pub fn roofline_norm(a: &Analysis) -> Table {
    family_table(a, a.roofline(), Family::Norm, "roofline_norm")
}

/// `roofline_elementwise`: elementwise, copies and simple reductions (memory-bound).
pub fn roofline_elementwise(a: &Analysis) -> Table {
    family_table(a, a.roofline(), Family::Elementwise, "roofline_elementwise")
}

/// `roofline_summary`: per family, GPU time, total work, aggregate TFLOP/s and TB/s, and the
/// time-weighted % of roofline; the device and its roofs in every row.
pub fn roofline_summary(a: &Analysis) -> Table {
    summary_from(a.roofline())
}

/// `roofline_summary` from a computed roofline.
pub fn summary_from(roof: &Roofline) -> Table {
    let mut t = Table::new(
        "roofline_summary",
        &[
            "family",
            "unique_ops:int",
            "operation_count:int",
            "total_direct_kernel_time_ms:float",
            "Percent of GPU time (%):float",
            "TFLOP:float",
            "GB moved:float",
            "TFLOPS/s:float",
            "TB/s:float",
            "time-weighted % of roofline:float",
            "device",
            "peak bf16 TFLOPS/s:float",
            "peak fp8 TFLOPS/s:float",
            "peak HBM TB/s:float",
        ],
    );
    let device = |t: &mut Vec<Cell>| match &roof.peaks {
        Some(p) => t.extend([Cell::from(p.label.as_str()), Cell::Float(p.bf16), Cell::Float(p.fp8), Cell::Float(p.hbm)]),
        None if roof.device_kind == "GPU" => {
            t.extend([Cell::from("unknown (set Options.device)"), Cell::Empty, Cell::Empty, Cell::Empty])
        }
        // The peaks table holds GPUs: another accelerator's roofline is not for this device
        // unless the user gives its peaks.
        None => t.extend([
            Cell::from(format!(
                "not for this device: no {} peaks known (give them: --device bf16=…,fp8=…,hbm=…)",
                roof.device_kind
            )),
            Cell::Empty,
            Cell::Empty,
            Cell::Empty,
        ]),
    };
    for f in Family::ALL {
        let rows: Vec<&OpRow> = roof.family(f).collect();
        if rows.is_empty() {
            continue;
        }
        let ns: i64 = rows.iter().map(|r| r.total_ns).sum();
        let flops: f64 = rows.iter().map(|r| r.work.flops * r.calls as f64).sum();
        let bytes: f64 = rows.iter().map(|r| r.work.bytes * r.calls as f64).sum();
        let weighted = roof.peaks.as_ref().map(|p| {
            let w: f64 = rows.iter().map(|r| r.against(p).pct_of_roof * r.total_ns as f64).sum();
            if ns > 0 {
                w / ns as f64
            } else {
                0.0
            }
        });
        let mut cells = vec![
            Cell::from(f.as_str()),
            Cell::from(rows.len()),
            Cell::from(rows.iter().map(|r| r.calls).sum::<usize>()),
            Cell::Float(ns as f64 / 1e6),
            Cell::Float(pct(ns, roof.gpu_ns)),
            Cell::Float(flops / 1e12),
            Cell::Float(bytes / 1e9),
            Cell::Float(if ns > 0 { flops / ns as f64 / 1e3 } else { 0.0 }),
            Cell::Float(if ns > 0 { bytes / ns as f64 / 1e3 } else { 0.0 }),
            weighted.map_or(Cell::Empty, Cell::Float),
        ];
        device(&mut cells);
        t.push(cells);
    }
    let other = roof.gpu_ns - roof.modeled_ns;
    let mut cells = vec![
        Cell::from("not modelled"),
        Cell::Empty,
        Cell::Empty,
        Cell::Float(other as f64 / 1e6),
        Cell::Float(pct(other, roof.gpu_ns)),
        Cell::Empty,
        Cell::Empty,
        Cell::Empty,
        Cell::Empty,
        Cell::Empty,
    ];
    device(&mut cells);
    t.push(cells);
    t
}
