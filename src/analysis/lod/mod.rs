//! Level of detail for drawing the timeline: what a canvas of `width` pixel columns shows of a
//! time window, per lane (one per GPU stream, then one per CPU thread), without handing the page a
//! row per kernel. Each column of each lane gets the category family that covers most of it and
//! the fraction of it that is busy; bands above the lanes give the passes (with their phase), the
//! layers of each pass and the collectives.
//!
//! [`TimelineIndex::new`] sorts each lane's rows once; a query then visits only the rows that
//! overlap the window (found by binary search), so panning and zooming cost one pass over the
//! visible rows.

mod pyramid;

use super::Analysis;
use crate::model::{GpuKind, OpKind, NONE};
use pyramid::Pyramid;
use serde::Serialize;

/// Family index meaning "nothing here" in [`TimelineIndex::buckets`].
pub const EMPTY: u8 = 255;

/// A lane whose window holds more spans than this per column is drawn from its pyramid.
const PYRAMID_SPANS_PER_COLUMN: usize = 8;

/// One horizontal lane of the timeline.
#[derive(Debug, Clone, Serialize)]
pub struct Lane {
    /// `gpu` (a stream of a device) or `cpu` (a thread).
    pub kind: &'static str,
    /// Device (GPU lanes) or process id (CPU lanes).
    #[serde(serialize_with = "crate::support::ids::js_safe")]
    pub device: i64,
    /// Stream (GPU lanes) or thread id (CPU lanes).
    #[serde(serialize_with = "crate::support::ids::js_safe")]
    pub stream: i64,
    /// What the page prints beside the lane.
    pub label: String,
    /// Rows drawn in the lane.
    pub rows: u32,
}

/// A stretch of time above the lanes: a pass, a layer of a pass, or a collective.
#[derive(Debug, Clone, Serialize)]
pub struct Band {
    /// Start and end, ns since the trace's time origin.
    pub start: f64,
    /// End, ns since the trace's time origin.
    pub end: f64,
    /// Pass index (passes and layers) or -1.
    pub pass: i64,
    /// Layer index (layers) or -1.
    pub layer: i64,
    /// `prefill`, `decode`, `mixed`, ... for passes; the collective's family for collectives.
    pub label: String,
    /// The trace stops inside this pass (truncated traces).
    pub incomplete: bool,
}

/// Everything about the timeline that does not depend on the window.
#[derive(Debug, Clone, Serialize)]
pub struct TimelineMeta {
    /// The lanes drawn: one per GPU stream and CPU thread that holds rows.
    pub lanes: Vec<Lane>,
    /// Category families, in the order of the categories chart's legend (by kernel time, longest
    /// first); lanes' columns index this. CPU lanes use the last entry, `CPU`.
    pub families: Vec<String>,
    /// Each family's colour (`crate::rules::palette`), parallel to `families`.
    pub colours: Vec<&'static str>,
    /// Start and end of all drawn rows, ns since the time origin.
    pub start: f64,
    /// End of all drawn rows, ns since the time origin.
    pub end: f64,
    /// The time origin (trace clock, ns) that every other time here is relative to.
    pub origin: f64,
    /// The passes, as bands.
    pub passes: Vec<Band>,
    /// The layers of each pass, as bands.
    pub layers: Vec<Band>,
    /// The collectives, as bands.
    pub collectives: Vec<Band>,
    /// Bytes held by the lanes' pyramids (pre-merged coverage for zoomed-out windows).
    pub pyramid_bytes: usize,
}

/// The sorted rows of every lane, ready for window queries.
pub struct TimelineIndex {
    /// What does not depend on the window: lanes, families, bands.
    pub meta: TimelineMeta,
    /// Per lane: (start, end, family) in ns since the origin, sorted by start.
    spans: Vec<Vec<(i64, i64, u8)>>,
    /// Per lane: the longest span (how far before a window a span can start and still reach it).
    longest: Vec<i64>,
    /// Per lane: the row behind each span (GPU row, or CPU op row).
    row_of_span: Vec<Vec<u32>>,
    /// Per lane: its coverage at every resolution, for zoomed-out windows.
    pyramids: Vec<Option<Pyramid>>,
}

