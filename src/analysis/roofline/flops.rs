//! Shape models: FLOPs and bytes moved of one op call, from its `Input Dims`, `Input type` and
//! `Concrete Inputs`. Every model returns `None` when the shapes do not fit (never panics).
//!
//! Conventions (the same for every op, so rows compare):
//! - GEMM FLOPs are `2·M·N·K` (one multiply and one add per term); bias adds are not counted.
//!   Bytes are each input read once plus the output written once (ideal caching).
//! - Attention FLOPs are `2·B·Hq·P·D` for Q·Kᵀ plus `2·B·Hq·P·Dv` for P·V, where `P` is the number of
//!   (query, key) pairs computed: `Sq·Sk`, or with `is_causal` PyTorch's top-left causal mask
//!   (query `i` sees keys `0..=i`): `Sq(Sq+1)/2` when `Sq ≤ Sk`. Softmax FLOPs are not counted.
//!   Bytes are Q, K, V read once and O written once.
//! - Norm and elementwise ops are memory-bound: bytes are every tensor input read once plus the
//!   output written once; FLOPs are nominal (1 per output element, 4 for norms).

/// Precision class that picks the compute roof.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Precision {
    /// 8-bit floating point.
    Fp8,
    /// bf16 and fp16.
    Bf16,
    /// 32-bit floating point (TF32 aside).
    Fp32,
    /// Anything else (integers, fp64, unknown).
    Other,
}

impl Precision {
    /// Short label for tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Precision::Fp8 => "fp8",
            Precision::Bf16 => "bf16/fp16",
            Precision::Fp32 => "fp32",
            Precision::Other => "other",
        }
    }
    /// Precision of an `Input type` string.
    pub fn of(dtype: &str) -> Precision {
        match dtype {
            "c10::BFloat16" | "c10::Half" => Precision::Bf16,
            "float" => Precision::Fp32,
            t if t.contains("Float8") => Precision::Fp8,
            _ => Precision::Other,
        }
    }
}

/// Bytes per element of an `Input type` string; `None` for scalars and unknown non-tensor types.
pub fn element_bytes(dtype: &str) -> Option<f64> {
    Some(match dtype {
        "c10::BFloat16" | "c10::Half" | "short" | "c10::ComplexHalf" => 2.0,
        "float" | "int" | "unsigned int" | "c10::qint32" => 4.0,
        "double" | "long int" | "long" | "long long" | "c10::complex<float>" | "unsigned long" => 8.0,
        "bool" | "signed char" | "unsigned char" | "c10::qint8" | "c10::quint8" => 1.0,
        t if t.contains("Float8") || t.contains("Float4") => 1.0,
        "" | "Scalar" | "ScalarList" | "GenericList" | "TensorList" | "None" => return None,
        _ => 2.0,
    })
}

/// FLOPs and bytes of one call.
#[derive(Debug, Clone, PartialEq)]
pub struct Work {
    /// Floating-point operations.
    pub flops: f64,
    /// Bytes moved to and from memory, at least.
    pub bytes: f64,
    /// The precision whose peak applies.
    pub precision: Precision,
    /// Human-readable sizes (`M=4 N=2048 K=2048`, `B=4 Hq=16 Hkv=8 Sq=512 Sk=512 D=128 causal`).
    pub shape: String,
}

/// The inputs of one call, as parsed from the trace.
pub struct Call<'a> {
    /// `Input Dims`, one list per input.
    pub dims: &'a [Vec<i64>],
    /// `Input type`, one per input.
    pub types: &'a [String],
    /// `Concrete Inputs`, one per input (scalars as text).
    pub concrete: &'a [String],
}

