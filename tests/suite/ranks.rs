//! All ranks of a run. A real single-rank trace (vLLM TP4 on H100, rank 0) is made into a 4-rank
//! run by the generator (per-rank clock offsets, jitter, delays injected on one rank before chosen
//! collectives); the analysis must recover the truth: the straggler, the waits, the offsets, and
//! the phase and layer of every injected delay. The delays are chosen by the phase and layer the
//! single-trace analysis gives the collective (decode layers 5–9), so the run analysis must find
//! the waits where they were put. Then the real two-rank HTA pair, and bad input.

use crate::common;

use common::*;
use traceprism::analysis::ranks::{analyse_run, RankTrace, RunOptions, LATE_NS};
use traceprism::analysis::Analysis;
use traceprism::synth::ranks::{is_collective, make_run, RunSpec};
use traceprism::{Options, Result};

const SOURCE: &str = "vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz";

fn analyse(bytes: &[u8]) -> Result<Analysis> {
    Analysis::new(read_bytes(bytes)?, Options::default())
}

/// The collectives the single-trace analysis puts in decode layers 5–9: (name, occurrence of the
/// name in time order, pass, layer).
fn decode_layer_collectives(a: &Analysis) -> Vec<(String, usize, u32, u32)> {
    let t = &a.trace;
    let mut rows: Vec<usize> = t.kernel_rows().filter(|&i| is_collective(t.name(t.gpu.name[i]))).collect();
    rows.sort_by_key(|&i| (t.gpu.ts[i], i));
    let mut seen = std::collections::HashMap::new();
    let mut out = Vec::new();
    for i in rows {
        let name = t.name(t.gpu.name[i]).to_string();
        let n = seen.entry(name.clone()).or_insert(0usize);
        let occurrence = *n;
        *n += 1;
        let phase = a.phases.phase_of_row[i].map(|p| p.as_str());
        let layer = a.layers.layer_of_row[i];
        if phase == Some("decode") && (5..=9).contains(&layer) {
            out.push((name, occurrence, a.phases.pass_of_row[i], layer));
        }
    }
    out
}

struct Made {
    chosen: Vec<(String, usize, u32, u32)>,
    truth: traceprism::synth::ranks::RunTruth,
    traces: Vec<RankTrace>,
}

fn make(spec_delay_us: f64, straggler: u32) -> Made {
    let text = plain_fixture(SOURCE);
    let single = analyse(&text).expect("the source trace reads");
    let chosen = decode_layer_collectives(&single);
    assert!(chosen.len() >= 10, "decode layers 5–9 hold {} collectives", chosen.len());
    let spec = RunSpec {
        ranks: 4,
        straggler,
        delays: chosen.iter().map(|(n, o, _, _)| (n.clone(), *o, spec_delay_us)).collect(),
        ..RunSpec::default()
    };
    let run = make_run(&text, &spec).expect("the generator runs");
    assert_eq!(run.truth.delays.len(), chosen.len(), "every chosen collective could be delayed");
    let traces = run
        .traces
        .iter()
        .enumerate()
        .map(|(r, t)| RankTrace { file: format!("generated_{r}.json"), analysis: analyse(t).expect("a generated rank reads") })
        .collect();
    Made { chosen, truth: run.truth, traces }
}

