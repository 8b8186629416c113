//! Kernel categories on the real fixture traces: no trace leaves more than 1% of kernel time in
//! `Other`, and a table of real kernel names (both vendors) gets the category a reader expects.
//! Expected categories were chosen by reading the names (and, where the name is generic, the op
//! that launched them), not by running the classifier.

use crate::categories_common;
use categories_common::*;

#[test]
fn other_is_at_most_one_percent_of_kernel_time_on_every_fixture() {
    let mut failures = Vec::new();
    let mut report = String::new();
    for f in fixture_names() {
        let a = analysis(&f);
        let t = &a.trace;
        let total: i64 = t.kernel_rows().map(|i| t.gpu.dur[i]).sum();
        let mut other: Vec<(String, i64)> = Vec::new();
        for i in t.kernel_rows() {
            if a.categories.name(i) == "Other" {
                let n = t.name(t.gpu.name[i]).to_string();
                match other.iter_mut().find(|(k, _)| *k == n) {
                    Some(e) => e.1 += t.gpu.dur[i],
                    None => other.push((n, t.gpu.dur[i])),
                }
            }
        }
        let other_ns: i64 = other.iter().map(|(_, d)| d).sum();
        let share = if total > 0 { other_ns as f64 / total as f64 } else { 0.0 };
        report.push_str(&format!("{f}: Other = {:.3}% of kernel time\n", share * 100.0));
        if share > 0.01 {
            other.sort_by_key(|x| std::cmp::Reverse(x.1));
            let top: Vec<String> =
                other.iter().take(10).map(|(n, d)| format!("    {:.1}us {}", *d as f64 / 1e3, &n[..n.len().min(150)])).collect();
            failures.push(format!("{f}: Other = {:.2}%; top Other kernels:\n{}", share * 100.0, top.join("\n")));
        }
    }
    println!("{report}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// (fixture key, text the kernel name starts with — or contains when it begins with '~'; a leading
/// '@' restricts the check to rows whose launching CPU op is in the trace — expected category)
const EXPECTED: &[(&str, &str, &str)] = &[
    // llama_dense_eager: H100, HF eager, cuBLAS nvjet + cuDNN SDPA
    // hta_cnn_train: V100, a CNN's training step with cuDNN's own kernels (scudnn, dgrad/wgrad engines)
    ("hta_cnn_train", "cudnn_infer_volta_scudnn_128x64_relu_medium_nn_v1", "Conv"),
    ("hta_cnn_train", "cudnn_train_volta_scudnn_128x128_stridedB_splitK_medium_nn_v1", "Conv"),
    ("hta_cnn_train", "void cudnn::detail::dgrad_engine", "Conv"),
    ("hta_cnn_train", "void wgrad_alg0_engine", "Conv"),
    ("hta_cnn_train", "void cudnn::ops::nchwToNhwcKernel", "Memory-Reshape"),
    // hf_timesformer: H100, TimeSformer (eager attention: softmax over [B, H, Sq, Sk] scores, the
    // JSON re-indented so that `Input Dims` span lines)
    ("hf_timesformer", "@void at::native::(anonymous namespace)::cunn_SoftMaxForward", "Attention-Forward"),
    ("hf_timesformer", "@void (anonymous namespace)::softmax_warp_forward", "Attention-Forward"),
    // xdit_sd35: MI300X, xDiT Stable Diffusion 3.5 Large (compiled MMDiT, MIOpen VAE convolutions)
    ("xdit_sd35", "attn_fwd", "Attention-Forward"),
    ("xdit_sd35", "triton_poi_fused_addmm_gelu_view_15", "Activation-GELU"),
    ("xdit_sd35", "igemm_fwd_gtcx3_nhwc_bf16", "Conv"),
    ("xdit_sd35", "batched_transpose_32x32_half", "Memory-Reshape"),
    // jax_te_fused_attn: JAX + Transformer Engine on MI355X (XLA fusions, ck_tile attention)
    ("jax_te_fused_attn", "~FmhaBwdDQDKDVKernel", "Attention-Backward"),
    ("jax_te_fused_attn", "~FmhaFwdKernel", "Attention-Forward"),
    ("jax_te_fused_attn", "gemm_fusion_dot", "GEMM-Triton"),
    ("jax_te_fused_attn", "loop_reduce_fusion", "Reduce"),
    ("jax_te_fused_attn", "wrapped_convert", "Memory-Reshape"),
    // xdit_flux: MI300X, xDiT Flux.1 (SageAttention, compiled transformer, eager T5/CLIP and VAE)
    ("xdit_flux", "sage_fwd", "Attention-Forward"),
    ("xdit_flux", "sage_quant_kernel", "Quant"),
    ("xdit_flux", "void (anonymous namespace)::groupnorm_kernel_dispatch_up", "Norm-LayerNorm"),
    ("xdit_flux", "triton_poi_fused__unsafe_view_addmm_cat_clone_gelu_transpose_view_34", "Activation-GELU"),
    ("xdit_flux", "@batched_transpose_32x32_half", "Memory-Reshape"),
    ("llama_dense", "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT", "GEMM-cuBLAS"),
    ("llama_dense", "nvjet_sm90_tst_176x128_64x5_1x2_h_bz_TNN", "GEMM-cuBLAS"),
    ("llama_dense", "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT", "GEMM-cuBLAS"),
    ("llama_dense", "nvjet_sm90_tst_192x192_64x4_2x1_v_bz_coopB_TNN", "GEMM-cuBLAS"),
    ("llama_dense", "nvjet_sm90_tst_64x8_64x16_2x1_v_bz_splitK_TNT", "GEMM-SplitK"),
    ("llama_dense", "void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16", "GEMM-SplitK"),
    ("llama_dense", "cudnn_generated_fort_native_sdpa_sm80_flash_fprop_wmma_f16_knob_35_16x128x128", "Attention-Forward"),
    ("llama_dense", "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128", "Attention-Forward"),
    ("llama_dense", "void cudnn::fusion::lean_reduction_kernel<false, false, false>", "Attention-Forward"),
    ("llama_dense", "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_tn_align1>", "GEMM-CUTLASS"),
    ("llama_dense", "void at::native::(anonymous namespace)::indexSelectSmallIndex<", "Indexing"),
    ("llama_dense", "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, at::native::ArgMaxOps<float>", "Sampling"),
    ("llama_dense", "void at::native::vectorized_elementwise_kernel<8, at::native::(anonymous namespace)::silu_kernel", "Activation-SiLU"),
    ("llama_dense", "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::pow_tensor_scalar_kernel_impl", "Norm-RMS"),
    ("llama_dense", "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float", "Norm-RMS"),
    ("llama_dense", "void at::native::vectorized_elementwise_kernel<4, at::native::rsqrt_kernel_cuda", "Norm-RMS"),
    ("llama_dense", "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctorOnSelf_add<float>", "Norm-RMS"),
    ("llama_dense", "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::neg_kernel_cuda", "Elementwise"),
    ("llama_dense", "void at::native::(anonymous namespace)::CatArrayBatchedCopy_vectorized<", "Memory-Reshape"),
    ("llama_dense", "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>", "Elementwise"),
    ("llama_dense", "void at::native::vectorized_elementwise_kernel<4, at::native::cos_kernel_cuda", "Elementwise"),
    ("llama_dense", "void (anonymous namespace)::elementwise_kernel_with_index<int, at::native::arange_cuda_out", "Elementwise"),
    ("llama_dense", "Memset (Device)", "Memory-Set"),
    // moe_eager: H100, HF eager Qwen3-MoE
    ("moe_eager", "_ZN7cutlass13device_kernelIN2at4cuda6detail25enable_3x_kernel_for_sm9xINS_4gemm6kernel13GemmUniversalINS5_17GroupProblemShape", "MoE-GEMM"),
    ("moe_eager", "void at::cuda::detail::prepare_grouped_gemm_data<", "MoE-Routing"),
    ("moe_eager", "void at::native::sbtopk::gatherTopK<float, unsigned int, 2, false>", "MoE-Routing"),
    ("moe_eager", "void (anonymous namespace)::softmax_warp_forward<float, float, float, 4, false, false>", "MoE-Routing"),
    ("moe_eager", "void at::native::bitonicSortKVInPlace<2, -1, 16, 16, float, long, at::native::GTOp<float, true>", "MoE-Routing"),
    ("moe_eager", "void at::native::bitonicSortKVInPlace<-2, -1, 16, 16, long, long", "Sort"),
    ("moe_eager", "void at_cuda_detail::cub::detail::radix_sort::DeviceRadixSortExclusiveSumKernel", "Sort"),
    ("moe_eager", "void at_cuda_detail::cub::detail::radix_sort::DeviceRadixSortOnesweepKernel", "Sort"),
    ("moe_eager", "void at_cuda_detail::cub::detail::scan::DeviceScanKernel", "Reduce"),
    ("moe_eager", "void at::cuda::kernelHistogram1D<", "Reduce"),
    ("moe_eager", "void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<at::native::index_put_kernel_impl", "Indexing"),
    ("moe_eager", "nvjet_sm90_tst_8x64_64x16_2x4_h_bz_TNN", "GEMM-cuBLAS"),
    ("moe_eager", "cudnn_generated_fort_native_sdpa_sm80_flash_fprop_wmma_f16_knob_35_16x128x64", "Attention-Forward"),
    ("moe_eager", "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::(anonymous namespace)::masked_fill_kernel", "Elementwise"),
    ("moe_eager", "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>", "Memory-Set"),
    ("moe_eager", "Memcpy DtoD (Device -> Device)", "Memory-Copy"),
    ("moe_eager", "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::(anonymous namespace)::silu_kernel", "Activation-SiLU"),
    // llama_train: forward + backward + AdamW
    ("llama_train", "cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma", "Attention-Backward"),
    ("llama_train", "void cudnn::fusion::compute_dot_do_o_specialized", "Attention-Backward"),
    ("llama_train", "void cudnn::fusion::convert_dq_to_16bits", "Attention-Backward"),
    ("llama_train", "void cudnn::fusion::fmha_reduce_head<true>", "Attention-Backward"),
    ("llama_train", "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>", "Loss"),
    ("llama_train", "void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d", "Loss"),
    ("llama_train", "void at::native::vectorized_elementwise_kernel<8, at::native::(anonymous namespace)::silu_backward_kernel", "Activation-SiLU"),
    ("llama_train", "void at::native::(anonymous namespace)::embedding_backward_feature_kernel", "Indexing"),
    ("llama_train", "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListScalarListMetadata<float, 3>", "Optimizer"),
    ("llama_train", "nvjet_sm90_tst_128x128_64x6_2x1_v_bz_NNT", "GEMM-cuBLAS"),
    // vllm_tp4_h100: vLLM, CUDA graphs, NCCL + custom all-reduce, Inductor
    ("vllm_tp4", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x128x64", "GEMM-cuBLAS"),
    ("vllm_tp4", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "Communication-AllReduce"),
    ("vllm_tp4", "ncclDevKernel_AllGather_RING_LL", "Communication-AllGather"),
    ("vllm_tp4", "void vllm::cross_device_reduce_1stage<", "Communication-AllReduce"),
    ("vllm_tp4", "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>", "GEMM-CUTLASS"),
    ("vllm_tp4", "void cutlass::Kernel2<cutlass_80_tensorop_s16816gemm_bf16_128x64_64x6_tn_align8>", "GEMM-CUTLASS"),
    ("vllm_tp4", "void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<", "Attention-Forward"),
    ("vllm_tp4", "void cutlass::device_kernel<flash::FlashAttnFwdCombine<", "Attention-Forward"),
    ("vllm_tp4", "flash::prepare_varlen_num_blocks_kernel", "Attention-Forward"),
    ("vllm_tp4", "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0", "Norm-RMS"),
    ("vllm_tp4", "triton_poi_fused_mul_silu_1", "Activation-Gated"),
    ("vllm_tp4", "triton_poi_fused_cat_3", "Memory-Reshape"),
    ("vllm_tp4", "triton_poi_fused_add_all_reduce_bitwise_and_bitwise_or_embedding_ge_lt_masked_fill_mul_sub_0", "Triton-Fused"),
    ("vllm_tp4", "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16", "KVCache-Update"),
    ("vllm_tp4", "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::ArgMaxOps<float>", "Sampling"),
    ("vllm_tp4", "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<long>", "Memory-Set"),
    ("vllm_tp4", "Memcpy HtoD (Pinned -> Device)", "Memory-Copy"),
    // vllm_moe_tp8_eager_b200: Blackwell, TRT-LLM MoE via FlashInfer, FP8/FP4
    ("vllm_moe_tp8", "bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2", "MoE-GEMM"),
    ("vllm_moe_tp8", "bmm_Bfloat16_MxE2m1MxE4m3_Fp32", "MoE-GEMM"),
    ("vllm_moe_tp8", "void (anonymous namespace)::multimem_all_reduce_kernel", "Communication-AllReduce"),
    ("vllm_moe_tp8", "~vllm::fused_add_rms_norm_kernel<", "Fused-AddNorm"),
    ("vllm_moe_tp8", "void vllm::rms_norm_kernel<", "Norm-RMS"),
    ("vllm_moe_tp8", "nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT", "GEMM-cuBLAS"),
    ("vllm_moe_tp8", "fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128PersistentContext", "Attention-Forward"),
    ("vllm_moe_tp8", "void moe::dev::finalize::finalizeKernelVecLoad<", "MoE-Finalize"),
    ("vllm_moe_tp8", "void moe::dev::routing::routingIndicesHistogramKernel<", "MoE-Routing"),
    ("vllm_moe_tp8", "void tensorrt_llm::kernels::quantize_with_block_size<", "Quant"),
    ("vllm_moe_tp8", "void vllm::scaled_fp8_quant_kernel_strided<", "Quant"),
    ("vllm_moe_tp8", "void vllm::rotary_embedding_kernel<c10::BFloat16, true>", "RoPE"),
    ("vllm_moe_tp8", "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage", "Communication-AllGather"),
    ("vllm_moe_tp8", "_copy_page_indices_kernel", "Indexing"),
    ("vllm_moe_tp8", "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, unsigned char", "KVCache-Update"),
    // sglang Qwen3-30B-A3B decode on B300 (CUDA graph)
    ("a3b_decode_b300", "bmm_Bfloat16_Bfloat16Bfloat16_Fp32_t128x8x128u2_s6", "MoE-GEMM"),
    ("a3b_decode_b300", "nvjet_sm103_tst_32x64_64x16_4x1_v_bz_splitK_TNN", "GEMM-SplitK"),
    ("a3b_decode_b300", "nvjet_sm103_tst_64x16_64x16_4x1_v_bz_TNT", "GEMM-cuBLAS"),
    ("a3b_decode_b300", "fmhaSm100fKernel_QkvBfloat16OBfloat16H128PagedKvCausalP64MultiCtasKvCgaVarSeqQ8Kv128StaticSwapsAbForGen", "Attention-Decode"),
    ("a3b_decode_b300", "kernel_cutlass_kernel_flashinfernormkernelsfused_add_rmsnormFusedAddRMSNormKernel", "Fused-AddNorm"),
    ("a3b_decode_b300", "kernel_cutlass_kernel_flashinfernormkernelsrmsnormRMSNormKernel", "Norm-RMS"),
    ("a3b_decode_b300", "void moe::dev::routing::routingCustom::routingIndicesDynBlockKernel<", "MoE-Routing"),
    ("a3b_decode_b300", "void moe::dev::finalize::finalizeKernel<", "MoE-Finalize"),
    ("a3b_decode_b300", "void (anonymous namespace)::fused_qknorm_warp<", "Norm-RMS"),
    ("a3b_decode_b300", "void (anonymous namespace)::fused_rope_store_kernel<", "KVCache-Update"),
    ("a3b_decode_b300", "alloc_decode_kernel", "Indexing"),
    ("a3b_decode_b300", "void (anonymous namespace)::resolve_future_token_ids_kernel<", "Indexing"),
    // the same step on MI300X
    ("a3b_decode_mi300x", "void ck::kernel_moe_gemm<ck::GridwiseMoeGemm<", "MoE-GEMM"),
    ("a3b_decode_mi300x", "void paged_attention_ll4mi_QKV_mfma16_kernel<", "PagedAttention-Compute"),
    ("a3b_decode_mi300x", "void paged_attention_ll4mi_reduce_kernel<", "PagedAttention-Reduce"),
    ("a3b_decode_mi300x", "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT64x16x256", "GEMM-hipBLASLt"),
    ("a3b_decode_mi300x", "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi256ELi8ELb1", "Fused-AddNorm"),
    ("a3b_decode_mi300x", "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi64ELi8ELb0", "Norm-RMS"),
    ("a3b_decode_mi300x", "void ck_tile::kentry<2, ck_tile::MoeSortingKernel<", "MoE-Routing"),
    ("a3b_decode_mi300x", "_fused_qk_rope_reshape_and_cache_kernel", "KVCache-Update"),
    ("a3b_decode_mi300x", "aiter::topksoftmax_4x128x8_bf16", "MoE-Routing"),
    ("a3b_decode_mi300x", "create_flashinfer_kv_indices_triton", "Indexing"),
    ("a3b_decode_mi300x", "void rocprim::ROCPRIM_400200_NS::detail::trampoline_kernel<rocprim::ROCPRIM_400200_NS::detail::wrapped_scan_config", "Reduce"),
    ("a3b_decode_mi300x", "void at::native::elementwise_kernel_manual_unroll<128, 8, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda", "Memory-Reshape"),
    // sglang Qwen3-8B on MI300X: decode (HIP graph) and eager prefill
    ("8b_decode_graph", "_ZN7sgl_hip10activation18act_and_mul_kernel", "Activation-Gated"),
    ("8b_decode_graph", "void rotary_embedding_kernel<c10::BFloat16, true>", "RoPE"),
    ("8b_decode_graph", "void (anonymous namespace)::store_kvcache<", "KVCache-Update"),
    ("8b_decode_graph", "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x32x64", "GEMM-hipBLASLt"),
    ("8b_prefill", "_ZN7ck_tile6kentryILi2ENS_38FmhaBatchPrefillWithPagedKVCacheKernel", "Attention-Forward"),
    ("8b_prefill", "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT320x224x64", "GEMM-hipBLASLt"),
    ("8b_prefill", "compute_position_kernel", "Indexing"),
    ("8b_prefill", "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<long, at::native::func_wrapper_t<long, at::native::MaxNanFunctor<long>", "Reduce"),
    // vLLM GPT-OSS full-graph decode on MI300X-class
    ("gptoss", "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu", "MoE-GEMM"),
    ("gptoss", "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1", "MoE-GEMM"),
    ("gptoss", "kernel_unified_attention_3d", "PagedAttention-Compute"),
    ("gptoss", "kernel_unified_attention_2d", "PagedAttention-Compute"),
    ("gptoss", "reduce_segments", "PagedAttention-Reduce"),
    ("gptoss", "~Rmsnorm2dFusedAddEnumE1", "Fused-AddNorm"),
    ("gptoss", "~Rmsnorm2dFusedAddEnumE0", "Norm-RMS"),
    ("gptoss", "_finalize_matmul_scatter_bf16", "MoE-Finalize"),
    ("gptoss", "_combined_routing_memset", "MoE-Routing"),
    ("gptoss", "_combined_routing_compute", "MoE-Routing"),
    ("gptoss", "_sum_bitmatrix_rows", "MoE-Routing"),
    ("gptoss", "_topk_forward", "MoE-Routing"),
    ("gptoss", "triton_poi_fused__to_copy_1", "Memory-Reshape"),
    ("gptoss", "triton_poi_fused_0", "Triton-Fused"),
    ("gptoss", "void vllm::reshape_and_cache_flash_kernel<__hip_bfloat16", "KVCache-Update"),
    // torch.compile on MI300X
    ("torch_compile", "attn_fwd", "Attention-Forward"),
    ("torch_compile", "triton_poi_fused__unsafe_view_mul_silu_2", "Activation-Gated"),
    ("torch_compile", "triton_red_fused_add_mean_mul_pow_rsqrt_0", "Norm-RMS"),
    ("torch_compile", "triton_poi_fused__unsafe_view_add_3", "Triton-Fused"),
    // DeepSeek-V3 training on H800
    ("deepseek_v3", "void dpsk::ep::internode::combine<", "Communication-AllToAll"),
    ("deepseek_v3", "void dpsk::ep::internode::cached_notify<", "Communication-AllToAll"),
    ("deepseek_v3", "void cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_ptp128c::GemmKernel>", "GEMM-FP8"),
    ("deepseek_v3", "void cutlass::device_kernel<dpsk::grouped_gemm::cuda::m_grouped_fp8_ptp128c::GemmKernel>", "MoE-GEMM"),
    ("deepseek_v3", "void dpsk::grouped_gemm::cuda::utils::transpose<", "Memory-Reshape"),
    ("deepseek_v3", "void cuda::per_token_cast_to_fp8_with_channels<", "Quant"),
    ("deepseek_v3", "void flash::compute_attn_ws<Flash_fwd_kernel_traits<192", "Attention-Forward"),
    ("deepseek_v3", "void cutlass::device_kernel<flash::FlashAttnBwd<", "Attention-Backward"),
    ("deepseek_v3", "rotary_kernel", "RoPE"),
    ("deepseek_v3", "_ZN2at6native54_GLOBAL__N__d8ceb000_21_DistributionNormal_cu", "Elementwise"),
    ("deepseek_v3", "void cuda::swiglu_forward_backward_with_weight_impl", "Activation-Gated"),
    ("deepseek_v3", "sm90_xmma_gemm_bf16f32_bf16f32_f32_nt_n", "GEMM-cuBLAS"),
    ("deepseek_v3", "void layer_norm::ln_fwd_kernel<", "Fused-AddNorm"),
    ("deepseek_v3", "void cuda::topk_sum_and_topk_idx<", "MoE-Routing"),
    // ResNet training on MI300X (MIOpen, CK, RCCL)
    ("resnet", "igemm_fwd_gtcx3_nhwc_bf16", "Conv"),
    ("resnet", "igemm_bwd_gtcx3_nhwc_bf16", "Conv"),
    ("resnet", "igemm_wrw_gtcx3_nhwc_bf16", "Conv"),
    ("resnet", "_ZN2ck16tensor_operation6device12_GLOBAL__N_149kernel_grouped_conv_fwd_multiple_abd_xdl_cshuffle", "Conv"),
    ("resnet", "_ZN2ck16tensor_operation6device37kernel_batched_gemm_xdlops_bwd_weight", "Conv"),
    ("resnet", "@Cijk_Ailk_Bljk_BBS_BH_MT64x64x64_MI16x16x16x1_SN_1LDSB0_APM1", "Conv"),
    ("resnet", "Cijk_Alik_Bljk_BBS_BH_Bias_HAS_SAV_UserArgs_MT16x16x256", "GEMM-hipBLASLt"),
    ("resnet", "batched_transpose_16x32_half", "Memory-Reshape"),
    ("resnet", "transpose_NCHW2CNHW_V2_2D_WG_off64", "Memory-Reshape"),
    ("resnet", "void at::native::batch_norm_collect_statistics_kernel<", "Norm-BatchNorm"),
    ("resnet", "void at::native::(anonymous namespace)::max_pool_forward_nchw<", "Pooling"),
    // recommender training on A100 (NCCL, FBGEMM, old Triton names)
    ("recsys", "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x128_32x3_nt_align1>", "GEMM-CUTLASS"),
    ("recsys", "void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>", "Optimizer"),
    ("recsys", "ampere_sgemm_128x64_nn", "GEMM-cuBLAS"),
    ("recsys", "void splitKreduce_kernel<float", "GEMM-SplitK"),
    ("recsys", "void gemv2T_kernel_val<", "GEMM-cuBLAS"),
    ("recsys", "triton__0d1d2d3d", "Triton-Fused"),
    ("recsys", "void cub::DeviceRadixSortExclusiveSumKernel<", "Sort"),
    ("recsys", "void cub::DeviceScanKernel<cub::AgentScanPolicy<128, 15, int, (cub::BlockLoadAlgorithm)3, (cub::CacheLoadModifier)0", "Reduce"),
    ("recsys", "void fbgemm_gpu::permute_2D_lengths_kernel<", "Indexing"),
    ("recsys", "void split_embedding_codegen_forward_unweighted_kernel<", "Indexing"),
    ("recsys", "Memcpy DtoH (Device -> Pageable)", "Memory-Copy"),
    ("recsys", "Memset (Unknown)", "Memory-Set"),
    // GPU-only trace on MI210 (no CPU ops at all)
    ("mi210", "igemm_wrw_gtcx2_nhwc_bf16", "Conv"),
    ("mi210", "void at::native::batch_norm_backward_kernel<", "Norm-BatchNorm"),
    ("mi210", "SubTensorOpWithCastTensor1d", "Memory-Reshape"),
    ("mi210", "batched_transpose_16x64_pack_1x4_ediv_1x2_half", "Memory-Reshape"),
    ("mi210", "Cijk_Ailk_Bjlk_BBS_BH_Bias_HAS_SAV_UserArgs_MT128x64x32_MI32x32x1", "GEMM-hipBLASLt"),
    ("mi210", "void at::native::elementwise_kernel_manual_unroll<128, 8, at::native::gpu_kernel_impl_nocast<at::native::mse_backward_cuda_kernel", "Loss"),
];

#[test]
fn real_kernel_names_get_the_expected_category() {
    assert!(EXPECTED.len() >= 80, "need at least 80 names, have {}", EXPECTED.len());
    let files = fixture_names();
    let mut failures = Vec::new();
    for &(key, text, want) in EXPECTED {
        let file = files.iter().find(|f| f.contains(key)).unwrap_or_else(|| panic!("no fixture matches '{key}'"));
        let a = analysis(file);
        let t = &a.trace;
        let mut seen = 0;
        let (needs_op, text) = match text.strip_prefix('@') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        for i in 0..t.gpu.len() {
            if needs_op && t.cpu_op_name(i).is_none() {
                continue;
            }
            let name = t.name(t.gpu.name[i]);
            let hit = match text.strip_prefix('~') {
                Some(inner) => name.contains(inner),
                None => name.starts_with(text),
            };
            if !hit {
                continue;
            }
            seen += 1;
            let got = a.categories.name(i);
            if got != want {
                failures.push(format!("{key}: {text}\n    expected {want}, got {got} by [{}]", a.categories.rule(i)));
                break;
            }
        }
        if seen == 0 {
            failures.push(format!("{key}: no GPU row named {text}"));
        }
    }
    assert!(failures.is_empty(), "{} of {} names wrong:\n{}", failures.len(), EXPECTED.len(), failures.join("\n"));
}

/// The unfused eager RMSNorm of Hugging Face Llama is 8 kernels (to fp32, pow, mean, +eps, rsqrt,
/// mul, to bf16, weight mul): every one of the pow kernels must start one labelled chain of 8.
#[test]
fn eager_rmsnorm_chains_are_recognised_whole() {
    for key in ["llama_dense", "moe_eager"] {
        let file = fixture_names().into_iter().find(|f| f.contains(key)).unwrap();
        let a = analysis(&file);
        let t = &a.trace;
        let pow_kernels = t.kernel_rows().filter(|&i| t.name(t.gpu.name[i]).contains("pow_tensor_scalar_kernel")).count();
        let by_sequence = t.kernel_rows().filter(|&i| a.categories.rule(i).contains("sequence")).count();
        assert!(pow_kernels > 0);
        assert_eq!(by_sequence, 8 * pow_kernels, "{key}: {pow_kernels} norms should give {} kernels", 8 * pow_kernels);
    }
}

#[test]
fn category_summary_covers_all_gpu_time() {
    let a = analysis(&fixture_names().into_iter().find(|f| f.contains("moe_eager")).unwrap());
    let table = traceprism::report::table(&a, "category_summary").expect("table");
    let count = table.column("count").unwrap();
    let cum = table.column("cumulative_pct").unwrap();
    let rows: i64 = table.rows.iter().map(|r| r[count].as_f64().unwrap() as i64).sum();
    assert_eq!(rows as usize, a.trace.gpu.len());
    let last = table.rows.last().unwrap()[cum].as_f64().unwrap();
    assert!((last - 100.0).abs() < 1e-6, "cumulative ends at {last}");
    assert_eq!(table.columns[0], "category");
}

#[test]
fn graph_launch_breakdown_shares_sum_to_100_per_op() {
    let a = analysis(&fixture_names().into_iter().find(|f| f.contains("vllm_tp4")).unwrap());
    let table = traceprism::report::table(&a, "graph_launch_breakdown").expect("table");
    assert!(!table.rows.is_empty(), "vllm_tp4 replays CUDA graphs");
    let op = table.column("graph_op").unwrap();
    let pct = table.column("pct_of_op_time").unwrap();
    let launches = table.column("graph_launches").unwrap();
    let mut sums: std::collections::HashMap<String, f64> = Default::default();
    for r in &table.rows {
        *sums.entry(r[op].text()).or_default() += r[pct].as_f64().unwrap();
    }
    for (k, s) in sums {
        assert!((s - 100.0).abs() < 1e-6, "{k}: {s}");
    }
    // 729 cudaGraphLaunch calls in this trace (shared/traces README)
    assert_eq!(table.rows[0][launches].as_f64().unwrap() as i64, 729);
}
