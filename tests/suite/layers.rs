//! Layer detection on real traces, scored against the truth files and known model depths.
//!
//! Expected values come from the truth files (`num_layers`, per-kernel `layer`) and from the models'
//! published depths, never from our own output.

use crate::common;
use common::fixture;
use traceprism::analysis::layers;
use traceprism::analysis::truth::{score_layers, Truth};
use traceprism::{analyze_path, Analysis, Options};

/// Analysis of a recorded trace with passes taken from its truth file (layer detection is scored
/// on its own, independent of pass detection).
fn with_truth_passes(trace: &str, truth: &str, options: Options) -> (Analysis, Truth) {
    let mut a = analyze_path(&fixture(trace), options).expect("trace reads");
    let truth = traceprism::pipeline::read_truth(&fixture(truth)).expect("truth reads");
    let passes = truth.passes(&a.trace);
    a.base_mut().layers = layers::detect_passes(&a.trace, &a.categories, &passes, &a.options);
    (a, truth)
}

fn check_truth(trace: &str, truth: &str) {
    let (a, truth) = with_truth_passes(trace, truth, Options::default());
    let s = score_layers(&a, &truth);
    println!("{trace}: {s}");
    assert_eq!(s.unmatched, 0, "every truth kernel is found in the trace");
    assert!(s.accuracy() >= 0.95, "{trace}: {s}");
    assert_eq!(s.passes_exact, s.passes, "{trace}: {s}");
}

#[test]
fn llama_dense_eager_matches_truth() {
    check_truth("llama_dense_eager.pt.trace.json.gz", "llama_dense_eager.truth.json.gz");
}

#[test]
fn moe_eager_matches_truth() {
    check_truth("moe_eager.pt.trace.json.gz", "moe_eager.truth.json.gz");
}

/// Layers per pass when the whole single-step trace is read as one pass.
fn whole_trace_layers(trace: &str) -> (Vec<u32>, Analysis) {
    let mut a = analyze_path(&fixture(trace), Options::default()).expect("trace reads");
    let empty = traceprism::analysis::phases::Phases::default();
    a.base_mut().layers = layers::detect(&a.trace, &a.categories, &empty, &a.options);
    let types: Vec<&str> = {
        let mut t: Vec<&str> = (0..a.trace.gpu.len()).map(|r| a.layers.layer_type(r)).filter(|t| !t.is_empty()).collect();
        t.sort();
        t.dedup();
        t
    };
    println!("{trace}: layers/pass {:?}, types {:?}", a.layers.layers_per_pass, types);
    (a.layers.layers_per_pass.clone(), a)
}

#[test]
fn sglang_qwen3_8b_prefill_has_36_layers() {
    // Qwen3-8B: num_hidden_layers = 36.
    assert_eq!(whole_trace_layers("sglang_qwen3-8b_prefill_mi300x.json.gz").0, vec![36]);
}

#[test]
fn sglang_qwen3_8b_decode_graph_has_36_layers() {
    assert_eq!(whole_trace_layers("sglang_qwen3-8b_decode_graph_mi300x.json.gz").0, vec![36]);
}

#[test]
fn sglang_qwen3_30b_a3b_decode_has_48_moe_layers() {
    // Qwen3-30B-A3B: num_hidden_layers = 48, every layer MoE.
    for trace in ["sglang_qwen3-30b-a3b_decode_b300.trace.json.gz", "sglang_qwen3-30b-a3b_decode_mi300x.trace.json.gz"] {
        let (l, a) = whole_trace_layers(trace);
        assert_eq!(l, vec![48], "{trace}");
        let moe = (0..a.trace.gpu.len()).filter(|&r| a.layers.layer_type(r) == "MHA_MOE").count();
        assert!(moe > 0, "{trace}: MoE layers are labelled MHA_MOE");
    }
}

