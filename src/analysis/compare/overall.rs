//! Overall level: totals of each side (GPU time, kernel time, memory time, busy and idle time,
//! per-phase kernel time, passes), each compared per pass.

use super::{judge, passes_in, Agg, CompareOptions, Side, Verdict};
use crate::analysis::phases::Phase;
use crate::analysis::timeline::{length, merge};
use crate::model::GpuKind;

/// Value of one overall metric on one side.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A text (a device, a workload).
    Text(String),
    /// A count.
    Count(i64),
    /// Time in ns.
    Time(i64),
}

/// One row of the overall comparison.
#[derive(Debug, Clone)]
pub struct Metric {
    /// The metric's name.
    pub name: String,
    /// Side A's value.
    pub a: Value,
    /// Side B's value.
    pub b: Value,
    /// Per-pass comparison for time metrics (`None` for text and counts).
    pub verdict: Option<Verdict>,
    /// Per-pass divisors of this metric on each side.
    pub a_div: f64,
    /// Side B's per-pass divisor.
    pub b_div: f64,
}

/// The overall comparison plus the facts the summary prints.
#[derive(Debug, Clone)]
pub struct Overall {
    /// Every metric, in the order shown.
    pub metrics: Vec<Metric>,
    /// Per-pass divisors of each side.
    pub a_div: f64,
    /// Side B's per-pass divisor.
    pub b_div: f64,
}

/// Totals of one side.
struct Totals {
    gpu: Agg,
    kernels: Agg,
    memcpy: Agg,
    memset: Agg,
    busy: i64,
    span: i64,
    by_phase: Vec<(&'static str, Agg)>,
}

const PHASES: &[(Option<Phase>, &str)] = &[
    (Some(Phase::Prefill), "prefill"),
    (Some(Phase::Decode), "decode"),
    (Some(Phase::Mixed), "mixed"),
    (Some(Phase::Denoise), "denoise"),
    (Some(Phase::Stage), "stage"),
    (Some(Phase::Unknown), "unknown"),
    (Some(Phase::NotInference), "not-inference"),
    (None, "no phase"),
];

fn totals(s: &Side) -> Totals {
    let g = &s.analysis.trace.gpu;
    let (mut gpu, mut kernels, mut memcpy, mut memset) = (Agg::default(), Agg::default(), Agg::default(), Agg::default());
    let mut by_phase: Vec<(&'static str, Agg)> = PHASES.iter().map(|(_, n)| (*n, Agg::default())).collect();
    let mut per_device: std::collections::BTreeMap<i32, Vec<(i64, i64)>> = Default::default();
    for &i in &s.rows {
        let d = g.dur[i];
        gpu.add(d);
        match g.kind[i] {
            GpuKind::Kernel => {
                kernels.add(d);
                let ph = s.analysis.phases.phase_of_row.get(i).copied().flatten();
                if let Some(k) = PHASES.iter().position(|(p, _)| *p == ph) {
                    by_phase[k].1.add(d);
                }
            }
            GpuKind::Memcpy => memcpy.add(d),
            GpuKind::Memset => memset.add(d),
        }
        per_device.entry(g.device[i]).or_default().push((g.ts[i], g.end(i)));
    }
    let (mut busy, mut span) = (0, 0);
    for (_, v) in per_device {
        let m = merge(v);
        busy += length(&m);
        if let (Some(f), Some(l)) = (m.first(), m.last()) {
            span += l.1 - f.0;
        }
    }
    Totals { gpu, kernels, memcpy, memset, busy, span, by_phase }
}

/// Builds the overall comparison.
pub fn overall(a: &Side, b: &Side, phase: Option<Phase>, opts: &CompareOptions) -> Overall {
    let (ta, tb) = (totals(a), totals(b));
    let (a_div, b_div) = (a.pass_divisor(), b.pass_divisor());
    let mut metrics = Vec::new();
    let text = |name: &str, x: String, y: String| Metric {
        name: name.into(),
        a: Value::Text(x),
        b: Value::Text(y),
        verdict: None,
        a_div: 1.0,
        b_div: 1.0,
    };
    metrics.push(text("label", a.label.clone(), b.label.clone()));
    metrics.push(text("gpu", a.analysis.trace.meta.device_label(), b.analysis.trace.meta.device_label()));
    let vendor = |s: &Side| format!("{:?}", s.analysis.trace.meta.vendor).to_lowercase();
    metrics.push(text("vendor", vendor(a), vendor(b)));
    let ph = phase.map_or("all", |p| p.as_str()).to_string();
    metrics.push(text("phase selected", ph.clone(), ph));
    metrics.push(Metric {
        name: "forward passes".into(),
        a: Value::Count(a.passes as i64),
        b: Value::Count(b.passes as i64),
        verdict: None,
        a_div: 1.0,
        b_div: 1.0,
    });
    let time = |name: &str, x: Agg, y: Agg| Metric {
        name: name.into(),
        a: Value::Time(x.time_ns),
        b: Value::Time(y.time_ns),
        verdict: Some(judge(x, y, a_div, b_div, opts)),
        a_div,
        b_div,
    };
    let count = |name: &str, x: usize, y: usize| Metric {
        name: name.into(),
        a: Value::Count(x as i64),
        b: Value::Count(y as i64),
        verdict: None,
        a_div: 1.0,
        b_div: 1.0,
    };
    metrics.push(count("gpu events", ta.gpu.count, tb.gpu.count));
    metrics.push(count("kernels", ta.kernels.count, tb.kernels.count));
    metrics.push(time("gpu time (kernels + memcpy + memset)", ta.gpu, tb.gpu));
    metrics.push(time("kernel time", ta.kernels, tb.kernels));
    metrics.push(time("memcpy time", ta.memcpy, tb.memcpy));
    metrics.push(time("memset time", ta.memset, tb.memset));
    let as_agg = |t: i64| Agg { count: 1, time_ns: t };
    metrics.push(time("busy time (union of gpu events)", as_agg(ta.busy), as_agg(tb.busy)));
    metrics.push(time("span (first start to last end)", as_agg(ta.span), as_agg(tb.span)));
    metrics.push(time("idle time (span - busy)", as_agg(ta.span - ta.busy), as_agg(tb.span - tb.busy)));
    for (((name, x), (_, y)), (p, _)) in ta.by_phase.iter().zip(&tb.by_phase).zip(PHASES) {
        if x.count == 0 && y.count == 0 {
            continue;
        }
        // per pass of that phase (kernels with no phase: whole-trace totals)
        let div = |s: &Side| p.map_or(1, |p| passes_in(s.analysis, Some(p)).max(1)) as f64;
        metrics.push(Metric {
            name: format!("kernel time, phase {name}"),
            a: Value::Time(x.time_ns),
            b: Value::Time(y.time_ns),
            verdict: Some(judge(*x, *y, div(a), div(b), opts)),
            a_div: div(a),
            b_div: div(b),
        });
    }
    Overall { metrics, a_div, b_div }
}
