//! `host_activity`: the GPU idles while the thread that launches its work is in a range that
//! issues none (a data loader, the engine's scheduler, a tokenizer, a Python frame): the step
//! budget's **host** rows ([`crate::analysis::budget`]), one finding per range name above the
//! raise line. The fix comes from the table of host activities (`rules/host_activities.toml`);
//! a range the table does not know is still named, with a generic fix. Saving: that idle.

use super::{Engine, Finding, Group, Kind};
use crate::analysis::budget::{Part, What};
use crate::analysis::Analysis;
use crate::model::{NameId, OpKind};

/// The table of host activities, as written.
pub const HOST_ACTIVITIES_TOML: &str = include_str!("../../rules/host_activities.toml");

/// One recognised host activity and its fix.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Activity {
    /// What it is, in words.
    pub name: String,
    /// Pieces of a range's name that identify it (any, case-insensitive).
    pub contains: Vec<String>,
    /// The fix.
    pub fix: String,
    /// What a re-profile should show.
    pub check: String,
    /// The fix in vLLM's terms, when it differs.
    #[serde(default)]
    pub vllm: Option<String>,
    /// The fix in SGLang's terms, when it differs.
    #[serde(default)]
    pub sglang: Option<String>,
}

/// The fix for an activity the table does not know.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Generic {
    /// The fix.
    pub fix: String,
    /// What a re-profile should show.
    pub check: String,
}

/// The whole table.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Activities {
    /// Recognised activities, first match wins.
    pub activity: Vec<Activity>,
    /// The fix for the others.
    pub generic: Generic,
}

/// The built-in table, parsed once.
pub fn activities() -> &'static Activities {
    static TABLE: std::sync::OnceLock<Activities> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| toml::from_str(HOST_ACTIVITIES_TOML).expect("host_activities.toml parses"))
}

/// The recognised activity a range's name (or its Python frame) is, if any.
pub fn recognise(text: &str) -> Option<&'static Activity> {
    let lower = text.to_lowercase();
    activities().activity.iter().find(|a| a.contains.iter().any(|c| lower.contains(&c.to_lowercase())))
}

/// The recognised activity of the first range held by range `op` (on its thread, ops and
/// annotations in time order, then Python frames) whose name the table knows, with that name: a line of the training loop
/// (`train.py(42): <module>`, a frame read from a `Call stack`) holds the data loader's
/// `enumerate(DataLoader)#…__next__`. `None` when no range inside is known.
fn recognise_inside(a: &Analysis, op: usize) -> Option<(&'static Activity, String)> {
    let ops = &a.trace.ops;
    let (thread, start, end) = (ops.thread[op], ops.ts[op], ops.end(op));
    let mut inside: Vec<usize> =
        (0..ops.len()).filter(|&o| o != op && ops.thread[o] == thread && ops.ts[o] >= start && ops.end(o) <= end).collect();
    // Ops and annotations before frames: `enumerate(DataLoader)#_MultiProcessingDataLoaderIter…`
    // tells which loader, the frame `dataloader.py(…): __next__` only that there is one.
    inside.sort_by_key(|&o| (ops.kind[o] == OpKind::PythonFunction, ops.ts[o], ops.dur[o].saturating_neg()));
    inside.into_iter().find_map(|o| {
        let name = a.trace.name(ops.name[o]);
        recognise(name).map(|k| (k, name.to_string()))
    })
}

/// The host-activity findings of `g`: one per range name whose idle is worth raising.
pub fn host_activities(a: &Analysis, g: &Group) -> Vec<Finding> {
    let b = a.budget();
    let mut names: Vec<NameId> = Vec::new();
    for s in &g.steps {
        for r in s.rows.iter().filter(|r| r.part == Part::Host) {
            if let What::Range(n) = r.what {
                if !names.contains(&n) {
                    names.push(n);
                }
            }
        }
    }
    let wall_us = g.wall_us();
    let mut out = Vec::new();
    for name in names {
        let ns_of = |s: &crate::analysis::budget::Step| {
            s.rows.iter().filter(|r| r.part == Part::Host && r.what == What::Range(name)).map(|r| r.ns).sum::<i64>()
        };
        let saving_us = g.median_of(ns_of);
        if !g.worth(saving_us, wall_us) {
            continue;
        }
        let i = g.median_pass(|i| ns_of(g.steps[i]));
        let step = g.steps[i];
        let Some(row) = step.rows.iter().find(|r| r.part == Part::Host && r.what == What::Range(name)) else { continue };
        let what = b.describe(a, row);
        let op = row.example as usize;
        let range_us = a.trace.ops.dur[op] as f64 / 1e3;
        let (known, inner) = match recognise(&what) {
            Some(k) => (Some(k), None),
            None => recognise_inside(a, op).map_or((None, None), |(k, inner)| (Some(k), Some(inner))),
        };
        let what = match inner {
            Some(inner) => format!("{what}`, in `{inner}"),
            None => what,
        };
        let (fix, check, label) = match known {
            Some(k) => {
                let fix = match g.engine {
                    Engine::Vllm => k.vllm.as_ref().unwrap_or(&k.fix),
                    Engine::Sglang => k.sglang.as_ref().unwrap_or(&k.fix),
                    _ => &k.fix,
                };
                (fix.clone(), k.check.clone(), format!(" ({})", k.name))
            }
            None => (activities().generic.fix.clone(), activities().generic.check.clone(), String::new()),
        };
        let steps = g.steps.len();
        let present = g.steps.iter().filter(|s| ns_of(s) > 0).count();
        out.push(Finding {
            kind: Kind::HostActivity,
            scope: g.scope.clone(),
            phase: g.finding_phase(),
            device: Some(g.device),
            passes: steps,
            subject: a.trace.name(name).to_string(),
            evidence: format!(
                "the host was in `{what}`{label} for {saving_us:.1} µs of GPU idle a step ({:.0}% of the median step's {wall_us:.1} µs; in {present} of {steps} steps); in the median step that range lasted {range_us:.1} µs",
                100.0 * saving_us / wall_us
            ),
            saving_us,
            saving_pct: 100.0 * saving_us / wall_us,
            confidence: g.confidence(),
            fix,
            check,
            from_ns: row.longest.0,
            to_ns: row.longest.1,
        });
    }
    out
}
