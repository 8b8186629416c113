//! Graph node ids (issue 61): Kineto writes `graph id` and `graph node id` on kernels replayed
//! from CUDA graphs; the model keeps them and they check the passes and layers found.

use crate::common::*;
use traceprism::analysis::graph_nodes::check;
use traceprism::model::NONE;

const HYBRID: &str = "vllm_qwen35_hybrid_nvfp4_decode_gb10.pt.trace.json.gz";

/// Kernels with a graph id other than 0, distinct graph ids, and graph launches, in the raw JSON.
fn raw_counts(name: &str) -> (usize, usize, usize) {
    let doc: serde_json::Value = serde_json::from_slice(&plain_fixture(name)).expect("JSON");
    let events = doc["traceEvents"].as_array().expect("traceEvents");
    let mut graphs = std::collections::HashSet::new();
    let mut kernels = 0;
    for e in events.iter().filter(|e| e["cat"] == "kernel") {
        let id = e["args"]["graph id"].as_i64().unwrap_or(0);
        if id != 0 {
            kernels += 1;
            graphs.insert(id);
        }
    }
    let launches = events.iter().filter(|e| e["cat"] == "cuda_runtime" && e["name"] == "cudaGraphLaunch").count();
    (kernels, graphs.len(), launches)
}

#[test]
fn graph_nodes_are_read_and_confirm_the_hybrids_passes_and_layers() {
    let (kernels, graphs, launches) = raw_counts(HYBRID);
    let a = analysis(HYBRID);
    assert_eq!(a.trace.graph_nodes.len(), kernels);
    let g = check(&a.trace, &a.phases, &a.layers);
    eprintln!("{}", g.summary());
    assert_eq!((g.kernels, g.graphs), (kernels, graphs));
    // A replay is one graph launch's kernels.
    assert_eq!(g.replays, launches);
    assert_eq!(g.replays_split_by_a_boundary, 0);
    assert!(g.nodes_compared > 10_000 && g.nodes_same_kernel == g.nodes_compared);
    assert!(g.nodes_in_layers > 10_000 && g.nodes_same_layer == g.nodes_in_layers);
    // 65 piecewise graphs a pass around 64 eager token mixers: 64 layers in every pass.
    assert_eq!((g.pieces_per_pass, g.passes_layers_between_pieces, g.passes_with_graphs), (Some(65), 10, 10));
    let health = traceprism::analysis::health::health(&a);
    let c = health.iter().find(|c| c.check.as_str() == "graph_nodes").expect("graph_nodes check");
    assert_eq!(c.status.as_str(), "present", "{}", c.found);
}

#[test]
fn a_pass_boundary_inside_a_replay_or_a_layer_off_by_one_is_caught() {
    let a = analysis(HYBRID);
    // Move the first kernel of pass 1 (inside the first graph piece's replay) back into pass 0.
    let mut phases = a.phases.clone();
    let rows = phases.passes[1].rows.clone();
    let moved = *rows.iter().find(|&&r| a.trace.graph_nodes.gpu.contains(&r)).expect("a replayed row");
    phases.pass_of_row[moved as usize] = 0;
    assert!(check(&a.trace, &phases, &a.layers).replays_split_by_a_boundary > 0);
    // Shift every layer of pass 3 by one: its nodes are no longer in their layers of pass 0.
    let mut layers = a.layers.clone();
    for &r in &a.layers.passes[3].rows {
        let l = &mut layers.layer_of_row[r as usize];
        if *l != NONE {
            *l += 1;
        }
    }
    let g = check(&a.trace, &a.phases, &layers);
    assert!(g.nodes_same_layer < g.nodes_in_layers);
}

#[test]
fn a_trace_without_graph_nodes_says_so() {
    let a = analysis("vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz");
    assert!(a.trace.graph_nodes.is_empty());
    let health = traceprism::analysis::health::health(&a);
    let c = health.iter().find(|c| c.check.as_str() == "graph_nodes").expect("graph_nodes check");
    assert!(c.found.contains("carry no graph node ids"), "{}", c.found);
}