impl TimelineIndex {
    /// Indexes the GPU rows of every stream and the top-level CPU ops of every thread.
    pub fn new(a: &Analysis) -> TimelineIndex {
        let t = &a.trace;
        let g = &t.gpu;
        let origin = t.time_origin_ns;
        // Families by kernel time, as the categories chart orders them.
        let mut family_time: Vec<(String, i64)> = Vec::new();
        let mut family_of_cat: Vec<u8> = vec![0; a.categories.categories.len()];
        for (c, cat) in a.categories.categories.iter().enumerate() {
            let k = match family_time.iter().position(|(f, _)| *f == cat.family) {
                Some(k) => k,
                None => {
                    family_time.push((cat.family.clone(), 0));
                    family_time.len() - 1
                }
            };
            family_of_cat[c] = k as u8;
        }
        for i in 0..g.len() {
            family_time[family_of_cat[a.categories.of_row[i] as usize] as usize].1 += g.dur[i];
        }
        let mut order: Vec<usize> = (0..family_time.len()).collect();
        order.sort_by_key(|&k| (-family_time[k].1, family_time[k].0.clone()));
        let mut rank = vec![0u8; order.len()];
        for (r, &k) in order.iter().enumerate() {
            rank[k] = r.min(253) as u8;
        }
        let mut families: Vec<String> = order.iter().map(|&k| family_time[k].0.clone()).collect();
        families.truncate(254);
        let cpu_family = families.len() as u8;
        families.push("CPU".into());

        // GPU lanes: one per (device, stream).
        let mut keys: Vec<(i32, i32)> = (0..g.len()).map(|i| (g.device[i], g.stream[i])).collect();
        keys.sort_unstable();
        keys.dedup();
        let mut lanes: Vec<Lane> = keys
            .iter()
            .map(|&(d, s)| Lane {
                kind: "gpu",
                device: d as i64,
                stream: s as i64,
                label: format!("GPU {d} · stream {s}"),
                rows: 0,
            })
            .collect();
        let mut spans: Vec<Vec<(i64, i64, u8)>> = vec![Vec::new(); lanes.len()];
        let mut row_of_span: Vec<Vec<u32>> = vec![Vec::new(); lanes.len()];
        for i in 0..g.len() {
            let lane = keys.binary_search(&(g.device[i], g.stream[i])).expect("every key listed");
            let start = g.ts[i] - origin;
            let family = rank[family_of_cat[a.categories.of_row[i] as usize] as usize];
            spans[lane].push((start, start + g.dur[i].max(0), family));
            row_of_span[lane].push(i as u32);
        }
        // CPU lanes: per thread, the CPU ops not inside another CPU op (they may sit inside python
        // frames or annotations).
        let ops = &t.ops;
        let outermost = |i: usize| {
            ops.kind[i] == OpKind::CpuOp && (ops.parent[i] == NONE || ops.kind[ops.parent[i] as usize] != OpKind::CpuOp)
        };
        let mut threads: Vec<u32> = (0..ops.len()).filter(|&i| outermost(i)).map(|i| ops.thread[i]).collect();
        threads.sort_unstable();
        threads.dedup();
        for &th in &threads {
            let info = &t.threads[th as usize];
            let name = t.name(info.thread_name);
            let label = if name.is_empty() { format!("CPU thread {}", info.tid) } else { format!("CPU {name} ({})", info.tid) };
            lanes.push(Lane { kind: "cpu", device: info.pid, stream: info.tid, label, rows: 0 });
            spans.push(Vec::new());
            row_of_span.push(Vec::new());
        }
        let gpu_lanes = keys.len();
        for i in (0..ops.len()).filter(|&i| outermost(i)) {
            let lane = gpu_lanes + threads.binary_search(&ops.thread[i]).expect("every thread listed");
            let start = ops.ts[i] - origin;
            spans[lane].push((start, start + ops.dur[i].max(0), cpu_family));
            row_of_span[lane].push(i as u32);
        }
        let mut longest = Vec::with_capacity(lanes.len());
        let (mut first, mut last) = (i64::MAX, i64::MIN);
        for (k, lane) in lanes.iter_mut().enumerate() {
            let mut order: Vec<usize> = (0..spans[k].len()).collect();
            order.sort_by_key(|&j| spans[k][j].0);
            spans[k] = order.iter().map(|&j| spans[k][j]).collect();
            row_of_span[k] = order.iter().map(|&j| row_of_span[k][j]).collect();
            lane.rows = spans[k].len() as u32;
            longest.push(spans[k].iter().map(|s| s.1 - s.0).max().unwrap_or(0));
            if let (Some(f), Some(l)) = (spans[k].first(), spans[k].iter().map(|s| s.1).max()) {
                first = first.min(f.0);
                last = last.max(l);
            }
        }
        if first > last {
            (first, last) = (0, 0);
        }
        let passes = a
            .phases
            .passes
            .iter()
            .map(|p| Band {
                start: (p.start_ns - origin) as f64,
                end: (p.end_ns - origin) as f64,
                pass: p.index as i64,
                layer: -1,
                label: p.phase.as_str().to_string(),
                incomplete: p.incomplete,
            })
            .collect();
        let pyramids: Vec<Option<Pyramid>> = spans.iter().map(|s| Pyramid::new(s)).collect();
        let meta = TimelineMeta {
            pyramid_bytes: pyramids.iter().flatten().map(Pyramid::bytes).sum(),
            lanes,
            colours: families.iter().map(|f| crate::rules::palette::family_colour(f)).collect(),
            families,
            start: first as f64,
            end: last as f64,
            origin: origin as f64,
            passes,
            layers: layer_bands(a),
            collectives: collective_bands(a),
        };
        TimelineIndex { meta, spans, longest, row_of_span, pyramids }
    }

