//! Parquet export (`export --parquet`): every table of real fixtures written, read back with
//! arrow-rs's own Parquet reader, and compared cell by cell with the table the CSV is made from:
//! the declared type decides the Arrow type, an empty cell is a null, nothing else changes. The
//! trace's identity rides in the file's key-value metadata, and every column chunk is zstd.

use arrow_array::{Array, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::Compression;
use traceprism::report::batches::{identity, write_parquet_tables};
use traceprism::report::{table, table_names};
use traceprism::table::{Cell, ColumnType};
use traceprism::{analyze_path, Options};

fn cell_matches(batch: &RecordBatch, col: usize, row: usize, want: &Cell, t: ColumnType) -> bool {
    let a = batch.column(col);
    if matches!(want, Cell::Empty) {
        return a.is_null(row);
    }
    if a.is_null(row) {
        return false;
    }
    match t {
        ColumnType::Integer => a.as_any().downcast_ref::<Int64Array>().map(|v| v.value(row)) == want_int(want),
        ColumnType::Float | ColumnType::Micros => {
            let got = a.as_any().downcast_ref::<Float64Array>().unwrap().value(row);
            let w = want.as_f64().unwrap();
            got == w || (got - w).abs() <= 1e-9 * w.abs()
        }
        ColumnType::Text => a.as_any().downcast_ref::<StringArray>().map(|v| v.value(row).to_string()) == Some(want.text()),
        ColumnType::Boolean => a.as_any().downcast_ref::<BooleanArray>().map(|v| v.value(row)) == Some(want == &Cell::Bool(true)),
    }
}

fn want_int(c: &Cell) -> Option<i64> {
    match c {
        Cell::Int(v) => Some(*v),
        _ => None,
    }
}

#[test]
fn every_table_round_trips_through_parquet() {
    for name in ["llama_dense_eager.pt.trace.json.gz", "vllm_gptoss_mixed_piecewise_mi300x.json.gz"] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name);
        let analysis = std::sync::Arc::new(analyze_path(&path, Options::default()).expect("fixture loads"));
        let dir = std::env::temp_dir().join(format!("traceprism-parquet-test-{}-{name}", std::process::id()));
        let id = identity(&analysis, &path.display().to_string());
        let written = write_parquet_tables(analysis.clone(), &id, &dir).expect("tables written");
        assert_eq!(written.len(), table_names().len());
        for (file, rows) in written {
            let tname = file.file_stem().unwrap().to_string_lossy().to_string();
            let want = table(&analysis, &tname).unwrap();
            assert_eq!(rows, want.rows.len(), "{name} {tname}: rows written");
            let builder = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&file).unwrap()).unwrap();
            let meta = builder.metadata().clone();
            let kv = meta.file_metadata().key_value_metadata().expect("key-value metadata");
            let value = |k: &str| kv.iter().find(|e| e.key == k).and_then(|e| e.value.clone());
            assert_eq!(value("traceprism.file"), Some(path.display().to_string()), "{tname}");
            assert_eq!(value("traceprism.workload"), Some(analysis.phases.workload.kind.as_str().to_string()));
            for g in meta.row_groups() {
                assert!(g.columns().iter().all(|c| matches!(c.compression(), Compression::ZSTD(_))), "{tname}: zstd");
            }
            let schema = builder.schema().clone();
            let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
            assert_eq!(names, want.columns.iter().map(String::as_str).collect::<Vec<_>>(), "{name} {tname}: columns");
            let mut r = 0;
            for batch in builder.build().unwrap() {
                let batch = batch.unwrap();
                for row in 0..batch.num_rows() {
                    for (c, &t) in want.types.iter().enumerate() {
                        let cell = &want.rows[r][c];
                        assert!(
                            cell_matches(&batch, c, row, cell, t),
                            "{name} {tname}: row {r} column {}: {cell:?} as {t:?}",
                            want.columns[c]
                        );
                    }
                    r += 1;
                }
            }
            assert_eq!(r, want.rows.len(), "{name} {tname}: rows read back");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
