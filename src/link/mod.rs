//! Links the model: GPU events ↔ runtime launches ↔ CPU ops, and CPU ranges into trees.
//!
//! - GPU event → launch: by `correlation`; failing that, by the `ac2g` flow whose finish sits
//!   on the GPU event and whose start sits on a runtime call (of two, the later: the call that
//!   issued a queued task; the earlier gives it its op). A graph launch shares its
//!   correlation with every kernel it replays, so all of them link to it.
//! - CPU ranges → parent: time nesting per thread (innermost enclosing range).
//! - Launch → CPU op: the innermost enclosing range of kind `cpu_op` on the same thread,
//!   and the innermost python frame.
//! - GPU event → CPU op: its launch's op; failing that, the `cpu_op` with the same `External id`.

pub mod graphs;
mod id_index;

use crate::model::FastMap as HashMap;
use crate::model::{CpuOps, FlowEnds, GpuEvents, Launches, OpKind, ThreadInfo, Trace, NONE};
use crate::support::threads::both;
use id_index::IdIndex;

/// Fills every link column of `trace`, then gives kernels replayed from graphs the ops of eager
/// stretches that ran the same kernels ([`graphs`]).
pub fn link(trace: &mut Trace) {
    link_with_captures(trace, &[]);
}

/// [`link`], giving replayed kernels the ops that dispatched them in `captures` first.
pub fn link_with_captures(trace: &mut Trace, captures: &[graphs::Capture]) {
    link_model(trace);
    graphs::attribute(trace, captures);
}

/// Fills every link column of `trace`.
fn link_model(trace: &mut Trace) {
    // The two first steps write disjoint columns (ranges' parents and launches' ops; GPU events'
    // launches), taken out here so each step borrows only what it reads and writes.
    let mut launch_op = std::mem::take(&mut trace.launches.cpu_op);
    let mut launch_python = std::mem::take(&mut trace.launches.python);
    let mut gpu_launch = std::mem::take(&mut trace.gpu.launch);
    let mut queued_by = Vec::new();
    {
        let t = &mut *trace;
        let nthreads = t.threads.len();
        let rows = t.gpu.len() + t.ops.len() + t.launches.len();
        // Frames made from `Call stack` arguments span their ops exactly: they must nest outside.
        let frames_first = !t.call_stacks.is_empty();
        let nest =
            || nest_ranges_and_launches(&mut t.ops, &t.launches, nthreads, frames_first, &mut launch_op, &mut launch_python);
        let flows = Flows { starts: &t.flow_starts, finishes: &t.flow_finishes, threads: &t.threads };
        let gpu_to_launches = || queued_by = link_gpu_to_launches(&t.gpu, &t.launches, &flows, &mut gpu_launch);
        both(rows, gpu_to_launches, nest);
    }
    trace.gpu.launch = gpu_launch;
    ops_of_queued(&trace.gpu, &queued_by, &mut launch_op, &mut launch_python);
    trace.launches.cpu_op = launch_op;
    trace.launches.python = launch_python;
    link_gpu_to_ops(trace);
}

/// What the flow fallback of [`link_gpu_to_launches`] reads.
struct Flows<'a> {
    starts: &'a FlowEnds,
    finishes: &'a FlowEnds,
    threads: &'a [ThreadInfo],
}