impl Call<'_> {
    fn dims(&self, i: usize) -> Option<&[i64]> {
        self.dims.get(i).map(|d| d.as_slice()).filter(|d| !d.is_empty() && d.iter().all(|&x| x >= 0))
    }
    fn ty(&self, i: usize) -> &str {
        self.types.get(i).map_or("", |s| s.as_str())
    }
    /// Element size of tensor input `i`, 2 bytes when the type is missing.
    fn esize(&self, i: usize) -> f64 {
        element_bytes(self.ty(i)).unwrap_or(2.0)
    }
    /// Bytes of tensor input `i` (0 when absent).
    fn tensor_bytes(&self, i: usize) -> f64 {
        self.dims(i).map_or(0.0, |d| numel(d) * self.esize(i))
    }
    fn concrete(&self, i: usize) -> &str {
        self.concrete.get(i).map_or("", |s| s.as_str())
    }
}

fn numel(d: &[i64]) -> f64 {
    d.iter().map(|&x| x as f64).product()
}

fn gemm_work(m: f64, n: f64, k: f64, batch: f64, in_bytes: f64, out_esize: f64, precision: Precision) -> Option<Work> {
    if m <= 0.0 || n <= 0.0 || k <= 0.0 {
        return None;
    }
    let shape = if batch != 1.0 { format!("B={batch} M={m} N={n} K={k}") } else { format!("M={m} N={n} K={k}") };
    Some(Work { flops: 2.0 * batch * m * n * k, bytes: in_bytes + batch * m * n * out_esize, precision, shape })
}

/// Adds the bias add of a GEMM with a bias input (`addmm`, `baddbmm`, `linear` with bias): one
/// FLOP per output element, as TraceLens counts it.
fn with_bias(w: Option<Work>, c: &Call, bias: Option<usize>, outputs: f64) -> Option<Work> {
    let mut w = w?;
    if bias.and_then(|i| c.dims(i)).is_some() {
        w.flops += outputs;
    }
    Some(w)
}

/// `aten::mm` (`A[M,K] @ B[K,N]`) and `_scaled_mm` (fp8 inputs; output assumed bf16).
pub fn mm(c: &Call, a: usize, b: usize, bias: Option<usize>, out_esize: Option<f64>) -> Option<Work> {
    let (da, db) = (c.dims(a)?, c.dims(b)?);
    let ([m, k], [k2, n]) = (da, db) else { return None };
    if k != k2 {
        return None;
    }
    let bytes = c.tensor_bytes(a) + c.tensor_bytes(b) + bias.map_or(0.0, |i| c.tensor_bytes(i));
    let w = gemm_work(*m as f64, *n as f64, *k as f64, 1.0, bytes, out_esize.unwrap_or(c.esize(a)), Precision::of(c.ty(a)));
    with_bias(w, c, bias, (*m * *n) as f64)
}

/// `aten::bmm` / `baddbmm`: `A[b,M,K] @ B[b,K,N]`.
pub fn bmm(c: &Call, a: usize, b: usize, bias: Option<usize>) -> Option<Work> {
    let ([ba, m, k], [bb, k2, n]) = (c.dims(a)?, c.dims(b)?) else { return None };
    if k != k2 || ba != bb {
        return None;
    }
    let bytes = c.tensor_bytes(a) + c.tensor_bytes(b) + bias.map_or(0.0, |i| c.tensor_bytes(i));
    with_bias(
        gemm_work(*m as f64, *n as f64, *k as f64, *ba as f64, bytes, c.esize(a), Precision::of(c.ty(a))),
        c,
        bias,
        (*ba * *m * *n) as f64,
    )
}

