//! bytes → events for JAX / XLA profiles: the protobuf `XSpace` that `jax.profiler` writes
//! (`*.xplane.pb`), read straight from the protobuf wire format (no generated code, no Python).
//!
//! An `XSpace` holds planes; a plane (`/device:GPU:0`, `/host:CPU`) holds lines (GPU streams, host
//! threads) of events, and per-plane tables naming each event (`event_metadata`) and each stat
//! (`stat_metadata`). The messages and field numbers read here (from `xplane.proto`):
//!
//! ```text
//! XSpace         { planes = 1 }
//! XPlane         { id = 1, name = 2, lines = 3, event_metadata = 4 (map), stat_metadata = 5 (map) }
//! XLine          { id = 1, name = 2, timestamp_ns = 3, events = 4 }
//! XEvent         { metadata_id = 1, offset_ps = 2, duration_ps = 3, stats = 4 }
//! XStat          { metadata_id = 1, double = 2, uint64 = 3, int64 = 4, str = 5, bytes = 6, ref = 7 }
//! XEventMetadata { id = 1, name = 2, display_name = 4 }
//! XStatMetadata  { id = 1, name = 2 }
//! ```
//!
//! Each event becomes the event a Chrome trace would hold, handed to the same [`EventSink`]:
//! events of a `/device:GPU:N` plane are kernels (memcpy / memset on copy lines) of device N on
//! the stream of their line; host events with a `correlation_id` are runtime launches (so kernels
//! link to them); other host events are CPU ops. Each run of a device's kernels from one execution
//! of an HLO module becomes a `user_annotation` named `XlaModule:<module>` over its launches, so
//! passes follow module executions.

use super::interchange::{launch_dims, Args, EventSink, Field, Id, ModuleRun, ModuleRuns, RawEvent};
use crate::error::{Error, Result};
use std::borrow::Cow;
use std::collections::HashMap;

/// Process id given to host planes (device planes use their device number).
const HOST_PID: i64 = 1 << 20;
/// Process ids of device planes of kinds traceprism does not read (their events are counted).
const FOREIGN_PID: i64 = (1 << 20) + 1000;

/// Whether `bytes` start like a serialized `XSpace`: a plane (field 1, length-delimited) whose
/// first fields are its id and a name starting with `/` (`/device:GPU:0`, `/host:CPU`).
pub fn looks_like_xspace(bytes: &[u8]) -> bool {
    // Only the first bytes are looked at: the first plane may be far longer than what was read.
    let mut w = Wire::new(bytes, 0);
    const PLANES: u64 = 1 << 3 | 2;
    let (Ok(PLANES), Ok(_len)) = (w.varint(), w.varint()) else { return false };
    for _ in 0..2 {
        match w.varint() {
            Ok(k) if k == (1 << 3) => {
                if w.varint().is_err() {
                    return false;
                }
            }
            Ok(k) if k == (2 << 3 | 2) => {
                return w.varint().is_ok() && w.buf.get(w.pos) == Some(&b'/');
            }
            _ => return false,
        }
    }
    false
}

/// Device-plane lines not read as device events: lines derived from the streams (op, module,
/// name-scope and step lines of XLA or TensorFlow), which repeat the streams' time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DerivedLines {
    /// Such lines over all device planes.
    pub lines: usize,
    /// Their events.
    pub events: u64,
    /// Their distinct names, in the order met.
    pub names: Vec<String>,
}

impl DerivedLines {
    /// A note for the summary, or `None` when there were none.
    pub fn note(&self) -> Option<String> {
        (self.lines > 0).then(|| {
            format!(
                "{} events of {} derived device lines ({}) not read as kernels: they repeat the Stream lines' events",
                self.events,
                self.lines,
                self.names.join(", ")
            )
        })
    }
}

/// Reads a whole `XSpace` and hands its events to `sink`; returns the derived lines it left out.
/// Errors name the byte offset of a field that does not decode.
pub fn read_xspace(bytes: &[u8], sink: &mut impl EventSink) -> Result<DerivedLines> {
    read_planes(bytes, sink).map_err(|e| match reencoded_as_text(bytes) {
        Some((at, said)) => Error::at(format!("not a valid XSpace: {said}"), at as u64),
        None => e,
    })
}

