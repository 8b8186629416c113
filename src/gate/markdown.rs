//! The gate's verdict as Markdown, fit for a pull-request comment, and as terminal text.

use super::{GateReport, Moved, Test, Verdict};
use std::fmt::Write;

fn interval(t: &Test) -> String {
    match (t.ratio, t.interval) {
        (Some(r), Some((lo, hi))) => {
            format!("{:+.1}% [{:+.1}%, {:+.1}%]", 100.0 * (r - 1.0), 100.0 * (lo - 1.0), 100.0 * (hi - 1.0))
        }
        (Some(r), None) => format!("{:+.1}%", 100.0 * (r - 1.0)),
        _ => "—".to_string(),
    }
}

fn icon(v: Verdict) -> &'static str {
    match v {
        Verdict::Regression => "❌",
        Verdict::Inconclusive => "❔",
        Verdict::NoChange => "✅",
        Verdict::Improvement => "🚀",
    }
}

/// Markdown text cells: no pipes or line breaks from kernel names.
fn cell(s: &str) -> String {
    let s: String = s.chars().map(|c| if c == '|' || c == '\n' { ' ' } else { c }).collect();
    crate::support::text::ellipsis(&s, 90).replace('`', "'")
}

fn moved_rows(out: &mut String, moved: &[Moved]) {
    let _ = writeln!(out, "| level | what | Δ µs per pass | share of the change |\n|---|---|---:|---:|");
    for m in moved.iter().filter(|m| m.delta_us_per_pass.abs() >= 0.05).take(12) {
        let _ = writeln!(
            out,
            "| {} | `{}` | {:+.1} | {:.0}% |",
            m.level,
            cell(&m.name),
            m.delta_us_per_pass,
            100.0 * m.share_of_change
        );
    }
}

/// The report as Markdown.
pub fn to_markdown(r: &GateReport) -> String {
    let mut o = String::new();
    let metric = match r.options.metric {
        super::Metric::Kernel => "GPU kernel time per pass",
        super::Metric::Wall => "wall time per pass",
    };
    let _ = writeln!(o, "## traceprism gate: {} {}\n", icon(r.overall), r.overall.as_str());
    let _ = writeln!(
        o,
        "`{}` against the baseline `{}`: {metric}, median ratio with its {:.0}% bootstrap interval; band ±{:.1}%.\n",
        cell(&r.new),
        cell(&r.base),
        100.0 * r.options.confidence,
        100.0 * r.options.max_slowdown
    );
    for w in &r.warnings {
        let _ = writeln!(o, "> ⚠️ {w}\n");
    }
    let _ = writeln!(o, "| phase | passes (base / new) | median µs (base → new) | change [interval] | p | verdict |");
    let _ = writeln!(o, "|---|---:|---:|---:|---:|---|");
    for p in &r.phases {
        let t = &p.test;
        let _ = writeln!(
            o,
            "| {} | {} / {} | {:.1} → {:.1} | {} | {:.3} | {} {}{} |",
            p.phase,
            t.base_passes,
            t.new_passes,
            t.base_median_us,
            t.new_median_us,
            interval(t),
            t.p_value,
            icon(t.verdict),
            t.verdict.as_str(),
            t.note.as_ref().map_or(String::new(), |n| format!(" ({n})"))
        );
    }
    for p in &r.phases {
        let moved: Vec<&Test> = p.changed_categories().collect();
        if p.test.verdict != Verdict::Regression && moved.is_empty() {
            continue;
        }
        let _ = writeln!(o, "\n### {}: what moved\n", p.phase);
        if !moved.is_empty() {
            let _ = writeln!(o, "| category | change [interval] | verdict |\n|---|---:|---|");
            for c in moved {
                let _ = writeln!(o, "| {} | {} | {} {} |", cell(&c.what), interval(c), icon(c.verdict), c.verdict.as_str());
            }
            o.push('\n');
        }
        moved_rows(&mut o, &p.attribution);
    }
    o
}

/// The report as a few terminal lines.
pub fn to_text(r: &GateReport) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "gate     {}: {} against {}", r.overall.as_str(), r.new, r.base);
    for w in &r.warnings {
        let _ = writeln!(o, "warning  {w}");
    }
    for p in &r.phases {
        let t = &p.test;
        let _ = writeln!(
            o,
            "{:<8} {} ({} / {} passes, median {:.1} → {:.1} µs, {}, p = {:.3}){}",
            p.phase,
            t.verdict.as_str(),
            t.base_passes,
            t.new_passes,
            t.base_median_us,
            t.new_median_us,
            interval(t),
            t.p_value,
            t.note.as_ref().map_or(String::new(), |n| format!(": {n}"))
        );
        for c in p.changed_categories() {
            let _ = writeln!(o, "         {} {} ({})", c.what, c.verdict.as_str(), interval(c));
        }
        if t.verdict == Verdict::Regression {
            for m in p.attribution.iter().filter(|m| m.delta_us_per_pass > 0.0).take(5) {
                let _ = writeln!(
                    o,
                    "         {} {}: {:+.1} µs per pass ({:.0}% of the change)",
                    m.level,
                    crate::support::text::ellipsis(&m.name, 80),
                    m.delta_us_per_pass,
                    100.0 * m.share_of_change
                );
            }
        }
    }
    o
}