/// Every single-step public trace reads as one pass; prints its layers (`layers --json`; run with
/// `--nocapture` to read them).
#[test]
fn layers_of_public_single_step_traces() {
    for trace in [
        "vllm_gptoss_decode_fullgraph_mi300x.json.gz",
        "vllm_moe_tp8_eager_b200.json.gz",
        "sglang_qwen3-8b_prefill_mi300x.json.gz",
        "sglang_qwen3-30b-a3b_decode_b300.trace.json.gz",
        "torch_compile_triton_mi300x.json.gz",
        "gpu_only_mi210.json.gz",
    ] {
        let (_, a) = whole_trace_layers(trace);
        let view = traceprism::report::layers::layers_json(&a);
        println!("== {trace}\n{view}");
        assert_eq!(traceprism::report::layers::passes(&a).len(), 1, "{trace}");
    }
}

/// Traces that are not single inference steps must still be read without panics.
#[test]
fn other_traces_do_not_panic() {
    for trace in [
        "vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz",
        "resnet_train_actckpt_mi300x.json.gz",
        "recsys_train_rank0_a100.json.gz",
        "deepseek_v3_train_h800.json.gz",
        "llama_train.pt.trace.json.gz",
    ] {
        let (l, _) = whole_trace_layers(trace);
        assert_eq!(l.len(), 1, "{trace}");
    }
}

/// `split_half_layers`: every layer becomes an attention half and a feed-forward half, and the
/// halves still nest in the truth's layers.
#[test]
fn split_half_layers_keeps_halves_inside_truth_layers() {
    for (trace, truth, ffn) in [
        ("llama_dense_eager.pt.trace.json.gz", "llama_dense_eager.truth.json.gz", "FC"),
        ("moe_eager.pt.trace.json.gz", "moe_eager.truth.json.gz", "MOE"),
    ] {
        let options = Options { split_half_layers: true, ..Options::default() };
        let (a, truth) = with_truth_passes(trace, truth, options);
        assert!(
            a.layers.layers_per_pass.iter().all(|&l| l == 2 * truth.num_layers.unwrap()),
            "{trace}: {:?}",
            a.layers.layers_per_pass
        );
        let rows = truth.rows(&a.trace);
        let (mut inside, mut right) = (0, 0);
        for (k, &r) in truth.kernels.iter().zip(&rows) {
            if let Some(l) = k.layer {
                inside += 1;
                let ours = a.layers.layer_of_row[r as usize];
                right += (ours != u32::MAX && ours / 2 == l) as usize;
                let want = if ours % 2 == 0 { "ATTN" } else { ffn };
                assert!(ours == u32::MAX || a.layers.layer_type(r as usize) == want);
            }
        }
        println!("{trace}: split halves nest in truth layers for {right}/{inside} kernels");
        assert!(right as f64 >= 0.95 * inside as f64);
    }
}

/// vLLM TP4 serving trace (Llama-70B class: 80 decoder layers; each step runs 80 attention calls
/// and 161 all-reduces = 2 per layer + the embedding's). Steps are cut after each `ArgMax` kernel
/// (greedy sampling ends every step), independent of our pass detection; step 0 is eager with NCCL,
/// steps 1-9 replay CUDA graphs with the custom all-reduce.
#[test]
fn vllm_tp4_steps_have_80_layers() {
    use traceprism::analysis::layers::LayerPass;
    use traceprism::analysis::phases::Phase;
    let mut a = analyze_path(&fixture("vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz"), Options::default()).unwrap();
    let rows = layers::whole_trace_rows(&a.trace);
    let mut passes: Vec<LayerPass> = Vec::new();
    let mut cur: Vec<u32> = Vec::new();
    for r in rows {
        cur.push(r);
        if a.trace.name(a.trace.gpu.name[r as usize]).contains("ArgMax") {
            let index = passes.len() as u32;
            passes.push(LayerPass { index, phase: Phase::Unknown, rows: std::mem::take(&mut cur) });
        }
    }
    assert_eq!(passes.len(), 10);
    a.base_mut().layers = layers::detect_passes(&a.trace, &a.categories, &passes, &a.options);
    println!("vllm_tp4 layers per step: {:?}", a.layers.layers_per_pass);

    assert_eq!(a.layers.layers_per_pass, vec![80; 10]);
}

