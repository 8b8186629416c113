//! Transformer layer detection that needs no per-model table.
//!
//! Within each forward pass the kernels of the decoder layers repeat N times; [`repeat`] finds that
//! block and cuts it into layers, [`label`] names them, [`markers`] (data: `rules/layer_markers.toml`)
//! only anchors and names. Kernels before the first layer (embedding, RoPE tables) get role
//! [`Role::Pre`], those after the last (final norm, LM head, sampling) [`Role::Post`].

pub mod label;
pub mod markers;
pub mod repeat;

use super::categories::KernelCategories;
use super::phases::{Phase, Phases};
use crate::analysis::options::Options;
use crate::model::FastMap as HashMap;
use crate::model::{GpuKind, Trace, NONE};
use markers::{Marker, Markers};
use repeat::Token;

/// Where a kernel sits relative to the decoder layers of its pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Before the first layer (embedding...).
    Pre,
    /// Inside a layer.
    Layer,
    /// After the last layer (final norm, LM head, sampling).
    Post,
    /// Not in any pass, or no layers were found in its pass.
    None,
}

impl Role {
    /// Lower-case name as used in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Pre => "pre",
            Role::Layer => "layer",
            Role::Post => "post",
            Role::None => "",
        }
    }
}

/// "No layer type" in [`Layers::type_of_row`].
pub const NO_TYPE: u16 = u16::MAX;

/// Layer assignment of every GPU row.
#[derive(Debug, Clone, Default)]
pub struct Layers {
    /// Layer index within its pass, or `NONE`.
    pub layer_of_row: Vec<u32>,
    /// Index into `layer_types` of each row's layer type, or [`NO_TYPE`].
    pub type_of_row: Vec<u16>,
    /// Distinct layer type names (`MHA_FC`, `MLA_MOE`, `ATTN`, ...).
    pub layer_types: Vec<String>,
    /// Role of each GPU row inside its layer.
    pub role_of_row: Vec<Role>,
    /// Layers per pass (index = pass index).
    pub layers_per_pass: Vec<u32>,
    /// True when the trace had no passes and was read as one pass (pass 0 = all GPU rows by time).
    pub whole_trace_pass: bool,
    /// The passes layers were looked for in (what the layer tables iterate over).
    pub passes: Vec<LayerPass>,
}

/// One pass as layer detection saw it.
#[derive(Debug, Clone)]
pub struct LayerPass {
    /// Pass index (as in `Phases::passes`).
    pub index: u32,
    /// The pass's phase.
    pub phase: Phase,
    /// GPU rows of the pass, in time order.
    pub rows: Vec<u32>,
}

impl Layers {
    /// Layer type of GPU row `row` (`""` if the row is in no layer).
    pub fn layer_type(&self, row: usize) -> &str {
        match self.type_of_row.get(row) {
            Some(&t) if t != NO_TYPE => self.layer_types.get(t as usize).map_or("", |s| s.as_str()),
            _ => "",
        }
    }

    fn type_id(&mut self, name: &str) -> u16 {
        if let Some(i) = self.layer_types.iter().position(|t| t == name) {
            return i as u16;
        }
        self.layer_types.push(name.to_string());
        (self.layer_types.len() - 1) as u16
    }
}

/// Layers of one pass, parallel to the pass's rows.
#[derive(Debug, Clone, Default)]
pub struct PassLayers {
    /// Layer index of each row, or `NONE`.
    pub layer_of: Vec<u32>,
    /// Role of each row inside its layer.
    pub role_of: Vec<Role>,
    /// Type name of each layer (index = layer index).
    pub types: Vec<String>,
    /// Share of the pass's kernels inside the repeating cycle (a confidence, 0..1).
    pub explained: f64,
}

/// Rows of the pseudo-pass used when the trace has no passes: all GPU rows in time order.
pub fn whole_trace_rows(trace: &Trace) -> Vec<u32> {
    let mut rows: Vec<u32> = (0..trace.gpu.len() as u32).collect();
    crate::analysis::rows::sort_by_time(&trace.gpu.ts, &mut rows);
    rows
}