#[test]
fn the_generated_run_gives_back_its_truth() {
    let delay_us = 25.0;
    let Made { chosen, truth, traces } = make(delay_us, 2);
    let run = analyse_run(traces, RunOptions::default()).expect("the run analyses");
    assert_eq!(run.ranks.len(), 4);
    assert!(run.unmatched.is_empty(), "copies of one trace match everywhere: {:?}", run.unmatched.len());
    // Offsets: the analysis adds the opposite of what the generator added, within a few µs.
    for (r, rank) in run.ranks.iter().enumerate() {
        assert_eq!(rank.rank, r as u32);
        assert_eq!(rank.rank_from, "distributedInfo");
        let want = -truth.offsets_us[r];
        let got = rank.clock_offset_ns as f64 / 1000.0;
        assert!((got - want).abs() <= 2.0, "rank {r}: offset {got} µs, truth {want} µs");
    }
    // Each injected delay: found, the straggler last, every other rank waiting about the delay,
    // and the phase, pass and layer the delay was put in.
    let straggler = truth.straggler as usize;
    for (d, (name, occurrence, pass, layer)) in truth.delays.iter().zip(&chosen) {
        let c = run
            .collectives
            .iter()
            .find(|c| &c.name == name && c.occurrence == *occurrence)
            .unwrap_or_else(|| panic!("delayed collective {name} #{occurrence} not matched"));
        assert_eq!(c.last(), straggler, "{name} #{occurrence}: last rank");
        for (r, side) in c.sides.iter().enumerate().filter(|(r, _)| *r != straggler) {
            let wait = side.wait_ns as f64 / 1000.0;
            assert!(
                (wait - d.delay_us).abs() <= 0.03 * d.delay_us + 2.0 * truth.jitter_us,
                "rank {r} waits {wait} µs for a {} µs delay",
                d.delay_us
            );
        }
        let s = &c.sides[straggler];
        assert_eq!(s.phase.map(|p| p.as_str()), Some("decode"));
        assert_eq!((s.pass, s.layer), (*pass, *layer), "{name} #{occurrence}");
    }
    // No other collective has a rank arriving late.
    let late: usize = run.collectives.iter().filter(|c| traceprism::analysis::ranks::Run::lateness_ns(c) >= LATE_NS).count();
    assert_eq!(late, truth.delays.len());
    // The straggler summary names the straggler.
    let stats = run.straggler_stats();
    assert_eq!(stats[straggler].times_last, truth.delays.len(), "times arrived last");
    assert!(stats.iter().enumerate().all(|(r, s)| r == straggler || s.times_last == 0));
    let finding = run.finding().expect("a finding");
    assert!(finding.starts_with("rank 2 arrives last at"), "{finding}");
    assert!(finding.contains("layers 5–9"), "{finding}");
    // The excess compute of the late rank is what the generator lengthened: the delay per
    // collective, in the categories of the kernels before them.
    let excess = &run.excess()[0];
    let total: i64 = excess.by_category.iter().map(|(_, ns)| ns).sum();
    let want = truth.delays.len() as f64 * delay_us * 1000.0;
    assert!((total as f64 - want).abs() <= 0.03 * want, "excess {total} ns, injected {want} ns");
    // wait_by_layer: rank 0's wait sits in decode layers 5–9 (all but the jitter).
    let tables = traceprism::report::ranks::run_tables(&run);
    let wbl = tables.iter().find(|t| t.name == "wait_by_layer").expect("wait_by_layer");
    assert_eq!(&wbl.columns[..6], ["rank", "phase", "step", "pass", "layer", "wait_us"]);
    let (mut inside, mut all) = (0.0, 0.0);
    for row in wbl.rows.iter().filter(|r| r[0].text() == "0") {
        let w: f64 = row[5].text().parse().unwrap();
        all += w;
        let layer: Option<u32> = row[4].text().parse().ok();
        if row[1].text() == "decode" && layer.is_some_and(|l| (5..=9).contains(&l)) {
            inside += w;
        }
    }
    assert!(inside >= 0.9 * all && inside >= 0.97 * want / 1000.0, "rank 0 waits {inside} of {all} µs in decode layers 5–9");
    // Collectives whose launching op recorded its process group are matched by it, and their size
    // is that op's message: the all-gathers of the vLLM trace, read here from the raw events.
    let doc: serde_json::Value = serde_json::from_slice(&plain_fixture(SOURCE)).unwrap();
    let comms: Vec<&serde_json::Value> = doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "record_param_comms" && e["args"]["Collective name"] == "_allgather_base")
        .collect();
    assert!(!comms.is_empty());
    let out_nelems = comms[0]["args"]["Out msg nelems"].as_u64().unwrap();
    assert_eq!(comms[0]["args"]["dtype"], "BFloat16");
    let gathers: Vec<_> = run.collectives.iter().filter(|c| c.name.contains("AllGather")).collect();
    assert_eq!(
        gathers.len(),
        doc["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["cat"] == "kernel" && e["name"].as_str().is_some_and(|n| n.contains("AllGather")))
            .count()
    );
    for c in &gathers {
        assert_eq!(c.matched_by, "process group");
        assert_eq!(
            c.group,
            format!(
                "{} {}",
                comms[0]["args"]["Process Group Name"].as_str().unwrap(),
                comms[0]["args"]["Process Group Ranks"].as_str().unwrap()
            )
        );
        assert_eq!(c.bytes, Some(out_nelems * 2));
        let busbw = c.busbw_gbps().unwrap();
        let algbw = c.algbw_gbps().unwrap();
        assert!((busbw / algbw - 0.75).abs() < 1e-9, "AllGather over 4 ranks: busbw = algbw × 3/4");
    }
    assert!(
        run.collectives.iter().filter(|c| c.name.contains("cross_device_reduce")).all(|c| c.matched_by == "kernel name"),
        "graph replays have no op"
    );
    let ss = tables.iter().find(|t| t.name == "straggler_summary").expect("straggler_summary");
    assert_eq!(
        ss.columns,
        [
            "rank",
            "total_wait_time_us",
            "mean_wait_time_us",
            "times_arrived_last",
            "times_arrived_first",
            "pct_arrived_last",
            "num_collectives",
            "total_comm_dur_us"
        ]
    );
}

