//! GPU time by call path: every kernel's time placed once on the path of ranges its launch ran
//! in, outermost first — annotations, Python frames (`with_stack`), `nn.Module` ranges
//! (`with_modules`), the CPU op chain (`aten::linear` → `aten::addmm`) — then the kernel.
//!
//! The ranges of one thread nest by time ([`crate::model::CpuOps`]' `parent`), so a launch's
//! path is its innermost enclosing range (the deeper of its op and its Python frame) and that
//! range's parents. A kernel replayed from a graph sits under its graph launch's path and a
//! `graph replay` node (then, when a capture trace attributes it, under the path of the op that
//! dispatched it during the capture); a kernel with no launch (a GPU-only trace, a launch before the capture
//! began) under `(no launch)`, its phase and its layer, so every kernel is counted once and its
//! path says why when it has no code behind it. In a trace without Python frames (the profiler's
//! default) every path starts at its phase and layer, so the op chains of different layers stay
//! apart.
//!
//! Step-numbered names are folded so the steps of a run add up: `ProfilerStep#12` is
//! `ProfilerStep#`, and a Python object's address (`… at 0x7f…>`) is dropped; what a compiler
//! generated (Inductor's graph hashes and module paths, Triton kernels' numbers) is folded
//! ([`generated_fold`]), so two recordings of one compiled model line up.

use crate::analysis::base::Base;
use crate::analysis::phases::Phase;
use crate::model::{FastMap, GpuKind, NameId, OpKind, NONE};

/// Phases in [`Phase::ALL`] order: a node's time is kept per phase.
pub const PHASES: usize = Phase::ALL.len();

/// What a node of the tree is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    /// The tree's root: every path starts here.
    Root,
    /// A `user_annotation` range (a step marker, `record_function`).
    Annotation,
    /// A Python frame (`file.py(line): function`) or an `nn.Module` range.
    Python,
    /// A CPU op (`aten::…`, a custom op).
    Op,
    /// A graph launch's replay.
    Graph,
    /// No code behind it: `(no launch)`.
    NoLaunch,
    /// A phase or a layer: where a path starts without stacks, or below `(no launch)`.
    Place,
    /// A kernel: a path's last frame.
    Kernel,
}

impl NodeKind {
    /// As tables spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Root => "root",
            NodeKind::Annotation => "annotation",
            NodeKind::Python => "python",
            NodeKind::Op => "op",
            NodeKind::Graph => "graph",
            NodeKind::NoLaunch => "no_launch",
            NodeKind::Place => "place",
            NodeKind::Kernel => "kernel",
        }
    }
}

/// One node of the call-path tree.
#[derive(Debug, Clone)]
pub struct Node {
    /// Parent node (the root is its own parent).
    pub parent: u32,
    /// What the node is.
    pub kind: NodeKind,
    /// Index into [`CallPaths::labels`].
    pub label: u32,
    /// GPU time of the kernels placed on this node itself, per phase (ns; only kernel nodes have any).
    pub self_ns: [i64; PHASES],
    /// Kernels placed on this node.
    pub kernels: u32,
    /// The first GPU row placed on this node (a kernel node's first kernel), or `NONE`.
    pub first_row: u32,
}

/// The call-path tree of a trace. Node 0 is the root; a node comes after its parent.
#[derive(Debug, Clone)]
pub struct CallPaths {
    /// Every node, each after its parent.
    pub nodes: Vec<Node>,
    /// Node names (shared by nodes with the same name).
    pub labels: Vec<String>,
    /// Kernels with no launch, and kernels replayed from a graph (placed under their launch).
    pub no_launch: usize,
    /// Kernels replayed from a graph, placed under their graph launch.
    pub replayed: usize,
}

