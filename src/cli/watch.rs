//! `traceprism watch DIR [--interval S] [--trend FILE] [--ranks] [--once]`: analyses each new
//! trace file of a folder once it is complete and prints one line per window (a trend CSV row too).
//!
//! A file is read once it has stopped growing for two intervals and its end is whole: read, its
//! analysis must not say the input was cut (a gzip stream that ends early or fails its trailer, a
//! JSON document that does not close — the reader's tolerance of an open event array does not
//! count here); a file found cut is read again only once it has grown. Temporary names (`.part`, `.crswap`, `.tmp`,
//! dotfiles) and our own outputs (digests, truth files, the trend file) are ignored. A file read
//! is never read again: when it changes or disappears, that is noted. A file that fails to read is
//! reported by name and skipped; the watch goes on. Each window is kept as its digest only.
//! Ctrl-C stops cleanly (exit 0).

use super::args::Args;
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use traceprism::analysis::ranks::{analyse_run, rank_group_key, RankTrace, RunOptions};
use traceprism::gate::trend::{line, trend_row, Window, TREND_HEADER};
use traceprism::gate::Digest;
use traceprism::{Error, Result};

/// A file seen in the folder.
#[derive(Debug, Clone)]
struct Seen {
    size: u64,
    modified: Option<SystemTime>,
    /// Polls in a row with the same size and time.
    still: u32,
    /// Read (or given up on): never read again.
    done: bool,
    /// Its change or disappearance after it was read has been noted.
    noted: bool,
    /// The size at which a read found it cut short: not read again until it changes.
    cut_at: Option<u64>,
}

fn now_text() -> String {
    let secs = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (h, m, s) = ((secs / 3600) % 24, (secs / 60) % 60, secs % 60);
    format!("{h:02}:{m:02}:{s:02}Z")
}

/// What reading a complete-looking file gave.
enum Read {
    Window(Box<Digest>, Box<traceprism::Analysis>),
    /// The input is cut (still being written?).
    Cut(String),
    Broken(String),
}

fn read(path: &Path, a: &Args) -> Read {
    let threads = a.threads.unwrap_or_else(traceprism::read::default_read_threads);
    match traceprism::analyze_path_on(path, a.options.clone(), threads) {
        Ok(analysis) => {
            if let Some(cut) = &analysis.trace.stats.truncation {
                return Read::Cut(cut.message().to_string());
            }
            let name = path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            Read::Window(Box::new(Digest::of(&analysis, &name)), Box::new(analysis))
        }
        Err(e) => Read::Broken(e.to_string()),
    }
}

/// The watch's state: files seen, windows read, the trend file.
struct Watch<'a> {
    dir: PathBuf,
    args: &'a Args,
    once: bool,
    ranks: bool,
    trend: Option<PathBuf>,
    trend_name: Option<String>,
    seen: BTreeMap<String, Seen>,
    windows: Vec<Window>,
}