    /// The window `[from, to)` (ns since the origin) drawn in `width` columns: for each lane in
    /// order, `width` family indexes ([`EMPTY`] where nothing runs), then for each lane `width`
    /// busy fractions scaled to 0–255. Families are decided by time covered in the column.
    pub fn buckets(&self, from: f64, to: f64, width: usize) -> Vec<u8> {
        let lanes = self.spans.len();
        let width = width.clamp(1, 16_384);
        let mut out = vec![0u8; 2 * lanes * width];
        if to <= from {
            out[..lanes * width].fill(EMPTY);
            return out;
        }
        let mut columns = Columns::new(from, to, width, self.meta.families.len());
        for (k, spans) in self.spans.iter().enumerate() {
            columns.clear();
            let lo = from as i64 - self.longest[k];
            let first = spans.partition_point(|s| s.0 < lo);
            // Many spans in the window: the lane's pyramid answers in O(columns).
            let visible = spans[first..].partition_point(|s| (s.0 as f64) < to);
            if let Some(p) = self.pyramids[k].as_ref().filter(|_| visible > PYRAMID_SPANS_PER_COLUMN * width) {
                columns.add_pyramid(p);
            } else {
                columns.add_spans(&spans[first..]);
            }
            for c in 0..width {
                let (family, busy) = columns.column(c);
                out[k * width + c] = family;
                out[(lanes + k) * width + c] = busy;
            }
        }
        out
    }

    /// Lane `lane`'s pyramid flat (`Pyramid::export`), or `None` for an empty lane.
    pub fn pyramid(&self, lane: usize) -> Option<(Vec<f64>, Vec<f32>)> {
        self.pyramids.get(lane)?.as_ref().map(Pyramid::export)
    }

    /// The row drawn in lane `lane` at time `at` (ns since the origin), or the nearest one within
    /// `slack` ns: `(lane kind, row)`; GPU rows index `trace.gpu`, CPU rows `trace.ops`.
    pub fn hit(&self, lane: usize, at: f64, slack: f64) -> Option<(&'static str, usize)> {
        let spans = self.spans.get(lane)?;
        let lo = (at - slack) as i64 - self.longest[lane];
        let first = spans.partition_point(|s| s.0 < lo);
        let mut best: Option<(f64, usize)> = None;
        for (j, &(s, e, _)) in spans.iter().enumerate().skip(first) {
            let (s, e) = (s as f64, e as f64);
            if s > at + slack {
                break;
            }
            let distance = if at < s {
                s - at
            } else if at > e {
                at - e
            } else {
                0.0
            };
            if distance <= slack && best.is_none_or(|(d, _)| distance < d) {
                best = Some((distance, j));
            }
        }
        best.map(|(_, j)| (self.meta.lanes[lane].kind, self.row_of_span[lane][j] as usize))
    }
}

