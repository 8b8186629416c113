//! The headline facts of an analysed trace, as one serialisable object (CLI `summary --json`,
//! the page's overview).

use crate::analysis::ops::{owner, owner_name, UNLINKED};
use crate::analysis::phases::Phase;
use crate::analysis::timeline::{timelines, Timeline};
use crate::analysis::Analysis;
use crate::model::FastMap as HashMap;
use crate::model::{DeviceInfo, GpuKind, OpKind, ReadStats, Vendor, Warnings, NONE};
use serde::Serialize;

/// Event counts by kind.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Counts {
    /// Kernel events.
    pub kernels: usize,
    /// Memcpy events.
    pub memcpy: usize,
    /// Memset events.
    pub memset: usize,
    /// Bytes the memcpys moved (of those that say: Kineto's `args.bytes`, an export's `bytes`).
    pub memcpy_bytes: u64,
    /// Bytes the memsets wrote (likewise).
    pub memset_bytes: u64,
    /// CPU ops.
    pub cpu_ops: usize,
    /// User annotations (`record_function` ranges).
    pub user_annotations: usize,
    /// Python frames.
    pub python_functions: usize,
    /// Runtime and driver calls.
    pub runtime_calls: usize,
    /// Graph launches (`cudaGraphLaunch`, `hipGraphLaunch`).
    pub graph_launches: usize,
    /// GPU-side user annotations.
    pub gpu_annotations: usize,
    /// Flow events kept for linking.
    pub flows: usize,
    /// Distinct interned names.
    pub distinct_names: usize,
}

/// The memcpys or memsets of one name (`Memcpy HtoD (Pinned -> Device)`, `Memset (Device)`):
/// how many, how many bytes, how long, how fast.
#[derive(Debug, Clone, Serialize)]
pub struct CopyShare {
    /// The copy's name.
    pub name: String,
    /// Copies of that name.
    pub count: usize,
    /// Bytes they moved or wrote (0 when the trace does not say).
    pub bytes: u64,
    /// Their summed time, ms.
    pub time_ms: f64,
    /// Bytes per second while copying, GB/s; `None` when the trace gives no bytes.
    pub gb_per_s: Option<f64>,
}

/// The copies and fills of a trace, by name, longest first.
pub fn copies_of(t: &crate::model::Trace) -> Vec<CopyShare> {
    let g = &t.gpu;
    let mut by_name: HashMap<crate::model::NameId, (usize, u64, i64)> = HashMap::default();
    for i in (0..g.len()).filter(|&i| g.kind[i] != GpuKind::Kernel) {
        let e = by_name.entry(g.name[i]).or_default();
        e.0 += 1;
        e.2 += g.dur[i];
    }
    for (&row, &bytes) in t.copies.gpu.iter().zip(&t.copies.bytes) {
        if let Some(e) = by_name.get_mut(&g.name[row as usize]) {
            e.1 += bytes.max(0) as u64;
        }
    }
    let mut out: Vec<CopyShare> = by_name
        .into_iter()
        .map(|(name, (count, bytes, ns))| CopyShare {
            name: t.name(name).to_string(),
            count,
            bytes,
            time_ms: ns as f64 / 1e6,
            gb_per_s: (bytes > 0 && ns > 0).then(|| bytes as f64 / ns as f64),
        })
        .collect();
    out.sort_by(|a, b| b.time_ms.total_cmp(&a.time_ms).then_with(|| a.name.cmp(&b.name)));
    out
}

/// How well GPU events are linked to the CPU side.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Links {
    /// Kernels linked to a runtime launch.
    pub kernels_with_launch: usize,
    /// Kernels linked to a CPU op.
    pub kernels_with_cpu_op: usize,
    /// Kernels replayed by a graph launch.
    pub kernels_from_graph_launch: usize,
    /// Kernels whose launch is not in the trace (kept, counted).
    pub kernels_unlinked: usize,
    /// Share of kernels linked to a launch, in %.
    pub launch_link_pct: f64,
}

/// Time of one op or category.
#[derive(Debug, Clone, Serialize)]
pub struct Share {
    /// The op's or category's name.
    pub name: String,
    /// Its time, ms.
    pub time_ms: f64,
    /// Its share of the whole, %.
    pub pct: f64,
}