/// Why bytes that failed to decode look like a binary file passed through a text pipeline (a
/// `git` checkout with text attributes, a copy through an editor or a chat), if they do: UTF-8
/// replacement characters (U+FFFD, bytes `EF BF BD`) where undecodable bytes were, or every line
/// feed preceded by a carriage return (line endings rewritten; a protobuf has bare `0x0A` bytes).
fn reencoded_as_text(bytes: &[u8]) -> Option<(usize, String)> {
    use crate::support::text::{crlf_line_endings, replacement_characters};
    const FIX: &str = "fetch or copy the .xplane.pb as binary";
    if let Some((at, n)) = replacement_characters(bytes) {
        return Some((at, format!(
            "the bytes look re-encoded as text at byte {at}: {n} UTF-8 replacement characters (U+FFFD) stand where bytes that were no text were ({FIX})"
        )));
    }
    if let Some((at, feeds)) = crlf_line_endings(bytes).filter(|&(_, feeds)| feeds >= 8) {
        return Some((at, format!(
            "the bytes look re-encoded as text at byte {at}: every one of its {feeds} line feeds follows a carriage return (line endings rewritten; {FIX})"
        )));
    }
    None
}

fn read_planes(bytes: &[u8], sink: &mut impl EventSink) -> Result<DerivedLines> {
    let mut planes = Vec::new();
    let mut w = Wire::new(bytes, 0);
    while let Some((field, value)) = w.next()? {
        if let (1, Value::Bytes(b, at)) = (field, value) {
            planes.push(Plane::decode(b, at)?);
        }
    }
    if planes.is_empty() {
        return Err(Error::new("XSpace with no planes: the profile holds no events"));
    }
    let devices: Vec<serde_json::Value> = planes.iter().filter_map(|p| Some(p.device_properties(p.device()?))).collect();
    sink.header("deviceProperties", serde_json::Value::Array(devices));
    let mut out = Emitter { sink, index: 0 };
    // Launch times by correlation id, to place each module execution on the host.
    let mut launches: HashMap<u64, (i64, i64, i64)> = HashMap::new(); // correlation → (ts, end, tid)

    // The runs of XLA programs on each TPU plane (none on other planes), and the flows they
    // consume from their host launches.
    let programs: Vec<Vec<ProgramSpan<'_>>> =
        planes.iter().map(|p| if p.is_tpu() { program_spans(p) } else { Ok(Vec::new()) }).collect::<Result<_>>()?;
    let program_flows: std::collections::HashSet<Flow> = programs.iter().flatten().map(|p| p.flow).collect();
    // A device plane of a kind traceprism does not read (`/device:TPU:0`, a custom accelerator)
    // is no host: its events are counted under its own name, never read as CPU ops.
    let foreign = |p: &Plane<'_>| p.device().is_none() && p.name.starts_with("/device:");
    for plane in planes.iter().filter(|p| p.device().is_none() && !foreign(p)) {
        out.metadata(b"process_name", HOST_PID, 0, plane.name);
        for line in &plane.lines {
            out.metadata(b"thread_name", HOST_PID, line.id, line.name);
            for e in line.events(plane)? {
                // A kernel launch (`correlation_id`), or the launch of an XLA program a TPU ran.
                let program = e.flow(plane, "_pt", "_p").filter(|f| program_flows.contains(f));
                let correlation = e.stat_u64(plane, "correlation_id").or(program.map(|(_, id)| flow_correlation(id)));
                let cat: &[u8] = if correlation.is_some() { b"cuda_runtime" } else { b"cpu_op" };
                if let Some(c) = correlation {
                    launches.insert(c, (e.ts_ns, e.ts_ns.saturating_add(e.dur_ns), line.id));
                    // The HLO op a launch runs stands as its CPU op (it encloses the launch).
                    if let Some(op) = e.stat_str(plane, "hlo_op") {
                        out.hlo_op(op, &e, HOST_PID, line.id);
                    }
                }
                let args = Args { correlation: correlation.map(|c| c as i64), program: program.is_some(), ..Args::default() };
                out.event(cat, &e, HOST_PID, line.id, args);
            }
        }
    }
    for (k, plane) in planes.iter().filter(|p| foreign(p)).enumerate() {
        let pid = FOREIGN_PID + k as i64;
        out.metadata(b"process_name", pid, 0, plane.name);
        let cat = format!("xspace {}", plane.name.trim_end_matches(|c: char| c.is_ascii_digit()));
        for line in &plane.lines {
            for e in line.events(plane)? {
                out.event(cat.as_bytes(), &e, pid, line.id, Args::default());
            }
        }
    }
    let mut derived = DerivedLines::default();
    for (plane, programs) in planes.iter().zip(&programs) {
        let Some(device) = plane.device() else { continue };
        out.metadata(b"process_name", device, 0, plane.name);
        for line in &plane.lines {
            out.metadata(b"thread_name", device, line.id, line.name);
            // Only stream lines (`Stream #16(Kernel)`, `Stream #134(Compute)`, `Stream #135(MemcpyH2D)`)
            // hold device events; every other line (`XLA Ops`, `XLA Modules`, `TensorFlow Ops`,
            // `TensorFlow Name Scope`, `Framework …`, `Steps`, `Source code`) is derived from them.
            let kind = if plane.is_tpu() { tpu_line_kind(line.name) } else { stream_line_kind(line.name) };
            let Some(cat) = kind else {
                derived.lines += 1;
                derived.events += line.events.len() as u64;
                if !derived.names.iter().any(|n| n == line.name) {
                    derived.names.push(line.name.to_string());
                }
                continue;
            };
            let mut runs = ModuleRuns::default();
            for e in line.events(plane)? {
                // A TPU op runs in the program run (`XLA Modules`) its start falls in.
                let program =
                    programs.get(programs.partition_point(|p| p.ts <= e.ts_ns).wrapping_sub(1)).filter(|p| e.ts_ns < p.end);
                let correlation = e.stat_u64(plane, "correlation_id").or(program.map(|p| flow_correlation(p.flow.1)));
                let (grid, block) = e.stat_str(plane, "kernel_details").map_or((None, None), launch_dims);
                let args = Args {
                    correlation: correlation.map(|c| c as i64),
                    device: Some(device),
                    stream: Some(line.id),
                    grid,
                    block,
                    ..Args::default()
                };
                out.event(cat, &e, device, line.id, args);
                // Consecutive kernels of one module execution (same module, same program id).
                let module = match program {
                    Some(p) => Some((p.name.to_string(), Some(p.run_id))),
                    None => e.stat_str(plane, "hlo_module").map(|m| (m.to_string(), e.stat_i64(plane, "program_id"))),
                };
                let launch = correlation.and_then(|c| launches.get(&c).copied());
                runs.push(module, launch);
            }
            for run in runs.into_runs() {
                out.module_annotation(&run);
            }
        }
    }
    Ok(derived)
}

