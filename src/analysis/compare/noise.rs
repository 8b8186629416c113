//! A verdict that knows the noise: is a step of A slower than a step of B beyond what the steps
//! of each side vary by?
//!
//! The rule, one for `compare_verdict` and the gate's phases with few passes:
//!
//! - Each side's spread is the standard deviation of its own samples (its steps' times). A side
//!   with fewer than two steps takes its spread from the units its step is made of, when the
//!   structure gives them (its layers: the step's spread is the layers' times' standard deviation
//!   times √layers, as for a sum of independent parts).
//! - The noise of the difference is Student's t at the confidence asked (two-sided; Welch–
//!   Satterthwaite's degrees of freedom) times √(σa²/na + σb²/nb): the half-width of the interval
//!   the difference of the two sides' typical steps lies in by chance alone (Welch's t-test).
//! - **slower** / **faster**: the difference is beyond the noise and at least `band` of B's step;
//!   **same**: within the noise and the noise is within the band (a change of `band` would have
//!   shown), or beyond the noise but under the band; **inconclusive**: within the noise and the
//!   noise wider than the band, or no spread known on a side.

use serde::Serialize;

/// How A's step fares against B's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// A is slower beyond the noise and the band.
    Slower,
    /// A is faster beyond the noise and the band.
    Faster,
    /// No change the samples could show, or one under the band.
    Same,
    /// The samples are too few or too noisy to say.
    Inconclusive,
}

impl Change {
    /// The verdict as tables spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Slower => "slower",
            Change::Faster => "faster",
            Change::Same => "same",
            Change::Inconclusive => "inconclusive",
        }
    }
}

/// One side's samples, as the rule reads them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// Standard deviation of one sample (one step), µs.
    pub sd_us: f64,
    /// Samples it was estimated from (steps, or units of one step).
    pub samples: usize,
    /// Whether it came from the units of one step rather than from steps.
    pub from_units: bool,
}

impl Spread {
    /// The spread of `steps` (µs each), when there are at least two.
    pub fn of_steps(steps: &[f64]) -> Option<Spread> {
        (steps.len() >= 2).then(|| Spread { sd_us: sd(steps), samples: steps.len(), from_units: false })
    }
    /// The spread of one step made of `units` (µs each, at least three): their standard
    /// deviation times √units.
    pub fn of_units(units: &[f64]) -> Option<Spread> {
        (units.len() >= 3).then(|| Spread {
            sd_us: sd(units) * (units.len() as f64).sqrt(),
            samples: units.len(),
            from_units: true,
        })
    }
}

/// The sample standard deviation (n − 1) of `v` (0 for fewer than two).
pub fn sd(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let m = v.iter().sum::<f64>() / v.len() as f64;
    (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
}

/// The rule's answer for one pair of steps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judged {
    /// The verdict.
    pub change: Change,
    /// Half-width of the chance interval of the difference (µs); `None` when a side's spread is
    /// unknown.
    pub noise_us: Option<f64>,
}

/// Judges `delta_us` (A − B) against B's step of `b_step_us`, the two sides' spreads, at
/// `confidence` (two-sided) with the band of no practical change `band` (a share of B's step).
pub fn judge(delta_us: f64, b_step_us: f64, a: Option<Spread>, b: Option<Spread>, confidence: f64, band: f64) -> Judged {
    let (Some(a), Some(b)) = (a, b) else {
        return Judged { change: Change::Inconclusive, noise_us: None };
    };
    let (va, vb) = (a.sd_us * a.sd_us / a.samples as f64, b.sd_us * b.sd_us / b.samples as f64);
    let se = (va + vb).sqrt();
    // Welch–Satterthwaite's degrees of freedom (the smaller side's n − 1 when both spreads are 0).
    let df = if va + vb > 0.0 {
        (va + vb).powi(2) / (va * va / (a.samples as f64 - 1.0) + vb * vb / (b.samples as f64 - 1.0))
    } else {
        (a.samples.min(b.samples) as f64 - 1.0).max(1.0)
    };
    let noise = student_t_quantile(0.5 + confidence.clamp(0.5, 0.9999) / 2.0, df.max(1.0)) * se;
    let band_us = band * b_step_us.abs();
    let change = if delta_us.abs() > noise {
        if delta_us.abs() < band_us {
            Change::Same
        } else if delta_us > 0.0 {
            Change::Slower
        } else {
            Change::Faster
        }
    } else if noise <= band_us {
        Change::Same
    } else {
        Change::Inconclusive
    };
    Judged { change, noise_us: Some(noise) }
}

