//! A finding checked against its fix: given the trace a finding came from (before) and a trace
//! of the same workload after a change (after), what the change actually saved where the finding
//! said, and whether the finding is gone.
//!
//! The measured saving is the change of the median step of the finding's phase: its window in
//! the step budget (first kernel's start to the next step's first kernel). A finding is gone when what it measures in the after trace falls below
//! [`MIN_SAVING_SHARE`] of the step. Findings of one phase add up (they split the idle by cause,
//! or are busy time), so the gone findings of a phase are judged together: their predictions
//! hold when the step's measured change lies within ±20% of their sum.

use super::{findings_and_groups, Finding, Group, Kind, MIN_SAVING_SHARE};
use crate::analysis::phases::Phase;
use crate::analysis::Analysis;

/// How far a measured saving may lie from the predicted one for the prediction to hold.
pub const TOLERANCE: f64 = 0.20;

/// One finding of the before trace, seen in the after trace.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Outcome {
    /// The finding's kind.
    pub kind: Kind,
    /// The finding's scope in the before trace, in words.
    pub scope: String,
    /// The finding's phase ([`Finding::phase`]): with its device, what its peers are judged with.
    pub phase: Option<Phase>,
    /// The finding's device ([`Finding::device`]).
    pub device: Option<i32>,
    /// Its predicted saving per step (µs).
    pub predicted_us: f64,
    /// The median step of its phase before and after (µs); `None` after when the after trace has
    /// no step of that phase.
    pub before_step_us: f64,
    /// The median step of its phase after (µs); `None` when the after trace has none.
    pub after_step_us: Option<f64>,
    /// `before_step_us − after_step_us`.
    pub measured_us: Option<f64>,
    /// What the same kind would still save in the after trace, however small.
    pub remaining_us: Option<f64>,
    /// Below the raising threshold in the after trace.
    pub gone: bool,
    /// `held`, `gone, but saved …`, `still there`, `not comparable: …`, in words.
    pub verdict: String,
}

/// The group of `after` that matches `before`: the same phase, the same device when it has one.
fn matching<'a, 'b>(after: &'a [Group<'b>], before: &Group) -> Option<&'a Group<'b>> {
    let same = after.iter().filter(|g| g.phase == before.phase);
    same.clone().find(|g| g.device == before.device).or_else(|| same.into_iter().next())
}

/// Every finding of `before`, checked against `after`.
pub fn outcomes(before: &Analysis, after: &Analysis) -> Vec<Outcome> {
    let (found_before, groups_before) = findings_and_groups(before, MIN_SAVING_SHARE);
    let (found_after, groups_after) = findings_and_groups(after, 0.0);
    let mut out: Vec<Outcome> = found_before
        .iter()
        .filter(|f| f.saving_us > 0.0)
        .filter_map(|f| outcome(f, &groups_before, &groups_after, &found_after))
        .collect();
    judge(&mut out);
    out
}

/// Writes each outcome's verdict, judging the gone findings of a phase together.
fn judge(out: &mut [Outcome]) {
    for i in 0..out.len() {
        let o = &out[i];
        let Some(measured) = o.measured_us else { continue };
        let verdict = if !o.gone {
            format!("still there: {:.1} µs a step left to save", o.remaining_us.unwrap_or(0.0))
        } else {
            // The phase's gone findings whose step is measured the same way, this one included.
            let peers: Vec<&Outcome> = out
                .iter()
                .filter(|x| {
                    x.gone
                        && (x.phase, x.device) == (o.phase, o.device)
                        && (x.kind == Kind::StepGaps) == (o.kind == Kind::StepGaps)
                })
                .collect();
            let predicted: f64 = peers.iter().map(|x| x.predicted_us).sum();
            let off = measured / predicted - 1.0;
            let with = if peers.len() > 1 {
                format!(
                    " (with {}: {predicted:.1} µs predicted together)",
                    peers.iter().filter(|x| x.kind != o.kind).map(|x| x.kind.as_str()).collect::<Vec<_>>().join(", ")
                )
            } else {
                String::new()
            };
            if off.abs() <= TOLERANCE {
                format!("held: gone, and the step {measured:.1} µs shorter, {:+.0}% of the prediction{with}", 100.0 * off)
            } else {
                format!("gone, but the step changed by {measured:.1} µs, {:+.0}% off the prediction{with}: the change did more than remove this, or it moved the time elsewhere", 100.0 * off)
            }
        };
        out[i].verdict = verdict;
    }
}

fn outcome(f: &Finding, before: &[Group], after: &[Group], found_after: &[Finding]) -> Option<Outcome> {
    let gb = before.iter().find(|g| g.holds(f))?;
    let before_step_us = gb.wall_us();
    let mut o = Outcome {
        kind: f.kind,
        scope: f.scope.clone(),
        phase: f.phase,
        device: f.device,
        predicted_us: f.saving_us,
        before_step_us,
        after_step_us: None,
        measured_us: None,
        remaining_us: None,
        gone: false,
        verdict: String::new(),
    };
    let Some(ga) = matching(after, gb) else {
        o.verdict = format!("not comparable: the second trace has no {} step", gb.phase.as_str());
        return Some(o);
    };
    let after_step = ga.wall_us();
    let remaining =
        found_after.iter().find(|x| x.kind == f.kind && ga.holds(x) && x.subject == f.subject).map_or(0.0, |x| x.saving_us);
    o.after_step_us = Some(after_step);
    o.measured_us = Some(before_step_us - after_step);
    o.remaining_us = Some(remaining);
    o.gone = remaining < MIN_SAVING_SHARE * after_step;
    Some(o)
}