/// What a device plane's line holds: kernels, copies or sets on a `Stream …` line, `None` for a
/// line derived from them (op, module, name-scope and step lines of XLA or TensorFlow).
fn stream_line_kind(name: &str) -> Option<&'static [u8]> {
    if !name.starts_with("Stream") {
        return None;
    }
    Some(if name.contains("Memcpy") {
        b"gpu_memcpy"
    } else if name.contains("Memset") {
        b"gpu_memset"
    } else {
        b"kernel"
    })
}

/// A flow between events of an XSpace: (context type, id). A host's `DoEnqueueProgram` produces
/// (`_pt`, `_p`) the flow a TPU's `XLA Modules` event (one run of an XLA program) consumes
/// (`_ct`, `_c`).
type Flow = (u64, u64);

/// A flow id as a correlation id (the model's ids are non-negative `i64`s; XLA's flow ids use
/// all 64 bits).
fn flow_correlation(id: u64) -> u64 {
    id & (i64::MAX as u64)
}

/// One run of an XLA program on a TPU: its span, its module's name, its `run_id` and the flow it
/// consumes from its launch.
struct ProgramSpan<'a> {
    ts: i64,
    end: i64,
    name: &'a str,
    run_id: i64,
    flow: Flow,
}

/// The program runs of a TPU plane (its `XLA Modules` events that consume a flow), in time order,
/// each decoded once: the host's launches are found by these flows, the plane's ops placed in
/// these spans.
fn program_spans<'a>(plane: &Plane<'a>) -> Result<Vec<ProgramSpan<'a>>> {
    let mut out = Vec::new();
    for line in plane.lines.iter().filter(|l| l.name == "XLA Modules") {
        for e in line.events(plane)? {
            if let Some(flow) = e.flow(plane, "_ct", "_c") {
                let run_id = e.stat_i64(plane, "run_id").unwrap_or(-1);
                out.push(ProgramSpan { ts: e.ts_ns, end: e.ts_ns.saturating_add(e.dur_ns), name: e.name, run_id, flow });
            }
        }
    }
    out.sort_by_key(|p| p.ts);
    Ok(out)
}

