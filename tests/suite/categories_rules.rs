//! Rule order on names that fool a naive matcher (kernel-names.md §7, real names from the
//! traces), user rules, and errors for bad rules.

use std::path::PathBuf;
use traceprism::analysis::categories::Classifier;
use traceprism::model::GpuKind;
use traceprism::rules::categories::RuleSet;
use traceprism::Options;

struct Ctx {
    set: RuleSet,
}

impl Ctx {
    fn new(user: Option<&str>) -> Ctx {
        Ctx { set: RuleSet::load(user).unwrap_or_else(|e| panic!("{e}")) }
    }
    /// Category of a kernel with optional op, op dims and enclosing ranges.
    fn cat(&self, name: &str, op: Option<&str>, dims: Option<&str>, enclosing: &[&str]) -> String {
        let c = Classifier::new(&self.set).unwrap();
        match c.decide_text(name, GpuKind::Kernel, op, dims, None, enclosing) {
            Some(r) => self.set.categories[self.set.rules[r].category as usize].name.clone(),
            None => "Other".into(),
        }
    }
    fn name(&self, name: &str) -> String {
        self.cat(name, None, None, &[])
    }
}

#[test]
fn gemm_in_the_name_of_non_gemm_work() {
    let c = Ctx::new(None);
    assert_eq!(c.name("void at::cuda::detail::prepare_grouped_gemm_data<cutlass::bfloat16_t, cutlass::bfloat16_t, cutlass::bfloat16_t, float>(int)"), "MoE-Routing");
    assert_eq!(c.name("void dpsk::grouped_gemm::cuda::utils::transpose<512, 128, 4, 4>(unsigned char const*, unsigned char*, int, int, int, int)"), "Memory-Reshape");
    assert_eq!(
        c.name("igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt128x128x32_wt32x32x8_ws1x1_wr2x2_ta1x8x2x1_1x4x1x64_tb1x8x2x1_1x4x1x64_gkgs"),
        "Conv"
    );
    assert_eq!(c.name("_ZN2ck16tensor_operation6device12_GLOBAL__N_149kernel_grouped_conv_fwd_multiple_abd_xdl_cshuffleINS_34GridwiseGemmMultipleD_xdl_cshuffleItttftNS_5TupleIJEEE"), "Conv");
    assert_eq!(c.name("void fbgemm_gpu::permute_2D_lengths_kernel<int>(int, int, int const*, int const*, int*)"), "Indexing");
}

#[test]
fn gemm_names_that_are_not_linear_layers_follow_the_op() {
    let c = Ctx::new(None);
    let cijk = "Cijk_Ailk_Bljk_BBS_BH_MT32x32x64_MI16x16x16x1_SN_1LDSB0_APM1_ABV0_ACED0";
    assert_eq!(c.cat(cijk, Some("aten::miopen_convolution"), None, &[]), "Conv");
    assert_eq!(c.cat(cijk, Some("aten::mm"), None, &[]), "GEMM-hipBLASLt");
    assert_eq!(c.name(cijk), "GEMM-hipBLASLt");
}

#[test]
fn triton_templates_are_gemms_whatever_epilogue_they_fused() {
    // torch.compile max-autotune names a Triton GEMM template triton_tem_fused_<ops>_<n>, its ops
    // sorted by name: a fused RMSNorm or SiLU-gate epilogue puts mean/pow/rsqrt or mul/silu there.
    let c = Ctx::new(None);
    for name in [
        "triton_tem_fused_addmm_mean_mul_pow_rsqrt_0",
        "triton_tem_fused_mm_mul_silu_3",
        "triton_tem_fused__to_copy_bmm_gelu_12",
        "triton_tem_fused_mm_7",
    ] {
        let cat = c.name(name);
        let family = &c.set.categories.iter().find(|d| d.name == cat).unwrap().family;
        assert_eq!(family, "GEMM", "{name}: {cat}");
    }
    assert_eq!(c.name("triton_tem_fused_convolution_relu_2"), "Conv");
    // The same epilogues in a pointwise or reduction kernel stay what they are.
    assert_eq!(c.name("triton_red_fused_add_mean_mul_pow_rsqrt_0"), "Norm-RMS");
    assert_eq!(c.name("triton_poi_fused__unsafe_view_mul_silu_2"), "Activation-Gated");
}

