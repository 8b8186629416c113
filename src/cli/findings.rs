//! `traceprism findings`: what to fix first and what it would save, largest saving first
//! ([`traceprism::analysis::findings`]); `--json` for one JSON object (`trace`, `findings`).

use super::args::Args;
use std::fmt::Write;
use traceprism::analysis::findings::{findings, Finding};
use traceprism::{Error, Result};

/// Runs `findings`.
pub fn run(a: &Args) -> Result<()> {
    let path = a.one_trace()?;
    let analysis = super::load(path, a)?;
    let found = findings(analysis);
    if a.json {
        let v = traceprism::report::findings::findings_json(path, &found);
        let text = serde_json::to_string_pretty(&v).map_err(|e| Error::new(e.to_string()))?;
        super::out(&format!("{text}\n"));
        return Ok(());
    }
    super::out(&render(path, &found));
    Ok(())
}

/// The terminal rendering: a line per finding, its evidence, fix and check indented below it.
pub fn render(path: &str, found: &[Finding]) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "trace    {path}");
    if found.is_empty() {
        let _ = writeln!(o, "findings none: no lost time this trace's records can put a cause and a saving on");
        return o;
    }
    o.push_str(&render_list(found));
    o
}

/// The findings as a numbered list, each with its evidence, fix and check below it (each item
/// starts with a blank line).
pub fn render_list(found: &[Finding]) -> String {
    let mut o = String::new();
    for (k, f) in found.iter().enumerate() {
        let saves = if f.saving_us > 0.0 {
            format!("saves {:.1} µs {} ({:.1}% of its wall time)", f.saving_us, f.per(), f.saving_pct)
        } else {
            "no idle to win back".to_string()
        };
        let _ = writeln!(o, "\n{}. {} ({}): {saves}; confidence {}", k + 1, f.kind, f.scope, f.confidence);
        let _ = writeln!(o, "   evidence: {}", f.evidence);
        let _ = writeln!(o, "   fix:      {}", f.fix);
        let _ = writeln!(o, "   check:    {}", f.check);
    }
    o
}
