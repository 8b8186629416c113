//! `traceprism.Table`: one typed table that leaves as an Arrow stream (`__arrow_c_stream__`).
//!
//! Each stream is made anew when a consumer asks, batch by batch: `kernels` rows are made from the
//! analysis as the batches are read, never built whole; other tables are built once and shared.

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_schema::ffi::FFI_ArrowSchema;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use std::sync::Arc;
use traceprism::analysis::Analysis;
use traceprism::table::arrow::{schema, RowBatches};
use traceprism::table::ColumnType;

/// Tables built once (a run's, a comparison's) with the metadata their streams carry: what
/// `Run` and `Comparison` list, hand out and turn into pandas.
pub struct BuiltTables {
    /// The tables, in order.
    pub tables: Vec<traceprism::table::Table>,
    /// Their Arrow schema metadata.
    pub identity: Vec<(String, String)>,
}

impl BuiltTables {
    /// The tables' names, in order.
    pub fn names(&self) -> Vec<String> {
        self.tables.iter().map(|t| t.name.clone()).collect()
    }
    /// Table `name`, or a `KeyError` that lists the names.
    pub fn table(&self, name: &str) -> PyResult<Table> {
        let t = self.tables.iter().find(|t| t.name == name).ok_or_else(|| crate::errors::unknown_table(name, &self.names()))?;
        Ok(Table::built(t.clone(), self.identity.clone()))
    }
    /// Table `name` as a `pandas.DataFrame`.
    pub fn to_pandas<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        Bound::new(py, self.table(name)?)?.call_method0("to_pandas")
    }
}

/// Where a table's rows come from.
pub enum Source {
    /// Made from the analysis on demand (`kernels`).
    Analysis(Arc<Analysis>),
    /// Built once.
    Built(Arc<traceprism::table::Table>),
}

/// A typed table of an analysis, a run or a comparison.
#[pyclass(module = "traceprism", frozen)]
pub struct Table {
    name: String,
    columns: Vec<String>,
    types: Vec<ColumnType>,
    identity: Vec<(String, String)>,
    source: Source,
}

impl Table {
    /// Table `name` of an analysis (`None`: no such table).
    pub fn of_analysis(analysis: &Arc<Analysis>, name: &str, identity: Vec<(String, String)>) -> Option<Table> {
        if name == "kernels" {
            // Its columns without its rows: the rows are made as a stream is read.
            let empty = traceprism::table::Table::new(name, traceprism::report::kernels::COLUMNS);
            let source = Source::Analysis(analysis.clone());
            return Some(Table { name: empty.name, columns: empty.columns, types: empty.types, identity, source });
        }
        traceprism::report::table(analysis, name).map(|t| Table::built(t, identity))
    }
    /// A table already built (a run's, a comparison's).
    pub fn built(t: traceprism::table::Table, identity: Vec<(String, String)>) -> Table {
        Table {
            name: t.name.clone(),
            columns: t.columns.clone(),
            types: t.types.clone(),
            identity,
            source: Source::Built(Arc::new(t)),
        }
    }
    fn batches(&self) -> RowBatches {
        match &self.source {
            Source::Analysis(a) => {
                traceprism::report::batches::table_batches(a.clone(), &self.name, &self.identity).expect("a known table")
            }
            Source::Built(t) => {
                let rows = t.rows.len();
                let shared = t.clone();
                let schema = schema(&self.columns, &self.types, &self.identity);
                RowBatches::new(schema, self.types.clone(), Box::new((0..rows).map(move |i| shared.rows[i].clone())))
            }
        }
    }
}

#[pymethods]
impl Table {
    /// The table's name (its CSV file, its sheet, its Parquet file).
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }
    /// Column names, in order.
    #[getter]
    fn columns(&self) -> Vec<String> {
        self.columns.clone()
    }
    /// Each column's declared type: `integer`, `float`, `text`, `boolean` or `us` (a time in µs,
    /// a float64 column with field metadata `unit = us`).
    #[getter]
    fn types(&self) -> Vec<&'static str> {
        self.types
            .iter()
            .map(|t| match t {
                ColumnType::Integer => "integer",
                ColumnType::Float => "float",
                ColumnType::Text => "text",
                ColumnType::Boolean => "boolean",
                ColumnType::Micros => "us",
            })
            .collect()
    }
    /// The number of rows (`kernels`: the kernels of the trace, counted without making the rows).
    #[getter]
    fn num_rows(&self) -> usize {
        match &self.source {
            Source::Analysis(a) => a.trace.kernel_rows().count(),
            Source::Built(t) => t.rows.len(),
        }
    }
    fn __len__(&self) -> usize {
        self.num_rows()
    }
    /// The Arrow schema, as a PyCapsule (the Arrow PyCapsule interface).
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        let schema = schema(&self.columns, &self.types, &self.identity);
        let ffi = FFI_ArrowSchema::try_from(schema.as_ref()).map_err(|e| crate::errors::TraceError::new_err(e.to_string()))?;
        PyCapsule::new_with_value(py, ffi, c"arrow_schema")
    }
    /// The rows as an Arrow C stream of record batches, in a PyCapsule (the Arrow PyCapsule
    /// interface). `requested_schema` is not honoured: the table's own types are returned, as the
    /// interface allows.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let stream = FFI_ArrowArrayStream::new(Box::new(self.batches()));
        PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }
    /// The table as a `pyarrow.Table` (needs pyarrow).
    fn to_arrow<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        slf.py().import("pyarrow")?.call_method1("table", (slf,))
    }
    /// The table as a `polars.DataFrame` (needs polars; `polars.from_arrow` on a stream gives a
    /// struct Series, `polars.DataFrame(t)` the table).
    fn to_polars<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        slf.py().import("polars")?.call_method1("DataFrame", (slf,))
    }
    /// The table as a `pandas.DataFrame` (needs pyarrow and pandas).
    fn to_pandas<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        Table::to_arrow(slf)?.call_method0("to_pandas")
    }
    fn __repr__(&self) -> String {
        format!("<traceprism.Table {} ({} rows, {} columns)>", self.name, self.num_rows(), self.columns.len())
    }
}
