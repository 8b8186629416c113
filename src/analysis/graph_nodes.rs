//! What the graph node ids of replayed kernels confirm (`graph id`, `graph node id`: Kineto
//! writes them on kernels replayed from CUDA graphs since early 2026).
//!
//! A node of a captured graph is one kernel of the model: replayed in two passes, the same node
//! must be the same kernel at the same place (the same layer). And a replay is one graph launch's
//! kernels, so a pass boundary never falls inside one. A piecewise-compiled model (vLLM's default)
//! captures one graph per stretch between two attention ops, the attention itself running eagerly
//! in between: a pass replaying `g` pieces holds `g - 1` token mixers, so `g - 1` layers.
//!
//! Passes and layers are found without these ids (from names and structure); this module only
//! checks them, and the health report says what it found.

use crate::analysis::layers::Layers;
use crate::analysis::phases::Phases;
use crate::model::FastMap;
use crate::model::{Trace, NONE};

/// What the graph node ids said about the passes and layers found.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct GraphCheck {
    /// Kernels that carry a graph node id.
    pub kernels: usize,
    /// Distinct graphs replayed.
    pub graphs: usize,
    /// Replays: runs of consecutive kernels (per device, in time order) of one graph.
    pub replays: usize,
    /// Replays whose kernels fall in two passes (a pass boundary inside one launch: wrong).
    pub replays_split_by_a_boundary: usize,
    /// Node occurrences compared with the node's first occurrence in an earlier pass.
    pub nodes_compared: usize,
    /// Of those, the same kernel name.
    pub nodes_same_kernel: usize,
    /// Of those, in the same layer (index) of their pass (both in a layer).
    pub nodes_same_layer: usize,
    /// Of those, both in some layer.
    pub nodes_in_layers: usize,
    /// Passes whose kernels are all replayed from graphs or between replays (no eager stretch).
    pub passes_with_graphs: usize,
    /// The pieces (distinct graphs) every such pass replays, when it is one number.
    pub pieces_per_pass: Option<usize>,
    /// Passes whose layer count is their pieces less one (a piecewise graph per stretch between
    /// two token mixers).
    pub passes_layers_between_pieces: usize,
}

impl GraphCheck {
    /// True when the trace carries graph node ids.
    pub fn present(&self) -> bool {
        self.kernels > 0
    }

    /// One sentence of what the ids confirmed (or contradicted).
    pub fn summary(&self) -> String {
        if !self.present() {
            return "no kernel carries a graph node id".into();
        }
        let mut out =
            format!("{} replayed kernels carry graph node ids ({} graphs, {} replays)", self.kernels, self.graphs, self.replays);
        if self.replays_split_by_a_boundary == 0 {
            out.push_str("; no pass boundary falls inside a replay");
        } else {
            out.push_str(&format!("; {} replays are split by a pass boundary", self.replays_split_by_a_boundary));
        }
        if self.nodes_compared > 0 {
            out.push_str(&format!(
                "; a node replayed in two passes is the same kernel {}/{} times and in the same layer {}/{}",
                self.nodes_same_kernel, self.nodes_compared, self.nodes_same_layer, self.nodes_in_layers
            ));
        }
        if let Some(g) = self.pieces_per_pass {
            out.push_str(&format!(
                "; each pass replays {g} graph pieces, so {} token mixers between them: {} of {} passes have that many layers",
                g.saturating_sub(1),
                self.passes_layers_between_pieces,
                self.passes_with_graphs
            ));
        }
        out
    }
}

/// Checks the passes and layers found against the graph node ids of `trace`.
pub fn check(trace: &Trace, phases: &Phases, layers: &Layers) -> GraphCheck {
    let nodes = &trace.graph_nodes;
    let mut out = GraphCheck { kernels: nodes.len(), ..Default::default() };
    if nodes.is_empty() {
        return out;
    }
    let g = &trace.gpu;
    let graph_of_row: FastMap<u32, u32> = nodes.gpu.iter().copied().zip(nodes.graph.iter().copied()).collect();
    let mut graphs: Vec<u32> = nodes.graph.clone();
    graphs.sort_unstable();
    graphs.dedup();
    out.graphs = graphs.len();
    // Replays: per device, kernels in time order, a run of one graph id (eager kernels end it).
    let mut rows: Vec<u32> = (0..g.len() as u32).filter(|&r| g.kind[r as usize] == crate::model::GpuKind::Kernel).collect();
    crate::analysis::rows::sort_by_time(&g.ts, &mut rows);
    rows.sort_by_key(|&r| g.device[r as usize]); // stable: time order within a device
    let mut run: Option<(i32, u32, u32)> = None; // (device, graph, pass of its first kernel)
    let mut split = false;
    for &r in &rows {
        let pass = phases.pass_of_row.get(r as usize).copied().unwrap_or(NONE);
        let here = graph_of_row.get(&r).map(|&graph| (g.device[r as usize], graph));
        match (run, here) {
            (Some((d, gr, p)), Some((d2, gr2))) if d == d2 && gr == gr2 => {
                split |= pass != p && pass != NONE && p != NONE;
            }
            (_, here) => {
                if run.is_some() && split {
                    out.replays_split_by_a_boundary += 1;
                }
                split = false;
                run = here.map(|(d, gr)| (d, gr, pass));
                out.replays += here.is_some() as usize;
            }
        }
    }
    if run.is_some() && split {
        out.replays_split_by_a_boundary += 1;
    }
    // The same node in two passes: the same kernel, in the same layer.
    let mut first: FastMap<(u32, i64), (u32, u32, u32)> = FastMap::default(); // node -> (pass, name, layer)
    for k in 0..nodes.len() {
        let r = nodes.gpu[k] as usize;
        let pass = phases.pass_of_row.get(r).copied().unwrap_or(NONE);
        if pass == NONE || nodes.node[k] < 0 {
            continue;
        }
        let layer = layers.layer_of_row.get(r).copied().unwrap_or(NONE);
        let here = (pass, g.name[r], layer);
        match first.get(&(nodes.graph[k], nodes.node[k])) {
            None => {
                first.insert((nodes.graph[k], nodes.node[k]), here);
            }
            Some(&(p0, name0, layer0)) if p0 != pass => {
                out.nodes_compared += 1;
                out.nodes_same_kernel += (name0 == here.1) as usize;
                if layer0 != NONE && layer != NONE {
                    out.nodes_in_layers += 1;
                    out.nodes_same_layer += (layer0 == layer) as usize;
                }
            }
            Some(_) => {}
        }
    }
    // Pieces per pass: the distinct graphs each pass replays.
    let layers_of_pass: FastMap<u32, u32> =
        layers.passes.iter().map(|lp| lp.index).zip(layers.layers_per_pass.iter().copied()).collect();
    let mut pieces: Vec<(usize, usize)> = Vec::new(); // (pieces, layers)
    for p in &phases.passes {
        let mut ids: Vec<u32> = p.rows.iter().filter_map(|r| graph_of_row.get(r).copied()).collect();
        if ids.is_empty() {
            continue;
        }
        ids.sort_unstable();
        ids.dedup();
        pieces.push((ids.len(), layers_of_pass.get(&p.index).copied().unwrap_or(0) as usize));
    }
    out.passes_with_graphs = pieces.len();
    let mut counts: Vec<usize> = pieces.iter().map(|&(g, _)| g).collect();
    counts.sort_unstable();
    counts.dedup();
    if counts.len() == 1 && counts[0] > 2 {
        out.pieces_per_pass = Some(counts[0]);
        out.passes_layers_between_pieces = pieces.iter().filter(|&&(g, l)| l + 1 == g).count();
    }
    out
}
