//! analyses → tables: every table the CLI prints, `export` writes and the page shows.
//!
//! To add a table, write a `fn(&Analysis) -> Table` next to its analysis and list it in [`TABLES`].

pub mod categories;
pub mod compare;
pub mod html;
pub mod input;
pub mod kernels;
pub mod layers;
pub mod ops;
pub mod phases;
pub mod roofline;
pub mod svg;
pub mod timeline;

pub use html::html_report;
pub use layers::layers_view;

use crate::analysis::Analysis;
use crate::table::{write_table, CsvWriter, Table};

/// A table builder.
pub type Builder = fn(&Analysis) -> Table;

/// Every table, in the order they are exported and shown.
pub const TABLES: &[(&str, Builder)] = &[
    ("trace_input", input::trace_input),
    ("gpu_timeline", timeline::gpu_timeline),
    ("ops_summary_by_category", ops::ops_summary_by_category),
    ("ops_summary", ops::ops_summary),
    ("ops_all", ops::ops_all),
    ("kernel_summary", ops::kernel_summary),
    ("phase_summary", phases::phase_summary),
    ("passes", phases::passes),
    ("phase_methods", phases::phase_methods),
    ("ops_summary_prefill", phases::ops_summary_prefill),
    ("ops_summary_decode", phases::ops_summary_decode),
    ("kernel_summary_prefill", phases::kernel_summary_prefill),
    ("kernel_summary_decode", phases::kernel_summary_decode),
    ("category_summary", categories::category_summary),
    ("graph_launch_breakdown", categories::graph_launch_breakdown),
    ("short_kernels_histogram", timeline::short_kernels_histogram),
    ("short_kernels", timeline::short_kernels),
    ("kernels", kernels::kernels),
    ("layers", layers::layers),
    ("layer_summary", layers::layer_summary),
    ("roofline_summary", roofline::roofline_summary),
    ("roofline_gemm", roofline::roofline_gemm),
    ("roofline_grouped_gemm", roofline::roofline_grouped_gemm),
    ("roofline_attention", roofline::roofline_attention),
    ("roofline_norm", roofline::roofline_norm),
    ("roofline_elementwise", roofline::roofline_elementwise),
];

/// Names of all tables.
pub fn table_names() -> Vec<&'static str> {
    TABLES.iter().map(|(n, _)| *n).collect()
}

/// Builds one table by name.
pub fn table(analysis: &Analysis, name: &str) -> Option<Table> {
    TABLES.iter().find(|(n, _)| *n == name).map(|(_, build)| build(analysis))
}

/// Writes table `name` as CSV to `out` and returns its row count (`None`: no such table).
///
/// Long tables (`kernels`, one row per kernel) go out row by row, so exporting a trace of a
/// million kernels never holds the table, or its text, in memory; the bytes are the same as
/// `table(..).to_csv()`.
pub fn write_csv(analysis: &Analysis, name: &str, out: impl std::io::Write) -> std::io::Result<Option<usize>> {
    if name == "kernels" {
        let mut w = CsvWriter::new(out, kernels::COLUMNS)?;
        for row in kernels::kernel_rows(analysis) {
            w.row(&row)?;
        }
        let rows = w.rows();
        w.finish()?;
        return Ok(Some(rows));
    }
    let Some(t) = table(analysis, name) else { return Ok(None) };
    write_table(&t, out)?;
    Ok(Some(t.rows.len()))
}

/// Every table as one `.xlsx` workbook (one sheet per table, in [`TABLES`] order).
pub fn workbook(analysis: &Analysis) -> Vec<u8> {
    let tables: Vec<Table> = TABLES.iter().map(|(_, build)| build(analysis)).collect();
    crate::table::xlsx::workbook(&tables)
}
