//! bytes → events. [`inflate`](gunzip) undoes gzip; [`mod@format`] names the formats an input can be (`crate::read::sniff` tells which, once);
//! one reader per format hands what it finds to an [`EventSink`] ([`interchange`]): the streaming
//! Chrome-trace JSON reader ([`json`]), the JAX / TensorFlow `XSpace` protobuf reader
//! ([`read_xspace`]) and the Nsight Systems export reader ([`nsys`]: natively through SQLite, in
//! the page through the row bytes the page's SQLite module hands over). Nothing here knows the
//! model: [`crate::read`] drives these pieces into the model's builder.

pub mod format;
mod inflate;
pub mod interchange;
pub mod json;
pub mod nsys;
mod xplane;

pub use format::{document_form, looks_like_digest, looks_like_sqlite, DocumentForm, Format};
pub use inflate::{gunzip, is_gzip, GzipDecoder, Output};
pub use interchange::{launch_dims, ModuleRun, ModuleRuns};
pub use interchange::{Args, CommArgs, EventSink, Fact, Field, Id, RawEvent, XlaArgs};
pub use interchange::{Truncation, OPEN_ARRAY_NOTE};
pub use json::{likely_event_start, JsonStream, TextEnd};
#[cfg(all(not(target_arch = "wasm32"), feature = "nsys"))]
pub use nsys::sqlite::{nsys_gpu_processes, read_nsys, read_nsys_process};
pub use nsys::{looks_like_rows, read_nsys_rows, NsysRead};
pub use xplane::{looks_like_xspace, read_xspace};
