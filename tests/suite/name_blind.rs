//! Structure before spelling (issue 52): passes and layers must come out right when no kernel name
//! means anything. Each truth trace is read with the GPU alone (kernels, memcpy, memset and the
//! metadata) and every kernel name replaced by an opaque id (same name, same id: `k0`, `k1`, …),
//! so no rule table can recognise a single kernel. The pass count must equal the truth's
//! `forward_passes` and every pass must hold the truth's `num_layers` layers; a phase may be
//! `unknown` or doubted, never confidently wrong.

use crate::common;
use common::*;
use std::collections::HashMap;
use traceprism::analysis::phases::Phase;
use traceprism::analysis::truth::{match_rows, score_layers, score_phases};

/// The truth traces and their truth files.
const TRUTH: &[(&str, &str)] = &[
    ("llama_dense_eager.pt.trace.json.gz", "llama_dense_eager.truth.json.gz"),
    ("moe_eager.pt.trace.json.gz", "moe_eager.truth.json.gz"),
    ("llama_small_stack.pt.trace.json.gz", "llama_small_stack.truth.json.gz"),
];

/// Fixture `name` with the GPU alone and every kernel name an opaque id. Returns the JSON text and
/// how many distinct kernel names were replaced.
pub fn name_blind(name: &str) -> (Vec<u8>, usize) {
    let mut doc: serde_json::Value = serde_json::from_slice(&plain_fixture(name)).expect("fixture is JSON");
    let events = doc["traceEvents"].as_array_mut().expect("traceEvents");
    keep_gpu_only(events);
    let mut ids: HashMap<String, usize> = HashMap::new();
    for e in events.iter_mut().filter(|e| e["cat"] == "kernel") {
        let name = e["name"].as_str().expect("a kernel has a name").to_string();
        let next = ids.len();
        let id = *ids.entry(name).or_insert(next);
        e["name"] = serde_json::Value::String(format!("k{id}"));
    }
    (serde_json::to_vec(&doc).unwrap(), ids.len())
}

#[test]
fn passes_and_layers_come_from_structure_when_no_name_is_known() {
    eprintln!(
        "{:<38} {:>7} {:>7} {:>14} {:>9} {:>10} {:>9}",
        "trace", "passes", "truth", "layers/pass", "truth", "layer acc", "phase ok"
    );
    let mut failures = Vec::new();
    for (trace, truth) in TRUTH {
        let t = traceprism::pipeline::read_truth(&fixture(truth)).expect("truth reads");
        let (bytes, names) = name_blind(trace);
        let a = analyse_bytes(&bytes);
        assert!(a.trace.ops.is_empty() && a.trace.launches.is_empty(), "{trace}: CPU side left");
        assert!(names > 10 && (0..a.trace.gpu.len()).all(|r| !a.trace.name(a.trace.gpu.name[r]).contains("kernel")), "{trace}");
        let phases = score_phases(&a, &t);
        let layers = score_layers(&a, &t);
        let want_layers = t.num_layers.expect("truth has num_layers");
        let mut per_pass: Vec<u32> = a.layers.layers_per_pass.clone();
        per_pass.dedup();
        // The truth phase of each detected pass: the phase of most of its matched kernel time.
        let rows = match_rows(&a, &t);
        let mut time: HashMap<(u32, &str), i64> = HashMap::new();
        for (k, row) in t.kernels.iter().zip(&rows) {
            let Some(r) = *row else { continue };
            let pass = a.phases.pass_of_row[r];
            *time.entry((pass, k.phase.as_str())).or_insert(0) += a.trace.gpu.dur[r];
        }
        let mut wrong = Vec::new();
        for p in &a.phases.passes {
            let truth_phase = ["prefill", "decode"].into_iter().max_by_key(|ph| time.get(&(p.index, *ph)).copied().unwrap_or(0));
            let ours = p.phase.as_str();
            let allowed = p.phase == Phase::Unknown || p.doubt.is_some() || Some(ours) == truth_phase;
            if !allowed {
                wrong.push(format!("pass {} is {ours} (truth {truth_phase:?}), undoubted", p.index));
            }
        }
        let mut phases_found: Vec<String> = Vec::new();
        for p in &a.phases.passes {
            let label = format!("{}{}", p.phase.as_str(), if p.doubt.is_some() { " (doubted)" } else { "" });
            phases_found.push(label);
        }
        phases_found.dedup();
        eprintln!(
            "{trace:<38} {:>7} {:>7} {:>14} {:>9} {:>9.2}% {:>9}  phases in order: {}",
            phases.passes_found,
            t.forward_passes.unwrap_or(0),
            format!("{per_pass:?}"),
            want_layers,
            100.0 * layers.accuracy(),
            if wrong.is_empty() { "yes" } else { "NO" },
            phases_found.join(", ")
        );
        if !phases.pass_count_exact() {
            failures.push(format!("{trace}: {} passes, truth {:?}", phases.passes_found, t.forward_passes));
        }
        if a.layers.layers_per_pass.iter().any(|&l| l != want_layers) {
            failures.push(format!("{trace}: layers per pass {:?}, truth {want_layers}", a.layers.layers_per_pass));
        }
        if !wrong.is_empty() {
            failures.push(format!("{trace}: {}", wrong.join("; ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
