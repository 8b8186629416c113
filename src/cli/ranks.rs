//! `traceprism ranks FILE... | DIR`: all ranks of one run, collectives matched, the straggler named.

use super::args::Args;
use super::summary_text::render_table;
use std::path::{Path, PathBuf};
use traceprism::analysis::ranks::RunOptions;
use traceprism::pipeline::ranks::{rank_files, read_run, run_identity};
use traceprism::report::ranks::run_json;
use traceprism::report::ranks::run_tables;
use traceprism::table::arrow::RowBatches;
use traceprism::table::parquet::write_parquet_dir;
use traceprism::{Error, Result};

/// Runs `ranks`.
pub fn run(a: &Args) -> Result<()> {
    let paths: Vec<PathBuf> = a.positional.iter().map(PathBuf::from).collect();
    let files = rank_files(&paths)?;
    let capture_paths: Vec<PathBuf> = a.values("--capture").iter().map(PathBuf::from).collect();
    let loaded = read_run(&files, &a.options, a.threads, &capture_paths, RunOptions { align: a.extra("--no-align").is_none() })?;
    for (name, cut) in &loaded.truncated {
        eprintln!("traceprism: warning: {name}: {cut}");
    }
    for (name, e) in &loaded.left_out {
        eprintln!("traceprism: warning: {name}: {e} (this rank is left out)");
    }
    let run = &loaded.run;
    for w in &run.warnings {
        eprintln!("traceprism: warning: {w}");
    }
    let tables = run_tables(run);
    if let Some(dir) = a.out.as_deref() {
        std::fs::create_dir_all(dir).map_err(|e| Error::new(format!("cannot create {dir}: {e}")))?;
        for t in &tables {
            let file = Path::new(dir).join(format!("{}.csv", t.name));
            std::fs::write(&file, t.to_csv()).map_err(|e| Error::new(format!("cannot write {}: {e}", file.display())))?;
            if a.verbose {
                eprintln!("wrote {} ({} rows)", file.display(), t.rows.len());
            }
        }
    }
    if let Some(dir) = a.extra("--parquet") {
        let identity = run_identity(run);
        let batches = tables.iter().map(|t| (t.name.clone(), RowBatches::of_table(t.clone(), &identity)));
        for (file, rows) in write_parquet_dir(Path::new(dir), &identity, batches)? {
            if a.verbose {
                eprintln!("wrote {} ({rows} rows)", file.display());
            }
        }
    }
    if let Some(file) = a.xlsx.as_deref() {
        std::fs::write(file, traceprism::table::xlsx::workbook(&tables))
            .map_err(|e| Error::new(format!("cannot write {file}: {e}")))?;
    }
    if let Some(file) = a.html.as_deref() {
        std::fs::write(file, traceprism::report::html::run_html_report(run))
            .map_err(|e| Error::new(format!("cannot write {file}: {e}")))?;
    }
    if a.json {
        let value = run_json(&loaded.run, loaded.left_out.len(), &tables);
        super::out(&format!("{}\n", serde_json::to_string_pretty(&value).map_err(|e| Error::new(e.to_string()))?));
        return Ok(());
    }
    if (a.out.is_some() || a.xlsx.is_some() || a.html.is_some() || a.extra("--parquet").is_some()) && !a.verbose {
        // Files written: say where, and the run's finding, which no file holds as a sentence.
        let mut text = String::new();
        for (what, to) in [
            ("tables (CSV)", a.out.as_deref()),
            ("tables (Parquet)", a.extra("--parquet")),
            ("workbook", a.xlsx.as_deref()),
            ("HTML report", a.html.as_deref()),
        ] {
            if let Some(to) = to {
                text.push_str(&format!("wrote {what}: {to}\n"));
            }
        }
        match run.finding() {
            Some(f) => text.push_str(&format!("finding: {f}\n")),
            None => text.push_str("finding: no rank arrives last by more than 1 µs at any collective\n"),
        }
        super::out(&text);
        return Ok(());
    }
    let mut text = format!(
        "{} ranks, {} collectives matched on every rank{}{}{}\n\n",
        run.ranks.len(),
        run.collectives.len(),
        match run.missing_collectives() {
            0 => String::new(),
            k => format!(", {k} lacked by some rank (left out; see unmatched_collectives)"),
        },
        match run.unmatched_names() {
            0 => String::new(),
            k => format!(", {k} collective names unmatched (see unmatched_collectives)"),
        },
        if run.aligned { ", clocks aligned on the collectives" } else { ", clocks as recorded (--no-align)" },
    );
    for name in ["ranks", "straggler_summary", "straggler_cause", "collective_classes"] {
        if let Some(t) = tables.iter().find(|t| t.name == name) {
            text.push_str(&format!("{name}\n{}\n", render_table(t, 40, 20)));
        }
    }
    match run.finding() {
        Some(f) => text.push_str(&format!("finding: {f}\n")),
        None => text.push_str("finding: no rank arrives last by more than 1 µs at any collective\n"),
    }
    let found = traceprism::analysis::findings::stragglers(run);
    if !found.is_empty() {
        text.push_str("\nfindings (run_findings)");
        text.push_str(&super::findings::render_list(&found));
    }
    if let Some(f) = run.cost_finding() {
        text.push_str(&format!("collectives: {f} (see collective_classes)\n"));
    }
    super::out(&text);
    Ok(())
}

/// Runs `synth-ranks`: an N-rank run from one real trace, with its truth (see
/// [`traceprism::synth::ranks`]).
pub fn synth(a: &Args) -> Result<()> {
    let path = a.one_trace()?;
    let dir = a.out.as_deref().ok_or_else(|| Error::new("synth-ranks needs --out DIR"))?;
    let number =
        |flag: &str, default: f64| -> Result<f64> { a.extra(flag).map_or(Ok(default), |v| super::args::number(flag, v)) };
    let mut spec = traceprism::synth::ranks::RunSpec::default();
    spec.ranks = number("--ranks", spec.ranks as f64)? as u32;
    spec.straggler = number("--straggler", spec.straggler as f64)? as u32;
    spec.delay_us = number("--delay-us", spec.delay_us)?;
    spec.every = number("--every", spec.every as f64)? as usize;
    spec.seed = number("--seed", spec.seed as f64)? as u64;
    spec.kind = match a.extra("--late") {
        None | Some("device") => traceprism::synth::ranks::LateKind::Device,
        Some("host") => traceprism::synth::ranks::LateKind::Host,
        Some(other) => return Err(Error::new(format!("--late: host or device, not {other}"))),
    };
    let bytes = std::fs::read(path).map_err(|e| Error::new(format!("cannot read {path}: {e}")))?;
    let text = traceprism::read::whole_text(bytes)?;
    let run = traceprism::synth::ranks::make_run(&text, &spec).map_err(Error::new)?;
    std::fs::create_dir_all(dir).map_err(|e| Error::new(format!("cannot create {dir}: {e}")))?;
    for (r, t) in run.traces.iter().enumerate() {
        let file = Path::new(dir).join(format!("rank{r}.json"));
        std::fs::write(&file, t).map_err(|e| Error::new(format!("cannot write {}: {e}", file.display())))?;
    }
    let truth = serde_json::to_string_pretty(&run.truth).map_err(|e| Error::new(e.to_string()))?;
    let file = Path::new(dir).join("truth.json");
    std::fs::write(&file, truth).map_err(|e| Error::new(format!("cannot write {}: {e}", file.display())))?;
    eprintln!(
        "wrote {} ranks and {} ({} delays on rank {})",
        run.traces.len(),
        file.display(),
        run.truth.delays.len(),
        spec.straggler
    );
    Ok(())
}