#[test]
fn gemms_without_gemm_in_the_name_and_epilogues() {
    let c = Ctx::new(None);
    assert_eq!(c.name("nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT"), "GEMM-cuBLAS");
    assert_eq!(c.name("Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x32x64_MI16x16x1_SN_LDSB1"), "GEMM-hipBLASLt");
    assert_eq!(c.name("bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b_rM_TN_transOut_schedP2x1x2x3_biasM_bN_tma_tmaOpt_clmp_swiGlu_dynBatch_sm100f"), "MoE-GEMM");
    assert_eq!(c.name("_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu"), "MoE-GEMM");
    assert_eq!(c.name("void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8::Params)"), "GEMM-CUTLASS");
    assert_eq!(c.name("void cutlass::device_kernel<flash::FlashAttnFwdCombine<cute::tuple<cute::C<8>, cute::C<128> >, 5, 256, 1, false, true, cutlass::bfloat16_t, float, cutlass::arch::Sm90> >"), "Attention-Forward");
    assert_eq!(
        c.name("void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, __nv_bfloat16, false>"),
        "GEMM-SplitK"
    );
    // a generic ATen name launched by aten::mm is GEMM work
    assert_eq!(c.cat("some_new_vendor_kernel_xyz", Some("aten::mm"), None, &[]), "GEMM-Other");
}

#[test]
fn embedding_all_reduce_and_sum_traps() {
    let c = Ctx::new(None);
    assert_eq!(c.name("void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*)"), "RoPE");
    assert_eq!(
        c.name("triton_poi_fused_add_all_reduce_bitwise_and_bitwise_or_embedding_ge_lt_masked_fill_mul_sub_0"),
        "Triton-Fused"
    );
    assert_eq!(
        c.name("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"),
        "Communication-AllReduce"
    );
    assert_eq!(c.name("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"), "Communication-P2P");
    for p2p in [
        "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)",
        "ncclDevKernel_Send(x)",
        "ncclDevKernel_Recv(x)",
        "recv_kernel",
    ] {
        assert_eq!(c.name(p2p), "Communication-P2P", "{p2p}");
    }
    // The op says when SendRecv builds an all-to-all (the all-to-all rule stays first).
    assert_eq!(
        c.cat(
            "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)",
            Some("record_param_comms"),
            None,
            &["c10d::alltoall_base_"]
        ),
        "Communication-AllToAll"
    );
    assert_eq!(c.name("void at_cuda_detail::cub::detail::radix_sort::DeviceRadixSortExclusiveSumKernel<int>(int*)"), "Sort");
    let generic = "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)";
    assert_eq!(c.cat(generic, Some("record_param_comms"), None, &["c10d::allreduce_"]), "Communication-AllReduce");
    assert_eq!(c.cat(generic, Some("record_param_comms"), None, &["c10d::_allgather_base_"]), "Communication-AllGather");
    assert_eq!(c.name(generic), "Communication-Other");
}

#[test]
fn mean_and_attention_reductions() {
    let c = Ctx::new(None);
    // alone, a MeanOps reduction is a reduce; the sequence pass makes eager RMSNorm chains Norm-RMS
    assert_eq!(c.name("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4, 4> >"), "Reduce");
    assert_eq!(c.name("triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_2"), "Norm-RMS");
    assert_eq!(c.name("void cudnn::fusion::lean_reduction_kernel<false, false, false>(void*, float*)"), "Attention-Forward");
    assert_eq!(
        c.name("void paged_attention_ll4mi_reduce_kernel<__hip_bfloat16, __hip_bfloat16, 128, 128, 256, 3, false>"),
        "PagedAttention-Reduce"
    );
    assert_eq!(c.name("reduce_segments"), "PagedAttention-Reduce");
    assert_eq!(c.name("kernel_unified_attention_2d"), "PagedAttention-Compute");
    assert_eq!(c.name("kernel_unified_attention_3d"), "PagedAttention-Compute");
}

