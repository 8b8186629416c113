//! `traceprism flame TRACE [--phase P] [--folded | --svg FILE] [--against B]`: GPU time by call
//! path ([`traceprism::analysis::code::call_paths`]) as folded stacks (`frame;frame;kernel ns`, what
//! inferno and speedscope read) or an SVG flame graph drawn by inferno; with `--against B`, the
//! differential graph of TRACE (before) against B (after), per pass.

use super::args::Args;
use traceprism::analysis::code::differential::differential;
use traceprism::analysis::phases::Phase;
use traceprism::{Error, Result};

/// Runs `flame`.
pub fn run(a: &Args) -> Result<()> {
    let path = a.one_trace()?;
    // Folded stacks are the default output; `--folded` says so, and cannot go with `--svg`.
    if a.extra("--folded").is_some() && a.extra("--svg").is_some() {
        return Err(Error::new("--folded and --svg: give one (folded stacks are written to stdout, the SVG to its file)"));
    }
    let phase = Phase::select("--phase", a.extra("--phase").unwrap_or("all"))?;
    let analysis = super::load(path, a)?;
    let title = format!("GPU time by call path: {path}{}", phase.map_or(String::new(), |p| format!(" ({})", p.as_str())));
    let (folded, diff): (Vec<String>, bool) = match a.extra("--against") {
        Some(other) => {
            let b = super::load(other, a)?;
            let lines = differential(analysis.side(), b.side(), phase)
                .into_iter()
                .map(|d| format!("{} {} {}", d.path, d.a_ns_per_pass.round() as i64, d.b_ns_per_pass.round() as i64))
                .collect();
            (lines, true)
        }
        None => (analysis.call_paths().folded(phase).into_iter().map(|(p, w)| format!("{p} {w}")).collect(), false),
    };
    match a.extra("--svg") {
        Some(file) => {
            let svg = svg(&folded, &title, diff)?;
            std::fs::write(file, svg).map_err(|e| Error::new(format!("cannot write {file}: {e}")))?;
            eprintln!("wrote {file} ({} call paths)", folded.len());
            Ok(())
        }
        None => {
            let mut text = folded.join("\n");
            text.push('\n');
            super::out(&text);
            Ok(())
        }
    }
}

/// The flame graph of folded lines, drawn by inferno (`diff`: lines carry a before and an after
/// weight; the colour is the change).
pub fn svg(folded: &[String], title: &str, diff: bool) -> Result<Vec<u8>> {
    let mut opt = inferno::flamegraph::Options::default();
    opt.title = title.to_string();
    opt.count_name = if diff { "ns per pass".into() } else { "ns".into() };
    opt.name_type = "Path:".into();
    let mut out = Vec::new();
    inferno::flamegraph::from_lines(&mut opt, folded.iter().map(String::as_str), &mut out)
        .map_err(|e| Error::new(format!("cannot draw the flame graph: {e}")))?;
    Ok(out)
}
