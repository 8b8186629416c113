//! Why the straggler is late (issue 32), by construction: `synth-ranks` makes 4-rank runs from two
//! real single-rank traces of different vendors (vLLM TP4 on H100 and on MI300X) and puts delays on
//! one rank, either on its device (the kernel before a collective runs longer) or on its host (every
//! later event of the rank shifts, its GPU idles meanwhile). The `lateness` rows must name the
//! straggler at each delayed collective with the side that was injected and `late_us` within 5% of
//! the delay, busy and idle excess adding up to it; other ranks are never late; and a clock offset
//! added to one rank changes nothing.

use crate::common;

use common::*;
use traceprism::analysis::ranks::{LateSide, Lateness, Run};
use traceprism::synth::ranks::{make_run, LateKind, RunSpec};

const SOURCES: [&str; 2] =
    ["vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz", "vllm_tp4_mi300x_1000isl_10osl_32con.pt.trace.json.gz"];

const DELAY_US: f64 = 300.0;

fn run_of(texts: &[Vec<u8>]) -> Run {
    run_of_texts(texts).expect("the run analyses")
}

fn made(source: &str, kind: LateKind) -> (Vec<Vec<u8>>, usize) {
    let spec = RunSpec { ranks: 4, straggler: 2, every: 30, delay_us: DELAY_US, kind, ..RunSpec::default() };
    let run = make_run(&plain_fixture(source), &spec).expect("the generator runs");
    assert!(run.truth.delays.len() >= 5, "{source}: {} delays", run.truth.delays.len());
    (run.traces, run.truth.delays.len())
}

fn check(source: &str, kind: LateKind, rows: &[Lateness], delays: usize, run: &Run) {
    let want = if kind == LateKind::Host { LateSide::Host } else { LateSide::Device };
    assert_eq!(rows.len(), delays, "{source} {kind:?}: one late row per delay: {rows:#?}");
    for l in rows {
        assert_eq!(run.ranks[l.rank].rank, 2, "{source} {kind:?}: only the straggler is late");
        let late_us = l.late_ns as f64 / 1e3;
        assert!((late_us - DELAY_US).abs() <= 0.05 * DELAY_US, "{source} {kind:?}: late {late_us} µs for a {DELAY_US} µs delay");
        assert_eq!(l.side, want, "{source} {kind:?} at collective {}: {l:?}", l.collective);
        // The ranks left the previous collective together: the excesses add up to the lateness.
        let sum = l.busy_excess_ns + l.idle_excess_ns;
        assert!((sum - l.late_ns).abs() <= l.late_ns / 100, "{source} {kind:?}: {sum} vs {}", l.late_ns);
        assert_eq!(sum + l.remainder_ns, l.late_ns, "the remainder is what the excesses leave");
        if kind == LateKind::Host {
            let (op, covers) = l.host_op.as_ref().expect("a host op during the idle gap");
            assert!(!op.is_empty() && *covers as f64 >= 0.9 * DELAY_US * 1e3, "{op}: {covers} ns");
            assert!(!op.starts_with("ProfilerStep#") && !op.starts_with("execute_"), "a step marker tells nothing: {op}");
        }
    }
}

#[test]
fn injected_host_and_device_lateness_is_recovered_on_two_vendors() {
    for source in SOURCES {
        for kind in [LateKind::Device, LateKind::Host] {
            let (texts, delays) = made(source, kind);
            let run = run_of(&texts);
            let rows = run.lateness();
            eprintln!("{source} {kind:?}: {} late rows; finding: {}", rows.len(), run.finding().unwrap_or_default());
            check(source, kind, rows, delays, &run);
            let finding = run.finding().expect("a finding");
            let words = if kind == LateKind::Host { "waiting for its host" } else { "running more GPU work" };
            assert!(finding.starts_with("rank 2 arrives last") && finding.contains(words), "{finding}");
            // The category comparison is for GPU work: none for a host that was late.
            let excess = &run.excess()[0];
            assert_eq!(excess.by_category.is_empty(), kind == LateKind::Host, "{:?}", excess.by_category);
            // The lateness table says the same.
            let t = traceprism::report::ranks::lateness(&run);
            assert_eq!(
                &t.columns[..12],
                [
                    "collective",
                    "rank",
                    "phase",
                    "pass",
                    "layer",
                    "late_us",
                    "gpu_busy_excess_us",
                    "gpu_idle_excess_us",
                    "remainder_us",
                    "side",
                    "host_op",
                    "host_op_us"
                ]
            );
            assert_eq!(t.rows.len(), delays);
        }
    }
}