/// One phase's totals.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseShare {
    /// `prefill`, `decode`, `mixed`...
    pub phase: String,
    /// Passes of this phase.
    pub passes: usize,
    /// Kernels in it.
    pub kernels: usize,
    /// Their time, ms.
    pub time_ms: f64,
    /// Share of kernel time, %.
    pub pct: f64,
}

/// One kind of layer and how many a pass has.
#[derive(Debug, Clone, Serialize)]
pub struct LayerKind {
    /// Layer type (`MHA_FC`, `MHA_FC·14gemm`...).
    #[serde(rename = "type")]
    pub kind: String,
    /// Layers of this type in the pass.
    pub count: u32,
}

/// One stage around a diffusion model's steps.
#[derive(Debug, Clone, Serialize)]
pub struct StageShare {
    /// Pass index of the stage (as in the passes table).
    pub pass: u32,
    /// What it is ("before the steps: encoders (text encoders)").
    pub label: String,
    /// Kernels in it.
    pub kernels: u32,
    /// Their time, ms.
    pub time_ms: f64,
}

impl std::fmt::Display for StageShare {
    /// `pass 0: before the steps: encoders …, 1211 kernels, 24.831 ms` (CLI and HTML report).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pass {}: {}, {} kernels, {:.3} ms", self.pass, self.label, self.kernels, self.time_ms)
    }
}

/// How the mixed steps divide between prefill and decode (their best estimates, summed).
#[derive(Debug, Clone, Serialize)]
pub struct MixedSplit {
    /// Mixed steps.
    pub steps: usize,
    /// Mixed steps with an estimate (the sums below cover these).
    pub estimated: usize,
    /// Prefill and decode tokens.
    pub prefill_tokens: u64,
    /// Decode tokens.
    pub decode_tokens: u64,
    /// Kernel time estimated as prefill and as decode work, ms.
    pub prefill_time_ms: f64,
    /// Kernel time estimated as decode work, ms.
    pub decode_time_ms: f64,
    /// Where the estimates come from (`step annotation`, `shapes`), each once.
    pub sources: Vec<String>,
}

impl std::fmt::Display for MixedSplit {
    /// `1 mixed step: 8155 prefill + 37 decode tokens (99.5% prefill); kernel time ≈ 155.3 ms prefill, 0.7 ms decode (from the step annotation)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plural = if self.steps == 1 { "" } else { "s" };
        if self.estimated == 0 {
            return write!(f, "{} mixed step{plural}: their shapes do not show the prefill/decode split", self.steps);
        }
        let all = (self.prefill_tokens + self.decode_tokens).max(1) as f64;
        let of = if self.estimated < self.steps { format!(" ({} of them estimated)", self.estimated) } else { String::new() };
        write!(
            f,
            "{} mixed step{plural}{of}: {} prefill + {} decode tokens ({:.1}% prefill); kernel time ≈ {:.3} ms prefill, {:.3} ms decode (from the {})",
            self.steps,
            self.prefill_tokens,
            self.decode_tokens,
            100.0 * self.prefill_tokens as f64 / all,
            self.prefill_time_ms,
            self.decode_time_ms,
            self.sources.join(" and the ")
        )
    }
}

/// The mixed steps' split, when there are mixed steps.
fn mixed_split(a: &Analysis) -> Option<MixedSplit> {
    let mixed: Vec<_> = a.phases.passes.iter().filter(|p| p.phase == Phase::Mixed).collect();
    if mixed.is_empty() {
        return None;
    }
    let mut out = MixedSplit {
        steps: mixed.len(),
        estimated: 0,
        prefill_tokens: 0,
        decode_tokens: 0,
        prefill_time_ms: 0.0,
        decode_time_ms: 0.0,
        sources: Vec::new(),
    };
    for best in mixed.iter().filter_map(|p| p.mix.first()) {
        out.estimated += 1;
        out.prefill_tokens += best.prefill_tokens;
        out.decode_tokens += best.decode_tokens;
        out.prefill_time_ms += best.prefill_time_ns as f64 / 1e6;
        out.decode_time_ms += best.decode_time_ns as f64 / 1e6;
        let source = best.source.as_str().to_string();
        if !out.sources.contains(&source) {
            out.sources.push(source);
        }
    }
    Some(out)
}