/// The `p` quantile of Student's t with `df` degrees of freedom: its distribution function
/// integrated from 0 (Simpson's rule on the density) and inverted by bisection.
pub fn student_t_quantile(p: f64, df: f64) -> f64 {
    if p <= 0.5 {
        return 0.0;
    }
    let ln_c = ln_gamma((df + 1.0) / 2.0) - ln_gamma(df / 2.0) - 0.5 * (df * std::f64::consts::PI).ln();
    let density = |x: f64| (ln_c - (df + 1.0) / 2.0 * (1.0 + x * x / df).ln()).exp();
    // P(0 < T < t), by Simpson's rule on 400 intervals.
    let mass = |t: f64| {
        let n = 400;
        let h = t / n as f64;
        let mut s = density(0.0) + density(t);
        for i in 1..n {
            s += density(i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
        }
        s * h / 3.0
    };
    let want = p - 0.5;
    let (mut lo, mut hi) = (0.0, 1.0);
    while mass(hi) < want && hi < 1e7 {
        lo = hi;
        hi *= 2.0;
    }
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if mass(mid) < want {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, |error| < 1e-13 over the range used here).
fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + 7.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Student's t quantiles against published tables (two-sided 99%: the 0.995 quantile).
    #[test]
    fn t_quantiles_match_the_tables() {
        for (df, want) in [(1.0, 63.657), (2.0, 9.925), (3.0, 5.841), (4.0, 4.604), (10.0, 3.169), (30.0, 2.750)] {
            let got = student_t_quantile(0.995, df);
            assert!((got - want).abs() / want < 2e-3, "df {df}: {got} vs {want}");
        }
        assert!((student_t_quantile(0.975, 5.0) - 2.571).abs() < 2e-3);
    }

    /// Four tight steps a side settle a 5% change; four noisy ones do not; one step a side
    /// with no units says nothing.
    #[test]
    fn the_rule_settles_tight_steps_and_not_noisy_ones() {
        let b: Vec<f64> = vec![150_000.0, 150_070.0, 149_950.0, 150_020.0];
        let a: Vec<f64> = b.iter().map(|x| x * 1.049).collect();
        let j = judge(7_400.0, 150_000.0, Spread::of_steps(&a), Spread::of_steps(&b), 0.99, 0.01);
        assert_eq!(j.change, Change::Slower);
        assert!(j.noise_us.unwrap() < 1_000.0);
        let noisy_b = vec![140_000.0, 165_000.0, 150_000.0, 130_000.0];
        let noisy_a = vec![150_000.0, 170_000.0, 140_000.0, 160_000.0];
        let j = judge(7_400.0, 150_000.0, Spread::of_steps(&noisy_a), Spread::of_steps(&noisy_b), 0.99, 0.01);
        assert_eq!(j.change, Change::Inconclusive);
        assert_eq!(judge(7_400.0, 150_000.0, None, Spread::of_steps(&b), 0.99, 0.01).change, Change::Inconclusive);
        // the same steps on both sides: same
        let j = judge(0.0, 150_000.0, Spread::of_steps(&b), Spread::of_steps(&b), 0.99, 0.01);
        assert_eq!(j.change, Change::Same);
    }
}
