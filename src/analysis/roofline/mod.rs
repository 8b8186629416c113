//! Roofline: FLOPs and bytes of GEMM, grouped-GEMM, attention, norm and elementwise op calls, their
//! achieved TFLOP/s and TB/s, arithmetic intensity, bound and % of the device roof.
//!
//! A GPU row is credited to the nearest CPU op a shape model covers: its linked leaf op first, then
//! the ops enclosing it. Kernels replayed from graphs or without a launch have no shapes and are not
//! modelled (their time is reported as `unmodeled`). Calls with identical name, `Input Dims`,
//! `Input type` and `Concrete Inputs` form one row, like TraceLens' unique-args tables.
//!
//! Bytes assume every operand crosses HBM once. Small operands that stay in L2 (tens of MB on
//! H100 / MI300X) can therefore show more than 100 % of the memory roof; that is a cache effect,
//! not a counting error. GPU time of a call includes every GPU row it launched (kernels and the
//! memsets cuBLAS issues for its workspace).

pub mod devices;
pub mod flops;
pub mod rules;

pub use devices::Peaks;
pub use flops::{Precision, Work};

use super::base::Base;
use super::ops::{owner, Owner};
use super::per_name::PerName;
use super::shapes::{parse_dims, parse_types};
use crate::model::{FastMap, NameId, OpKind, NONE};
use rules::{Model, ModelRef, OpRules};

/// Which roofline table an op belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// A matrix product.
    Gemm,
    /// A grouped matrix product (MoE experts).
    GroupedGemm,
    /// Scaled dot-product attention.
    Attention,
    /// A normalisation.
    Norm,
    /// An element-wise op.
    Elementwise,
}

impl Family {
    /// All families, in table order.
    pub const ALL: [Family; 5] = [Family::Gemm, Family::GroupedGemm, Family::Attention, Family::Norm, Family::Elementwise];

    /// Display name.
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Gemm => "GEMM",
            Family::GroupedGemm => "grouped GEMM (MoE)",
            Family::Attention => "attention",
            Family::Norm => "norm",
            Family::Elementwise => "elementwise",
        }
    }

    fn of(model: Model) -> Family {
        match model {
            Model::Mm | Model::Addmm | Model::Bmm | Model::Baddbmm | Model::Matmul | Model::Linear | Model::ScaledMm => {
                Family::Gemm
            }
            Model::GroupedMm => Family::GroupedGemm,
            Model::SdpaBhsd | Model::SdpaBshd => Family::Attention,
            Model::Norm => Family::Norm,
            Model::Elementwise | Model::Reduce | Model::Gather => Family::Elementwise,
        }
    }
}

/// One group of identical op calls with their work and GPU time.
#[derive(Debug, Clone)]
pub struct OpRow {
    /// The op's name.
    pub name: String,
    /// Its family.
    pub family: Family,
    /// Its `Input Dims` as the trace wrote them.
    pub input_dims: String,
    /// Its `Input type`.
    pub input_types: String,
    /// Its `Concrete Inputs`.
    pub concrete_inputs: String,
    /// Work of one call.
    pub work: Work,
    /// Number of calls.
    pub calls: usize,
    /// Number of GPU rows (kernels, copies) the calls ran.
    pub kernels: usize,
    /// Sum of the calls' GPU time (ns).
    pub total_ns: i64,
    /// Median over the calls of each call's TFLOP/s (TraceLens' `TFLOPS/s_median`).
    pub median_tflops: f64,
}

impl OpRow {
    /// Mean GPU time of one call (ns).
    pub fn mean_ns(&self) -> f64 {
        if self.calls == 0 {
            0.0
        } else {
            self.total_ns as f64 / self.calls as f64
        }
    }
    /// FLOP per byte.
    pub fn intensity(&self) -> f64 {
        if self.work.bytes > 0.0 {
            self.work.flops / self.work.bytes
        } else {
            0.0
        }
    }
    /// Achieved TFLOP/s (`flops / mean time`).
    pub fn tflops(&self) -> f64 {
        let t = self.mean_ns();
        if t > 0.0 {
            self.work.flops / t / 1e3
        } else {
            0.0
        }
    }
    /// Achieved TB/s.
    pub fn tbs(&self) -> f64 {
        let t = self.mean_ns();
        if t > 0.0 {
            self.work.bytes / t / 1e3
        } else {
            0.0
        }
    }
    /// Roof at this row's intensity, bound and % of that roof, if the device is known.
    pub fn against(&self, peaks: &Peaks) -> Verdict {
        let p = self.work.precision;
        let roof = peaks.roof(p, self.intensity());
        Verdict {
            peak_tflops: peaks.compute_tflops(p),
            roof_tflops: roof,
            bound: if self.intensity() >= peaks.ridge(p) { "compute" } else { "memory" },
            pct_of_roof: if roof > 0.0 { 100.0 * self.tflops() / roof } else { 0.0 },
        }
    }
}

