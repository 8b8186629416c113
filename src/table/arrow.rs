//! Typed tables as Arrow record batches: the schema follows each column's declared type, and long
//! tables go out a batch at a time from an iterator of rows, never built whole.
//!
//! | column type | Arrow type | note |
//! |---|---|---|
//! | integer | `Int64` | |
//! | float | `Float64` | |
//! | text | `Utf8` | |
//! | boolean | `Boolean` | |
//! | µs | `Float64` | field metadata `unit = us`; exact to well under a nanosecond for any trace time |
//!
//! An empty cell is a null. Native only (the Python face's PyCapsule streams and Parquet files).

use super::{Cell, ColumnType, Table};
use arrow_array::builder::{BooleanBuilder, Float64Builder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use std::collections::HashMap;
use std::sync::Arc;

/// Rows per record batch when a table is streamed: large enough that per-batch costs vanish,
/// small enough that a million-row table never sits whole in memory twice.
pub const BATCH_ROWS: usize = 64 * 1024;

/// The Arrow type of a declared column type.
pub fn data_type(t: ColumnType) -> DataType {
    match t {
        ColumnType::Integer => DataType::Int64,
        ColumnType::Float | ColumnType::Micros => DataType::Float64,
        ColumnType::Text => DataType::Utf8,
        ColumnType::Boolean => DataType::Boolean,
    }
}

/// The Arrow schema of columns `names` with declared `types`; `metadata` becomes the schema's
/// key-value metadata (the trace's identity in a Parquet file).
pub fn schema(names: &[String], types: &[ColumnType], metadata: &[(String, String)]) -> SchemaRef {
    let fields: Vec<Field> = names
        .iter()
        .zip(types)
        .map(|(n, &t)| {
            let f = Field::new(n, data_type(t), true);
            if t == ColumnType::Micros {
                f.with_metadata(HashMap::from([("unit".to_string(), "us".to_string())]))
            } else {
                f
            }
        })
        .collect();
    Arc::new(Schema::new_with_metadata(fields, metadata.iter().cloned().collect()))
}

enum Column {
    Int(Int64Builder),
    Float(Float64Builder),
    Text(StringBuilder),
    Bool(BooleanBuilder),
}

impl Column {
    fn new(t: ColumnType) -> Column {
        match t {
            ColumnType::Integer => Column::Int(Int64Builder::new()),
            ColumnType::Float | ColumnType::Micros => Column::Float(Float64Builder::new()),
            ColumnType::Text => Column::Text(StringBuilder::new()),
            ColumnType::Boolean => Column::Bool(BooleanBuilder::new()),
        }
    }
    /// Appends a cell; a cell that does not fit the column (which `tests/suite/table_types.rs` rules
    /// out for every built-in table) is a null rather than a wrong value.
    fn push(&mut self, cell: &Cell) {
        match (self, cell) {
            (Column::Int(b), Cell::Int(v)) => b.append_value(*v),
            (Column::Float(b), Cell::Float(v)) => b.append_value(*v),
            (Column::Float(b), Cell::Int(v)) => b.append_value(*v as f64),
            (Column::Float(b), Cell::Micros(ns)) => b.append_value(*ns as f64 / 1000.0),
            (Column::Text(b), Cell::Text(s)) => b.append_value(s),
            (Column::Bool(b), Cell::Bool(v)) => b.append_value(*v),
            (Column::Int(b), _) => b.append_null(),
            (Column::Float(b), _) => b.append_null(),
            (Column::Text(b), _) => b.append_null(),
            (Column::Bool(b), _) => b.append_null(),
        }
    }
    fn finish(&mut self) -> ArrayRef {
        match self {
            Column::Int(b) => Arc::new(b.finish()),
            Column::Float(b) => Arc::new(b.finish()),
            Column::Text(b) => Arc::new(b.finish()),
            Column::Bool(b) => Arc::new(b.finish()),
        }
    }
}

/// Rows of a typed table turned into record batches of at most [`BATCH_ROWS`] rows, one batch
/// at a time: an Arrow [`RecordBatchReader`] over any row iterator (a built table's rows, or the
/// `kernels` rows made on demand).
pub struct RowBatches {
    schema: SchemaRef,
    types: Vec<ColumnType>,
    rows: Box<dyn Iterator<Item = Vec<Cell>> + Send>,
    batch_rows: usize,
    done: bool,
    emitted: bool,
}

impl RowBatches {
    /// Batches of `rows`, whose cells follow `types`, under `schema` (see [`schema`]).
    pub fn new(schema: SchemaRef, types: Vec<ColumnType>, rows: Box<dyn Iterator<Item = Vec<Cell>> + Send>) -> Self {
        RowBatches { schema, types, rows, batch_rows: BATCH_ROWS, done: false, emitted: false }
    }
    /// A built table's rows, batched (the table is consumed row by row).
    pub fn of_table(table: Table, metadata: &[(String, String)]) -> Self {
        let schema = schema(&table.columns, &table.types, metadata);
        RowBatches::new(schema, table.types, Box::new(table.rows.into_iter()))
    }
    /// The same batches with at most `rows` rows each (at least 1).
    pub fn with_batch_rows(mut self, rows: usize) -> Self {
        self.batch_rows = rows.max(1);
        self
    }
    fn next_batch(&mut self) -> Option<Result<RecordBatch, ArrowError>> {
        if self.done {
            return None;
        }
        let mut columns: Vec<Column> = self.types.iter().map(|&t| Column::new(t)).collect();
        let mut n = 0;
        for row in self.rows.by_ref() {
            for (c, cell) in columns.iter_mut().zip(row.iter().chain(std::iter::repeat(&Cell::Empty))) {
                c.push(cell);
            }
            n += 1;
            if n == self.batch_rows {
                break;
            }
        }
        self.done = n < self.batch_rows;
        // An empty table is one empty batch, so readers still see its schema and zero rows.
        if n == 0 && self.emitted {
            return None;
        }
        self.emitted = true;
        let arrays = columns.iter_mut().map(Column::finish).collect();
        Some(RecordBatch::try_new(self.schema.clone(), arrays))
    }
}

impl Iterator for RowBatches {
    type Item = Result<RecordBatch, ArrowError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch()
    }
}

