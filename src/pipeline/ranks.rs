//! The ranks of one run, read side by side: the files of a folder, one thread per rank, capture
//! traces given to their rank, unreadable ranks left out and counted (native only).

use super::analyze_path_choosing;
use super::captures::{captures_of_rank, ranked_captures, trace_rank};
use crate::analysis::ranks::{analyse_run, RankTrace, Run, RunOptions};
use crate::analysis::Options;
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// The trace files named: files as given, or every `.json` / `.json.gz` file of a folder (sorted;
/// truth files left out).
pub fn rank_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let entries = std::fs::read_dir(path).map_err(|e| Error::new(format!("cannot list {}: {e}", path.display())))?;
            let mut found: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|f| is_rank_trace(f)).collect();
            found.sort();
            files.extend(found);
        } else if path.exists() {
            files.push(path.clone());
        } else {
            return Err(Error::new(format!("cannot read {}: no such file or folder", path.display())));
        }
    }
    Ok(files)
}

fn is_rank_trace(f: &Path) -> bool {
    let name = f.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    (name.ends_with(".json") || name.ends_with(".json.gz") || name.ends_with(".sqlite")) && !name.contains("truth")
}

/// One rank to read: a file, or one process of an Nsight Systems export holding several (with
/// the export's bytes, read once for all its processes).
struct RankSource {
    path: PathBuf,
    process: Option<(i64, std::sync::Arc<Vec<u8>>)>,
}

impl RankSource {
    fn label(&self) -> String {
        match &self.process {
            Some((p, _)) => format!("{} (process {p})", self.path.display()),
            None => self.path.display().to_string(),
        }
    }
}

/// The ranks of `files`: an Nsight Systems export whose several processes ran GPU kernels is one
/// rank per process (by process id); any other file is one rank.
fn rank_sources(files: &[PathBuf]) -> Result<Vec<RankSource>> {
    let mut out = Vec::new();
    for f in files {
        let mut head = [0u8; 16];
        let is_sqlite = std::fs::File::open(f).and_then(|mut h| std::io::Read::read_exact(&mut h, &mut head)).is_ok()
            && crate::read::sniff(&head) == crate::ingest::Format::NsysSqlite;
        #[cfg(feature = "nsys")]
        if is_sqlite {
            let bytes = std::fs::read(f).map_err(|e| Error::new(format!("cannot read {}: {e}", f.display())))?;
            let processes = crate::ingest::nsys_gpu_processes(&bytes)?;
            if processes.len() > 1 {
                let bytes = std::sync::Arc::new(bytes);
                out.extend(processes.into_iter().map(|p| RankSource { path: f.clone(), process: Some((p, bytes.clone())) }));
                continue;
            }
        }
        let _ = is_sqlite;
        out.push(RankSource { path: f.clone(), process: None });
    }
    Ok(out)
}

/// Reads, links and analyses one process of an Nsight Systems export (`bytes`: told by
/// [`rank_sources`] already, so the reader is handed the format).
fn analyze_process(bytes: &[u8], process: i64, options: Options) -> Result<crate::analysis::Analysis> {
    let settings = crate::read::ReadSettings { nsys_process: Some(process), ..Default::default() };
    let mut reader = crate::read::Reader::of(crate::ingest::Format::NsysSqlite, settings);
    reader.push(bytes)?;
    let mut trace = reader.finish()?;
    crate::link::link(&mut trace);
    crate::analysis::Analysis::new(trace, options)
}

/// A run read from its rank files, with what could not be read.
pub struct LoadedRun {
    /// The run (at least two ranks).
    pub run: Run,
    /// Ranks that could not be read: file and error.
    pub left_out: Vec<(String, Error)>,
    /// Ranks whose trace was cut short: file and what was kept.
    pub truncated: Vec<(String, String)>,
}

/// Reads the rank files `files` (one thread each, the cores shared among them unless `threads`
/// says how many each reads with), gives each the capture traces of its rank, and analyses the
/// run. A rank that cannot be read is left out and named; fewer than two readable ranks is an error.
pub fn read_run(
    files: &[PathBuf],
    options: &Options,
    threads: Option<usize>,
    captures: &[PathBuf],
    run_options: RunOptions,
) -> Result<LoadedRun> {
    let sources = rank_sources(files)?;
    if sources.len() < 2 {
        return Err(Error::new(format!(
            "ranks needs the traces of at least two ranks (files, a folder holding them, or an Nsight Systems export of several processes); {} given",
            sources.len()
        )));
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = threads.unwrap_or((cores / sources.len()).max(1));
    let captures = ranked_captures(captures, threads)?;
    let captures = &captures;
    let results: Vec<Result<crate::analysis::Analysis>> = std::thread::scope(|scope| {
        let workers: Vec<_> = sources
            .iter()
            .map(|s| {
                scope.spawn(move || match &s.process {
                    Some((p, bytes)) => analyze_process(bytes, *p, options.clone()),
                    None => analyze_path_choosing(&s.path, options.clone(), threads, |t| {
                        captures_of_rank(captures, trace_rank(t, &s.path.display().to_string()))
                    }),
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap_or_else(|_| Err(Error::new("the rank's thread panicked")))).collect()
    });
    let mut traces = Vec::new();
    let mut left_out = Vec::new();
    let mut truncated = Vec::new();
    for (source, result) in sources.iter().zip(results) {
        let name = source.label();
        match result {
            Ok(analysis) => {
                if let Some(cut) = &analysis.trace.stats.truncation {
                    truncated.push((name.clone(), cut.message().to_string()));
                }
                traces.push(RankTrace { file: name, analysis });
            }
            Err(e) => left_out.push((name, e)),
        }
    }
    if !left_out.is_empty() && traces.len() < 2 {
        return Err(Error::new(format!(
            "{} of {} ranks could not be read: fewer than two remain",
            left_out.len(),
            sources.len()
        )));
    }
    let run = analyse_run(traces, run_options)?;
    Ok(LoadedRun { run, left_out, truncated })
}

/// The key-value metadata of a run's exported tables: the rank files in rank order, their count.
pub fn run_identity(run: &Run) -> Vec<(String, String)> {
    let files: Vec<&str> = run.ranks.iter().map(|r| r.trace.file.as_str()).collect();
    vec![
        ("traceprism.version".to_string(), env!("CARGO_PKG_VERSION").to_string()),
        ("traceprism.files".to_string(), files.join("\n")),
        ("traceprism.ranks".to_string(), run.ranks.len().to_string()),
    ]
}
