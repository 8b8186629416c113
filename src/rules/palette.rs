//! One colour per kernel family, keyed by the family's name (never by its place in a list), so a
//! family has the same colour in the page's charts and timeline, the HTML report and every trace.
//!
//! The ten colours (nine families and the timeline's CPU lanes) were chosen so that no two are
//! closer than CIEDE2000 20 in normal vision, and none closer than 13 under simulated
//! deuteranopia or protanopia (Machado et al. 2009, full severity): any two families, neighbours in
//! a stacked bar or not. The unit test below checks both. A family a user's rules add takes one of
//! [`EXTRA`] by a hash of its name (no distance promised); names stay on hover and in legends for
//! whoever cannot tell colours apart.

/// Colour of each built-in family (and of CPU lanes), `#rrggbb`.
pub const FAMILY_COLOURS: &[(&str, &str)] = &[
    ("GEMM", "#4050e0"),
    ("Attention", "#d0a010"),
    ("Norm", "#408050"),
    ("Activation", "#70e0d0"),
    ("MoE", "#b02080"),
    ("Communication", "#e00000"),
    ("Memory", "#a080d0"),
    ("Elementwise/Reduce", "#c0d090"),
    ("Other", "#9a9a9a"),
    ("CPU", "#f05070"),
];

/// Colours for families the built-in table does not name.
pub const EXTRA: &[&str] = &["#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#332288", "#88ccee"];

/// The colour of a family by name.
pub fn family_colour(family: &str) -> &'static str {
    if let Some((_, c)) = FAMILY_COLOURS.iter().find(|(f, _)| *f == family) {
        return c;
    }
    let h = family.bytes().fold(0xcbf29ce484222325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100000001b3));
    EXTRA[(h % EXTRA.len() as u64) as usize]
}

