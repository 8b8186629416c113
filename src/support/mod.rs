//! Small tools every layer may use, which know nothing of traces: running two pieces of work at
//! once, the little-endian byte codec of the worker transfer, the gzip trailer's CRC, names cut
//! to a width, ids as JavaScript can hold them, credentials a trace carries by accident, a seeded
//! random generator, medians of integer samples.

pub mod codec;
pub mod crc32;
pub mod ids;
pub mod median;
pub mod mix;
pub mod sat;
pub mod secrets;
pub mod text;
pub mod threads;
