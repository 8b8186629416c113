//! bytes → events: gzip inflate, then the streaming JSON event reader, which hands each event
//! to an [`EventSink`] it defines (or, for a JAX profile, the `XSpace` protobuf reader, [`read_xspace`]). Nothing here knows the model: [`crate::read`] drives these
//! pieces into the model's builder.

mod boundary;
mod ending;
mod event;
mod inflate;
mod key_order;
/// Nsight Systems SQLite exports: natively through `rusqlite`; in the page through the row bytes
/// the separate SQLite module (`sqlite/`, fetched only for a `.sqlite`) hands over.
pub mod nsys;
pub(crate) mod number;
mod repair;
mod scan;
mod simd16;
mod sniff;
mod stream;
mod xplane;

pub use boundary::{document_form, likely_event_start, DocumentForm};
pub use ending::{Truncation, OPEN_ARRAY_NOTE};
pub use event::{Args, CommArgs, Field, Id, RawEvent, XlaArgs};
pub use inflate::{gunzip, is_gzip, GzipDecoder, Output};
#[cfg(all(not(target_arch = "wasm32"), feature = "nsys"))]
pub use nsys::sqlite::{nsys_gpu_processes, read_nsys, read_nsys_process};
pub use nsys::{looks_like_rows, read_nsys_rows, NsysRead};
pub use sniff::looks_like_sqlite;
pub use stream::{EventSink, JsonStream, TextEnd};
pub use xplane::{launch_dims, looks_like_xspace, read_xspace, ModuleRun, ModuleRuns};
