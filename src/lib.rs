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
pub mod summary;
pub mod table;
pub mod warm_up;

#[cfg(target_arch = "wasm32")]
pub mod wasm;

pub use analysis::{Analysis, Options};
pub use error::{Error, Result};
pub use ingest::{read_trace, Reader};
pub use model::Trace;

/// Reads, links and analyses a trace file (`.json` or `.json.gz`, detected by content).
pub fn analyze_path(path: &std::path::Path, options: Options) -> Result<Analysis> {
    let trace = ingest::read_path(path)?;
    Analysis::new(trace, options)
}