#[test]
fn softmax_and_topk_follow_what_they_rank() {
    let c = Ctx::new(None);
    assert_eq!(c.name("aiter::topksoftmax_4x128x8_bf16"), "MoE-Routing");
    let softmax = "void (anonymous namespace)::softmax_warp_forward<float, float, float, 4, false, false>(float*)";
    assert_eq!(c.cat(softmax, Some("aten::_softmax"), Some("[[1536, 16], [], []]"), &[]), "MoE-Routing");
    assert_eq!(c.cat(softmax, Some("aten::_softmax"), Some("[[4, 16, 512, 512], [], []]"), &[]), "Attention-Forward");
    assert_eq!(c.cat(softmax, Some("aten::_softmax"), Some("[[4, 151936], [], []]"), &[]), "Sampling");
    let topk = "void at::native::sbtopk::gatherTopK<float, unsigned int, 2, false>(at::cuda::detail::TensorInfo<float const, unsigned int>)";
    assert_eq!(c.cat(topk, Some("aten::topk"), Some("[[1536, 16], [], [], [], []]"), &[]), "MoE-Routing");
    assert_eq!(c.cat(topk, Some("aten::topk"), Some("[[4, 128256], [], [], [], []]"), &[]), "Sampling");
}

#[test]
fn quant_norm_and_copy_word_traps() {
    let c = Ctx::new(None);
    // ATen's binary op with broadcasting (the xDiT Flux trace's T5 encoder) is no collective.
    let mul = "void at::native::elementwise_kernel_manual_unroll<128, 4, at::native::(anonymous namespace)::type_specialized_broadcast_kernel_launcher<1>::apply<at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > >";
    assert_eq!(c.cat(mul, Some("aten::mul"), None, &[]), "Elementwise");
    assert_eq!(c.name("broadcast_kernel"), "Communication-Other");
    let aiter = "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi64ELi8ELb0ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_S4_diiiiiiib";
    assert_eq!(c.cat(aiter, Some("aiter::rmsnorm"), None, &[]), "Norm-RMS");
    assert_eq!(c.name(aiter), "Norm-RMS");
    assert_eq!(
        c.name("_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi256ELi16ELb1ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_S4_diiiiiiib"),
        "Fused-AddNorm"
    );
    assert_eq!(c.name("_ZN2at6native54_GLOBAL__N__d8ceb000_21_DistributionNormal_cu_17e44f7d43distribution_elementwise_grid_stride_kernelIfLi4E"), "Elementwise");
    assert_eq!(c.name("_ZN7cutlass13device_kernelIN2at4cuda6detail25enable_3x_kernel_for_sm9xINS_4gemm6kernel13GemmUniversalINS5_17GroupProblemShapeIN4cute5tupleIJiiiEEEEENS9_9Copy_AtomIJS27_NS_6half_tEEEE"), "MoE-GEMM");
    assert_eq!(c.name("_combined_routing_memset"), "MoE-Routing");
    assert_eq!(c.name("void cub::DeviceScanKernel<cub::AgentScanPolicy<128, 15, int, (cub::BlockLoadAlgorithm)3, (cub::CacheLoadModifier)0>"), "Reduce");
    assert_eq!(c.name("void dpsk::ep::internode::cached_notify<false>(int, int)"), "Communication-AllToAll");
    assert_eq!(
        c.name("kernel_cutlass_kernel_flashinfernormkernelsfused_add_rmsnormFusedAddRMSNormKernel_object_at__tensorptrbf16"),
        "Fused-AddNorm"
    );
    assert_eq!(
        c.name("void (anonymous namespace)::fused_qknorm_warp<128l, true, __nv_bfloat16>((anonymous namespace)::QKNormParams)"),
        "Norm-RMS"
    );
    assert_eq!(c.name("alloc_decode_kernel"), "Indexing");
}

