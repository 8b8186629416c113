//! Ranks that disagree (issue 45): a 4-rank run made by the generator from a real vLLM TP4 trace
//! (rank 2 late before every 30th collective), then one rank's trace loses what real traces lose —
//! one collective kernel (a kernel dropped at a session's start), 5% of its kernels at random, the
//! start of its window, or so many collectives that it no longer runs the same sequence. The
//! collectives a rank lacks must be named and left out, every other collective paired with its
//! right partners (each rank's wait at it exactly as in the whole run), the straggler still rank 2;
//! and a run whose sequences cannot be matched must be an error naming the first divergence.

use crate::common;

use common::*;
use serde_json::Value;
use traceprism::analysis::ranks::Run;
use traceprism::support::mix::SplitMix64;
use traceprism::synth::ranks::{is_collective, make_run, RunSpec};

const SOURCE: &str = "vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz";
/// The rank whose trace loses events (not the straggler).
const DAMAGED: usize = 1;

fn generated() -> Vec<Vec<u8>> {
    let spec = RunSpec { ranks: 4, straggler: 2, every: 30, delay_us: 300.0, ..RunSpec::default() };
    make_run(&plain_fixture(SOURCE), &spec).expect("the generator runs").traces
}

use common::run_of_texts as run_of;

/// `text` without the events `drop` picks: `drop(index among kernels, index among collective
/// kernels (if one), ts)`, kernels in time order. Returns the new text and the collectives dropped.
fn without(text: &[u8], mut drop: impl FnMut(usize, Option<usize>, f64) -> bool) -> (Vec<u8>, usize) {
    let mut doc: Value = serde_json::from_slice(text).unwrap();
    let events = doc["traceEvents"].as_array_mut().unwrap();
    let mut kernels: Vec<(f64, usize)> =
        events.iter().enumerate().filter(|(_, e)| e["cat"] == "kernel").map(|(i, e)| (e["ts"].as_f64().unwrap(), i)).collect();
    kernels.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut gone = vec![false; events.len()];
    let (mut collective, mut dropped) = (0usize, 0usize);
    for (k, &(ts, i)) in kernels.iter().enumerate() {
        let c = is_collective(events[i]["name"].as_str().unwrap_or("")).then(|| {
            collective += 1;
            collective - 1
        });
        if drop(k, c, ts) {
            gone[i] = true;
            dropped += usize::from(c.is_some());
        }
    }
    let mut i = 0;
    events.retain(|_| {
        i += 1;
        !gone[i - 1]
    });
    (serde_json::to_vec(&doc).unwrap(), dropped)
}

/// Each matched collective's waits by the first rank's row (rank 0 is never damaged).
fn waits(run: &Run) -> std::collections::HashMap<usize, Vec<i64>> {
    run.collectives.iter().map(|c| (c.sides[0].row, c.sides.iter().map(|s| s.wait_ns).collect())).collect()
}

/// The damaged run pairs every collective it keeps as the whole run does, and names rank 2.
fn same_pairs(whole: &Run, damaged: &Run, lacked: usize) {
    let (a, b) = (waits(whole), waits(damaged));
    assert_eq!(b.len() + lacked, a.len(), "every collective but those lacked is matched");
    for (row, w) in &b {
        assert_eq!(a.get(row), Some(w), "the waits at the collective of rank 0's row {row}");
    }
    let finding = damaged.finding().unwrap_or_default();
    assert!(finding.starts_with("rank 2 arrives last"), "{finding}");
}