/// Everything the overview shows.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Name of the first device.
    pub device: String,
    /// GPU vendor.
    pub vendor: Vendor,
    /// Every device of the header.
    pub devices: Vec<DeviceInfo>,
    /// `distributedInfo.rank`.
    pub rank: Option<i64>,
    /// `distributedInfo.world_size`.
    pub world_size: Option<i64>,
    /// What was read: bytes, events, kept and skipped.
    pub input: ReadStats,
    /// What the read bytes held, as people name it (`JSON`, `XSpace protobuf`, `Nsight Systems
    /// SQLite`): the page's "file / … size" fact, which names no format itself.
    pub input_text: &'static str,
    /// Events by kind.
    pub counts: Counts,
    /// Summed kernel time, ms.
    pub kernel_time_ms: f64,
    /// Summed time of all GPU events, ms.
    pub gpu_time_ms: f64,
    /// Memcpys and memsets by name, longest first: count, bytes, time, GB/s.
    pub copies: Vec<CopyShare>,
    /// How well GPU events link to launches and ops.
    pub links: Links,
    /// Busy and idle time per GPU stream.
    pub timeline: Vec<Timeline>,
    /// CPU ops with the most kernel time.
    pub top_ops: Vec<Share>,
    /// Categories with the most kernel time.
    pub top_categories: Vec<Share>,
    /// `prefill`/`decode`/`mixed`/`unknown`, or `not-inference` for training and non-LLM traces.
    pub trace_phase: Option<String>,
    /// Why a trace was judged not to be inference (training ops, backward kernels...).
    pub not_inference_reason: Option<String>,
    /// What kind of workload: `llm_inference`, `diffusion`, `single_pass`, `training` or `unknown`.
    pub workload: String,
    /// What the workload verdict rests on, one sentence each.
    pub workload_evidence: Vec<String>,
    /// Forward passes seen whole (a truncated trace's last pass is not one of them); for a
    /// diffusion trace, its denoising steps (the stages around them are in `stages`).
    pub passes: usize,
    /// The stages around a diffusion model's steps (text encoders, VAE decoder), in time order.
    pub stages: Vec<StageShare>,
    /// Passes the trace stops inside (truncated traces only; see `input.truncation`).
    pub incomplete_passes: usize,
    /// Kernel time per phase.
    pub phases: Vec<PhaseShare>,
    /// Passes whose phase is doubted (thin or conflicting evidence; the `doubt` column of `passes`).
    pub doubtful_passes: usize,
    /// How the mixed steps divide between prefill and decode (`None` without mixed steps).
    pub mixed: Option<MixedSplit>,
    /// Layers found in each whole pass (for a diffusion trace: the blocks of each denoising step).
    pub layers_per_pass: Vec<u32>,
    /// The kinds of layers of a typical pass, in order, with how many of each (a diffusion
    /// transformer's dual- and single-stream blocks; a hybrid model's attention and linear layers).
    pub layer_kinds: Vec<LayerKind>,
    /// What was skipped or repaired while reading.
    pub warnings: Warnings,
    /// Kernels replayed from CUDA/HIP graphs: how many, and how many were given the op that
    /// dispatched them (from capture traces, or eager stretches); `None` when nothing was replayed.
    pub graph_replays: Option<GraphReplays>,
    /// Where the trace's header holds secret-looking metadata (`metadata.env.HF_TOKEN`): key
    /// paths only, never values, so a user knows before sharing the trace itself.
    pub secret_metadata: Vec<String>,
    /// The trace's health: what the profiler recorded, what that limits, and the fix
    /// ([`crate::analysis::health`]).
    pub health: Vec<crate::analysis::health::Check>,
}

