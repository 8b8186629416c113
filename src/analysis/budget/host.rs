//! What each thread that launches GPU work was doing, moment by moment: a flat, sorted list of
//! spans per thread, each either inside a **host activity** (the outermost recorded range, a CPU
//! op, annotation or Python frame, that issued no GPU work and lasted at least
//! [`MIN_HOST_ACTIVITY_NS`]) or **issuing** (inside ranges that issue GPU work: the dispatch of an
//! eager step). Time in no recorded range is in no span.
//!
//! A range *issues* when a runtime call that launched a GPU row (kernel, copy, fill) lies inside
//! it on its thread. Short ranges that issue nothing (`aten::view`, `aten::empty`) are part of the
//! dispatch around them, not an activity of their own: a replay removes them with the launches;
//! they are issuing spans, so that a thread's gaps between spans are time in nothing recorded.

use crate::model::{Trace, NONE};

/// A range that issues no GPU work is a host activity of its own only when it lasts at least this
/// long (ns); shorter ones are the dispatch between launches (an eager op's view, reshape or
/// allocation takes a few µs).
pub const MIN_HOST_ACTIVITY_NS: i64 = 50_000;

/// What the host was in during one span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostState {
    /// Inside this range (row of `trace.ops`), which issued no GPU work.
    Activity(u32),
    /// Inside ranges that issue GPU work, or inside a runtime call that launches it.
    Issuing,
    /// Inside a short range that issues nothing (under [`MIN_HOST_ACTIVITY_NS`]): the dispatch
    /// between launches, recorded.
    Dispatch,
}

/// One thread's spans: sorted, not overlapping.
#[derive(Debug, Clone, Default)]
pub struct ThreadSpans {
    /// Start of each span (ns).
    pub start: Vec<i64>,
    /// End of each span (ns).
    pub end: Vec<i64>,
    /// What the thread was in.
    pub state: Vec<HostState>,
    /// The outermost range each span began in (row of `trace.ops`; [`NONE`]: a runtime call
    /// outside every range).
    pub first_op: Vec<u32>,
    /// The outermost range each span ended in.
    pub last_op: Vec<u32>,
    /// The thread's ordinary dispatch gap (ns): nine in ten stretches between its spans are no
    /// longer (see `typical_gap`).
    pub typical_gap: i64,
}

/// Where a part of a walk lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece {
    /// Inside span `k`, in this state.
    In(HostState),
    /// In nothing recorded, in the gap that ends at span `k` (`k` = the span count: after the
    /// last span).
    Gap(usize),
}

impl ThreadSpans {
    fn push(&mut self, from: i64, to: i64, state: HostState, op: u32) {
        let from = self.end.last().map_or(from, |&e| from.max(e));
        if to <= from {
            return;
        }
        if let (Some(e), Some(s)) = (self.end.last_mut(), self.state.last()) {
            if *s == state && *e == from {
                *e = to;
                *self.last_op.last_mut().expect("one per span") = op;
                return;
            }
        }
        self.start.push(from);
        self.end.push(to);
        self.state.push(state);
        self.first_op.push(op);
        self.last_op.push(op);
    }

    /// The whole gap in nothing recorded that ends at span `k` ([`Piece::Gap`]): from the end of
    /// the span before (`None`: the thread's record begins with it) to the start of span `k`
    /// (`None`: after the last span).
    pub fn gap(&self, k: usize) -> (Option<i64>, Option<i64>) {
        (k.checked_sub(1).map(|p| self.end[p]), self.start.get(k).copied())
    }

