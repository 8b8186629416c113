//! A [`TraceBuilder`] as bytes and back, so a part of a trace parsed in one Web Worker can be
//! moved (an ArrayBuffer transfer, no structured clone) to the worker that merges the parts.
//!
//! Layout: first the small tables (names, threads, counts, warnings, metadata, name maps) and the
//! row count of each table; strings are a `u32` byte length followed by UTF-8. The interned names
//! come first, in id order, so every name column is sent as its ids. Then the rows: each table's
//! columns, one after the other, as plain little-endian values, in the order its declaration
//! ([`super::schema`]) lists them; link columns are not sent (a builder has linked nothing yet).
//! Decoding checks every length, enum tag and id, so malformed bytes give an error, never a
//! panic.
//!
//! Moving a part costs about one pass over its bytes at each end: the helper writes its columns
//! straight into the output ([`WireSink`]; in the page a JS array, through a small staging
//! buffer), and the adopting reader checks the rows where they are ([`ByteSource`]; in the page
//! the moved JS array) and appends them to its own columns ([`TraceBuilder::absorb`]), each of
//! which grows once. No whole copy of the part is made in either worker's memory.

use super::schema::{Limits, Remap, RowsInBytes};
use super::*;
use crate::error::Result;
use crate::support::codec::{malformed, ByteSource, WireReader, WireSink, WireWriter};

fn vendor_tag(v: Vendor) -> u8 {
    match v {
        Vendor::Nvidia => 0,
        Vendor::Amd => 1,
        Vendor::Unknown => 2,
        Vendor::Google => 3,
        Vendor::Huawei => 4,
        Vendor::Meta => 5,
    }
}

/// The variant whose tag (given by the exhaustive `tag_of`, the one place tags are defined) is `tag`.
fn from_tag<T: Copy>(variants: &[T], tag_of: fn(T) -> u8, tag: u8, what: &str) -> Result<T> {
    variants.iter().copied().find(|&v| tag_of(v) == tag).ok_or_else(|| malformed(what))
}

/// Rows of each of the model's tables, in the order their bytes follow each other: GPU events, CPU
/// ranges, launches, GPU annotations, flow starts, flow finishes, communication parameters, bytes
/// of copies, graph nodes, call stacks.
pub type RowCounts = [usize; 10];

/// Bytes per row of each table, in [`RowCounts`] order.
const ROW_BYTES: RowCounts = [
    GpuEvents::WIRE_ROW_BYTES,
    CpuOps::WIRE_ROW_BYTES,
    Launches::WIRE_ROW_BYTES,
    GpuAnnotations::WIRE_ROW_BYTES,
    FlowEnds::WIRE_ROW_BYTES,
    FlowEnds::WIRE_ROW_BYTES,
    CommParams::WIRE_ROW_BYTES,
    Copies::WIRE_ROW_BYTES,
    GraphNodes::WIRE_ROW_BYTES,
    CallStacks::WIRE_ROW_BYTES,
];

/// Rows of each table of `t`.
pub(super) fn row_counts(t: &Trace) -> RowCounts {
    [
        t.gpu.len(),
        t.ops.len(),
        t.launches.len(),
        t.gpu_annotations.len(),
        t.flow_starts.len(),
        t.flow_finishes.len(),
        t.comm.len(),
        t.copies.len(),
        t.graph_nodes.len(),
        t.call_stacks.len(),
    ]
}

/// Writes every table's rows, in [`RowCounts`] order.
fn write_rows<S: WireSink>(t: &Trace, sink: &mut S) {
    t.gpu.write_bytes(sink);
    t.ops.write_bytes(sink);
    t.launches.write_bytes(sink);
    t.gpu_annotations.write_bytes(sink);
    t.flow_starts.write_bytes(sink);
    t.flow_finishes.write_bytes(sink);
    t.comm.write_bytes(sink);
    t.copies.write_bytes(sink);
    t.graph_nodes.write_bytes(sink);
    t.call_stacks.write_bytes(sink);
}

