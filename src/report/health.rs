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
            Cell::from(c.check),
            Cell::from(c.status.as_str()),
            Cell::from(c.count),
            Cell::from(c.found.as_str()),
            Cell::from(c.limits.as_str()),
            Cell::from(c.fix.as_str()),
        ]);
    }
    t
}

/// `doctor --json`: the trace's path, its health checks and its warnings.
pub fn doctor_json(path: &str, s: &crate::report::summary::Summary) -> serde_json::Value {
    serde_json::json!({ "trace": path, "health": s.health, "warnings": s.warnings })
}