impl CallPaths {
    /// Name of node `n`.
    pub fn name(&self, n: usize) -> &str {
        &self.labels[self.nodes[n].label as usize]
    }
    /// Each node's inclusive time per phase (itself and everything under it).
    pub fn totals(&self) -> Vec<[i64; PHASES]> {
        let mut t: Vec<[i64; PHASES]> = self.nodes.iter().map(|n| n.self_ns).collect();
        for i in (1..self.nodes.len()).rev() {
            let (p, own) = (self.nodes[i].parent as usize, t[i]);
            for (sum, x) in t[p].iter_mut().zip(own) {
                *sum = sum.saturating_add(x);
            }
        }
        t
    }
    /// Depth of each node (the root 0).
    pub fn depths(&self) -> Vec<u32> {
        let mut d = vec![0u32; self.nodes.len()];
        for i in 1..self.nodes.len() {
            d[i] = d[self.nodes[i].parent as usize] + 1;
        }
        d
    }
    /// The path of node `n` from the root's child down, as names.
    pub fn path(&self, mut n: usize) -> Vec<&str> {
        let mut out = Vec::new();
        while n != 0 {
            out.push(self.name(n));
            n = self.nodes[n].parent as usize;
        }
        out.reverse();
        out
    }
    /// Folded stacks (`frame;frame;kernel weight`, weight in ns of GPU time), as inferno and
    /// speedscope read them: one line per kernel node with time in `phase` (all phases: `None`).
    /// A `;` inside a name becomes `:` (it separates frames).
    pub fn folded(&self, phase: Option<Phase>) -> Vec<(String, i64)> {
        let mut out = Vec::new();
        for (i, n) in self.nodes.iter().enumerate() {
            let w: i64 = match phase {
                Some(p) => n.self_ns[p as usize],
                None => crate::support::sat::SatSum::sat_sum(n.self_ns.iter().copied()),
            };
            if w > 0 {
                let path: Vec<String> = self.path(i).iter().map(|s| s.replace(';', ":")).collect();
                out.push((path.join(";"), w));
            }
        }
        out
    }
}

/// A name as a node shows it: step numbers and object addresses dropped, so steps add up.
pub fn node_label(name: &str) -> std::borrow::Cow<'_, str> {
    if let Some(rest) = name.strip_prefix("ProfilerStep#") {
        if rest.bytes().all(|b| b.is_ascii_digit()) {
            return "ProfilerStep#".into();
        }
    }
    if let Some(at) = name.find(" at 0x") {
        if name.ends_with('>') {
            return format!("{}>", &name[..at]).into();
        }
    }
    generated_fold(name)
}

/// A name with what a compiler generated folded, so two recordings of one compiled model put the
/// same code under the same name: an Inductor graph's hash (`## Call CompiledFxGraph f… ##`), a
/// module Inductor wrote (`/tmp/torchinductor_<user>/zn/c….py(16165): call` is
/// `torchinductor/<generated>.py: call`) and a Triton kernel's trailing generated number
/// (`triton_poi_fused_add_copy__22` is `triton_poi_fused_add_copy__#`).
pub fn generated_fold(name: &str) -> std::borrow::Cow<'_, str> {
    if let Some(rest) = name.strip_prefix("## Call CompiledFxGraph ") {
        if rest.ends_with(" ##") {
            return "## Call CompiledFxGraph ##".into();
        }
    }
    if let Some(at) = name.find("torchinductor_") {
        if let Some(py) = name[at..].find(".py(") {
            let tail = &name[at + py + 4..];
            let function = tail.split_once("): ").map_or("", |(_, f)| f);
            return format!("torchinductor/<generated>.py: {function}").into();
        }
    }
    if name.starts_with("triton_") {
        let digits = name.len() - name.bytes().rev().take_while(u8::is_ascii_digit).count();
        if digits < name.len() && name[..digits].ends_with('_') {
            return format!("{}#", &name[..digits]).into();
        }
    }
    name.into()
}

/// Builds the tree.
struct Builder<'a> {
    a: &'a Base,
    out: CallPaths,
    /// (parent, label) → node.
    children: FastMap<(u32, u32), u32>,
    /// Label of each trace name id (interned once), or `u32::MAX` when not yet seen.
    label_of_name: Vec<u32>,
    /// Synthetic labels by text.
    label_of_text: FastMap<String, u32>,
    /// Node of each CPU range (op, frame, annotation), or `u32::MAX`, placed under the node
    /// `under_of_op` holds (the root, or a phase and layer in traces without stacks; a range met
    /// under another node is placed again).
    node_of_op: Vec<u32>,
    under_of_op: Vec<u32>,
    /// Scratch: the ranges of one chain.
    chain: Vec<u32>,
    /// Node of (node above, phase, layer).
    layer_nodes: FastMap<(u32, u8, u32), u32>,
}

