//! The regression gate (beside the reports: it reads an analysis's summary and its passes): is a new build slower than a baseline, beyond noise, where, and by how
//! much. Both sides are [`Digest`]s (a trace is digested first). Per phase, the per-pass samples
//! (GPU kernel time by default, wall duration with [`Metric::Wall`]) give the ratio of medians
//! NEW / BASELINE with a bootstrap confidence interval and a rank test's p-value; the same per
//! category within each phase. A verdict is `regression` when the interval's lower bound is above
//! 1 + tolerance, `improvement` when its upper bound is below 1 − tolerance, `no change` when the
//! interval lies inside the band, else `inconclusive` (with the passes per side that would settle
//! it). With fewer than [`MIN_PASSES`] passes a side, the rule of `compare`'s verdict decides
//! ([`crate::analysis::compare::noise`]: the medians' difference against each side's spread). The
//! overall verdict is the worst phase's among the phases judged (inconclusive when none was). A regression is attributed to the categories,
//! layers and kernels whose per-pass time moved most.

pub mod digest;
pub mod markdown;
pub mod stats;
pub mod trend;

pub use digest::{Digest, PhaseDigest};
use serde::Serialize;

/// Which per-pass time is compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    /// GPU kernel time of the pass (decode steps are often host-bound: wall time hides the GPU).
    Kernel,
    /// The pass's wall duration.
    Wall,
}

pub use crate::analysis::options::{fraction, parse_share, GivenShare};

/// How the gate decides.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GateOptions {
    /// The band of no change: ±this share (0.03 = 3%).
    pub max_slowdown: f64,
    /// Two-sided confidence of the interval.
    pub confidence: f64,
    /// Which per-pass time.
    pub metric: Metric,
}

impl Default for GateOptions {
    fn default() -> Self {
        GateOptions { max_slowdown: 0.03, confidence: 0.99, metric: Metric::Kernel }
    }
}

impl Metric {
    /// `kernel` or `wall`; anything else is an error naming `key` (the face's name of the option).
    pub fn parse(key: &str, v: &str) -> crate::error::Result<Metric> {
        match v {
            "kernel" => Ok(Metric::Kernel),
            "wall" => Ok(Metric::Wall),
            other => Err(crate::error::Error::new(format!("{key}: kernel or wall, not {other}"))),
        }
    }
}

impl GateOptions {
    /// The gate's options from what a face was given (each `None` keeps the default), checked
    /// by one rule for the command line, MCP and the page: shares in range, the metric `kernel`
    /// or `wall`. `keys` are the face's names of the three options, for its errors.
    pub fn from_given(
        keys: [&str; 3],
        max_slowdown: Option<GivenShare<'_>>,
        confidence: Option<GivenShare<'_>>,
        metric: Option<&str>,
    ) -> crate::error::Result<GateOptions> {
        let mut o = GateOptions::default();
        if let Some(v) = max_slowdown {
            o.max_slowdown = parse_share(keys[0], v)?;
        }
        if let Some(v) = confidence {
            o.confidence = parse_share(keys[1], v)?;
        }
        if let Some(m) = metric {
            o.metric = Metric::parse(keys[2], m)?;
        }
        Ok(o)
    }
}

/// Fewest passes per side for any verdict but `inconclusive`.
pub const MIN_PASSES: usize = 5;

/// A verdict, ordered from best to worst (the overall verdict is the worst phase's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Faster beyond noise.
    Improvement,
    /// No change beyond the slowdown allowed.
    NoChange,
    /// Too few or too noisy samples to say.
    Inconclusive,
    /// Slower beyond the slowdown allowed.
    Regression,
}

impl Verdict {
    /// The verdict's words.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Improvement => "improvement",
            Verdict::NoChange => "no change",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Regression => "regression",
        }
    }
    /// The process exit status of a gate with this overall verdict.
    pub fn exit_code(self) -> i32 {
        match self {
            Verdict::Improvement | Verdict::NoChange => 0,
            Verdict::Regression => 1,
            Verdict::Inconclusive => 2,
        }
    }
}

