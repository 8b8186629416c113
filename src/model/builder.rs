//! Builds the columnar [`Trace`] from decoded events.

use super::schema::Remap;
use super::transfer::{append_rows, row_counts, PartBuilder};
use super::*;
use crate::ingest::interchange::{EventSink, Fact, Field, Id, RawEvent};

/// Collects events into a [`Trace`]; the ingest layer drives it through [`EventSink`].
#[derive(Default)]
pub struct TraceBuilder {
    pub(super) trace: Trace,
    pub(super) threads: FastMap<(i64, i64), u32>,
    pub(super) process_names: FastMap<i64, NameId>,
    pub(super) thread_names: FastMap<(i64, i64), NameId>,
    /// Set once a process is named like an XLA plane: a JAX trace in Chrome JSON.
    pub(super) xla: Option<Box<super::xla_json::XlaJson>>,
    /// Processes that are an accelerator's device timeline by their name (torch_npu's `Ascend
    /// Hardware`), with the device number each stands for (in the order they were named). Their
    /// complete events carry no `cat` and are the device's tasks.
    pub(super) device_processes: FastMap<i64, i32>,
    /// Processes that are an accelerator's runtime by their name (torch_npu's `CANN`): their
    /// complete events carry no `cat` and are runtime calls, where the device's tasks' flows
    /// (`HostToDevice`) start.
    pub(super) runtime_processes: Vec<i64>,
    /// Processes whose lanes a profiler derived from the device's tasks (torch_npu's `Overlap
    /// Analysis`): counted, not read (the tasks they summarise are).
    pub(super) derived_processes: Vec<i64>,
}

/// Process names under which a profiler writes an accelerator's device tasks with no `cat`:
/// torch_npu's (Ascend NPU) device timeline.
const DEVICE_PROCESS_NAMES: &[&str] = &["Ascend Hardware"];

/// Process names under which a profiler writes an accelerator runtime's calls with no `cat`:
/// torch_npu's CANN layer (`AscendCL@…`, `Node@launch`).
const RUNTIME_PROCESS_NAMES: &[&str] = &["CANN"];

/// Process names under which a profiler writes lanes it derived from the device's tasks, with no
/// `cat`: torch_npu's `Overlap Analysis` (`Computing`, `Communication`, `Free`).
const DERIVED_PROCESS_NAMES: &[&str] = &["Overlap Analysis"];

/// Flow categories that tie a device's work to the runtime call that launched it: Kineto's
/// `ac2g`, Ascend's `HostToDevice` (from a CANN `Node@launch` to the task it put on the device),
/// torch_npu's `async_npu`.
fn is_launch_flow(cat: &[u8]) -> bool {
    matches!(cat, b"ac2g" | b"HostToDevice" | TORCH_NPU_FLOW)
}

/// torch_npu's flow from the op that launched a device task (its start, on the op's thread) to
/// the task on `Ascend Hardware` (its finish), named `torch_to_npu`.
const TORCH_NPU_FLOW: &[u8] = b"async_npu";

/// What an event becomes in the model.
enum Dest {
    Gpu(GpuKind),
    Op(OpKind),
    Launch,
    GpuAnnotation,
    /// A kernel, memcpy or memset of a device known by its process name (a JAX trace's plane, an
    /// NPU's timeline), on the device it names.
    ProcessDevice(GpuKind, i32),
    Ignore,
}

/// Complete events of categories that hold nothing an analysis needs: Kineto's whole-trace span
/// (`Trace`), profiler overhead, stream synchronisations (`cuda_sync`: kineto#1356 puts them on a
/// virtual thread `stream N (sync)`; they are waits, never kernels), and JAX's uncategorised
/// events (read by their process names instead).
fn quietly_ignored(cat: &[u8], name: &[u8]) -> bool {
    matches!(cat, b"" | b"Trace" | b"overhead" | b"cuda_sync" | b"cuda_profiler_range" | b"cpu_instant_event")
        || (cat == MTIA_DEVICE && mtia_dest(name).is_none())
}

