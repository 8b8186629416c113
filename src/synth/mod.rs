//! A small synthetic Kineto trace written in code: the warm-up's input, and a trace tests and
//! benches can make of any length without a fixture.
//!
//! It reaches the code paths a real inference trace reaches: CPU ops with shapes, runtime launches
//! with flow events, kernels of the main categories (norm, GEMM, attention, elementwise,
//! collective, sampling), memcpy/memset, a CUDA-graph launch, step annotations for one prefill and
//! `decode_steps` decode steps with two decoder layers each, Python function ranges, process
//! metadata and `deviceProperties`.

pub mod ranks;

use std::fmt::Write;

/// Kernels of one decoder layer: (cpu op, kernel name, duration µs). GEMM ops carry shapes.
const LAYER: &[(&str, &str, f64)] = &[
    ("aten::rms_norm", "void vllm::rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, long, c10::BFloat16 const*)", 3.5),
    ("aten::mm", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", 21.25),
    ("aten::_scaled_dot_product_flash_attention", "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>, true, false>(Flash_fwd_params)", 30.0),
    ("aten::mm", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", 12.5),
    ("c10d::allreduce_", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 8.0),
    ("aten::add", "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3>)", 2.25),
    ("aten::silu", "void at::native::vectorized_elementwise_kernel<4, at::native::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#8}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2> >(int, at::native::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#8}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2>)", 4.0),
];

/// The synthetic trace's JSON text as it is written, with the clocks and ids of the next event.
struct TraceText {
    out: String,
    /// CPU clock (µs).
    cpu: f64,
    /// GPU stream clock (µs).
    gpu: f64,
    correlation: u64,
    external: u64,
}

impl TraceText {
    fn event(&mut self, body: std::fmt::Arguments) {
        if !self.out.ends_with('[') {
            self.out.push_str(",\n");
        }
        let _ = self.out.write_fmt(body);
    }

    /// A CPU op with one runtime launch and its kernel (linked by correlation and a flow).
    fn op_with_kernel(&mut self, op: &str, kernel: &str, kernel_us: f64, dims: Option<[i64; 3]>) {
        self.external += 1;
        self.correlation += 1;
        let (ext, corr, start) = (self.external, self.correlation, self.cpu);
        let shapes = match dims {
            Some([m, k, n]) => format!(
                r#","Input Dims": [[{m}, {k}], [{k}, {n}]], "Input type": ["c10::BFloat16", "c10::BFloat16"], "Input Strides": [[{k}, 1], [1, {k}]], "Concrete Inputs": ["", ""]"#
            ),
            None => {
                r#","Input Dims": [[4, 512], []], "Input type": ["c10::BFloat16", "Scalar"], "Concrete Inputs": ["", "1"]"#.into()
            }
        };
        self.event(format_args!(
            r#"{{"ph": "X", "cat": "cpu_op", "name": "{op}", "pid": 11, "tid": 11, "ts": {start:.3}, "dur": 9.5, "args": {{"External id": {ext}, "Record function id": 0{shapes}}}}}"#
        ));
        let launch = start + 2.0;
        self.event(format_args!(
            r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 11, "tid": 11, "ts": {launch:.3}, "dur": 5.25, "args": {{"External id": {ext}, "cbid": 211, "correlation": {corr}}}}}"#
        ));
        self.event(format_args!(
            r#"{{"ph": "s", "id": {corr}, "pid": 11, "tid": 11, "ts": {launch:.3}, "cat": "ac2g", "name": "ac2g"}}"#
        ));
        let k = self.gpu.max(launch + 6.0);
        self.event(format_args!(
            r#"{{"ph": "X", "cat": "kernel", "name": "{kernel}", "pid": 0, "tid": 7, "ts": {k:.3}, "dur": {kernel_us}, "args": {{"External id": {ext}, "queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": {corr}, "registers per thread": 128, "shared memory": 0, "grid": [132, 1, 1], "block": [256, 1, 1]}}}}"#
        ));
        self.event(format_args!(
            r#"{{"ph": "f", "id": {corr}, "pid": 0, "tid": 7, "ts": {k:.3}, "cat": "ac2g", "name": "ac2g", "bp": "e"}}"#
        ));
        self.gpu = k + kernel_us + 1.5;
        self.cpu = start + 12.0;
    }

    /// A host-to-device copy and a memset.
    fn copies(&mut self) {
        for (runtime, cat, name, bytes) in [
            ("cudaMemcpyAsync", "gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 4096),
            ("cudaMemsetAsync", "gpu_memset", "Memset (Device)", 64),
        ] {
            self.correlation += 1;
            let (corr, t) = (self.correlation, self.cpu);
            self.event(format_args!(
                r#"{{"ph": "X", "cat": "cuda_runtime", "name": "{runtime}", "pid": 11, "tid": 11, "ts": {t:.3}, "dur": 3.0, "args": {{"cbid": 41, "correlation": {corr}}}}}"#
            ));
            let k = self.gpu.max(t + 4.0);
            self.event(format_args!(
                r#"{{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": 0, "tid": 7, "ts": {k:.3}, "dur": 1.25, "args": {{"device": 0, "context": 1, "stream": 7, "correlation": {corr}, "bytes": {bytes}, "memory bandwidth (GB/s)": 3.3}}}}"#
            ));
            self.gpu = k + 2.5;
            self.cpu = t + 5.0;
        }
    }

    /// One decode step replayed as a CUDA graph: one launch, several kernels with its correlation.
    fn graph_step(&mut self) {
        self.correlation += 1;
        let (corr, t) = (self.correlation, self.cpu);
        self.event(format_args!(
            r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": 11, "tid": 11, "ts": {t:.3}, "dur": 12.0, "args": {{"cbid": 311, "correlation": {corr}}}}}"#
        ));
        for _layer in 0..2 {
            for &(_, kernel, us) in LAYER {
                let k = self.gpu.max(t + 14.0);
                self.event(format_args!(
                    r#"{{"ph": "X", "cat": "kernel", "name": "{kernel}", "pid": 0, "tid": 7, "ts": {k:.3}, "dur": {us}, "args": {{"queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": {corr}, "graph node id": 3}}}}"#
                ));
                self.gpu = k + us + 1.0;
            }
        }
        self.cpu = t + 20.0;
    }

    /// One step: annotation, embedding, two decoder layers (or a graph replay), sampling.
    fn step(&mut self, index: usize, prefill: bool, graph: bool) {
        let tokens = if prefill { 64 } else { 1 };
        let label = if prefill { format!("step[EXTEND bs=1 toks={tokens}]") } else { "step[DECODE bs=1]".to_string() };
        let (cpu_start, gpu_start) = (self.cpu, self.gpu.max(self.cpu));
        self.cpu += 1.0;
        let t = self.cpu;
        self.event(format_args!(
            r#"{{"ph": "X", "cat": "python_function", "name": "nn.Module: LlamaForCausalLM_{index}", "pid": 11, "tid": 11, "ts": {t:.3}, "dur": 1.0, "args": {{"Python id": {index}}}}}"#
        ));
        self.copies();
        if graph {
            self.graph_step();
        } else {
            self.op_with_kernel("aten::embedding", "void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>)", 3.0, None);
            for _layer in 0..2 {
                for (i, &(op, kernel, us)) in LAYER.iter().enumerate() {
                    let dims = (op == "aten::mm").then_some([tokens, 512, if i == 1 { 1536 } else { 512 }]);
                    self.op_with_kernel(op, kernel, if prefill { us * 4.0 } else { us }, dims);
                }
            }
        }
        self.op_with_kernel("aten::argmax", "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, at::native::ArgMaxOps<c10::BFloat16>, unsigned int, long, 4> >(at::native::ReduceOp<c10::BFloat16, at::native::ArgMaxOps<c10::BFloat16>, unsigned int, long, 4>)", 2.0, None);
        let (cpu_dur, gpu_dur) = (self.cpu - cpu_start, self.gpu - gpu_start);
        let annotation_id = self.external + 1000;
        // The annotations cover the step; written after its events, as profilers often do.
        self.event(format_args!(
            r#"{{"ph": "X", "cat": "user_annotation", "name": "{label}", "pid": 11, "tid": 11, "ts": {cpu_start:.3}, "dur": {cpu_dur:.3}, "args": {{"External id": {annotation_id}}}}}"#
        ));
        self.event(format_args!(
            r#"{{"ph": "X", "cat": "gpu_user_annotation", "name": "{label}", "pid": 0, "tid": 7, "ts": {gpu_start:.3}, "dur": {gpu_dur:.3}, "args": {{"External id": {annotation_id}}}}}"#
        ));
        self.cpu += 50.0;
        self.gpu = self.gpu.max(self.cpu);
    }
}

/// The synthetic trace's JSON text: one prefill step, then `decode_steps` decode steps (the last
/// one replayed as a CUDA graph); about 80 events and 25 kB per step.
pub fn synthetic_trace(decode_steps: usize) -> String {
    let mut b =
        TraceText { out: String::with_capacity(64 << 10), cpu: 1_000_000.125, gpu: 1_000_000.125, correlation: 100, external: 0 };
    b.out.push_str(
        r#"{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85017493504, "computeMajor": 9, "computeMinor": 0, "numSms": 132}], "displayTimeUnit": "ms", "traceEvents": ["#,
    );
    b.event(format_args!(
        r#"{{"name": "process_name", "ph": "M", "ts": 999999.0, "pid": 11, "tid": 0, "args": {{"name": "python3"}}}}"#
    ));
    b.event(format_args!(
        r#"{{"name": "thread_name", "ph": "M", "ts": 999999.0, "pid": 0, "tid": 7, "args": {{"name": "stream 7"}}}}"#
    ));
    b.event(format_args!(r#"{{"name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g", "pid": "Traces", "tid": "Trace PyTorch Profiler", "ts": 999999.5}}"#));
    b.step(0, true, false);
    for step in 1..=decode_steps {
        b.step(step, false, step == decode_steps);
    }
    b.out.push_str("\n], \"traceName\": \"warm-up\"}\n");
    b.out
}

/// `text` as a gzip member (so the gzip input path is compiled too).
pub fn gzip(text: &[u8]) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    out.extend(miniz_oxide::deflate::compress_to_vec(text, 1));
    out.extend(crate::support::crc32::crc32(text).to_le_bytes());
    out.extend((text.len() as u32).to_le_bytes());
    out
}
