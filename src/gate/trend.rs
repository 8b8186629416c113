//! A trend over windows: one trace per profiling window, each kept as its [`Digest`] (small), a
//! line per window and a CSV row (what `traceprism watch` prints and appends).

use super::stats::median;
use super::Digest;
use std::fmt::Write;

/// Whether a watched folder's file is one the watch reads: a trace (`.json`, `.json.gz`, `.pb`,
/// `.pb.gz`, `.sqlite`), not a temporary file (`.part`, `.crswap`, a dot file...) or one of ours
/// (a digest, a truth file, the trend CSV `trend`). The CLI's watch and the page's ask here.
pub fn is_watched(name: &str, trend: Option<&str>) -> bool {
    let lower = name.to_ascii_lowercase();
    let temporary =
        lower.starts_with('.') || [".part", ".crswap", ".tmp", ".partial", ".download"].iter().any(|s| lower.ends_with(s));
    let ours = lower.ends_with(".digest.json") || lower.contains("truth") || Some(name) == trend;
    let trace = [".json", ".json.gz", ".pb", ".pb.gz", ".sqlite"].iter().any(|s| lower.ends_with(s));
    trace && !temporary && !ours
}

/// How the watch takes a file name: whether it reads it, and the key its window's rank files
/// share ([`crate::analysis::ranks::rank_group_key`]; `None`: the name states no rank).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WatchedName {
    /// Whether the watch reads it ([`is_watched`]).
    pub candidate: bool,
    /// The name with its rank number replaced by `*`.
    pub group: Option<String>,
}

impl WatchedName {
    /// How the watch takes `name`.
    pub fn of(name: &str) -> WatchedName {
        WatchedName { candidate: is_watched(name, None), group: crate::analysis::ranks::rank_group_key(name) }
    }
}

/// What a window shows.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Window {
    /// The window's trace file (or the first rank's).
    pub file: String,
    /// Passes per phase (`decode 30, prefill 1`).
    pub passes: Vec<(String, usize)>,
    /// Decode step (pass) wall time: median and 90th percentile, µs.
    pub decode_median_us: Option<f64>,
    /// The 90th percentile of decode steps (µs).
    pub decode_p90_us: Option<f64>,
    /// Prefill pass wall time, median, µs.
    pub prefill_median_us: Option<f64>,
    /// The decode phase's (else the first phase's) top categories with their share of its kernel
    /// time, largest first.
    pub top_categories: Vec<(String, f64)>,
}

fn p90(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    Some(s[((s.len() as f64 - 1.0) * 0.9).round() as usize])
}

impl Window {
    /// The window of one digest.
    pub fn of(d: &Digest, file: &str) -> Window {
        let us = |v: &[i64]| v.iter().map(|&x| x as f64 / 1000.0).collect::<Vec<f64>>();
        let decode = d.phases.get("decode").map(|p| us(&p.wall_ns));
        let prefill = d.phases.get("prefill").map(|p| us(&p.wall_ns));
        let phase = d.phases.get("decode").or_else(|| d.phases.values().next());
        let top_categories = phase
            .map(|p| {
                let total: f64 = p.kernel_ns.iter().sum::<i64>() as f64;
                let mut v: Vec<(String, f64)> = p
                    .categories
                    .iter()
                    .map(|(c, t)| (c.clone(), if total > 0.0 { 100.0 * t.iter().sum::<i64>() as f64 / total } else { 0.0 }))
                    .collect();
                v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                v.truncate(3);
                v
            })
            .unwrap_or_default();
        Window {
            file: file.to_string(),
            passes: d.phases.iter().map(|(p, x)| (p.clone(), x.passes)).collect(),
            decode_median_us: decode.as_deref().and_then(median),
            decode_p90_us: decode.as_deref().and_then(p90),
            prefill_median_us: prefill.as_deref().and_then(median),
            top_categories,
        }
    }
}

/// The change of `now` against `then`, in percent.
fn change(now: Option<f64>, then: Option<f64>) -> Option<f64> {
    match (now, then) {
        (Some(a), Some(b)) if b > 0.0 => Some(100.0 * (a / b - 1.0)),
        _ => None,
    }
}

/// The header of the trend CSV.
pub const TREND_HEADER: &str = "window,time,file,passes,decode_median_us,decode_p90_us,prefill_median_us,top_categories,decode_change_vs_first_pct,decode_change_vs_previous_pct";

fn opt(v: Option<f64>) -> String {
    v.map_or(String::new(), |x| format!("{x:.3}"))
}

/// The trend's CSV row of window `index` (`time`: when it was read), with its changes against the
/// first and the previous window.
pub fn trend_row(index: usize, time: &str, w: &Window, first: Option<&Window>, previous: Option<&Window>) -> String {
    let passes = w.passes.iter().map(|(p, n)| format!("{p} {n}")).collect::<Vec<_>>().join("; ");
    let cats = w.top_categories.iter().map(|(c, s)| format!("{c} {s:.1}%")).collect::<Vec<_>>().join("; ");
    let quote = |s: &str| if s.contains([',', '"', '\n']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() };
    format!(
        "{index},{time},{},{},{},{},{},{},{},{}",
        quote(&w.file),
        quote(&passes),
        opt(w.decode_median_us),
        opt(w.decode_p90_us),
        opt(w.prefill_median_us),
        quote(&cats),
        opt(first.and_then(|f| change(w.decode_median_us, f.decode_median_us))),
        opt(previous.and_then(|p| change(w.decode_median_us, p.decode_median_us)))
    )
}

/// The terminal line of a window.
pub fn line(index: usize, time: &str, w: &Window, first: Option<&Window>, previous: Option<&Window>) -> String {
    let mut o = format!("{time} window {index} {}: ", w.file);
    let passes = w.passes.iter().map(|(p, n)| format!("{n} {p}")).collect::<Vec<_>>().join(", ");
    o.push_str(if passes.is_empty() { "no passes" } else { &passes });
    if let (Some(m), Some(p)) = (w.decode_median_us, w.decode_p90_us) {
        let _ = write!(o, "; decode step median {m:.1} µs, p90 {p:.1} µs");
    }
    if let Some(p) = w.prefill_median_us {
        let _ = write!(o, "; prefill {p:.1} µs");
    }
    if !w.top_categories.is_empty() {
        let cats = w.top_categories.iter().map(|(c, s)| format!("{c} {s:.0}%")).collect::<Vec<_>>().join(", ");
        let _ = write!(o, "; {cats}");
    }
    let vs_first = first.and_then(|f| change(w.decode_median_us, f.decode_median_us));
    let vs_prev = previous.and_then(|p| change(w.decode_median_us, p.decode_median_us));
    if let (Some(a), Some(b)) = (vs_first, vs_prev) {
        let _ = write!(o, "; decode {a:+.1}% vs first, {b:+.1}% vs previous");
    }
    o
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_watch_reads_traces_not_temporary_or_its_own_files() {
        for n in ["a.json", "a.json.gz", "x.xplane.pb", "trace_rank3.pt.trace.json.gz", "report1.sqlite"] {
            assert!(super::is_watched(n, None), "{n}");
        }
        for n in [
            "a.json.part",
            "a.json.gz.crswap",
            ".hidden.json",
            "base.digest.json",
            "run.truth.json.gz",
            "notes.txt",
            "trend.json",
        ] {
            assert!(!super::is_watched(n, Some("trend.json")), "{n}");
        }
        assert_eq!(super::WatchedName::of("w12_rank3.json.gz").group.as_deref(), Some("w12_rank*.json.gz"));
    }
}
