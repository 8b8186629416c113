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

/// The host-activity findings of `g`: one per range name (or stretch in nothing recorded, by the
/// ranges around it) whose idle is worth raising.
pub fn host_activities(a: &Analysis, g: &Group) -> Vec<Finding> {
    let (per, ms) = (g.per(), g.median_step());
    let b = a.budget();
    let mut keys: Vec<What> = Vec::new();
    for s in &g.steps {
        for r in s.rows.iter().filter(|r| r.part == Part::Host) {
            if matches!(r.what, What::Range(_) | What::Unrecorded { .. }) && !keys.contains(&r.what) {
                keys.push(r.what);
            }
        }
    }
    let wall_us = g.wall_us();
    let mut out = Vec::new();
    for key in keys {
        let ns_of = |s: &crate::analysis::budget::Step| {
            s.rows.iter().filter(|r| r.part == Part::Host && r.what == key).map(|r| r.ns).sum::<i64>()
        };
        let saving_us = g.median_of(ns_of);
        if !g.worth(saving_us, wall_us) {
            continue;
        }
        let i = g.median_pass(|i| ns_of(g.steps[i]));
        let step = g.steps[i];
        let Some(row) = step.rows.iter().find(|r| r.part == Part::Host && r.what == key) else { continue };
        let what = b.describe(a, row);
        let steps = g.steps.len();
        let present = g.steps.iter().filter(|s| ns_of(s) > 0).count();
        let share = 100.0 * saving_us / wall_us;
        let (subject, evidence, fix, check) = match key {
            What::Range(name) => {
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
                let evidence = format!(
                    "the host was in `{what}`{label} for {saving_us:.1} µs of GPU idle {per} ({share:.0}% of {ms}'s {wall_us:.1} µs; in {present} of {steps} steps); in {ms} that range lasted {range_us:.1} µs"
                );
                (a.trace.name(name).to_string(), evidence, fix, check)
            }
            _ => {
                let evidence = format!(
                    "the thread that launches the GPU's work was in {what} for {saving_us:.1} µs of GPU idle {per} ({share:.0}% of {ms}'s {wall_us:.1} µs; in {present} of {steps} steps; its longest stretch {:.1} µs), beyond its ordinary gap between ops of {:.1} µs: no launch waits there, so a replayed graph would not remove it",
                    (row.longest.1 - row.longest.0) as f64 / 1e3,
                    b.typical_gap_ns(a, row) as f64 / 1e3
                );
                (
                    what,
                    evidence,
                    unrecorded_fix(a, key),
                    "that stretch named in the step budget (a host row with a range's name), then its own finding".into(),
                )
            }
        };
        out.push(Finding {
            passes: steps,
            subject,
            evidence,
            saving_us,
            saving_pct: share,
            fix,
            check,
            from_ns: row.longest.0,
            to_ns: row.longest.1,
            ..g.finding(Kind::HostActivity)
        });
    }
    out
}

/// What to record so that a stretch in nothing recorded gets a name: the Python frames where the
/// trace has none, else a range of the user's own around the code between the two ranges.
fn unrecorded_fix(a: &Analysis, key: What) -> String {
    let name = |n: NameId| (n != crate::model::NO_NAME).then(|| a.trace.name(n).to_string());
    let between = match key {
        What::Unrecorded { before, after } => match (name(before), name(after)) {
            (Some(b), Some(f)) => format!("between `{b}` and `{f}`"),
            (None, Some(f)) => format!("before `{f}`"),
            (Some(b), None) => format!("after `{b}`"),
            (None, None) => "there".into(),
        },
        _ => "there".into(),
    };
    let wrap = format!("wrap the code that runs {between} in `with torch.profiler.record_function(\"…\"):`");
    if a.trace.meta.with_stack {
        format!("name what the host does {between}: {wrap}, then profile again; the budget names the range and its fix (a data copy, a Python loop, a blocking call)")
    } else {
        format!("name what the host does {between}: profile with with_stack=True (the Python frames), or {wrap}; the budget then names the range and its fix (a data copy, a Python loop, a blocking call)")
    }
}
