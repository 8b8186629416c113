//! The step budget: every nanosecond of every step on every device, accounted for once.
//!
//! A step is a pass's window on its device: from its first kernel's start to the next pass's
//! first kernel on the same device (the last pass: to its own end). A device where no pass was
//! found has one window, its capture (first GPU work to last). The window's time splits into rows
//! that add up to it exactly:
//!
//! - **busy**, by the category family of what ran ([`device`]); collectives no compute covers are
//!   **exposed_communication**, copies and fills nothing covers are **copy**;
//! - the idle before each GPU row, by what held it. The part before the row was issued (its
//!   launch call returned, plus the device's launch latency) is the host's, split by what the
//!   launching thread was in ([`host`]): a **host** activity (a range that issued no GPU work,
//!   named), **sync** (waiting in a synchronising call that returned in that idle, then issuing
//!   again or in nothing recorded), **launch** (issuing kernels one by one; inside the pass, time in
//!   nothing recorded too), or **between_steps** (after the pass's last kernel, in nothing
//!   recorded). The part after it
//!   was issued is **queued** (it waited on another stream, an event, a graph's replay or work
//!   the trace does not hold). A row with no launch in the trace leaves its idle **unlinked**
//!   inside a pass, **between_steps** after it.
//!
//! No two rows claim the same nanosecond: the device's busy spans are disjoint, and each idle
//! instant is the host's or the queue's, and the host's by one state of one thread.

pub mod device;
pub mod host;
pub mod syncs;

use crate::analysis::base::Base;
use crate::model::{NameId, NONE, NO_NAME};
use device::{Busy, DeviceTime};
use host::{HostState, Piece, ThreadSpans};
use syncs::Syncs;

/// What part of a step a row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// Compute kernels ran (one row per category family).
    Busy,
    /// Collectives ran with no compute beside them.
    ExposedCommunication,
    /// Copies or fills ran with nothing else beside them.
    Copy,
    /// Idle while the launching thread was in a named range that issued no GPU work.
    Host,
    /// Idle while the host issued the step's kernels one by one.
    Launch,
    /// Idle while the host waited in a synchronising call, then issued again after it returned.
    Sync,
    /// Idle with the next GPU row already issued.
    Queued,
    /// Idle after the pass's last kernel while the host was in nothing recorded.
    BetweenSteps,
    /// Idle before a GPU row whose launch the trace does not hold.
    Unlinked,
}

impl Part {
    /// Every part, in the order a step's rows are listed.
    pub const ALL: [Part; 9] = [
        Part::Busy,
        Part::ExposedCommunication,
        Part::Copy,
        Part::Host,
        Part::Launch,
        Part::Sync,
        Part::Queued,
        Part::BetweenSteps,
        Part::Unlinked,
    ];
    /// The part as tables spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Part::Busy => "busy",
            Part::ExposedCommunication => "exposed_communication",
            Part::Copy => "copy",
            Part::Host => "host",
            Part::Launch => "launch",
            Part::Sync => "sync",
            Part::Queued => "queued",
            Part::BetweenSteps => "between_steps",
            Part::Unlinked => "unlinked",
        }
    }
    /// Whether the GPU was busy in this part.
    pub fn is_busy(self) -> bool {
        matches!(self, Part::Busy | Part::ExposedCommunication | Part::Copy)
    }
}

/// What a row is about, within its part: a family, a host range's name, a synchronising call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum What {
    /// Nothing more than the part.
    Plain,
    /// A category family (index into [`StepBudget::families`]).
    Family(u16),
    /// A host range's name; `op` of the row is one such range.
    Range(NameId),
    /// A synchronising call's name; `call` of the row is one such call.
    Call(NameId),
    /// Inside a graph's replay (queued between the kernels one graph launch issued).
    Replay,
    /// A copy row: copies to or from pageable host memory.
    Pageable,
    /// A host row: the launching thread in nothing recorded for longer than its ordinary dispatch
    /// gap, between a range named `before` and one named `after` ([`NO_NAME`]: none; `example`
    /// of the row is one such `after` range).
    Unrecorded {
        /// The range the thread left.
        before: NameId,
        /// The range it entered next.
        after: NameId,
    },
}

