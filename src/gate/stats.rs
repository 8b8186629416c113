//! The statistics of the regression gate: medians, a bootstrap confidence interval of the ratio of
//! two medians (fixed seed: the same samples give the same interval), and the Mann–Whitney rank
//! test's two-sided p-value (normal approximation with tie correction).

/// The median of `v` (mean of the two middle values for an even count); `None` when empty.
pub fn median(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    Some(if n % 2 == 1 { s[n / 2] } else { (s[n / 2 - 1] + s[n / 2]) / 2.0 })
}

/// The mean of `v` (0 when empty).
pub fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// Resamples drawn by [`ratio_interval`].
pub const BOOTSTRAP_RESAMPLES: usize = 2000;

/// Seed of the bootstrap: fixed, so a verdict is reproducible.
pub const BOOTSTRAP_SEED: u64 = 0x7472_6163_6570_7269;

/// The percentile bootstrap interval of median(new) / median(base) at `confidence` (two-sided),
/// or `None` when either side is empty or the base median is not positive.
pub fn ratio_interval(base: &[f64], new: &[f64], confidence: f64) -> Option<(f64, f64)> {
    if base.is_empty() || new.is_empty() || median(base)? <= 0.0 {
        return None;
    }
    let mut mix = crate::support::mix::SplitMix64::new(BOOTSTRAP_SEED);
    let mut ratios = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    let (mut a, mut b) = (vec![0.0; base.len()], vec![0.0; new.len()]);
    for _ in 0..BOOTSTRAP_RESAMPLES {
        for x in a.iter_mut() {
            *x = base[mix.below(base.len())];
        }
        for x in b.iter_mut() {
            *x = new[mix.below(new.len())];
        }
        let (ma, mb) = (median(&a)?, median(&b)?);
        if ma > 0.0 {
            ratios.push(mb / ma);
        }
    }
    ratios.sort_by(f64::total_cmp);
    let tail = (1.0 - confidence.clamp(0.5, 0.9999)) / 2.0;
    let at = |q: f64| ratios[((q * (ratios.len() - 1) as f64).round() as usize).min(ratios.len() - 1)];
    (!ratios.is_empty()).then(|| (at(tail), at(1.0 - tail)))
}

/// The two-sided p-value of the Mann–Whitney U test of `a` against `b` (normal approximation,
/// tie-corrected); 1 when either side is empty or every value ties.
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> f64 {
    let (n1, n2) = (a.len() as f64, b.len() as f64);
    if a.is_empty() || b.is_empty() {
        return 1.0;
    }
    let mut all: Vec<(f64, bool)> = a.iter().map(|&x| (x, true)).chain(b.iter().map(|&x| (x, false))).collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let n = all.len();
    let (mut rank_a, mut ties) = (0.0, 0.0);
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        let t = (j - i + 1) as f64;
        ties += t * t * t - t;
        rank_a += all[i..=j].iter().filter(|x| x.1).count() as f64 * rank;
        i = j + 1;
    }
    let u = rank_a - n1 * (n1 + 1.0) / 2.0;
    let mu = n1 * n2 / 2.0;
    let total = n1 + n2;
    let var = n1 * n2 / 12.0 * ((total + 1.0) - ties / (total * (total - 1.0)));
    if var <= 0.0 {
        return 1.0;
    }
    let z = ((u - mu).abs() - 0.5).max(0.0) / var.sqrt();
    (2.0 * (1.0 - normal_cdf(z))).clamp(0.0, 1.0)
}

/// The standard normal distribution function (Abramowitz–Stegun 7.1.26, |error| < 1.5e-7).
fn normal_cdf(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t * (0.254_829_592 + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-x * x).exp();
    if z >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_the_normal_distribution() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert!((normal_cdf(1.959_964) - 0.975).abs() < 1e-6);
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-9);
    }

    #[test]
    fn mann_whitney_separates_shifted_samples_and_not_equal_ones() {
        let a: Vec<f64> = (0..20).map(|i| 100.0 + i as f64).collect();
        let b: Vec<f64> = (0..20).map(|i| 130.0 + i as f64).collect();
        assert!(mann_whitney_p(&a, &b) < 1e-5);
        assert!(mann_whitney_p(&a, &a) > 0.9);
        // scipy.stats.mannwhitneyu([1,2,3,4,5],[6,7,8,9,10]) two-sided, normal approx with
        // continuity: p = 0.0122.
        let p = mann_whitney_p(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]);
        assert!((p - 0.0122).abs() < 0.001, "{p}");
    }

    #[test]
    fn the_bootstrap_interval_holds_the_ratio_and_is_reproducible() {
        let a: Vec<f64> = (0..30).map(|i| 100.0 + (i % 5) as f64).collect();
        let b: Vec<f64> = a.iter().map(|x| x * 1.1).collect();
        let (lo, hi) = ratio_interval(&a, &b, 0.99).unwrap();
        assert!(lo <= 1.1 && hi >= 1.1 && hi - lo < 0.1, "{lo} {hi}");
        assert_eq!(ratio_interval(&a, &b, 0.99), Some((lo, hi)));
    }
}
