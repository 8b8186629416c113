//! The timeline's level of detail on real traces, against the raw JSON read with serde_json: one
//! lane per GPU stream, busy time per lane equal to the union of its kernels' intervals, and a hit
//! in the middle of a kernel naming that kernel.

use crate::common;
use common::*;
use traceprism::analysis::lod::{details, TimelineIndex, EMPTY};

/// (stream, start ns, end ns, name) of every GPU event (kernel, memcpy, memset) in the raw JSON,
/// with times relative to `origin_us` (µs) — read with serde_json, not with our reader.
fn raw_gpu_events(name: &str) -> Vec<(i64, f64, f64, String)> {
    let doc: serde_json::Value = serde_json::from_slice(&plain_fixture(name)).unwrap();
    doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X" && matches!(e["cat"].as_str(), Some("kernel" | "gpu_memcpy" | "gpu_memset")))
        .map(|e| {
            let ts = e["ts"].as_f64().unwrap();
            (e["args"]["stream"].as_i64().unwrap(), ts, ts + e["dur"].as_f64().unwrap(), e["name"].as_str().unwrap().to_string())
        })
        .collect()
}

fn union(mut v: Vec<(f64, f64)>) -> f64 {
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut total, mut end) = (0.0, f64::MIN);
    for (s, e) in v {
        if e > end {
            total += e - s.max(end);
            end = e;
        }
    }
    total
}

#[test]
fn lanes_busy_time_and_hits_match_the_raw_json() {
    for name in ["sglang_qwen3-8b_decode_graph_mi300x.json.gz", "vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz"] {
        let a = analysis(name);
        let index = TimelineIndex::new(&a);
        let raw = raw_gpu_events(name);
        let mut streams: Vec<i64> = raw.iter().map(|r| r.0).collect();
        streams.sort_unstable();
        streams.dedup();
        let gpu_lanes: Vec<_> = index.meta.lanes.iter().filter(|l| l.kind == "gpu").collect();
        assert_eq!(gpu_lanes.iter().map(|l| l.stream).collect::<Vec<_>>(), streams, "{name}: one lane per stream");
        // 16,000 columns read the spans themselves; 300 columns over the whole trace read the
        // lanes' pyramids (more than 8 spans per column).
        for width in [16_000, 300] {
            let (from, to) = (index.meta.start, index.meta.end);
            let buckets = index.buckets(from, to, width);
            let lanes = index.meta.lanes.len();
            let per_px = (to - from) / width as f64;
            for (k, lane) in gpu_lanes.iter().enumerate() {
                let drawn: f64 = (0..width).map(|c| buckets[(lanes + k) * width + c] as f64 / 255.0 * per_px).sum();
                let want = 1e3 * union(raw.iter().filter(|r| r.0 == lane.stream).map(|r| (r.1, r.2)).collect());
                // Each column's fraction is rounded to 1/255, and a span under a pixel still shows.
                let slack = width as f64 * per_px / 255.0 + 0.02 * want;
                assert!(
                    (drawn - want).abs() <= slack,
                    "{name} stream {} at {width} columns: drawn {drawn:.0} ns busy, kernels cover {want:.0} ns",
                    lane.stream
                );
                let painted = (0..width).filter(|&c| buckets[k * width + c] != EMPTY).count();
                assert!(painted > 0, "{name} stream {}: not blank", lane.stream);
            }
        }
        let lanes = index.meta.lanes.len();
        let to = index.meta.end;
        // A hit in the middle of every 50th GPU event names that event (or one overlapping it).
        let origin_us = index.meta.origin / 1e3;
        for r in raw.iter().step_by(50) {
            let lane = gpu_lanes.iter().position(|l| l.stream == r.0).unwrap();
            let mid = ((r.1 + r.2) / 2.0 - origin_us) * 1e3;
            let (kind, row) = index.hit(lane, mid, 0.0).unwrap_or_else(|| panic!("{name}: nothing at the middle of {}", r.3));
            let d = details(&a, kind, row);
            let overlapping = raw
                .iter()
                .any(|o| o.0 == r.0 && o.3 == d.name && o.1 <= (r.1 + r.2) / 2.0 + 1e-3 && o.2 >= (r.1 + r.2) / 2.0 - 1e-3);
            assert!(overlapping, "{name}: hit {} at the middle of {}", d.name, r.3);
        }
        // An empty window draws nothing.
        let blank = index.buckets(to + 1e9, to + 2e9, 100);
        assert!(blank[..lanes * 100].iter().all(|&f| f == EMPTY));
        println!(
            "{name}: {} GPU lanes, {} lanes in all, {} passes, {} layer bands",
            gpu_lanes.len(),
            lanes,
            index.meta.passes.len(),
            index.meta.layers.len()
        );
    }
}
