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
            let trace = super::read_path_on(&f.path, threads).map_err(|e| Error::new(format!("capture trace {}: {e}", f.path.display())))?;
            let label = f.path.file_name().map_or_else(|| f.path.display().to_string(), |n| n.to_string_lossy().into_owned());
            Ok(Capture::new(trace, label, f.batch_size, f.mode))
        })
        .collect()
}
