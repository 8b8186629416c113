//! Builds the columnar [`Trace`] from decoded events.

use super::transfer::{row_counts, PartBuilder, RowSource, TypedRows, WireBuilder};
use super::*;
use crate::ingest::{EventSink, Field, Id, RawEvent};

/// Collects events into a [`Trace`]; the ingest layer drives it through [`EventSink`].
#[derive(Default)]
pub struct TraceBuilder {
    pub(super) trace: Trace,
    pub(super) threads: FastMap<(i64, i64), u32>,
    pub(super) process_names: FastMap<i64, NameId>,
    pub(super) thread_names: FastMap<(i64, i64), NameId>,
}

/// What an event becomes in the model.
enum Dest {
    Gpu(GpuKind),
    Op(OpKind),
    Launch,
    GpuAnnotation,
    Ignore,
}

fn dest_of_x(cat: &[u8]) -> Dest {
    match cat {
        b"kernel" | b"Kernel" => Dest::Gpu(GpuKind::Kernel),
        b"gpu_memcpy" | b"Memcpy" => Dest::Gpu(GpuKind::Memcpy),
        b"gpu_memset" | b"Memset" => Dest::Gpu(GpuKind::Memset),
        b"cpu_op" | b"Operator" | b"operator" => Dest::Op(OpKind::CpuOp),
        b"user_annotation" => Dest::Op(OpKind::UserAnnotation),
        b"python_function" => Dest::Op(OpKind::PythonFunction),
        b"cuda_runtime" | b"cuda_driver" | b"Runtime" | b"Driver" | b"hip_runtime" | b"hip_driver" | b"runtime" => Dest::Launch,
        b"gpu_user_annotation" => Dest::GpuAnnotation,
        _ => Dest::Ignore,
    }
}

/// A device or stream number as stored (i32): a text pid/tid standing in for it, or a number out
/// of range, is -1 (unknown).
fn device_id(v: i64) -> i32 {
    match super::text_id_name(v) {
        Some(_) => -1,
        None => i32::try_from(v).unwrap_or(-1),
    }
}

impl TraceBuilder {
    fn id_value(&mut self, id: &Id<'_>) -> i64 {
        match id {
            Id::Num(n) => *n,
            Id::Missing => -1,
            Id::Text(t) => super::text_id(self.trace.names.intern(t)),
        }
    }

    fn thread(&mut self, pid: i64, tid: i64) -> u32 {
        let next = self.trace.threads.len() as u32;
        *self.threads.entry((pid, tid)).or_insert_with(|| {
            self.trace.threads.push(ThreadInfo { pid, tid, process_name: NO_NAME, thread_name: NO_NAME });
            next
        })
    }

    fn intern_raw(&mut self, raw: Option<&[u8]>) -> NameId {
        raw.map_or(NO_NAME, |b| self.trace.names.intern_bytes(b))
    }

    /// Returns (ts, dur) or records why the event is skipped.
    fn times(&mut self, ev: &RawEvent<'_>, index: u64) -> Option<(i64, i64)> {
        let ts = match ev.ts {
            Field::Value(v) => v,
            Field::Missing => {
                self.trace.warnings.add("event without ts (skipped)", index, &ev.name_text());
                return None;
            }
            Field::Bad => {
                self.trace.warnings.add("ts is not a number (skipped)", index, &ev.name_text());
                return None;
            }
        };
        let dur = match ev.dur {
            Field::Value(v) if v < 0 => {
                self.trace.warnings.add("negative dur (set to 0)", index, &ev.name_text());
                0
            }
            Field::Value(v) => v,
            Field::Missing => {
                self.trace.warnings.add("complete event without dur (skipped)", index, &ev.name_text());
                return None;
            }
            Field::Bad => {
                self.trace.warnings.add("dur is not a number (skipped)", index, &ev.name_text());
                return None;
            }
        };
        Some((ts, dur))
    }

