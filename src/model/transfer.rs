//! A [`TraceBuilder`] as bytes and back, so a part of a trace parsed in one Web Worker can be
//! moved (an ArrayBuffer transfer, no structured clone) to the worker that merges the parts.
//!
//! Layout: first the small tables (names, threads, counts, warnings, metadata, name maps) and the
//! row count of each table; strings are a `u32` byte length followed by UTF-8. The interned names
//! come first, in id order, so every name column is sent as its ids. Then the rows: each table's
//! columns, one after the other, as plain little-endian values (their sizes: [`ROW_BYTES`]).
//! Link columns (`launch`, `cpu_op`, `parent`, `python`) are not sent: a builder has not linked
//! anything yet (they are all [`NONE`]). Decoding checks every length, enum tag and id, so
//! malformed bytes give an [`Error`], never a panic.
//!
//! Moving a part costs about one pass over its bytes at each end: the helper writes its columns
//! straight into the output ([`WireSink`]; in the page a JS array, through a small staging
//! buffer), and the adopting reader checks the rows where they are ([`ByteSource`]; in the page
//! the moved JS array) and appends them to its own columns ([`TraceBuilder::absorb`]), each of
//! which grows once. No whole copy of the part is made in either worker's memory.

use super::*;
use crate::error::Result;
use crate::support::codec::{malformed, ByteSource, Le, WireReader, WireSink, WireWriter, STAGE_BYTES};

impl Le for FlowEnd {
    const SIZE: usize = 32;
    fn put(self, out: &mut Vec<u8>) {
        for v in [self.id, self.pid, self.tid, self.ts] {
            v.put(out);
        }
    }
    fn get(b: &[u8]) -> Self {
        FlowEnd { id: i64::get(&b[0..8]), pid: i64::get(&b[8..16]), tid: i64::get(&b[16..24]), ts: i64::get(&b[24..32]) }
    }
    fn put_all(values: &[Self], out: &mut Vec<u8>) {
        out.reserve(values.len() * Self::SIZE);
        for &v in values {
            v.put(out);
        }
    }
    fn extend_from_le(bytes: &[u8], dst: &mut Vec<Self>) {
        let (chunks, _) = bytes.as_chunks::<32>();
        dst.reserve_exact(chunks.len());
        dst.extend(chunks.iter().map(|c| Self::get(c)));
    }
}

fn gpu_kind_tag(k: GpuKind) -> u8 {
    match k {
        GpuKind::Kernel => 0,
        GpuKind::Memcpy => 1,
        GpuKind::Memset => 2,
    }
}

fn op_kind_tag(k: OpKind) -> u8 {
    match k {
        OpKind::CpuOp => 0,
        OpKind::UserAnnotation => 1,
        OpKind::PythonFunction => 2,
    }
}

fn vendor_tag(v: Vendor) -> u8 {
    match v {
        Vendor::Nvidia => 0,
        Vendor::Amd => 1,
        Vendor::Unknown => 2,
    }
}

/// Every GPU kind and CPU range kind, indexed by its tag (a test checks this against the tag
/// functions above, the one place tags are defined).
const GPU_KINDS: [GpuKind; 3] = [GpuKind::Kernel, GpuKind::Memcpy, GpuKind::Memset];
const OP_KINDS: [OpKind; 3] = [OpKind::CpuOp, OpKind::UserAnnotation, OpKind::PythonFunction];

/// The GPU kind of a checked tag.
pub(super) fn gpu_kind_of(tag: u8) -> GpuKind {
    GPU_KINDS.get(tag as usize).copied().unwrap_or(GpuKind::Kernel)
}

/// The CPU range kind of a checked tag.
pub(super) fn op_kind_of(tag: u8) -> OpKind {
    OP_KINDS.get(tag as usize).copied().unwrap_or(OpKind::CpuOp)
}

/// The variant whose tag (given by the exhaustive `tag_of`, the one place tags are defined) is `tag`.
fn from_tag<T: Copy>(variants: &[T], tag_of: fn(T) -> u8, tag: u8, what: &str) -> Result<T> {
    variants.iter().copied().find(|&v| tag_of(v) == tag).ok_or_else(|| malformed(what))
}

