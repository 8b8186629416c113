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
    ("deepseek_mla_moe.pt.trace.json.gz", "deepseek_mla_moe.truth.json.gz"),
    ("llama_compiled.pt.trace.json.gz", "llama_compiled.truth.json.gz"),
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
            "{trace:<38} {:>7} {:>7} {:>14} {:>9} {:>10} {:>9}  phases in order: {}",
            phases.passes_found,
            t.forward_passes.unwrap_or(0),
            format!("{per_pass:?}"),
            want_layers,
            layers.accuracy_text(),
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

/// A public trace with no truth file, and how its truth is read from its own raw events (never
/// from our analysis): the steps are the engine's step annotations (or a kernel the engine runs
/// once per step), the layers per step the kernels run once per layer, counted per step.
struct Derived {
    trace: &'static str,
    /// Names (prefixes) of the step annotations (`user_annotation`), or `None`.
    step_annotation: Option<&'static str>,
    /// Substring of a kernel run once per step, where no annotation marks the steps.
    step_kernel: Option<&'static str>,
    /// Substrings of the kernels run once per layer (each layer runs exactly one of them).
    layer_kernels: &'static [&'static str],
    /// What the model is: where the layer count is checked.
    model: &'static str,
}

const DERIVED: &[Derived] = &[
    Derived {
        trace: "vllm_qwen35_hybrid_nvfp4_decode_gb10.pt.trace.json.gz",
        step_annotation: Some("execute_context_"),
        step_kernel: None,
        layer_kernels: &["gated_delta_rule", "BatchPrefillWithPagedKVCacheKernel"],
        model: "Qwen3.5-27B: 48 gated-delta-net + 16 full-attention layers",
    },
    Derived {
        trace: "vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz",
        step_annotation: None,
        step_kernel: Some("prepare_varlen_num_blocks_kernel"),
        layer_kernels: &["reshape_and_cache_flash_kernel"],
        model: "an 80-layer model, TP4",
    },
    Derived {
        trace: "vllm_tp4_mi300x_1000isl_10osl_32con.pt.trace.json.gz",
        step_annotation: None,
        step_kernel: Some("fused_add_bitwise_and_bitwise_or_embedding"),
        layer_kernels: &["reshape_and_cache"],
        model: "the same run on MI300X",
    },
    Derived {
        trace: "sglang_qwen3-30b-a3b_decode_b300.trace.json.gz",
        step_annotation: Some("step[DECODE"),
        step_kernel: None,
        layer_kernels: &["fmhaSm100fKernel"],
        model: "Qwen3-30B-A3B: 48 MoE layers",
    },
    Derived {
        trace: "sglang_qwen3-30b-a3b_decode_mi300x.trace.json.gz",
        step_annotation: Some("step[DECODE"),
        step_kernel: None,
        layer_kernels: &["paged_attention_ll4mi_QKV"],
        model: "Qwen3-30B-A3B: 48 MoE layers",
    },
    Derived {
        trace: "sglang_qwen3-8b_decode_graph_mi300x.json.gz",
        step_annotation: Some("step[DECODE"),
        step_kernel: None,
        layer_kernels: &["paged_attention_ll4mi_QKV"],
        model: "Qwen3-8B: 36 layers",
    },
    Derived {
        trace: "sglang_qwen3-8b_prefill_mi300x.json.gz",
        step_annotation: Some("step[EXTEND"),
        step_kernel: None,
        layer_kernels: &["FmhaBatchPrefillWithPagedKVCacheKernel"],
        model: "Qwen3-8B: 36 layers",
    },
    Derived {
        trace: "vllm_gptoss_decode_fullgraph_mi300x.json.gz",
        step_annotation: Some("execute_"),
        step_kernel: None,
        layer_kernels: &["reshape_and_cache_flash_kernel"],
        model: "GPT-OSS-20B: 24 layers, sliding and full attention alternating",
    },
    Derived {
        trace: "vllm_gptoss_mixed_piecewise_mi300x.json.gz",
        step_annotation: Some("execute_"),
        step_kernel: None,
        layer_kernels: &["reshape_and_cache_flash_kernel"],
        model: "GPT-OSS-20B: 24 layers",
    },
    Derived {
        trace: "vllm_moe_tp8_eager_b200.json.gz",
        step_annotation: Some("execute_context_"),
        step_kernel: None,
        layer_kernels: &["reshape_and_cache_flash_kernel"],
        model: "a 36-layer MoE, sliding and full attention alternating, TP8",
    },
];