/// The `layers` and `layer_summary` tables on the llama trace (passes from truth: 1 prefill + 32 decode).
#[test]
fn layer_tables_on_llama() {
    let (a, truth) =
        with_truth_passes("llama_dense_eager.pt.trace.json.gz", "llama_dense_eager.truth.json.gz", Options::default());
    let layers = traceprism::report::table(&a, "layers").expect("layers table");
    let role = layers.column("role").unwrap();
    let in_layers = layers.rows.iter().filter(|r| r[role].text() == "layer").count();
    assert_eq!(in_layers, 33 * truth.num_layers.unwrap() as usize);
    let kernels = layers.column("kernels").unwrap();
    let total: f64 = layers.rows.iter().map(|r| r[kernels].as_f64().unwrap()).sum();
    assert_eq!(total as usize, truth.kernels.len(), "every kernel of every pass is in one row");
    let summary = traceprism::report::table(&a, "layer_summary").expect("layer_summary table");
    print!("{}", summary.to_csv().lines().take(4).collect::<Vec<_>>().join("\n"));
    assert_eq!(summary.rows.len(), 2 * truth.num_layers.unwrap() as usize, "prefill and decode, one row per layer index");
    let passes = summary.column("passes").unwrap();
    let phase = summary.column("phase").unwrap();
    for r in &summary.rows {
        let want = if r[phase].text() == "prefill" { 1.0 } else { 32.0 };
        assert_eq!(r[passes].as_f64(), Some(want));
    }
}

/// Pass boundaries from a pass detector may be off by a few kernels: the layers must not move.
/// Each truth pass is shifted: it loses its first 5 kernels and gains the next pass's first 5.
#[test]
fn layers_survive_shifted_pass_boundaries() {
    for (trace, truth) in [
        ("llama_dense_eager.pt.trace.json.gz", "llama_dense_eager.truth.json.gz"),
        ("moe_eager.pt.trace.json.gz", "moe_eager.truth.json.gz"),
    ] {
        let (mut a, truth) = with_truth_passes(trace, truth, Options::default());
        let mut passes = a.layers.passes.clone();
        let originals: Vec<Vec<u32>> = passes.iter().map(|p| p.rows.clone()).collect();
        for (i, p) in passes.iter_mut().enumerate() {
            let mut rows: Vec<u32> = originals[i].iter().skip(5).copied().collect();
            if let Some(next) = originals.get(i + 1) {
                rows.extend(next.iter().take(5));
            }
            p.rows = rows;
        }
        a.base_mut().layers = layers::detect_passes(&a.trace, &a.categories, &passes, &a.options);
        let s = score_layers(&a, &truth);
        println!("{trace} (shifted passes): {s}");
        assert!(s.accuracy() >= 0.95, "{s}");
        assert_eq!(s.passes_exact, s.passes, "{s}");
    }
}

/// The whole pipeline (pass detection, then layer detection). Checked once pass detection finds
/// passes; with no passes the whole-trace tests above cover layer detection.
#[test]
fn pipeline_matches_truth_and_known_depths() {
    for (trace, truth) in [
        ("llama_dense_eager.pt.trace.json.gz", "llama_dense_eager.truth.json.gz"),
        ("moe_eager.pt.trace.json.gz", "moe_eager.truth.json.gz"),
    ] {
        let a = analyze_path(&fixture(trace), Options::default()).expect("trace reads");
        let truth = traceprism::pipeline::read_truth(&fixture(truth)).expect("truth reads");
        let s = score_layers(&a, &truth);
        println!("{trace} (pipeline, {} passes): {s}", a.layers.passes.len());
        if !a.layers.whole_trace_pass {
            assert!(s.accuracy() >= 0.95, "{trace}: {s}");
            assert_eq!(s.passes_exact, s.passes, "{trace}: {s}");
        }
    }
    // Known depths: Qwen3-8B 36, Qwen3-30B-A3B 48, GPT-OSS-20B 24 (24 routers, 24 expert GEMM pairs,
    // 12 + 12 sliding/full attention calls in the step), Llama-70B-class vLLM TP4 80 (80 attention
    // calls per step), the B200 MoE 36.
    for (trace, depth) in [
        ("vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz", 80),
        ("sglang_qwen3-8b_prefill_mi300x.json.gz", 36),
        ("sglang_qwen3-8b_decode_graph_mi300x.json.gz", 36),
        ("sglang_qwen3-30b-a3b_decode_b300.trace.json.gz", 48),
        ("sglang_qwen3-30b-a3b_decode_mi300x.trace.json.gz", 48),
        ("vllm_gptoss_decode_fullgraph_mi300x.json.gz", 24),
        ("vllm_moe_tp8_eager_b200.json.gz", 36),
    ] {
        let a = analyze_path(&fixture(trace), Options::default()).expect("trace reads");
        println!("{trace} (pipeline): {} passes, layers/pass {:?}", a.layers.passes.len(), a.layers.layers_per_pass);
        if !a.layers.whole_trace_pass {
            assert!(!a.layers.layers_per_pass.is_empty() && a.layers.layers_per_pass.iter().all(|&l| l == depth), "{trace}");
        }
    }
}