/// The first device's name; a device the trace leaves unnamed (ROCm often writes `""`, a JAX
/// profile only `AMD GPU 0 (XLA)`) is named from the device table when its compute units and
/// architecture match one entry.
pub fn device_label(meta: &crate::model::TraceMeta) -> String {
    // A JAX profile names its planes only `AMD GPU 0 (XLA)`.
    if meta.devices.iter().any(|d| !d.name.is_empty() && !d.name.ends_with("(XLA)")) {
        return meta.device_label();
    }
    match (crate::analysis::roofline::devices::select(&meta.devices, None), meta.devices.first()) {
        (Some(peaks), Some(d)) => {
            let units = if meta.vendor == Vendor::Amd { "CUs" } else { "SMs" };
            format!("{} (by its {} {units}, architecture {}.{})", peaks.label, d.num_sms, d.compute_major, d.compute_minor)
        }
        _ => meta.device_label(),
    }
}

/// Layers per pass, leaving out the stages around a diffusion model's steps and the passes the
/// trace holds only part of.
pub fn layers_per_pass_of(a: &Analysis) -> Vec<u32> {
    let per = &a.layers.layers_per_pass;
    if a.layers.whole_trace_pass {
        return per.clone();
    }
    // A pass the trace holds only part of counts when there is no whole one.
    let whole = a.phases.passes.iter().any(|p| !p.incomplete && p.phase != Phase::Stage);
    per.iter()
        .zip(&a.phases.passes)
        .filter(|(_, p)| p.phase != Phase::Stage && (!whole || !p.incomplete))
        .map(|(&n, _)| n)
        .collect()
}

/// Layer types of the first complete pass with the most common number of layers.
pub fn layer_kinds(a: &Analysis) -> Vec<LayerKind> {
    let l = &a.layers;
    let counted: Vec<(usize, u32)> = l
        .passes
        .iter()
        .zip(&l.layers_per_pass)
        .enumerate()
        .filter(|(_, (p, &n))| n > 0 && p.phase != Phase::Stage)
        .filter(|(_, (p, _))| a.phases.passes.get(p.index as usize).is_none_or(|x| !x.incomplete))
        .map(|(k, (_, &n))| (k, n))
        .collect();
    let mut tally: HashMap<u32, usize> = HashMap::default();
    for (_, n) in &counted {
        *tally.entry(*n).or_insert(0) += 1;
    }
    let Some(common) = tally.into_iter().max_by_key(|&(n, c)| (c, n)).map(|(n, _)| n) else { return Vec::new() };
    let Some(&(k, _)) = counted.iter().find(|(_, n)| *n == common) else { return Vec::new() };
    let mut kinds: Vec<LayerKind> = Vec::new();
    let mut last_layer = NONE;
    for &row in &l.passes[k].rows {
        let (layer, kind) = (l.layer_of_row[row as usize], l.layer_type(row as usize));
        if layer == NONE || layer == last_layer {
            continue;
        }
        last_layer = layer;
        match kinds.iter_mut().find(|x| x.kind == kind) {
            Some(x) => x.count += 1,
            None => kinds.push(LayerKind { kind: kind.to_string(), count: 1 }),
        }
    }
    kinds
}

/// Every phase, in declaration order (`Phase as usize` indexes this).
const PHASES: [Phase; 7] = Phase::ALL;

fn top(map: HashMap<String, i64>, whole: i64, n: usize) -> Vec<Share> {
    let mut v: Vec<_> = map.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v.truncate(n);
    v.into_iter()
        .map(|(name, t)| Share {
            name,
            time_ms: t as f64 / 1e6,
            pct: if whole > 0 { 100.0 * t as f64 / whole as f64 } else { 0.0 },
        })
        .collect()
}