/// One test: a phase, or a category within a phase.
#[derive(Debug, Clone, Serialize)]
pub struct Test {
    /// `decode`, or `decode / GEMM-cuBLAS`.
    pub what: String,
    /// Passes per side.
    pub base_passes: usize,
    /// Passes of the new trace.
    pub new_passes: usize,
    /// Median per-pass time per side, µs.
    pub base_median_us: f64,
    /// Median of the new trace's passes (µs).
    pub new_median_us: f64,
    /// median(new) / median(base).
    pub ratio: Option<f64>,
    /// Its confidence interval.
    pub interval: Option<(f64, f64)>,
    /// The rank test's two-sided p-value.
    pub p_value: f64,
    /// The phase's verdict.
    pub verdict: Verdict,
    /// Why inconclusive, or what would settle it.
    pub note: Option<String>,
}

/// What moved, per pass.
#[derive(Debug, Clone, Serialize)]
pub struct Moved {
    /// `category`, `layer` or `kernel`.
    pub level: &'static str,
    /// The test's name.
    pub name: String,
    /// Mean per-pass time NEW − BASELINE, µs (median per pass for layers).
    pub delta_us_per_pass: f64,
    /// Its share of the phase's per-pass change.
    pub share_of_change: f64,
}

/// One phase's result.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseResult {
    /// The phase.
    pub phase: String,
    /// Its test and verdict.
    pub test: Test,
    /// Per category within the phase.
    pub categories: Vec<Test>,
    /// The categories, layers and kernels whose per-pass time moved most (largest first).
    pub attribution: Vec<Moved>,
}

impl PhaseResult {
    /// The categories of the phase whose verdict is a change (regression or improvement).
    pub fn changed_categories(&self) -> impl Iterator<Item = &Test> {
        self.categories.iter().filter(|c| matches!(c.verdict, Verdict::Regression | Verdict::Improvement))
    }
}

/// The gate's answer.
#[derive(Debug, Clone, Serialize)]
pub struct GateReport {
    /// The verdict over every phase.
    pub overall: Verdict,
    /// The options the gate ran with.
    pub options: GateOptionsView,
    /// The baseline's source.
    pub base: String,
    /// The new trace's source.
    pub new: String,
    /// Each phase's result.
    pub phases: Vec<PhaseResult>,
    /// Differences the user must know of (other device, other model shape, a phase on one side only).
    pub warnings: Vec<String>,
}

/// The options as reported.
#[derive(Debug, Clone, Serialize)]
pub struct GateOptionsView {
    /// Slowdown allowed, a share.
    pub max_slowdown: f64,
    /// Confidence of the verdict.
    pub confidence: f64,
    /// Which time is compared.
    pub metric: Metric,
}

fn us(ns: &[i64]) -> Vec<f64> {
    ns.iter().map(|&v| v as f64 / 1000.0).collect()
}

/// Tests `new` against `base` samples (µs).
pub fn test(what: &str, base: &[f64], new: &[f64], o: &GateOptions) -> Test {
    let (bm, nm) = (stats::median(base).unwrap_or(0.0), stats::median(new).unwrap_or(0.0));
    let mut t = Test {
        what: what.to_string(),
        base_passes: base.len(),
        new_passes: new.len(),
        base_median_us: bm,
        new_median_us: nm,
        ratio: (bm > 0.0).then(|| nm / bm),
        interval: None,
        p_value: stats::mann_whitney_p(base, new),
        verdict: Verdict::Inconclusive,
        note: None,
    };
    let fewest = base.len().min(new.len());
    if fewest < MIN_PASSES {
        return few_passes(t, base, new, None, o);
    }
    let Some((lo, hi)) = stats::ratio_interval(base, new, o.confidence) else {
        t.note = Some("no time on the baseline side".to_string());
        return t;
    };
    t.interval = Some((lo, hi));
    let tol = o.max_slowdown;
    t.verdict = if lo > 1.0 + tol {
        Verdict::Regression
    } else if hi < 1.0 - tol {
        Verdict::Improvement
    } else if lo >= 1.0 - tol && hi <= 1.0 + tol {
        Verdict::NoChange
    } else {
        Verdict::Inconclusive
    };
    if t.verdict == Verdict::Inconclusive {
        // The interval shrinks as 1/sqrt(n): the passes that would narrow it to the distance
        // between the ratio and the nearer edge of the band.
        let ratio = t.ratio.unwrap_or(1.0);
        let half = (hi - lo) / 2.0;
        let target = ((ratio - 1.0).abs() - tol).abs().max(tol / 4.0);
        let needed = (fewest as f64 * (half / target).powi(2)).ceil() as usize;
        t.note = Some(format!("the interval is too wide: about {} passes per side would settle it", needed.max(fewest + 1)));
    }
    t
}