/// What a TPU plane's line holds: the chip's XLA ops (its device work) on `XLA Ops`; every other
/// line (`XLA Modules`, `Async XLA Ops`, `XLA TraceMe`, `Steps`) spans or repeats them.
fn tpu_line_kind(name: &str) -> Option<&'static [u8]> {
    (name == "XLA Ops").then_some(b"kernel")
}

struct Emitter<'s, S: EventSink> {
    sink: &'s mut S,
    index: u64,
}

/// Where an emitted event sits: its lane (`pid`, `tid`), its time (ns) and the byte offset of the
/// XEvent it comes from (0 for one made from several).
#[derive(Debug, Clone, Copy)]
struct Placed {
    pid: i64,
    tid: i64,
    ts: i64,
    dur: i64,
    offset: usize,
}

impl Placed {
    fn of(e: &Event<'_>, pid: i64, tid: i64) -> Placed {
        Placed { pid, tid, ts: e.ts_ns, dur: e.dur_ns, offset: e.offset }
    }
}

impl<S: EventSink> Emitter<'_, S> {
    fn metadata(&mut self, what: &'static [u8], pid: i64, tid: i64, name: &str) {
        let args = Args { name: Some(Cow::Borrowed(name)), ..Args::default() };
        let ev =
            RawEvent { ph: b'M', name: Cow::Borrowed(what), pid: Id::Num(pid), tid: Id::Num(tid), args, ..RawEvent::default() };
        self.sink.event(&ev, self.index, 0);
        self.index += 1;
    }

    /// One complete (`X`) event at `at`.
    fn complete(&mut self, cat: &[u8], name: Cow<'_, [u8]>, at: Placed, args: Args<'_>) {
        let ev = RawEvent {
            ph: b'X',
            cat: Cow::Borrowed(cat),
            name,
            pid: Id::Num(at.pid),
            tid: Id::Num(at.tid),
            ts: Field::Value(at.ts),
            dur: Field::Value(at.dur),
            id: None,
            args,
        };
        self.sink.event(&ev, self.index, at.offset as u64);
        self.index += 1;
    }

    fn event(&mut self, cat: &[u8], e: &Event<'_>, pid: i64, tid: i64, args: Args<'_>) {
        self.complete(cat, Cow::Borrowed(e.name.as_bytes()), Placed::of(e, pid, tid), args);
    }

    fn hlo_op(&mut self, op: &str, e: &Event<'_>, pid: i64, tid: i64) {
        self.complete(b"cpu_op", Cow::Borrowed(op.as_bytes()), Placed::of(e, pid, tid), Args::default());
    }

    fn module_annotation(&mut self, run: &ModuleRun<(String, Option<i64>), i64>) {
        let name = format!("XlaModule:{}", run.module.0).into_bytes();
        let dur = run.end.saturating_sub(run.ts);
        let at = Placed { pid: HOST_PID, tid: run.thread, ts: run.ts, dur, offset: 0 };
        self.complete(b"user_annotation", Cow::Owned(name), at, Args::default());
    }
}

/// One plane: its name, lines (undecoded) and name tables.
struct Plane<'a> {
    name: &'a str,
    /// The plane's own stats (a device's vendor, core count, compute capability).
    stats: Vec<(i64, Stat<'a>)>,
    lines: Vec<Line<'a>>,
    event_names: HashMap<i64, &'a str>,
    stat_names: HashMap<i64, &'a str>,
    /// `stat_names` the other way: a stat is looked up by its name's id, once per query.
    stat_ids: HashMap<&'a str, i64>,
}

