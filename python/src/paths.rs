//! Paths and options from Python arguments: a `str` or `os.PathLike`, or a list of them.

use pyo3::prelude::*;
use std::path::PathBuf;

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

/// Analysis options: the core's defaults, with the user's rules file read in (as `--rules`).
pub fn options(rules: Option<PathBuf>, strict: bool) -> PyResult<traceprism::Options> {
    let mut o = traceprism::Options { strict, ..traceprism::Options::default() };
    if let Some(file) = rules {
        let text = std::fs::read_to_string(&file)
            .map_err(|e| crate::errors::TraceError::new_err(format!("cannot read rules file {}: {e}", file.display())))?;
        o.category_rules = Some(text);
    }
    Ok(o)
}