/// One row of a step: a part, what it is, its time and where on the timeline.
#[derive(Debug, Clone)]
pub struct Row {
    /// The part.
    pub part: Part,
    /// What within the part.
    pub what: What,
    /// Time (ns).
    pub ns: i64,
    /// Separate stretches of it.
    pub intervals: u32,
    /// Its longest stretch: start and end (ns, trace clock).
    pub longest: (i64, i64),
    /// For a host row: one range of that name (row of `trace.ops`); for sync, the call
    /// (row of `trace.launches`); else [`NONE`].
    pub example: u32,
    /// For a host row whose range is a Python frame: the longest op or annotation inside that
    /// frame (row of `trace.ops`), which names the activity; else [`NONE`].
    pub inner: u32,
    /// The GPU row (of `trace.gpu`) behind the longest stretch: for a busy row, what ran at its
    /// start; for an idle row, what the idle ended with (what the host was issuing, or what
    /// waited in the queue); [`NONE`] when unknown. It names the activity of rows that sum many
    /// ops ([`StepBudget::activity`]).
    pub gpu: u32,
}

/// What a row's longest stretch was doing, and where in the user's code.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Activity {
    /// The op or annotation (`aten::linear`, `enumerate(DataLoader)#…`), else the kernel's name.
    pub name: String,
    /// The user's `file.py(line): function`, where stacks were recorded.
    pub site: Option<String>,
}

/// One step's budget.
#[derive(Debug, Clone)]
pub struct Step {
    /// The device.
    pub device: i32,
    /// The pass (index into `phases.passes`), or `None` for a device's capture window.
    pub pass: Option<usize>,
    /// Window start (ns, trace clock).
    pub start_ns: i64,
    /// Window end (ns).
    pub end_ns: i64,
    /// The pass's last kernel's end (the window's end for a capture window).
    pub pass_end_ns: i64,
    /// The rows, summing to `end_ns - start_ns`.
    pub rows: Vec<Row>,
    /// Idle in queued stretches of at least the micro-idle threshold (ns).
    pub stalled_ns: i64,
    /// The longest queued stretch.
    pub longest_queued: (i64, i64),
    /// The synchronising calls whose return started a sync row's stretch (launch rows).
    pub syncs: Vec<u32>,
    /// Kernels of the pass (of a capture window: those that start in it).
    pub kernels: usize,
    /// Kernels linked to their launch.
    pub linked: usize,
    /// Kernels launched one by one (not replayed from a graph).
    pub eager: usize,
}

impl Step {
    /// The window's length (ns): what the rows add up to.
    pub fn wall_ns(&self) -> i64 {
        self.end_ns - self.start_ns
    }
    /// Time in rows of `part` (ns).
    pub fn part_ns(&self, part: Part) -> i64 {
        self.rows.iter().filter(|r| r.part == part).map(|r| r.ns).sum()
    }
    /// GPU busy time of any kind (ns).
    pub fn busy_ns(&self) -> i64 {
        self.rows.iter().filter(|r| r.part.is_busy()).map(|r| r.ns).sum()
    }
}

/// Every step's budget, and the family names its rows refer to.
#[derive(Debug, Clone, Default)]
pub struct StepBudget {
    /// Steps by device, then time.
    pub steps: Vec<Step>,
    /// Family names ([`What::Family`]).
    pub families: Vec<String>,
    /// Each thread's ordinary gap between ops (ns; 0 for a thread that launched nothing), by
    /// thread index: what a host row in nothing recorded is beyond.
    pub typical_gaps: Vec<i64>,
}