/// Detects layers in every pass (or in the whole trace, as one pass, if there are no passes and
/// the trace is not known to be something other than inference).
pub fn detect(trace: &Trace, categories: &KernelCategories, phases: &Phases, options: &Options) -> Layers {
    // A training step runs its layers forward and backward: no decoder-layer stack to read.
    if phases.trace_phase == Some(Phase::NotInference) {
        return detect_passes(trace, categories, &[], options);
    }
    if phases.passes.is_empty() && phases.trace_phase != Some(Phase::NotInference) && !trace.gpu.is_empty() {
        let whole = [LayerPass { index: 0, phase: Phase::Unknown, rows: whole_trace_rows(trace) }];
        let mut out = detect_passes(trace, categories, &whole, options);
        out.whole_trace_pass = true;
        return out;
    }
    let passes: Vec<LayerPass> =
        phases.passes.iter().map(|p| LayerPass { index: p.index, phase: p.phase, rows: p.rows.clone() }).collect();
    detect_passes(trace, categories, &passes, options)
}

/// Detects layers in the given passes (rows in time order). `layers_per_pass[i]` belongs to `passes[i]`.
pub fn detect_passes(trace: &Trace, categories: &KernelCategories, passes: &[LayerPass], options: &Options) -> Layers {
    let n = trace.gpu.len();
    let mut out = Layers {
        layer_of_row: vec![NONE; n],
        type_of_row: vec![NO_TYPE; n],
        role_of_row: vec![Role::None; n],
        passes: passes.to_vec(),
        ..Default::default()
    };
    let markers = Markers::builtin();
    // Passes are independent: natively, two threads take half the rows each.
    let found = crate::support::threads::map_in_halves(
        passes,
        |p| p.rows.len(),
        |some| {
            let mut classifier = Classifier::new(&markers);
            some.iter().map(|p| detect_with(&mut classifier, trace, categories, &p.rows, p.phase, options)).collect()
        },
    );
    for (pass, found) in passes.iter().zip(found) {
        let rows = &pass.rows[..];
        let ids: Vec<u16> = found.types.iter().map(|t| out.type_id(t)).collect();
        for (k, &row) in rows.iter().enumerate() {
            let r = row as usize;
            if r >= n {
                continue;
            }
            out.layer_of_row[r] = found.layer_of[k];
            out.role_of_row[r] = found.role_of[k];
            if found.layer_of[k] != NONE {
                out.type_of_row[r] = ids[found.layer_of[k] as usize];
            }
        }
        out.layers_per_pass.push(found.types.len() as u32);
    }
    out
}

/// GEMM kernels in each layer of a pass.
fn gemms_per_layer(categories: &KernelCategories, rows: &[u32], found: &PassLayers) -> Vec<u32> {
    let mut out = vec![0u32; found.types.len()];
    for (k, &row) in rows.iter().enumerate() {
        let layer = found.layer_of[k];
        if layer != NONE && categories.family(row as usize) == "GEMM" {
            out[layer as usize] += 1;
        }
    }
    out
}

/// Detects the layers of ONE pass given its GPU rows in time order.
pub fn detect_in_pass(trace: &Trace, categories: &KernelCategories, rows: &[u32], options: &Options) -> PassLayers {
    let markers = Markers::builtin();
    detect_with(&mut Classifier::new(&markers), trace, categories, rows, Phase::Unknown, options)
}

/// Marker of each (name, category) pair, computed once.
struct Classifier<'m> {
    markers: &'m Markers,
    cache: HashMap<(u32, u16), Marker>,
}

impl<'m> Classifier<'m> {
    fn new(markers: &'m Markers) -> Self {
        Classifier { markers, cache: HashMap::default() }
    }
    fn marker(&mut self, trace: &Trace, categories: &KernelCategories, row: usize) -> Marker {
        let name = trace.gpu.name[row];
        let cat = categories.of_row.get(row).copied().unwrap_or(u16::MAX);
        let markers = self.markers;
        *self.cache.entry((name, cat)).or_insert_with(|| {
            let family = categories.categories.get(cat as usize).map_or("", |c| c.family.as_str());
            markers.classify(trace.name(name), family)
        })
    }
}

