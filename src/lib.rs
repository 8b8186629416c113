//! traceprism: read torch.profiler (Kineto) GPU traces of LLM inference.
//!
//! Data flow, one module per arrow:
//!
//! ```text
//! bytes ─ ingest (inflate, JSON events) ─▶ model (columnar, interned) ─ link ─▶ analysis ─▶ table ─▶ faces (cli, wasm)
//! ```

pub mod analysis;
pub mod error;
pub mod ingest;
pub mod link;
pub mod model;
pub mod report;
pub mod rules;
pub mod split;
pub mod support;
pub mod synth;
pub mod table;
pub mod warm_up;

#[cfg(target_arch = "wasm32")]
pub mod wasm;

pub use analysis::{Analysis, Options};
pub use error::{Error, Result};
pub use ingest::{read_trace, Reader};
pub use model::Trace;

/// Reads, links and analyses a trace file (`.json` or `.json.gz`, detected by content).
///
/// Natively the built-in rule sets (a fixed cost of regex compilation) are compiled on a second
/// thread while the file is read, so that work is off the path from bytes to analysis.
pub fn analyze_path(path: &std::path::Path, options: Options) -> Result<Analysis> {
    analyze_path_on(path, options, ingest::default_read_threads())
}

/// [`analyze_path`], reading a plain-JSON file on at most `threads` threads (see
/// [`ingest::read_path_on`]).
pub fn analyze_path_on(path: &std::path::Path, options: Options, threads: usize) -> Result<Analysis> {
    #[cfg(not(target_arch = "wasm32"))]
    let rules = std::thread::spawn(warm_up::compile_rules);
    let trace = ingest::read_path_on(path, threads)?;
    // The rule sets are shared once-built caches: a failure here shows again (with its message)
    // when the analysis loads them, so the result of the warm thread itself is not needed.
    #[cfg(not(target_arch = "wasm32"))]
    let _ = rules.join();
    Analysis::new(trace, options)
}
