//! Copies the CPU ops that dispatched replayed kernels into the execution trace: one copy per
//! graph launch (so an op replayed 24 times counts 24 calls), on a thread of their own, their
//! times mapped into the replay's span on the GPU, parents kept within the copy and the top
//! hung under the op that made the graph launch.

use crate::model::{CpuOp, FastMap, NameId, OpKind, ThreadInfo, Trace, NONE, NO_NAME};

/// What of a source op is copied.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Carry {
    /// Everything: names, shapes, Python frames and annotations around it (a capture).
    Whole,
    /// The op and its enclosing ops' names, no shapes and no frames (an eager stretch: its shapes
    /// belong to another step).
    NamesOnly,
}

/// The source of the copies: a capture trace, or the execution trace itself (for eager stretches).
pub struct Source<'a> {
    /// The trace the ops are read from; `None` for the destination itself.
    pub trace: Option<&'a Trace>,
    /// Only ranges inside this window (ns in the source's clock) are copied.
    pub window: (i64, i64),
    /// What is copied.
    pub carry: Carry,
}

/// Ops to add to the execution trace, and the rows that will point at them.
#[derive(Default)]
pub struct Copies {
    /// New op rows, in order; their `parent` is an index into this list, or [`NONE`] for a top
    /// one (hung under `top_parent` when added).
    pub ops: Vec<CpuOp>,
    /// Per new op: its parent among `ops`.
    pub parents: Vec<u32>,
    /// Per new op: the op the top of its chain hangs under in the execution trace.
    pub top_parent: Vec<u32>,
    /// `(gpu row, index into ops)`.
    pub rows: Vec<(u32, u32)>,
    /// Name translation from a capture trace's ids.
    names: FastMap<NameId, NameId>,
}

/// One graph launch's copy in the making.
pub struct LaunchCopy<'s> {
    source: &'s Source<'s>,
    /// Source op → its copy.
    copied: FastMap<u32, u32>,
    /// The mapped time span: source `window` onto `(gpu_from, gpu_to)`.
    onto: (i64, i64),
    /// The op that made the graph launch (parent of the copy's tops).
    under: u32,
}

impl<'s> LaunchCopy<'s> {
    /// A copy from `source` mapped onto the GPU span `onto`, hung under `under`.
    pub fn new(source: &'s Source<'s>, onto: (i64, i64), under: u32) -> Self {
        LaunchCopy { source, copied: FastMap::default(), onto, under }
    }

    fn map_time(&self, t: i64) -> i64 {
        let (w0, w1) = self.source.window;
        let (g0, g1) = self.onto;
        if w1 <= w0 {
            return g0;
        }
        let f = (t.clamp(w0, w1) - w0) as i128 * (g1 - g0) as i128 / (w1 - w0) as i128;
        g0 + f as i64
    }

    /// Gives GPU row `row` a copy of source op `op` (and of the ranges around it inside the window).
    pub fn attribute(&mut self, row: u32, op: u32, dest: &mut Trace, copies: &mut Copies, thread: u32) {
        if let Some(c) = self.copy(op, dest, copies, thread) {
            copies.rows.push((row, c));
        }
    }

    /// Copies `op` and its enclosing ranges inside the window; returns the copy of `op`.
    fn copy(&mut self, op: u32, dest: &mut Trace, copies: &mut Copies, thread: u32) -> Option<u32> {
        if let Some(&c) = self.copied.get(&op) {
            return Some(c);
        }
        let src: &Trace = self.source.trace.unwrap_or(&*dest);
        let o = &src.ops;
        let i = op as usize;
        let (w0, w1) = self.source.window;
        let inside = o.ts[i] >= w0 && o.end(i) <= w1;
        let wanted = match self.source.carry {
            Carry::Whole => true,
            Carry::NamesOnly => o.kind[i] == OpKind::CpuOp,
        };
        if !inside || !wanted {
            return None;
        }
        let (ts, end) = (self.map_time(o.ts[i]), self.map_time(o.end(i)));
        let mut row = CpuOp::bare(o.kind[i], o.name[i], ts, end - ts, thread, u32::MAX);
        if self.source.carry == Carry::Whole {
            (row.input_dims, row.input_types, row.concrete_inputs) = (o.input_dims[i], o.input_types[i], o.concrete_inputs[i]);
        }
        let parent_src = o.parent[i];
        // A capture's names are its own ids: interned again in the execution trace.
        if let Some(cap) = self.source.trace {
            let mut tr = |id: NameId| translate(cap, dest, &mut copies.names, id);
            (row.name, row.input_dims, row.input_types, row.concrete_inputs) =
                (tr(row.name), tr(row.input_dims), tr(row.input_types), tr(row.concrete_inputs));
        }
        let parent = if parent_src == NONE { None } else { self.copy(parent_src, dest, copies, thread) };
        let c = copies.ops.len() as u32;
        copies.ops.push(row);
        copies.parents.push(parent.unwrap_or(NONE));
        copies.top_parent.push(self.under);
        self.copied.insert(op, c);
        Some(c)
    }
}

/// `id` of `from` as an id of `to`'s names.
fn translate(from: &Trace, to: &mut Trace, cache: &mut FastMap<NameId, NameId>, id: NameId) -> NameId {
    if id == NO_NAME {
        return NO_NAME;
    }
    *cache.entry(id).or_insert_with(|| to.names.intern(from.name(id)))
}

impl Copies {
    /// Adds the copies to `t` on their threads (already in `t.threads`) and points the rows at
    /// them; returns how many rows were given an op.
    pub fn apply(self, t: &mut Trace, from: crate::model::graphs::OpFrom) -> usize {
        let base = t.ops.len() as u32;
        for (k, op) in self.ops.into_iter().enumerate() {
            let p = self.parents[k];
            t.ops.push(op);
            let parent = if p == NONE { self.top_parent[k] } else { base + p };
            *t.ops.parent.last_mut().expect("pushed") = parent;
        }
        if t.graphs.from.len() < t.gpu.len() {
            t.graphs.from.resize(t.gpu.len(), crate::model::graphs::OpFrom::Launch);
        }
        for &(row, c) in &self.rows {
            t.gpu.cpu_op[row as usize] = base + c;
            t.graphs.from[row as usize] = from;
        }
        self.rows.len()
    }
}

/// A thread for the copies, named so a reader of the timeline knows what it is.
pub fn copies_thread(t: &mut Trace, pid: i64, name: &str) -> u32 {
    let id = t.names.intern(name);
    let tid = crate::model::text_id(id);
    if let Some(k) = t.threads.iter().position(|th| th.pid == pid && th.tid == tid) {
        return k as u32;
    }
    t.threads.push(ThreadInfo { pid, tid, process_name: NO_NAME, thread_name: id });
    (t.threads.len() - 1) as u32
}