impl StepBudget {
    /// A row's `what` in words: the family, the range's name (with its Python frame outside
    /// PyTorch where stacks were recorded), the call and the op it was in.
    pub fn describe(&self, a: &Base, row: &Row) -> String {
        let t = &a.trace;
        match row.what {
            What::Plain => match row.part {
                Part::ExposedCommunication => "collectives with no compute beside them".into(),
                Part::Copy => "copies and fills with no kernel beside them".into(),
                Part::Launch => "issuing kernels one by one".into(),
                Part::Queued => "issued, waiting on another stream, an event or unrecorded work".into(),
                Part::BetweenSteps => "between steps, in nothing recorded".into(),
                Part::Unlinked => "before GPU work whose launch is not in the trace".into(),
                _ => String::new(),
            },
            What::Family(f) => self.families[f as usize].clone(),
            // A frame: the activity inside it, at the frame's line.
            What::Range(name) if row.inner != NONE => format!("{} at {}", t.name(t.ops.name[row.inner as usize]), t.name(name)),
            What::Range(name) => {
                let mut s = t.name(name).to_string();
                if let Some(site) = python_site(t, row.example) {
                    s.push_str(&format!(" at {site}"));
                }
                s
            }
            What::Call(name) => {
                let mut s = format!("waiting in {}, then refilling", t.name(name));
                let c = row.example as usize;
                if row.example != NONE && t.launches.cpu_op[c] != NONE {
                    s.push_str(&format!(" in {}", t.name(t.ops.name[t.launches.cpu_op[c] as usize])));
                }
                if let Some(site) = (row.example != NONE).then(|| user_frame(t, t.launches.python[c])).flatten() {
                    s.push_str(&format!(" at {site}"));
                }
                s
            }
            What::Replay => "between the kernels of a graph replay".into(),
            What::Pageable => "copies between the GPU and pageable host memory, with no kernel beside them".into(),
            What::Unrecorded { before, after } => {
                let mut s = match (before, after) {
                    (NO_NAME, NO_NAME) => "nothing recorded".to_string(),
                    (NO_NAME, a) => format!("nothing recorded before {}", t.name(a)),
                    (b, NO_NAME) => format!("nothing recorded after {}", t.name(b)),
                    (b, a) => format!("nothing recorded between {} and {}", t.name(b), t.name(a)),
                };
                if let Some(site) = python_site(t, row.example) {
                    s.push_str(&format!(" at {site}"));
                }
                s
            }
        }
    }

    /// The ordinary gap between ops of the thread whose stretch in nothing recorded is `row`
    /// (its `example`'s thread; 0 when unknown).
    pub fn typical_gap_ns(&self, a: &Base, row: &Row) -> i64 {
        if row.example == NONE {
            return 0;
        }
        self.typical_gaps.get(a.trace.ops.thread[row.example as usize] as usize).copied().unwrap_or(0)
    }

    /// The activity of a row's longest stretch: for a host row, its range (the op inside a
    /// Python frame, at the frame), for nothing recorded the range entered next; for a sync row,
    /// the op the call was made in; for every other row, the op that launched the GPU row behind
    /// its longest stretch ([`Row::gpu`]; the kernel's name when its launch is not in the trace).
    /// The site is the user's nearest frame outside PyTorch, where stacks were recorded.
    pub fn activity(&self, a: &Base, row: &Row) -> Activity {
        let t = &a.trace;
        let op_name = |o: u32| t.name(t.ops.name[o as usize]).to_string();
        let (name, site) = match row.what {
            What::Range(name) if row.inner != NONE => (op_name(row.inner), Some(t.name(name))),
            What::Range(name) => (t.name(name).to_string(), python_site(t, row.example)),
            What::Unrecorded { .. } if row.example != NONE => ("nothing recorded".to_string(), python_site(t, row.example)),
            What::Call(name) if row.example != NONE => {
                let op = t.launches.cpu_op[row.example as usize];
                let name = if op == NONE { t.name(name).to_string() } else { op_name(op) };
                (name, launch_site(t, row.example))
            }
            _ if row.gpu != NONE => {
                let g = row.gpu as usize;
                let c = t.gpu.launch[g];
                let op = if c == NONE { NONE } else { t.launches.cpu_op[c as usize] };
                let name = if op == NONE { crate::support::text::ellipsis(t.name(t.gpu.name[g]), 81) } else { op_name(op) };
                (name, if c == NONE { None } else { launch_site(t, c) })
            }
            _ => (String::new(), None),
        };
        Activity { name, site: site.map(str::to_string) }
    }
}