#[test]
fn memcpy_and_memset_events_by_kind() {
    let c = Ctx::new(None);
    let cl = Classifier::new(&c.set).unwrap();
    let cat = |name: &str, kind| {
        cl.decide_text(name, kind, Some("aten::copy_"), None, None, &[])
            .map(|r| c.set.categories[c.set.rules[r].category as usize].name.clone())
    };
    assert_eq!(cat("Memcpy DtoD (Device -> Device)", GpuKind::Memcpy).as_deref(), Some("Memory-Copy"));
    assert_eq!(cat("Memset (Device)", GpuKind::Memset).as_deref(), Some("Memory-Set"));
}

#[test]
fn user_rules_go_first_and_may_add_categories() {
    let user = r#"
[[category]]
name = "My-GEMM"
family = "GEMM"

[[rule]]
pattern = '^nvjet_\w*splitK'
category = "My-GEMM"

[[rule]]
pattern = '^Cijk_'
op = 'aten::mm'
category = "GEMM-CK"
"#;
    let c = Ctx::new(Some(user));
    assert_eq!(c.name("nvjet_sm90_tst_64x8_64x16_2x1_v_bz_splitK_TNT"), "My-GEMM");
    assert_eq!(c.name("nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT"), "GEMM-cuBLAS");
    assert_eq!(c.cat("Cijk_Alik_Bljk_BBS", Some("aten::mm"), None, &[]), "GEMM-CK");
    assert_eq!(c.cat("Cijk_Alik_Bljk_BBS", None, None, &[]), "GEMM-hipBLASLt");

    // through the whole pipeline, on a real trace: every split-K nvjet row moves, the rule is named
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/llama_dense_eager.pt.trace.json.gz");
    let options = Options { category_rules: Some(user.to_string()), ..Options::default() };
    let a = traceprism::analyze_path(&path, options).unwrap();
    let t = &a.trace;
    let split: Vec<usize> = t.kernel_rows().filter(|&i| t.name(t.gpu.name[i]).contains("_splitK_")).collect();
    assert!(!split.is_empty());
    for &i in &split {
        assert_eq!(a.categories.name(i), "My-GEMM");
        assert!(a.categories.rule(i).starts_with("user rule 0"), "{}", a.categories.rule(i));
        assert_eq!(a.categories.family(i), "GEMM");
    }
}

