//! Chrome-trace JSON, read as its text arrives: [`JsonStream`] finds each event in the event array
//! (`event` decodes one, reading only the fields the model keeps), repairs what a known writer
//! bug broke (`repair`) and says how the document ended ([`Truncation`]). The byte scanners
//! (`scan`, `simd16`, `number`, `key_order`) are this reader's insides.

mod boundary;
mod event;
mod key_order;
pub(crate) mod number;
mod repair;
mod scan;
mod simd16;
mod stream;

pub use crate::ingest::interchange::{Truncation, OPEN_ARRAY_NOTE};
pub use boundary::likely_event_start;
pub use stream::{JsonStream, TextEnd};