/// Bytes per row of each table on the wire: the sizes of its columns, in the order
/// [`TraceBuilder::write_rows`] writes them (and [`WireBuilder::new`] checks them and
/// `TraceBuilder::absorb_rows` reads them). Then the flow starts and finishes, 32 bytes each.
const GPU_ROW: usize = 1 + 4 + 8 + 8 + 4 + 4 + 8 + 8 + 12 + 12 + 4;
const OPS_ROW: usize = 1 + 4 + 8 + 8 + 4 + 8 + 4 + 4 + 4 + 8 + 8 + 4;
const LAUNCH_ROW: usize = 4 + 8 + 8 + 4 + 8 + 8 + 4 + 1;
const ANNOTATION_ROW: usize = 4 + 8 + 8 + 4 + 4;
const ROW_BYTES: [usize; 6] = [GPU_ROW, OPS_ROW, LAUNCH_ROW, ANNOTATION_ROW, FlowEnd::SIZE, FlowEnd::SIZE];

/// Rows of the GPU, CPU range, launch and GPU annotation tables, flow starts and flow finishes.
pub(super) fn row_counts(t: &Trace) -> [usize; 6] {
    [t.gpu.len(), t.ops.len(), t.launches.len(), t.gpu_annotations.name.len(), t.flow_starts.len(), t.flow_finishes.len()]
}

impl TraceBuilder {
    /// Writes every row column as plain values, table after table (see [`ROW_BYTES`]).
    pub fn write_rows<S: WireSink>(&self, sink: &mut S) {
        let t = &self.trace;
        let g = &t.gpu;
        sink.column(&g.kind.iter().map(|&k| gpu_kind_tag(k)).collect::<Vec<u8>>());
        sink.column(&g.name);
        sink.column(&g.ts);
        sink.column(&g.dur);
        sink.column(&g.device);
        sink.column(&g.stream);
        sink.column(&g.correlation);
        sink.column(&g.external_id);
        sink.column(&g.grid);
        sink.column(&g.block);
        sink.column(&g.event_index);
        let o = &t.ops;
        sink.column(&o.kind.iter().map(|&k| op_kind_tag(k)).collect::<Vec<u8>>());
        sink.column(&o.name);
        sink.column(&o.ts);
        sink.column(&o.dur);
        sink.column(&o.thread);
        sink.column(&o.external_id);
        sink.column(&o.input_dims);
        sink.column(&o.input_types);
        sink.column(&o.concrete_inputs);
        sink.column(&o.python_id);
        sink.column(&o.python_parent_id);
        sink.column(&o.event_index);
        let l = &t.launches;
        sink.column(&l.name);
        sink.column(&l.ts);
        sink.column(&l.dur);
        sink.column(&l.thread);
        sink.column(&l.correlation);
        sink.column(&l.external_id);
        sink.column(&l.event_index);
        sink.column(&l.is_graph.iter().map(|&b| b as u8).collect::<Vec<u8>>());
        let a = &t.gpu_annotations;
        sink.column(&a.name);
        sink.column(&a.ts);
        sink.column(&a.dur);
        sink.column(&a.device);
        sink.column(&a.stream);
        sink.column(&t.flow_starts);
        sink.column(&t.flow_finishes);
    }