#[test]
fn a_rank_missing_collectives_is_named_and_the_others_keep_their_partners() {
    let texts = generated();
    let whole = run_of(&texts).unwrap();
    assert!(whole.unmatched.is_empty() && whole.warnings.is_empty(), "{:?}", whole.warnings);

    // One collective kernel dropped (the 41st of the rank's trace).
    let mut one = texts.clone();
    (one[DAMAGED], _) = without(&texts[DAMAGED], |_, c, _| c == Some(40));
    let run = run_of(&one).unwrap();
    assert_eq!(run.missing_collectives(), 1);
    let m = run.unmatched[0].missing.as_ref().unwrap();
    assert!(m.while_all_traced);
    assert_eq!(m.position, 40, "its place in the run");
    assert_eq!(run.unmatched[0].per_rank, [1, 0, 1, 1]);
    let warning = run.warnings.iter().find(|w| w.starts_with("rank 1 lacks collective #40")).expect("a warning naming it");
    assert!(warning.contains("(AllReduce ncclDevKernel_AllReduce"), "{warning}");
    same_pairs(&whole, &run, 1);
    let table = traceprism::report::ranks::unmatched_collectives(&run);
    let csv = table.to_csv();
    assert!(csv.lines().nth(1).is_some_and(|l| l.contains(",40,") && l.contains(",yes,1,1,0,1,1")), "{csv}");

    // 5% of its kernels dropped at random: every collective among them named, the rest paired.
    let mut random = texts.clone();
    let mut mix = SplitMix64::new(11);
    let dropped;
    (random[DAMAGED], dropped) = without(&texts[DAMAGED], |_, _, _| mix.unit() < 0.05);
    assert!(dropped >= 10, "{dropped} collectives dropped");
    let run = run_of(&random).unwrap();
    assert_eq!(run.missing_collectives(), dropped);
    assert!(run.unmatched.iter().all(|u| u.per_rank[DAMAGED] == 0 && u.per_rank.iter().sum::<usize>() == 3));
    same_pairs(&whole, &run, dropped);
    eprintln!("5% of rank 1's kernels dropped ({dropped} collectives): warnings {:#?}", run.warnings);
}

#[test]
fn a_window_cut_later_on_one_rank_is_said_and_not_an_error() {
    let texts = generated();
    let whole = run_of(&texts).unwrap();
    // Rank 1's trace starts at its 7th collective: every event before it is gone.
    let doc: Value = serde_json::from_slice(&texts[DAMAGED]).unwrap();
    let mut starts: Vec<f64> = doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "kernel" && is_collective(e["name"].as_str().unwrap_or("")))
        .map(|e| e["ts"].as_f64().unwrap())
        .collect();
    starts.sort_by(f64::total_cmp);
    let cut = starts[6];
    let mut doc = doc;
    doc["traceEvents"].as_array_mut().unwrap().retain(|e| e["ts"].as_f64().is_none_or(|t| t >= cut));
    let mut texts = texts;
    texts[DAMAGED] = serde_json::to_vec(&doc).unwrap();
    let run = run_of(&texts).unwrap();
    assert_eq!(run.missing_collectives(), 6);
    assert!(run.unmatched.iter().all(|u| !u.missing.as_ref().unwrap().while_all_traced));
    assert!(run.warnings.iter().any(|w| w.starts_with("6 collectives before or after the span")), "{:?}", run.warnings);
    same_pairs(&whole, &run, 6);
}

#[test]
fn ranks_that_do_not_run_the_same_sequence_are_an_error_naming_the_first_divergence() {
    let mut texts = generated();
    // A third of rank 1's collectives gone: not a dropped kernel, another sequence.
    (texts[DAMAGED], _) = without(&texts[DAMAGED], |_, c, _| c.is_some_and(|c| c % 3 == 1));
    let e = match run_of(&texts) {
        Ok(run) => panic!("no error: {:?}", run.warnings),
        Err(e) => e.to_string(),
    };
    assert!(e.starts_with("the ranks do not run the same collectives: rank 1 (rank1.json) lacks"), "{e}");
    assert!(e.contains("the first collective #1 ("), "{e}");
    // The CLI exits 1 with it.
    let dir = std::env::temp_dir().join(format!("traceprism-diverge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (r, t) in texts.iter().enumerate() {
        std::fs::write(dir.join(format!("rank{r}.json")), t).unwrap();
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_traceprism")).arg("ranks").arg(&dir).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("the ranks do not run the same collectives: rank 1"), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}