impl<'a> Plane<'a> {
    fn decode(b: &'a [u8], at: usize) -> Result<Plane<'a>> {
        let mut p = Plane {
            name: "",
            stats: Vec::new(),
            lines: Vec::new(),
            event_names: HashMap::new(),
            stat_names: HashMap::new(),
            stat_ids: HashMap::new(),
        };
        let mut w = Wire::new(b, at);
        while let Some((field, value)) = w.next()? {
            match (field, value) {
                (2, Value::Bytes(s, at)) => p.name = text(s, at)?,
                (3, Value::Bytes(s, at)) => p.lines.push(Line::decode(s, at)?),
                (6, Value::Bytes(s, at)) => p.stats.push(stat(s, at)?),
                (4 | 5, Value::Bytes(entry, at)) => {
                    // map<int64, XEventMetadata | XStatMetadata>: key = 1, value = 2 { id = 1, name = 2, display_name = 4 }.
                    let (mut key, mut name, mut display) = (0i64, "", "");
                    let mut e = Wire::new(entry, at);
                    while let Some((f, v)) = e.next()? {
                        match (f, v) {
                            (1, Value::Varint(k)) => key = k as i64,
                            (2, Value::Bytes(meta, at)) => {
                                let mut m = Wire::new(meta, at);
                                while let Some((f, v)) = m.next()? {
                                    match (f, v) {
                                        (2, Value::Bytes(s, at)) => name = text(s, at)?,
                                        (4, Value::Bytes(s, at)) if field == 4 => display = text(s, at)?,
                                        _ => {}
                                    }
                                }
                            }
                            _ => {}
                        }
                    }
                    let shown = if display.is_empty() { name } else { display };
                    if field == 4 {
                        p.event_names.insert(key, shown);
                    } else {
                        p.stat_names.insert(key, name);
                        p.stat_ids.insert(name, key);
                    }
                }
                _ => {}
            }
        }
        Ok(p)
    }

    /// The plane stat `name`.
    fn stat(&self, name: &str) -> Option<Stat<'a>> {
        find_stat(&self.stats, self.stat_ids.get(name)?)
    }

    /// This device plane as a `deviceProperties` entry of a Chrome trace.
    fn device_properties(&self, device: i64) -> serde_json::Value {
        let int = |name: &str| match self.stat(name) {
            Some(Stat::Int(v)) => v,
            Some(Stat::Uint(v)) => v as i64,
            _ => 0,
        };
        let vendor = match self.stat("device_vendor") {
            Some(Stat::Text(v)) => v,
            _ => "",
        };
        let amd = vendor.eq_ignore_ascii_case("amd");
        if self.is_tpu() {
            // A TPU plane names its chip (`TPU v6 Lite`); no SMs, no warps.
            let kind = match self.stat("device_type_string") {
                Some(Stat::Text(t)) if !t.is_empty() => t,
                _ => "TPU",
            };
            return serde_json::json!({ "id": device, "name": format!("{kind} (TPU {device})"), "vendor": "Google", "warpSize": 0 });
        }
        serde_json::json!({
            "id": device,
            "name": format!("{} GPU {device} (XLA)", if vendor.is_empty() { "unknown" } else { vendor }),
            "numSms": int("core_count"),
            "computeMajor": int("compute_cap_major"),
            "computeMinor": int("compute_cap_minor"),
            "warpSize": if amd { 64 } else { 32 },
        })
    }

    /// The device number of a `/device:GPU:N` or `/device:TPU:N` plane.
    fn device(&self) -> Option<i64> {
        self.name.strip_prefix("/device:GPU:").or_else(|| self.name.strip_prefix("/device:TPU:")).and_then(|n| n.parse().ok())
    }

    /// True for a TPU chip's plane: its device work is the `XLA Ops` line.
    fn is_tpu(&self) -> bool {
        self.name.starts_with("/device:TPU:")
    }
}

struct Line<'a> {
    id: i64,
    name: &'a str,
    timestamp_ns: i64,
    events: Vec<(&'a [u8], usize)>,
}