/// Builds the summary of an analysis.
pub fn summary(a: &Analysis) -> Summary {
    let t = &a.trace;
    let g = &t.gpu;
    let gpu_ns: i64 = g.dur.iter().sum();
    let mut counts = Counts {
        runtime_calls: t.launches.len(),
        graph_launches: t.launches.is_graph.iter().filter(|&&b| b).count(),
        gpu_annotations: t.gpu_annotations.name.len(),
        flows: t.flow_starts.len() + t.flow_finishes.len(),
        distinct_names: t.names.len(),
        memcpy_bytes: t.copies.total(g, GpuKind::Memcpy),
        memset_bytes: t.copies.total(g, GpuKind::Memset),
        ..Default::default()
    };
    for k in &g.kind {
        match k {
            GpuKind::Kernel => counts.kernels += 1,
            GpuKind::Memcpy => counts.memcpy += 1,
            GpuKind::Memset => counts.memset += 1,
        }
    }
    for k in &t.ops.kind {
        match k {
            OpKind::CpuOp => counts.cpu_ops += 1,
            OpKind::UserAnnotation => counts.user_annotations += 1,
            OpKind::PythonFunction => counts.python_functions += 1,
        }
    }
    let mut links = Links::default();
    // Keyed by ids while counting; names are looked up once per distinct key at the end.
    // Plain vectors indexed by name id, category id and phase: one load per kernel, no hashing.
    // A key is present once a kernel counted for it (even with zero time), as in a map.
    let mut op_time: Vec<Option<i64>> = vec![None; t.names.len()];
    let mut unlinked_time: Option<i64> = None;
    let mut cat_time: Vec<Option<i64>> = vec![None; a.categories.categories.len()];
    let mut phase_agg: [Option<(usize, i64)>; PHASES.len()] = [None; PHASES.len()];
    let kernel_time = a.kernel_time_ns();
    for i in t.kernel_rows() {
        let l = g.launch[i];
        if l != NONE {
            links.kernels_with_launch += 1;
            if t.launches.is_graph[l as usize] {
                links.kernels_from_graph_launch += 1;
            }
        } else {
            links.kernels_unlinked += 1;
        }
        if g.cpu_op[i] != NONE {
            links.kernels_with_cpu_op += 1;
        }
        let slot = match owner_name(a, owner(a, i)) {
            Some(n) => &mut op_time[n as usize],
            None => &mut unlinked_time,
        };
        *slot.get_or_insert(0) += g.dur[i];
        *cat_time[a.categories.of_row[i] as usize].get_or_insert(0) += g.dur[i];
        if let Some(p) = a.phases.phase_of_row[i] {
            let e = phase_agg[p as usize].get_or_insert((0, 0));
            e.0 += 1;
            e.1 += g.dur[i];
        }
    }
    links.launch_link_pct =
        if counts.kernels > 0 { 100.0 * links.kernels_with_launch as f64 / counts.kernels as f64 } else { 0.0 };
    let mut phases: Vec<PhaseShare> = PHASES
        .iter()
        .zip(phase_agg)
        .filter_map(|(p, agg)| agg.map(|(k, time)| (p.as_str(), (k, time))))
        .map(|(p, (k, time))| PhaseShare {
            phase: p.to_string(),
            passes: a.phases.passes.iter().filter(|x| x.phase.as_str() == p && !x.incomplete).count(),
            kernels: k,
            time_ms: time as f64 / 1e6,
            pct: if kernel_time > 0 { 100.0 * time as f64 / kernel_time as f64 } else { 0.0 },
        })
        .collect();
    phases.sort_by(|a, b| a.phase.cmp(&b.phase));
    let (health, warnings) = crate::report::health::checks_and_warnings(a);
    Summary {
        device: device_label(&t.meta),
        vendor: t.meta.vendor,
        devices: t.meta.devices.clone(),
        rank: t.meta.rank,
        world_size: t.meta.world_size,
        input: t.stats.clone(),
        input_text: t.stats.format.label(),
        counts,
        kernel_time_ms: kernel_time as f64 / 1e6,
        gpu_time_ms: gpu_ns as f64 / 1e6,
        copies: copies_of(t),
        links,
        timeline: timelines(a),
        top_ops: top(
            op_time
                .into_iter()
                .enumerate()
                .filter_map(|(n, v)| Some((t.name(n as crate::model::NameId).to_string(), v?)))
                .chain(unlinked_time.map(|v| (UNLINKED.to_string(), v)))
                .collect(),
            kernel_time,
            10,
        ),
        top_categories: top(
            cat_time.into_iter().enumerate().filter_map(|(c, v)| Some((a.categories.categories[c].name.clone(), v?))).collect(),
            kernel_time,
            10,
        ),
        trace_phase: a.phases.trace_phase.map(|p| p.as_str().to_string()),
        not_inference_reason: a.phases.not_inference_reason.clone(),
        workload: a.phases.workload.kind.as_str().to_string(),
        workload_evidence: a.phases.workload.evidence.clone(),
        passes: a.phases.passes.iter().filter(|p| !p.incomplete && p.phase != Phase::Stage).count(),
        stages: a
            .phases
            .passes
            .iter()
            .filter(|p| p.phase == Phase::Stage)
            .map(|p| StageShare {
                pass: p.index,
                label: p.stage.clone().unwrap_or_default(),
                kernels: p.kernels,
                time_ms: p.kernel_time_ns as f64 / 1e6,
            })
            .collect(),
        incomplete_passes: a.phases.passes.iter().filter(|p| p.incomplete).count(),
        phases,
        doubtful_passes: a.phases.passes.iter().filter(|p| p.doubt.is_some()).count(),
        mixed: mixed_split(a),
        layers_per_pass: layers_per_pass_of(a),
        layer_kinds: layer_kinds(a),
        warnings,
        graph_replays: graph_replays(a, gpu_ns),
        secret_metadata: t.meta.secret_keys.clone(),
        health,
    }
}

