//! `traceprism ranks FILE... | DIR`: all ranks of one run, collectives matched, the straggler named.

use super::args::Args;
use super::summary_text::render_table;
use std::path::{Path, PathBuf};
use traceprism::analysis::ranks::{analyse_run, RankTrace, RunOptions};
use traceprism::pipeline::analyze_path_choosing;
use traceprism::pipeline::captures::{captures_of_rank, ranked_captures, trace_rank as rank_of};
use traceprism::report::ranks::run_tables;
use traceprism::{Error, Result};

/// The trace files named: files as given, or every `.json` / `.json.gz` file of a folder (sorted).
fn trace_files(positional: &[String]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for p in positional {
        let path = Path::new(p);
        if path.is_dir() {
            let entries = std::fs::read_dir(path).map_err(|e| Error::new(format!("cannot list {p}: {e}")))?;
            let mut found: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| {
                    let name = f.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
                    (name.ends_with(".json") || name.ends_with(".json.gz")) && !name.contains("truth")
                })
                .collect();
            found.sort();
            files.extend(found);
        } else {
            files.push(path.to_path_buf());
        }
    }
    Ok(files)
}

/// Runs `ranks`.
pub fn run(a: &Args) -> Result<()> {
    a.reject_unknown_capturing(&["--no-align", "--parquet"])?;
    let files = trace_files(&a.positional)?;
    if files.len() < 2 {
        return Err(Error::new(format!(
            "ranks needs the traces of at least two ranks (files, or a folder holding them); {} given",
            files.len()
        )));
    }
    // One thread per rank, the cores shared among them.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = a.threads.unwrap_or((cores / files.len()).max(1));
    let capture_paths: Vec<PathBuf> = a.values("--capture").iter().map(PathBuf::from).collect();
    let captures = ranked_captures(&capture_paths, threads)?;
    let captures = &captures;
    let results: Vec<Result<traceprism::Analysis>> = std::thread::scope(|scope| {
        let workers: Vec<_> = files
            .iter()
            .map(|f| {
                scope.spawn(move || {
                    analyze_path_choosing(f, a.options.clone(), threads, |t| {
                        captures_of_rank(captures, rank_of(t, &f.display().to_string()))
                    })
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap_or_else(|_| Err(Error::new("the rank's thread panicked")))).collect()
    });
    let mut traces = Vec::new();
    let mut left_out = 0;
    for (file, result) in files.iter().zip(results) {
        let name = file.display().to_string();
        match result {
            Ok(analysis) => {
                if let Some(cut) = &analysis.trace.stats.truncation {
                    eprintln!("traceprism: warning: {name}: {}", cut.message());
                }
                traces.push(RankTrace { file: name, analysis });
            }
            Err(e) => {
                left_out += 1;
                eprintln!("traceprism: warning: {name}: {e} (this rank is left out)");
            }
        }
    }
    if left_out > 0 && traces.len() < 2 {
        return Err(Error::new(format!("{left_out} of {} ranks could not be read: fewer than two remain", files.len())));
    }
    let run = analyse_run(traces, RunOptions { align: a.extra("--no-align").is_none() })?;
    for w in &run.warnings {
        eprintln!("traceprism: warning: {w}");
    }
    let tables = run_tables(&run);
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
        let identity = run_identity(&run);
        for t in &tables {
            let batches = traceprism::table::arrow::RowBatches::of_table(t.clone(), &identity);
            let rows = super::export::write_parquet_file(Path::new(dir), &t.name, batches, &identity)?;
            if a.verbose {
                eprintln!("wrote {dir}/{}.parquet ({rows} rows)", t.name);
            }
        }
    }
    if let Some(file) = a.xlsx.as_deref() {
        std::fs::write(file, traceprism::table::xlsx::workbook(&tables))
            .map_err(|e| Error::new(format!("cannot write {file}: {e}")))?;
    }
    if let Some(file) = a.html.as_deref() {
        std::fs::write(file, traceprism::report::html::run_html_report(&run))
            .map_err(|e| Error::new(format!("cannot write {file}: {e}")))?;
    }
    if a.json {
        let value = serde_json::json!({
            "ranks": run.ranks.len(),
            "collectives_matched": run.collectives.len(),
            "unmatched_collective_names": run.unmatched.len(),
            "ranks_left_out": left_out,
            "aligned": run.aligned,
            "finding": run.finding(),
            "warnings": run.warnings,
            "tables": tables,
        });
        super::out(&format!("{}\n", serde_json::to_string_pretty(&value).map_err(|e| Error::new(e.to_string()))?));
        return Ok(());
    }
    if (a.out.is_some() || a.xlsx.is_some() || a.html.is_some() || a.extra("--parquet").is_some()) && !a.verbose {
        return Ok(());
    }
    let mut text = format!(
        "{} ranks, {} collectives matched on every rank{}{}\n\n",
        run.ranks.len(),
        run.collectives.len(),
        if run.unmatched.is_empty() {
            String::new()
        } else {
            format!(", {} collective names unmatched (see unmatched_collectives)", run.unmatched.len())
        },
        if run.aligned { ", clocks aligned on the collectives" } else { ", clocks as recorded (--no-align)" },
    );
    for name in ["ranks", "straggler_summary", "straggler_cause"] {
        if let Some(t) = tables.iter().find(|t| t.name == name) {
            text.push_str(&format!("{name}\n{}\n", render_table(t, 40, 20)));
        }
    }
    match run.finding() {
        Some(f) => text.push_str(&format!("finding: {f}\n")),
        None => text.push_str("finding: no rank arrives last by more than 1 µs at any collective\n"),
    }
    super::out(&text);
    Ok(())
}

/// The metadata of a run's Parquet tables: the rank files, in rank order, and the world size.
fn run_identity(run: &traceprism::analysis::ranks::Run) -> Vec<(String, String)> {
    let files: Vec<&str> = run.ranks.iter().map(|r| r.trace.file.as_str()).collect();
    vec![
        ("traceprism.version".to_string(), env!("CARGO_PKG_VERSION").to_string()),
        ("traceprism.files".to_string(), files.join("\n")),
        ("traceprism.ranks".to_string(), run.ranks.len().to_string()),
    ]
}

/// Runs `synth-ranks`: an N-rank run from one real trace, with its truth (see
/// [`traceprism::synth::ranks`]).
pub fn synth(a: &Args) -> Result<()> {
    a.reject_unknown(&["--ranks", "--straggler", "--delay-us", "--every", "--seed", "--late"])?;
    let path = a.one_trace()?;
    let dir = a.out.as_deref().ok_or_else(|| Error::new("synth-ranks needs --out DIR"))?;
    let number = |flag: &str, default: f64| -> Result<f64> {
        a.extra(flag).map_or(Ok(default), |v| v.parse().map_err(|_| Error::new(format!("{flag}: '{v}' is not a number"))))
    };
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
    let text = if traceprism::ingest::is_gzip(&bytes) { traceprism::ingest::gunzip(&bytes)? } else { bytes };
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