/// `aten::matmul` with torch broadcasting (1-D operands get a unit dimension; batch dims broadcast).
pub fn matmul(c: &Call) -> Option<Work> {
    let (da, db) = (c.dims(0)?, c.dims(1)?);
    let (m, k) = match da.len() {
        1 => (1, da[0]),
        n => (da[n - 2], da[n - 1]),
    };
    let (k2, n) = match db.len() {
        1 => (db[0], 1),
        l => (db[l - 2], db[l - 1]),
    };
    if k != k2 {
        return None;
    }
    let batch_a = if da.len() > 2 { &da[..da.len() - 2] } else { &[][..] };
    let batch_b = if db.len() > 2 { &db[..db.len() - 2] } else { &[][..] };
    let len = batch_a.len().max(batch_b.len());
    let mut batch = 1.0;
    for i in 0..len {
        let x = |v: &[i64]| if i + v.len() >= len { v[i + v.len() - len] } else { 1 };
        batch *= x(batch_a).max(x(batch_b)) as f64;
    }
    let bytes = c.tensor_bytes(0) + c.tensor_bytes(1);
    gemm_work(m as f64, n as f64, k as f64, batch, bytes, c.esize(0), Precision::of(c.ty(0)))
}

/// `aten::linear` and custom GEMMs with the same signature: `x[..., K]`, `W[N, K]`, optional `bias[N]`.
pub fn linear(c: &Call) -> Option<Work> {
    let (dx, dw) = (c.dims(0)?, c.dims(1)?);
    let [n, k2] = dw else { return None };
    let k = *dx.last()?;
    if k != *k2 {
        return None;
    }
    let m = numel(&dx[..dx.len() - 1]);
    let bytes = c.tensor_bytes(0) + c.tensor_bytes(1) + c.tensor_bytes(2);
    with_bias(gemm_work(m, *n as f64, k as f64, 1.0, bytes, c.esize(0), Precision::of(c.ty(0))), c, Some(2), m * *n as f64)
}

/// Grouped GEMM of MoE experts (`aten::_grouped_mm(A, B, offs, bias, out_dtype)`):
/// `A[T,K]` (tokens of all groups stacked, split by `offs`) with `B[G,K,N]` → `2·T·K·N`;
/// `A[G,M,K]` with `B[G,K,N]` → `2·G·M·N·K`; `A[M,Ktot]` with `B[Ktot,N]` (split along K) → `2·M·N·Ktot`.
/// Bytes count every expert's weights once.
pub fn grouped_mm(c: &Call) -> Option<Work> {
    let (da, db) = (c.dims(0)?, c.dims(1)?);
    let prec = Precision::of(c.ty(0));
    let bytes = c.tensor_bytes(0) + c.tensor_bytes(1);
    let out = c.esize(0).max(if prec == Precision::Fp8 { 2.0 } else { 0.0 });
    match (da, db) {
        ([t, k], [_g, kb, nb]) => {
            let n = if k == kb {
                *nb
            } else if k == nb {
                *kb
            } else {
                return None;
            };
            gemm_work(*t as f64, n as f64, *k as f64, 1.0, bytes, out, prec)
        }
        ([g, m, k], [g2, kb, nb]) if g == g2 => {
            let n = if k == kb {
                *nb
            } else if k == nb {
                *kb
            } else {
                return None;
            };
            gemm_work(*m as f64, n as f64, *k as f64, *g as f64, bytes, out, prec)
        }
        ([m, k], [kb, n]) if k == kb => {
            let groups = c.dims(2).and_then(|d| d.first().copied()).unwrap_or(1) as f64;
            let w = gemm_work(*m as f64, *n as f64, *k as f64, 1.0, bytes, out * groups, prec)?;
            Some(Work { shape: format!("{} G={groups} (split K)", w.shape), ..w })
        }
        _ => None,
    }
}

/// Number of (query, key) pairs attended with PyTorch's top-left causal mask.
pub fn causal_pairs(sq: f64, sk: f64) -> f64 {
    if sq <= sk {
        sq * (sq + 1.0) / 2.0
    } else {
        sk * (sk + 1.0) / 2.0 + (sq - sk) * sk
    }
}

/// True when a `Concrete Inputs` value means "causal" (`True`, or a non-zero mask type).
fn is_causal(text: &str) -> bool {
    let t = text.trim();
    t.eq_ignore_ascii_case("true") || t.parse::<f64>().map(|v| v != 0.0).unwrap_or(false)
}