/// `text` with every `ts` moved by `shift_us` (a rank whose clock is off by that much).
fn shifted(text: &[u8], shift_us: f64) -> Vec<u8> {
    let mut doc: serde_json::Value = serde_json::from_slice(text).unwrap();
    for e in doc["traceEvents"].as_array_mut().unwrap() {
        if let Some(ts) = e.get("ts").and_then(|v| v.as_f64()) {
            e["ts"] = serde_json::json!(((ts + shift_us) * 1000.0).round() / 1000.0);
        }
    }
    serde_json::to_vec(&doc).unwrap()
}

#[test]
fn a_clock_offset_changes_no_wait_and_no_lateness() {
    let (mut texts, _) = made(SOURCES[0], LateKind::Host);
    let before = run_of(&texts);
    texts[1] = shifted(&texts[1], 123_456.789);
    let after = run_of(&texts);
    // Equal to the clock's resolution: the offset is a median of µs values written with 3 decimals.
    let (a, b) = (before.lateness(), after.lateness());
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert_eq!((x.collective, x.rank, x.side), (y.collective, y.rank, y.side));
        assert!((x.late_ns - y.late_ns).abs() <= 1 && (x.idle_excess_ns - y.idle_excess_ns).abs() <= 1, "{x:?} vs {y:?}");
    }
    let waits = |r: &Run| r.collectives.iter().flat_map(|c| c.sides.iter().map(|s| s.wait_ns)).collect::<Vec<_>>();
    for (x, y) in waits(&before).iter().zip(waits(&after)) {
        assert!((x - y).abs() <= 1, "wait {x} vs {y}");
    }
}

#[test]
fn collectives_split_into_transfer_and_skew_and_ranks_into_transfer_and_wait() {
    let (texts, _) = made(SOURCES[1], LateKind::Device);
    let run = run_of(&texts);
    let t = traceprism::report::ranks::collectives(&run);
    let col = |n: &str| t.column(n).unwrap();
    for (row, c) in t.rows.iter().zip(&run.collectives) {
        assert_eq!(row[col("transfer_us")], row[col("comm_latency_us")]);
        let waits: i64 = c.sides.iter().map(|s| s.wait_ns).sum();
        assert_eq!(row[col("skew_us")], traceprism::table::Cell::Micros(waits));
    }
    let ranks = traceprism::report::ranks::ranks(&run);
    let (tr, wa) = (ranks.column("collective_transfer_us").unwrap(), ranks.column("collective_wait_us").unwrap());
    for (k, row) in ranks.rows.iter().enumerate() {
        let total: i64 = run.collectives.iter().map(|c| c.sides[k].dur_ns).sum();
        let (a, b) = (row[tr].as_f64().unwrap(), row[wa].as_f64().unwrap());
        assert!(((a + b) * 1e3 - total as f64).abs() < 1.0, "rank {k}: transfer + wait = time in collectives");
    }
}

/// The first collective of each source, by name: (name, occurrence 0).
fn first_collective(text: &[u8]) -> String {
    let doc: serde_json::Value = serde_json::from_slice(text).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let first = events
        .iter()
        .filter(|e| e["cat"] == "kernel" && traceprism::synth::ranks::is_collective(e["name"].as_str().unwrap_or("")))
        .min_by(|a, b| a["ts"].as_f64().unwrap().total_cmp(&b["ts"].as_f64().unwrap()))
        .expect("a collective");
    first["name"].as_str().unwrap().to_string()
}

