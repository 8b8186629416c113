//! Python frames from the `Call stack` argument. Kineto of 2021 (PyTorch 1.8–1.9, `with_stack=True`)
//! wrote no `python_function` events: each CPU op carried its Python stack as text instead,
//! `file.py(line): function` frames innermost first, separated by `;`. This turns those stacks into
//! the Python frame ranges later profilers write, so call paths, `sources`, the Code view and the
//! hover read them as they read any `with_stack` trace.
//!
//! A stack says which frames were live when its op started, not when they began or ended. On each
//! thread, walking the ops in time order, a frame opens at the first op whose stack holds it (at
//! the same depth, under the same outer frames), stays open while the following ops' stacks hold
//! it, and closes at the start of the first op whose stack does not (or at the end of the last op
//! under it, if that came first). Ops without a stack (another thread's backward) neither open nor
//! close frames. One function called twice in a row from the same line reads as one frame: the
//! stacks cannot tell the calls apart.

use super::{CpuOp, FastMap, NameId, OpKind, Trace};

/// Adds a Python frame range to `t.ops` for every frame of the ops' `Call stack` arguments, unless
/// the trace has Python frames of its own (those are what the profiler measured: they win).
pub(super) fn frames_from_call_stacks(t: &mut Trace) {
    if t.call_stacks.is_empty() || t.ops.kind.contains(&OpKind::PythonFunction) {
        return;
    }
    let mut frames_of: FastMap<NameId, Vec<NameId>> = FastMap::default();
    // (thread, start, longer first, op, stack) for each op with a stack: outer ops first.
    let mut order: Vec<(u32, i64, i64, u32, NameId)> = Vec::with_capacity(t.call_stacks.len());
    for (&op, &stack) in t.call_stacks.op.iter().zip(&t.call_stacks.stack) {
        let o = op as usize;
        order.push((t.ops.thread[o], t.ops.ts[o], t.ops.dur[o].saturating_neg(), op, stack));
        frames_of.entry(stack).or_insert_with(|| {
            let text = t.names.resolve(stack).to_owned();
            text.rsplit(';').map(str::trim).filter(|f| !f.is_empty()).map(|f| t.names.intern(f)).collect()
        });
    }
    order.sort_unstable();
    let mut made: Vec<Made> = Vec::new();
    let mut open: Vec<Made> = Vec::new();
    let mut thread = u32::MAX;
    for &(th, start, _, op, stack) in &order {
        if th != thread {
            made.append(&mut open);
            thread = th;
        }
        let end = start.saturating_add(t.ops.dur[op as usize]);
        let frames = &frames_of[&stack];
        let shared = open.iter().zip(frames).take_while(|(o, &f)| o.name == f).count();
        for mut closed in open.drain(shared..) {
            closed.end = closed.end.min(start).max(closed.start);
            made.push(closed);
        }
        for o in &mut open {
            o.end = o.end.max(end);
        }
        let event_index = t.ops.event_index[op as usize];
        for (depth, &name) in frames.iter().enumerate().skip(shared) {
            open.push(Made { thread: th, start, end, depth: depth as u32, name, event_index });
        }
    }
    made.append(&mut open);
    // Outer frames first, so that a frame and the op it spans exactly nest the right way round.
    made.sort_unstable_by_key(|m| (m.thread, m.start, m.start.saturating_sub(m.end), m.depth));
    for m in made {
        let dur = m.end.saturating_sub(m.start);
        t.ops.push(CpuOp::bare(OpKind::PythonFunction, m.name, m.start, dur, m.thread, m.event_index));
    }
}

/// A frame being made: open while the ops' stacks hold it.
struct Made {
    thread: u32,
    start: i64,
    end: i64,
    depth: u32,
    name: NameId,
    event_index: u32,
}
