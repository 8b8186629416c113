//! A [`TraceBuilder`] as bytes and back, so a part of a trace parsed in one Web Worker can be
//! moved (an ArrayBuffer transfer, no structured clone) to the worker that merges the parts.
//!
//! Layout: columns are a `u64` row count followed by the values as little-endian bytes; strings
//! are a `u32` byte length followed by UTF-8. The interned names come first, in id order, so
//! every name column is sent as its ids. Link columns (`launch`, `cpu_op`, `parent`, `python`)
//! are not sent: a builder has not linked anything yet (they are all [`NONE`]). Decoding checks
//! every length, enum tag and id, so malformed bytes give an [`Error`], never a panic.

use super::*;
use crate::error::{Error, Result};

/// Appends values to a byte buffer.
#[derive(Default)]
pub struct WireWriter {
    /// The bytes written so far.
    pub out: Vec<u8>,
}

/// A fixed-size value with a little-endian byte form.
pub trait Le: Sized + Copy {
    /// Bytes per value.
    const SIZE: usize;
    /// Appends the value's bytes.
    fn put(self, out: &mut Vec<u8>);
    /// Reads a value from exactly `SIZE` bytes.
    fn get(b: &[u8]) -> Self;
    /// Appends all values' bytes (one pass over a pre-sized buffer: columns run to millions of rows).
    fn put_all(values: &[Self], out: &mut Vec<u8>);
    /// Reads `bytes.len() / SIZE` values.
    fn get_all(bytes: &[u8]) -> Vec<Self>;
}

macro_rules! le_int {
    ($($t:ty),*) => {$(
        impl Le for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline]
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            #[inline]
            fn get(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(b);
                <$t>::from_le_bytes(a)
            }
            fn put_all(values: &[Self], out: &mut Vec<u8>) {
                let start = out.len();
                out.resize(start + values.len() * Self::SIZE, 0);
                let (chunks, _) = out[start..].as_chunks_mut::<{ std::mem::size_of::<$t>() }>();
                for (dst, v) in chunks.iter_mut().zip(values) {
                    *dst = v.to_le_bytes();
                }
            }
            fn get_all(bytes: &[u8]) -> Vec<Self> {
                let (chunks, _) = bytes.as_chunks::<{ std::mem::size_of::<$t>() }>();
                chunks.iter().map(|&c| <$t>::from_le_bytes(c)).collect()
            }
        }
    )*};
}
le_int!(u8, u32, u64, i32, i64);

impl Le for [u32; 3] {
    const SIZE: usize = 12;
    fn put(self, out: &mut Vec<u8>) {
        for v in self {
            v.put(out);
        }
    }
    fn get(b: &[u8]) -> Self {
        [u32::get(&b[0..4]), u32::get(&b[4..8]), u32::get(&b[8..12])]
    }
    fn put_all(values: &[Self], out: &mut Vec<u8>) {
        u32::put_all(values.as_flattened(), out);
    }
    fn get_all(bytes: &[u8]) -> Vec<Self> {
        let flat = u32::get_all(bytes);
        flat.as_chunks::<3>().0.to_vec()
    }
}

impl WireWriter {
    /// One value.
    pub fn put<T: Le>(&mut self, v: T) {
        v.put(&mut self.out);
    }
    /// A flag as one byte.
    pub fn flag(&mut self, v: bool) {
        self.put(v as u8);
    }
    /// Length-prefixed bytes.
    pub fn bytes(&mut self, b: &[u8]) {
        self.put(b.len() as u32);
        self.out.extend_from_slice(b);
    }
    /// Length-prefixed UTF-8.
    pub fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
    /// A column: row count, then the values.
    pub fn column<T: Le>(&mut self, values: &[T]) {
        self.put(values.len() as u64);
        T::put_all(values, &mut self.out);
    }
    /// An optional value: a presence byte, then the value.
    pub fn option<T: Le>(&mut self, v: Option<T>) {
        self.flag(v.is_some());
        if let Some(v) = v {
            self.put(v);
        }
    }
}

/// Reads what a [`WireWriter`] wrote; every read is bounds-checked.
pub struct WireReader<'a> {
    data: &'a [u8],
    pos: usize,
}

fn malformed(what: &str) -> Error {
    Error::new(format!("malformed part bytes: {what}"))
}