    /// Ends building: attaches names to threads and fixes the time origin.
    pub fn finish(mut self, object_form: bool) -> Trace {
        for t in self.trace.threads.iter_mut() {
            t.process_name = self.process_names.get(&t.pid).copied().unwrap_or(NO_NAME);
            t.thread_name = self.thread_names.get(&(t.pid, t.tid)).copied().unwrap_or(NO_NAME);
        }
        let t = &mut self.trace;
        t.meta.object_form = object_form;
        if t.ops.kind.contains(&OpKind::PythonFunction) {
            t.meta.with_stack = true;
        }
        let first = t.gpu.ts.iter().chain(t.ops.ts.iter()).chain(t.launches.ts.iter()).copied().min();
        t.time_origin_ns = first.unwrap_or(0);
        self.trace
    }
}

impl EventSink for TraceBuilder {
    fn header(&mut self, key: &str, value: serde_json::Value) {
        self.trace.meta.absorb(key, &value);
    }

    fn not_an_object(&mut self, index: u64, _offset: u64) {
        self.trace.stats.events += 1;
        self.trace.stats.skipped += 1;
        self.trace.warnings.add("event is not a JSON object (skipped)", index, "");
    }

    fn event(&mut self, ev: &RawEvent<'_>, index: u64, _offset: u64) {
        self.trace.stats.events += 1;
        let kept = match ev.ph {
            b'X' => self.complete_event(ev, index),
            b's' | b'f' if &*ev.cat == b"ac2g" => self.flow(ev, index),
            b'M' => {
                self.metadata(ev);
                None
            }
            _ => None,
        };
        match kept {
            Some(true) => self.trace.stats.kept += 1,
            Some(false) => self.trace.stats.skipped += 1,
            None => self.trace.stats.ignored += 1,
        }
    }
}

impl TraceBuilder {
    /// `Some(true)` kept, `Some(false)` skipped as malformed, `None` not modelled.
    fn complete_event(&mut self, ev: &RawEvent<'_>, index: u64) -> Option<bool> {
        let dest = dest_of_x(&ev.cat);
        if let Dest::Ignore = dest {
            return None;
        }
        let Some((ts, dur)) = self.times(ev, index) else { return Some(false) };
        let name = self.trace.names.intern_bytes(&ev.name);
        let pid = self.id_value(&ev.pid);
        let tid = self.id_value(&ev.tid);
        let a = &ev.args;
        let index32 = index.min(u32::MAX as u64) as u32;
        match dest {
            Dest::Gpu(kind) => {
                let g = &mut self.trace.gpu;
                g.kind.push(kind);
                g.name.push(name);
                g.ts.push(ts);
                g.dur.push(dur);
                g.device.push(device_id(a.device.unwrap_or(pid)));
                g.stream.push(device_id(a.stream.unwrap_or(tid)));
                g.correlation.push(a.correlation.unwrap_or(-1));
                g.external_id.push(a.external_id.unwrap_or(-1));
                g.grid.push(a.grid.unwrap_or([0; 3]));
                g.block.push(a.block.unwrap_or([0; 3]));
                g.event_index.push(index32);
                g.launch.push(NONE);
                g.cpu_op.push(NONE);
            }
            Dest::Op(kind) => {
                let thread = self.thread(pid, tid);
                let dims = self.intern_raw(a.input_dims);
                let types = self.intern_raw(a.input_types);
                let concrete = self.intern_raw(a.concrete_inputs);
                let o = &mut self.trace.ops;
                o.kind.push(kind);
                o.name.push(name);
                o.ts.push(ts);
                o.dur.push(dur);
                o.thread.push(thread);
                o.external_id.push(a.external_id.unwrap_or(-1));
                o.input_dims.push(dims);
                o.input_types.push(types);
                o.concrete_inputs.push(concrete);
                o.python_id.push(a.python_id.unwrap_or(-1));
                o.python_parent_id.push(a.python_parent_id.unwrap_or(-1));
                o.event_index.push(index32);
                o.parent.push(NONE);
            }
            Dest::Launch => {
                let thread = self.thread(pid, tid);
                let n: &[u8] = &ev.name;
                let is_graph = n.starts_with(b"cudaGraphLaunch") || n.starts_with(b"hipGraphLaunch") || n == b"cuGraphLaunch";
                let l = &mut self.trace.launches;
                l.name.push(name);
                l.ts.push(ts);
                l.dur.push(dur);
                l.thread.push(thread);
                l.correlation.push(a.correlation.unwrap_or(-1));
                l.external_id.push(a.external_id.unwrap_or(-1));
                l.event_index.push(index32);
                l.cpu_op.push(NONE);
                l.python.push(NONE);
                l.is_graph.push(is_graph);
            }
            Dest::GpuAnnotation => {
                let g = &mut self.trace.gpu_annotations;
                g.name.push(name);
                g.ts.push(ts);
                g.dur.push(dur);
                g.device.push(device_id(a.device.unwrap_or(pid)));
                g.stream.push(device_id(a.stream.unwrap_or(tid)));
            }
            Dest::Ignore => unreachable!(),
        }
        Some(true)
    }