/// One band per (pass, layer): from the first start to the last end of the layer's GPU rows.
fn layer_bands(a: &Analysis) -> Vec<Band> {
    let g = &a.trace.gpu;
    let origin = a.trace.time_origin_ns;
    let mut spans: std::collections::BTreeMap<(u32, u32), (i64, i64)> = Default::default();
    for i in 0..g.len() {
        let (pass, layer) =
            (a.phases.pass_of_row.get(i).copied().unwrap_or(NONE), a.layers.layer_of_row.get(i).copied().unwrap_or(NONE));
        if pass == NONE || layer == NONE || g.kind[i] != GpuKind::Kernel {
            continue;
        }
        let e = spans.entry((pass, layer)).or_insert((i64::MAX, i64::MIN));
        e.0 = e.0.min(g.ts[i]);
        e.1 = e.1.max(g.ts[i] + g.dur[i]);
    }
    spans
        .into_iter()
        .map(|((pass, layer), (s, e))| Band {
            start: (s - origin) as f64,
            end: (e - origin) as f64,
            pass: pass as i64,
            layer: layer as i64,
            label: format!("layer {layer}"),
            incomplete: false,
        })
        .collect()
}

/// Communication kernels, merged where they overlap (across streams).
fn collective_bands(a: &Analysis) -> Vec<Band> {
    let g = &a.trace.gpu;
    let origin = a.trace.time_origin_ns;
    let intervals: Vec<(i64, i64)> = (0..g.len())
        .filter(|&i| a.categories.is_communication(i))
        .map(|i| (g.ts[i] - origin, g.ts[i] - origin + g.dur[i]))
        .collect();
    super::timeline::merge(intervals)
        .into_iter()
        .map(|(s, e)| Band { start: s as f64, end: e as f64, pass: -1, layer: -1, label: "collective".into(), incomplete: false })
        .collect()
}

/// What the timeline's tooltip and side panel show of one row. Times in µs since the origin.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Details {
    /// `gpu` or `cpu`.
    pub kind: &'static str,
    /// Row in `trace.gpu` (GPU) or `trace.ops` (CPU): the page's link to the tables.
    pub row: u32,
    /// The row's name (kernel, op).
    pub name: String,
    /// Its kernel category (GPU rows).
    pub category: String,
    /// Its category family (GPU rows).
    pub family: String,
    /// Its pass's phase.
    pub phase: String,
    /// Pass and layer, or -1.
    pub pass: i64,
    /// Its layer, or -1.
    pub layer: i64,
    /// Start, µs since the origin.
    pub start_us: f64,
    /// Duration, µs.
    pub dur_us: f64,
    /// Device and stream (GPU rows), or process and thread (CPU rows).
    #[serde(serialize_with = "crate::support::ids::js_safe")]
    pub device: i64,
    #[serde(serialize_with = "crate::support::ids::js_safe")]
    /// Stream (GPU rows) or thread (CPU rows).
    pub stream: i64,
    /// The CPU op that launched the kernel, and the runtime call that did.
    pub cpu_op: String,
    /// The runtime call that launched the kernel.
    pub launcher: String,
    /// Python frames around the launch, innermost first (traces recorded with stacks).
    pub python_stack: Vec<String>,
}