fn detect_with(
    cls: &mut Classifier,
    trace: &Trace,
    categories: &KernelCategories,
    rows: &[u32],
    phase: Phase,
    options: &Options,
) -> PassLayers {
    let n_rows = rows.len();
    let mut out =
        PassLayers { layer_of: vec![NONE; n_rows], role_of: vec![Role::None; n_rows], types: Vec::new(), explained: 0.0 };
    // Kernels only: copies and fills come and go between steps and would break the repeat.
    let kernel_at: Vec<usize> = (0..n_rows)
        .filter(|&k| (rows[k] as usize) < trace.gpu.len() && trace.gpu.kind[rows[k] as usize] == GpuKind::Kernel)
        .collect();
    let tokens: Vec<Token> = kernel_at
        .iter()
        .map(|&k| {
            let r = rows[k] as usize;
            Token { id: trace.gpu.name[r], marker: cls.marker(trace, categories, r), ns: trace.gpu.dur[r].max(0) as u64 }
        })
        .collect();
    let found = repeat::find_layers(&tokens, &cls.markers.never_start_on);
    out.explained = found.explained;
    // A transformer layer mixes tokens: a repeat with no attention-like kernel at all is some other
    // network (a CNN's blocks, a recommender's towers), not decoder layers.
    // That is a claim about names, so it holds only where the rules know most kernels: a stream
    // of names no rule knows is read by its structure alone.
    let has_mixer = found.layers.iter().any(|r| tokens[r.clone()].iter().any(|t| t.marker.is_mixer()));
    let named = kernel_at.iter().filter(|&&k| categories.is_named(rows[k] as usize)).count();
    let names_known = super::categories::names_known(named, kernel_at.len());
    if found.layers.is_empty() || (!has_mixer && names_known) {
        return out;
    }
    // Layers (or half layers) as token ranges with their type.
    let mut spans: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    for range in &found.layers {
        let marks = tokens[range.clone()].iter().map(|t| t.marker);
        let split = if options.split_half_layers { label::half_split(&tokens, range.clone()) } else { None };
        match split {
            Some(at) => {
                spans.push((range.start..at, "ATTN".to_string()));
                spans.push((at..range.end, label::ffn_type(tokens[at..range.end].iter().map(|t| t.marker)).to_string()));
            }
            None => spans.push((range.clone(), label::layer_type(marks))),
        }
    }
    // Kinds by structure where names do not say them: every kernel name opaque, or stacks of
    // several kinds whose names say the same (Flux's CLIP and T5 text encoders are both `MHA_FC`).
    if (!has_mixer || found.stacks > 1) && !options.split_half_layers {
        label::kinds_by_structure(&tokens, &mut spans);
    }
    let first = spans[0].0.start;
    let last_end = spans[spans.len() - 1].0.end;
    let mut token_layer = vec![NONE; tokens.len()];
    for (index, (range, _)) in spans.iter().enumerate() {
        for t in range.clone() {
            token_layer[t] = index as u32;
        }
    }
    // Kernels by token; copies/fills take the place of the kernel before them.
    let mut token = 0usize;
    let mut prev: Option<usize> = None;
    for k in 0..n_rows {
        let at = if token < kernel_at.len() && kernel_at[token] == k {
            token += 1;
            prev = Some(token - 1);
            Some(token - 1)
        } else {
            prev
        };
        let (layer, role) = match at {
            Some(t) if t >= last_end => (NONE, Role::Post),
            Some(t) if t >= first && token_layer[t] != NONE => (token_layer[t], Role::Layer),
            _ => (NONE, Role::Pre),
        };
        out.layer_of[k] = layer;
        out.role_of[k] = role;
    }
    // A denoising step's block kinds come from GEMM counts (`label::block_kinds`); its edge
    // layers are asked while the spans are here.
    let edges = (phase == Phase::Denoise).then(|| label::edges_of_their_own(&tokens, &spans));
    out.types = spans.into_iter().map(|(_, t)| t).collect();
    if let Some(edges) = edges {
        let gemms = gemms_per_layer(categories, rows, &out);
        label::block_kinds(&mut out.types, &gemms, edges);
    }
    out
}