impl Builder<'_> {
    fn name_label(&mut self, id: NameId) -> u32 {
        let slot = self.label_of_name[id as usize];
        if slot != u32::MAX {
            return slot;
        }
        let text = node_label(self.a.trace.name(id)).into_owned();
        let l = self.text_label(&text);
        self.label_of_name[id as usize] = l;
        l
    }

    fn text_label(&mut self, text: &str) -> u32 {
        if let Some(&l) = self.label_of_text.get(text) {
            return l;
        }
        let l = self.out.labels.len() as u32;
        self.out.labels.push(text.to_string());
        self.label_of_text.insert(text.to_string(), l);
        l
    }

    fn child(&mut self, parent: u32, kind: NodeKind, label: u32) -> u32 {
        if let Some(&n) = self.children.get(&(parent, label)) {
            return n;
        }
        let n = self.out.nodes.len() as u32;
        self.out.nodes.push(Node { parent, kind, label, self_ns: [0; PHASES], kernels: 0, first_row: NONE });
        self.children.insert((parent, label), n);
        n
    }

    fn placed(&self, under: u32, op: u32) -> u32 {
        if self.under_of_op[op as usize] == under {
            self.node_of_op[op as usize]
        } else {
            u32::MAX
        }
    }

    /// The node of CPU range `op` under node `under`: its parents' path, then itself.
    fn op_node(&mut self, under: u32, op: u32) -> u32 {
        let ops = &self.a.trace.ops;
        // Ranges up to the first one placed already (or the top).
        let mut chain = std::mem::take(&mut self.chain);
        chain.clear();
        let mut cur = op;
        let mut top = under;
        while cur != NONE {
            let placed = self.placed(under, cur);
            if placed != u32::MAX {
                top = placed;
                break;
            }
            chain.push(cur);
            cur = ops.parent[cur as usize];
        }
        for &r in chain.iter().rev() {
            let kind = match ops.kind[r as usize] {
                OpKind::CpuOp => NodeKind::Op,
                OpKind::UserAnnotation => NodeKind::Annotation,
                OpKind::PythonFunction => NodeKind::Python,
            };
            let label = self.name_label(ops.name[r as usize]);
            top = self.child(top, kind, label);
            self.node_of_op[r as usize] = top;
            self.under_of_op[r as usize] = under;
        }
        self.chain = chain;
        top
    }

    /// The node of a phase and a layer under `under` (`decode` → `layer 3`).
    fn phase_and_layer(&mut self, under: u32, phase: Phase, layer: u32) -> u32 {
        if let Some(&n) = self.layer_nodes.get(&(under, phase as u8, layer)) {
            return n;
        }
        let p = self.text_label(phase.as_str());
        let node = self.child(under, NodeKind::Place, p);
        let text = if layer == NONE { "outside the layers".to_string() } else { format!("layer {layer}") };
        let l = self.text_label(&text);
        let n = self.child(node, NodeKind::Place, l);
        self.layer_nodes.insert((under, phase as u8, layer), n);
        n
    }

    /// The innermost range a launch ran in: the deeper of its CPU op and its Python frame.
    fn innermost(&self, launch: usize) -> u32 {
        let l = &self.a.trace.launches;
        let ops = &self.a.trace.ops;
        match (l.cpu_op[launch], l.python[launch]) {
            (NONE, p) => p,
            (o, NONE) => o,
            (o, p) => {
                let key = |r: u32| (ops.ts[r as usize], std::cmp::Reverse(ops.dur[r as usize]));
                if key(p) > key(o) {
                    p
                } else {
                    o
                }
            }
        }
    }
}