    fn flow(&mut self, ev: &RawEvent<'_>, index: u64) -> Option<bool> {
        let (Field::Value(ts), Some(id)) = (ev.ts, ev.id) else {
            self.trace.warnings.add("flow event without ts or id (skipped)", index, "");
            return Some(false);
        };
        let end = FlowEnd { id, pid: self.id_value(&ev.pid), tid: self.id_value(&ev.tid), ts };
        if ev.ph == b's' {
            self.trace.flow_starts.push(end);
        } else {
            self.trace.flow_finishes.push(end);
        }
        Some(true)
    }

    fn metadata(&mut self, ev: &RawEvent<'_>) {
        let Some(value) = &ev.args.name else { return };
        let pid = self.id_value(&ev.pid);
        match &*ev.name {
            b"process_name" => {
                let id = self.trace.names.intern(value);
                self.process_names.insert(pid, id);
            }
            b"thread_name" => {
                let tid = self.id_value(&ev.tid);
                let id = self.trace.names.intern(value);
                self.thread_names.insert((pid, tid), id);
            }
            _ => {}
        }
    }
}

/// How another builder's ids map into this one's.
struct IdMaps {
    names: Vec<NameId>,
    threads: Vec<u32>,
}

impl IdMaps {
    /// A stored pid/tid: a text one holds a name id, remapped too.
    fn id(&self, v: i64) -> i64 {
        match super::text_id_name(v).and_then(|n| self.names.get(n as usize)) {
            Some(&n) => super::text_id(n),
            None => v,
        }
    }
}

impl TraceBuilder {
    /// Appends what another builder read from the text right after ours (the parallel reader
    /// parses two halves of a block at once). `event_offset` is the number of events before the
    /// other builder's first event.
    pub fn absorb(&mut self, other: PartBuilder, event_offset: u64) {
        match other {
            PartBuilder::Parsed(o) => {
                let ids = self.absorb_ids(&o);
                self.absorb_typed_rows(&o.trace, &ids, event_offset);
                self.absorb_rest(o, event_offset);
            }
            PartBuilder::Wire(w) => {
                let (small, rows, mut source) = w.split();
                let ids = self.absorb_ids(small);
                self.absorb_rows(&mut source, rows, &ids, event_offset);
                let WireBuilder { small, .. } = w;
                self.absorb_rest(small, event_offset);
            }
        }
    }

    /// Interns the other builder's names and threads here; adds its process and thread names.
    fn absorb_ids(&mut self, o: &TraceBuilder) -> IdMaps {
        let names = (0..o.trace.names.len()).map(|i| self.trace.names.intern(o.trace.names.resolve(i as NameId))).collect();
        let mut ids = IdMaps { names, threads: Vec::new() };
        ids.threads = o.trace.threads.iter().map(|t| self.thread(ids.id(t.pid), ids.id(t.tid))).collect();
        for (&pid, &n) in &o.process_names {
            self.process_names.entry(ids.id(pid)).or_insert(ids.names[n as usize]);
        }
        for (&(pid, tid), &n) in &o.thread_names {
            self.thread_names.entry((ids.id(pid), ids.id(tid))).or_insert(ids.names[n as usize]);
        }
        ids
    }