/// Checks every table's rows in `rows` (`n`: rows per table).
fn check_rows(rows: &mut RowsInBytes<'_>, n: RowCounts, limits: &Limits) -> std::result::Result<(), &'static str> {
    GpuEvents::check_bytes(rows, n[0], limits)?;
    CpuOps::check_bytes(rows, n[1], limits)?;
    Launches::check_bytes(rows, n[2], limits)?;
    GpuAnnotations::check_bytes(rows, n[3], limits)?;
    FlowEnds::check_bytes(rows, n[4], limits)?;
    FlowEnds::check_bytes(rows, n[5], limits)?;
    CommParams::check_bytes(rows, n[6], limits)?;
    Copies::check_bytes(rows, n[7], limits)?;
    GraphNodes::check_bytes(rows, n[8], limits)?;
    CallStacks::check_bytes(rows, n[9], limits)
}

/// Appends every table's rows in `rows` (checked) to `t`, ids remapped; each column grows once.
pub(super) fn append_rows(t: &mut Trace, rows: &mut RowsInBytes<'_>, n: RowCounts, to: &Remap) {
    t.gpu.append_bytes(rows, n[0], to);
    t.ops.append_bytes(rows, n[1], to);
    t.launches.append_bytes(rows, n[2], to);
    t.gpu_annotations.append_bytes(rows, n[3], to);
    t.flow_starts.append_bytes(rows, n[4], to);
    t.flow_finishes.append_bytes(rows, n[5], to);
    t.comm.append_bytes(rows, n[6], to);
    t.copies.append_bytes(rows, n[7], to);
    t.graph_nodes.append_bytes(rows, n[8], to);
    t.call_stacks.append_bytes(rows, n[9], to);
}

impl TraceBuilder {
    /// Writes every row column as plain values, table after table (see [`RowCounts`]).
    pub fn write_rows<S: WireSink>(&self, sink: &mut S) {
        write_rows(&self.trace, sink);
    }

    /// Writes the small tables (names, threads, counts, warnings, metadata, name maps) and the
    /// row counts: everything but the rows.
    pub fn encode_small(&self, w: &mut WireWriter, rows: RowCounts) {
        let t = &self.trace;
        w.put(t.names.len() as u64);
        for i in 0..t.names.len() {
            w.str(t.names.resolve(i as NameId));
        }
        w.put(t.threads.len() as u64);
        for th in &t.threads {
            w.put(th.pid);
            w.put(th.tid);
        }
        let s = &t.stats;
        for v in [s.events, s.kept, s.ignored, s.skipped] {
            w.put(v);
        }
        w.put(t.warnings.counts.len() as u64);
        for (k, n) in &t.warnings.counts {
            let (tag, data) = k.to_wire();
            w.put(tag);
            w.str(data);
            w.put(*n);
        }
        w.put(t.warnings.examples.len() as u64);
        for e in &t.warnings.examples {
            w.put(e.event);
            let (tag, data) = e.kind.to_wire();
            w.put(tag);
            w.str(data);
            w.str(&e.detail);
            w.option(e.pid);
            w.str(&e.subject);
            w.str(e.process.as_deref().unwrap_or(""));
        }
        encode_meta(&t.meta, w);
        w.put(self.process_names.len() as u64);
        for (&pid, &n) in &self.process_names {
            w.put(pid);
            w.put(n);
        }
        w.put(self.thread_names.len() as u64);
        for (&(pid, tid), &n) in &self.thread_names {
            w.put(pid);
            w.put(tid);
            w.put(n);
        }
        for n in rows {
            w.put(n as u64);
        }
    }

    /// Reads what [`TraceBuilder::encode_small`] wrote into a builder without rows, checking that
    /// every id it holds (names, text pids/tids) points inside the part; returns it with the row
    /// counts.
    pub fn decode_small(r: &mut WireReader<'_>) -> Result<(TraceBuilder, RowCounts)> {
        let mut b = TraceBuilder::default();
        let t = &mut b.trace;
        let names = r.count(4)?;
        for i in 0..names {
            let s = r.str()?;
            // Distinct texts only (invalid UTF-8 stored lossily may repeat a text: the caller then
            // parses the range itself).
            if t.names.intern(s) as usize != i {
                return Err(malformed("interned names repeat"));
            }
        }
        // A pid/tid is a number, -1 (missing) or a text's name id (see `text_id`).
        let id_ok = |v: i64| super::text_id_name(v).is_none_or(|n| (n as usize) < names);
        let threads = r.count(16)?;
        for i in 0..threads {
            let (pid, tid) = (r.get::<i64>()?, r.get::<i64>()?);
            if !id_ok(pid) || !id_ok(tid) {
                return Err(malformed("thread id out of range"));
            }
            t.threads.push(ThreadInfo { pid, tid, process_name: NO_NAME, thread_name: NO_NAME });
            b.threads.entry((pid, tid)).or_insert(i as u32);
        }
        let s = &mut t.stats;
        s.events = r.get()?;
        s.kept = r.get()?;
        s.ignored = r.get()?;
        s.skipped = r.get()?;
        let n = r.count(12)?;
        for _ in 0..n {
            let k = wire_kind(r)?;
            let v = r.get::<u64>()?;
            t.warnings.counts.insert(k, v);
        }
        let n = r.count(16)?;
        for _ in 0..n {
            let event = r.get()?;
            let kind = wire_kind(r)?;
            let detail = r.str()?.to_string();
            let pid = r.option()?;
            let subject = r.str()?.to_string();
            let process = Some(r.str()?.to_string()).filter(|p| !p.is_empty());
            t.warnings.examples.push(WarningExample { event, kind, detail, pid, process, subject });
        }
        t.meta = decode_meta(r)?;
        let n = r.count(12)?;
        for _ in 0..n {
            let (pid, name) = (r.get::<i64>()?, r.get::<NameId>()?);
            if !id_ok(pid) || name as usize >= names {
                return Err(malformed("process name out of range"));
            }
            b.process_names.insert(pid, name);
        }
        let n = r.count(20)?;
        for _ in 0..n {
            let (pid, tid, name) = (r.get::<i64>()?, r.get::<i64>()?, r.get::<NameId>()?);
            if !id_ok(pid) || !id_ok(tid) || name as usize >= names {
                return Err(malformed("thread name out of range"));
            }
            b.thread_names.insert((pid, tid), name);
        }
        let mut rows: RowCounts = [0; 10];
        for n in &mut rows {
            *n = usize::try_from(r.get::<u64>()?).map_err(|_| malformed("row count too large"))?;
        }
        Ok((b, rows))
    }
}

/// A builder handed over by another reader: parsed here ([`PartBuilder::Parsed`], the native
/// reader's threads) or still in its byte form ([`PartBuilder::InBytes`], a part moved from
/// another Web Worker).
pub enum PartBuilder {
    /// Parsed in this process.
    Parsed(TraceBuilder),
    /// Its small tables decoded, its rows still in bytes.
    InBytes(BuilderInBytes),
}

impl PartBuilder {
    /// Writes the small tables and row counts (see [`TraceBuilder::encode_small`]).
    pub fn encode_small(&self, w: &mut WireWriter) {
        match self {
            PartBuilder::Parsed(b) => b.encode_small(w, row_counts(&b.trace)),
            PartBuilder::InBytes(p) => p.small.encode_small(w, p.rows),
        }
    }

    /// Writes the rows (see [`TraceBuilder::write_rows`]).
    pub fn write_rows<S: WireSink>(&self, sink: &mut S) {
        match self {
            PartBuilder::Parsed(b) => b.write_rows(sink),
            PartBuilder::InBytes(p) => {
                let len = p.bytes.len() - p.rows_at;
                p.rows().each(len, 1, |b| sink.write(b));
            }
        }
    }
}

/// A part's bytes as kept by [`BuilderInBytes`] (natively a part may cross threads).
#[cfg(not(target_arch = "wasm32"))]
pub type PartBytes = Box<dyn ByteSource + Send>;
/// A part's bytes as kept by [`BuilderInBytes`] (a JS array cannot cross threads).
#[cfg(target_arch = "wasm32")]
pub type PartBytes = Box<dyn ByteSource>;

/// A builder still in its byte form, as a part arrives from another worker: the small tables
/// decoded, the rows checked but left as bytes, so [`TraceBuilder::absorb`] appends them straight
/// to the adopting reader's columns (no decoded copy of the part is made).
pub struct BuilderInBytes {
    /// The names, threads, counts, warnings and metadata (no rows).
    pub(super) small: TraceBuilder,
    bytes: PartBytes,
    /// Where the rows start in `bytes`.
    rows_at: usize,
    /// Rows per table.
    pub(super) rows: RowCounts,
}

impl BuilderInBytes {
    /// The builder whose small tables are `small` (from [`TraceBuilder::decode_small`], with the
    /// row counts `rows`) and whose rows are `bytes[rows_at..]`, which must hold exactly those
    /// rows. Every id and tag in the rows is checked here, so appending them cannot fail.
    pub fn new(small: TraceBuilder, rows: RowCounts, bytes: PartBytes, rows_at: usize) -> Result<BuilderInBytes> {
        let total = rows.iter().zip(ROW_BYTES).try_fold(0usize, |sum, (&n, size)| sum.checked_add(n.checked_mul(size)?));
        let left = bytes.len().saturating_sub(rows_at);
        match total {
            Some(total) if total == left => {}
            Some(total) if total < left => return Err(malformed("trailing data")),
            _ => return Err(malformed("ends early")),
        }
        let limits = Limits { names: small.trace.names.len(), threads: small.trace.threads.len(), ops: rows[1], gpu: rows[0] };
        check_rows(&mut RowsInBytes::new(&*bytes, rows_at), rows, &limits).map_err(malformed)?;
        Ok(BuilderInBytes { small, bytes, rows_at, rows })
    }

    /// A reader of the rows, from their first byte.
    pub(super) fn rows(&self) -> RowsInBytes<'_> {
        RowsInBytes::new(&*self.bytes, self.rows_at)
    }
}

