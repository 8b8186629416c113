//! Typed tables as Parquet files: one file per table, zstd-compressed, written a record batch at a
//! time (see [`super::arrow`]), with the trace's identity as key-value metadata. Native only.

use super::arrow::RowBatches;
use arrow_array::RecordBatchReader;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

/// The zstd level of every file: level 3 is zstd's own default, fast to write and within a few
/// percent of the higher levels' size on trace tables.
const ZSTD_LEVEL: i32 = 3;

/// Writes `batches` as one Parquet file to `out` and returns its row count. `metadata` goes into
/// the file's key-value metadata (what DuckDB's `parquet_kv_metadata` and Spark read); the Arrow
/// schema, with the same metadata and each column's type, rides along as `ARROW:schema`.
pub fn write_parquet(
    batches: RowBatches,
    metadata: &[(String, String)],
    out: impl std::io::Write + Send,
) -> Result<usize, String> {
    let level = ZstdLevel::try_new(ZSTD_LEVEL).map_err(|e| e.to_string())?;
    let kv: Vec<KeyValue> = metadata.iter().map(|(k, v)| KeyValue::new(k.clone(), v.clone())).collect();
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(level))
        .set_key_value_metadata(if kv.is_empty() { None } else { Some(kv) })
        .build();
    let mut writer = ArrowWriter::try_new(out, batches.schema(), Some(props)).map_err(|e| e.to_string())?;
    let mut rows = 0;
    for batch in batches {
        let batch = batch.map_err(|e| e.to_string())?;
        rows += batch.num_rows();
        writer.write(&batch).map_err(|e| e.to_string())?;
    }
    writer.close().map_err(|e| e.to_string())?;
    Ok(rows)
}

/// Writes each `(name, batches)` as `dir/<name>.parquet` (creating `dir`), all with `metadata`;
/// returns each file with its row count, in order. Errors name the file.
pub fn write_parquet_dir(
    dir: &std::path::Path,
    metadata: &[(String, String)],
    tables: impl IntoIterator<Item = (String, RowBatches)>,
) -> crate::error::Result<Vec<(std::path::PathBuf, usize)>> {
    std::fs::create_dir_all(dir).map_err(|e| crate::error::Error::new(format!("cannot create {}: {e}", dir.display())))?;
    let mut written = Vec::new();
    for (name, batches) in tables {
        let file = dir.join(format!("{name}.parquet"));
        let cannot = |e: String| crate::error::Error::new(format!("cannot write {}: {e}", file.display()));
        let out = std::fs::File::create(&file).map_err(|e| cannot(e.to_string()))?;
        let rows = write_parquet(batches, metadata, std::io::BufWriter::with_capacity(1 << 20, out)).map_err(cannot)?;
        written.push((file, rows));
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::{Cell, Table};
    use parquet::file::reader::{FileReader, SerializedFileReader};

    #[test]
    fn a_table_round_trips_with_its_metadata() {
        let mut t = Table::new("t", &["n:int", "name", "dur_us:us"]);
        for i in 0..1000 {
            t.push(vec![Cell::from(i as i64), Cell::from(format!("k{i}")), Cell::Micros(1500 * i as i64)]);
        }
        let meta = vec![("traceprism.rank".to_string(), "3".to_string())];
        let path = std::env::temp_dir().join(format!("traceprism-parquet-{}.parquet", std::process::id()));
        let file = std::fs::File::create(&path).unwrap();
        let rows = write_parquet(RowBatches::of_table(t, &meta).with_batch_rows(300), &meta, file).unwrap();
        assert_eq!(rows, 1000);
        let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        let _ = std::fs::remove_file(&path);
        let md = reader.metadata().file_metadata();
        assert_eq!(md.num_rows(), 1000);
        let kv = md.key_value_metadata().unwrap();
        assert!(kv.iter().any(|k| k.key == "traceprism.rank" && k.value.as_deref() == Some("3")));
        let row_groups = reader.metadata().row_groups();
        assert!(row_groups.iter().all(|g| g.columns().iter().all(|c| matches!(c.compression(), Compression::ZSTD(_)))));
    }
}
