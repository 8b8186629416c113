//! What a communication kernel is: its collective kind from the kernel's name, and the message
//! size from the CPU op that launched it.

use crate::analysis::shapes::{parse_dims, parse_types};
use crate::model::{Trace, NONE};

/// The collective a kernel runs, read off its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum Kind {
    /// NCCL/RCCL AllReduce, vLLM/SGLang custom all-reduce, symmetric-memory all-reduce.
    AllReduce,
    /// AllGather.
    AllGather,
    /// ReduceScatter.
    ReduceScatter,
    /// AllToAll, DeepEP dispatch and combine.
    AllToAll,
    /// Broadcast.
    Broadcast,
    /// Reduce.
    Reduce,
    /// Point-to-point: SendRecv, Send, Recv.
    SendRecv,
    /// A communication kernel of no kind above.
    Other,
}

impl Kind {
    /// The kind of a communication kernel named `name`.
    pub fn of(name: &str) -> Kind {
        let n = name.to_ascii_lowercase();
        let has = |s: &str| n.contains(s);
        if has("reducescatter") || has("reduce_scatter") {
            Kind::ReduceScatter
        } else if has("allgather") || has("all_gather") {
            Kind::AllGather
        } else if has("allreduce")
            || has("all_reduce")
            || has("cross_device_reduce")
            || has("quickreduce")
            || has("quick_reduce")
            || has("quick_ar")
        {
            Kind::AllReduce
        } else if has("alltoall") || has("all_to_all") || has("dispatch") || has("combine") {
            Kind::AllToAll
        } else if has("broadcast") {
            Kind::Broadcast
        } else if has("sendrecv") || has("send") || has("recv") {
            Kind::SendRecv
        } else if has("reduce") {
            Kind::Reduce
        } else {
            Kind::Other
        }
    }

    /// The name TraceLens and NCCL use.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::AllReduce => "AllReduce",
            Kind::AllGather => "AllGather",
            Kind::ReduceScatter => "ReduceScatter",
            Kind::AllToAll => "AllToAll",
            Kind::Broadcast => "Broadcast",
            Kind::Reduce => "Reduce",
            Kind::SendRecv => "SendRecv",
            Kind::Other => "Other",
        }
    }

    /// Bus bandwidth over algorithm bandwidth for `n` ranks (NCCL's performance notes):
    /// AllReduce 2(n−1)/n; AllGather, ReduceScatter, AllToAll (n−1)/n; the rest 1.
    pub fn bus_factor(self, n: usize) -> f64 {
        let n = n.max(1) as f64;
        match self {
            Kind::AllReduce => 2.0 * (n - 1.0) / n,
            Kind::AllGather | Kind::ReduceScatter | Kind::AllToAll => (n - 1.0) / n,
            _ => 1.0,
        }
    }
}

/// Bytes per element of a PyTorch dtype as the profiler writes it (`c10::BFloat16`, `float`...).
pub(super) fn dtype_bytes(t: &str) -> Option<u64> {
    let t = t.to_ascii_lowercase();
    Some(match () {
        _ if t.contains("bfloat16") || t.contains("half") || t.contains("float16") || t == "short" => 2,
        _ if t.contains("double") || t.contains("long") || t.contains("int64") || t.contains("complex<float>") => 8,
        _ if t.contains("float8") || t.contains("fp8") || t.contains("char") || t.contains("bool") || t.contains("int8") => 1,
        _ if t.contains("float") || t == "int" || t.contains("int32") => 4,
        _ => return None,
    })
}

/// The message size of GPU row `i`: the first tensor input of the CPU op that launched it
/// (`Input Dims` × the bytes of its `Input type`), when the trace recorded shapes.
pub fn message_bytes(t: &Trace, i: usize) -> Option<u64> {
    let op = t.gpu.cpu_op[i];
    if op == NONE {
        return None;
    }
    let op = op as usize;
    let dims = parse_dims(t.name(t.ops.input_dims[op]));
    let types = parse_types(t.name(t.ops.input_types[op]));
    dims.iter().zip(&types).find(|(d, _)| !d.is_empty()).and_then(|(d, ty)| {
        let elems: i64 = d.iter().product();
        Some(elems.max(0) as u64 * dtype_bytes(ty)?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_from_names() {
        assert_eq!(Kind::of("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"), Kind::AllReduce);
        assert_eq!(Kind::of("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 4>(...)"), Kind::AllReduce);
        assert_eq!(Kind::of("ncclDevKernel_ReduceScatter_Sum_f32_RING_LL"), Kind::ReduceScatter);
        assert_eq!(Kind::of("ncclKernel_AllGather_RING_LL_Sum_int8_t"), Kind::AllGather);
        assert_eq!(Kind::of("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"), Kind::SendRecv);
        assert_eq!(Kind::of("void deep_ep::intranode::dispatch<8, 768>(...)"), Kind::AllToAll);
        assert_eq!(Kind::of("multimem_all_reduce_kernel"), Kind::AllReduce);
        assert!((Kind::AllReduce.bus_factor(4) - 1.5).abs() < 1e-12);
        assert!((Kind::AllGather.bus_factor(8) - 0.875).abs() < 1e-12);
        assert_eq!(dtype_bytes("c10::BFloat16"), Some(2));
        assert_eq!(dtype_bytes("float"), Some(4));
    }
}
