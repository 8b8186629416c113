//! Builds the columnar [`Trace`] from decoded events.

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

impl TraceBuilder {
    /// Appends what another builder read from the text right after ours (the parallel reader
    /// parses two halves of a block at once). `event_offset` is the number of events before the
    /// other builder's first event.
    pub fn absorb(&mut self, other: TraceBuilder, event_offset: u64) {
        let TraceBuilder { trace: o, process_names, thread_names, .. } = other;
        let names: Vec<NameId> = (0..o.names.len()).map(|i| self.trace.names.intern(o.names.resolve(i as NameId))).collect();
        // Text pids/tids hold a name id: remap them too.
        let id = |v: i64| match super::text_id_name(v).and_then(|n| names.get(n as usize)) {
            Some(&n) => super::text_id(n),
            None => v,
        };
        let threads: Vec<u32> = o.threads.iter().map(|t| self.thread(id(t.pid), id(t.tid))).collect();
        for (pid, n) in process_names {
            self.process_names.entry(id(pid)).or_insert(names[n as usize]);
        }
        for ((pid, tid), n) in thread_names {
            self.thread_names.entry((id(pid), id(tid))).or_insert(names[n as usize]);
        }
        // Mapped columns are extended straight from iterators (no temporary column per map).
        fn mapped<'a>(v: &'a [u32], f: impl Fn(u32) -> u32 + 'a) -> impl ExactSizeIterator<Item = u32> + 'a {
            v.iter().map(move |&x| f(x))
        }
        let name = |n: NameId| names[n as usize];
        let offset = |e: u32| (e as u64 + event_offset).min(u32::MAX as u64) as u32;
        let thread = |t: u32| threads[t as usize];

        let t = &mut self.trace;
        let (g, og) = (&mut t.gpu, &o.gpu);
        g.kind.extend_from_slice(&og.kind);
        g.name.extend(mapped(&og.name, name));
        g.ts.extend_from_slice(&og.ts);
        g.dur.extend_from_slice(&og.dur);
        g.device.extend_from_slice(&og.device);
        g.stream.extend_from_slice(&og.stream);
        g.correlation.extend_from_slice(&og.correlation);
        g.external_id.extend_from_slice(&og.external_id);
        g.grid.extend_from_slice(&og.grid);
        g.block.extend_from_slice(&og.block);
        g.event_index.extend(mapped(&og.event_index, offset));
        g.launch.extend_from_slice(&og.launch);
        g.cpu_op.extend_from_slice(&og.cpu_op);

        let (p, op) = (&mut t.ops, &o.ops);
        p.kind.extend_from_slice(&op.kind);
        p.name.extend(mapped(&op.name, name));
        p.ts.extend_from_slice(&op.ts);
        p.dur.extend_from_slice(&op.dur);
        p.thread.extend(mapped(&op.thread, thread));
        p.external_id.extend_from_slice(&op.external_id);
        p.input_dims.extend(mapped(&op.input_dims, name));
        p.input_types.extend(mapped(&op.input_types, name));
        p.concrete_inputs.extend(mapped(&op.concrete_inputs, name));
        p.python_id.extend_from_slice(&op.python_id);
        p.python_parent_id.extend_from_slice(&op.python_parent_id);
        p.event_index.extend(mapped(&op.event_index, offset));
        p.parent.extend_from_slice(&op.parent);

        let (l, ol) = (&mut t.launches, &o.launches);
        l.name.extend(mapped(&ol.name, name));
        l.ts.extend_from_slice(&ol.ts);
        l.dur.extend_from_slice(&ol.dur);
        l.thread.extend(mapped(&ol.thread, thread));
        l.correlation.extend_from_slice(&ol.correlation);
        l.external_id.extend_from_slice(&ol.external_id);
        l.event_index.extend(mapped(&ol.event_index, offset));
        l.cpu_op.extend_from_slice(&ol.cpu_op);
        l.python.extend_from_slice(&ol.python);
        l.is_graph.extend_from_slice(&ol.is_graph);

        let (a, oa) = (&mut t.gpu_annotations, &o.gpu_annotations);
        a.name.extend(mapped(&oa.name, name));
        a.ts.extend_from_slice(&oa.ts);
        a.dur.extend_from_slice(&oa.dur);
        a.device.extend_from_slice(&oa.device);
        a.stream.extend_from_slice(&oa.stream);

        let flow = |f: &FlowEnd| FlowEnd { id: f.id, pid: id(f.pid), tid: id(f.tid), ts: f.ts };
        t.flow_starts.extend(o.flow_starts.iter().map(flow));
        t.flow_finishes.extend(o.flow_finishes.iter().map(flow));

        t.stats.events += o.stats.events;
        t.stats.kept += o.stats.kept;
        t.stats.ignored += o.stats.ignored;
        t.stats.skipped += o.stats.skipped;
        t.warnings.absorb(o.warnings, event_offset);
        t.meta.merge(o.meta);
    }
}
