//! `traceprism doctor`: the trace's health report — what the profiler recorded, what that limits,
//! and the exact switch that records the rest. Exits 0 whatever it finds; a file that cannot be
//! read at all is an error (exit 1) with the reader's message.

use super::args::Args;
use std::fmt::Write;
use traceprism::analysis::health::{Check, Status};
use traceprism::{Error, Result};

/// Runs `doctor`.
pub fn run(a: &Args) -> Result<()> {
    let path = a.one_trace()?;
    let analysis = super::load(path, a)?;
    if a.json {
        let v = traceprism::report::health::doctor_json(path, analysis);
        let text = serde_json::to_string_pretty(&v).map_err(|e| Error::new(e.to_string()))?;
        super::out(&format!("{text}\n"));
        return Ok(());
    }
    super::out(&render(path, &traceprism::report::health::checks_and_warnings(analysis).0));
    Ok(())
}

/// The terminal rendering: a line per check, its limits and fix indented below it.
pub fn render(path: &str, checks: &[Check]) -> String {
    let mut o = String::new();
    let tally = |st: Status| checks.iter().filter(|c| c.status == st).count();
    let _ = writeln!(o, "trace    {path}");
    let _ = writeln!(
        o,
        "health   {} checks: {} present, {} partial, {} missing, {} ok, {} warning",
        checks.len(),
        tally(Status::Present),
        tally(Status::Partial),
        tally(Status::Missing),
        tally(Status::Ok),
        tally(Status::Warning)
    );
    let width = checks.iter().map(|c| c.check.as_str().len()).max().unwrap_or(0);
    for c in checks {
        let mark = if c.status == Status::Warning { "WARNING " } else { "" };
        let _ = writeln!(o, "\n{:<8} {:<width$}  {mark}{}", c.status.as_str(), c.check, c.found);
        if !c.limits.is_empty() {
            let _ = writeln!(o, "{:<8} {:<width$}  limits: {}", "", "", c.limits);
        }
        if !c.fix.is_empty() {
            let _ = writeln!(o, "{:<8} {:<width$}  fix:    {}", "", "", c.fix);
        }
    }
    o
}