/// A row judged against the device roof.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Verdict {
    /// Compute peak for the row's precision (TFLOP/s).
    pub peak_tflops: f64,
    /// Attainable TFLOP/s at the row's intensity.
    pub roof_tflops: f64,
    /// `compute` or `memory`.
    pub bound: &'static str,
    /// Achieved / attainable, in %.
    pub pct_of_roof: f64,
}

/// The roofline of a trace.
#[derive(Debug, Clone, Default)]
pub struct Roofline {
    /// Device roofs, when known (from `deviceProperties` or `Options.device`).
    pub peaks: Option<Peaks>,
    /// Groups of identical calls, most GPU time first.
    pub rows: Vec<OpRow>,
    /// GPU time credited to modelled ops (ns).
    pub modeled_ns: i64,
    /// GPU time of all GPU rows (ns).
    pub gpu_ns: i64,
    /// The devices' kind ([`crate::model::TraceMeta::device_kind`]): the peaks table knows GPUs.
    pub device_kind: &'static str,
}

impl Roofline {
    /// Rows of one family.
    pub fn family(&self, f: Family) -> impl Iterator<Item = &OpRow> + '_ {
        self.rows.iter().filter(move |r| r.family == f)
    }
}

/// Finds the nearest op (the op itself, then enclosing CPU ops) that a shape model covers,
/// remembering the answer per op call and the rule lookup per op name.
struct ModelledOps<'a> {
    a: &'a Base,
    rules: OpRules,
    by_name: PerName<Option<ModelRef>>,
    /// Per CPU op: [`UNKNOWN`], [`UNMODELLED`], or 2 + its answer's index in `answers` (4 bytes
    /// an op: a trace holds millions of ops).
    by_op: Vec<u32>,
    answers: Vec<(u32, ModelRef)>,
    /// Scratch: the ops passed on the way up from one op.
    passed: Vec<u32>,
}

/// An op not looked up yet.
const UNKNOWN: u32 = 0;
/// An op that no shape model covers, nor any op enclosing it.
const UNMODELLED: u32 = 1;

impl<'a> ModelledOps<'a> {
    fn new(a: &'a Base) -> Self {
        let by_op = vec![UNKNOWN; a.trace.ops.len()];
        ModelledOps {
            a,
            rules: OpRules::builtin(),
            by_name: PerName::new(a.trace.names.len()),
            by_op,
            answers: Vec::new(),
            passed: Vec::new(),
        }
    }

    fn decode(&self, code: u32) -> Option<(u32, ModelRef)> {
        (code >= 2).then(|| self.answers[(code - 2) as usize])
    }

    fn of(&mut self, op: u32) -> Option<(u32, ModelRef)> {
        match self.by_op.get(op as usize).copied() {
            Some(UNKNOWN) | None => {}
            Some(code) => return self.decode(code),
        }
        let ops = &self.a.trace.ops;
        let mut cur = op;
        let mut found = None;
        // Ops passed on the way up have the same answer (none of them is modelled).
        let mut passed = std::mem::take(&mut self.passed);
        passed.clear();
        for _ in 0..64 {
            if cur == NONE || cur as usize >= ops.len() {
                break;
            }
            if cur != op && self.by_op[cur as usize] != UNKNOWN {
                found = self.decode(self.by_op[cur as usize]);
                break;
            }
            let i = cur as usize;
            if ops.kind[i] == OpKind::CpuOp {
                let (rules, trace) = (&self.rules, &self.a.trace);
                if let Some(r) = *self.by_name.get_or_insert_with(ops.name[i], || rules.lookup(trace.name(ops.name[i]))) {
                    found = Some((cur, r));
                    break;
                }
            }
            passed.push(cur);
            cur = ops.parent[i];
        }
        let code = match found {
            Some(answer) => {
                self.answers.push(answer);
                self.answers.len() as u32 + 1
            }
            None => UNMODELLED,
        };
        for &p in &passed {
            self.by_op[p as usize] = code;
        }
        self.passed = passed;
        if let Some(slot) = self.by_op.get_mut(op as usize) {
            *slot = code;
        }
        found
    }
}

