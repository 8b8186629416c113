//! The whole flow, in order: read (bytes → events → model), link, analyse. The faces (CLI, wasm)
//! and the tests call these; each step below is its own module and runs one way.

#[cfg(not(target_arch = "wasm32"))]
pub mod captures;
#[cfg(not(target_arch = "wasm32"))]
pub mod ranks;
pub mod warm_up;

use crate::analysis::{Analysis, Options};
use crate::error::Result;
use crate::model::Trace;
use crate::read::{self, Reader};

/// Ends a reader's input and links the model ([`crate::link`]): the trace every analysis reads.
pub fn finish(reader: Reader) -> Result<Trace> {
    finish_with_captures(reader, &[])
}

/// [`finish`], giving kernels replayed from graphs the ops that dispatched them in `captures`.
pub fn finish_with_captures(reader: Reader, captures: &[crate::link::graphs::Capture]) -> Result<Trace> {
    let mut trace = reader.finish()?;
    crate::link::link_with_captures(&mut trace, captures);
    Ok(trace)
}

/// Reads and links a trace file (`.json` or `.json.gz`, detected by content) on
/// [`read::default_read_threads`] threads; `-` reads standard input. See [`read::read_path_on`].
pub fn read_path(path: &std::path::Path) -> Result<Trace> {
    read_path_on(path, read::default_read_threads())
}

/// [`read_path`] on at most `threads` threads.
pub fn read_path_on(path: &std::path::Path, threads: usize) -> Result<Trace> {
    let mut trace = read::read_path_on(path, threads)?;
    crate::link::link(&mut trace);
    Ok(trace)
}

/// Reads and links a whole trace from any `std::io::Read` (see [`read::read_trace`]).
pub fn read_trace(source: impl std::io::Read + Send) -> Result<Trace> {
    let mut trace = read::read_trace(source)?;
    crate::link::link(&mut trace);
    Ok(trace)
}

/// Reads, links and analyses a trace file (`.json` or `.json.gz`, detected by content).
///
/// Natively the built-in rule sets (a fixed cost of regex compilation) are compiled on a second
/// thread while the file is read, so that work is off the path from bytes to analysis.
pub fn analyze_path(path: &std::path::Path, options: Options) -> Result<Analysis> {
    analyze_path_on(path, options, read::default_read_threads())
}

/// [`analyze_path`], reading a plain-JSON file on at most `threads` threads.
pub fn analyze_path_on(path: &std::path::Path, options: Options, threads: usize) -> Result<Analysis> {
    analyze_path_with(path, options, threads, &[])
}

/// [`analyze_path_on`] with capture traces (files, or folders holding `execution_details.json`)
/// whose ops the trace's graph replays take (see [`crate::link::graphs`]).
pub fn analyze_path_with(
    path: &std::path::Path,
    options: Options,
    threads: usize,
    captures: &[std::path::PathBuf],
) -> Result<Analysis> {
    #[cfg(not(target_arch = "wasm32"))]
    let captures = captures::read_captures(captures, threads)?;
    #[cfg(target_arch = "wasm32")]
    let captures: Vec<crate::link::graphs::Capture> = {
        let _ = captures;
        Vec::new()
    };
    analyze_path_choosing(path, options, threads, |_| &captures)
}

/// Reads a trace file, links it with the capture traces `choose` picks for it (by its rank, say),
/// and analyses it.
///
/// Natively the built-in rule sets are compiled on a second thread while the file is read.
pub fn analyze_path_choosing<'c>(
    path: &std::path::Path,
    options: Options,
    threads: usize,
    choose: impl FnOnce(&Trace) -> &'c [crate::link::graphs::Capture],
) -> Result<Analysis> {
    #[cfg(not(target_arch = "wasm32"))]
    let rules = std::thread::spawn(warm_up::compile_rules);
    let mut trace = read::read_path_on(path, threads)?;
    let captures = choose(&trace);
    crate::link::link_with_captures(&mut trace, captures);
    // The rule sets are shared once-built caches: a failure here shows again (with its message)
    // when the analysis loads them, so the result of the warm thread itself is not needed.
    #[cfg(not(target_arch = "wasm32"))]
    let _ = rules.join();
    Analysis::new(trace, options)
}

/// Reads a ground-truth file (`X.truth.json.gz` or plain JSON) for scoring an analysis against it
/// ([`crate::analysis::truth`]).
pub fn read_truth(path: &std::path::Path) -> Result<crate::analysis::truth::Truth> {
    let bytes = std::fs::read(path).map_err(|e| crate::error::Error::new(format!("cannot read {}: {e}", path.display())))?;
    crate::analysis::truth::Truth::from_json(&crate::read::whole_text(bytes)?)
}