    /// Writes the small tables (names, threads, counts, warnings, metadata, name maps) and the
    /// row counts: everything but the rows.
    pub fn encode_small(&self, w: &mut WireWriter, rows: [usize; 6]) {
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
            w.str(k);
            w.put(*n);
        }
        w.put(t.warnings.examples.len() as u64);
        for e in &t.warnings.examples {
            w.put(e.event);
            w.str(&e.kind);
            w.str(&e.detail);
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
    pub fn decode_small(r: &mut WireReader<'_>) -> Result<(TraceBuilder, [usize; 6])> {
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
            let k = r.str()?.to_string();
            let v = r.get::<u64>()?;
            t.warnings.counts.insert(k, v);
        }
        let n = r.count(16)?;
        for _ in 0..n {
            let event = r.get()?;
            let kind = r.str()?.to_string();
            let detail = r.str()?.to_string();
            t.warnings.examples.push(WarningExample { event, kind, detail });
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
        let mut rows = [0; 6];
        for n in &mut rows {
            *n = usize::try_from(r.get::<u64>()?).map_err(|_| malformed("row count too large"))?;
        }
        Ok((b, rows))
    }
}

/// A builder handed over by another reader: parsed here ([`PartBuilder::Parsed`], the native
/// reader's threads) or still in its byte form ([`PartBuilder::Wire`], a part moved from another
/// Web Worker).
pub enum PartBuilder {
    Parsed(TraceBuilder),
    Wire(WireBuilder),
}

impl PartBuilder {
    /// Writes the small tables and row counts (see [`TraceBuilder::encode_small`]).
    pub fn encode_small(&self, w: &mut WireWriter) {
        match self {
            PartBuilder::Parsed(b) => b.encode_small(w, row_counts(&b.trace)),
            PartBuilder::Wire(p) => p.small.encode_small(w, p.rows),
        }
    }

    /// Writes the rows (see [`TraceBuilder::write_rows`]).
    pub fn write_rows<S: WireSink>(&self, sink: &mut S) {
        match self {
            PartBuilder::Parsed(b) => b.write_rows(sink),
            PartBuilder::Wire(p) => {
                let mut rows = WireRows::new(&*p.bytes, p.rows_at);
                let len = p.bytes.len() - p.rows_at;
                rows.each(len, 1, |b| sink.write(b));
            }
        }
    }
}

/// A part's bytes as kept by [`WireBuilder`] (natively a part may cross threads).
#[cfg(not(target_arch = "wasm32"))]
pub type PartBytes = Box<dyn ByteSource + Send>;
/// A part's bytes as kept by [`WireBuilder`] (a JS array cannot cross threads).
#[cfg(target_arch = "wasm32")]
pub type PartBytes = Box<dyn ByteSource>;

/// A builder still in its byte form, as a part arrives from another worker: the small tables
/// decoded, the rows checked but left as bytes, so [`TraceBuilder::absorb`] appends them straight
/// to the adopting reader's columns (no decoded copy of the part is made).
pub struct WireBuilder {
    /// The names, threads, counts, warnings and metadata (no rows).
    pub(super) small: TraceBuilder,
    bytes: PartBytes,
    /// Where the rows start in `bytes`.
    rows_at: usize,
    /// Rows per table (see [`row_counts`]).
    rows: [usize; 6],
}

impl WireBuilder {
    /// The builder whose small tables are `small` (from [`TraceBuilder::decode_small`], with the
    /// row counts `rows`) and whose rows are `bytes[rows_at..]`, which must hold exactly those
    /// rows. Every id and tag in the rows is checked here, so absorbing them cannot fail.
    pub fn new(small: TraceBuilder, rows: [usize; 6], bytes: PartBytes, rows_at: usize) -> Result<WireBuilder> {
        let total = rows.iter().zip(ROW_BYTES).try_fold(0usize, |sum, (&n, size)| sum.checked_add(n.checked_mul(size)?));
        let left = bytes.len().saturating_sub(rows_at);
        match total {
            Some(total) if total == left => {}
            Some(total) if total < left => return Err(malformed("trailing data")),
            _ => return Err(malformed("ends early")),
        }
        let names = small.trace.names.len();
        let threads = small.trace.threads.len();
        let mut cols = WireRows::new(&*bytes, rows_at);
        let [gpu, ops, launches, annotations, starts, finishes] = rows;
        let checks = [
            (cols.tags_below(gpu, GPU_KINDS.len() as u8), "bad GPU event kind"),
            (cols.ids_below(gpu, names), "GPU event id out of range"),
            (cols.skip(gpu * (GPU_ROW - 1 - 4)), ""),
            (cols.tags_below(ops, OP_KINDS.len() as u8), "bad CPU range kind"),
            (cols.ids_below(ops, names), "CPU range name out of range"),
            (cols.skip(ops * 16), ""),
            (cols.ids_below(ops, threads), "thread index out of range"),
            (cols.skip(ops * 8), ""),
            (cols.ids_below(ops * 3, names), "CPU range name out of range"),
            (cols.skip(ops * 20), ""),
            (cols.ids_below(launches, names), "launch name out of range"),
            (cols.skip(launches * 16), ""),
            (cols.ids_below(launches, threads), "thread index out of range"),
            (cols.skip(launches * 21), ""),
            (cols.ids_below(annotations, names), "GPU annotation id out of range"),
            (cols.skip(annotations * 20), ""),
            (cols.flows_ok(starts + finishes, names), "flow id out of range"),
        ];
        if let Some((_, what)) = checks.iter().find(|(ok, _)| !ok) {
            return Err(malformed(what));
        }
        Ok(WireBuilder { small, bytes, rows_at, rows })
    }