    /// Appends the other builder's rows (`rows`: see [`row_counts`]), column by column in the
    /// order [`TraceBuilder::write_rows`] writes them; each column grows once, to its exact size.
    fn absorb_rows(&mut self, src: &mut impl RowSource, rows: [usize; 6], ids: &IdMaps, event_offset: u64) {
        let to = Remap { ids, event_offset };
        let [n_gpu, n_ops, n_launches, n_annotations, n_starts, n_finishes] = rows;
        let t = &mut self.trace;
        append_gpu(&mut t.gpu, src, n_gpu, &to);
        append_ops(&mut t.ops, src, n_ops, &to);
        append_launches(&mut t.launches, src, n_launches, &to);
        append_annotations(&mut t.gpu_annotations, src, n_annotations, &to);
        append_flows(&mut t.flow_starts, &mut t.flow_finishes, src, [n_starts, n_finishes], &to);
    }

    /// [`TraceBuilder::absorb_rows`] from a part's own columns: natively, the CPU ops (about half
    /// the bytes) are appended on a second thread while this one appends every other table.
    fn absorb_typed_rows(&mut self, o: &Trace, ids: &IdMaps, event_offset: u64) {
        let to = Remap { ids, event_offset };
        let rows = row_counts(o);
        let [n_gpu, n_ops, n_launches, n_annotations, n_starts, n_finishes] = rows;
        let Trace { gpu, ops, launches, gpu_annotations, flow_starts, flow_finishes, .. } = &mut self.trace;
        let to = &to;
        crate::support::threads::both(
            rows.iter().sum(),
            || append_ops(ops, &mut TypedRows(o), n_ops, to),
            || {
                let src = &mut TypedRows(o);
                append_gpu(gpu, src, n_gpu, to);
                append_launches(launches, src, n_launches, to);
                append_annotations(gpu_annotations, src, n_annotations, to);
                append_flows(flow_starts, flow_finishes, src, [n_starts, n_finishes], to);
            },
        );
    }

    /// Appends the other builder's counts, warnings and metadata.
    fn absorb_rest(&mut self, o: TraceBuilder, event_offset: u64) {
        let o = o.trace;
        let t = &mut self.trace;

        t.stats.events += o.stats.events;
        t.stats.kept += o.stats.kept;
        t.stats.ignored += o.stats.ignored;
        t.stats.skipped += o.stats.skipped;
        t.warnings.absorb(o.warnings, event_offset);
        t.meta.merge(o.meta);
    }
}

/// How an appended part's ids become this builder's: names and threads through [`IdMaps`], event
/// indexes shifted by the events before the part.
struct Remap<'a> {
    ids: &'a IdMaps,
    event_offset: u64,
}

impl Remap<'_> {
    fn name(&self, n: NameId) -> NameId {
        self.ids.names[n as usize]
    }
    fn event(&self, e: u32) -> u32 {
        (e as u64 + self.event_offset).min(u32::MAX as u64) as u32
    }
    fn thread(&self, t: u32) -> u32 {
        self.ids.threads[t as usize]
    }
}

fn append_gpu(g: &mut GpuEvents, src: &mut impl RowSource, n: usize, to: &Remap) {
    src.tags(&mut g.kind, |t| &t.gpu.kind, n, super::transfer::gpu_kind_of);
    src.mapped(&mut g.name, |t| &t.gpu.name, n, |x| to.name(x));
    src.copy(&mut g.ts, |t| &t.gpu.ts, n);
    src.copy(&mut g.dur, |t| &t.gpu.dur, n);
    src.copy(&mut g.device, |t| &t.gpu.device, n);
    src.copy(&mut g.stream, |t| &t.gpu.stream, n);
    src.copy(&mut g.correlation, |t| &t.gpu.correlation, n);
    src.copy(&mut g.external_id, |t| &t.gpu.external_id, n);
    src.copy(&mut g.grid, |t| &t.gpu.grid, n);
    src.copy(&mut g.block, |t| &t.gpu.block, n);
    src.mapped(&mut g.event_index, |t| &t.gpu.event_index, n, |x| to.event(x));
    src.links(&mut g.launch, |t| &t.gpu.launch, n);
    src.links(&mut g.cpu_op, |t| &t.gpu.cpu_op, n);
}