impl<'a> Line<'a> {
    fn decode(b: &'a [u8], at: usize) -> Result<Line<'a>> {
        let mut l = Line { id: 0, name: "", timestamp_ns: 0, events: Vec::new() };
        let mut display = "";
        let mut w = Wire::new(b, at);
        while let Some((field, value)) = w.next()? {
            match (field, value) {
                (1, Value::Varint(v)) => l.id = v as i64,
                (2, Value::Bytes(s, at)) => l.name = text(s, at)?,
                (11, Value::Bytes(s, at)) => display = text(s, at)?,
                (3, Value::Varint(v)) => l.timestamp_ns = v as i64,
                (4, Value::Bytes(e, at)) => l.events.push((e, at)),
                _ => {}
            }
        }
        if l.name.is_empty() {
            l.name = display;
        }
        Ok(l)
    }

    fn events(&self, plane: &Plane<'a>) -> Result<Vec<Event<'a>>> {
        self.events.iter().map(|&(b, at)| Event::decode(b, at, self.timestamp_ns, plane)).collect()
    }
}

/// A stat's value.
#[derive(Clone, Copy)]
enum Stat<'a> {
    Int(i64),
    Uint(u64),
    Double(f64),
    Text(&'a str),
    /// A reference to a stat metadata entry whose name is the value.
    Ref(i64),
}

struct Event<'a> {
    name: &'a str,
    ts_ns: i64,
    dur_ns: i64,
    offset: usize,
    stats: Vec<(i64, Stat<'a>)>,
}

impl<'a> Event<'a> {
    fn decode(b: &'a [u8], at: usize, line_ns: i64, plane: &Plane<'a>) -> Result<Event<'a>> {
        let (mut meta, mut offset_ps, mut dur_ps) = (0i64, 0i64, 0i64);
        let mut stats = Vec::new();
        let mut w = Wire::new(b, at);
        while let Some((field, value)) = w.next()? {
            match (field, value) {
                (1, Value::Varint(v)) => meta = v as i64,
                (2, Value::Varint(v)) => offset_ps = v as i64,
                (3, Value::Varint(v)) => dur_ps = v as i64,
                (4, Value::Bytes(s, at)) => stats.push(stat(s, at)?),
                _ => {}
            }
        }
        let name = plane.event_names.get(&meta).copied().unwrap_or("(unnamed XLA event)");
        Ok(Event { name, ts_ns: line_ns.saturating_add(offset_ps / 1000), dur_ns: (dur_ps / 1000).max(0), offset: at, stats })
    }

    fn stat(&self, plane: &Plane<'a>, name: &str) -> Option<Stat<'a>> {
        find_stat(&self.stats, plane.stat_ids.get(name)?)
    }

    fn stat_u64(&self, plane: &Plane<'a>, name: &str) -> Option<u64> {
        match self.stat(plane, name)? {
            Stat::Uint(v) => Some(v),
            Stat::Int(v) => u64::try_from(v).ok(),
            _ => None,
        }
    }

    /// A flow this event produces or consumes: the stats `kind` (context type) and `id`, with
    /// every bit of the id kept.
    fn flow(&self, plane: &Plane<'a>, kind: &str, id: &str) -> Option<Flow> {
        let bits = |s: Stat<'a>| match s {
            Stat::Uint(v) => Some(v),
            Stat::Int(v) => Some(v as u64),
            _ => None,
        };
        Some((bits(self.stat(plane, kind)?)?, bits(self.stat(plane, id)?)?))
    }

    fn stat_i64(&self, plane: &Plane<'a>, name: &str) -> Option<i64> {
        match self.stat(plane, name)? {
            Stat::Int(v) => Some(v),
            Stat::Uint(v) => i64::try_from(v).ok(),
            Stat::Double(v) => Some(v as i64),
            _ => None,
        }
    }

    fn stat_str(&self, plane: &Plane<'a>, name: &str) -> Option<&'a str> {
        match self.stat(plane, name)? {
            Stat::Text(s) => Some(s),
            Stat::Ref(id) => plane.stat_names.get(&id).copied(),
            _ => None,
        }
    }
}

/// The value of stat `id` among `stats`.
fn find_stat<'a>(stats: &[(i64, Stat<'a>)], id: &i64) -> Option<Stat<'a>> {
    stats.iter().find(|(i, _)| i == id).map(|&(_, v)| v)
}