/// Work of one call by model.
fn work_of(r: ModelRef, name: &str, c: &flops::Call) -> Option<Work> {
    match r.model {
        Model::Mm => flops::mm(c, 0, 1, None, None),
        Model::Addmm => flops::mm(c, 1, 2, Some(0), None),
        Model::Bmm => flops::bmm(c, 0, 1, None),
        Model::Baddbmm => flops::bmm(c, 1, 2, Some(0)),
        Model::Matmul => flops::matmul(c),
        Model::Linear => flops::linear(c),
        Model::ScaledMm => flops::mm(c, 0, 1, None, Some(2.0)),
        Model::GroupedMm => flops::grouped_mm(c),
        Model::SdpaBhsd => flops::attention(c, true, r.causal_arg),
        Model::SdpaBshd => flops::attention(c, false, r.causal_arg),
        Model::Norm => flops::norm(c),
        Model::Elementwise => flops::elementwise(c, name),
        Model::Reduce => flops::reduce(c),
        Model::Gather => flops::gather(c, name),
    }
}

/// Median over calls of `flops / time` in TFLOP/s (the mean of the two middle rates for an even
/// count); calls with no time are left out.
fn median_rate(flops: f64, call_ns: &mut [i64]) -> f64 {
    call_ns.sort_unstable();
    let timed: Vec<i64> = call_ns.iter().copied().filter(|&t| t > 0).collect();
    let rate = |t: i64| flops / t as f64 / 1e3;
    match timed.len() {
        0 => 0.0,
        n if n % 2 == 1 => rate(timed[n / 2]),
        n => (rate(timed[n / 2 - 1]) + rate(timed[n / 2])) / 2.0,
    }
}

/// Computes the roofline of an analysed trace.
pub fn analyze(a: &Base) -> Roofline {
    let g = &a.trace.gpu;
    let ops = &a.trace.ops;
    let mut modelled = ModelledOps::new(a);
    // per modelled op call: (op, model, GPU ns, GPU rows); `slot` maps an op to its call + 1.
    let mut calls: Vec<(u32, (ModelRef, i64, usize))> = Vec::with_capacity(g.len());
    let mut slot = vec![0u32; ops.len()];
    let mut gpu_ns = 0;
    for i in 0..g.len() {
        gpu_ns += g.dur[i];
        let Owner::Op(op) = owner(a, i) else { continue };
        let Some((call, r)) = modelled.of(op) else { continue };
        let k = &mut slot[call as usize];
        if *k == 0 {
            calls.push((call, (r, 0, 0)));
            *k = calls.len() as u32;
        }
        let e = &mut calls[*k as usize - 1].1;
        e.1 += g.dur[i];
        e.2 += 1;
    }
    type Key = (NameId, NameId, NameId, NameId);
    let mut groups: FastMap<Key, (ModelRef, usize, usize, i64, Vec<i64>)> = FastMap::default();
    for (op, (r, ns, k)) in calls {
        let o = op as usize;
        let e = groups.entry((ops.name[o], ops.input_dims[o], ops.input_types[o], ops.concrete_inputs[o])).or_insert((
            r,
            0,
            0,
            0,
            Vec::new(),
        ));
        e.1 += 1;
        e.2 += k;
        e.3 += ns;
        e.4.push(ns);
    }
    let mut rows = Vec::new();
    let mut modeled_ns = 0;
    for ((name, dims, types, concrete), (r, n_calls, kernels, total_ns, mut call_ns)) in groups {
        let (name, dims_t, types_t, concrete_t) =
            (a.trace.name(name), a.trace.name(dims), a.trace.name(types), a.trace.name(concrete));
        let (d, t, c) = (parse_dims(dims_t), parse_types(types_t), parse_types(concrete_t));
        let Some(work) = work_of(r, name, &flops::Call { dims: &d, types: &t, concrete: &c }) else { continue };
        modeled_ns += total_ns;
        let median_tflops = median_rate(work.flops, &mut call_ns);
        rows.push(OpRow {
            name: name.to_string(),
            family: Family::of(r.model),
            input_dims: dims_t.to_string(),
            input_types: types_t.to_string(),
            concrete_inputs: concrete_t.to_string(),
            work,
            calls: n_calls,
            kernels,
            total_ns,
            median_tflops,
        });
    }
    rows.sort_by(|x, y| {
        y.total_ns.cmp(&x.total_ns).then_with(|| x.name.cmp(&y.name)).then_with(|| x.input_dims.cmp(&y.input_dims))
    });
    let peaks = devices::select(&a.trace.meta.devices, a.options.device.as_deref());
    Roofline { peaks, rows, modeled_ns, gpu_ns, device_kind: a.trace.meta.device_kind() }
}
