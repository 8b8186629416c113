//! events → model: [`Reader`] takes a trace's bytes in chunks of any size, runs them through
//! [`crate::ingest`] (inflate, JSON events) and builds the model's columns. What it returns is not
//! linked yet: [`crate::pipeline`] links it ([`crate::link`]) before any analysis.
//!
//! Natively the reader uses more than one thread: large blocks of plain JSON are parsed in two
//! halves, files are read in ranges at once ([`files`]) and gzip is inflated on its own thread
//! ([`gzip_pipeline`]); the page does the same with Web Workers, moving [`Part`]s between them.

pub mod files;
pub mod formats;
#[cfg(not(target_arch = "wasm32"))]
pub mod gzip_pipeline;
pub mod part;
mod reader;
mod source;
pub use source::whole_text;

pub use files::{default_read_threads, read_path_on, read_trace, MAX_READ_THREADS};
pub use formats::{reading, sniff, ReadSettings, Reading};
#[cfg(not(target_arch = "wasm32"))]
pub use gzip_pipeline::{read_gzip, Sharing};
pub use part::{Part, PartReader};
pub use reader::{Progress, Reader};