    /// Calls `f(from, to, piece)` for every part of `[from, to)`, inside a span or in a gap
    /// between spans, in time order. `hint` is where the last walk on this thread began
    /// (`usize::MAX`: none); walks in time order step forward from it instead of searching.
    pub fn walk(&self, hint: &mut usize, from: i64, to: i64, mut f: impl FnMut(i64, i64, Piece)) {
        let mut k = if *hint != usize::MAX && *hint <= self.end.len() && (*hint == 0 || self.end[*hint - 1] <= from) {
            let mut k = *hint;
            while k < self.end.len() && self.end[k] <= from {
                k += 1;
            }
            k
        } else {
            self.end.partition_point(|&e| e <= from)
        };
        *hint = k;
        let mut at = from;
        while k < self.start.len() && self.start[k] < to {
            if self.start[k] > at {
                f(at, self.start[k], Piece::Gap(k));
            }
            f(self.start[k].max(from), self.end[k].min(to), Piece::In(self.state[k]));
            at = self.end[k].min(to);
            k += 1;
        }
        if at < to {
            f(at, to, Piece::Gap(k));
        }
    }
}

/// The ordinary gap between a thread's spans (ns): the 90th percentile of the stretches in
/// nothing recorded between them, 0 for a thread with fewer than two spans.
fn typical_gap(spans: &ThreadSpans) -> i64 {
    let mut gaps: Vec<i64> = (1..spans.start.len()).map(|k| spans.start[k] - spans.end[k - 1]).filter(|&g| g > 0).collect();
    if gaps.is_empty() {
        return 0;
    }
    let k = (gaps.len() * 9 / 10).min(gaps.len() - 1);
    *gaps.select_nth_unstable(k).1
}

/// The spans of every thread that launched GPU work (`None` for the others), by thread index.
pub fn host_spans(t: &Trace) -> Vec<Option<ThreadSpans>> {
    let (ops, l) = (&t.ops, &t.launches);
    let mut launched = vec![false; l.len()];
    for &c in &t.gpu.launch {
        if c != NONE {
            launched[c as usize] = true;
        }
    }
    let nthreads = t.threads.len();
    let mut launching = vec![false; nthreads];
    for (i, &yes) in launched.iter().enumerate() {
        if yes && (l.thread[i] as usize) < nthreads {
            launching[l.thread[i] as usize] = true;
        }
    }
    let mut op_rows: Vec<Vec<u32>> = vec![Vec::new(); nthreads];
    for o in 0..ops.len() {
        let th = ops.thread[o] as usize;
        if th < nthreads && launching[th] && ops.dur[o] > 0 {
            op_rows[th].push(o as u32);
        }
    }
    let mut call_rows: Vec<Vec<u32>> = vec![Vec::new(); nthreads];
    for (i, &yes) in launched.iter().enumerate() {
        if yes && (l.thread[i] as usize) < nthreads {
            call_rows[l.thread[i] as usize].push(i as u32);
        }
    }
    (0..nthreads).map(|th| launching[th].then(|| thread_spans(t, &mut op_rows[th], &mut call_rows[th]))).collect()
}

