//! Tables as Arrow record batches and Parquet files, with the trace's identity (native only).
//!
//! The long `kernels` table is made batch by batch from the analysis; the others are built, then
//! handed over row by row.

use super::kernels;
use crate::analysis::Analysis;
use crate::table::arrow::{schema, RowBatches};
use crate::table::Table;

/// The key-value metadata every exported table of one trace carries: which file, rank, device
/// and workload it describes, and which traceprism wrote it.
pub fn identity(a: &Analysis, file: &str) -> Vec<(String, String)> {
    let s = &a.trace.meta;
    let rank = crate::analysis::ranks::trace_rank(&a.trace, file);
    let mut kv = vec![
        ("traceprism.version".to_string(), env!("CARGO_PKG_VERSION").to_string()),
        ("traceprism.file".to_string(), file.to_string()),
        ("traceprism.device".to_string(), super::summary::device_label(s)),
        ("traceprism.workload".to_string(), a.phases.workload.kind.as_str().to_string()),
    ];
    if let Some(r) = rank {
        kv.push(("traceprism.rank".to_string(), r.to_string()));
    }
    if let Some(w) = s.world_size {
        kv.push(("traceprism.world_size".to_string(), w.to_string()));
    }
    kv
}

/// Table `name` of `analysis` as record batches under a schema carrying `metadata` (`None`: no
/// such table). `kernels` rows are made as the batches are read.
pub fn table_batches<A>(analysis: A, name: &str, metadata: &[(String, String)]) -> Option<RowBatches>
where
    A: std::ops::Deref<Target = Analysis> + Clone + Send + 'static,
{
    if name == "kernels" {
        let empty = Table::new(name, kernels::COLUMNS);
        let schema = schema(&empty.columns, &empty.types, metadata);
        return Some(RowBatches::new(schema, empty.types, Box::new(kernels::kernel_rows_shared(analysis))));
    }
    let table = super::table(&analysis, name)?;
    Some(RowBatches::of_table(table, metadata))
}

/// Every table of `analysis` as `dir/<table>.parquet`, with the trace's `identity` (see
/// [`identity`]); returns each file with its row count, in table order.
pub fn write_parquet_tables<A>(
    analysis: A,
    identity: &[(String, String)],
    dir: &std::path::Path,
) -> crate::error::Result<Vec<(std::path::PathBuf, usize)>>
where
    A: std::ops::Deref<Target = Analysis> + Clone + Send + 'static,
{
    let tables = super::table_names().into_iter().map(|name| {
        let batches = table_batches(analysis.clone(), name, identity).expect("a listed table");
        (name.to_string(), batches)
    });
    crate::table::parquet::write_parquet_dir(dir, identity, tables)
}
