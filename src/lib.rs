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
pub mod rules;
pub mod table;

#[cfg(target_arch = "wasm32")]
pub mod wasm;

pub use error::{Error, Result};
pub use ingest::{read_trace, Reader};
pub use model::Trace;
