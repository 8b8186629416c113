//! `step_budget`: every step's wall time split into rows that add up to it to the nanosecond
//! ([`crate::analysis::budget`]): GPU busy by family, exposed communication and copies, and the
//! GPU's idle by what held it.

use super::percent;
use crate::analysis::budget::{Activity, Part, Row, Step};
use crate::analysis::Analysis;
use crate::table::{Cell, Table};

/// Host rows kept by name in one step; the rest, each under `SMALL_SHARE` of the step, are
/// summed into one `other host activity` row.
const HOST_ROWS: usize = 8;
/// Share of a step (%) under which a host row beyond the first [`HOST_ROWS`] is summed with the others.
const SMALL_SHARE: f64 = 1.0;

/// The columns: `device`, `pass` (empty for a device's capture window), `phase` (`capture`
/// there), `part`, `what`, the `activity` of its longest stretch (the op or annotation: for a
/// launch row the op being issued, for a queued row the op whose kernel waited) and its `site`
/// (the user's `file.py(line)`, where stacks were recorded), `us` (the row's time), `ns` (the same, exact: a step's rows sum to
/// its `step_ns`), `share_pct`, `intervals`, `step_ns`, and the row's longest stretch
/// (`from_us`, `to_us`, trace clock) for the timeline.
pub const COLUMNS: &[&str] = &[
    "device:int",
    "pass:int",
    "phase",
    "part",
    "what",
    "activity",
    "site",
    "us:us",
    "ns:int",
    "share_pct:float",
    "intervals:int",
    "step_ns:int",
    "from_us:us",
    "to_us:us",
];

/// One row per (step, part, what).
pub fn step_budget(a: &Analysis) -> Table {
    let b = a.budget();
    let mut t = Table::new("step_budget", COLUMNS);
    for step in &b.steps {
        let (pass, phase) = match step.pass {
            Some(p) => (Cell::from(a.phases.passes[p].index), a.phases.passes[p].phase.as_str()),
            None => (Cell::Empty, "capture"),
        };
        for (row, what, activity) in shown_rows(a, step) {
            t.push(vec![
                Cell::Int(step.device as i64),
                pass.clone(),
                Cell::from(phase),
                Cell::from(row.part.as_str()),
                Cell::from(what),
                Cell::from(activity.name),
                activity.site.map_or(Cell::Empty, Cell::from),
                Cell::Micros(row.ns),
                Cell::Int(row.ns),
                Cell::Float((percent(row.ns, step.wall_ns()) * 100.0).round() / 100.0),
                Cell::from(row.intervals as usize),
                Cell::Int(step.wall_ns()),
                Cell::Micros(row.longest.0),
                Cell::Micros(row.longest.1),
            ]);
        }
    }
    t
}

/// A step's rows as shown, each with its `what` in words and its activity: the small host rows
/// beyond the first `HOST_ROWS` (8) summed into one (of no one activity).
fn shown_rows(a: &Analysis, step: &Step) -> Vec<(Row, String, Activity)> {
    let b = a.budget();
    let wall = step.wall_ns();
    let mut out: Vec<(Row, String, Activity)> = Vec::new();
    let mut other: Option<(Row, usize)> = None;
    let mut hosts = 0;
    for r in &step.rows {
        if r.part == Part::Host {
            hosts += 1;
            if hosts > HOST_ROWS && percent(r.ns, wall) < SMALL_SHARE {
                let o = other.get_or_insert_with(|| (Row { ns: 0, intervals: 0, ..r.clone() }, 0));
                o.0.ns += r.ns;
                o.0.intervals += r.intervals;
                if r.longest.1 - r.longest.0 > o.0.longest.1 - o.0.longest.0 {
                    o.0.longest = r.longest;
                }
                o.1 += 1;
                continue;
            }
        }
        out.push((r.clone(), b.describe(a, r), b.activity(a, r)));
    }
    if let Some((row, n)) = other {
        let at = out.iter().rposition(|(r, _, _)| r.part <= Part::Host).map_or(out.len(), |i| i + 1);
        let what = format!("other host activity ({n} ranges, each under {SMALL_SHARE}% of the step)");
        out.insert(at, (row, what, Activity::default()));
    }
    out
}
