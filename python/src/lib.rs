//! traceprism from Python: the third face of the core, beside the CLI and the wasm API.
//!
//! `traceprism.open(path)` reads and analyses a trace with the GIL released; its tables leave as
//! Arrow streams through the PyCapsule interface (`__arrow_c_stream__`), so pyarrow, polars and
//! DuckDB take them without a copy and with their real types. `ranks` and `compare` do the same
//! for a run of ranks and a pair of traces. Everything here is glue: the work is the core's.

mod compare;
mod errors;
mod paths;
mod run;
mod table;
mod trace;

use pyo3::prelude::*;

/// The `traceprism` Python module.
#[pymodule]
#[pyo3(name = "traceprism")]
fn python_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("TraceError", py.get_type::<errors::TraceError>())?;
    m.add("TraceWarning", py.get_type::<errors::TraceWarning>())?;
    m.add_class::<trace::Trace>()?;
    m.add_class::<table::Table>()?;
    m.add_class::<run::Run>()?;
    m.add_class::<compare::Comparison>()?;
    m.add_function(wrap_pyfunction!(trace::open, m)?)?;
    m.add_function(wrap_pyfunction!(trace::read, m)?)?;
    m.add_function(wrap_pyfunction!(trace::table_names, m)?)?;
    m.add_function(wrap_pyfunction!(trace::options, m)?)?;
    m.add_function(wrap_pyfunction!(run::ranks, m)?)?;
    m.add_function(wrap_pyfunction!(compare::compare, m)?)?;
    Ok(())
}
