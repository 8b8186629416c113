//! analyses → tables: every table the CLI prints, `export` writes and the page shows.
//!
//! To add a table, write a `fn(&Analysis) -> Table` next to its analysis and list it in [`TABLES`]
//! with the page view that shows it.

#[cfg(all(feature = "parquet", not(target_arch = "wasm32")))]
pub mod batches;
pub mod budget;
pub mod categories;
pub mod code;
pub mod compare;
pub mod findings;
pub mod health;
pub mod html;
pub mod input;
pub mod kernels;
pub mod layers;
pub mod ops;
pub mod phases;
pub mod ranks;
pub mod rollup;
pub mod roofline;
pub mod summary;
pub mod svg;
pub mod timeline;

pub use html::html_report;

use crate::analysis::Analysis;
use crate::table::{write_table, CsvWriter, Table};

/// `part` as a percentage of `whole` (0 when `whole` is not positive): the share columns of every
/// table.
pub(crate) fn percent(part: i64, whole: i64) -> f64 {
    if whole > 0 {
        100.0 * part as f64 / whole as f64
    } else {
        0.0
    }
}

/// Builds one table from an analysis.
pub type BuildTable = fn(&Analysis) -> Table;

/// The page's views that show tables (the timeline, compare and rules views show none of these).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum View {
    /// `#overview`: the summary and the tables of what was read.
    Overview,
    /// `#categories`: time by kernel category.
    Categories,
    /// `#phases`: prefill and decode, pass by pass.
    Phases,
    /// `#layers`: transformer layers and the heat map.
    Layers,
    /// `#ops`: CPU operators and the kernels they launched.
    Ops,
    /// `#kernels`: every kernel name.
    Kernels,
    /// `#report`: the roofline and the findings.
    Report,
    /// `#code`: where in the code: the flame graph of GPU time by call path, and source lines.
    Code,
}

/// One table: its name (the CSV file's and the sheet's), the view that shows it, its builder.
#[derive(Clone, Copy)]
pub struct TableDef {
    /// The table's name (its CSV file and sheet).
    pub name: &'static str,
    /// The page's view that shows it.
    pub view: View,
    /// What builds it.
    pub build: BuildTable,
}

/// Every table, in the order they are exported and shown, with the page view that shows it.
pub const TABLES: &[TableDef] = &[
    TableDef { name: "trace_input", view: View::Overview, build: input::trace_input },
    TableDef { name: "health", view: View::Overview, build: health::health },
    TableDef { name: "findings", view: View::Overview, build: findings::findings },
    TableDef { name: "step_budget", view: View::Overview, build: budget::step_budget },
    TableDef { name: "gpu_timeline", view: View::Overview, build: timeline::gpu_timeline },
    TableDef { name: "ops_summary_by_category", view: View::Categories, build: ops::ops_summary_by_category },
    TableDef { name: "ops_summary", view: View::Ops, build: ops::ops_summary },
    TableDef { name: "ops_all", view: View::Ops, build: ops::ops_all },
    TableDef { name: "kernel_summary", view: View::Kernels, build: ops::kernel_summary },
    TableDef { name: "phase_summary", view: View::Phases, build: phases::phase_summary },
    TableDef { name: "passes", view: View::Phases, build: phases::passes },
    TableDef { name: "phase_methods", view: View::Phases, build: phases::phase_methods },
    TableDef { name: "ops_summary_prefill", view: View::Phases, build: phases::ops_summary_prefill },
    TableDef { name: "ops_summary_decode", view: View::Phases, build: phases::ops_summary_decode },
    TableDef { name: "kernel_summary_prefill", view: View::Phases, build: phases::kernel_summary_prefill },
    TableDef { name: "kernel_summary_decode", view: View::Phases, build: phases::kernel_summary_decode },
    TableDef { name: "category_summary", view: View::Categories, build: categories::category_summary },
    TableDef { name: "graph_launch_breakdown", view: View::Overview, build: categories::graph_launch_breakdown },
    TableDef { name: "short_kernels_histogram", view: View::Kernels, build: timeline::short_kernels_histogram },
    TableDef { name: "short_kernels", view: View::Kernels, build: timeline::short_kernels },
    TableDef { name: "kernels", view: View::Kernels, build: kernels::kernels },
    TableDef { name: "layers", view: View::Layers, build: layers::layers },
    TableDef { name: "layer_summary", view: View::Layers, build: layers::layer_summary },
    TableDef { name: "roofline_summary", view: View::Report, build: roofline::roofline_summary },
    TableDef { name: "roofline_gemm", view: View::Report, build: roofline::roofline_gemm },
    TableDef { name: "roofline_grouped_gemm", view: View::Report, build: roofline::roofline_grouped_gemm },
    TableDef { name: "roofline_attention", view: View::Report, build: roofline::roofline_attention },
    TableDef { name: "roofline_norm", view: View::Report, build: roofline::roofline_norm },
    TableDef { name: "roofline_elementwise", view: View::Report, build: roofline::roofline_elementwise },
    TableDef { name: "sources", view: View::Code, build: code::sources },
    TableDef { name: "call_paths", view: View::Code, build: code::call_paths },
];

/// Names of all tables.
pub fn table_names() -> Vec<&'static str> {
    TABLES.iter().map(|t| t.name).collect()
}

/// Builds one table by name.
pub fn table(analysis: &Analysis, name: &str) -> Option<Table> {
    TABLES.iter().find(|t| t.name == name).map(|t| (t.build)(analysis))
}

/// Writes table `name` as CSV to `out` and returns its row count (`None`: no such table).
///
/// Long tables (`kernels`, one row per kernel) go out row by row, so exporting a trace of a
/// million kernels never holds the table, or its text, in memory; the bytes are the same as
/// `table(..).to_csv()`.
pub fn write_csv(analysis: &Analysis, name: &str, out: impl std::io::Write) -> std::io::Result<Option<usize>> {
    if name == "kernels" {
        let mut w = CsvWriter::new(out, &crate::table::column_names(kernels::COLUMNS))?;
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

/// Every table as one `.xlsx` workbook (one sheet per table, in [`TABLES`] order), and the user's
/// category rules as a last sheet when there are any ([`user_rules`]).
pub fn workbook(analysis: &Analysis) -> Vec<u8> {
    let mut tables: Vec<Table> = TABLES.iter().map(|t| (t.build)(analysis)).collect();
    if let Some(rules) = user_rules(analysis) {
        tables.push(rules);
    }
    crate::table::xlsx::workbook(&tables)
}

/// The user's category rules the analysis used (`--rules`, the page's rules view), one row per
/// line of their TOML, as the workbook's last sheet: an export says how it was categorised.
pub fn user_rules(analysis: &Analysis) -> Option<Table> {
    let text = analysis.options.category_rules.as_deref().filter(|t| !t.trim().is_empty())?;
    let mut t = Table::new("category_rules", &["line", "text"]);
    for (i, line) in text.lines().enumerate() {
        t.push(vec![crate::table::Cell::from(i + 1), crate::table::Cell::from(line)]);
    }
    Some(t)
}
