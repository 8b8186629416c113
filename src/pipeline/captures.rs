//! Capture traces from the command line: files, or a folder with `execution_details.json` (the
//! list TraceLens' capture tooling writes: each file with the batch size and mode its graphs were
//! captured for).

use crate::error::{Error, Result};
use crate::link::graphs::{execution_details, Capture};
use std::path::{Path, PathBuf};

/// One capture file to read, with what its `execution_details.json` says.
#[derive(Debug, Clone, PartialEq)]
pub struct CaptureFile {
    /// The file.
    pub path: PathBuf,
    /// Batch size its graphs were captured for.
    pub batch_size: Option<u64>,
    /// `FULL` or `PIECEWISE`.
    pub mode: Option<String>,
}

/// The capture files `paths` name: a file as is; a folder (or an `execution_details.json`) as
/// the files its `execution_details.json` lists.
pub fn capture_files(paths: &[PathBuf]) -> Result<Vec<CaptureFile>> {
    let mut out = Vec::new();
    for p in paths {
        let details = if p.is_dir() {
            let d = p.join("execution_details.json");
            if !d.is_file() {
                return Err(Error::new(format!(
                    "--capture {}: a folder of capture traces needs its execution_details.json (or give the files themselves)",
                    p.display()
                )));
            }
            Some(d)
        } else if p.file_name().is_some_and(|n| n == "execution_details.json") {
            Some(p.clone())
        } else {
            None
        };
        match details {
            Some(d) => {
                let text = std::fs::read_to_string(&d).map_err(|e| Error::new(format!("cannot read {}: {e}", d.display())))?;
                let dir = d.parent().unwrap_or(Path::new("."));
                for e in execution_details(&text).map_err(|e| Error::new(format!("{}: {e}", d.display())))? {
                    let path = dir.join(&e.file);
                    if !path.is_file() {
                        return Err(Error::new(format!("{}: lists {}, which is not in {}", d.display(), e.file, dir.display())));
                    }
                    out.push(CaptureFile { path, batch_size: e.batch_size, mode: e.mode });
                }
            }
            None => out.push(CaptureFile { path: p.clone(), batch_size: None, mode: None }),
        }
    }
    Ok(out)
}

/// Reads and links every capture trace `paths` name.
pub fn read_captures(paths: &[PathBuf], threads: usize) -> Result<Vec<Capture>> {
    capture_files(paths)?
        .into_iter()
        .map(|f| {
            let trace = super::read_path_on(&f.path, threads)
                .map_err(|e| Error::new(format!("capture trace {}: {e}", f.path.display())))?;
            let label = f.path.file_name().map_or_else(|| f.path.display().to_string(), |n| n.to_string_lossy().into_owned());
            Ok(Capture::new(trace, label, f.batch_size, f.mode))
        })
        .collect()
}

pub use crate::analysis::ranks::trace_rank;

/// Capture traces grouped by the rank each was recorded on (`None`: no rank known).
pub type RankedCaptures = Vec<(Option<u32>, Vec<Capture>)>;

/// Reads the capture traces `paths` name and groups them by rank ([`trace_rank`]).
pub fn ranked_captures(paths: &[PathBuf], threads: usize) -> Result<RankedCaptures> {
    Ok(group_by_rank(read_captures(paths, threads)?))
}

fn group_by_rank(captures: Vec<Capture>) -> RankedCaptures {
    let mut groups: RankedCaptures = Vec::new();
    for c in captures {
        let rank = trace_rank(&c.trace, &c.label);
        match groups.iter_mut().find(|(r, _)| *r == rank) {
            Some((_, v)) => v.push(c),
            None => groups.push((rank, vec![c])),
        }
    }
    groups
}

/// The captures of a rank: those recorded on it, else those of no known rank (one engine's
/// graphs serve every rank); none when only other ranks' captures were given.
pub fn captures_of_rank(groups: &RankedCaptures, rank: Option<u32>) -> &[Capture] {
    let find = |r: Option<u32>| groups.iter().find(|(g, _)| *g == r).map(|(_, v)| v.as_slice());
    rank.and_then(|r| find(Some(r))).or_else(|| find(None)).unwrap_or(&[])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture(label: &str, rank: Option<i64>) -> Capture {
        let mut t = crate::model::Trace::default();
        t.meta.rank = rank;
        Capture::new(t, label.to_string(), None, None)
    }

    #[test]
    fn each_rank_takes_its_own_captures_and_unranked_ones_serve_all() {
        let groups = group_by_rank(vec![
            capture("graph_capture_rank_0.123.pt.trace.json.gz", None),
            capture("x.json.gz", Some(1)),
            capture("bs_32_rank2.json.gz", None),
        ]);
        let labels = |r| captures_of_rank(&groups, r).iter().map(|c| c.label.as_str()).collect::<Vec<_>>();
        assert_eq!(labels(Some(0)), ["graph_capture_rank_0.123.pt.trace.json.gz"], "rank from the file name");
        assert_eq!(labels(Some(1)), ["x.json.gz"], "rank from distributedInfo");
        assert_eq!(labels(Some(2)), ["bs_32_rank2.json.gz"]);
        assert!(labels(Some(3)).is_empty(), "another rank's graphs are not this rank's");
        let shared = group_by_rank(vec![capture("capture.json.gz", None)]);
        assert_eq!(captures_of_rank(&shared, Some(5)).len(), 1, "a capture of no rank serves every rank");
    }
}
