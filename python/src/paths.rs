//! Paths and options from Python arguments: a `str` or `os.PathLike`, or a list of them; the
//! options by the keywords the core declares them with.

use crate::errors::trace_error;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt};
use serde_json::{json, Value};
use std::path::PathBuf;
use traceprism::analysis::options::{Declaration, Declared};
use traceprism::Options;

/// One path, or every path of a list or tuple (`None`: none).
pub fn path_list(arg: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<PathBuf>> {
    let Some(arg) = arg else { return Ok(Vec::new()) };
    if let Ok(p) = arg.extract::<PathBuf>() {
        return Ok(vec![p]);
    }
    let mut out = Vec::new();
    for item in arg.try_iter()? {
        out.push(item?.extract::<PathBuf>()?);
    }
    Ok(out)
}

/// The keywords of a call (`**options`), each as a JSON value; a keyword given `None` keeps its
/// default and is left out.
pub fn keywords(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<(String, Value)>> {
    let mut out = Vec::new();
    for (k, v) in kwargs.into_iter().flat_map(|d| d.iter()) {
        if v.is_none() {
            continue;
        }
        out.push((k.extract::<String>()?, json_of(&v)?));
    }
    Ok(out)
}

/// A keyword's value as JSON: a bool, a whole number, a real number, text or a path.
fn json_of(v: &Bound<'_, PyAny>) -> PyResult<Value> {
    if let Ok(b) = v.cast::<PyBool>() {
        return Ok(json!(b.is_true()));
    }
    if v.cast::<PyInt>().is_ok() {
        return Ok(json!(v.extract::<i64>()?));
    }
    if v.cast::<PyFloat>().is_ok() {
        return Ok(json!(v.extract::<f64>()?));
    }
    if let Ok(s) = v.extract::<String>() {
        return Ok(json!(s));
    }
    if let Ok(p) = v.extract::<PathBuf>() {
        return Ok(json!(p.display().to_string()));
    }
    Err(PyTypeError::new_err(format!("option value {v} is not a bool, number, text or path")))
}

/// Sets on `o` each keyword it declares (the CLI's flag names in snake case), and hands back the
/// others ([`Declared::take_keywords`]).
pub fn set_declared<O: Declared>(o: &mut O, given: Vec<(String, Value)>) -> PyResult<Vec<(String, Value)>> {
    o.take_keywords(given).map_err(trace_error)
}

/// The keywords nothing declared: a `TypeError` naming the first and every keyword taken.
pub fn refuse_unknown(rest: &[(String, Value)], function: &str, declared: &[&[Declaration]]) -> PyResult<()> {
    let Some((name, _)) = rest.first() else { return Ok(()) };
    let known: Vec<String> =
        declared.iter().flat_map(|list| list.iter()).filter(|d| d.given_by_users()).map(Declaration::keyword).collect();
    Err(PyTypeError::new_err(format!("{function}() got an unexpected keyword argument '{name}' (options: {})", known.join(", "))))
}

/// Analysis options from a call: `rules` (a path, as `--rules`) and every keyword [`Options`]
/// declares; any other keyword is a `TypeError`.
pub fn options(function: &str, rules: Option<PathBuf>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Options> {
    let mut given = keywords(kwargs)?;
    if let Some(r) = rules {
        given.push(("rules".into(), json!(r.display().to_string())));
    }
    let mut o = Options::default();
    let rest = set_declared(&mut o, given)?;
    refuse_unknown(&rest, function, &[Options::DECLARED])?;
    Ok(o)
}