/// The user's frame around runtime call `call`: from its innermost Python frame, else from the op
/// it was made in.
fn launch_site(t: &crate::model::Trace, call: u32) -> Option<&str> {
    let c = call as usize;
    user_frame(t, t.launches.python[c]).or_else(|| python_site(t, t.launches.cpu_op[c]))
}

/// The nearest enclosing Python frame of range `op` (not `op` itself) outside PyTorch's package.
fn python_site(t: &crate::model::Trace, op: u32) -> Option<&str> {
    (op != NONE).then(|| user_frame(t, t.ops.parent[op as usize])).flatten()
}

/// From range `frame` outwards, the nearest Python frame with a file and line outside PyTorch's
/// own package (a builtin's or `torch/…`'s frame is skipped for its caller's; the nearest file
/// frame when every one is PyTorch's).
pub fn user_frame(t: &crate::model::Trace, mut frame: u32) -> Option<&str> {
    let mut nearest = None;
    while frame != NONE {
        let name = t.name(t.ops.name[frame as usize]);
        if name.contains(".py(") {
            if !(name.starts_with("torch/") || name.contains("/torch/")) {
                return Some(name);
            }
            nearest = nearest.or(Some(name));
        }
        frame = t.ops.parent[frame as usize];
    }
    nearest
}

/// The budget of every step of `a`.
pub fn step_budget(a: &Base) -> StepBudget {
    let t = &a.trace;
    // The device's busy spans and the host's spans read different columns: made side by side.
    let (mut devices, mut spans) = (Vec::new(), Vec::new());
    crate::support::threads::both(
        t.gpu.len(),
        || devices = device::device_times(t, &a.categories),
        || spans = host::host_spans(t),
    );
    let syncs = Syncs::of(a);
    let mut families: Vec<String> = Vec::new();
    let family_of: Vec<u16> = a
        .categories
        .categories
        .iter()
        .map(|c| match families.iter().position(|f| *f == c.family) {
            Some(i) => i as u16,
            None => {
                families.push(c.family.clone());
                (families.len() - 1) as u16
            }
        })
        .collect();
    let ctxs: Vec<Ctx> = devices
        .iter()
        .map(|d| Ctx { a, d, spans: &spans, syncs: &syncs, latency: launch_latency(a, d), family_of: &family_of })
        .collect();
    // Every window first (device, pass, start, end, the pass's end), then their rows.
    let mut windows: Vec<(usize, Option<usize>, i64, i64, i64)> = Vec::new();
    for (k, d) in devices.iter().enumerate() {
        let mut passes: Vec<usize> = (0..a.phases.passes.len()).filter(|&p| a.phases.passes[p].device == d.device).collect();
        passes.sort_by_key(|&p| a.phases.passes[p].start_ns);
        if passes.is_empty() {
            if let (Some(first), Some(last)) = (d.spans.first(), d.spans.last()) {
                windows.push((k, None, first.0, last.1, last.1));
            }
            continue;
        }
        for (i, &p) in passes.iter().enumerate() {
            let pass = &a.phases.passes[p];
            let end = passes.get(i + 1).map_or(pass.end_ns, |&n| a.phases.passes[n].start_ns.max(pass.start_ns));
            windows.push((k, Some(p), pass.start_ns, end, pass.end_ns.min(end)));
        }
    }
    // Windows are independent: two halves side by side, natively.
    let make = |w: &[(usize, Option<usize>, i64, i64, i64)]| -> Vec<Step> {
        w.iter().map(|&(k, p, start, end, pass_end)| ctxs[k].step(p, start, end, pass_end)).collect()
    };
    let half = windows.len() / 2;
    let (mut first, mut second) = (Vec::new(), Vec::new());
    crate::support::threads::both(t.gpu.len(), || first = make(&windows[..half]), || second = make(&windows[half..]));
    first.extend(second);
    activities_in_frames(t, &mut first);
    let typical_gaps = spans.iter().map(|s| s.as_ref().map_or(0, |s| s.typical_gap)).collect();
    StepBudget { steps: first, families, typical_gaps }
}