fn load_err(user: &str) -> String {
    match RuleSet::load(Some(user)) {
        Ok(_) => panic!("rules should be rejected:\n{user}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_rules_give_errors_that_name_the_rule() {
    let e = load_err("[[rule]]\npattern = 'a'\ncategory = 'Reduce'\n[[rule]]\npatern = 'nvjet_'\ncategory = 'GEMM-cuBLAS'\n");
    assert!(e.contains("user rule 1") && e.contains("patern"), "{e}");

    let e = load_err("[[rule]]\npattern = 'nvjet_(('\ncategory = 'GEMM-cuBLAS'\n");
    assert!(e.contains("user rule 0") && e.contains("nvjet_((") && e.contains("regex"), "{e}");

    let e = load_err("[[rule]]\npattern = 'x'\ncategory = 'GEMM-Fast'\n");
    assert!(e.contains("user rule 0") && e.contains("unknown category 'GEMM-Fast'"), "{e}");

    let e = load_err("[[rule]]\npattern = 'x'\nkind = 'memcpy'\ncategory = 'Memory-Copy'\n");
    assert!(e.contains("unknown kind 'memcpy'"), "{e}");

    let e = load_err("[[rule]]\ncategory = 'Other'\n");
    assert!(e.contains("user rule 0") && e.contains("needs a pattern"), "{e}");

    let e = load_err("[[rule]]\npattern = 'x'\n");
    assert!(e.contains("missing 'category'"), "{e}");

    let e = load_err("[[rules]]\npattern = 'x'\ncategory = 'Other'\n");
    assert!(e.contains("unknown top-level key 'rules'"), "{e}");

    let e = load_err("[[rule]\npattern = 'x'\n");
    assert!(e.contains("not valid TOML"), "{e}");

    let e = load_err("[[category]]\nname = 'X'\nfamily = 'Fast'\n");
    assert!(e.contains("unknown family 'Fast'"), "{e}");

    let e = load_err("[[rule]]\npattern = 'x'\nop = '['\ncategory = 'Other'\n");
    assert!(e.contains("user rule 0") && e.contains("'op'"), "{e}");

    // the same error comes out of the whole pipeline
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/torch_compile_triton_mi300x.json.gz");
    let options = Options { category_rules: Some("[[rule]]\npatern = 'x'\ncategory = 'Other'\n".into()), ..Options::default() };
    let err = traceprism::analyze_path(&path, options).err().expect("bad rules must fail the analysis");
    assert!(err.to_string().contains("user rule 0"), "{err}");
}

#[test]
fn builtin_table_loads_and_every_family_is_known() {
    let set = RuleSet::load(None).unwrap();
    assert!(set.rules.len() > 50);
    for name in [
        "GEMM-cuBLAS",
        "GEMM-CUTLASS",
        "GEMM-hipBLASLt",
        "GEMM-CK",
        "GEMM-Triton",
        "GEMM-FP8",
        "GEMM-FP4",
        "GEMM-SplitK",
        "Attention-Forward",
        "Attention-Backward",
        "Attention-Decode",
        "PagedAttention-Compute",
        "PagedAttention-Reduce",
        "MLA",
        "KVCache-Update",
        "KVCache-Reshape",
        "RoPE",
        "Norm-RMS",
        "Norm-LayerNorm",
        "Fused-AddNorm",
        "Activation-SiLU",
        "Activation-GELU",
        "Activation-Gated",
        "MoE-Routing",
        "MoE-GEMM",
        "MoE-Finalize",
        "Quant",
        "Communication-AllReduce",
        "Communication-AllGather",
        "Communication-ReduceScatter",
        "Communication-AllToAll",
        "Communication-P2P",
        "Communication-Other",
        "Memory-Copy",
        "Memory-Set",
        "Memory-Reshape",
        "Elementwise",
        "Reduce",
        "Indexing",
        "Sampling",
        "Triton-Fused",
        "Other",
    ] {
        assert!(set.category_id(name).is_some(), "missing category {name}");
    }
}

/// Names of library families that do not occur in the fixtures (spelled as those libraries name
/// their kernels): the table is meant to generalise by family, not to list fixture names.
#[test]
fn families_beyond_the_fixtures() {
    let c = Ctx::new(None);
    let cases = [
        ("void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>, false, true>", "Attention-Forward"),
        ("void flash::flash_fwd_splitkv_combine_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4>, 4, 1, true>", "Attention-Forward"),
        ("void flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128>>", "Attention-Backward"),
        ("fmha_cutlassF_bf16_aligned_64x64_rf_sm80", "Attention-Forward"),
        ("void flashinfer::BatchDecodeWithPagedKVCacheKernel<(flashinfer::PosEncodingMode)0, 2u>", "Attention-Decode"),
        ("void flashinfer::BatchPrefillWithPagedKVCacheKernel<flashinfer::KernelTraits<128>>", "Attention-Forward"),
        ("void vllm::paged_attention_v2_kernel<__nv_bfloat16, __nv_bfloat16, 128, 16, 128>", "PagedAttention-Compute"),
        ("void vllm::paged_attention_v2_reduce_kernel<__nv_bfloat16, 128, 128, 512>", "PagedAttention-Reduce"),
        ("_fwd_grouped_kernel_stage1", "Attention-Decode"),
        ("_fwd_kernel", "Attention-Forward"),
        ("void aiter::mla_decode_stage1_asm_fwd", "MLA"),
        ("void vllm::concat_and_cache_mla_kernel<__nv_bfloat16, __nv_bfloat16>", "KVCache-Update"),
        ("fused_moe_kernel", "MoE-GEMM"),
        ("void vllm::moe::topkGatingSoftmax<8, 128, 4, 16>", "MoE-Routing"),
        ("void vllm::moe::moe_align_block_size_kernel<int>", "MoE-Routing"),
        ("void tensorrt_llm::kernels::finalizeMoeRoutingKernel<__nv_bfloat16, float>", "MoE-Finalize"),
        ("void transformer_engine::normalization::rmsnorm_fwd_tuned_kernel<Kernel_traits<bf16>>", "Norm-RMS"),
        ("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>", "Norm-LayerNorm"),
        ("void vllm::act_and_mul_kernel<c10::BFloat16, &vllm::gelu_tanh_kernel<c10::BFloat16>>", "Activation-Gated"),
        ("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)>", "Activation-GELU"),
        ("void vllm::dynamic_per_token_scaled_fp8_quant_kernel<c10::BFloat16, c10::Float8_e4m3fn>", "Quant"),
        ("void cutlass::device_kernel<vllm::cutlass_3x_gemm_sm90<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int>, cutlass::float_e4m3_t>>>", "GEMM-FP8"),
        ("sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64", "Conv"),
        ("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "Communication-ReduceScatter"),
        ("void deep_ep::intranode::dispatch<8, 768>(int4*, float*)", "Communication-AllToAll"),
        ("void vllm::cross_device_reduce_2stage<__nv_bfloat16, 8>", "Communication-AllReduce"),
        ("loop_add_fusion.3", "XLA-Fusion"),
        ("input_reduce_fusion", "Reduce"),
        ("input_transpose_fusion", "Memory-Reshape"),
        ("fusion.12", "XLA-Fusion"),
        ("wrapped_convert.kd", "Memory-Reshape"),
        ("wrapped_multiply", "Elementwise"),
        ("void ck_tile::kentry<ck_tile::gfx950_t, 1, ck_tile::FmhaBwdDQDKDVKernel<ck_tile::BlockFmhaBwdDQDKDVPipeline<ck_tile::BlockDropoutBwd<true, true, false>, ck_tile::philox>>>", "Attention-Backward"),
        ("void at::native::(anonymous namespace)::fused_dropout_kernel_vec<float, float, unsigned int, 1, 4, bool>", "Elementwise"),
        ("triton_tem_fused_mm_0", "GEMM-Triton"),
        ("triton_per_fused_native_layer_norm_0", "Norm-LayerNorm"),
        ("__amd_rocclr_copyBuffer", "Memory-Copy"),
        ("__amd_rocclr_fillBufferAligned", "Memory-Set"),
        ("wvSplitK_hf_sml_", "GEMM-SplitK"),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|(n, want)| {
            let got = c.name(n);
            (got != *want).then(|| format!("{n}: expected {want}, got {got}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn tensorflow_kernels() {
    let c = Ctx::new(None);
    let eigen = |expr: &str| {
        format!("void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<Eigen::half, 1, 1, long>, 16, Eigen::MakePointer>, {expr}>, Eigen::GpuDevice>, long>(Eigen::TensorEvaluator<x>, long)")
    };
    assert_eq!(c.name(&eigen("Eigen::TensorConversionOp<Eigen::half, Eigen::TensorMap<Eigen::Tensor<float const, 1, 1, long>, 16, Eigen::MakePointer> const> const")), "Elementwise");
    assert_eq!(
        c.name(&eigen(
            "Eigen::TensorCwiseBinaryOp<Eigen::internal::scalar_product_op<Eigen::half, Eigen::half>, x const, y const> const"
        )),
        "Elementwise"
    );
    assert_eq!(c.name(&eigen("Eigen::TensorBroadcastingOp<Eigen::DSizes<long, 2> const, x const> const")), "Memory-Reshape");
    assert_eq!(c.name(&eigen("Eigen::TensorReductionOp<Eigen::internal::SumReducer<float>, x const> const")), "Reduce");
    assert_eq!(c.name("void Eigen::internal::FullReductionKernel<256, 128, Eigen::TensorEvaluator<x>, Eigen::internal::SumReducer<float>, long>(x)"), "Reduce");
    assert_eq!(c.name("void tensorflow::functor::ColumnReduceKernel<float const*, float*, cub::Sum>(float const*, float*, int, int, cub::Sum, float)"), "Reduce");
    assert_eq!(c.name("void tensorflow::functor::FillPhiloxRandomKernelLaunch<tensorflow::random::UniformDistribution<tensorflow::random::PhiloxRandom, Eigen::half> >(unsigned long, unsigned long, tensorflow::random::PhiloxRandom, Eigen::half*, long, tensorflow::random::UniformDistribution<tensorflow::random::PhiloxRandom, Eigen::half>)"), "Elementwise");
    assert_eq!(c.name("void tensorflow::functor::SwapDimension1And2InTensor3UsingTiles<unsigned int, 256, 32, 32, false>(unsigned int const*, tensorflow::functor::Dimension<3>, unsigned int*)"), "Memory-Reshape");
    assert_eq!(
        c.name("void tensorflow::BiasNHWCKernel<Eigen::half>(int, Eigen::half const*, Eigen::half const*, Eigen::half*, int)"),
        "Elementwise"
    );
    assert_eq!(c.name("void tensorflow::GatherOpKernel<Eigen::half, int, true>(Eigen::half const*, int const*, Eigen::half*, long, long, long, long)"), "Indexing");
    // cuBLAS / cuDNN as TensorFlow runs them.
    assert!(c.name("volta_h884gemm_64x64_ldg8_nn").starts_with("GEMM"), "{}", c.name("volta_h884gemm_64x64_ldg8_nn"));
    assert!(c.name("turing_fp16_s1688gemm_fp16_128x128_ldg8_f2f_nn").starts_with("GEMM"));
    assert_eq!(c.name("void cudnn::detail::implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, false, true>(int, int, int, float const*, int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, int, float const*, float const*, bool, int, int)"), "Conv");
}

/// The token mixers of hybrid models, NVFP4 activation quantization and CuTe DSL kernels (issue
/// 52): real names from vLLM's and flash-linear-attention's sources, none of them `Other`.
#[test]
fn hybrid_mixers_fp4_quantization_and_cute_dsl_kernels_are_named() {
    let c = Ctx::new(None);
    for name in [
        "chunk_gated_delta_rule_fwd_kernel_h_blockdim64",
        "fused_recurrent_gated_delta_rule_fwd_kernel",
        "chunk_scaled_dot_kkt_fwd_kernel",
        "recompute_w_u_fwd_kernel",
        "solve_tril_16x16_kernel",
        "merge_16x16_to_64x64_inverse_kernel",
        "fused_gdn_gating_kernel",
        "_linear_attn_decode_kernel",
    ] {
        assert_eq!(c.name(name), "Attention-Linear", "{name}");
    }
    for name in [
        "_causal_conv1d_update_kernel",
        "void causal_conv1d_fwd_kernel<Causal_conv1d_fwd_kernel_traits<128, 4, true, c10::BFloat16, c10::BFloat16> >(ConvParamsBase)",
        "_chunk_scan_fwd_kernel",
        "_chunk_state_fwd_kernel",
        "_state_passing_fwd_kernel",
        "_chunk_cumsum_fwd_kernel",
        "_bmm_chunk_fwd_kernel",
        "_selective_scan_update_kernel",
    ] {
        assert_eq!(c.name(name), "SSM-Scan", "{name}");
    }
    assert_eq!(
        c.name("void vllm::cvt_fp16_to_fp4<__nv_bfloat16, false>(int, int, __nv_bfloat16 const*, float const*, unsigned int*, unsigned int*)"),
        "Quant"
    );
    // CuTe DSL (cute.compile) names its kernels kernel_cutlass_<module and class>_object_at_...
    assert_eq!(
        c.name("kernel_cutlass_kernel_flash_attncuteflash_fwd_sm100FlashAttentionForwardSm100_object_at__tensorptrbf16gmemalign16odiv8_1"),
        "Attention-Forward"
    );
    assert_ne!(c.name("kernel_cutlass_kernel_quackrmsnormRMSNorm_object_at__tensorptrbf16gmemalign16odiv8_1"), "Other");
    assert_ne!(c.name("kernel_cutlass_kernel_quackgemm_sm90GemmSm90_object_at__tensorptrbf16gmemalign16odiv8_1"), "Other");
}