/// The call-path tree of `a`'s kernels.
pub fn call_paths(a: &Base) -> CallPaths {
    let t = &a.trace;
    let g = &t.gpu;
    let l = &t.launches;
    let mut b = Builder {
        a,
        out: CallPaths {
            nodes: vec![Node { parent: 0, kind: NodeKind::Root, label: 0, self_ns: [0; PHASES], kernels: 0, first_row: NONE }],
            labels: vec!["all".to_string()],
            no_launch: 0,
            replayed: 0,
        },
        children: FastMap::default(),
        label_of_name: vec![u32::MAX; t.names.len()],
        label_of_text: FastMap::default(),
        node_of_op: vec![u32::MAX; t.ops.len()],
        under_of_op: vec![0; t.ops.len()],
        chain: Vec::new(),
        layer_nodes: FastMap::default(),
    };
    let no_launch = b.text_label("(no launch)");
    // Without Python frames, paths start at the phase and the layer (the op chains alone would
    // merge every layer's ops).
    let stacks = t.ops.kind.contains(&OpKind::PythonFunction);
    let mut graph_labels: FastMap<NameId, u32> = FastMap::default();
    for r in 0..g.len() {
        if g.kind[r] != GpuKind::Kernel {
            continue;
        }
        let phase = a.phases.phase_of_row.get(r).copied().flatten().unwrap_or(Phase::Unknown);
        let layer = a.layers.layer_of_row.get(r).copied().unwrap_or(NONE);
        let launch = g.launch[r];
        let parent = if launch != NONE || g.cpu_op[r] != NONE {
            let under = if stacks { 0 } else { b.phase_and_layer(0, phase, layer) };
            let mut node = under;
            if launch != NONE {
                let inner = b.innermost(launch as usize);
                if inner != NONE {
                    node = b.op_node(under, inner);
                }
                if l.is_graph[launch as usize] {
                    b.out.replayed += 1;
                    let name = l.name[launch as usize];
                    let label = *graph_labels.entry(name).or_insert_with(|| {
                        let text = format!("graph replay ({})", t.name(name));
                        b.text_label(&text)
                    });
                    node = b.child(node, NodeKind::Graph, label);
                    // With a capture trace, the op that dispatched it while the graph was captured
                    // (and that op's own path in the capture) sits under the replay.
                    let captured = t.graphs.from.get(r) == Some(&crate::model::graphs::OpFrom::Capture);
                    if captured && g.cpu_op[r] != NONE {
                        node = b.op_node(node, g.cpu_op[r]);
                    }
                }
            } else {
                node = b.op_node(under, g.cpu_op[r]);
            }
            node
        } else {
            b.out.no_launch += 1;
            let top = b.child(0, NodeKind::NoLaunch, no_launch);
            b.phase_and_layer(top, phase, layer)
        };
        let label = b.name_label(g.name[r]);
        let leaf = b.child(parent, NodeKind::Kernel, label) as usize;
        let node = &mut b.out.nodes[leaf];
        node.self_ns[phase as usize] = node.self_ns[phase as usize].saturating_add(g.dur[r]);
        node.kernels += 1;
        if node.first_row == NONE {
            node.first_row = r as u32;
        }
    }
    b.out
}

#[cfg(test)]
mod tests {
    use super::node_label;

    #[test]
    fn step_numbers_and_addresses_are_folded() {
        assert_eq!(node_label("ProfilerStep#12"), "ProfilerStep#");
        assert_eq!(node_label("ProfilerStep#x"), "ProfilerStep#x");
        assert_eq!(
            node_label("<built-in method copy_ of Tensor object at 0x7ed6e00c44a0>"),
            "<built-in method copy_ of Tensor object>"
        );
        assert_eq!(node_label("aten::mm"), "aten::mm");
        assert_eq!(
            node_label("## Call CompiledFxGraph fjs75i4jmhjizyb52gwp7gln7sgi42fcmh5xdwningderuqcuslv ##"),
            "## Call CompiledFxGraph ##"
        );
        assert_eq!(
            node_label("/tmp/torchinductor_root/dn/cdniggnbpjo6ck7jj7d4oel3kskalexpxacrci3ow345jwe33wgw.py(16165): call"),
            "torchinductor/<generated>.py: call"
        );
        assert_eq!(
            node_label("triton_poi_fused__to_copy_div_empty_like_zeros_20"),
            "triton_poi_fused__to_copy_div_empty_like_zeros_#"
        );
        assert_eq!(node_label("triton_poi_fused_add_copy__22"), "triton_poi_fused_add_copy__#");
        assert_eq!(node_label("triton_kernel"), "triton_kernel");
    }
}
