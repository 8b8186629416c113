//! Filling a buffer from any `std::io::Read`: what the block readers (`files.rs`) and the gzip
//! pipeline (`gzip_pipeline.rs`) both read with, kept below both so neither imports the other.

use crate::error::{Error, Result};

/// Reads into `buf` until it is full or the source ends; returns the bytes read (interrupted
/// reads are retried).
pub(super) fn read_some(source: &mut impl std::io::Read, buf: &mut [u8]) -> Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match source.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::new(format!("cannot read input: {e}"))),
        }
    }
    Ok(filled)
}

/// The text of a whole small input held in memory (a truth file, a trace to rewrite): inflated
/// when [`crate::read::sniff()`] says gzip, else as it is.
pub fn whole_text(bytes: Vec<u8>) -> Result<Vec<u8>> {
    match super::formats::sniff(&bytes) {
        crate::ingest::Format::Gzip => crate::ingest::gunzip(&bytes),
        _ => Ok(bytes),
    }
}
