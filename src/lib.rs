//! traceprism: read GPU profiler traces of LLM inference: torch.profiler (Kineto) Chrome-trace
//! JSON (plain or gzipped), JAX / TensorFlow XSpace protobufs (`.xplane.pb`) and Nsight Systems
//! SQLite exports, into phases, layers, kernel categories, findings (what to fix first), GPU time
//! by call path, comparisons and multi-rank runs.
//!
//! Data flow, one module per arrow; a module uses only the modules before it
//! (`tests/suite/layers_one_way.rs` checks):
//!
//! ```text
//! bytes ─ ingest (inflate; JSON events, XSpace, Nsight tables) ─▶ read (into the model: columnar,
//!       interned) ─ link ─▶ analysis (categories, phases, layers, findings, call paths, ranks…)
//!       ─▶ table / report / split / gate (digests of traces, the regression gate)
//!       ─▶ pipeline (read → link → analyse) ─▶ faces (cli, mcp, wasm; the Python face in python/)
//! ```

#![warn(missing_docs)]

pub mod analysis;
pub mod error;
pub mod gate;
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
pub use pipeline::{analyze_path, analyze_path_on, analyze_path_with, read_path, read_trace};
pub use read::Reader;