/// The category of Meta's MTIA device events (`mtia_ccp_events`: on a process per device, named
/// `MTIA N`, a thread per stream; each carries the `correlation` of its runtime call).
const MTIA_DEVICE: &[u8] = b"mtia_ccp_events";

/// What an MTIA device event is: a DMA transfer is a copy; an event record or wait is a stream's
/// synchronisation, not work (`None`, as `cuda_sync` is); anything else runs on the device's
/// processing elements, a kernel (`fc-dtype_Float`, `pe_exe`, `merge`).
fn mtia_dest(name: &[u8]) -> Option<GpuKind> {
    match name {
        b"dma_request" => Some(GpuKind::Memcpy),
        b"event_record" | b"event_wait" => None,
        _ => Some(GpuKind::Kernel),
    }
}

fn dest_of_x(cat: &[u8], name: &[u8]) -> Dest {
    match cat {
        MTIA_DEVICE => mtia_dest(name).map_or(Dest::Ignore, Dest::Gpu),
        b"mtia_runtime" => Dest::Launch,
        b"kernel" | b"Kernel" => Dest::Gpu(GpuKind::Kernel),
        b"gpu_memcpy" | b"Memcpy" => Dest::Gpu(GpuKind::Memcpy),
        b"gpu_memset" | b"Memset" => Dest::Gpu(GpuKind::Memset),
        b"cpu_op" | b"Operator" | b"operator" => Dest::Op(OpKind::CpuOp),
        b"user_annotation" => Dest::Op(OpKind::UserAnnotation),
        // torch_npu's task queue: the op's thread puts a task in (`Enqueue`), a worker thread
        // takes it out and calls the runtime (`Dequeue@aclnnMm`): ranges of the host's threads.
        b"enqueue" | b"dequeue" => Dest::Op(OpKind::UserAnnotation),
        b"python_function" => Dest::Op(OpKind::PythonFunction),
        // Kineto's runtime categories: CUDA, HIP, 2021's capitalised ones, and Intel XPU's (PTI:
        // `urEnqueueKernelLaunch`, whose kernels are `kernel` events as CUDA's are).
        b"cuda_runtime" | b"cuda_driver" | b"Runtime" | b"Driver" | b"hip_runtime" | b"hip_driver" | b"runtime"
        | b"xpu_runtime" | b"xpu_driver" => Dest::Launch,
        b"gpu_user_annotation" => Dest::GpuAnnotation,
        _ => Dest::Ignore,
    }
}

/// `Input Dims` in Kineto's own spelling, `[[8, 12, 3137, 3137], [], []]`, whatever whitespace a
/// writer that re-indented the JSON put in (rules match the text with regexes such as
/// `^\[\[\d+,\s*\d+`). Dims hold only numbers, brackets and commas, so dropping every
/// whitespace byte and writing one space after each comma is lossless.
fn canonical_dims(raw: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    // Cheap test (this runs for every CPU op): writers re-indent with newlines, or write compact
    // JSON with no space after any comma; Kineto's text has neither.
    let first_comma = raw.iter().position(|&b| b == b',');
    let canonical = !raw.contains(&b'\n') && first_comma.is_none_or(|i| raw.get(i + 1) == Some(&b' '));
    if canonical {
        return std::borrow::Cow::Borrowed(raw);
    }
    let mut out = Vec::with_capacity(raw.len());
    for &b in raw.iter().filter(|b| !b.is_ascii_whitespace()) {
        out.push(b);
        if b == b',' {
            out.push(b' ');
        }
    }
    std::borrow::Cow::Owned(out)
}