impl<'a> WireReader<'a> {
    /// A reader at the start of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        WireReader { data, pos: 0 }
    }
    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }
    /// The next `n` raw bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(malformed("ends early"));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    /// One value.
    pub fn get<T: Le>(&mut self) -> Result<T> {
        Ok(T::get(self.take(T::SIZE)?))
    }
    /// A flag byte (0 or 1).
    pub fn flag(&mut self) -> Result<bool> {
        match self.get::<u8>()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(malformed("bad flag byte")),
        }
    }
    /// Length-prefixed bytes.
    pub fn bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.get::<u32>()? as usize;
        self.take(n)
    }
    /// Length-prefixed UTF-8.
    pub fn str(&mut self) -> Result<&'a str> {
        std::str::from_utf8(self.bytes()?).map_err(|_| malformed("text is not UTF-8"))
    }
    /// A count of items of at least `min_size` bytes each, checked against what is left.
    pub fn count(&mut self, min_size: usize) -> Result<usize> {
        let n = self.get::<u64>()?;
        if n.saturating_mul(min_size.max(1) as u64) > self.remaining() as u64 {
            return Err(malformed("count larger than the data"));
        }
        Ok(n as usize)
    }
    /// A column written by [`WireWriter::column`].
    pub fn column<T: Le>(&mut self) -> Result<Vec<T>> {
        let n = self.count(T::SIZE)?;
        let bytes = self.take(n * T::SIZE)?;
        Ok(T::get_all(bytes))
    }
    /// A column that must have `rows` rows.
    pub fn column_of<T: Le>(&mut self, rows: usize) -> Result<Vec<T>> {
        let v = self.column()?;
        if v.len() != rows {
            return Err(malformed("columns of one table differ in length"));
        }
        Ok(v)
    }
    /// An optional value.
    pub fn option<T: Le>(&mut self) -> Result<Option<T>> {
        Ok(if self.flag()? { Some(self.get()?) } else { None })
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

/// The variant whose tag (given by the exhaustive `tag_of`, the one place tags are defined) is `tag`.
fn from_tag<T: Copy>(variants: &[T], tag_of: fn(T) -> u8, tag: u8, what: &str) -> Result<T> {
    variants.iter().copied().find(|&v| tag_of(v) == tag).ok_or_else(|| malformed(what))
}

impl TraceBuilder {
    /// About how many bytes [`TraceBuilder::encode`] writes (its columns and names; the small
    /// tables after them are covered by a margin), to size the buffer once.
    pub fn encoded_len_hint(&self) -> usize {
        let t = &self.trace;
        let names: usize = (0..t.names.len()).map(|i| 4 + t.names.resolve(i as NameId).len()).sum();
        // Bytes per row: the sum of the sizes of each table's columns as written below.
        names
            + t.gpu.len() * (1 + 4 + 8 + 8 + 4 + 4 + 8 + 8 + 12 + 12 + 4)
            + t.ops.len() * (1 + 4 + 8 + 8 + 4 + 8 + 4 + 4 + 4 + 8 + 8 + 4)
            + t.launches.len() * (4 + 8 + 8 + 4 + 8 + 8 + 4 + 1)
            + t.gpu_annotations.name.len() * (4 + 8 + 8 + 4 + 4)
            + (t.flow_starts.len() + t.flow_finishes.len()) * 32
            + t.threads.len() * 16
            + 64 * 1024
    }

    /// Writes everything the builder has collected.
    pub fn encode(&self, w: &mut WireWriter) {
        let t = &self.trace;
        w.put(t.names.len() as u64);
        for i in 0..t.names.len() {
            w.str(t.names.resolve(i as NameId));
        }
        let g = &t.gpu;
        w.column(&g.kind.iter().map(|&k| gpu_kind_tag(k)).collect::<Vec<u8>>());
        w.column(&g.name);
        w.column(&g.ts);
        w.column(&g.dur);
        w.column(&g.device);
        w.column(&g.stream);
        w.column(&g.correlation);
        w.column(&g.external_id);
        w.column(&g.grid);
        w.column(&g.block);
        w.column(&g.event_index);
        let o = &t.ops;
        w.column(&o.kind.iter().map(|&k| op_kind_tag(k)).collect::<Vec<u8>>());
        w.column(&o.name);
        w.column(&o.ts);
        w.column(&o.dur);
        w.column(&o.thread);
        w.column(&o.external_id);
        w.column(&o.input_dims);
        w.column(&o.input_types);
        w.column(&o.concrete_inputs);
        w.column(&o.python_id);
        w.column(&o.python_parent_id);
        w.column(&o.event_index);
        let l = &t.launches;
        w.column(&l.name);
        w.column(&l.ts);
        w.column(&l.dur);
        w.column(&l.thread);
        w.column(&l.correlation);
        w.column(&l.external_id);
        w.column(&l.event_index);
        w.column(&l.is_graph.iter().map(|&b| b as u8).collect::<Vec<u8>>());
        let a = &t.gpu_annotations;
        w.column(&a.name);
        w.column(&a.ts);
        w.column(&a.dur);
        w.column(&a.device);
        w.column(&a.stream);
        w.put(t.threads.len() as u64);
        for th in &t.threads {
            w.put(th.pid);
            w.put(th.tid);
        }
        for flows in [&t.flow_starts, &t.flow_finishes] {
            w.put(flows.len() as u64);
            for f in flows.iter() {
                w.put(f.id);
                w.put(f.pid);
                w.put(f.tid);
                w.put(f.ts);
            }
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
    }

    /// Reads a builder written by [`TraceBuilder::encode`], checking that every id it holds
    /// (names, threads, text pids/tids) points inside the part.
    pub fn decode(r: &mut WireReader<'_>) -> Result<TraceBuilder> {
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
        let name_ok = |v: &[NameId]| v.iter().all(|&n| (n as usize) < names);
        // A pid/tid is a number, -1 (missing) or a text's name id (see `text_id`).
        let id_ok = |v: i64| super::text_id_name(v).is_none_or(|n| (n as usize) < names);
        let gpu_kinds: Vec<u8> = r.column()?;
        let rows = gpu_kinds.len();
        let g = &mut t.gpu;
        let kinds = [GpuKind::Kernel, GpuKind::Memcpy, GpuKind::Memset];
        g.kind = gpu_kinds.iter().map(|&k| from_tag(&kinds, gpu_kind_tag, k, "bad GPU event kind")).collect::<Result<_>>()?;
        g.name = r.column_of(rows)?;
        g.ts = r.column_of(rows)?;
        g.dur = r.column_of(rows)?;
        g.device = r.column_of(rows)?;
        g.stream = r.column_of(rows)?;
        g.correlation = r.column_of(rows)?;
        g.external_id = r.column_of(rows)?;
        g.grid = r.column_of(rows)?;
        g.block = r.column_of(rows)?;
        g.event_index = r.column_of(rows)?;
        g.launch = vec![NONE; rows];
        g.cpu_op = vec![NONE; rows];
        if !name_ok(&g.name) {
            return Err(malformed("GPU event id out of range"));
        }

        let op_kinds: Vec<u8> = r.column()?;
        let rows = op_kinds.len();
        let o = &mut t.ops;
        let kinds = [OpKind::CpuOp, OpKind::UserAnnotation, OpKind::PythonFunction];
        o.kind = op_kinds.iter().map(|&k| from_tag(&kinds, op_kind_tag, k, "bad CPU range kind")).collect::<Result<_>>()?;
        o.name = r.column_of(rows)?;
        o.ts = r.column_of(rows)?;
        o.dur = r.column_of(rows)?;
        o.thread = r.column_of(rows)?;
        o.external_id = r.column_of(rows)?;
        o.input_dims = r.column_of(rows)?;
        o.input_types = r.column_of(rows)?;
        o.concrete_inputs = r.column_of(rows)?;
        o.python_id = r.column_of(rows)?;
        o.python_parent_id = r.column_of(rows)?;
        o.event_index = r.column_of(rows)?;
        o.parent = vec![NONE; rows];
        if !(name_ok(&o.name) && name_ok(&o.input_dims) && name_ok(&o.input_types) && name_ok(&o.concrete_inputs)) {
            return Err(malformed("CPU range name out of range"));
        }

        let l = &mut t.launches;
        l.name = r.column()?;
        let rows = l.name.len();
        l.ts = r.column_of(rows)?;
        l.dur = r.column_of(rows)?;
        l.thread = r.column_of(rows)?;
        l.correlation = r.column_of(rows)?;
        l.external_id = r.column_of(rows)?;
        l.event_index = r.column_of(rows)?;
        let graph: Vec<u8> = r.column_of(rows)?;
        l.is_graph = graph.iter().map(|&b| b != 0).collect();
        l.cpu_op = vec![NONE; rows];
        l.python = vec![NONE; rows];
        if !name_ok(&l.name) {
            return Err(malformed("launch name out of range"));
        }

        let a = &mut t.gpu_annotations;
        a.name = r.column()?;
        let rows = a.name.len();
        a.ts = r.column_of(rows)?;
        a.dur = r.column_of(rows)?;
        a.device = r.column_of(rows)?;
        a.stream = r.column_of(rows)?;
        if !name_ok(&a.name) {
            return Err(malformed("GPU annotation id out of range"));
        }

        let threads = r.count(16)?;
        for i in 0..threads {
            let (pid, tid) = (r.get::<i64>()?, r.get::<i64>()?);
            if !id_ok(pid) || !id_ok(tid) {
                return Err(malformed("thread id out of range"));
            }
            t.threads.push(ThreadInfo { pid, tid, process_name: NO_NAME, thread_name: NO_NAME });
            b.threads.entry((pid, tid)).or_insert(i as u32);
        }
        if !t.ops.thread.iter().chain(&t.launches.thread).all(|&th| (th as usize) < threads) {
            return Err(malformed("thread index out of range"));
        }
        let mut read_flows = || -> Result<Vec<FlowEnd>> {
            let n = r.count(32)?;
            let mut flows = Vec::with_capacity(n);
            for _ in 0..n {
                let f = FlowEnd { id: r.get()?, pid: r.get()?, tid: r.get()?, ts: r.get()? };
                if !id_ok(f.pid) || !id_ok(f.tid) {
                    return Err(malformed("flow id out of range"));
                }
                flows.push(f);
            }
            Ok(flows)
        };
        t.flow_starts = read_flows()?;
        t.flow_finishes = read_flows()?;
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
        Ok(b)
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
