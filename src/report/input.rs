//! `trace_input`: how the file was read — complete or cut short (and where), notes, and the
//! counts of events skipped or ignored. The first sheet of the workbook, so that a warning about
//! the input is never further than one click from any figure.

use crate::analysis::Analysis;
use crate::table::{Cell, Table};

/// One row per fact about the input: `status`, byte and event counts, the truncation message,
/// notes and warning counts.
pub fn trace_input(a: &Analysis) -> Table {
    let s = &a.trace.stats;
    let mut t = Table::new("trace_input", &["item", "value"]);
    // Facts of several kinds in one column: all text (the column is declared text).
    let mut row = |item: &str, value: Cell| t.push(vec![Cell::from(item), Cell::Text(value.text())]);
    let status = match (&s.truncation, s.notes.is_empty()) {
        (Some(_), _) => "truncated: analysed up to the last complete event",
        (None, true) => "complete",
        (None, false) => "complete (see notes)",
    };
    row("status", Cell::from(status));
    row("input_bytes", Cell::from(s.bytes_in));
    row("json_bytes", Cell::from(s.json_bytes));
    row("events_read", Cell::from(s.events));
    row("events_kept", Cell::from(s.kept));
    row("events_ignored", Cell::from(s.ignored));
    row("events_skipped", Cell::from(s.skipped));
    if let Some(cut) = &s.truncation {
        row("warning", Cell::from(cut.message()));
        row("text_bytes_read", Cell::from(cut.text_bytes_read));
        row("text_stops_at_byte", Cell::from(cut.text_stops_at));
        let incomplete: Vec<String> = a.phases.passes.iter().filter(|p| p.incomplete).map(|p| p.index.to_string()).collect();
        if !incomplete.is_empty() {
            row("incomplete_passes", Cell::from(incomplete.join(" ")));
        }
    }
    for note in &s.notes {
        row("note", Cell::from(note.as_str()));
    }
    for (kind, n) in &a.trace.warnings.counts {
        row(&format!("warning: {kind}"), Cell::from(*n));
    }
    t
}