/// Steps and layers per step as the raw events of `d` record them.
fn derived_truth(d: &Derived) -> (usize, Vec<usize>) {
    let doc: serde_json::Value = serde_json::from_slice(&plain_fixture(d.trace)).expect("fixture is JSON");
    let events = doc["traceEvents"].as_array().expect("traceEvents");
    let name = |e: &serde_json::Value| e["name"].as_str().unwrap_or("").to_string();
    let kernels: Vec<(f64, String)> =
        events.iter().filter(|e| e["cat"] == "kernel").map(|e| (e["ts"].as_f64().expect("ts"), name(e))).collect();
    // Step starts: the annotations' CPU starts, or the once-per-step kernel's GPU starts.
    let mut starts: Vec<f64> = match (d.step_annotation, d.step_kernel) {
        (Some(prefix), _) => {
            // On the GPU's clock where the profiler wrote the annotation there too.
            let on = |cat: &str| -> Vec<f64> {
                events
                    .iter()
                    .filter(|e| e["cat"] == cat && name(e).starts_with(prefix))
                    .map(|e| e["ts"].as_f64().expect("ts"))
                    .collect()
            };
            let gpu = on("gpu_user_annotation");
            if gpu.is_empty() {
                on("user_annotation")
            } else {
                gpu
            }
        }
        (None, Some(k)) => kernels.iter().filter(|(_, n)| n.contains(k)).map(|(t, _)| *t).collect(),
        _ => unreachable!(),
    };
    starts.sort_by(f64::total_cmp);
    let per_layer: Vec<f64> =
        kernels.iter().filter(|(_, n)| d.layer_kernels.iter().any(|k| n.contains(k))).map(|(t, _)| *t).collect();
    let layers = if d.step_annotation.is_some() {
        // A step's kernels run after its annotation begins.
        let mut layers = vec![0usize; starts.len()];
        for ts in &per_layer {
            let at = starts.partition_point(|&s| s <= *ts);
            assert!(at > 0, "{}: a layer kernel before the first step", d.trace);
            layers[at - 1] += 1;
        }
        layers
    } else {
        // Marks inside the steps: every step runs the same number of layers.
        assert_eq!(per_layer.len() % starts.len(), 0, "{}", d.trace);
        vec![per_layer.len() / starts.len(); starts.len()]
    };
    (starts.len(), layers)
}

