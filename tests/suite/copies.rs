//! Bytes of memcpys and memsets (`args.bytes` in Kineto traces, `bytes` in Nsight Systems
//! exports): counted here from the raw JSON with serde_json, independently of the reader, and
//! compared with the summary's totals and its per-name copy rows (count, bytes, time, GB/s).

use crate::common;

use traceprism::report::summary::summary;

/// Real traces with copies: H100 (vLLM TP4), B200 (vLLM MoE), H100 (HF Qwen), A100 (recsys training).
const TRACES: [&str; 4] = [
    "vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz",
    "vllm_moe_tp8_eager_b200.json.gz",
    "hf_qwen15_05b_base_forward_h100.json.gz",
    "recsys_train_rank0_a100.json.gz",
];

#[test]
fn copy_bytes_match_the_raw_json() {
    for name in TRACES {
        let raw: serde_json::Value = serde_json::from_slice(&common::plain_fixture(name)).unwrap();
        let events = raw["traceEvents"].as_array().unwrap();
        let (mut memcpy, mut memset) = ((0usize, 0u64, 0f64), (0usize, 0u64, 0f64));
        for e in events {
            let slot = match (e["ph"].as_str(), e["cat"].as_str()) {
                (Some("X"), Some("gpu_memcpy")) => &mut memcpy,
                (Some("X"), Some("gpu_memset")) => &mut memset,
                _ => continue,
            };
            slot.0 += 1;
            slot.1 += e["args"]["bytes"].as_u64().unwrap_or(0);
            slot.2 += e["dur"].as_f64().unwrap_or(0.0);
        }
        let a = common::analysis(name);
        let s = summary(&a);
        eprintln!(
            "{name}: memcpy {} / {} ({} / {} bytes), memset {} / {} ({} / {} bytes)",
            s.counts.memcpy,
            memcpy.0,
            s.counts.memcpy_bytes,
            memcpy.1,
            s.counts.memset,
            memset.0,
            s.counts.memset_bytes,
            memset.1
        );
        assert!(memcpy.1 + memset.1 > 0, "{name}: a trace with bytes to count");
        assert_eq!((s.counts.memcpy, s.counts.memcpy_bytes), (memcpy.0, memcpy.1), "{name}: memcpy");
        assert_eq!((s.counts.memset, s.counts.memset_bytes), (memset.0, memset.1), "{name}: memset");
        // The per-name rows add up to the same, and their time to the JSON's (µs there, ms here).
        let rows = &s.copies;
        assert_eq!(rows.iter().map(|c| c.count).sum::<usize>(), memcpy.0 + memset.0, "{name}");
        assert_eq!(rows.iter().map(|c| c.bytes).sum::<u64>(), memcpy.1 + memset.1, "{name}");
        let ms: f64 = rows.iter().map(|c| c.time_ms).sum();
        assert!((ms - (memcpy.2 + memset.2) / 1e3).abs() < 1e-3, "{name}: {ms} ms");
        for c in rows {
            if let Some(rate) = c.gb_per_s {
                assert!((rate - c.bytes as f64 / (c.time_ms * 1e6)).abs() < 1e-9 * rate.max(1.0), "{name}: {}", c.name);
            }
        }
        assert!(rows.windows(2).all(|w| w[0].time_ms >= w[1].time_ms), "{name}: longest first");
    }
}
