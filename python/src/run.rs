//! `traceprism.ranks(paths_or_dir)` and the `Run` it returns.

use crate::errors::{from_json, trace_error, warn};
use crate::paths::path_list;
use crate::table::{BuiltTables, Table};
use crate::trace::Trace;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use traceprism::analysis::ranks::RunOptions;
use traceprism::pipeline::ranks::{rank_files, read_run, run_identity};
use traceprism::report::ranks::run_json;

/// All ranks of one run: collectives matched, clocks aligned, the straggler named.
#[pyclass(module = "traceprism", frozen)]
pub struct Run {
    summary: serde_json::Value,
    /// The run's tables, with the rank files as their Arrow metadata.
    built: BuiltTables,
    files: Vec<String>,
    traces: Vec<Py<Trace>>,
}

/// Reads the traces of one run's ranks (a folder of them, or a list of files) side by side, as
/// `traceprism ranks`. A rank that cannot be read is left out with a `TraceWarning`; fewer than two
/// readable ranks raise `TraceError`. The GIL is released while they are read.
#[pyfunction]
#[pyo3(signature = (paths, rules = None, capture = None, *, align = true, threads = None, **options))]
pub fn ranks(
    py: Python<'_>,
    paths: Bound<'_, PyAny>,
    rules: Option<PathBuf>,
    capture: Option<Bound<'_, PyAny>>,
    align: bool,
    threads: Option<usize>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Run> {
    let options = crate::paths::options("ranks", rules, options)?;
    let paths = path_list(Some(&paths))?;
    let captures = path_list(capture.as_ref())?;
    let loaded = py
        .detach(|| {
            let files = rank_files(&paths)?;
            read_run(&files, &options, threads, &captures, RunOptions { align })
        })
        .map_err(trace_error)?;
    for (name, cut) in &loaded.truncated {
        warn(py, &format!("{name}: {cut}"))?;
    }
    for (name, e) in &loaded.left_out {
        warn(py, &format!("{name}: {e} (this rank is left out)"))?;
    }
    let tables = traceprism::report::ranks::run_tables(&loaded.run);
    let summary = run_json(&loaded.run, loaded.left_out.len(), &tables);
    let identity = run_identity(&loaded.run);
    let files = loaded.run.ranks.iter().map(|r| r.trace.file.clone()).collect();
    // The run's tables are made: each rank's analysis now becomes a Trace of its own, so a run is
    // read once for its run tables and its ranks' tables.
    let traces = loaded
        .run
        .ranks
        .into_iter()
        .map(|r| Py::new(py, Trace::from_analysis(r.trace.analysis, r.trace.file)))
        .collect::<PyResult<_>>()?;
    Ok(Run { summary, built: BuiltTables { tables, identity }, files, traces })
}

#[pymethods]
impl Run {
    /// The run's counts, finding, warnings and tables, as `traceprism ranks ... --json` prints them.
    #[getter]
    fn summary(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        from_json(py, &self.summary)
    }
    /// The rank files read, in rank order.
    #[getter]
    fn files(&self) -> Vec<String> {
        self.files.clone()
    }
    /// Each rank's trace (its summary and tables), in rank order.
    #[getter]
    fn traces(&self, py: Python<'_>) -> Vec<Py<Trace>> {
        self.traces.iter().map(|t| t.clone_ref(py)).collect()
    }
    /// The names of the run's tables.
    fn tables(&self) -> Vec<String> {
        self.built.names()
    }
    /// Table `name` (an Arrow stream, see `Trace.table`).
    fn table(&self, name: &str) -> PyResult<Table> {
        self.built.table(name)
    }
    /// Table `name` as a `pandas.DataFrame`.
    fn to_pandas<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        self.built.to_pandas(py, name)
    }
    fn __repr__(&self) -> String {
        format!("<traceprism.Run {} ranks>", self.files.len())
    }
}