/// The verdict of a test with fewer than [`MIN_PASSES`] passes a side, by the rule `compare`'s
/// verdict uses ([`crate::analysis::compare::noise`]): the medians' difference against each
/// side's spread (its passes', or with one pass its layers' given in `units`), at the gate's
/// confidence, the band of no change its allowed slowdown. Four tight passes a side settle a 5%
/// change; a noisy pair stays inconclusive.
fn few_passes(mut t: Test, base: &[f64], new: &[f64], units: Option<(&[f64], &[f64])>, o: &GateOptions) -> Test {
    use crate::analysis::compare::noise::{judge, Change, Spread};
    let spread = |v: &[f64], u: Option<&[f64]>| Spread::of_steps(v).or_else(|| u.and_then(Spread::of_units));
    let (sb, sn) = (spread(base, units.map(|u| u.0)), spread(new, units.map(|u| u.1)));
    let j = judge(t.new_median_us - t.base_median_us, t.base_median_us, sn, sb, o.confidence, o.max_slowdown);
    t.verdict = match j.change {
        Change::Slower => Verdict::Regression,
        Change::Faster => Verdict::Improvement,
        Change::Same => Verdict::NoChange,
        Change::Inconclusive => Verdict::Inconclusive,
    };
    t.note = Some(match j.noise_us {
        Some(noise) => format!(
            "{} and {} passes: the medians differ by {:+.1} µs against noise of ±{noise:.1} µs (Student's t on each side's spread{}); at least {MIN_PASSES} passes per side give the bootstrap interval",
            base.len(),
            new.len(),
            t.new_median_us - t.base_median_us,
            if sb.is_some_and(|s| s.from_units) || sn.is_some_and(|s| s.from_units) { ", a single pass's from its layers" } else { "" }
        ),
        None => format!("{} and {} passes: at least 2 per side (or layers to time) would give the noise, {MIN_PASSES} the bootstrap interval", base.len(), new.len()),
    });
    t
}

/// The gate: `new` against `base`.
pub fn gate(base: &Digest, new: &Digest, o: &GateOptions) -> GateReport {
    let mut warnings = Vec::new();
    if base.device != new.device {
        warnings.push(format!("different devices: {} (baseline) and {} (new)", base.device, new.device));
    }
    if base.layers_per_pass != new.layers_per_pass || base.layer_kinds != new.layer_kinds {
        warnings.push(format!(
            "different model shapes: {:?} layers per pass (baseline) and {:?} (new)",
            base.layers_per_pass, new.layers_per_pass
        ));
    }
    if base.workload != new.workload {
        warnings.push(format!("different workloads: {} (baseline) and {} (new)", base.workload, new.workload));
    }
    let mut phases = Vec::new();
    for (name, b) in &base.phases {
        let Some(n) = new.phases.get(name) else {
            warnings.push(format!("{name}: in the baseline only ({} passes)", b.passes));
            continue;
        };
        let (bs, ns) = match o.metric {
            Metric::Kernel => (us(&b.kernel_ns), us(&n.kernel_ns)),
            Metric::Wall => (us(&b.wall_ns), us(&n.wall_ns)),
        };
        let mut phase_test = test(name, &bs, &ns, o);
        if phase_test.base_passes.min(phase_test.new_passes) < 2 && o.metric == Metric::Kernel {
            // One pass a side: its layers are the units the noise comes from.
            let layers = |d: &PhaseDigest| us(&d.layer_median_ns.values().copied().collect::<Vec<_>>());
            let (bl, nl) = (layers(b), layers(n));
            phase_test = few_passes(phase_test, &bs, &ns, Some((&bl, &nl)), o);
        }
        let categories = b
            .categories
            .iter()
            .filter_map(|(cat, bv)| {
                let nv = n.categories.get(cat)?;
                Some(test(&format!("{name} / {cat}"), &us(bv), &us(nv), o))
            })
            .collect();
        phases.push(PhaseResult { phase: name.clone(), attribution: attribution(b, n), test: phase_test, categories });
    }
    for (name, n) in &new.phases {
        if !base.phases.contains_key(name) {
            warnings.push(format!("{name}: in the new trace only ({} passes)", n.passes));
        }
    }
    // The worst phase among those with enough passes to judge (one prefill beside 30 decode steps
    // must not make every generate() trace inconclusive); with none, inconclusive.
    let judged =
        |p: &&PhaseResult| p.test.verdict != Verdict::Inconclusive || p.test.base_passes.min(p.test.new_passes) >= MIN_PASSES;
    let overall = phases.iter().filter(judged).map(|p| p.test.verdict).max().unwrap_or(Verdict::Inconclusive);
    if base.phases.is_empty() && new.phases.is_empty() {
        // Never inconclusive without saying why.
        warnings.push(format!(
            "neither trace has a pass to time (workload {} and {}): the gate compares time per forward pass or step, so it cannot judge these; record several steps (torch.profiler.schedule with prof.step(), or a step range per iteration)",
            base.workload, new.workload
        ));
    }
    GateReport {
        overall,
        options: GateOptionsView { max_slowdown: o.max_slowdown, confidence: o.confidence, metric: o.metric },
        base: base.source.clone(),
        new: new.source.clone(),
        phases,
        warnings,
    }
}

