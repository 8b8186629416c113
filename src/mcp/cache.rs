//! Opened traces, kept between tool calls: an agent asks twenty questions of one trace, and the
//! trace is read once. A trace is known by its path, size and modification time (and its capture
//! traces'), so a file written again is read again. Beyond a memory budget the least recently used
//! analyses are dropped (the one just used always stays).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;
use traceprism::analysis::{Analysis, Options};
use traceprism::{Error, Result};

/// The default memory budget of kept analyses, bytes (`TRACEPRISM_MCP_MEMORY_MB` overrides).
pub const DEFAULT_BUDGET: u64 = 4 << 30;

/// What a file is known by.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    path: PathBuf,
    len: u64,
    modified: Option<SystemTime>,
}

impl Stamp {
    fn of(path: &Path) -> Result<Stamp> {
        let meta = std::fs::metadata(path).map_err(|e| Error::new(format!("cannot read {}: {e}", path.display())))?;
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        Ok(Stamp { path, len: meta.len(), modified: meta.modified().ok() })
    }
}

struct Entry {
    trace: Stamp,
    captures: Vec<Stamp>,
    /// The options it was analysed with, as JSON text.
    options: String,
    analysis: Arc<Analysis>,
    bytes: u64,
    used: u64,
}

/// The kept analyses.
pub struct Cache {
    entries: Vec<Entry>,
    budget: u64,
    clock: u64,
}

/// Roughly what an analysis holds in memory: its columns (a few dozen bytes per GPU row, op and
/// launch) and its interned names.
fn size_of(a: &Analysis) -> u64 {
    let t = &a.trace;
    let rows = (t.gpu.len() + t.ops.len() + t.launches.len()) as u64;
    let names: u64 = (0..t.names.len()).map(|i| t.name(i as traceprism::model::NameId).len() as u64 + 16).sum();
    rows * 96 + names
}

impl Cache {
    /// An empty cache with the budget from `TRACEPRISM_MCP_MEMORY_MB`, else [`DEFAULT_BUDGET`].
    pub fn new() -> Cache {
        let budget = std::env::var("TRACEPRISM_MCP_MEMORY_MB")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .map_or(DEFAULT_BUDGET, |mb| mb << 20);
        Cache { entries: Vec::new(), budget, clock: 0 }
    }

    /// The analysis of the trace at `path` (with capture traces `captures`) under `options`, read
    /// now or kept.
    pub fn get(&mut self, path: &str, captures: &[String], options: &Options) -> Result<Arc<Analysis>> {
        let trace = Stamp::of(Path::new(path))?;
        let capture_stamps = captures.iter().map(|c| Stamp::of(Path::new(c))).collect::<Result<Vec<_>>>()?;
        let key = serde_json::to_string(options).map_err(|e| Error::new(e.to_string()))?;
        self.clock += 1;
        if let Some(e) = self.entries.iter_mut().find(|e| e.trace == trace && e.captures == capture_stamps && e.options == key) {
            e.used = self.clock;
            return Ok(e.analysis.clone());
        }
        let threads = traceprism::read::default_read_threads();
        let capture_paths: Vec<PathBuf> = captures.iter().map(PathBuf::from).collect();
        let analysis = Arc::new(traceprism::analyze_path_with(Path::new(path), options.clone(), threads, &capture_paths)?);
        let bytes = size_of(&analysis);
        self.entries.retain(|e| e.trace.path != trace.path || e.captures != capture_stamps || e.options != key);
        self.entries.push(Entry {
            trace,
            captures: capture_stamps,
            options: key,
            analysis: analysis.clone(),
            bytes,
            used: self.clock,
        });
        self.evict();
        Ok(analysis)
    }

    /// Drops the least recently used analyses beyond the budget (never the newest).
    fn evict(&mut self) {
        while self.entries.len() > 1 && self.entries.iter().map(|e| e.bytes).sum::<u64>() > self.budget {
            let oldest = self.entries.iter().enumerate().min_by_key(|(_, e)| e.used).map(|(i, _)| i).expect("entries");
            self.entries.remove(oldest);
        }
    }
}