fn stat(b: &[u8], at: usize) -> Result<(i64, Stat<'_>)> {
    let (mut id, mut value) = (0i64, Stat::Int(0));
    let mut w = Wire::new(b, at);
    while let Some((field, v)) = w.next()? {
        match (field, v) {
            (1, Value::Varint(x)) => id = x as i64,
            (2, Value::Fixed64(x)) => value = Stat::Double(f64::from_bits(x)),
            (3, Value::Varint(x)) => value = Stat::Uint(x),
            (4, Value::Varint(x)) => value = Stat::Int(x as i64),
            (5, Value::Bytes(s, at)) => value = Stat::Text(text(s, at)?),
            (7, Value::Varint(x)) => value = Stat::Ref(x as i64),
            _ => {}
        }
    }
    Ok((id, value))
}

fn text(b: &[u8], at: usize) -> Result<&str> {
    std::str::from_utf8(b).map_err(|_| Error::at("XSpace: a name is not UTF-8", at as u64))
}

/// One field's value on the wire.
enum Value<'a> {
    Varint(u64),
    Fixed64(u64),
    Fixed32,
    /// Length-delimited bytes and their absolute offset.
    Bytes(&'a [u8], usize),
}

/// A cursor over one message's fields.
struct Wire<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Absolute offset of `buf[0]` in the file, for errors.
    base: usize,
}

impl<'a> Wire<'a> {
    fn new(buf: &'a [u8], base: usize) -> Self {
        Wire { buf, pos: 0, base }
    }

    fn varint(&mut self) -> Result<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(&b) = self.buf.get(self.pos) else { return Err(self.cut("a number")) };
            self.pos += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(Error::at("XSpace: a number longer than 10 bytes", (self.base + self.pos) as u64))
    }

    fn cut(&self, what: &str) -> Error {
        Error::at(format!("XSpace: the file ends inside {what} (cut short?)"), (self.base + self.pos) as u64)
    }

    fn next(&mut self) -> Result<Option<(u32, Value<'a>)>> {
        if self.pos >= self.buf.len() {
            return Ok(None);
        }
        let at = self.base + self.pos;
        let key = self.varint()?;
        let field = (key >> 3) as u32;
        let value = match key & 7 {
            0 => Value::Varint(self.varint()?),
            1 => {
                let b = self.buf.get(self.pos..self.pos + 8).ok_or_else(|| self.cut("a fixed64 field"))?;
                self.pos += 8;
                Value::Fixed64(u64::from_le_bytes(b.try_into().expect("8 bytes")))
            }
            2 => {
                let len = self.varint()? as usize;
                let start = self.pos;
                let b = self.buf.get(start..start.saturating_add(len)).ok_or_else(|| self.cut("a length-delimited field"))?;
                self.pos = start + len;
                Value::Bytes(b, self.base + start)
            }
            5 => {
                self.buf.get(self.pos..self.pos + 4).ok_or_else(|| self.cut("a fixed32 field"))?;
                self.pos += 4;
                Value::Fixed32
            }
            wire => {
                return Err(Error::at(
                    format!("XSpace: field {field} has wire type {wire}, which protobuf does not define here (not an XSpace?)"),
                    at as u64,
                ))
            }
        };
        Ok(Some((field, value)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_dims_read_kernel_details() {
        assert_eq!(launch_dims(" grid:1280,1,1 block:256,1,1 private_mem:0"), (Some([1280, 1, 1]), Some([256, 1, 1])));
        assert_eq!(launch_dims("nothing"), (None, None));
    }

    #[test]
    fn json_and_gzip_are_not_xspace() {
        assert!(!looks_like_xspace(b"{\"traceEvents\": []}"));
        assert!(!looks_like_xspace(&[0x1f, 0x8b, 8, 0]));
        // A plane with a name starting with '/': field 1 { field 2 "/h" }.
        assert!(looks_like_xspace(&[0x0a, 4, 0x12, 2, b'/', b'h']));
    }
}
