//! traceprism: read torch.profiler (Kineto) GPU traces of LLM inference.
//!
//! Data flow, one module per arrow; a module uses only the modules before it
//! (`tests/layers_one_way.rs` checks):
//!
//! ```text
//! bytes ─ ingest (inflate, JSON events) ─▶ read (into the model: columnar, interned) ─ link ─▶ analysis
//!       ─▶ table / report ─▶ pipeline (read → link → analyse) ─▶ faces (cli, wasm)
//! ```

pub mod analysis;
pub mod error;
pub mod ingest;
pub mod link;
pub mod model;
pub mod pipeline;
pub mod read;
pub mod report;
pub mod rules;
pub mod split;
pub mod support;
pub mod synth;
pub mod table;

#[cfg(target_arch = "wasm32")]
pub mod wasm;

pub use analysis::{Analysis, Options};
pub use error::{Error, Result};
pub use model::Trace;
pub use pipeline::{analyze_path, analyze_path_on, read_path, read_trace};
pub use read::Reader;