impl Watch<'_> {
    fn emit(&mut self, w: Window, straggler: Option<String>) -> Result<()> {
        let (time, index) = (now_text(), self.windows.len());
        let (first, previous) = (self.windows.first(), self.windows.last());
        super::out(&format!("{}\n", line(index, &time, &w, first, previous)));
        if let Some(s) = straggler {
            super::out(&format!("{time} window {index} straggler: {s}\n"));
        }
        if let Some(path) = &self.trend {
            let fresh = !path.exists();
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| Error::new(format!("cannot write {}: {e}", path.display())))?;
            let row = trend_row(index, &time, &w, first, previous);
            let text = if fresh { format!("{TREND_HEADER}\n{row}\n") } else { format!("{row}\n") };
            f.write_all(text.as_bytes()).map_err(|e| Error::new(format!("cannot write {}: {e}", path.display())))?;
        }
        self.windows.push(w);
        Ok(())
    }

    /// One look at the folder: notes changes, reads what is complete.
    fn poll(&mut self) -> Result<()> {
        let entries = std::fs::read_dir(&self.dir).map_err(|e| Error::new(format!("cannot read {}: {e}", self.dir.display())))?;
        let mut present: HashMap<String, (u64, Option<SystemTime>)> = HashMap::new();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_file() && traceprism::gate::trend::is_watched(&name, self.trend_name.as_deref()) {
                present.insert(name, (meta.len(), meta.modified().ok()));
            }
        }
        for (name, s) in self.seen.iter_mut() {
            if !present.contains_key(name) && s.done && !s.noted {
                eprintln!("traceprism: watch: {name} was deleted (its window stays)");
                s.noted = true;
            }
        }
        for (name, (size, modified)) in &present {
            match self.seen.get_mut(name) {
                None => {
                    self.seen.insert(
                        name.clone(),
                        Seen { size: *size, modified: *modified, still: 0, done: false, noted: false, cut_at: None },
                    );
                }
                Some(s) if s.size != *size || s.modified != *modified => {
                    if s.done {
                        if !s.noted {
                            eprintln!("traceprism: watch: {name} changed after it was read: not read again");
                            s.noted = true;
                        }
                    } else {
                        (s.size, s.modified, s.still) = (*size, *modified, 0);
                    }
                }
                Some(s) => s.still += 1,
            }
        }
        let ready: Vec<String> = self
            .seen
            .iter()
            .filter(|(name, s)| {
                present.contains_key(*name) && !s.done && (self.once || (s.still >= 2 && s.cut_at != Some(s.size)))
            })
            .map(|(n, _)| n.clone())
            .collect();
        if self.ranks {
            self.read_rank_windows(ready)
        } else {
            for name in ready {
                if let Some((digest, _)) = self.read_one(&name) {
                    self.emit(Window::of(&digest, &name), None)?;
                }
            }
            Ok(())
        }
    }

    /// Reads one file; `None` when it is not (yet) a window.
    fn read_one(&mut self, name: &str) -> Option<(Box<Digest>, Box<traceprism::Analysis>)> {
        let path = self.dir.join(name);
        let s = self.seen.get_mut(name)?;
        match read(&path, self.args) {
            Read::Window(d, a) => {
                s.done = true;
                Some((d, a))
            }
            Read::Cut(why) => {
                if self.once {
                    s.done = true;
                    eprintln!("traceprism: watch: {name} is cut short ({why}): skipped");
                } else {
                    // Still being written (or cut for good): read again once it has grown.
                    s.cut_at = Some(s.size);
                    eprintln!("traceprism: watch: {name} is not whole yet ({why}): waiting for it to grow");
                }
                None
            }
            Read::Broken(why) => {
                s.done = true;
                eprintln!("traceprism: watch: {name} cannot be read, skipped: {why}");
                None
            }
        }
    }

    /// With `--ranks`: the files of one window across ranks (one name but for the rank token),
    /// read together once each is complete; one window line and the straggler line.
    fn read_rank_windows(&mut self, ready: Vec<String>) -> Result<()> {
        let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for name in ready {
            let key = rank_group_key(&name).unwrap_or_else(|| name.clone());
            groups.entry(key).or_default().push(name);
        }
        for (key, names) in groups {
            // Every rank file of this window seen so far must be ready (not still being written).
            let pending =
                self.seen.iter().any(|(n, s)| !s.done && !names.contains(n) && rank_group_key(n).as_deref() == Some(&key));
            if pending && !self.once {
                continue;
            }
            let mut traces = Vec::new();
            let mut first: Option<(Box<Digest>, String)> = None;
            for name in &names {
                if let Some((d, analysis)) = self.read_one(name) {
                    if first.is_none() {
                        first = Some((d, name.clone()));
                    }
                    traces.push(RankTrace { file: name.clone(), analysis: *analysis });
                }
            }
            let Some((digest, name)) = first else { continue };
            let straggler = if traces.len() >= 2 {
                match analyse_run(traces, RunOptions::default()) {
                    Ok(run) => Some(run.finding().unwrap_or_else(|| "no rank arrives last by more than 1 µs".to_string())),
                    Err(e) => Some(format!("not analysed: {e}")),
                }
            } else {
                None
            };
            let mut w = Window::of(&digest, &name);
            if names.len() > 1 {
                w.file = format!("{key} ({} ranks)", names.len());
            }
            self.emit(w, straggler)?;
        }
        Ok(())
    }
}

/// Runs `watch`.
pub fn run(a: &Args) -> Result<()> {
    let dir = a.one_trace().map_err(|_| Error::new("watch needs one DIR"))?;
    if !Path::new(dir).is_dir() {
        return Err(Error::new(format!("{dir} is not a folder")));
    }
    let interval: f64 = match a.extra("--interval") {
        Some(v) => v
            .parse()
            .ok()
            .filter(|&s: &f64| s > 0.0)
            .ok_or_else(|| Error::new(format!("--interval: '{v}' is not a number of seconds")))?,
        None => 2.0,
    };
    let trend = a.extra("--trend").map(PathBuf::from);
    let mut watch = Watch {
        dir: PathBuf::from(dir),
        args: a,
        once: a.extra("--once").is_some(),
        ranks: a.extra("--ranks").is_some(),
        trend_name: trend.as_ref().and_then(|t| t.file_name()).map(|n| n.to_string_lossy().into_owned()),
        trend,
        seen: BTreeMap::new(),
        windows: Vec::new(),
    };
    if watch.once {
        return watch.poll();
    }
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst))
        .map_err(|e| Error::new(format!("cannot catch Ctrl-C: {e}")))?;
    eprintln!("traceprism: watching {dir} every {interval} s (Ctrl-C stops)");
    while !stop.load(Ordering::SeqCst) {
        watch.poll()?;
        // Sleep in small steps so that Ctrl-C is answered at once.
        let until = std::time::Instant::now() + Duration::from_secs_f64(interval);
        while std::time::Instant::now() < until && !stop.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    eprintln!("traceprism: watch stopped: {} windows", watch.windows.len());
    Ok(())
}
