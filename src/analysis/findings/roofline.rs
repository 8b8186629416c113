//! `roofline`: GEMM and attention calls far below their roof, where shapes give their work. The
//! target is not a fixed share of the roof but what this trace's own calls of the same family
//! reach on this device: the time-weighted 90th percentile of their % of roof (capped at 100).
//! A row under half that target saves `time × (1 − its % / target)`, per step.

use super::{median_us, Finding, Group, Kind};
use crate::analysis::phases::Phase;
use crate::analysis::roofline::{Family, OpRow, Peaks};
use crate::analysis::Analysis;

/// The families judged: those whose kernels a better kernel or tile choice can speed up.
const FAMILIES: [Family; 3] = [Family::Gemm, Family::GroupedGemm, Family::Attention];

/// The time-weighted `q` quantile of `(value, weight)`.
fn weighted_quantile(mut v: Vec<(f64, f64)>, q: f64) -> f64 {
    v.sort_by(|x, y| x.0.total_cmp(&y.0));
    let total: f64 = v.iter().map(|x| x.1).sum();
    let mut seen = 0.0;
    for (value, w) in &v {
        seen += w;
        if seen >= q * total {
            return *value;
        }
    }
    v.last().map_or(0.0, |x| x.0)
}

/// The roofline findings of `a`, one per family with calls far from its roof.
pub fn far_from_roof(a: &Analysis, groups: &[Group]) -> Vec<Finding> {
    let r = a.roofline();
    let Some(peaks) = &r.peaks else { return Vec::new() };
    // Steps: every whole pass of the trace; their median wall time is the step.
    let passes: Vec<&Group> = groups.iter().filter(|g| g.phase != Phase::Stage && !g.is_capture()).collect();
    let steps: usize = passes.iter().map(|g| g.passes.len()).sum::<usize>().max(1);
    let step_us = median_us(passes.iter().flat_map(|g| g.steps.iter().map(|w| w.wall_ns())));
    let Some(min_share) = groups.first().map(|g| g.min_share) else { return Vec::new() };
    let mut out = Vec::new();
    for family in FAMILIES {
        let rows: Vec<(&OpRow, f64)> =
            r.family(family).filter(|x| x.work.flops > 0.0).map(|x| (x, x.against(peaks).pct_of_roof)).collect();
        if rows.is_empty() {
            continue;
        }
        let target = weighted_quantile(rows.iter().map(|(x, pct)| (pct.min(100.0), x.total_ns as f64)).collect(), 0.9);
        let far: Vec<&(&OpRow, f64)> = rows.iter().filter(|(_, pct)| *pct < target / 2.0).collect();
        let saved_ns: f64 = far.iter().map(|(x, pct)| x.total_ns as f64 * (1.0 - pct / target)).sum();
        let saving_us = saved_ns / 1e3 / steps as f64;
        if step_us <= 0.0 || saving_us < min_share * step_us || far.is_empty() {
            continue;
        }
        let (worst, pct) = far
            .iter()
            .max_by(|x, y| (x.0.total_ns as f64 * (1.0 - x.1 / target)).total_cmp(&(y.0.total_ns as f64 * (1.0 - y.1 / target))))
            .map(|x| (x.0, x.1))
            .unwrap();
        let far = FarFromRoof { family, far, worst, pct, target, shapes: rows.len() };
        let mut f = far.finding(peaks, saving_us, step_us, steps);
        // The calls are the trace's, not one step's: the window shown is a median step's.
        if let Some(g) = passes.iter().max_by_key(|g| g.passes.len()) {
            let i = g.median_pass(|i| g.steps[i].wall_ns());
            (f.from_ns, f.to_ns) = g.window(i);
        }
        out.push(f);
    }
    out
}

/// A `bmm`/`matmul` shaped like attention's scores or their product with V: `[b, s, d] × [b, d, s]`
/// or `[b, s, s] × [b, s, d]`, with a head dimension of at most 256 and a sequence of at least 256.
fn eager_attention(row: &OpRow) -> bool {
    if !matches!(row.name.as_str(), "aten::bmm" | "aten::matmul") {
        return false;
    }
    let dims = crate::analysis::shapes::parse_dims(&row.input_dims);
    let [x, y] = dims.as_slice() else { return false };
    let (n, m) = (x.len(), y.len());
    if n < 3 || m < 3 {
        return false;
    }
    let (s1, k1, k2, s2) = (x[n - 2], x[n - 1], y[m - 2], y[m - 1]);
    let scores = k1 == k2 && k1 <= 256 && s1 >= 256 && s1 == s2;
    let times_v = s1 >= 256 && k1 == s1 && k2 == s1 && s2 <= 256;
    scores || times_v
}

/// One family's calls far from their roof: the shapes under half the target, the costliest of
/// them and its share of its roof (%), the target (% of the roof this trace's best calls reach)
/// and how many shapes the family has.
struct FarFromRoof<'a> {
    family: Family,
    far: Vec<&'a (&'a OpRow, f64)>,
    worst: &'a OpRow,
    pct: f64,
    target: f64,
    shapes: usize,
}

impl FarFromRoof<'_> {
    /// The finding: `saving_us` a step of `step_us`, over `steps` steps.
    fn finding(&self, peaks: &Peaks, saving_us: f64, step_us: f64, steps: usize) -> Finding {
        let FarFromRoof { family, ref far, worst, pct, target, shapes } = *self;
        let v = worst.against(peaks);
        let fix = match family {
            Family::Gemm if eager_attention(worst) => "this batched GEMM is attention computed op by op (scores = Q·Kᵀ over the whole sequence): one fused attention kernel instead, torch.nn.functional.scaled_dot_product_attention (Hugging Face: attn_implementation=\"sdpa\" or \"flash_attention_2\"), which never writes the scores to memory",
            Family::Attention => "a faster attention kernel for these shapes: FlashAttention / FlashInfer / the engine's attention backend instead of SDPA's math or efficient path (torch.nn.attention.sdpa_kernel(SDPBackend.FLASH_ATTENTION)); on ROCm, aiter or CK flash attention",
            _ => "a better kernel or tile for these shapes: torch.compile(mode=\"max-autotune\") to tune GEMM tiles, dimensions padded to multiples of 64, FP8 weights for the memory-bound (decode) GEMMs; on ROCm, hipBLASLt (TORCH_BLAS_PREFER_HIPBLASLT=1) with tuned GEMMs (PYTORCH_TUNABLEOP_ENABLED=1)",
        };
        Finding {
            kind: Kind::Roofline,
            scope: format!("{} calls", family.as_str()),
            phase: None,
            device: None,
            passes: steps,
            subject: String::new(),
            evidence: format!(
                "{} of {shapes} {} shapes run under half the {target:.0}% of the roof this trace's own {} calls reach (time-weighted 90th percentile); the costliest: {} {} × {} calls at {pct:.1}% of its {} roof ({:.1} of {:.1} TFLOP/s)",
                far.len(),
                family.as_str(),
                family.as_str(),
                worst.name,
                worst.input_dims,
                worst.calls,
                v.bound,
                worst.tflops(),
                v.roof_tflops
            ),
            saving_us,
            saving_pct: 100.0 * saving_us / step_us,
            confidence: "medium: from recorded shapes; the target is what this trace's best calls reach, not a measured faster kernel".to_string(),
            fix: fix.to_string(),
            check: format!("the {} shapes above half of {target:.0}% of their roof in the roofline table", family.as_str()),
            from_ns: 0,
            to_ns: 0,
        }
    }
}