fn encode_meta(m: &TraceMeta, w: &mut WireWriter) {
    w.put(m.devices.len() as u64);
    for d in &m.devices {
        w.put(d.id);
        w.str(&d.name);
        w.put(d.total_global_mem);
        for v in [d.compute_major, d.compute_minor, d.num_sms, d.warp_size] {
            w.put(v);
        }
    }
    w.put(vendor_tag(m.vendor));
    w.option(m.rank);
    w.option(m.world_size);
    w.option(m.base_time_ns);
    w.flag(m.with_stack);
    w.flag(m.record_shapes);
    w.flag(m.object_form);
    w.option(m.whole_graph_replays.map(|r| r.count));
    w.option(m.whole_graph_replays.map(|r| r.ns));
    w.put(m.other.len() as u64);
    for (k, v) in &m.other {
        w.str(k);
        w.str(v);
    }
    w.put(m.secret_keys.len() as u64);
    for k in &m.secret_keys {
        w.str(k);
    }
}

fn decode_meta(r: &mut WireReader<'_>) -> Result<TraceMeta> {
    let mut m = TraceMeta::default();
    let n = r.count(52)?;
    for _ in 0..n {
        let id = r.get()?;
        let name = r.str()?.to_string();
        let total_global_mem = r.get()?;
        let (compute_major, compute_minor, num_sms, warp_size) = (r.get()?, r.get()?, r.get()?, r.get()?);
        m.devices.push(DeviceInfo { id, name, total_global_mem, compute_major, compute_minor, num_sms, warp_size });
    }
    m.vendor = from_tag(
        &[Vendor::Nvidia, Vendor::Amd, Vendor::Unknown, Vendor::Google, Vendor::Huawei, Vendor::Meta],
        vendor_tag,
        r.get()?,
        "bad vendor",
    )?;
    m.rank = r.option()?;
    m.world_size = r.option()?;
    m.base_time_ns = r.option()?;
    m.with_stack = r.flag()?;
    m.record_shapes = r.flag()?;
    m.object_form = r.flag()?;
    let (count, ns) = (r.option::<u64>()?, r.option::<u64>()?);
    m.whole_graph_replays = count.zip(ns).map(|(count, ns)| WholeGraphReplays { count, ns });
    let n = r.count(8)?;
    for _ in 0..n {
        let k = r.str()?.to_string();
        let v = r.str()?.to_string();
        m.other.push((k, v));
    }
    let n = r.count(1)?;
    for _ in 0..n {
        m.secret_keys.push(r.str()?.to_string());
    }
    Ok(m)
}

/// A warning kind as [`WarningKind::to_wire`] wrote it.
fn wire_kind(r: &mut WireReader<'_>) -> Result<WarningKind> {
    let tag = r.get::<u64>()?;
    let data = r.str()?;
    WarningKind::from_wire(tag, data).ok_or_else(|| malformed("unknown warning kind"))
}