/// At the first collective there is no earlier one the ranks left together: windows open when the
/// first rank began its step, and the figures add up there too (issue 45): `late` = busy excess +
/// idle excess + a remainder of nearly nothing, the injected side named, and a host op that is not
/// a step marker.
#[test]
fn lateness_at_the_first_collective_adds_up() {
    for source in SOURCES {
        let text = plain_fixture(source);
        let name = first_collective(&text);
        for kind in [LateKind::Device, LateKind::Host] {
            let spec = RunSpec { ranks: 4, straggler: 2, delays: vec![(name.clone(), 0, DELAY_US)], kind, ..RunSpec::default() };
            let made = make_run(&text, &spec).expect("the generator runs");
            assert_eq!(made.truth.delays.len(), 1, "{source}: the first collective can be delayed");
            let run = run_of(&made.traces);
            let rows = run.lateness();
            eprintln!("{source} {kind:?} at the first collective: {rows:?}");
            let first: Vec<&Lateness> = rows.iter().filter(|l| l.collective == 0).collect();
            assert_eq!(first.len(), 1, "{source} {kind:?}: {rows:#?}");
            check(source, kind, &first.into_iter().cloned().collect::<Vec<_>>(), 1, &run);
        }
    }
}

/// Each collective's cost class (issue 45): delays injected before every 30th collective make
/// those waiting-dominated (`skew`; `mixed` only where the transfer itself is long beside the
/// delay), and every other collective, which nobody waits for beyond the run's jitter, `transfer`.
/// The roll-up and the sentence name rank 2 as the one waited for.
#[test]
fn delayed_collectives_are_skew_and_the_others_transfer() {
    use traceprism::analysis::ranks::CostClass;
    for source in SOURCES {
        let spec = RunSpec { ranks: 4, straggler: 2, every: 30, delay_us: DELAY_US, ..RunSpec::default() };
        let made = make_run(&plain_fixture(source), &spec).expect("the generator runs");
        let run = run_of(&made.traces);
        let delayed: std::collections::HashSet<(String, usize)> =
            made.truth.delays.iter().map(|d| (d.name.clone(), d.occurrence)).collect();
        assert!(run.jitter_ns < 5_000, "{source}: the run's jitter is {} ns", run.jitter_ns);
        let mut seen = 0;
        for c in &run.collectives {
            let class = run.cost_class(c);
            if delayed.contains(&(c.name.clone(), c.occurrence)) {
                seen += 1;
                let n = c.sides.len() as i64;
                let want =
                    if (n - 1) * (DELAY_US * 1e3) as i64 >= 2 * n * c.transfer_ns() { CostClass::Skew } else { CostClass::Mixed };
                assert_eq!(class, want, "{source}: delayed collective {} (transfer {} ns)", c.index, c.transfer_ns());
            } else {
                assert_eq!(class, CostClass::Transfer, "{source}: collective {} nobody was delayed for", c.index);
            }
        }
        assert_eq!(seen, delayed.len(), "{source}: every delay found");
        let rollup = run.class_rollup();
        let all: Vec<_> = rollup.iter().filter(|g| g.layer.is_none()).collect();
        assert_eq!(all.iter().map(|g| g.collectives).sum::<usize>(), run.collectives.len());
        assert_eq!(all.iter().map(|g| g.classes[1] + g.classes[2]).sum::<usize>(), delayed.len());
        let sentence = run.cost_finding().expect("a sentence");
        assert!(sentence.contains("% of it for rank 2"), "{source}: {sentence}");
        eprintln!("{source}: {sentence}");
    }
}

#[test]
fn the_straggler_finding_saves_the_injected_delay_and_names_its_side() {
    // The injected delays are the truth: everyone waits DELAY_US at each delayed collective, so
    // the run's straggler finding must save the delays' sum (within 5%, as lateness is measured),
    // spread over the straggler's steps, and fix the side that was delayed.
    for source in SOURCES {
        for kind in [LateKind::Device, LateKind::Host] {
            let (texts, delays) = made(source, kind);
            let run = run_of(&texts);
            let found = traceprism::analysis::findings::stragglers(&run);
            let f = &found[0];
            eprintln!(
                "{source} {kind:?}: {} {}: {:.1} µs a step over {} steps; {}",
                f.kind, f.scope, f.saving_us, f.passes, f.fix
            );
            assert_eq!(found.len(), 1, "only the straggler: {found:?}");
            assert!(f.scope.starts_with("rank 2 of 4"), "{}", f.scope);
            let total = f.saving_us * f.passes as f64;
            let want = DELAY_US * delays as f64;
            assert!((total / want - 1.0).abs() <= 0.05, "{source} {kind:?}: {total} µs saved for {want} µs injected");
            let words = if kind == LateKind::Host { "free the late rank's host" } else { "balance the GPU work" };
            assert!(f.fix.starts_with(words), "{}", f.fix);
        }
    }
}
