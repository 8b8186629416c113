//! `traceprism digest TRACE --out FILE.json` and `traceprism gate BASELINE NEW`: a small baseline
//! of a trace, and the regression verdict of a new trace against it (see `traceprism::gate`).
//! The gate exits 0 (no change or improvement), 1 (regression), 2 (inconclusive), 3 (bad input or
//! any error).

use super::args::Args;
use std::path::Path;
use traceprism::gate::{gate, markdown, Digest, GateOptions, GivenShare};
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

/// Runs `gate`; returns the exit status.
pub fn run(a: &Args) -> Result<i32> {
    let [base, new] = a.positional.as_slice() else {
        return Err(Error::new("gate needs BASELINE (a trace or a digest) and NEW (a trace)"));
    };
    let text = |flag: &str| a.extra(flag).map(GivenShare::Text);
    let o = GateOptions::from_given(
        ["--max-slowdown", "--confidence", "--metric"],
        text("--max-slowdown"),
        text("--confidence"),
        a.extra("--metric"),
    )?;
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