/// What became of a trace's graph replays, with one sentence for people.
#[derive(Debug, Clone, Serialize)]
pub struct GraphReplays {
    /// The counts (`crate::model::graphs::GraphReport`).
    #[serde(flatten)]
    pub report: crate::model::graphs::GraphReport,
    /// Replayed GPU time as a share of all GPU time (%).
    pub replayed_pct: f64,
    /// Share of the replayed GPU time that now has an op (%).
    pub attributed_pct: f64,
    /// The sentence the CLI and the page show.
    pub note: String,
}

/// The [`GraphReplays`] of an analysis whose GPU rows take `gpu_ns` in all, `None` when no graph
/// launch replayed anything.
pub fn graph_replays(a: &Analysis, gpu_ns: i64) -> Option<GraphReplays> {
    let r = &a.trace.graphs.report;
    if r.graph_launches == 0 {
        return None;
    }
    let pct = |x: i64, of: i64| if of > 0 { 100.0 * x as f64 / of as f64 } else { 0.0 };
    let (replayed_pct, attributed_pct) = (pct(r.replayed_ns, gpu_ns), pct(r.attributed_ns, r.replayed_ns));
    // A TPU's graphs are XLA programs: launched whole, each op run under its program's launch.
    let (kind, launches) = match a.trace.meta.device_kind() {
        "GPU" => ("GPU", "graph launches"),
        kind => (kind, "program launches"),
    };
    let mut note = format!(
        "{:.3} ms ({replayed_pct:.1}% of {kind} time) replayed by {} {launches} in {} kernels",
        r.replayed_ns as f64 / 1e6,
        r.graph_launches,
        r.replayed_rows
    );
    if !r.captures.is_empty() {
        note += &format!(
            "; {} launches aligned to {} captured graphs of {} capture traces, {} kernels given their captured op ({} dispatches skipped, {} kernels unaligned, {} launches unmatched)",
            r.launches_from_capture,
            r.captures.iter().map(|c| c.graphs).sum::<usize>(),
            r.captures.len(),
            r.rows_from_capture,
            r.dispatches_skipped,
            r.rows_unaligned,
            r.launches_unmatched
        );
        if let Some(b) = r.captured_batch {
            note += &format!("; captured shapes are the graph's padded batch ({b}), not the step's own");
        }
    }
    if r.rows_from_eager > 0 {
        note += &format!(
            "; {} kernels of {} launches given the ops of an eager stretch with the same kernels (names only)",
            r.rows_from_eager, r.launches_from_eager
        );
    }
    note += &format!("; {attributed_pct:.1}% of replayed time has an op");
    if r.captures.is_empty() && attributed_pct < 99.95 && kind == "GPU" {
        note += ": a capture trace (--capture) would attribute the rest";
    }
    Some(GraphReplays { report: r.clone(), replayed_pct, attributed_pct, note })
}

#[cfg(test)]
mod tests {
    use super::PHASES;

    #[test]
    fn phases_table_is_indexed_by_discriminant() {
        for (k, p) in PHASES.iter().enumerate() {
            assert_eq!(*p as usize, k, "{}", p.as_str());
        }
    }
}