/// SGLang's profiler names its ops `sglang_profiler::<module>_<function>_<n>`, where `n` is a
/// counter that differs between runs and call sites of one function: the name without it, so
/// that one function is one op (as TraceLens does). Every other name is kept as written.
fn stable_op_name(name: &[u8]) -> &[u8] {
    const PREFIX: &[u8] = b"sglang_profiler::";
    if !name.starts_with(PREFIX) {
        return name;
    }
    let digits = name.iter().rev().take_while(|b| b.is_ascii_digit()).count();
    let cut = name.len() - digits;
    if digits == 0 || cut <= PREFIX.len() + 1 || name[cut - 1] != b'_' {
        return name;
    }
    &name[..cut - 1]
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
    /// Whether events are placed by their process's name, so the trace must be read in order (a
    /// part parsed apart never saw the process names): some process is named like an XLA plane
    /// (`… /device:GPU:0`, `… /host:CPU`: a JAX trace in Chrome JSON, whose events carry no `cat`,
    /// see `super::xla_json`), or like an accelerator's device timeline (torch_npu's `Ascend
    /// Hardware`).
    pub fn reads_in_order(&self) -> bool {
        self.xla.is_some() || !self.device_processes.is_empty()
    }

    /// Whether some process is named like an XLA plane: a JAX trace in Chrome JSON.
    pub fn is_jax_json(&self) -> bool {
        self.xla.is_some()
    }

    /// How the processes' names made the trace be read, for the input notes: a JAX trace in
    /// Chrome JSON, or an accelerator's device timeline read as its device's tasks.
    pub fn process_name_note(&self) -> Option<String> {
        if self.xla.is_some() {
            return Some("read as a JAX / XLA trace in Chrome JSON (processes named after XLA planes)".into());
        }
        (!self.device_processes.is_empty()).then(|| {
            format!(
                "read the events without `cat` of {} process(es) named {:?} as device tasks (torch_npu's Ascend NPU timeline)",
                self.device_processes.len(),
                DEVICE_PROCESS_NAMES
            )
        })
    }

    /// Where a `cat`-less event goes: somewhere only in a JAX trace.
    fn xla_dest(&self, ev: &RawEvent<'_>, pid: i64, tid: i64) -> Dest {
        let Some(xla) = &self.xla else { return Dest::Ignore };
        let thread = self.thread_names.get(&(pid, tid)).map_or("", |&n| self.trace.name(n));
        match xla.dest(pid, thread, ev.args.correlation.is_some()) {
            super::xla_json::XlaDest::Gpu(kind, device) => Dest::ProcessDevice(kind, device),
            super::xla_json::XlaDest::Launch => Dest::Launch,
            super::xla_json::XlaDest::CpuOp => Dest::Op(OpKind::CpuOp),
            super::xla_json::XlaDest::Ignore => Dest::Ignore,
        }
    }

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
                self.trace.warnings.add(WarningKind::EventWithoutTs, index, &ev.name_text());
                return None;
            }
            Field::Bad => {
                self.trace.warnings.add(WarningKind::TsNotANumber, index, &ev.name_text());
                return None;
            }
        };
        let dur = match ev.dur {
            Field::Value(v) if v < 0 => {
                self.trace.warnings.add(WarningKind::NegativeDur, index, &ev.name_text());
                0
            }
            Field::Value(v) => v,
            Field::Missing => {
                self.trace.warnings.add(WarningKind::CompleteWithoutDur, index, &ev.name_text());
                return None;
            }
            Field::Bad => {
                self.trace.warnings.add(WarningKind::DurNotANumber, index, &ev.name_text());
                return None;
            }
        };
        Some((ts, dur))
    }

    /// Respells every distinct `Input Dims` text as Kineto writes it ([`canonical_dims`]): once per
    /// distinct text, after parsing, so that reading pays nothing for it.
    fn canonical_input_dims(&mut self) {
        let names = &mut self.trace.names;
        let mut respelled: Vec<NameId> = Vec::new();
        for d in self.trace.ops.input_dims.iter_mut() {
            if *d == NO_NAME {
                continue;
            }
            let k = *d as usize;
            if k >= respelled.len() {
                respelled.resize(names.len().max(k + 1), NO_NAME);
            }
            if respelled[k] == NO_NAME {
                respelled[k] = match canonical_dims(names.resolve(*d).as_bytes()) {
                    std::borrow::Cow::Borrowed(_) => *d,
                    std::borrow::Cow::Owned(text) => names.intern_bytes(&text),
                };
            }
            *d = respelled[k];
        }
    }

    /// Ends building: attaches names to threads and fixes the time origin.
    pub fn finish(mut self, object_form: bool) -> Trace {
        for t in self.trace.threads.iter_mut() {
            t.process_name = self.process_names.get(&t.pid).copied().unwrap_or(NO_NAME);
            t.thread_name = self.thread_names.get(&(t.pid, t.tid)).copied().unwrap_or(NO_NAME);
        }
        self.canonical_input_dims();
        self.name_processes_in_warnings();
        if let Some(xla) = self.xla.take() {
            xla.module_annotations(&mut self.trace);
            if self.trace.meta.devices.is_empty() {
                let devices = xla.device_properties(&self.trace);
                self.trace.meta.absorb("deviceProperties", &devices);
            }
        }
        self.mtia_devices_from_process_names();
        self.runtime_calls_onto_host_threads();
        let t = &mut self.trace;
        t.meta.object_form = object_form;
        super::call_stacks::frames_from_call_stacks(t);
        if t.ops.kind.contains(&OpKind::PythonFunction) {
            t.meta.with_stack = true;
        }
        let first = t.gpu.ts.iter().chain(t.ops.ts.iter()).chain(t.launches.ts.iter()).copied().min();
        t.time_origin_ns = first.unwrap_or(0);
        self.trace
    }
}