/// Sliding-window layers are a kind of their own (issue 61): vLLM's MoE on B200 alternates
/// TRT-LLM's sliding-window attention kernel with its full causal one (18 + 18 kernels in the raw
/// events), and the layers say so, alternating.
#[test]
fn sliding_window_and_full_attention_layers_are_told_apart() {
    let name = "vllm_moe_tp8_eager_b200.json.gz";
    let doc: serde_json::Value = serde_json::from_slice(&common::plain_fixture(name)).expect("JSON");
    let raw = |needle: &str| {
        doc["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["cat"] == "kernel" && e["name"].as_str().is_some_and(|n| n.contains(needle)))
            .count()
    };
    assert_eq!((raw("PagedKvSlidingOrChunkedCausal"), raw("PagedKvCausal")), (18, 18));
    let a = common::analysis(name);
    let order = common::layer_types_in_order(&a, 0);
    assert_eq!(order.len(), 36);
    assert!(order.chunks(2).all(|c| c == ["SWA_MOE", "MHA_MOE"]), "{order:?}");
}

/// What one layer of a text-encoder stage runs, read from its kernel names: its attention (the
/// CLIP encoders' flash attention, T5's softmax) and its activation (CLIP-L's quick-GELU is a
/// sigmoid, CLIP-G's a GELU, T5's gelu_new a tanh). `None` unless the layer runs exactly one
/// attention kernel.
fn encoder_signature(a: &Analysis, rows: &[u32]) -> Option<(&'static str, &'static str)> {
    let names: Vec<&str> = rows.iter().map(|&r| a.trace.name(a.trace.gpu.name[r as usize])).collect();
    let attention: Vec<&str> = names
        .iter()
        .filter_map(|n| match () {
            _ if *n == "attn_fwd" => Some("flash"),
            _ if n.contains("softmax_warp_forward") => Some("softmax"),
            _ => None,
        })
        .collect();
    let activation =
        ["sigmoid_kernel", "GeluCUDAKernelImpl", "tanh_kernel"].into_iter().find(|k| names.iter().any(|n| n.contains(k)))?;
    (attention.len() == 1).then_some((attention[0], activation))
}

/// Stacks of another kind before the first (issue 69, item 1): a diffusion pipeline's text
/// encoders run before the stack that explains most of their pass. Flux.1 encodes with CLIP-L (12
/// layers) then T5-XXL (24); SD3.5 with CLIP-L (12), CLIP-G (32) and T5-XXL (24), once for the
/// prompt and once for the negative prompt. Every attention kernel of the stage pass (raw kernel
/// names: `attn_fwd` for CLIP, a softmax for T5) is in a layer, each layer holds exactly one, and
/// the layer kinds group the layers exactly as their attention and activation kernels do: the
/// names of all of them say `MHA_FC`, so the kinds come from the stacks' structure. Before, Flux's
/// CLIP lay in `pre`, and SD3.5's stage read as 2 "layers" of 1,634 kernels.
#[test]
fn text_encoder_stacks_before_the_first_are_layers_of_their_own_kinds() {
    for (name, expected) in [
        ("xdit_flux1_4steps_mi300x.json.gz", vec![(12, ("flash", "sigmoid_kernel")), (24, ("softmax", "tanh_kernel"))]),
        (
            "xdit_sd35_large_4steps_mi300x.json.gz",
            [(12, ("flash", "sigmoid_kernel")), (32, ("flash", "GeluCUDAKernelImpl")), (24, ("softmax", "tanh_kernel"))]
                .repeat(2),
        ),
    ] {
        let a = common::analysis(name);
        let k = a.layers.passes.iter().position(|p| p.phase == traceprism::analysis::phases::Phase::Stage).expect("a stage pass");
        let rows = &a.layers.passes[k].rows;
        let mut by_layer: std::collections::BTreeMap<u32, Vec<u32>> = Default::default();
        for &r in rows {
            by_layer.entry(a.layers.layer_of_row[r as usize]).or_default().push(r);
        }
        let outside = by_layer.remove(&traceprism::model::NONE).unwrap_or_default();
        let attention_outside = outside
            .iter()
            .filter(|&&r| {
                let n = a.trace.name(a.trace.gpu.name[r as usize]);
                n == "attn_fwd" || n.contains("softmax_warp_forward")
            })
            .count();
        assert_eq!(attention_outside, 0, "{name}: an attention kernel outside the layers");
        let signatures: Vec<_> = by_layer.values().map(|rows| encoder_signature(&a, rows)).collect();
        let want: Vec<_> = expected.iter().flat_map(|&(n, s)| std::iter::repeat_n(Some(s), n)).collect();
        assert_eq!(signatures, want, "{name}: layers by their attention and activation");
        let types = common::layer_types_in_order(&a, k);
        for i in 0..types.len() {
            for j in i + 1..types.len() {
                assert_eq!(types[i] == types[j], signatures[i] == signatures[j], "{name}, layers {i} and {j}: {types:?}");
            }
        }
        println!("{name}: stage pass {k}, {} layers, {} kernels outside them", types.len(), outside.len());
    }
}

/// A last block of its own kind (issue 69, item 2, at the end of a stack): SD3.5 Large's 38 joint
/// blocks end with one whose context stream stops after its projections (diffusers builds block
/// `num_layers - 1` with `context_pre_only`), so it launches 10 GEMM kernels (`Cijk_…` in the raw
/// names) where each of the others launches 14. With names and name-blind, every denoising step
/// reads 37 blocks of one kind and a last block of another, not a block cut short.
#[test]
fn a_last_block_of_its_own_kind_is_a_kind_of_its_own() {
    let name = "xdit_sd35_large_4steps_mi300x.json.gz";
    let a = common::analysis(name);
    let steps: Vec<usize> = (0..a.layers.passes.len())
        .filter(|&k| a.layers.passes[k].phase == traceprism::analysis::phases::Phase::Denoise)
        .collect();
    assert_eq!(steps.len(), 4, "{name}: denoising steps");
    for &k in &steps {
        let mut gemms = vec![0usize; 38];
        for &r in &a.layers.passes[k].rows {
            let l = a.layers.layer_of_row[r as usize];
            if l != traceprism::model::NONE && a.trace.name(a.trace.gpu.name[r as usize]).starts_with("Cijk_") {
                gemms[l as usize] += 1;
            }
        }
        assert!(gemms[..37].iter().all(|&g| g == 14) && gemms[37] == 10, "pass {k}: GEMMs per block {gemms:?}");
        let types = common::layer_types_in_order(&a, k);
        assert_eq!(types.len(), 38, "pass {k}");
        assert!(types[..37].iter().all(|t| *t == types[0]) && types[37] != types[0], "pass {k}: {types:?}");
    }
    // Name-blind, the steps fold into one pass with the stages; each step's 38 blocks still end
    // with one of a kind of its own.
    let blind = common::analyse_bytes(&crate::name_blind::name_blind(name).0);
    let order = common::layer_types_in_order(&blind, 0);
    let ends: Vec<usize> =
        (1..order.len()).filter(|&i| order[i] != order[i - 1] && i + 1 < order.len() && order[i + 1] != order[i]).collect();
    assert_eq!(ends.len(), 3, "three lone blocks between steps, name-blind: {order:?}");
    assert_ne!(order[order.len() - 1], order[order.len() - 2], "the last step's last block: {order:?}");
}

/// A pass cut short where the profiler started: `hf_qwen15_05b_base_forward_h100` opens with 436
/// kernels of an earlier forward (`fixtures/README.md`), its first layer cut in its MLP. Its
/// norms and MLP kernels run once more than its attention, so no two names ran exactly once per
/// layer, and the pass read as 20 "layers" alternating 5 and 37 kernels. The attention count is
/// the layer count: every flash-attention kernel of the pass (raw kernel names) is in a layer,
/// each layer holds one, and each holds the same number of kernels as the next forward's layers.
#[test]
fn a_pass_cut_short_at_the_profilers_start_reads_whole_layers() {
    let a = common::analysis("hf_qwen15_05b_base_forward_h100.json.gz");
    let flash = |r: u32| a.trace.name(a.trace.gpu.name[r as usize]).contains("flash_fwd_kernel");
    let per_layer = |k: usize| {
        let mut kernels: std::collections::BTreeMap<u32, (usize, usize)> = Default::default();
        let mut outside = 0;
        for &r in &a.layers.passes[k].rows {
            let l = a.layers.layer_of_row[r as usize];
            if l == traceprism::model::NONE {
                outside += flash(r) as usize;
                continue;
            }
            let e = kernels.entry(l).or_default();
            e.0 += 1;
            e.1 += flash(r) as usize;
        }
        (kernels.into_values().collect::<Vec<_>>(), outside)
    };
    assert_eq!(a.layers.passes.len(), 2);
    let (whole, _) = per_layer(1);
    assert_eq!(whole.len(), 24, "the whole forward: {whole:?}");
    let (cut, outside) = per_layer(0);
    assert_eq!(outside, 0, "a flash-attention kernel outside the layers of the cut pass");
    assert_eq!(cut.len(), 10, "{cut:?}");
    assert!(
        cut.iter().all(|&(n, f)| f == 1 && n == whole[1].0),
        "kernels and attention per layer {cut:?}, a whole layer {:?}",
        whole[1]
    );
}

/// `layer_summary` sums a layer index over the passes of one phase, but a diffusion pipeline's
/// stage passes are different networks (Flux: the text encoders, then the VAE), so each stage pass
/// is summarised on its own: no stage row stands for two passes, and the stage rows are each stage
/// pass's layers, in order.
#[test]
fn layer_summary_keeps_each_stage_pass_apart() {
    let a = common::analysis("xdit_flux1_4steps_mi300x.json.gz");
    let stage_layers: Vec<u32> = a
        .layers
        .passes
        .iter()
        .zip(&a.layers.layers_per_pass)
        .filter(|(p, _)| p.phase == traceprism::analysis::phases::Phase::Stage)
        .map(|(_, &l)| l)
        .collect();
    assert_eq!(stage_layers.len(), 2, "text encoders and VAE");
    let t = traceprism::report::table(&a, "layer_summary").expect("layer_summary table");
    let csv = t.to_csv();
    let rows: Vec<Vec<&str>> = csv.lines().skip(1).map(|l| l.split(',').collect()).collect();
    let stage: Vec<&Vec<&str>> = rows.iter().filter(|r| r[0] == "stage").collect();
    assert!(stage.iter().all(|r| r[3] == "1"), "a stage row over two passes: {stage:?}");
    let indices: Vec<u32> = stage.iter().map(|r| r[1].parse().unwrap()).collect();
    let want: Vec<u32> = stage_layers.iter().flat_map(|&n| 0..n).collect();
    assert_eq!(indices, want);
}
