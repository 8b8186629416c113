//! `findings`: what to fix first and what it would save, one row per finding, largest saving
//! first ([`crate::analysis::findings`]).

use crate::analysis::findings::{findings as found, Finding};
use crate::analysis::Analysis;
use crate::table::{Cell, Table};

/// One row per finding: `kind`, `scope`, `passes`, `saving_us` (per step), `saving_pct` (of the
/// step's wall time), `confidence`, `evidence`, `fix`, `check`, and the evidence's window
/// (`from_us`, `to_us`, in the trace's clock as `passes.start_us`), and what the saving is per
/// (`per`: `a step`, or `in the capture window` where the trace holds no whole step).
pub fn findings(a: &Analysis) -> Table {
    table_of("findings", found(a))
}

/// `findings --json` and the MCP tool's answer: the trace's path and its findings.
pub fn findings_json(path: &str, found: &[Finding]) -> serde_json::Value {
    serde_json::json!({ "trace": path, "findings": found })
}

/// A findings table named `name` (`findings`, or `run_findings` for a run's ranks).
pub fn table_of(name: &str, found: Vec<Finding>) -> Table {
    let mut t = Table::new(
        name,
        &[
            "kind",
            "scope",
            "passes:int",
            "saving_us:us",
            "saving_pct:float",
            "confidence",
            "evidence",
            "fix",
            "check",
            "from_us:us",
            "to_us:us",
            "per",
        ],
    );
    for f in found {
        let per = f.per();
        t.push(vec![
            Cell::from(f.kind.as_str()),
            Cell::from(f.scope),
            Cell::from(f.passes),
            Cell::Micros((f.saving_us * 1e3).round() as i64),
            Cell::Float((f.saving_pct * 100.0).round() / 100.0),
            Cell::from(f.confidence),
            Cell::from(f.evidence),
            Cell::from(f.fix),
            Cell::from(f.check),
            Cell::Micros(f.from_ns),
            Cell::Micros(f.to_ns),
            Cell::from(per),
        ]);
    }
    t
}