impl TraceBuilder {
    /// A runtime process's lanes are OS threads of the host process (torch_npu writes CANN's
    /// calls under their own pid, with the thread's own tid): the calls, and the flows that start
    /// on them, move onto the host's thread of that tid where there is one, so that a thread's
    /// ranges and the runtime calls it made are one thread's.
    fn runtime_calls_onto_host_threads(&mut self) {
        if self.runtime_processes.is_empty() {
            return;
        }
        let is_runtime = |pid: &i64| self.runtime_processes.contains(pid);
        let threads = &self.trace.threads;
        let mut host_of_tid: FastMap<i64, u32> = FastMap::default();
        for (i, th) in threads.iter().enumerate() {
            if !is_runtime(&th.pid) && !self.device_processes.contains_key(&th.pid) {
                host_of_tid.entry(th.tid).or_insert(i as u32);
            }
        }
        let onto: Vec<Option<u32>> =
            threads.iter().map(|th| if is_runtime(&th.pid) { host_of_tid.get(&th.tid).copied() } else { None }).collect();
        for th in self.trace.launches.thread.iter_mut() {
            if let Some(host) = onto[*th as usize] {
                *th = host;
            }
        }
        let f = &mut self.trace.flow_starts;
        for i in 0..f.len() {
            if is_runtime(&f.pid[i]) {
                if let Some(&host) = host_of_tid.get(&f.tid[i]) {
                    f.pid[i] = threads[host as usize].pid;
                }
            }
        }
    }

    /// An MTIA trace whose header lists no device (`deviceProperties: []`) still names each
    /// device's process `MTIA N`: those are its devices.
    fn mtia_devices_from_process_names(&mut self) {
        if self.trace.meta.vendor != super::Vendor::Meta || !self.trace.meta.devices.is_empty() {
            return;
        }
        let mut ids: Vec<i64> = self
            .process_names
            .iter()
            .filter_map(|(&pid, &n)| self.trace.names.resolve(n).strip_prefix("MTIA ")?.parse::<i64>().ok().filter(|&d| d == pid))
            .collect();
        ids.sort_unstable();
        for id in ids {
            self.trace.meta.devices.push(super::DeviceInfo { id, name: format!("MTIA {id}"), ..Default::default() });
        }
    }

    /// Warning examples of events no analysis reads say `(pid N)`: once the process names are
    /// known (Kineto writes them last), `(pid N, process "GPU 0 Counters")`.
    fn name_processes_in_warnings(&mut self) {
        let TraceBuilder { trace, process_names, .. } = self;
        for e in &mut trace.warnings.examples {
            if let Some(&name) = e.pid.and_then(|pid| process_names.get(&pid)) {
                e.name_process(trace.names.resolve(name));
            }
        }
    }
}

