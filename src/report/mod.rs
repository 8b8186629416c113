//! analyses → tables: every table the CLI prints, `export` writes and the page shows.
//!
//! To add a table, write a `fn(&Analysis) -> Table` next to its analysis and list it in [`TABLES`].

pub mod categories;
mod kernels;

use crate::analysis::Analysis;
use crate::table::Table;

/// A table builder.
pub type Builder = fn(&Analysis) -> Table;

/// Every table, in the order they are exported and shown.
pub const TABLES: &[(&str, Builder)] = &[
    ("kernels", kernels::kernels),
    ("category_summary", categories::category_summary),
    ("graph_launch_breakdown", categories::graph_launch_breakdown),
];

/// Names of all tables.
pub fn table_names() -> Vec<&'static str> {
    TABLES.iter().map(|(n, _)| *n).collect()
}

/// Builds one table by name.
pub fn table(analysis: &Analysis, name: &str) -> Option<Table> {
    TABLES.iter().find(|(n, _)| *n == name).map(|(_, build)| build(analysis))
}