/// Fills `launch_of` (each GPU event's launch) by correlation, then by launch flows. Where two
/// flows end on one device task (torch_npu: one from the op that put the task in its queue, one
/// from the runtime call the queue's worker made), the later call is its launch: the one that
/// issued it. The earlier is returned beside the row (`(row, earlier launch)`), for its op.
fn link_gpu_to_launches(g: &GpuEvents, l: &Launches, flows: &Flows, launch_of: &mut [u32]) -> Vec<(u32, u32)> {
    let by_corr = IdIndex::build(l.correlation.iter().enumerate().map(|(i, &c)| (c, i as u32)));
    let mut missing = Vec::new();
    for (i, (launch, &correlation)) in launch_of.iter_mut().zip(&g.correlation).enumerate() {
        match by_corr.get(correlation) {
            Some(li) => *launch = li,
            None => missing.push(i),
        }
    }
    let mut queued_by = Vec::new();
    if missing.is_empty() || flows.finishes.is_empty() {
        return queued_by;
    }
    // Flow fallback: finish (stream, ts) → ids → start (pid, tid, ts) → launch on that thread.
    let f = flows.finishes;
    let mut finishes: HashMap<(i64, i64), [i64; 2]> = HashMap::default();
    for i in 0..f.len() {
        let ids = finishes.entry((f.tid[i], f.ts[i])).or_insert([f.id[i], f.id[i]]);
        ids[1] = f.id[i];
    }
    let s = flows.starts;
    let starts: HashMap<i64, (i64, i64, i64)> = (0..s.len()).map(|i| (s.id[i], (s.pid[i], s.tid[i], s.ts[i]))).collect();
    // The call a flow starts on: the innermost call of its thread around the start. Kineto writes
    // the start at the call's own start; torch_npu's `HostToDevice` inside the call, at the moment
    // an `AscendCL@aclnnMm` call submits its task.
    let mut by_thread: HashMap<(i64, i64), Vec<u32>> = HashMap::default();
    for i in 0..l.len() {
        let t = &flows.threads[l.thread[i] as usize];
        by_thread.entry((t.pid, t.tid)).or_default().push(i as u32);
    }
    for calls in by_thread.values_mut() {
        calls.sort_by_key(|&c| (l.ts[c as usize], c));
    }
    let around = |&(pid, tid, ts): &(i64, i64, i64)| -> Option<u32> {
        let calls = by_thread.get(&(pid, tid))?;
        let before = calls.partition_point(|&c| l.ts[c as usize] <= ts);
        calls[..before].iter().rev().take(64).find(|&&c| l.ts[c as usize].saturating_add(l.dur[c as usize]) >= ts).copied()
    };
    let launch_of_flow = |id: &i64| starts.get(id).and_then(around);
    for i in missing {
        let Some(ids) = finishes.get(&(g.stream[i] as i64, g.ts[i])) else { continue };
        let mut found: Vec<u32> = ids.iter().filter_map(launch_of_flow).collect();
        found.sort_by_key(|&li| (l.ts[li as usize], li));
        found.dedup();
        if let Some(&last) = found.last() {
            launch_of[i] = last;
            if found.len() > 1 {
                queued_by.push((i as u32, found[0]));
            }
        }
    }
    queued_by
}

/// Gives the runtime call that issued a queued task the op (and Python frame) that queued it,
/// where the call has none of its own (torch_npu's queue worker runs outside every op).
fn ops_of_queued(g: &GpuEvents, queued_by: &[(u32, u32)], launch_op: &mut [u32], launch_python: &mut [u32]) {
    for &(row, queued) in queued_by {
        let issued = g.launch[row as usize] as usize;
        if launch_op[issued] == NONE {
            launch_op[issued] = launch_op[queued as usize];
            launch_python[issued] = launch_python[queued as usize];
        }
    }
}

fn link_gpu_to_ops(trace: &mut Trace) {
    let g = &mut trace.gpu;
    let launches = &trace.launches;
    let mut missing = Vec::new();
    for i in 0..g.len() {
        let li = g.launch[i];
        let via_launch = if li != NONE { launches.cpu_op[li as usize] } else { NONE };
        g.cpu_op[i] = via_launch;
        // A graph replay without an op stays without one; other kernels try their External id.
        if via_launch == NONE && (li == NONE || !launches.is_graph[li as usize]) {
            missing.push(i);
        }
    }
    if missing.is_empty() {
        return;
    }
    // The External id index is built only when some kernel needs it (most traces: none).
    let ops = &trace.ops;
    let cpu_ops = (0..ops.len()).filter(|&i| ops.kind[i] == OpKind::CpuOp).map(|i| (ops.external_id[i], i as u32));
    let by_external = IdIndex::build(cpu_ops);
    for i in missing {
        g.cpu_op[i] = by_external.get(g.external_id[i]).unwrap_or(NONE);
    }
}

/// Rows of each thread, in row order: one flat list cut by thread (a counting sort, no list per thread).
fn rows_by_thread(thread: &[u32], nthreads: usize) -> (Vec<u32>, Vec<usize>) {
    let mut start = vec![0usize; nthreads + 1];
    for &t in thread {
        start[t as usize + 1] += 1;
    }
    for t in 0..nthreads {
        start[t + 1] += start[t];
    }
    let mut next = start.clone();
    let mut rows = vec![0u32; thread.len()];
    for (i, &t) in thread.iter().enumerate() {
        rows[next[t as usize]] = i as u32;
        next[t as usize] += 1;
    }
    (rows, start)
}

