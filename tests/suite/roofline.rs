//! Roofline FLOP and byte counts checked by hand against real op calls of the fixtures.
//!
//! The shapes below were read from the fixtures with python3 (gzip + json: `Input Dims` of the
//! `cpu_op` events); the expected numbers are worked out in the comments, not taken from our output.
//! GPU times were summed in python over the kernels and memsets whose runtime launch lies inside
//! each op call (matched by `args.correlation`).

use traceprism::analysis::roofline::{analyze, Family, OpRow, Roofline};
use traceprism::{analyze_path, Analysis, Options};

fn load(name: &str) -> Analysis {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name);
    analyze_path(&path, Options::default()).expect("fixture loads")
}

fn row<'a>(r: &'a Roofline, name: &str, dims: &str) -> &'a OpRow {
    r.rows.iter().find(|x| x.name == name && x.input_dims == dims).unwrap_or_else(|| panic!("no roofline row {name} {dims}"))
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs().max(1e-12)
}

#[test]
fn llama_dense_gemm_and_attention_by_hand() {
    let a = load("llama_dense_eager.pt.trace.json.gz");
    let r = analyze(&a);
    let peaks = r.peaks.as_ref().expect("H100 recognised from deviceProperties");
    assert_eq!(peaks.key, "H100-SXM", "deviceProperties name is 'NVIDIA H100 80GB HBM3'");

    // Prefill MLP up-projection: aten::mm [[2048, 2048], [2048, 5632]] bf16.
    // FLOPs = 2·M·N·K = 2·2048·5632·2048 = 47,244,640,256
    // bytes = (M·K + K·N + M·N)·2 = (4,194,304 + 11,534,336 + 11,534,336)·2 = 54,525,952
    let up = row(&r, "aten::mm", "[[2048, 2048], [2048, 5632]]");
    assert_eq!(up.family, Family::Gemm);
    assert_eq!(up.work.flops, 47_244_640_256.0);
    assert_eq!(up.work.bytes, 54_525_952.0);
    assert_eq!(up.calls, 32, "16 layers × (gate, up) in the one prefill pass");
    // python: 32 calls launched 32 GEMM kernels + 32 memsets, 1976.515 µs in all → 61.766 µs each.
    assert_eq!(up.total_ns, 1_976_515);
    // achieved = 47.2446 GFLOP / 61.766 µs = 764.9 TFLOP/s; intensity 866.5 FLOP/byte > ridge 295 → compute-bound.
    assert!(close(up.tflops(), 47_244_640_256.0 / 61.766_093_75e-6 / 1e12, 1e-9), "{}", up.tflops());
    let v = up.against(peaks);
    assert_eq!(v.bound, "compute");
    assert!(close(v.pct_of_roof, 100.0 * up.tflops() / 989.4, 1e-9));

    // Decode MLP up-projection: aten::mm [[4, 2048], [2048, 5632]].
    // FLOPs = 2·4·5632·2048 = 92,274,688; bytes = (8,192 + 11,534,336 + 22,528)·2 = 23,130,112
    // intensity 3.99 FLOP/byte < ridge → memory-bound.
    let dec = row(&r, "aten::mm", "[[4, 2048], [2048, 5632]]");
    assert_eq!(dec.work.flops, 92_274_688.0);
    assert_eq!(dec.work.bytes, 23_130_112.0);
    assert_eq!(dec.against(peaks).bound, "memory");

    // Prefill attention: _cudnn_attention_forward q[4,16,512,128] k,v[4,8,512,128], is_causal=True
    // (argument 10 of the cuDNN op; Concrete Inputs "True").
    // pairs = 512·513/2 = 131,328; FLOPs = 2·B·Hq·pairs·D (QKᵀ) + 2·B·Hq·pairs·D (PV)
    //       = 4·4·16·131,328·128 = 4,303,355,904
    // bytes = Q 8,388,608 + K 4,194,304 + V 4,194,304 + O 8,388,608 = 25,165,824
    let attn = row(
        &r,
        "aten::_cudnn_attention_forward",
        "[[4, 16, 512, 128], [4, 8, 512, 128], [4, 8, 512, 128], [], [], [], [], [], [], [], [], [], []]",
    );
    assert_eq!(attn.family, Family::Attention);
    assert_eq!(attn.work.flops, 4_303_355_904.0);
    assert_eq!(attn.work.bytes, 25_165_824.0);
    assert!(attn.work.shape.contains("causal"));
    // python: 16 calls, 334.816 µs.
    assert_eq!(attn.calls, 16);
    assert_eq!(attn.total_ns, 334_816);

    // First decode step's attention: q[4,16,1,128], k,v[4,8,513,128], not causal.
    // FLOPs = 4·4·16·1·513·128 = 16,809,984
    let d_attn = row(
        &r,
        "aten::_cudnn_attention_forward",
        "[[4, 16, 1, 128], [4, 8, 513, 128], [4, 8, 513, 128], [], [], [], [], [], [], [], [], [], []]",
    );
    assert_eq!(d_attn.work.flops, 16_809_984.0);
    assert!(!d_attn.work.shape.contains("causal"));

    // Kernels are credited once: mm calls are counted, their enclosing linear/matmul are not.
    assert!(r.rows.iter().all(|x| x.name != "aten::linear" && x.name != "aten::matmul"));
    assert!(r.modeled_ns <= r.gpu_ns);
}