impl RecordBatchReader for RowBatches {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Array, BooleanArray, Float64Array, Int64Array, StringArray};

    fn sample(rows: usize) -> Table {
        let mut t = Table::new("t", &["n:int", "x:float", "name", "ok:bool", "dur_us:us"]);
        for i in 0..rows {
            t.push(vec![
                Cell::from(i),
                if i % 2 == 0 { Cell::Float(i as f64 / 2.0) } else { Cell::Int(i as i64) },
                if i == 1 { Cell::Empty } else { Cell::from(format!("k<{i}>")) },
                Cell::Bool(i % 3 == 0),
                Cell::Micros(4_488_634_954_857_801 + i as i64),
            ]);
        }
        t
    }

    #[test]
    fn cells_keep_their_types_and_values() {
        let batches: Vec<RecordBatch> = RowBatches::of_table(sample(5), &[]).map(|b| b.unwrap()).collect();
        assert_eq!(batches.len(), 1);
        let b = &batches[0];
        let s = b.schema();
        let types: Vec<&DataType> = s.fields().iter().map(|f| f.data_type()).collect();
        assert_eq!(types, [&DataType::Int64, &DataType::Float64, &DataType::Utf8, &DataType::Boolean, &DataType::Float64]);
        assert_eq!(s.field(4).metadata().get("unit").map(String::as_str), Some("us"));
        let n = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!(n.values().to_vec(), vec![0, 1, 2, 3, 4]);
        let x = b.column(1).as_any().downcast_ref::<Float64Array>().unwrap();
        assert_eq!(x.values().to_vec(), vec![0.0, 1.0, 1.0, 3.0, 2.0]);
        let name = b.column(2).as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(name.value(0), "k<0>");
        assert!(name.is_null(1));
        let ok = b.column(3).as_any().downcast_ref::<BooleanArray>().unwrap();
        assert_eq!((0..5).map(|i| ok.value(i)).collect::<Vec<_>>(), [true, false, false, true, false]);
        let dur = b.column(4).as_any().downcast_ref::<Float64Array>().unwrap();
        // A trace-sized timestamp in µs keeps its nanoseconds to well within half a nanosecond.
        assert!((dur.value(0) - 4_488_634_954_857.801).abs() < 5e-4);
    }

    #[test]
    fn long_tables_go_out_in_batches_and_empty_ones_as_one_empty_batch() {
        let sizes: Vec<usize> = RowBatches::of_table(sample(10), &[]).with_batch_rows(4).map(|b| b.unwrap().num_rows()).collect();
        assert_eq!(sizes, [4, 4, 2]);
        let exact: Vec<usize> = RowBatches::of_table(sample(8), &[]).with_batch_rows(4).map(|b| b.unwrap().num_rows()).collect();
        assert_eq!(exact, [4, 4]);
        let empty: Vec<usize> = RowBatches::of_table(sample(0), &[]).map(|b| b.unwrap().num_rows()).collect();
        assert_eq!(empty, [0]);
    }

    #[test]
    fn identity_rides_as_schema_metadata() {
        let meta = vec![("traceprism.file".to_string(), "a.json.gz".to_string())];
        let r = RowBatches::of_table(sample(1), &meta);
        assert_eq!(r.schema().metadata().get("traceprism.file").map(String::as_str), Some("a.json.gz"));
    }
}
