//! `traceprism report TRACE --html FILE`: one self-contained HTML report.

use super::args::Args;
use traceprism::{Error, Result};

/// Writes the HTML report of the trace to `--html FILE`.
pub fn run(a: &Args) -> Result<()> {
    let path = a.one_trace()?;
    let file = a.html.as_deref().ok_or_else(|| Error::new("report needs --html FILE"))?;
    let analysis = super::load(path, a)?;
    let html = traceprism::report::html_report(analysis);
    std::fs::write(file, &html).map_err(|e| Error::new(format!("cannot write {file}: {e}")))?;
    if a.verbose {
        eprintln!("wrote {file} ({} bytes)", html.len());
    }
    Ok(())
}
