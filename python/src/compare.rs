//! `traceprism.compare(a, b)` and the `Comparison` it returns.

use crate::errors::{from_json, trace_error};
use crate::paths::{keywords, refuse_unknown, set_declared};
use crate::table::{BuiltTables, Table};
use crate::trace::{open_with, Trace};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use traceprism::analysis::compare::CompareOptions;
use traceprism::analysis::options::Declared;

/// Where trace A is slower than trace B, and why: the tables of `traceprism compare A B`.
#[pyclass(module = "traceprism", frozen)]
pub struct Comparison {
    /// The tables, with the two traces compared as their Arrow metadata.
    built: BuiltTables,
    /// The verdict in one sentence (`Comparison.headline`).
    headline: String,
}

/// A trace given as an opened `Trace`, or a path opened here with `options`.
fn trace_of(py: Python<'_>, arg: &Bound<'_, PyAny>, options: &traceprism::Options) -> PyResult<Py<Trace>> {
    if let Ok(t) = arg.cast::<Trace>() {
        return Ok(t.clone().unbind());
    }
    Py::new(py, open_with(py, arg.extract()?, options.clone(), None, &[])?)
}

/// Compares two traces (opened `Trace` objects, or paths), as `traceprism compare A B`. The
/// options are the CLI's, by keyword: the comparison's (`phase`, `label_a`, `min_change`...) and,
/// for a trace given as a path, the analysis's (`rules`, `phase_method`...); see
/// `traceprism.options()`.
#[pyfunction]
#[pyo3(signature = (a, b, **options))]
pub fn compare(
    py: Python<'_>,
    a: Bound<'_, PyAny>,
    b: Bound<'_, PyAny>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Comparison> {
    let mut opts = CompareOptions::default();
    let rest = set_declared(&mut opts, keywords(options)?)?;
    let mut analysis = traceprism::Options::default();
    let rest = set_declared(&mut analysis, rest)?;
    refuse_unknown(&rest, "compare", &[CompareOptions::DECLARED, traceprism::Options::DECLARED])?;
    opts.validate().map_err(trace_error)?;
    let (ta, tb) = (trace_of(py, &a, &analysis)?, trace_of(py, &b, &analysis)?);
    opts.source_a = Some(ta.get().path().to_string());
    opts.source_b = Some(tb.get().path().to_string());
    let (aa, ab) = (ta.get().analysis.clone(), tb.get().analysis.clone());
    let (tables, headline) = py
        .detach(|| {
            let c = traceprism::analysis::compare::compare(&aa, &ab, &opts)?;
            Ok::<_, traceprism::Error>((traceprism::report::compare::tables_of(&c, &aa, &ab, &opts), c.headline()))
        })
        .map_err(trace_error)?;
    let identity = vec![
        ("traceprism.version".to_string(), env!("CARGO_PKG_VERSION").to_string()),
        ("traceprism.a".to_string(), ta.get().path().to_string()),
        ("traceprism.b".to_string(), tb.get().path().to_string()),
    ];
    Ok(Comparison { built: BuiltTables { tables, identity }, headline })
}

#[pymethods]
impl Comparison {
    /// Every table, as `traceprism compare A B --json` prints them.
    #[getter]
    fn summary(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        from_json(py, &self.built.tables)
    }
    /// The verdict in one sentence: who is slower, by how much a step against the steps' noise,
    /// and the rows of `compare_budget` that moved most.
    #[getter]
    fn headline(&self) -> String {
        self.headline.clone()
    }
    /// The names of the comparison's tables.
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
        format!("<traceprism.Comparison: {}>", self.headline)
    }
}