/// A host row whose range is a Python frame (`train.py(42): <module>`) learns the longest op or
/// annotation inside it on its thread (`enumerate(DataLoader)#…__next__`, its [`Row::inner`]):
/// the op says what the host did, the frame where ([`StepBudget::describe`] gives both).
fn activities_in_frames(t: &crate::model::Trace, steps: &mut [Step]) {
    use crate::model::OpKind;
    let ops = &t.ops;
    let is_frame_row = |r: &Row| {
        r.part == Part::Host
            && matches!(r.what, What::Range(_))
            && r.example != NONE
            && ops.kind[r.example as usize] == OpKind::PythonFunction
    };
    let mut frames: Vec<u32> = steps.iter().flat_map(|s| s.rows.iter()).filter(|r| is_frame_row(r)).map(|r| r.example).collect();
    if frames.is_empty() {
        return;
    }
    frames.sort_unstable_by_key(|&f| (ops.thread[f as usize], ops.ts[f as usize], f));
    frames.dedup();
    // The frames are host activities: on one thread they do not overlap.
    let mut inner: crate::model::FastMap<u32, u32> = crate::model::FastMap::default();
    for o in 0..ops.len() {
        if ops.kind[o] == OpKind::PythonFunction {
            continue;
        }
        let key = (ops.thread[o], ops.ts[o]);
        let k = frames.partition_point(|&f| (ops.thread[f as usize], ops.ts[f as usize]) <= key);
        let Some(&f) = k.checked_sub(1).map(|k| &frames[k]) else { continue };
        let f_ = f as usize;
        if ops.thread[f_] != ops.thread[o] || ops.end(o) > ops.end(f_) {
            continue;
        }
        let best = inner.entry(f).or_insert(o as u32);
        if ops.dur[o] > ops.dur[*best as usize] {
            *best = o as u32;
        }
    }
    for step in steps.iter_mut() {
        for r in step.rows.iter_mut().filter(|r| is_frame_row(r)) {
            r.inner = inner.get(&r.example).copied().unwrap_or(NONE);
        }
    }
}

/// The median wait between a launch call's return and its GPU row's start, over the idles of
/// device `d` whose row started after its call returned: the GPU's own launch latency, which a
/// replay removes too, so it counts as the host's.
fn launch_latency(a: &Base, d: &DeviceTime) -> i64 {
    let (g, l) = (&a.trace.gpu, &a.trace.launches);
    let mut lat = Vec::new();
    let mut end = i64::MIN;
    let mut at = 0;
    for &(s, e, _) in &d.spans {
        if s > end && end != i64::MIN {
            if let Some(r) = d.rows_starting_from(&mut at, s).find(|&r| g.launch[r as usize] != NONE) {
                let c = g.launch[r as usize] as usize;
                let issued = l.ts[c].saturating_add(l.dur[c]);
                if issued >= end && s > issued {
                    lat.push(s - issued);
                }
            }
        }
        end = end.max(e);
    }
    lat.sort_unstable();
    lat.get(lat.len() / 2).copied().unwrap_or(0)
}

struct Ctx<'a> {
    a: &'a Base,
    d: &'a DeviceTime,
    spans: &'a [Option<ThreadSpans>],
    syncs: &'a Syncs,
    latency: i64,
    family_of: &'a [u16],
}

/// A step's rows being gathered, and where its walk through time has got to.
struct Rows {
    rows: Vec<Row>,
    /// Index into the device's rows by start, at or before the next idle's end.
    at_row: usize,
    /// The thread last walked, and where in its spans.
    at_thread: (usize, usize),
}

