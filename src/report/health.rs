//! `health`: the trace's health report as a table, one row per check
//! ([`crate::analysis::health`]): what the profiler recorded, what that limits, and the fix.

use crate::analysis::health::health as checks;
use crate::analysis::Analysis;
use crate::table::{Cell, Table};

/// One row per check: `check`, `status`, `count`, `found`, `limits`, `fix`.
pub fn health(a: &Analysis) -> Table {
    let mut t = Table::new("health", &["check", "status", "count:int", "found", "limits", "fix"]);
    for c in checks(a) {
        t.push(vec![
            Cell::from(c.check.as_str()),
            Cell::from(c.status.as_str()),
            Cell::from(c.count),
            Cell::from(c.found.as_str()),
            Cell::from(c.limits.as_str()),
            Cell::from(c.fix.as_str()),
        ]);
    }
    t
}

/// The trace's health checks and its warnings: what was skipped or repaired while reading, with
/// what the checks found wrong (the summary's `health` and `warnings`).
pub fn checks_and_warnings(a: &Analysis) -> (Vec<crate::analysis::health::Check>, crate::model::Warnings) {
    let (health, found) = crate::analysis::health::report(a);
    let mut warnings = a.trace.warnings.clone();
    warnings.absorb(found, 0);
    (health, warnings)
}

/// `doctor --json`: the trace's path, its health checks and its warnings (read from the health
/// report directly, not from a whole summary).
pub fn doctor_json(path: &str, a: &Analysis) -> serde_json::Value {
    let (health, warnings) = checks_and_warnings(a);
    serde_json::json!({ "trace": path, "health": health, "warnings": warnings })
}