/// The spans of one thread from its ranges and its launching calls.
fn thread_spans(t: &Trace, rows: &mut [u32], calls: &mut [u32]) -> ThreadSpans {
    let (ops, l) = (&t.ops, &t.launches);
    // Outer ranges first: earlier start, then longer. Traces mostly list them so already (checked
    // first; otherwise (key, row) pairs are sorted, keeping the keys contiguous).
    let op_key = |o: u32| (ops.ts[o as usize], -ops.dur[o as usize], o);
    if !rows.windows(2).all(|w| op_key(w[0]) <= op_key(w[1])) {
        let mut keyed: Vec<(i64, i64, u32)> = rows.iter().map(|&o| op_key(o)).collect();
        // Nearly sorted as written: the stable sort finds the runs (unique keys: the same order).
        keyed.sort();
        for (r, k) in rows.iter_mut().zip(keyed) {
            *r = k.2;
        }
    }
    let call_key = |c: u32| (l.ts[c as usize], c);
    if !calls.windows(2).all(|w| call_key(w[0]) <= call_key(w[1])) {
        let mut keyed: Vec<(i64, u32)> = calls.iter().map(|&c| call_key(c)).collect();
        keyed.sort();
        for (c, k) in calls.iter_mut().zip(keyed) {
            *c = k.1;
        }
    }
    // Which ranges issue: the innermost open range at each launching call, then up the nesting.
    let mut issues = vec![false; rows.len()];
    let mut parent = vec![usize::MAX; rows.len()];
    let mut stack: Vec<usize> = Vec::new();
    let mut ci = 0;
    let end = |k: usize| ops.ts[rows[k] as usize].saturating_add(ops.dur[rows[k] as usize]);
    for k in 0..rows.len() {
        let start = ops.ts[rows[k] as usize];
        while ci < calls.len() && l.ts[calls[ci] as usize] < start {
            mark_call(&mut stack, &mut issues, l.ts[calls[ci] as usize], &end);
            ci += 1;
        }
        while let Some(&top) = stack.last() {
            if end(top) <= start || end(top) < end(k) {
                stack.pop();
            } else {
                break;
            }
        }
        parent[k] = stack.last().copied().unwrap_or(usize::MAX);
        stack.push(k);
    }
    while ci < calls.len() {
        mark_call(&mut stack, &mut issues, l.ts[calls[ci] as usize], &end);
        ci += 1;
    }
    for k in (0..rows.len()).rev() {
        if issues[k] && parent[k] != usize::MAX {
            issues[parent[k]] = true;
        }
    }
    // The flat spans: a sweep over the ranges (outer first) with the open issuing ranges.
    let mut out = ThreadSpans::default();
    let mut pos = i64::MIN;
    let mut covered_until = i64::MIN;
    let mut open: Vec<usize> = Vec::new();
    let mut calls_at = 0;
    let close_to = |open: &mut Vec<usize>, out: &mut ThreadSpans, pos: &mut i64, until: i64| {
        while let Some(&top) = open.last() {
            let e = end(top);
            if e > until {
                break;
            }
            out.push(*pos, e, HostState::Issuing, rows[open[0]]);
            *pos = (*pos).max(e);
            open.pop();
        }
    };
    for k in 0..rows.len() {
        let (start, stop) = (ops.ts[rows[k] as usize], end(k));
        if start < covered_until {
            continue;
        }
        close_to(&mut open, &mut out, &mut pos, start);
        // Launching calls outside every range are issuing time too.
        while calls_at < calls.len() && l.ts[calls[calls_at] as usize] < start {
            let c = calls[calls_at] as usize;
            if open.is_empty() {
                let to = l.ts[c].saturating_add(l.dur[c]).min(start);
                out.push(l.ts[c].max(pos), to, HostState::Issuing, NONE);
                pos = pos.max(to);
            }
            calls_at += 1;
        }
        if let Some(&outer) = open.first() {
            out.push(pos, start, HostState::Issuing, rows[outer]);
        }
        pos = pos.max(start);
        if issues[k] {
            open.push(k);
        } else if ops.dur[rows[k] as usize] >= MIN_HOST_ACTIVITY_NS {
            out.push(start, stop, HostState::Activity(rows[k]), rows[k]);
            pos = pos.max(stop);
            covered_until = stop;
        } else if open.is_empty() {
            // A short range that issues nothing is dispatch: recorded, so no gap in the record.
            out.push(start, stop, HostState::Dispatch, rows[k]);
            pos = pos.max(stop);
        }
    }
    close_to(&mut open, &mut out, &mut pos, i64::MAX);
    for &c in &calls[calls_at..] {
        let c = c as usize;
        out.push(l.ts[c].max(pos), l.ts[c].saturating_add(l.dur[c]), HostState::Issuing, NONE);
    }
    out.typical_gap = typical_gap(&out);
    out
}

/// Marks the innermost range open at `ts` (on `stack`) as issuing, popping the ranges that ended.
fn mark_call(stack: &mut Vec<usize>, issues: &mut [bool], ts: i64, end: &impl Fn(usize) -> i64) {
    while let Some(&top) = stack.last() {
        if end(top) < ts {
            stack.pop();
        } else {
            break;
        }
    }
    if let Some(&top) = stack.last() {
        issues[top] = true;
    }
}