fn append_ops(p: &mut CpuOps, src: &mut impl RowSource, n: usize, to: &Remap) {
    src.tags(&mut p.kind, |t| &t.ops.kind, n, super::transfer::op_kind_of);
    src.mapped(&mut p.name, |t| &t.ops.name, n, |x| to.name(x));
    src.copy(&mut p.ts, |t| &t.ops.ts, n);
    src.copy(&mut p.dur, |t| &t.ops.dur, n);
    src.mapped(&mut p.thread, |t| &t.ops.thread, n, |x| to.thread(x));
    src.copy(&mut p.external_id, |t| &t.ops.external_id, n);
    src.mapped(&mut p.input_dims, |t| &t.ops.input_dims, n, |x| to.name(x));
    src.mapped(&mut p.input_types, |t| &t.ops.input_types, n, |x| to.name(x));
    src.mapped(&mut p.concrete_inputs, |t| &t.ops.concrete_inputs, n, |x| to.name(x));
    src.copy(&mut p.python_id, |t| &t.ops.python_id, n);
    src.copy(&mut p.python_parent_id, |t| &t.ops.python_parent_id, n);
    src.mapped(&mut p.event_index, |t| &t.ops.event_index, n, |x| to.event(x));
    src.links(&mut p.parent, |t| &t.ops.parent, n);
}

fn append_launches(l: &mut Launches, src: &mut impl RowSource, n: usize, to: &Remap) {
    src.mapped(&mut l.name, |t| &t.launches.name, n, |x| to.name(x));
    src.copy(&mut l.ts, |t| &t.launches.ts, n);
    src.copy(&mut l.dur, |t| &t.launches.dur, n);
    src.mapped(&mut l.thread, |t| &t.launches.thread, n, |x| to.thread(x));
    src.copy(&mut l.correlation, |t| &t.launches.correlation, n);
    src.copy(&mut l.external_id, |t| &t.launches.external_id, n);
    src.mapped(&mut l.event_index, |t| &t.launches.event_index, n, |x| to.event(x));
    src.tags(&mut l.is_graph, |t| &t.launches.is_graph, n, |b| b != 0);
    src.links(&mut l.cpu_op, |t| &t.launches.cpu_op, n);
    src.links(&mut l.python, |t| &t.launches.python, n);
}

fn append_annotations(a: &mut GpuAnnotations, src: &mut impl RowSource, n: usize, to: &Remap) {
    src.mapped(&mut a.name, |t| &t.gpu_annotations.name, n, |x| to.name(x));
    src.copy(&mut a.ts, |t| &t.gpu_annotations.ts, n);
    src.copy(&mut a.dur, |t| &t.gpu_annotations.dur, n);
    src.copy(&mut a.device, |t| &t.gpu_annotations.device, n);
    src.copy(&mut a.stream, |t| &t.gpu_annotations.stream, n);
}

fn append_flows(starts: &mut Vec<FlowEnd>, finishes: &mut Vec<FlowEnd>, src: &mut impl RowSource, n: [usize; 2], to: &Remap) {
    let flow = |f: FlowEnd| FlowEnd { id: f.id, pid: to.ids.id(f.pid), tid: to.ids.id(f.tid), ts: f.ts };
    src.mapped(starts, |t| &t.flow_starts, n[0], flow);
    src.mapped(finishes, |t| &t.flow_finishes, n[1], flow);
}