/// Every family colour as `{family: colour}` (built-in ones), for the page.
pub fn family_colours<'a>(families: impl IntoIterator<Item = &'a str>) -> std::collections::BTreeMap<String, &'static str> {
    families.into_iter().map(|f| (f.to_string(), family_colour(f))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rgb(hex: &str) -> [f64; 3] {
        let v = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).unwrap() as f64 / 255.0;
        [v(1), v(3), v(5)]
    }
    fn linear(c: f64) -> f64 {
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    }
    fn gamma(c: f64) -> f64 {
        let c = c.clamp(0.0, 1.0);
        if c <= 0.0031308 {
            12.92 * c
        } else {
            1.055 * c.powf(1.0 / 2.4) - 0.055
        }
    }
    /// sRGB (0..1) to CIE L*a*b* (D65).
    fn lab(c: [f64; 3]) -> [f64; 3] {
        let [r, g, b] = c.map(linear);
        let x = (0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / 0.95047;
        let y = 0.2126729 * r + 0.7151522 * g + 0.0721750 * b;
        let z = (0.0193339 * r + 0.1191920 * g + 0.9503041 * b) / 1.08883;
        let f = |t: f64| if t > 216.0 / 24389.0 { t.cbrt() } else { (24389.0 / 27.0 * t + 16.0) / 116.0 };
        [116.0 * f(y) - 16.0, 500.0 * (f(x) - f(y)), 200.0 * (f(y) - f(z))]
    }
    /// CIEDE2000 (Sharma, Wu and Dalal's formulation).
    fn de2000(p: [f64; 3], q: [f64; 3]) -> f64 {
        let (l1, a1, b1, l2, a2, b2) = (p[0], p[1], p[2], q[0], q[1], q[2]);
        let cb = (a1.hypot(b1) + a2.hypot(b2)) / 2.0;
        let g = 0.5 * (1.0 - (cb.powi(7) / (cb.powi(7) + 25f64.powi(7))).sqrt());
        let (a1p, a2p) = ((1.0 + g) * a1, (1.0 + g) * a2);
        let (c1p, c2p) = (a1p.hypot(b1), a2p.hypot(b2));
        let hue = |b: f64, a: f64| b.atan2(a).to_degrees().rem_euclid(360.0);
        let (h1p, h2p) = (hue(b1, a1p), hue(b2, a2p));
        let dhp = if c1p * c2p == 0.0 {
            0.0
        } else if (h2p - h1p).abs() <= 180.0 {
            h2p - h1p
        } else if h2p - h1p > 180.0 {
            h2p - h1p - 360.0
        } else {
            h2p - h1p + 360.0
        };
        let d_l = l2 - l1;
        let d_c = c2p - c1p;
        let d_h = 2.0 * (c1p * c2p).sqrt() * (dhp / 2.0).to_radians().sin();
        let lb = (l1 + l2) / 2.0;
        let cbp = (c1p + c2p) / 2.0;
        let hb = if c1p * c2p == 0.0 {
            h1p + h2p
        } else if (h1p - h2p).abs() <= 180.0 {
            (h1p + h2p) / 2.0
        } else if h1p + h2p < 360.0 {
            (h1p + h2p + 360.0) / 2.0
        } else {
            (h1p + h2p - 360.0) / 2.0
        };
        let t = 1.0 - 0.17 * (hb - 30.0).to_radians().cos()
            + 0.24 * (2.0 * hb).to_radians().cos()
            + 0.32 * (3.0 * hb + 6.0).to_radians().cos()
            - 0.20 * (4.0 * hb - 63.0).to_radians().cos();
        let dth = 30.0 * (-((hb - 275.0) / 25.0).powi(2)).exp();
        let rc = 2.0 * (cbp.powi(7) / (cbp.powi(7) + 25f64.powi(7))).sqrt();
        let sl = 1.0 + 0.015 * (lb - 50.0).powi(2) / (20.0 + (lb - 50.0).powi(2)).sqrt();
        let sc = 1.0 + 0.045 * cbp;
        let sh = 1.0 + 0.015 * cbp * t;
        let rt = -(2.0 * dth).to_radians().sin() * rc;
        ((d_l / sl).powi(2) + (d_c / sc).powi(2) + (d_h / sh).powi(2) + rt * (d_c / sc) * (d_h / sh)).sqrt()
    }
    /// Machado, Oliveira and Fernandes (2009), severity 1, on linear RGB.
    const DEUTAN: [[f64; 3]; 3] =
        [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]];
    const PROTAN: [[f64; 3]; 3] =
        [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]];
    fn seen(c: [f64; 3], m: Option<&[[f64; 3]; 3]>) -> [f64; 3] {
        let Some(m) = m else { return lab(c) };
        let l = c.map(linear);
        let o: [f64; 3] = std::array::from_fn(|i| m[i][0] * l[0] + m[i][1] * l[1] + m[i][2] * l[2]);
        lab(o.map(gamma))
    }
    fn closest(m: Option<&[[f64; 3]; 3]>) -> (f64, &'static str, &'static str) {
        let mut best = (f64::INFINITY, "", "");
        for (i, (f, c)) in FAMILY_COLOURS.iter().enumerate() {
            for (g, d) in &FAMILY_COLOURS[i + 1..] {
                let e = de2000(seen(rgb(c), m), seen(rgb(d), m));
                if e < best.0 {
                    best = (e, f, g);
                }
            }
        }
        best
    }

    #[test]
    fn ciede2000_matches_the_published_test_pairs() {
        // Sharma, Wu and Dalal (2005), table 1: pairs 1, 7 and 17.
        let close = |p, q, want: f64| assert!((de2000(p, q) - want).abs() < 1e-4, "{p:?} {q:?}: {}", de2000(p, q));
        close([50.0, 2.6772, -79.7751], [50.0, 0.0, -82.7485], 2.0425);
        close([50.0, 0.0, 0.0], [50.0, -1.0, 2.0], 2.3669);
        close([50.0, 2.5, 0.0], [73.0, 25.0, -18.0], 27.1492);
    }

    #[test]
    fn no_two_families_look_alike_in_normal_or_red_green_deficient_vision() {
        let (n, f, g) = closest(None);
        println!("closest pair, normal vision: {f} / {g}, CIEDE2000 {n:.1}");
        assert!(n >= 20.0, "{f} and {g} are {n:.1} apart");
        for (what, m) in [("deuteranopia", &DEUTAN), ("protanopia", &PROTAN)] {
            let (d, f, g) = closest(Some(m));
            println!("closest pair, simulated {what}: {f} / {g}, CIEDE2000 {d:.1}");
            assert!(d >= 13.0, "{what}: {f} and {g} are {d:.1} apart");
        }
    }

    #[test]
    fn colours_follow_the_name_not_the_order() {
        assert_eq!(family_colour("GEMM"), "#4050e0");
        assert_eq!(family_colour("Other"), "#9a9a9a");
        assert_eq!(family_colour("MyFamily"), family_colour("MyFamily"));
        assert!(EXTRA.contains(&family_colour("MyFamily")));
        let rules = crate::rules::categories::RuleSet::load(None).unwrap();
        for f in rules.categories.iter().map(|c| c.family.as_str()) {
            assert!(FAMILY_COLOURS.iter().any(|(g, _)| *g == f), "built-in family {f} has no colour of its own");
        }
    }
}