#[test]
fn without_alignment_the_clock_offsets_swamp_the_waits() {
    let Made { truth, traces, .. } = make(25.0, 1);
    let run = analyse_run(traces, RunOptions { align: false }).expect("the run analyses");
    assert!(run.ranks.iter().all(|r| r.clock_offset_ns == 0));
    // Rank 3's clock runs furthest ahead: unaligned, it looks last at nearly every collective.
    let stats = run.straggler_stats();
    let biggest = (0..4).max_by(|&a, &b| truth.offsets_us[a].total_cmp(&truth.offsets_us[b])).unwrap();
    assert!(stats[biggest].times_last as f64 >= 0.9 * run.collectives.len() as f64, "{stats:?}");
}

#[test]
fn the_real_hta_pair_matches_its_send_recv_kernels() {
    let files = ["hta_sampled_rank0_train_w128.json.gz", "hta_sampled_rank1_train_w128.json.gz"];
    // What the raw events say, read with serde_json (not our reader).
    let mut counts = Vec::new();
    for f in files {
        let doc: serde_json::Value = serde_json::from_slice(&plain_fixture(f)).unwrap();
        let rank = doc["distributedInfo"]["rank"].as_i64().unwrap();
        let sendrecv = doc["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["cat"] == "kernel" && e["name"].as_str().is_some_and(|n| n.contains("SendRecv")))
            .count();
        counts.push((rank, sendrecv, doc["distributedInfo"]["world_size"].as_i64().unwrap()));
    }
    assert_eq!(counts.iter().map(|c| c.0).collect::<Vec<_>>(), [0, 1]);
    let traces = files
        .iter()
        .map(|f| RankTrace { file: f.to_string(), analysis: analyse(&std::fs::read(fixture(f)).unwrap()).unwrap() })
        .collect();
    let run = analyse_run(traces, RunOptions::default()).unwrap();
    assert_eq!(
        run.ranks.iter().map(|r| (r.rank, r.rank_from)).collect::<Vec<_>>(),
        [(0, "distributedInfo"), (1, "distributedInfo")]
    );
    let sendrecv = run.collectives.iter().filter(|c| c.name.contains("SendRecv")).count();
    assert_eq!(sendrecv, counts[0].1.min(counts[1].1), "SendRecv kernels matched");
    assert!(sendrecv >= 10);
    // Two of 128 ranks: said.
    assert!(run.warnings.iter().any(|w| w.contains(&format!("2 of {} ranks", counts[0].2))), "{:?}", run.warnings);
    // Every collective carries a wait per rank, and exactly one rank waits nothing.
    for c in &run.collectives {
        assert!(c.sides.iter().any(|s| s.wait_ns == 0), "the last rank waits nothing");
    }
}

#[test]
fn bad_runs_get_clear_messages() {
    let one = |f: &str| RankTrace { file: f.to_string(), analysis: analyse(&std::fs::read(fixture(f)).unwrap()).unwrap() };
    // One trace is not a run.
    let e = analyse_run(vec![one("hta_sampled_rank0_train_w128.json.gz")], RunOptions::default()).err().unwrap().to_string();
    assert!(e.contains("at least two ranks"), "{e}");
    // The same rank twice.
    let e = analyse_run(
        vec![one("hta_sampled_rank0_train_w128.json.gz"), one("hta_sampled_rank0_train_w128.json.gz")],
        RunOptions::default(),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("two traces claim rank 0"), "{e}");
    // Traces whose collectives never match: no waits, said, and the rest stands.
    let run =
        analyse_run(vec![one("llama_dense_eager.pt.trace.json.gz"), one("moe_eager.pt.trace.json.gz")], RunOptions::default())
            .unwrap();
    assert!(run.collectives.is_empty());
    assert!(run.warnings.iter().any(|w| w.contains("no collective kernel occurs on every rank")), "{:?}", run.warnings);
    assert_eq!(run.ranks.len(), 2);
    assert_eq!(run.ranks.iter().map(|r| r.rank_from).collect::<Vec<_>>(), ["order", "order"]);
    // A rank from another run (world size 128 among ranks of 4) is named.
    let text = plain_fixture(SOURCE);
    let made = make_run(&text, &RunSpec { ranks: 2, straggler: 1, every: 0, ..RunSpec::default() }).unwrap();
    let mut traces: Vec<RankTrace> = made
        .traces
        .iter()
        .enumerate()
        .map(|(r, t)| RankTrace { file: format!("gen{r}.json"), analysis: analyse(t).unwrap() })
        .collect();
    traces.push(RankTrace {
        file: "other_run.json".into(),
        analysis: {
            let mut a = analyse(&std::fs::read(fixture("hta_sampled_rank1_train_w128.json.gz")).unwrap()).unwrap();
            a.base_mut().trace.meta.rank = Some(5);
            a
        },
    });
    let run = analyse_run(traces, RunOptions::default()).unwrap();
    assert!(
        run.warnings.iter().any(|w| w.starts_with("other_run.json: distributedInfo says world size 128")),
        "{:?}",
        run.warnings
    );
    assert!(!run.unmatched.is_empty(), "its collectives are listed as unmatched");
}

fn cli(args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_traceprism")).args(args).output().expect("the CLI runs");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

#[test]
fn the_cli_reads_a_run_and_reports_a_bad_rank() {
    let dir = std::env::temp_dir().join(format!("traceprism-ranks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let r0 = fixture("hta_sampled_rank0_train_w128.json.gz");
    let r1 = fixture("hta_sampled_rank1_train_w128.json.gz");
    let bad = dir.join("rank_2.json");
    std::fs::write(&bad, b"{\"traceEvents\": [{\"ph\": \"X\", \"name\": ").unwrap();
    let out_dir = dir.join("out");
    let (ok, stdout, stderr) = cli(&[
        "ranks",
        r0.to_str().unwrap(),
        r1.to_str().unwrap(),
        bad.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
        "--verbose",
    ]);
    assert!(ok, "{stderr}");
    assert!(stderr.contains("rank_2.json") && stderr.contains("this rank is left out"), "{stderr}");
    assert!(stdout.contains("2 ranks,"), "{stdout}");
    let csv = std::fs::read_to_string(out_dir.join("straggler_summary.csv")).unwrap();
    assert!(csv.starts_with("rank,total_wait_time_us,mean_wait_time_us,times_arrived_last,times_arrived_first,pct_arrived_last,num_collectives,total_comm_dur_us"));
    for t in
        ["ranks", "rank_categories", "rank_phases", "collectives", "wait_by_layer", "straggler_cause", "unmatched_collectives"]
    {
        assert!(out_dir.join(format!("{t}.csv")).exists(), "{t}.csv");
    }
    // Without --verbose, files written still say where they went and what the run found.
    let quiet = dir.join("quiet");
    let (ok, stdout, stderr) = cli(&["ranks", r0.to_str().unwrap(), r1.to_str().unwrap(), "--out", quiet.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains(&format!("wrote tables (CSV): {}", quiet.display())), "{stdout}");
    assert!(stdout.contains("finding: rank 1 arrives last"), "{stdout}");
    assert!(quiet.join("run_findings.csv").exists());
    // One file is not a run.
    let (ok, _, stderr) = cli(&["ranks", r0.to_str().unwrap()]);
    assert!(!ok && stderr.contains("at least two ranks"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
