//! `traceprism digest TRACE --out FILE.json` and `traceprism gate BASELINE NEW`: a small baseline
//! of a trace, and the regression verdict of a new trace against it (see `traceprism::gate`).
//! The gate exits 0 (no change or improvement), 1 (regression), 2 (inconclusive), 3 (bad input or
//! any error).

use super::args::Args;
use std::path::Path;
use traceprism::gate::{fraction, gate, markdown, Digest, GateOptions, Metric};
use traceprism::{Error, Result};

/// A digest from a digest file, or of a trace.
fn digest_of(path: &str, a: &Args) -> Result<Digest> {
    Digest::of_file(Path::new(path), || super::load(path, a))
}

/// Runs `digest`.
pub fn digest(a: &Args) -> Result<()> {
    let path = a.one_trace()?;
    let out = a.out.as_deref().ok_or_else(|| Error::new("digest needs --out FILE.json"))?;
    let d = digest_of(path, a)?;
    let json = d.to_json();
    std::fs::write(out, &json).map_err(|e| Error::new(format!("cannot write {out}: {e}")))?;
    let passes: Vec<String> = d.phases.iter().map(|(p, x)| format!("{} {p}", x.passes)).collect();
    eprintln!("wrote {out}: {} bytes ({})", json.len(), if passes.is_empty() { "no passes".into() } else { passes.join(", ") });
    Ok(())
}

fn share(flag: &str, v: &str) -> Result<f64> {
    let (num, pct) = match v.strip_suffix('%') {
        Some(n) => (n, true),
        None => (v, false),
    };
    let x: f64 = num.trim().parse().map_err(|_| Error::new(format!("{flag}: '{v}' is not a number")))?;
    fraction(x, pct).ok_or_else(|| Error::new(format!("{flag}: {v} is out of range")))
}

/// Runs `gate`; returns the exit status.
pub fn run(a: &Args) -> Result<i32> {
    let [base, new] = a.positional.as_slice() else {
        return Err(Error::new("gate needs BASELINE (a trace or a digest) and NEW (a trace)"));
    };
    let mut o = GateOptions::default();
    if let Some(v) = a.extra("--max-slowdown") {
        o.max_slowdown = share("--max-slowdown", v)?;
    }
    if let Some(v) = a.extra("--confidence") {
        o.confidence = share("--confidence", v)?;
    }
    o.metric = match a.extra("--metric") {
        None | Some("kernel") => Metric::Kernel,
        Some("wall") => Metric::Wall,
        Some(other) => return Err(Error::new(format!("--metric: kernel or wall, not {other}"))),
    };
    let (b, n) = (digest_of(base, a)?, digest_of(new, a)?);
    let report = gate(&b, &n, &o);
    if let Some(file) = a.extra("--markdown") {
        std::fs::write(file, markdown::to_markdown(&report)).map_err(|e| Error::new(format!("cannot write {file}: {e}")))?;
    }
    if a.json {
        super::out(&format!("{}\n", serde_json::to_string_pretty(&report).map_err(|e| Error::new(e.to_string()))?));
    } else {
        super::out(&markdown::to_text(&report));
    }
    Ok(report.overall.exit_code())
}
