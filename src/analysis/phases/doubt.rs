//! When to doubt a pass's phase: the evidence is thin (little weight behind the winner) or
//! conflicting (much weight behind another phase). A doubted pass says why in words (the `doubt`
//! column of `passes`); a firm one says nothing. The thresholds are `[doubt]` of
//! `phase_signals.toml`.

use super::evidence::{Basis, Vote};
use super::rules::PhaseRules;
use super::Phase;

/// Why `phase` may be wrong given `votes`, or `None` when the evidence is firm.
///
/// - No vote at all: the phase is a guess.
/// - Thin: the weighted support of the chosen phase (Σ weight × strength) is below `min_support`
///   (one weak method alone: run frequency, a GEMM tile, a graph replay).
/// - Conflicting: the weighted support of another phase is at least `conflict_ratio` of the
///   chosen one's.
/// - Names only: every vote for the chosen phase rests on names (kernel-name words, tiles,
///   attention kernel kinds, a graph replay) and some vote says otherwise.
pub fn doubt(phase: Phase, votes: &[Vote], rules: &PhaseRules) -> Option<String> {
    if !matches!(phase, Phase::Prefill | Phase::Decode | Phase::Mixed | Phase::Unknown) {
        return None;
    }
    if votes.is_empty() {
        return Some("no phase evidence at all".into());
    }
    let d = &rules.doubt;
    let weight = |v: &Vote| v.method.weight(rules) * v.strength;
    let support: f64 = votes.iter().filter(|v| v.backs(phase)).map(weight).sum();
    let mut against: Vec<(Phase, f64, Vec<&Vote>)> = Vec::new();
    for v in votes.iter().filter(|v| !v.backs(phase)) {
        match against.iter_mut().find(|a| a.0 == v.phase) {
            Some(a) => {
                a.1 += weight(v);
                a.2.push(v);
            }
            None => against.push((v.phase, weight(v), vec![v])),
        }
    }
    against.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut why = Vec::new();
    if let Some((other, w, vs)) = against.first() {
        if *w >= d.conflict_ratio * support {
            let methods: Vec<String> = vs.iter().map(|v| format!("{} ({})", v.method.as_str(), v.why)).collect();
            why.push(format!("conflicting: {} says {} ({w:.2} against {support:.2})", methods.join(", "), other.as_str()));
        }
    }
    let names_only = votes.iter().filter(|v| v.backs(phase)).all(|v| v.basis == Basis::Names);
    if names_only && why.is_empty() {
        if let Some(v) = votes.iter().find(|v| !v.backs(phase)) {
            why.push(format!(
                "{} rests on kernel names only, and {} says {} ({})",
                phase.as_str(),
                v.method.as_str(),
                v.phase.as_str(),
                v.why
            ));
        }
    }
    if support < d.min_support {
        let methods: Vec<&str> = votes.iter().filter(|v| v.backs(phase)).map(|v| v.method.as_str()).collect();
        let by = if methods.is_empty() { "nothing".to_string() } else { methods.join(", ") };
        why.push(format!("thin: {} backed by {by} only (weight {support:.2} < {})", phase.as_str(), d.min_support));
    }
    (!why.is_empty()).then(|| why.join("; "))
}

/// Adds "may be mixed" to the doubt of an unannotated prefill of a serving engine that batches
/// requests continuously (its names show it): such a step may hold decode requests beside the
/// prefill chunk, and only the engine's step annotation (which states the mix) tells them apart.
pub fn may_be_mixed(
    doubt: Option<String>,
    phase: Phase,
    annotated: bool,
    names: &crate::analysis::steps::generation::NameEvidence,
) -> Option<String> {
    let Some(engine) = names.batching_engine.as_ref().filter(|_| phase == Phase::Prefill && !annotated) else { return doubt };
    let why = format!(
        "may be mixed: a continuously batching engine ({engine}) can run decode requests beside a prefill chunk, and without its step annotation the trace does not say"
    );
    Some(match doubt {
        Some(d) => format!("{d}; {why}"),
        None => why,
    })
}

#[cfg(test)]
mod tests {
    use super::super::evidence::Method;
    use super::*;

    fn v(method: Method, phase: Phase, strength: f64) -> Vote {
        Vote { method, phase, strength, why: "x".into(), basis: Basis::Measured, amount: false }
    }

    #[test]
    fn firm_thin_and_conflicting() {
        let r = PhaseRules::builtin();
        let firm = [v(Method::AttentionPatterns, Phase::Decode, 1.0), v(Method::OperationFrequency, Phase::Prefill, 0.5)];
        assert_eq!(doubt(Phase::Decode, &firm, r), None);
        let thin = [v(Method::OperationFrequency, Phase::Decode, 0.5)];
        assert!(doubt(Phase::Decode, &thin, r).unwrap().starts_with("thin: decode backed by operation_frequency only"));
        let conflict = [v(Method::AttentionPatterns, Phase::Decode, 0.8), v(Method::OperationFrequency, Phase::Prefill, 0.9)];
        assert!(doubt(Phase::Decode, &conflict, r).unwrap().starts_with("conflicting: operation_frequency (x) says prefill"));
        assert_eq!(doubt(Phase::Unknown, &[], r).as_deref(), Some("no phase evidence at all"));
        assert_eq!(doubt(Phase::Denoise, &[], r), None);
    }
}