#[test]
fn public_traces_read_name_blind_as_their_raw_events_count_them() {
    eprintln!("{:<54} {:>6} {:>6} {:>14} {:>14}  model", "trace", "steps", "found", "layers/step", "found");
    let mut failures = Vec::new();
    for d in DERIVED {
        let (steps, layers) = derived_truth(d);
        let mut want = layers.clone();
        want.dedup();
        assert!(
            steps >= 1 && want.len() == 1 && want[0] >= 2,
            "{}: the raw events give {steps} steps of {layers:?} layers",
            d.trace
        );
        let (bytes, _) = name_blind(d.trace);
        let a = analyse_bytes(&bytes);
        let mut per_pass: Vec<usize> = a.layers.layers_per_pass.iter().map(|&l| l as usize).collect();
        per_pass.dedup();
        eprintln!(
            "{:<54} {:>6} {:>6} {:>14} {:>14}  {}",
            d.trace,
            steps,
            a.phases.passes.len(),
            format!("{want:?}"),
            format!("{per_pass:?}"),
            d.model
        );
        if a.phases.passes.len() != steps {
            failures.push(format!("{}: {} passes, the raw events {steps} steps", d.trace, a.phases.passes.len()));
        }
        if per_pass != want {
            failures.push(format!("{}: layers per pass {per_pass:?}, the raw events {want:?}", d.trace));
        }
        // Phases: unknown or doubted, never confidently wrong (no name says prefill or decode).
        if let Some(p) = a.phases.passes.iter().find(|p| p.phase != Phase::Unknown && p.doubt.is_none()) {
            failures.push(format!("{}: pass {} read as {} with no name to say so", d.trace, p.index, p.phase.as_str()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_hybrid_reads_48_linear_and_16_full_attention_layers_as_recorded_and_gpu_only() {
    let name = "vllm_qwen35_hybrid_nvfp4_decode_gb10.pt.trace.json.gz";
    let mut doc: serde_json::Value = serde_json::from_slice(&plain_fixture(name)).expect("fixture is JSON");
    let as_recorded = analyse_bytes(&serde_json::to_vec(&doc).unwrap());
    keep_gpu_only(doc["traceEvents"].as_array_mut().expect("traceEvents"));
    let gpu_only = analyse_bytes(&serde_json::to_vec(&doc).unwrap());
    for (how, a) in [("as recorded", &as_recorded), ("GPU only", &gpu_only)] {
        assert_eq!(a.phases.passes.len(), 10, "{how}");
        for (k, pass) in a.layers.passes.iter().enumerate() {
            let order = layer_types_in_order(a, k);
            let mut kinds: HashMap<&str, usize> = HashMap::new();
            for kind in &order {
                *kinds.entry(kind).or_insert(0) += 1;
            }
            assert_eq!(order.len(), 64, "{how}: pass {}", pass.index);
            assert_eq!(
                (kinds.get("GDN_FC"), kinds.get("MHA_FC")),
                (Some(&48), Some(&16)),
                "{how}: pass {}: {kinds:?}",
                pass.index
            );
        }
        // Three linear-attention layers, then one full-attention layer, from the first.
        let order = layer_types_in_order(a, 0);
        assert!(order.chunks(4).all(|c| c == ["GDN_FC", "GDN_FC", "GDN_FC", "MHA_FC"]), "{how}: {order:?}");
    }
}

/// With every kernel name opaque, the hybrid's two block kinds are still two kinds (issue 69,
/// item 5): the structure tells a gated-delta-net layer (three in a row) from a full-attention one
/// (every fourth), though no name says which mixes how; the labels are the markers' guess (`MHA_FC`)
/// and a letter for the second kind. Where only one block repeats (the Llama, the MoE, the
/// compiled Llama), one kind.
#[test]
fn block_kinds_are_told_apart_by_structure_when_no_name_is_known() {
    let (bytes, _) = name_blind("vllm_qwen35_hybrid_nvfp4_decode_gb10.pt.trace.json.gz");
    let a = analyse_bytes(&bytes);
    assert_eq!(a.layers.passes.len(), 10);
    for k in 0..a.layers.passes.len() {
        let order = layer_types_in_order(&a, k);
        assert_eq!(order.len(), 64, "pass {k}");
        assert!(order.chunks(4).all(|c| c[0] == c[1] && c[1] == c[2] && c[2] != c[3] && c[3] == order[3]), "pass {k}: {order:?}");
    }
    // One kind each, edge layers cut short or fused included; and a MoE decode whose layers 4 to 6
    // launch 18-19 kernels where the rest launch 14 (its routing) is still one kind.
    for name in [
        "llama_dense_eager.pt.trace.json.gz",
        "moe_eager.pt.trace.json.gz",
        "llama_compiled.pt.trace.json.gz",
        "sglang_qwen3-30b-a3b_decode_b300.trace.json.gz",
    ] {
        let a = analyse_bytes(&name_blind(name).0);
        let mut kinds: Vec<&str> = (0..a.layers.passes.len()).flat_map(|k| layer_types_in_order(&a, k)).collect();
        kinds.sort_unstable();
        kinds.dedup();
        let odd: Vec<(usize, Vec<&str>)> = (0..a.layers.passes.len())
            .map(|k| (k, layer_types_in_order(&a, k)))
            .filter(|(_, o)| o.iter().any(|t| *t != o[0]))
            .collect();
        assert_eq!(kinds.len(), 1, "{name}: {kinds:?} {odd:?}");
    }
    // Where names tell the kinds apart (a dense first layer before MoE layers, linear and full
    // attention), structure alone groups every pass's layers the same way.
    for name in ["deepseek_mla_moe.pt.trace.json.gz", "vllm_qwen35_hybrid_nvfp4_decode_gb10.pt.trace.json.gz"] {
        let named = analysis(name);
        let blind = analyse_bytes(&name_blind(name).0);
        assert_eq!(named.layers.passes.len(), blind.layers.passes.len(), "{name}: passes");
        for k in 0..named.layers.passes.len() {
            let (by_name, by_structure) = (layer_types_in_order(&named, k), layer_types_in_order(&blind, k));
            assert_eq!(by_name.len(), by_structure.len(), "{name} pass {k}: layers");
            let same = |order: &[&str], i: usize, j: usize| order[i] == order[j];
            for i in 0..by_name.len() {
                for j in i + 1..by_name.len() {
                    assert_eq!(
                        same(&by_structure, i, j),
                        same(&by_name, i, j),
                        "{name} pass {k}, layers {i} and {j}: by name {by_name:?}, by structure {by_structure:?}"
                    );
                }
            }
        }
    }
    let deepseek = layer_types_in_order(&analyse_bytes(&name_blind("deepseek_mla_moe.pt.trace.json.gz").0), 0)
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
    eprintln!("deepseek_mla_moe, name-blind, pass 0: {deepseek:?}");
}

/// Flux.1's denoising step is 19 double-stream blocks then 38 single-stream blocks. With names
/// the attention kernel anchors all 57; with names opaque the cycle counts the double-stream
/// blocks (their kernels explain most of the step) and the single-stream stack after them is found
/// by searching the rest of the pass again. Which blocks are layers must not depend on which
/// attention kernel a block calls (issue 69, item 1): a step whose whole pass is a denoising step
/// reads the recorded reading's 57 layers, as 19 of one kind then 38 of another.
#[test]
fn a_second_stack_of_another_kind_is_layers_too_when_no_name_is_known() {
    let name = "xdit_flux1_4steps_mi300x.json.gz";
    let named = analysis(name);
    let steps: Vec<u32> = named
        .phases
        .passes
        .iter()
        .zip(&named.layers.layers_per_pass)
        .filter(|(p, _)| p.phase != Phase::Stage)
        .map(|(_, &l)| l)
        .collect();
    assert!(steps.len() == 4 && steps.iter().all(|&l| l == 57), "as recorded: {steps:?}");
    let blind = analyse_bytes(&name_blind(name).0);
    let per_pass = &blind.layers.layers_per_pass;
    eprintln!("{name}, name-blind: layers per pass {per_pass:?}");
    // The first and last passes also hold the stages around the steps (the text encoders, the
    // VAE): no name tells them apart there. The first reads CLIP's 12 layers and T5's 24 before
    // the first step's 19 + 38 blocks, four stacks of four kinds, in order.
    let first = layer_types_in_order(&blind, 0);
    let runs: Vec<usize> = traceprism::report::layers::runs(&first).into_iter().map(|(_, n)| n).collect();
    assert_eq!(runs, [12, 24, 19, 38], "pass 0: {first:?}");
    let mut kinds = first.clone();
    kinds.sort_unstable();
    kinds.dedup();
    assert_eq!(kinds.len(), 4, "pass 0: {first:?}");
    // The steps between are whole.
    let inner: Vec<usize> = (1..per_pass.len().saturating_sub(1)).collect();
    assert!(!inner.is_empty(), "{per_pass:?}");
    for k in inner {
        assert_eq!(per_pass[k], 57, "pass {k}: {per_pass:?}");
        let order = layer_types_in_order(&blind, k);
        let (double, single) = order.split_at(19);
        assert!(double.iter().all(|t| *t == double[0]) && single.iter().all(|t| *t == single[0]), "pass {k}: {order:?}");
        assert_ne!(double[0], single[0], "pass {k}: two kinds");
    }
}