    /// The small tables, the rows per table and a reader of the rows.
    pub(super) fn split(&self) -> (&TraceBuilder, [usize; 6], WireRows<'_>) {
        (&self.small, self.rows, WireRows::new(&*self.bytes, self.rows_at))
    }
}

/// Where `TraceBuilder::absorb_rows` reads a part's rows from: the part's own typed columns
/// ([`TypedRows`]) or its bytes ([`WireRows`], read in the order they were written; the columns
/// a builder never fills, its links, are not in the bytes). Every column call gets the table's
/// row count `n`.
pub(super) trait RowSource {
    /// Appends the next column.
    fn copy<T: Le>(&mut self, dst: &mut Vec<T>, col: fn(&Trace) -> &Vec<T>, n: usize);
    /// Appends the next column, each value passed through `f`.
    fn mapped<T: Le>(&mut self, dst: &mut Vec<T>, col: fn(&Trace) -> &Vec<T>, n: usize, f: impl Fn(T) -> T);
    /// Appends the next column of enum values (in the bytes: tags read by `of_tag`).
    fn tags<T: Copy>(&mut self, dst: &mut Vec<T>, col: fn(&Trace) -> &Vec<T>, n: usize, of_tag: fn(u8) -> T);
    /// Appends a link column (all [`NONE`] in a builder; not in the bytes).
    fn links(&mut self, dst: &mut Vec<u32>, col: fn(&Trace) -> &Vec<u32>, n: usize);
}

/// A part's own typed columns.
pub(super) struct TypedRows<'a>(pub &'a Trace);

impl RowSource for TypedRows<'_> {
    fn copy<T: Le>(&mut self, dst: &mut Vec<T>, col: fn(&Trace) -> &Vec<T>, _n: usize) {
        let v = col(self.0);
        dst.reserve_exact(v.len());
        dst.extend_from_slice(v);
    }
    fn mapped<T: Le>(&mut self, dst: &mut Vec<T>, col: fn(&Trace) -> &Vec<T>, _n: usize, f: impl Fn(T) -> T) {
        let v = col(self.0);
        dst.reserve_exact(v.len());
        dst.extend(v.iter().map(|&x| f(x)));
    }
    fn tags<T: Copy>(&mut self, dst: &mut Vec<T>, col: fn(&Trace) -> &Vec<T>, _n: usize, _of_tag: fn(u8) -> T) {
        let v = col(self.0);
        dst.reserve_exact(v.len());
        dst.extend_from_slice(v);
    }
    fn links(&mut self, dst: &mut Vec<u32>, col: fn(&Trace) -> &Vec<u32>, _n: usize) {
        let v = col(self.0);
        dst.reserve_exact(v.len());
        dst.extend_from_slice(v);
    }
}

/// A part's rows in its bytes, read in order, piece by piece.
pub(super) struct WireRows<'a> {
    bytes: &'a dyn ByteSource,
    pos: usize,
    /// Pieces of a source that is not in this memory are copied here first.
    stage: Vec<u8>,
}

impl<'a> WireRows<'a> {
    fn new(bytes: &'a dyn ByteSource, pos: usize) -> Self {
        WireRows { bytes, pos, stage: Vec::new() }
    }