/// One pass per thread over ranges and launches in time order with a stack of open ranges: fills
/// each range's parent, and each launch's innermost CPU op (`launch_op`) and python frame
/// (`launch_python`).
fn nest_ranges_and_launches(
    ops: &mut CpuOps,
    launches: &Launches,
    nthreads: usize,
    frames_first: bool,
    launch_op: &mut [u32],
    launch_python: &mut [u32],
) {
    let (op_rows, op_start) = rows_by_thread(&ops.thread, nthreads);
    let (launch_rows, launch_start) = rows_by_thread(&launches.thread, nthreads);
    let mut attached = Attached { op: launch_op, python: launch_python };
    let mut stack: Vec<u32> = Vec::new();
    let (mut sorted_ops, mut sorted_launches): (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
    for t in 0..nthreads {
        // Outer ranges first: earlier start, then longer duration, then (where frames were made
        // from `Call stack` arguments) a Python frame before the op it spans exactly; else the
        // order written. Traces usually list them in this
        // order already (checked first: then nothing is sorted or copied). Otherwise sorting
        // (key, index) pairs keeps the keys contiguous, much faster than sorting indices by column lookups.
        let thread_ops = &op_rows[op_start[t]..op_start[t + 1]];
        let op_key = |i: u32| {
            let o = i as usize;
            (ops.ts[o], ops.dur[o].saturating_neg(), frames_first && ops.kind[o] != OpKind::PythonFunction, i)
        };
        let op_order: &[u32] = if thread_ops.windows(2).all(|w| op_key(w[0]) <= op_key(w[1])) {
            thread_ops
        } else {
            let mut keyed: Vec<(i64, i64, bool, u32)> = thread_ops.iter().map(|&i| op_key(i)).collect();
            keyed.sort_unstable();
            sorted_ops.clear();
            sorted_ops.extend(keyed.into_iter().map(|k| k.3));
            &sorted_ops
        };
        let thread_launches = &launch_rows[launch_start[t]..launch_start[t + 1]];
        let launch_key = |i: u32| (launches.ts[i as usize], i);
        let lis: &[u32] = if thread_launches.windows(2).all(|w| launch_key(w[0]) <= launch_key(w[1])) {
            thread_launches
        } else {
            let mut keyed: Vec<(i64, u32)> = thread_launches.iter().map(|&i| launch_key(i)).collect();
            keyed.sort_unstable();
            sorted_launches.clear();
            sorted_launches.extend(keyed.into_iter().map(|k| k.1));
            &sorted_launches
        };
        stack.clear();
        let mut li = 0;
        for &o in op_order {
            let o = o as usize;
            let (start, end) = (ops.ts[o], ops.ts[o] + ops.dur[o]);
            // Launches that start before this range are resolved against the current stack.
            while li < lis.len() && launches.ts[lis[li] as usize] < start {
                attach_launch(ops, launches, &mut attached, &mut stack, lis[li] as usize);
                li += 1;
            }
            while let Some(&top) = stack.last() {
                let top_end = ops.ts[top as usize] + ops.dur[top as usize];
                // Pop ranges that ended, and ranges this one outlives (partial overlap → sibling).
                if top_end <= start || top_end < end {
                    stack.pop();
                } else {
                    break;
                }
            }
            ops.parent[o] = stack.last().copied().unwrap_or(NONE);
            stack.push(o as u32);
        }
        while li < lis.len() {
            attach_launch(ops, launches, &mut attached, &mut stack, lis[li] as usize);
            li += 1;
        }
    }
}

/// Each launch's innermost enclosing CPU op and python frame, being filled.
struct Attached<'a> {
    op: &'a mut [u32],
    python: &'a mut [u32],
}

fn attach_launch(ops: &CpuOps, launches: &Launches, attached: &mut Attached, stack: &mut Vec<u32>, l: usize) {
    let ts = launches.ts[l];
    while let Some(&top) = stack.last() {
        if ops.ts[top as usize] + ops.dur[top as usize] < ts {
            stack.pop();
        } else {
            break;
        }
    }
    for &o in stack.iter().rev() {
        let o = o as usize;
        match ops.kind[o] {
            OpKind::CpuOp if attached.op[l] == NONE => attached.op[l] = o as u32,
            OpKind::PythonFunction if attached.python[l] == NONE => attached.python[l] = o as u32,
            _ => {}
        }
        if attached.op[l] != NONE && attached.python[l] != NONE {
            break;
        }
    }
}
