//! Inline SVG charts for the HTML report: horizontal bars, stacked bars and the roofline scatter.
//! Hover text uses SVG `<title>` elements (no script). Every label is HTML-escaped here.

use std::fmt::Write;

/// Chart palette (colour-blind friendly, Okabe–Ito plus greys).
pub const PALETTE: &[&str] =
    &["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#7f7f7f", "#332288", "#88CCEE", "#bbbbbb"];

const WIDTH: f64 = 820.0;
const LABEL_W: f64 = 300.0;

/// Escapes text for HTML and SVG (see [`crate::table::markup::escape`]).
pub fn esc(t: &str) -> String {
    crate::table::markup::escape(t)
}

/// Shortens a label to `n` characters with an ellipsis.
pub use crate::support::text::ellipsis as short;

/// One bar: label, value, text shown after the bar, hover text.
pub struct Bar {
    /// Label left of the bar.
    pub label: String,
    /// Length of the bar.
    pub value: f64,
    /// Text after the bar.
    pub text: String,
    /// Hover text.
    pub hover: String,
}

/// Horizontal bar chart, one bar per item, longest first as given.
pub fn hbars(bars: &[Bar], color: &str) -> String {
    if bars.is_empty() {
        return "<p class=\"note\">No data.</p>".into();
    }
    let row = 22.0;
    let h = row * bars.len() as f64 + 10.0;
    let max = bars.iter().map(|b| b.value).fold(0.0, f64::max).max(f64::MIN_POSITIVE);
    let plot = WIDTH - LABEL_W - 150.0;
    let mut s = format!(r#"<svg class="chart" viewBox="0 0 {WIDTH} {h}" width="{WIDTH}" height="{h}" role="img">"#);
    for (i, b) in bars.iter().enumerate() {
        let y = 5.0 + i as f64 * row;
        let w = (b.value / max * plot).max(1.0);
        let _ = write!(
            s,
            r#"<g><title>{hover}</title><text x="{lx}" y="{ty}" text-anchor="end" class="lbl">{label}</text><rect x="{LABEL_W}" y="{ry}" width="{w:.1}" height="{bh}" fill="{color}"/><text x="{vx:.1}" y="{ty}" class="val">{text}</text></g>"#,
            hover = esc(&b.hover),
            lx = LABEL_W - 6.0,
            ty = y + 15.0,
            label = esc(&short(&b.label, 44)),
            ry = y + 3.0,
            bh = row - 6.0,
            vx = LABEL_W + w + 6.0,
            text = esc(&b.text),
        );
    }
    s.push_str("</svg>");
    s
}

/// One stacked bar: label and (segment name, value) parts.
pub struct Stack {
    /// Label left of the bar.
    pub label: String,
    /// Segments: (name, value).
    pub parts: Vec<(String, f64)>,
}

/// Stacked horizontal bars (each normalised to 100 %), with a legend of segment names; segments
/// are kernel families, each in its own colour ([`crate::rules::palette`]).
pub fn stacked(stacks: &[Stack]) -> String {
    if stacks.is_empty() {
        return "<p class=\"note\">No data.</p>".into();
    }
    let mut names: Vec<String> = Vec::new();
    for st in stacks {
        for (n, _) in &st.parts {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
    }
    let color = crate::rules::palette::family_colour;
    let row = 30.0;
    let legend_rows = names.len().div_ceil(3) as f64;
    let h = row * stacks.len() as f64 + 18.0 * legend_rows + 16.0;
    let plot = WIDTH - LABEL_W - 20.0;
    let mut s = format!(r#"<svg class="chart" viewBox="0 0 {WIDTH} {h}" width="{WIDTH}" height="{h}" role="img">"#);
    for (i, st) in stacks.iter().enumerate() {
        let y = 5.0 + i as f64 * row;
        let total: f64 = st.parts.iter().map(|p| p.1).sum();
        let _ = write!(
            s,
            r#"<text x="{}" y="{}" text-anchor="end" class="lbl">{}</text>"#,
            LABEL_W - 6.0,
            y + 18.0,
            esc(&short(&st.label, 44))
        );
        let mut x = LABEL_W;
        for (n, v) in &st.parts {
            if total <= 0.0 || *v <= 0.0 {
                continue;
            }
            let w = v / total * plot;
            let _ = write!(
                s,
                r#"<rect x="{x:.1}" y="{}" width="{w:.1}" height="{}" fill="{}"><title>{}: {}: {:.3} ms ({:.1} %)</title></rect>"#,
                y + 3.0,
                row - 8.0,
                color(n),
                esc(&st.label),
                esc(n),
                v / 1e6,
                100.0 * v / total
            );
            x += w;
        }
    }
    let ly = 5.0 + row * stacks.len() as f64 + 8.0;
    for (i, n) in names.iter().enumerate() {
        let (cx, cy) = (20.0 + (i % 3) as f64 * 270.0, ly + (i / 3) as f64 * 18.0);
        let _ = write!(
            s,
            r#"<rect x="{cx}" y="{cy}" width="12" height="12" fill="{}"/><text x="{}" y="{}" class="lbl">{}</text>"#,
            color(n),
            cx + 16.0,
            cy + 11.0,
            esc(&short(n, 36))
        );
    }
    s.push_str("</svg>");
    s
}

/// One point of the roofline scatter.
pub struct Point {
    /// FLOP per byte.
    pub x: f64,
    /// Achieved TFLOP/s.
    pub y: f64,
    /// Share of GPU time, 0..1 (sets the radius).
    pub weight: f64,
    /// Index into the series names (colour).
    pub series: usize,
    /// Hover text.
    pub hover: String,
}

/// A roof: name, compute peak (TFLOP/s), bandwidth (TB/s).
pub struct Roof {
    /// The roof's name.
    pub name: String,
    /// Compute peak, TFLOP/s.
    pub peak: f64,
    /// Memory bandwidth, TB/s.
    pub bandwidth: f64,
}

/// Log-log roofline scatter: intensity (FLOP/byte) against achieved TFLOP/s, with roof lines.
pub fn roofline(points: &[Point], roofs: &[Roof], series: &[&str]) -> String {
    let pts: Vec<&Point> = points.iter().filter(|p| p.x > 0.0 && p.y > 0.0 && p.x.is_finite() && p.y.is_finite()).collect();
    if pts.is_empty() {
        return "<p class=\"note\">No op with known shapes to place on the roofline.</p>".into();
    }
    let lg = |v: f64| v.log10();
    let mut x0 = pts.iter().map(|p| lg(p.x)).fold(f64::INFINITY, f64::min).floor();
    let mut x1 = pts.iter().map(|p| lg(p.x)).fold(f64::NEG_INFINITY, f64::max).ceil();
    let mut y0 = pts.iter().map(|p| lg(p.y)).fold(f64::INFINITY, f64::min).floor();
    let mut y1 = pts.iter().map(|p| lg(p.y)).fold(f64::NEG_INFINITY, f64::max).ceil();
    for r in roofs {
        y1 = y1.max(lg(r.peak * 1.5).ceil());
        if r.bandwidth > 0.0 {
            x1 = x1.max(lg(r.peak / r.bandwidth * 4.0).ceil());
        }
    }
    x0 = x0.min(x1 - 1.0);
    y0 = y0.min(y1 - 1.0);
    if x1 - x0 > 8.0 {
        x0 = x1 - 8.0;
    }
    if y1 - y0 > 8.0 {
        y0 = y1 - 8.0;
    }
    let (w, h, left, top, pw, ph) = (WIDTH, 460.0, 70.0, 20.0, WIDTH - 250.0, 380.0);
    let px = |v: f64| left + (lg(v).clamp(x0, x1) - x0) / (x1 - x0) * pw;
    let py = |v: f64| top + ph - (lg(v).clamp(y0, y1) - y0) / (y1 - y0) * ph;
    let mut s = format!(r#"<svg class="chart" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img">"#);
    let _ = write!(s, r##"<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>"##);
    for e in x0 as i64..=x1 as i64 {
        let x = left + (e as f64 - x0) / (x1 - x0) * pw;
        let _ = write!(
            s,
            r##"<line x1="{x:.1}" y1="{top}" x2="{x:.1}" y2="{}" stroke="#eee"/><text x="{x:.1}" y="{}" text-anchor="middle" class="ax">1e{e}</text>"##,
            top + ph,
            top + ph + 16.0
        );
    }
    for e in y0 as i64..=y1 as i64 {
        let y = top + ph - (e as f64 - y0) / (y1 - y0) * ph;
        let _ = write!(
            s,
            r##"<line x1="{left}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#eee"/><text x="{}" y="{:.1}" text-anchor="end" class="ax">1e{e}</text>"##,
            left + pw,
            left - 6.0,
            y + 4.0
        );
    }
    let _ = write!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle" class="ax">arithmetic intensity (FLOP/byte)</text>"#,
        left + pw / 2.0,
        top + ph + 34.0
    );
    let _ = write!(
        s,
        r#"<text x="14" y="{}" transform="rotate(-90 14 {})" text-anchor="middle" class="ax">achieved TFLOP/s</text>"#,
        top + ph / 2.0,
        top + ph / 2.0
    );
    let (xmin, xmax) = (10f64.powf(x0), 10f64.powf(x1));
    for (i, r) in roofs.iter().enumerate() {
        if r.peak <= 0.0 || r.bandwidth <= 0.0 {
            continue;
        }
        let ridge = r.peak / r.bandwidth;
        let start = xmin.max(10f64.powf(y0) / r.bandwidth);
        let dash = if i == 0 { "" } else { r#" stroke-dasharray="6 4""# };
        let _ = write!(
            s,
            r##"<g><title>{name}: {peak} TFLOP/s, {bw} TB/s, ridge {ridge:.0} FLOP/byte</title><polyline fill="none" stroke="#c00" stroke-width="2"{dash} points="{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}"/><text x="{:.1}" y="{:.1}" class="roof">{name}</text></g>"##,
            px(start),
            py(start * r.bandwidth),
            px(ridge),
            py(r.peak),
            px(xmax),
            py(r.peak),
            px(xmax) + 4.0,
            py(r.peak) + 4.0,
            name = esc(&r.name),
            peak = r.peak,
            bw = r.bandwidth,
        );
    }
    for p in &pts {
        let r = 3.0 + 14.0 * p.weight.clamp(0.0, 1.0).sqrt();
        let _ = write!(
            s,
            r#"<circle cx="{:.1}" cy="{:.1}" r="{r:.1}" fill="{}" fill-opacity="0.6" stroke="{}"><title>{}</title></circle>"#,
            px(p.x),
            py(p.y),
            PALETTE[p.series % PALETTE.len()],
            PALETTE[p.series % PALETTE.len()],
            esc(&p.hover)
        );
    }
    for (i, name) in series.iter().enumerate() {
        let y = top + 150.0 + i as f64 * 18.0;
        let _ = write!(
            s,
            r#"<circle cx="{}" cy="{y}" r="6" fill="{}"/><text x="{}" y="{}" class="lbl">{}</text>"#,
            left + pw + 20.0,
            PALETTE[i % PALETTE.len()],
            left + pw + 32.0,
            y + 4.0,
            esc(name)
        );
    }
    s.push_str("</svg>");
    s
}