    /// Hands the next `len` bytes to `f` in pieces of whole `size`-byte values.
    fn each(&mut self, len: usize, size: usize, mut f: impl FnMut(&[u8])) {
        let WireRows { bytes, pos, stage } = self;
        if let Some(all) = bytes.slice(*pos, len) {
            f(all);
        } else {
            let step = (STAGE_BYTES / size).max(1) * size;
            let mut at = 0;
            while at < len {
                let n = step.min(len - at);
                stage.resize(n, 0);
                bytes.read(*pos + at, &mut stage[..n]);
                f(&stage[..n]);
                at += n;
            }
        }
        *pos += len;
    }

    fn skip(&mut self, len: usize) -> bool {
        self.pos += len;
        true
    }

    /// Whether the next `n` `u32`s are all below `limit`.
    fn ids_below(&mut self, n: usize, limit: usize) -> bool {
        let mut ok = true;
        self.each(n * 4, 4, |b| ok &= b.as_chunks::<4>().0.iter().all(|&v| (u32::from_le_bytes(v) as usize) < limit));
        ok
    }

    /// Whether the next `n` tags are all below `limit`.
    fn tags_below(&mut self, n: usize, limit: u8) -> bool {
        let mut ok = true;
        self.each(n, 1, |b| ok &= b.iter().all(|&t| t < limit));
        ok
    }

    /// Whether the pids and tids of the next `n` flow ends are numbers or names of the part.
    fn flows_ok(&mut self, n: usize, names: usize) -> bool {
        let id_ok = |v: i64| super::text_id_name(v).is_none_or(|n| (n as usize) < names);
        let mut ok = true;
        self.each(n * FlowEnd::SIZE, FlowEnd::SIZE, |b| {
            ok &= b.as_chunks::<32>().0.iter().all(|c| {
                let f = FlowEnd::get(c);
                id_ok(f.pid) && id_ok(f.tid)
            })
        });
        ok
    }
}

impl RowSource for WireRows<'_> {
    fn copy<T: Le>(&mut self, dst: &mut Vec<T>, _col: fn(&Trace) -> &Vec<T>, n: usize) {
        dst.reserve_exact(n);
        self.each(n * T::SIZE, T::SIZE, |b| T::extend_from_le(b, dst));
    }
    fn mapped<T: Le>(&mut self, dst: &mut Vec<T>, _col: fn(&Trace) -> &Vec<T>, n: usize, f: impl Fn(T) -> T) {
        dst.reserve_exact(n);
        self.each(n * T::SIZE, T::SIZE, |b| dst.extend(b.chunks_exact(T::SIZE).map(|c| f(T::get(c)))));
    }
    fn tags<T: Copy>(&mut self, dst: &mut Vec<T>, _col: fn(&Trace) -> &Vec<T>, n: usize, of_tag: fn(u8) -> T) {
        dst.reserve_exact(n);
        self.each(n, 1, |b| dst.extend(b.iter().map(|&t| of_tag(t))));
    }
    fn links(&mut self, dst: &mut Vec<u32>, _col: fn(&Trace) -> &Vec<u32>, n: usize) {
        dst.resize(dst.len() + n, NONE);
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
    w.put(m.other.len() as u64);
    for (k, v) in &m.other {
        w.str(k);
        w.str(v);
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
    m.vendor = from_tag(&[Vendor::Nvidia, Vendor::Amd, Vendor::Unknown], vendor_tag, r.get()?, "bad vendor")?;
    m.rank = r.option()?;
    m.world_size = r.option()?;
    m.base_time_ns = r.option()?;
    m.with_stack = r.flag()?;
    m.record_shapes = r.flag()?;
    m.object_form = r.flag()?;
    let n = r.count(8)?;
    for _ in 0..n {
        let k = r.str()?.to_string();
        let v = r.str()?.to_string();
        m.other.push((k, v));
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_tables_follow_the_tag_functions() {
        for (i, &k) in GPU_KINDS.iter().enumerate() {
            assert_eq!(gpu_kind_tag(k) as usize, i);
            assert_eq!(gpu_kind_of(i as u8), k);
        }
        for (i, &k) in OP_KINDS.iter().enumerate() {
            assert_eq!(op_kind_tag(k) as usize, i);
            assert_eq!(op_kind_of(i as u8), k);
        }
    }
}