/// The categories, layers and kernels whose per-pass time moved most, largest first (10 of each
/// level at most), each with its share of the phase's change in mean per-pass kernel time.
fn attribution(b: &PhaseDigest, n: &PhaseDigest) -> Vec<Moved> {
    let mean = |v: &[i64]| stats::mean(&us(v));
    let change = mean(&n.kernel_ns) - mean(&b.kernel_ns);
    let share = |d: f64| if change.abs() > 1e-9 { d / change } else { 0.0 };
    let mut out = Vec::new();
    let mut level = |name: &'static str, moved: Vec<(String, f64)>| {
        let mut moved = moved;
        moved.sort_by(|x, y| y.1.abs().total_cmp(&x.1.abs()).then(x.0.cmp(&y.0)));
        out.extend(moved.into_iter().take(10).map(|(what, d)| Moved {
            level: name,
            name: what,
            delta_us_per_pass: d,
            share_of_change: share(d),
        }));
    };
    let keyed = |bm: &std::collections::BTreeMap<String, Vec<i64>>, nm: &std::collections::BTreeMap<String, Vec<i64>>| {
        let mut keys: Vec<&String> = bm.keys().chain(nm.keys()).collect();
        keys.sort();
        keys.dedup();
        keys.into_iter()
            .map(|k| (k.clone(), nm.get(k).map_or(0.0, |v| mean(v)) - bm.get(k).map_or(0.0, |v| mean(v))))
            .collect::<Vec<_>>()
    };
    level("category", keyed(&b.categories, &n.categories));
    let mut layers: Vec<u32> = b.layer_median_ns.keys().chain(n.layer_median_ns.keys()).copied().collect();
    layers.sort_unstable();
    layers.dedup();
    level(
        "layer",
        layers
            .into_iter()
            .map(|l| {
                let get = |m: &std::collections::BTreeMap<u32, i64>| m.get(&l).map_or(0.0, |&v| v as f64 / 1000.0);
                (format!("layer {l}"), get(&n.layer_median_ns) - get(&b.layer_median_ns))
            })
            .collect(),
    );
    level("kernel", keyed(&b.kernels, &n.kernels));
    out
}

#[cfg(test)]
mod tests {
    use super::{GateOptions, GivenShare, Metric};

    #[test]
    fn every_face_gets_one_reading_of_the_gate_options() {
        let keys = ["max", "conf", "metric"];
        let text =
            GateOptions::from_given(keys, Some(GivenShare::Text("5%")), Some(GivenShare::Text("0.95")), Some("wall")).unwrap();
        let number =
            GateOptions::from_given(keys, Some(GivenShare::Number(5.0)), Some(GivenShare::Number(0.95)), Some("wall")).unwrap();
        assert_eq!(text, number);
        assert_eq!((text.max_slowdown, text.confidence, text.metric), (0.05, 0.95, Metric::Wall));
        assert_eq!(GateOptions::from_given(keys, None, None, None).unwrap(), GateOptions::default());
        // Out of range and unknown: errors naming the option as the face calls it, never the default.
        let err = |m: Option<GivenShare<'_>>, metric: Option<&str>| {
            GateOptions::from_given(keys, m, None, metric).unwrap_err().to_string()
        };
        assert_eq!(err(Some(GivenShare::Number(150.0)), None), "max: 150 is out of range");
        assert_eq!(err(Some(GivenShare::Text("-1")), None), "max: -1 is out of range");
        assert_eq!(err(Some(GivenShare::Text("three")), None), "max: 'three' is not a number");
        assert_eq!(err(None, Some("latency")), "metric: kernel or wall, not latency");
    }
}