#[test]
fn moe_grouped_gemm_by_hand() {
    let a = load("moe_eager.pt.trace.json.gz");
    let r = analyze(&a);
    // Prefill experts: aten::_grouped_mm A[6144, 1024] (1536 tokens × top-4), B[16, 1024, 1024], offs[16].
    // FLOPs = 2·T·K·N = 2·6144·1024·1024 = 12,884,901,888
    // bytes = (6144·1024 + 16·1024·1024 + 6144·1024)·2 = 29,360,128·2 = 58,720,256
    let g = row(&r, "aten::_grouped_mm", "[[6144, 1024], [16, 1024, 1024], [16], [], []]");
    assert_eq!(g.family, Family::GroupedGemm);
    assert_eq!(g.work.flops, 12_884_901_888.0);
    assert_eq!(g.work.bytes, 58_720_256.0);
    // Decode experts: A[16, 512], B[16, 512, 1024]: FLOPs = 2·16·512·1024 = 16,777,216
    let d = row(&r, "aten::_grouped_mm", "[[16, 512], [16, 512, 1024], [16], [], []]");
    assert_eq!(d.work.flops, 16_777_216.0);
}

#[test]
fn flash_attention_on_mi300x_by_hand() {
    let a = load("torch_compile_triton_mi300x.json.gz");
    let r = analyze(&a);
    assert_eq!(r.peaks.as_ref().map(|p| p.key.as_str()), Some("MI300X"));
    // aten::_flash_attention_forward takes [B, S, H, D]: q,k,v [8, 4096, 16, 128], is_causal (argument 8) False.
    // FLOPs = 4·B·H·Sq·Sk·D = 4·8·16·4096·4096·128 = 2^40 = 1,099,511,627,776
    let fa = r.rows.iter().find(|x| x.name == "aten::_flash_attention_forward").expect("flash attention row");
    assert_eq!(fa.work.flops, 1_099_511_627_776.0);
    // bytes = 4 tensors of 8·4096·16·128 bf16 = 4·134,217,728 = 536,870,912
    assert_eq!(fa.work.bytes, 536_870_912.0);
    // aten::mm [[32768, 2048], [2048, 8192], [32768, 8192]] (out= variant): 2·32768·8192·2048 = 1,099,511,627,776
    let mm = row(&r, "aten::mm", "[[32768, 2048], [2048, 8192], [32768, 8192]]");
    assert_eq!(mm.work.flops, 1_099_511_627_776.0);
}

#[test]
fn device_override_and_unknown_device() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/torch_compile_triton_mi300x.json.gz");
    let a = analyze_path(&path, Options { device: Some("B200".into()), ..Options::default() }).unwrap();
    assert_eq!(analyze(&a).peaks.unwrap().hbm, 8.0);
    let a = analyze_path(&path, Options { device: Some("bf16=100,hbm=1".into()), ..Options::default() }).unwrap();
    assert_eq!(analyze(&a).peaks.unwrap().bf16, 100.0);
}