/// The details of a row [`TimelineIndex::hit`] found.
pub fn details(a: &Analysis, kind: &'static str, row: usize) -> Details {
    let t = &a.trace;
    let origin = t.time_origin_ns as f64;
    let id = |v: u32| if v == NONE { -1 } else { v as i64 };
    if kind == "cpu" {
        let ops = &t.ops;
        let info = &t.threads[ops.thread[row] as usize];
        return Details {
            kind,
            row: row as u32,
            name: t.name(ops.name[row]).to_string(),
            category: "CPU op".into(),
            family: "CPU".into(),
            start_us: (ops.ts[row] as f64 - origin) / 1e3,
            dur_us: ops.dur[row] as f64 / 1e3,
            device: info.pid,
            stream: info.tid,
            python_stack: python_stack(a, ops.parent[row]),
            pass: -1,
            layer: -1,
            ..Default::default()
        };
    }
    let g = &t.gpu;
    let launch = g.launch[row];
    let python = if launch != NONE { t.launches.python[launch as usize] } else { NONE };
    Details {
        kind,
        row: row as u32,
        name: t.name(g.name[row]).to_string(),
        category: a.categories.name(row).to_string(),
        family: a.categories.family(row).to_string(),
        phase: a.phases.phase_of_row.get(row).copied().flatten().map_or("", |p| p.as_str()).to_string(),
        pass: id(a.phases.pass_of_row.get(row).copied().unwrap_or(NONE)),
        layer: id(a.layers.layer_of_row.get(row).copied().unwrap_or(NONE)),
        start_us: (g.ts[row] as f64 - origin) / 1e3,
        dur_us: g.dur[row] as f64 / 1e3,
        device: g.device[row] as i64,
        stream: g.stream[row] as i64,
        cpu_op: t.cpu_op_name(row).unwrap_or("").to_string(),
        launcher: t.launcher_name(row).unwrap_or("").to_string(),
        python_stack: python_stack(a, python),
    }
}

/// Python frames from `op` outwards (only `python_function` ranges), at most 32.
fn python_stack(a: &Analysis, mut op: u32) -> Vec<String> {
    let ops = &a.trace.ops;
    let mut out = Vec::new();
    while op != NONE && out.len() < 32 {
        if ops.kind[op as usize] == OpKind::PythonFunction {
            out.push(a.trace.name(ops.name[op as usize]).to_string());
        }
        op = ops.parent[op as usize];
    }
    out
}

/// A window of pixel columns being filled with one lane's time: per column, the time each
/// family covers and the time anything runs.
struct Columns {
    from: f64,
    to: f64,
    per_px: f64,
    width: usize,
    families: usize,
    cover: Vec<f32>,
    busy: Vec<f32>,
}

impl Columns {
    fn new(from: f64, to: f64, width: usize, families: usize) -> Columns {
        let per_px = (to - from) / width as f64;
        Columns { from, to, per_px, width, families, cover: vec![0.0; width * families], busy: vec![0.0; width] }
    }

    fn clear(&mut self) {
        self.cover.fill(0.0);
        self.busy.fill(0.0);
    }

    /// Column `c`: the family covering most of it ([`EMPTY`] where nothing runs) and its busy
    /// fraction scaled to 0–255.
    fn column(&self, c: usize) -> (u8, u8) {
        let row = &self.cover[c * self.families..(c + 1) * self.families];
        let (best, &amount) = row.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).expect("families");
        let family = if amount > 0.0 { best as u8 } else { EMPTY };
        (family, ((self.busy[c] as f64 / self.per_px).min(1.0) * 255.0).round() as u8)
    }

    /// Coverage read from a lane's pyramid at the level whose bins are at most 1/16 of a column
    /// (edge bins count in proportion).
    fn add_pyramid(&mut self, p: &Pyramid) {
        let mut local = vec![0f32; p.families.len()];
        for c in 0..self.width {
            local.fill(0.0);
            let left = self.from + c as f64 * self.per_px;
            p.cover(left, left + self.per_px, self.per_px / 16.0, &mut local);
            for (j, &f) in p.families.iter().enumerate() {
                self.cover[c * self.families + f as usize] += local[j];
                self.busy[c] += local[j];
            }
        }
    }

    /// Coverage from the spans themselves (start, end, family; sorted by start).
    fn add_spans(&mut self, spans: &[(i64, i64, u8)]) {
        let (from, to, per_px, width) = (self.from, self.to, self.per_px, self.width);
        for &(s, e, fam) in spans {
            let (s, e) = (s as f64, e as f64);
            if s >= to {
                break;
            }
            if e <= from {
                continue;
            }
            let (s, e) = (s.max(from), e.min(to));
            let c0 = ((s - from) / per_px) as usize;
            let c1 = (((e - from) / per_px) as usize).min(width - 1);
            for c in c0..=c1.max(c0).min(width - 1) {
                let left = from + c as f64 * per_px;
                let part = (e.min(left + per_px) - s.max(left)).max(0.0) as f32;
                // A span narrower than a pixel still shows.
                let part = if c0 == c1 { part.max(1e-3) } else { part };
                self.busy[c] += part;
                self.cover[c * self.families + fam as usize] += part;
            }
        }
    }
}
