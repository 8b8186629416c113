//! `traceprism.open(path)` and the `Trace` it returns.

use crate::errors::{from_json, trace_error, unknown_table, warn};
use crate::paths::path_list;
use crate::table::Table;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use std::sync::Arc;
use traceprism::analysis::Analysis;

/// An analysed trace: its summary and its tables.
#[pyclass(module = "traceprism", frozen)]
pub struct Trace {
    pub(crate) analysis: Arc<Analysis>,
    path: String,
    identity: Vec<(String, String)>,
}

impl Trace {
    /// A trace over an analysis made elsewhere (a rank of a run), with the path it was read from.
    pub(crate) fn from_analysis(analysis: Analysis, path: String) -> Trace {
        let identity = traceprism::report::batches::identity(&analysis, &path);
        Trace { analysis: Arc::new(analysis), path, identity }
    }
    /// A trace's table `name`, or a `KeyError` that lists the names.
    pub(crate) fn table_of(&self, name: &str) -> PyResult<Table> {
        Table::of_analysis(&self.analysis, name, self.identity.clone()).ok_or_else(|| unknown_table(name, &names()))
    }
}

fn names() -> Vec<String> {
    traceprism::report::table_names().into_iter().map(str::to_string).collect()
}

/// Reads and analyses a trace: a Chrome-trace JSON file, plain or gzip, or a JAX profile
/// (`*.xplane.pb`), told apart by its bytes.
///
/// `rules` is a TOML file of extra kernel-category rules (as `--rules`); `capture` a capture trace,
/// or a folder with `execution_details.json`, or a list of them (as `--capture`). The other
/// options are the CLI's, by keyword (`phase_method="hybrid"`, `strict=True`; see
/// `traceprism.options()`). The GIL is released while the file is read and analysed.
#[pyfunction]
#[pyo3(signature = (path, rules = None, capture = None, *, threads = None, **options))]
pub fn open(
    py: Python<'_>,
    path: PathBuf,
    rules: Option<PathBuf>,
    capture: Option<Bound<'_, PyAny>>,
    threads: Option<usize>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Trace> {
    let options = crate::paths::options("open", rules, options)?;
    let captures = path_list(capture.as_ref())?;
    open_with(py, path, options, threads, &captures)
}

/// Reads and analyses the trace at `path` with `options`.
pub(crate) fn open_with(
    py: Python<'_>,
    path: PathBuf,
    options: traceprism::Options,
    threads: Option<usize>,
    captures: &[PathBuf],
) -> PyResult<Trace> {
    let threads = threads.unwrap_or_else(traceprism::read::default_read_threads).max(1);
    let analysis = py.detach(|| traceprism::analyze_path_with(&path, options, threads, captures)).map_err(trace_error)?;
    read_as(py, analysis, path.display().to_string())
}

/// The `Trace` of an analysis read from `shown` (a path, or `read`'s name), after a
/// `TraceWarning` if the trace was cut short.
fn read_as(py: Python<'_>, analysis: Analysis, shown: String) -> PyResult<Trace> {
    if let Some(cut) = &analysis.trace.stats.truncation {
        warn(py, &format!("{shown}: {}", cut.message()))?;
    }
    Ok(Trace::from_analysis(analysis, shown))
}

/// Reads and analyses a trace held in memory (`bytes`, or a `bytearray`, copied): Chrome-trace
/// JSON, plain or gzip, or a JAX XSpace, told apart by its bytes, as `open` does for a file.
/// `name` stands for the file in messages and in the tables' metadata; the options are `open`'s.
/// The GIL is released while it is read.
#[pyfunction]
#[pyo3(signature = (data, name = "<bytes>", rules = None, **options))]
pub fn read(
    py: Python<'_>,
    data: pyo3::pybacked::PyBackedBytes,
    name: &str,
    rules: Option<PathBuf>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Trace> {
    let options = crate::paths::options("read", rules, options)?;
    let analysis = py
        .detach(|| {
            let trace = traceprism::pipeline::read_trace(std::io::Cursor::new(&*data))?;
            Analysis::new(trace, options)
        })
        .map_err(trace_error)?;
    read_as(py, analysis, name.to_string())
}

/// Every option `open`, `read`, `ranks` and `compare` take by keyword, as the core declares it: a
/// list of `{field, keyword, flags, kind, choices, default, doc}` (`scope`: `analysis` or `compare`).
#[pyfunction]
pub fn options(py: Python<'_>) -> PyResult<Py<PyAny>> {
    use traceprism::analysis::options::Declared;
    let mut list = Vec::new();
    for (scope, decl) in [
        ("analysis", traceprism::Options::declarations_json()),
        ("compare", traceprism::analysis::compare::CompareOptions::declarations_json()),
    ] {
        for mut d in decl.as_array().cloned().unwrap_or_default() {
            d["scope"] = serde_json::json!(scope);
            list.push(d);
        }
    }
    from_json(py, &list)
}

/// The names of every table a trace has, in export order.
#[pyfunction]
pub fn table_names() -> Vec<String> {
    names()
}

#[pymethods]
impl Trace {
    /// The path the trace was opened from.
    #[getter]
    pub(crate) fn path(&self) -> &str {
        &self.path
    }
    /// The headline facts, as `traceprism summary TRACE --json` prints them.
    #[getter]
    fn summary(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        from_json(py, &traceprism::report::summary::summary(&self.analysis))
    }
    /// What the trace is: file, device, workload, rank (the key-value metadata of its Parquet files).
    #[getter]
    fn identity<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in &self.identity {
            d.set_item(k.trim_start_matches("traceprism."), v)?;
        }
        Ok(d)
    }
    /// The names of the trace's tables.
    fn tables(&self) -> Vec<String> {
        names()
    }
    /// Table `name`: an object with `__arrow_c_stream__`, so `pyarrow.table(t)`,
    /// `polars.DataFrame(t)` and DuckDB read it as it is, with its types.
    fn table(&self, name: &str) -> PyResult<Table> {
        self.table_of(name)
    }
    /// Table `name` as a `pandas.DataFrame` (needs pyarrow and pandas).
    fn to_pandas<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let t = Bound::new(py, self.table_of(name)?)?;
        t.call_method0("to_pandas")
    }
    /// Writes every table as `dir/<table>.parquet` (as `export --parquet DIR`), with the trace's
    /// identity as key-value metadata; returns the files written.
    fn to_parquet(&self, py: Python<'_>, dir: PathBuf) -> PyResult<Vec<PathBuf>> {
        let analysis = self.analysis.clone();
        let identity = self.identity.clone();
        let written = py
            .detach(move || traceprism::report::batches::write_parquet_tables(analysis, &identity, &dir))
            .map_err(trace_error)?;
        Ok(written.into_iter().map(|(file, _)| file).collect())
    }
    fn __repr__(&self) -> String {
        format!("<traceprism.Trace {} ({} GPU events)>", self.path, self.analysis.trace.gpu.len())
    }
}