impl Rows {
    /// Adds `[from, to)` to the row of `part` and `what` (made with `example` if new); `gpu`
    /// is the GPU row behind the stretch, kept when the stretch is the row's longest. Returns
    /// the row when the stretch became its longest.
    fn add(&mut self, part: Part, what: What, from: i64, to: i64, example: u32, gpu: u32) -> Option<&mut Row> {
        if to <= from {
            return None;
        }
        let Some(k) = self.rows.iter().position(|r| r.part == part && r.what == what) else {
            self.rows.push(Row { part, what, ns: to - from, intervals: 1, longest: (from, to), example, inner: NONE, gpu });
            return self.rows.last_mut();
        };
        let r = &mut self.rows[k];
        r.ns += to - from;
        r.intervals += 1;
        if to - from <= r.longest.1 - r.longest.0 {
            return None;
        }
        r.longest = (from, to);
        r.gpu = gpu;
        Some(r)
    }
}

impl Ctx<'_> {
    fn step(&self, pass: Option<usize>, start: i64, end: i64, pass_end: i64) -> Step {
        let (g, l) = (&self.a.trace.gpu, &self.a.trace.launches);
        let mut step = Step {
            device: self.d.device,
            pass,
            start_ns: start,
            end_ns: end,
            pass_end_ns: pass_end,
            rows: Vec::new(),
            stalled_ns: 0,
            longest_queued: (0, 0),
            syncs: Vec::new(),
            kernels: 0,
            linked: 0,
            eager: 0,
        };
        // The pass's kernels; a capture window's are those that start in it.
        let window_rows: Vec<u32>;
        let kernel_rows: &[u32] = match pass {
            Some(p) => &self.a.phases.passes[p].rows,
            None => {
                let from = self.d.starts.partition_point(|&(s, _)| s < start);
                window_rows = self.d.starts[from..].iter().take_while(|&&(s, _)| s < end).map(|&(_, r)| r).collect();
                &window_rows
            }
        };
        for &r in kernel_rows {
            let r = r as usize;
            if g.kind[r] != crate::model::GpuKind::Kernel {
                continue;
            }
            step.kernels += 1;
            let c = g.launch[r];
            step.linked += usize::from(c != NONE);
            step.eager += usize::from(c != NONE && !l.is_graph[c as usize]);
        }
        let at_row = self.d.starts.partition_point(|&(s, _)| s < start);
        let mut rows = Rows { rows: Vec::new(), at_row, at_thread: (usize::MAX, usize::MAX) };
        let mut cursor = start;
        let mut k = self.d.first_span_after(start);
        while cursor < end {
            let next = self.d.spans.get(k).filter(|s| s.0 < end);
            let idle_to = next.map_or(end, |s| s.0.max(cursor));
            if idle_to > cursor {
                self.idle(&mut rows, &mut step, cursor, idle_to, pass_end);
            }
            let Some(&(s, e, busy)) = next else { break };
            let (from, to) = (s.max(cursor), e.min(end));
            let (part, what, gpu) = match busy {
                Busy::Compute(c, r) => (Part::Busy, What::Family(self.family_of[c as usize]), r),
                Busy::Communication => (Part::ExposedCommunication, What::Plain, NONE),
                Busy::Copy => (Part::Copy, What::Plain, NONE),
                Busy::PageableCopy => (Part::Copy, What::Pageable, NONE),
            };
            // A merged span's row is looked up only when the stretch is its row's longest.
            if let Some(row) = rows.add(part, what, from, to, NONE, gpu).filter(|_| gpu == NONE) {
                row.gpu = self.d.row_running_at(g, from, part == Part::Copy);
            }
            cursor = cursor.max(to);
            k += 1;
        }
        rows.rows.sort_by(|x, y| x.part.cmp(&y.part).then(y.ns.cmp(&x.ns)));
        step.rows = rows.rows;
        step
    }

    /// Splits the idle `[from, to)` (ended by the GPU rows starting at `to`) by what held it.
    fn idle(&self, rows: &mut Rows, step: &mut Step, from: i64, to: i64, pass_end: i64) {
        let (g, l) = (&self.a.trace.gpu, &self.a.trace.launches);
        let between = from >= pass_end;
        let ended_by = self.d.rows_starting_from(&mut rows.at_row, to).find(|&r| g.launch[r as usize] != NONE);
        let Some(r) = ended_by else {
            let first = self.d.starts.get(rows.at_row).filter(|&&(s, _)| s == to).map_or(NONE, |&(_, r)| r);
            rows.add(if between { Part::BetweenSteps } else { Part::Unlinked }, What::Plain, from, to, NONE, first);
            return;
        };
        let c = g.launch[r as usize] as usize;
        let issued = l.ts[c].saturating_add(l.dur[c]).saturating_add(self.latency);
        let host_to = issued.clamp(from, to);
        if host_to < to {
            let what = if l.is_graph[c] && issued <= from { What::Replay } else { What::Plain };
            rows.add(Part::Queued, what, host_to, to, NONE, r);
            if to - host_to >= (self.a.options.micro_idle_us * 1e3) as i64 {
                step.stalled_ns += to - host_to;
            }
            if to - host_to > step.longest_queued.1 - step.longest_queued.0 {
                step.longest_queued = (host_to, to);
            }
        }
        if host_to <= from {
            return;
        }
        // The host's part: when a synchronising call returned in it, the host's waiting in the call
        // and issuing after it are the sync's.
        let sync = self.syncs.returned_in(from, host_to).map(|call| {
            step.syncs.push(call);
            (l.ts[call as usize], call)
        });
        let plain = if between { Part::BetweenSteps } else { Part::Launch };
        let issuing = |rows: &mut Rows, a: i64, b: i64| match sync {
            Some((called, call)) if called < b => {
                rows.add(plain, What::Plain, a, called.max(a), NONE, r);
                rows.add(Part::Sync, What::Call(l.name[call as usize]), called.max(a), b, call, r);
            }
            _ => {
                rows.add(plain, What::Plain, a, b, NONE, r);
            }
        };
        let thread = l.thread[c] as usize;
        let Some(Some(spans)) = self.spans.get(thread) else {
            issuing(rows, from, host_to);
            return;
        };
        let mut hint = if rows.at_thread.0 == thread { rows.at_thread.1 } else { usize::MAX };
        let ops = &self.a.trace.ops;
        let name_of = |op: u32| if op == NONE { NO_NAME } else { ops.name[op as usize] };
        spans.walk(&mut hint, from, host_to, |a, b, piece| match piece {
            Piece::In(HostState::Activity(op)) => {
                rows.add(Part::Host, What::Range(ops.name[op as usize]), a, b, op, r);
            }
            Piece::In(HostState::Issuing) if between && sync.is_none() => {
                rows.add(Part::Launch, What::Plain, a, b, NONE, r);
            }
            Piece::In(HostState::Issuing | HostState::Dispatch) => issuing(rows, a, b),
            Piece::Gap(_) if between => issuing(rows, a, b),
            Piece::Gap(k) => {
                // Nothing recorded: the ordinary dispatch gap is issuing; what a longer gap holds
                // beyond it is the host's, unrecorded (until a synchronising call, if one began).
                let (gap_from, gap_to) = spans.gap(k);
                let (gap_from, gap_to) = (gap_from.unwrap_or(i64::MIN), gap_to.unwrap_or(i64::MAX));
                let bound = spans.typical_gap.max(host::MIN_HOST_ACTIVITY_NS);
                if gap_to.saturating_sub(gap_from) <= bound {
                    issuing(rows, a, b);
                    return;
                }
                let unrecorded_from = gap_from.saturating_add(spans.typical_gap).clamp(a, b);
                issuing(rows, a, unrecorded_from);
                let unrecorded_to = sync.map_or(b, |(called, _)| called.clamp(unrecorded_from, b));
                let before = k.checked_sub(1).map_or(NO_NAME, |p| name_of(spans.last_op[p]));
                let after_op = spans.first_op.get(k).copied().unwrap_or(NONE);
                let what = What::Unrecorded { before, after: name_of(after_op) };
                rows.add(Part::Host, what, unrecorded_from, unrecorded_to, after_op, r);
                issuing(rows, unrecorded_to, b);
            }
        });
        rows.at_thread = (thread, hint);
    }
}
