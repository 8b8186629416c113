//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;
use traceprism::{Analysis, Options, Trace};

/// Path of a fixture file.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name)
}

/// Reads and links a fixture.
pub fn trace(name: &str) -> Trace {
    traceprism::read_trace(std::fs::File::open(fixture(name)).expect("fixture exists")).expect("fixture reads")
}

/// Reads and analyses a fixture with default options.
pub fn analysis(name: &str) -> Analysis {
    Analysis::new(trace(name), Options::default()).expect("analysis")
}

/// A gzip fixture's plain JSON text.
pub fn plain_fixture(name: &str) -> Vec<u8> {
    traceprism::ingest::gunzip(&std::fs::read(fixture(name)).expect("fixture exists")).expect("fixture inflates")
}

/// Every column of the model (names as text), the stats, warnings and header facts: two reads of
/// one trace are the same model exactly when these strings are equal.
pub fn all_columns(t: &Trace) -> String {
    let g = &t.gpu;
    let o = &t.ops;
    let l = &t.launches;
    let text = |v: &[u32]| v.iter().map(|&n| t.name(n)).collect::<Vec<_>>().join("\u{1}");
    let threads: Vec<_> = t.threads.iter().map(|th| (th.pid, th.tid, t.name(th.process_name), t.name(th.thread_name))).collect();
    format!(
        "{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{}|{}|{}|{}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{}|{:?}|{}|{}|{}|{:?}|{:?}|{:?}",
        g.kind,
        g.ts,
        g.dur,
        g.correlation,
        g.external_id,
        g.event_index,
        g.launch,
        g.cpu_op,
        g.device,
        g.stream,
        g.grid,
        o.kind,
        o.ts,
        o.dur,
        o.parent,
        o.event_index,
        o.thread,
        o.python_id,
        l.ts,
        l.correlation,
        l.cpu_op,
        l.event_index,
        l.is_graph,
        text(&g.name),
        text(&o.name),
        text(&o.input_dims),
        text(&l.name),
        threads,
        t.flow_starts.len(),
        t.flow_finishes.len(),
        (t.stats.events, t.stats.kept, t.stats.ignored, t.stats.skipped, t.stats.bytes_in, t.stats.json_bytes),
        t.warnings.counts,
        (t.meta.devices.len(), t.meta.vendor, t.meta.object_form, &t.meta.other),
        t.time_origin_ns,
        t.comm.op,
        text(&t.comm.group),
        text(&t.comm.collective),
        text(&t.comm.dtype),
        (&t.comm.in_nelems, &t.comm.out_nelems, &t.comm.group_size),
        t.copies.gpu,
        t.copies.bytes
    )
}

/// The args torch.profiler writes only with `record_shapes=True`.
pub const SHAPE_ARGS: &[&str] = &["Input Dims", "Input type", "Input Strides", "Concrete Inputs"];

/// Turns a trace's events into what torch.profiler's defaults (no shapes, no stacks) would have
/// written: every `python_function` event and every [`SHAPE_ARGS`] argument removed. Returns how
/// many args and events were removed.
pub fn strip_shapes_and_stacks(events: &mut Vec<serde_json::Value>) -> (usize, usize) {
    let before = events.len();
    events.retain(|e| e["cat"] != "python_function");
    let frames = before - events.len();
    let mut args = 0;
    for e in events.iter_mut() {
        if let Some(a) = e.get_mut("args").and_then(|a| a.as_object_mut()) {
            for k in SHAPE_ARGS {
                args += usize::from(a.remove(*k).is_some());
            }
        }
    }
    (args, frames)
}

/// Keeps the GPU alone, as a serving engine's own profiler or a CUDA-activity-only torch.profiler
/// writes a trace: kernels, memcpy and memset (with their correlation ids) and the metadata;
/// every CPU op, runtime call, Python frame, annotation and flow removed. Returns how many events
/// were removed.
pub fn keep_gpu_only(events: &mut Vec<serde_json::Value>) -> usize {
    let before = events.len();
    events.retain(|e| e["ph"] == "M" || ["kernel", "gpu_memcpy", "gpu_memset"].iter().any(|c| e["cat"] == *c));
    before - events.len()
}

/// The type of each layer of layer pass `pass` (index into `a.layers.passes`), in the order the
/// layers run (a layer's type is the type of its first row).
pub fn layer_types_in_order(a: &Analysis, pass: usize) -> Vec<&str> {
    let mut order = Vec::new();
    let mut last = traceprism::model::NONE;
    for &r in &a.layers.passes[pass].rows {
        let l = a.layers.layer_of_row[r as usize];
        if l != traceprism::model::NONE && l != last {
            order.push(a.layers.layer_type(r as usize));
            last = l;
        }
    }
    order
}

/// Reads and analyses a trace held in memory, with default options.
pub fn analyse_bytes(bytes: &[u8]) -> Analysis {
    Analysis::new(read_bytes(bytes).expect("reads"), Options::default()).expect("analysis")
}

/// The run of rank traces held in memory (`rank0.json`, `rank1.json`... in order), analysed with
/// default options.
pub fn run_of_texts(texts: &[Vec<u8>]) -> traceprism::Result<traceprism::analysis::ranks::Run> {
    use traceprism::analysis::ranks::{analyse_run, RankTrace, RunOptions};
    let traces =
        texts.iter().enumerate().map(|(r, t)| RankTrace { file: format!("rank{r}.json"), analysis: analyse_bytes(t) }).collect();
    analyse_run(traces, RunOptions::default())
}

/// Reads a trace from in-memory bytes.
pub fn read_bytes(bytes: &[u8]) -> traceprism::Result<Trace> {
    let mut r = traceprism::Reader::new();
    r.push(bytes)?;
    traceprism::pipeline::finish(r)
}

/// Gzips bytes with miniz_oxide (for tests that need .gz input).
pub fn gzip(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    out.extend(miniz_oxide::deflate::compress_to_vec(data, 6));
    let crc = crc32(data);
    out.extend(crc.to_le_bytes());
    out.extend((data.len() as u32).to_le_bytes());
    out
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// Every trace fixture (not truth files).
pub const TRACES: &[&str] = &[
    "deepseek_v3_train_h800.json.gz",
    "gpu_only_mi210.json.gz",
    "llama_dense_eager.pt.trace.json.gz",
    "llama_train.pt.trace.json.gz",
    "moe_eager.pt.trace.json.gz",
    "recsys_train_rank0_a100.json.gz",
    "resnet_train_actckpt_mi300x.json.gz",
    "sglang_qwen3-30b-a3b_decode_b300.trace.json.gz",
    "sglang_qwen3-30b-a3b_decode_mi300x.trace.json.gz",
    "sglang_qwen3-8b_decode_graph_mi300x.json.gz",
    "sglang_qwen3-8b_prefill_mi300x.json.gz",
    "torch_compile_triton_mi300x.json.gz",
    "vllm_gptoss_decode_fullgraph_mi300x.json.gz",
    "vllm_moe_tp8_eager_b200.json.gz",
    "vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz",
];

/// The union of intervals `(start, end)`: sorted, touching ones merged.
pub fn union(mut v: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    v.sort();
    let mut out: Vec<(i64, i64)> = Vec::new();
    for (s, e) in v {
        match out.last_mut() {
            Some(l) if s <= l.1 => l.1 = l.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}
