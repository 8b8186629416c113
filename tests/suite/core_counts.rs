//! The reader and linker against independent counts of the raw JSON.
//!
//! Expected values were computed from the fixtures with Python's `json` module (not with
//! traceprism), using `decimal.Decimal` for durations:
//!
//! ```text
//! kernels       = events with ph == "X" and cat == "kernel"
//! kernel_ns     = sum(Decimal(dur)) * 1000 over those kernels
//! linkable      = kernels whose args.correlation equals the correlation of some cuda_runtime/cuda_driver event
//! graph_kernels = kernels whose correlation is that of a cudaGraphLaunch/hipGraphLaunch event
//! memcpy/memset = events with ph == "X" and cat == gpu_memcpy / gpu_memset
//! ```

use crate::common;
use common::*;
use traceprism::analysis::ops::{owner, owner_label};
use traceprism::model::{GpuKind, NONE};

/// (file, kernels, kernel_ns, linkable, graph_kernels, memcpy, memset)
const EXPECTED: &[(&str, usize, i64, usize, usize, usize, usize)] = &[
    ("deepseek_v3_train_h800.json.gz", 963, 244041000, 963, 0, 8, 12),
    ("gpu_only_mi210.json.gz", 562, 5343422, 562, 0, 0, 0),
    ("llama_dense_eager.pt.trace.json.gz", 22903, 81338744, 22903, 0, 0, 49),
    ("llama_train.pt.trace.json.gz", 2120, 21199922, 2120, 0, 34, 70),
    ("moe_eager.pt.trace.json.gz", 17247, 43653045, 17247, 0, 984, 89),
    ("recsys_train_rank0_a100.json.gz", 6080, 401445000, 5375, 135, 1390, 277),
    ("resnet_train_actckpt_mi300x.json.gz", 2995, 97255826, 2238, 0, 550, 108),
    ("sglang_qwen3-30b-a3b_decode_b300.trace.json.gz", 713, 6290304, 713, 676, 4, 1),
    ("sglang_qwen3-30b-a3b_decode_mi300x.trace.json.gz", 802, 10896105, 802, 772, 3, 0),
    ("sglang_qwen3-8b_decode_graph_mi300x.json.gz", 555, 9765437, 555, 544, 3, 0),
    ("sglang_qwen3-8b_prefill_mi300x.json.gz", 527, 492773592, 527, 0, 7, 0),
    ("torch_compile_triton_mi300x.json.gz", 12, 12549021, 12, 0, 0, 0),
    ("vllm_gptoss_decode_fullgraph_mi300x.json.gz", 425, 10674517, 425, 421, 9, 0),
    ("vllm_moe_tp8_eager_b200.json.gz", 768, 10862916, 768, 0, 161, 0),
    ("vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz", 13508, 233133565, 13508, 8667, 70, 240),
];

#[test]
fn every_fixture_is_covered() {
    for f in TRACES {
        assert!(EXPECTED.iter().any(|e| e.0 == *f), "{f} has no expected counts");
    }
}

#[test]
fn kernel_counts_and_time_match_the_raw_json() {
    println!("{:<55} {:>7} {:>14} {:>9} {:>8}", "trace", "kernels", "kernel time µs", "linked %", "graph");
    for &(file, kernels, kernel_ns, linkable, graph_kernels, memcpy, memset) in EXPECTED {
        let t = trace(file);
        let g = &t.gpu;
        let count = |k: GpuKind| g.kind.iter().filter(|&&x| x == k).count();
        let ns: i64 = t.kernel_rows().map(|i| g.dur[i]).sum();
        let linked = t.kernel_rows().filter(|&i| g.launch[i] != NONE).count();
        let via_graph = t.kernel_rows().filter(|&i| g.launch[i] != NONE && t.launches.is_graph[g.launch[i] as usize]).count();
        println!(
            "{file:<55} {:>7} {:>14.3} {:>9.2} {:>8}",
            count(GpuKind::Kernel),
            ns as f64 / 1e3,
            100.0 * linked as f64 / kernels as f64,
            via_graph
        );
        assert_eq!(count(GpuKind::Kernel), kernels, "{file}: kernel count");
        assert_eq!(ns, kernel_ns, "{file}: total kernel time (ns)");
        assert_eq!(count(GpuKind::Memcpy), memcpy, "{file}: memcpy count");
        assert_eq!(count(GpuKind::Memset), memset, "{file}: memset count");
        // Every kernel whose launch is in the trace is linked to it; none is linked wrongly.
        assert_eq!(linked, linkable, "{file}: kernels linked to a launch");
        assert_eq!(via_graph, graph_kernels, "{file}: kernels linked to a graph launch");
        for i in t.kernel_rows().filter(|&i| g.launch[i] != NONE) {
            assert_eq!(
                t.launches.correlation[g.launch[i] as usize], g.correlation[i],
                "{file}: kernel {i} linked by correlation"
            );
        }
    }
}