/// Attention over `q, k, v` (inputs 0, 1, 2). `heads_first`: `[B,H,S,D]` (SDPA, cuDNN) rather than
/// `[B,S,H,D]` (flash / efficient kernels). `causal_arg`: position of `is_causal` in the arguments.
pub fn attention(c: &Call, heads_first: bool, causal_arg: Option<usize>) -> Option<Work> {
    let ([bq, q1, q2, d], [_, k1, k2, _dk], [_, _, _, dv]) = (c.dims(0)?, c.dims(1)?, c.dims(2)?) else {
        return None;
    };
    let (b, d, dv) = (*bq as f64, *d as f64, *dv as f64);
    let (hq, sq, hkv, sk) = if heads_first {
        (*q1 as f64, *q2 as f64, *k1 as f64, *k2 as f64)
    } else {
        (*q2 as f64, *q1 as f64, *k2 as f64, *k1 as f64)
    };
    if b <= 0.0 || hq <= 0.0 || sq <= 0.0 || sk <= 0.0 || d <= 0.0 {
        return None;
    }
    let causal = causal_arg.is_some_and(|i| is_causal(c.concrete(i)));
    let pairs = if causal { causal_pairs(sq, sk) } else { sq * sk };
    let flops = 2.0 * b * hq * pairs * d + 2.0 * b * hq * pairs * dv;
    let bytes = c.tensor_bytes(0) + c.tensor_bytes(1) + c.tensor_bytes(2) + b * hq * sq * dv * c.esize(0);
    let shape = format!("B={b} Hq={hq} Hkv={hkv} Sq={sq} Sk={sk} D={d}{}", if causal { " causal" } else { "" });
    Some(Work { flops, bytes, precision: Precision::of(c.ty(0)), shape })
}