impl EventSink for TraceBuilder {
    fn header(&mut self, key: &str, value: serde_json::Value) {
        self.trace.meta.absorb(key, &value);
    }

    fn fact(&mut self, fact: Fact) {
        match fact {
            Fact::WholeGraphReplays { count, ns } => {
                self.trace.meta.whole_graph_replays = Some(crate::model::WholeGraphReplays { count, ns })
            }
            Fact::NsightExport { schema_version } => self.trace.meta.nsight_export(&schema_version),
        }
    }

    fn not_an_object(&mut self, index: u64, _offset: u64) {
        self.trace.stats.events += 1;
        self.trace.stats.skipped += 1;
        self.trace.warnings.add(WarningKind::NotAnObject, index, "");
    }

    fn header_unread(&mut self, key: &str, offset: u64, why: &str) {
        self.trace.warnings.add(WarningKind::HeaderUnread, 0, &format!("\"{key}\" at byte {offset}: {why}"));
    }

    fn repaired(&mut self, index: u64, offset: u64, what: &str, strings: u32) {
        let more = if strings > 1 { format!(" ({strings} strings of the event)") } else { String::new() };
        self.trace.warnings.add(WarningKind::RepairedJson, index, &format!("byte {offset}: {what}{more}"));
    }

    fn event(&mut self, ev: &RawEvent<'_>, index: u64, _offset: u64) {
        self.trace.stats.events += 1;
        let kept = match ev.ph {
            b'X' => self.complete_event(ev, index),
            b's' | b'f' if is_launch_flow(&ev.cat) => self.flow(ev, index),
            b'M' => {
                self.metadata(ev);
                None
            }
            b'C' => {
                let pid = self.id_value(&ev.pid);
                self.trace.warnings.add_of_process(WarningKind::CounterEvents, index, &ev.name_text(), pid);
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
    /// Counts a complete event of a category no analysis reads (a device kind we do not model:
    /// MTIA, XPU, HPU...), as a warning named by its category, with its process id.
    #[cold]
    fn unread_category(&mut self, ev: &RawEvent<'_>, index: u64) {
        let cat = if ev.cat.is_empty() { "(no cat)".into() } else { String::from_utf8_lossy(&ev.cat).into_owned() };
        let kind = WarningKind::UnreadCategory(cat);
        let pid = self.id_value(&ev.pid);
        self.trace.warnings.add_of_process(kind, index, &ev.name_text(), pid);
    }

    /// `Some(true)` kept, `Some(false)` skipped as malformed, `None` not modelled.
    fn complete_event(&mut self, ev: &RawEvent<'_>, index: u64) -> Option<bool> {
        let dest = if ev.cat.is_empty() && self.xla.is_some() {
            let (pid, tid) = (self.id_value(&ev.pid), self.id_value(&ev.tid));
            self.xla_dest(ev, pid, tid)
        } else if ev.cat.is_empty() && !self.device_processes.is_empty() {
            // A device task of an accelerator's timeline process (an Ascend NPU's), else nothing.
            let pid = self.id_value(&ev.pid);
            match self.device_processes.get(&pid) {
                Some(&device) => Dest::ProcessDevice(GpuKind::Kernel, device),
                None if self.runtime_processes.contains(&pid) => Dest::Launch,
                None if self.derived_processes.contains(&pid) => {
                    self.trace.warnings.add(WarningKind::DerivedLanes, index, &ev.name_text());
                    return None;
                }
                None => Dest::Ignore,
            }
        } else {
            if &*ev.cat == MTIA_DEVICE && self.trace.meta.vendor == super::Vendor::Unknown {
                self.trace.meta.vendor = super::Vendor::Meta;
            }
            dest_of_x(&ev.cat, &ev.name)
        };
        if let Dest::Ignore = dest {
            // Events with no `cat` are a JAX trace's to ignore (read by process instead); in any
            // other trace they are counted (a torch_npu trace writes its CANN and overlap lanes so).
            if !quietly_ignored(&ev.cat, &ev.name) || (ev.cat.is_empty() && self.xla.is_none()) {
                self.unread_category(ev, index);
            }
            return None;
        }
        let Some((ts, dur)) = self.times(ev, index) else { return Some(false) };
        let name = match dest {
            Dest::Op(OpKind::CpuOp) => self.trace.names.intern_bytes(stable_op_name(&ev.name)),
            _ => self.trace.names.intern_bytes(&ev.name),
        };
        let pid = self.id_value(&ev.pid);
        let tid = self.id_value(&ev.tid);
        let a = &ev.args;
        let index32 = index.min(u32::MAX as u64) as u32;
        match dest {
            Dest::Gpu(kind) => {
                self.trace.gpu.push(GpuEvent {
                    kind,
                    name,
                    ts,
                    dur,
                    device: device_id(a.device.unwrap_or(pid)),
                    stream: device_id(a.stream.unwrap_or(tid)),
                    correlation: a.correlation.unwrap_or(-1),
                    external_id: a.external_id.unwrap_or(-1),
                    grid: a.grid.unwrap_or([0; 3]),
                    block: a.block.unwrap_or([0; 3]),
                    event_index: index32,
                });
                if let (GpuKind::Memcpy | GpuKind::Memset, Some(bytes)) = (kind, a.bytes.or(a.size)) {
                    let gpu = (self.trace.gpu.len() - 1) as u32;
                    self.trace.copies.push(CopyBytes { gpu, bytes: bytes.max(0) });
                }
                if let (GpuKind::Kernel, Some(graph @ 1..)) = (kind, a.graph_id) {
                    let gpu = (self.trace.gpu.len() - 1) as u32;
                    let graph = u32::try_from(graph).unwrap_or(u32::MAX);
                    self.trace.graph_nodes.push(GraphNode { gpu, graph, node: a.graph_node.unwrap_or(-1) });
                }
            }
            Dest::Op(kind) => {
                let thread = self.thread(pid, tid);
                let dims = self.intern_raw(a.input_dims);
                let types = self.intern_raw(a.input_types);
                let concrete = self.intern_raw(a.concrete_inputs);
                self.trace.ops.push(CpuOp {
                    kind,
                    name,
                    ts,
                    dur,
                    thread,
                    external_id: a.external_id.unwrap_or(-1),
                    input_dims: dims,
                    input_types: types,
                    concrete_inputs: concrete,
                    python_id: a.python_id.unwrap_or(-1),
                    python_parent_id: a.python_parent_id.unwrap_or(-1),
                    event_index: index32,
                });
                if a.comm.is_present() {
                    self.comm_params(&a.comm);
                }
                if let Some(stack) = a.call_stack.as_deref().filter(|s| !s.is_empty()) {
                    let op = (self.trace.ops.len() - 1) as u32;
                    let stack = self.trace.names.intern(stack);
                    self.trace.call_stacks.push(CallStack { op, stack });
                }
            }
            Dest::Launch => {
                let thread = self.thread(pid, tid);
                if let Some(op) = &a.xla.hlo_op {
                    // A JAX launch: the HLO op it runs stands as its CPU op (it encloses the launch).
                    let op = self.trace.names.intern(op);
                    self.trace.ops.push(CpuOp::bare(OpKind::CpuOp, op, ts, dur, thread, index32));
                }
                let n: &[u8] = &ev.name;
                let is_graph = n.starts_with(b"cudaGraphLaunch")
                    || n.starts_with(b"hipGraphLaunch")
                    || n == b"cuGraphLaunch"
                    || ev.args.program;
                self.trace.launches.push(Launch {
                    name,
                    ts,
                    dur,
                    thread,
                    correlation: a.correlation.unwrap_or(-1),
                    external_id: a.external_id.unwrap_or(-1),
                    event_index: index32,
                    is_graph,
                    kernel: a.kernel.as_deref().map_or(NO_NAME, |k| self.trace.names.intern(k)),
                });
            }
            Dest::ProcessDevice(kind, device) => {
                let (grid, block) = a.xla.kernel_details.as_deref().map_or((None, None), crate::ingest::interchange::launch_dims);
                self.trace.gpu.push(GpuEvent {
                    kind,
                    name,
                    ts,
                    dur,
                    device,
                    stream: device_id(tid),
                    correlation: a.correlation.unwrap_or(-1),
                    external_id: -1,
                    grid: grid.unwrap_or([0; 3]),
                    block: block.unwrap_or([0; 3]),
                    event_index: index32,
                });
                let module = a.xla.hlo_module.as_deref().map(|m| self.trace.names.intern(m));
                if let Some(xla) = self.xla.as_mut() {
                    xla.kernel(self.trace.gpu.len() - 1, module, a.correlation.unwrap_or(-1));
                }
            }
            Dest::GpuAnnotation => {
                self.trace.gpu_annotations.push(GpuAnnotation {
                    name,
                    ts,
                    dur,
                    device: device_id(a.device.unwrap_or(pid)),
                    stream: device_id(a.stream.unwrap_or(tid)),
                });
            }
            Dest::Ignore => unreachable!(),
        }
        Some(true)
    }

    /// Records the communication parameters of the CPU op just pushed.
    fn comm_params(&mut self, c: &crate::ingest::interchange::CommArgs<'_>) {
        let mut text = |t: &Option<std::borrow::Cow<'_, str>>| t.as_deref().map_or(NO_NAME, |t| self.trace.names.intern(t));
        let row = CommParam {
            op: (self.trace.ops.len() - 1) as u32,
            group: text(&c.group),
            group_ranks: text(&c.group_ranks),
            collective: text(&c.collective),
            in_nelems: c.in_nelems.unwrap_or(-1),
            out_nelems: c.out_nelems.unwrap_or(-1),
            group_size: c.group_size.unwrap_or(-1),
            dtype: text(&c.dtype),
        };
        self.trace.comm.push(row);
    }

    fn flow(&mut self, ev: &RawEvent<'_>, index: u64) -> Option<bool> {
        let (Field::Value(ts), Some(id)) = (ev.ts, ev.id) else {
            self.trace.warnings.add(WarningKind::FlowWithoutTsOrId, index, "");
            return Some(false);
        };
        let end = FlowEnd { id, pid: self.id_value(&ev.pid), tid: self.id_value(&ev.tid), ts };
        if ev.ph == b's' && &*ev.cat == TORCH_NPU_FLOW {
            // torch_npu writes no runtime call: the flow's start, inside the op that launched
            // the task, stands for it (a call of no duration the op encloses).
            let (thread, name) = (self.thread(end.pid, end.tid), self.trace.names.intern_bytes(&ev.name));
            let event_index = index.min(u32::MAX as u64) as u32;
            let (correlation, external_id, is_graph, kernel) = (-1, -1, false, NO_NAME);
            self.trace.launches.push(Launch {
                name,
                ts,
                dur: 0,
                thread,
                correlation,
                external_id,
                event_index,
                is_graph,
                kernel,
            });
        }
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
                if RUNTIME_PROCESS_NAMES.contains(&&**value) && !self.runtime_processes.contains(&pid) {
                    self.runtime_processes.push(pid);
                }
                if DERIVED_PROCESS_NAMES.contains(&&**value) && !self.derived_processes.contains(&pid) {
                    self.derived_processes.push(pid);
                }
                if DEVICE_PROCESS_NAMES.contains(&&**value) && !self.device_processes.contains_key(&pid) {
                    let device = self.device_processes.len() as i32;
                    self.device_processes.insert(pid, device);
                    self.trace.meta.vendor = super::Vendor::Huawei;
                    self.trace.meta.devices.push(super::DeviceInfo {
                        id: device as i64,
                        name: format!("Ascend NPU {device}"),
                        ..Default::default()
                    });
                }
                if let Some(plane) = super::xla_json::plane_named(value) {
                    self.xla.get_or_insert_with(Default::default).add_plane(pid, plane);
                }
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
    pub fn absorb(&mut self, other: PartBuilder, event_offset: u64) {
        match other {
            PartBuilder::Parsed(o) => {
                let ids = self.absorb_ids(&o);
                let to = self.remap(&ids, event_offset);
                self.absorb_parsed_rows(&o.trace, &to);
                self.absorb_rest(o, event_offset);
            }
            PartBuilder::InBytes(part) => {
                let ids = self.absorb_ids(&part.small);
                let to = self.remap(&ids, event_offset);
                append_rows(&mut self.trace, &mut part.rows(), part.rows, &to);
                self.absorb_rest(part.small, event_offset);
            }
        }
    }

    /// How a part's ids and rows become ours: its names and threads as `ids` maps them, its rows
    /// after the ones we hold.
    fn remap<'a>(&self, ids: &'a IdMaps, event_offset: u64) -> Remap<'a> {
        Remap {
            names: &ids.names,
            threads: &ids.threads,
            event_offset,
            op_offset: self.trace.ops.len() as u32,
            gpu_offset: self.trace.gpu.len() as u32,
        }
    }

    /// Interns the other builder's names and threads here; adds its process and thread names.
    fn absorb_ids(&mut self, o: &TraceBuilder) -> IdMaps {
        let names: Vec<NameId> =
            (0..o.trace.names.len()).map(|i| self.trace.names.intern(o.trace.names.resolve(i as NameId))).collect();
        let id = |v: i64| Remap { names: &names, threads: &[], event_offset: 0, op_offset: 0, gpu_offset: 0 }.id(v);
        let threads = o.trace.threads.iter().map(|t| (id(t.pid), id(t.tid))).collect::<Vec<_>>();
        let threads = threads.into_iter().map(|(pid, tid)| self.thread(pid, tid)).collect();
        for (&pid, &n) in &o.process_names {
            self.process_names.entry(id(pid)).or_insert(names[n as usize]);
        }
        for (&(pid, tid), &n) in &o.thread_names {
            self.thread_names.entry((id(pid), id(tid))).or_insert(names[n as usize]);
        }
        IdMaps { names, threads }
    }

    /// Appends a part's own columns (parsed in this process): natively, the CPU ops (about half
    /// the bytes) are appended on a second thread while this one appends every other table.
    fn absorb_parsed_rows(&mut self, o: &Trace, to: &Remap) {
        let Trace {
            gpu, ops, launches, gpu_annotations, flow_starts, flow_finishes, comm, copies, graph_nodes, call_stacks, ..
        } = &mut self.trace;
        crate::support::threads::both(
            row_counts(o).iter().sum(),
            || ops.append(&o.ops, to),
            || {
                gpu.append(&o.gpu, to);
                launches.append(&o.launches, to);
                gpu_annotations.append(&o.gpu_annotations, to);
                flow_starts.append(&o.flow_starts, to);
                flow_finishes.append(&o.flow_finishes, to);
                comm.append(&o.comm, to);
                copies.append(&o.copies, to);
                graph_nodes.append(&o.graph_nodes, to);
                call_stacks.append(&o.call_stacks, to);
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

/// The adopting builder's name id and thread row of each of a part's.
struct IdMaps {
    names: Vec<NameId>,
    threads: Vec<u32>,
}

#[cfg(test)]
mod tests {
    use super::canonical_dims;

    #[test]
    fn dims_are_spelled_as_kineto_writes_them() {
        assert_eq!(&*canonical_dims(b"[[8, 12, 3137, 3137], [], []]"), b"[[8, 12, 3137, 3137], [], []]");
        let indented = b"[\n  [\n    8,\n    12,\n    3137,\n    3137\n  ],\n  [],\n  []\n]";
        assert_eq!(&*canonical_dims(indented), b"[[8, 12, 3137, 3137], [], []]");
        assert_eq!(&*canonical_dims(b"[[4,2]]"), b"[[4, 2]]");
    }
}