#[test]
fn links_cover_99_percent_where_launches_were_recorded() {
    // Traces whose runtime events are complete (every kernel's correlation has a launch).
    for &(file, kernels, _, linkable, ..) in EXPECTED.iter().filter(|e| e.1 == e.3) {
        let t = trace(file);
        let linked = t.kernel_rows().filter(|&i| t.gpu.launch[i] != NONE).count();
        assert!(linked as f64 >= 0.99 * kernels as f64, "{file}: {linked}/{kernels} linked");
        assert_eq!(linked, linkable);
    }
}

#[test]
fn eager_kernels_link_to_the_op_with_their_external_id() {
    // In eager traces Kineto stamps each kernel with the External id of the op that launched it.
    for file in ["llama_dense_eager.pt.trace.json.gz", "moe_eager.pt.trace.json.gz", "vllm_moe_tp8_eager_b200.json.gz"] {
        let t = trace(file);
        let (mut same, mut total) = (0, 0);
        for i in t.kernel_rows() {
            let op = t.gpu.cpu_op[i];
            if op == NONE || t.gpu.external_id[i] < 0 {
                continue;
            }
            total += 1;
            same += (t.ops.external_id[op as usize] == t.gpu.external_id[i]) as usize;
        }
        println!("{file}: {same}/{total} kernels linked to the op carrying their External id");
        assert!(total > 0 && same as f64 >= 0.99 * total as f64, "{file}: {same}/{total}");
    }
}

#[test]
fn graph_replayed_kernels_belong_to_the_graph_launch() {
    for file in [
        "vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz",
        "sglang_qwen3-8b_decode_graph_mi300x.json.gz",
        "vllm_gptoss_decode_fullgraph_mi300x.json.gz",
        "sglang_qwen3-30b-a3b_decode_b300.trace.json.gz",
    ] {
        let a = analysis(file);
        let t = &a.trace;
        let mut graph_kernels = 0;
        for i in t.kernel_rows() {
            let l = t.gpu.launch[i];
            if l == NONE || !t.launches.is_graph[l as usize] {
                continue;
            }
            graph_kernels += 1;
            let label = owner_label(&a, owner(&a, i));
            let launch_op = t.launches.cpu_op[l as usize];
            if launch_op != NONE {
                assert_eq!(label, t.name(t.ops.name[launch_op as usize]), "{file}: graph kernel owned by the launch's op");
            } else {
                assert!(label.contains("GraphLaunch"), "{file}: graph kernel owned by {label}");
            }
        }
        assert!(graph_kernels > 400, "{file}: only {graph_kernels} graph kernels");
    }
}

#[test]
fn timestamps_keep_nanosecond_precision() {
    // First kernel of llama_dense_eager in file order: ts 4488635750089.311 µs, dur 6.144 µs.
    let t = trace("llama_dense_eager.pt.trace.json.gz");
    let first = t.kernel_rows().next().unwrap();
    assert_eq!(t.gpu.ts[first], 4_488_635_750_089_311);
    assert_eq!(t.gpu.dur[first], 6_144);
    assert_eq!(t.gpu.correlation[first], 115120);
    assert_eq!(t.gpu.grid[first], [4, 8, 4]);
}

#[test]
fn header_keys_are_read() {
    let t = trace("vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz");
    assert_eq!(t.meta.devices.first().map(|d| d.name.as_str()), Some("NVIDIA H100 80GB HBM3"));
    assert_eq!(t.meta.rank, Some(0));
    assert_eq!(t.meta.world_size, Some(4));
    let amd = trace("gpu_only_mi210.json.gz");
    assert_eq!(amd.meta.vendor, traceprism::model::Vendor::Amd);
}