/// Tensor inputs (index, dims) of a call.
fn tensors<'a>(c: &'a Call) -> impl Iterator<Item = (usize, &'a [i64])> + 'a {
    (0..c.dims.len())
        .filter_map(move |i| c.dims(i).map(|d| (i, d)))
        .filter(move |(i, _)| element_bytes(c.ty(*i)).is_some() || c.ty(*i).is_empty())
}

/// Norms (layer/RMS norm, softmax): reads every tensor input, writes one output like the first.
pub fn norm(c: &Call) -> Option<Work> {
    let (first, d) = tensors(c).next()?;
    let out = numel(d) * c.esize(first);
    let read: f64 = tensors(c).map(|(i, _)| c.tensor_bytes(i)).sum();
    Some(Work { flops: 4.0 * numel(d), bytes: read + out, precision: Precision::of(c.ty(first)), shape: format!("{d:?}") })
}

/// Elementwise, copies and reductions. Out-of-place: reads every tensor input, writes one output
/// like the largest input. In-place (`name_` suffix): the first input is also written
/// (`copy_`: only the destination is written; `fill_`/`zero_`: only written).
pub fn elementwise(c: &Call, op_name: &str) -> Option<Work> {
    let inputs: Vec<(usize, &[i64])> = tensors(c).collect();
    let (first, d0) = *inputs.first()?;
    let read: f64 = inputs.iter().map(|(i, _)| c.tensor_bytes(*i)).sum();
    let (largest_i, largest) = inputs.iter().copied().max_by(|x, y| numel(x.1).total_cmp(&numel(y.1)))?;
    let base = op_name.rsplit("::").next().unwrap_or(op_name);
    let (bytes, elements) = match base {
        "fill_" | "zero_" => (c.tensor_bytes(first), numel(d0)),
        "copy_" => (read, numel(d0)),
        b if b.ends_with('_') => (read + c.tensor_bytes(first), numel(d0)),
        _ => (read + numel(largest) * c.esize(largest_i), numel(largest)),
    };
    Some(Work { flops: elements, bytes, precision: Precision::of(c.ty(first)), shape: format!("{largest:?}") })
}

/// Reductions (`mean`, `sum`, `amax`...): every tensor input read once; the output is negligible.
pub fn reduce(c: &Call) -> Option<Work> {
    let inputs: Vec<(usize, &[i64])> = tensors(c).collect();
    let (first, d0) = *inputs.first()?;
    let read: f64 = inputs.iter().map(|(i, _)| c.tensor_bytes(*i)).sum();
    let elements: f64 = inputs.iter().map(|(_, d)| numel(d)).sum();
    Some(Work { flops: elements, bytes: read, precision: Precision::of(c.ty(first)), shape: format!("{d0:?}") })
}

/// Row selection (`index_select(input, dim, index)`, `gather(input, dim, index)`,
/// `embedding(weight, indices)`): only the selected elements are read, so bytes are the output read
/// and written once plus the index, not the whole (often huge) source table. `gather`'s index has
/// the output's shape and is usually an `expand`ed view (stride 0), so its bytes are not counted.
pub fn gather(c: &Call, op_name: &str) -> Option<Work> {
    let base = op_name.rsplit("::").next().unwrap_or(op_name);
    let src = c.dims(0)?;
    let (out, index) = match base {
        "index_select" => {
            let dim = c.concrete(1).trim().parse::<i64>().ok()?;
            let dim = if dim < 0 { dim + src.len() as i64 } else { dim };
            let len = *src.get(usize::try_from(dim).ok()?)?;
            let idx = c.dims(2).map_or(1.0, numel);
            (if len > 0 { numel(src) / len as f64 * idx } else { 0.0 }, 2)
        }
        "gather" => (numel(c.dims(2)?), usize::MAX),
        "embedding" => (numel(c.dims(1)?) * *src.last()? as f64, 1),
        _ => return None,
    };
    let bytes = 2.0 * out * c.esize(0) + c.tensor_bytes(index);
    Some(Work { flops: out, bytes, precision: Precision::of(c.ty(0)), shape: format!("{out} selected of {src:?}") })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call<'a>(dims: &'a [Vec<i64>], types: &'a [String], concrete: &'a [String]) -> Call<'a> {
        Call { dims, types, concrete }
    }

    #[test]
    fn matmul_broadcasts_batch() {
        let dims = vec![vec![2, 3, 4, 8], vec![8, 5]];
        let types = vec!["float".to_string(), "float".to_string()];
        let w = matmul(&call(&dims, &types, &[])).unwrap();
        // batch 2·3 = 6 folded with M=4: 2·6·4·5·8 = 1920
        assert_eq!(w.flops, 1920.0);
        assert_eq!(w.precision, Precision::Fp32);
    }

    #[test]
    fn causal_pairs_top_left() {
        assert_eq!(causal_pairs(4.0, 4.0), 10.0);
        assert_eq!(causal_pairs(2.0, 4.0), 3.0);
        assert_eq!(causal_pairs(4.0, 2.0), 3.0 + 4.0);
    }

    #[test]
    fn gather_reads_only_selected_rows() {
        // llama_dense_eager: aten::index_select [[32000, 2048], [], [4]], dim "0" (embedding lookup of 4 tokens):
        // out = 4 rows · 2048 = 8,192 bf16 elements; bytes = 2·8,192·2 + 4 int64 = 32,800.
        let dims = vec![vec![32000, 2048], vec![], vec![4]];
        let types = vec!["c10::BFloat16".to_string(), "Scalar".to_string(), "long int".to_string()];
        let concrete = vec!["".to_string(), "0".to_string(), "".to_string()];
        let w = gather(&call(&dims, &types, &concrete), "aten::index_select").unwrap();
        assert_eq!(w.bytes, 32_800.0);
    }

    #[test]
    fn bad_shapes_are_none() {
        let dims = vec![vec![4, 3], vec![5, 6]];
        assert!(mm(&call(&dims, &[], &[]), 0, 1, None, None).is_none());
        assert!(attention(&call(&dims, &[], &[]), true, None).is_none());
        assert!(linear(&call(&[], &[], &[])).is_none());
    }
}
