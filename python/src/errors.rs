//! The errors and warnings Python sees: the CLI's messages, as `TraceError` and `TraceWarning`.

use pyo3::exceptions::{PyException, PyUserWarning};
use pyo3::prelude::*;
use std::ffi::CString;

pyo3::create_exception!(
    traceprism,
    TraceError,
    PyException,
    "A trace (or a rules or capture file) could not be read; the message says what and where (byte offset, event index), as the CLI does."
);
pyo3::create_exception!(
    traceprism,
    TraceWarning,
    PyUserWarning,
    "A trace was read with a caveat: cut short (its complete events analysed), or a rank left out of a run."
);

/// A core error as a `TraceError` with the core's message.
pub fn trace_error(e: traceprism::Error) -> PyErr {
    TraceError::new_err(e.to_string())
}

/// Issues `message` through Python's `warnings` as a `TraceWarning`, pointing at the caller's line.
pub fn warn(py: Python<'_>, message: &str) -> PyResult<()> {
    let text = CString::new(message.replace('\0', " ")).expect("no NUL left");
    PyErr::warn(py, &py.get_type::<TraceWarning>(), &text, 2)
}

/// `json.loads(text)`: a core JSON document as Python dicts and lists.
pub fn from_json(py: Python<'_>, value: &impl serde::Serialize) -> PyResult<Py<PyAny>> {
    let text = serde_json::to_string(value).map_err(|e| TraceError::new_err(e.to_string()))?;
    Ok(py.import("json")?.call_method1("loads", (text,))?.unbind())
}

/// A `KeyError` for a table name that is not one of `known`.
pub fn unknown_table(name: &str, known: &[String]) -> pyo3::PyErr {
    pyo3::exceptions::PyKeyError::new_err(format!("no table named '{name}' (tables: {})", known.join(", ")))
}
