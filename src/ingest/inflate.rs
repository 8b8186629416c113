//! Streaming gzip decompression (gzip framing by hand, DEFLATE by `miniz_oxide`).
//!
//! Handles headers split across chunks, optional header fields, and concatenated gzip members.

use crate::error::{Error, Result};
use miniz_oxide::inflate::stream::{inflate, InflateState};
use miniz_oxide::{DataFormat, MZError, MZFlush, MZStatus};

/// True if `bytes` start with the gzip magic number.
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.len() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b
}

#[derive(Debug, PartialEq, Eq)]
enum Phase {
    Header,
    Body,
    Trailer,
    /// Between members: more data may start another member.
    End,
}

/// Decompresses a whole gzip buffer (for small side files such as truth files and tests).
pub fn gunzip(bytes: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut dec = GzipDecoder::default();
    dec.push(bytes, &mut |b| {
        out.extend_from_slice(b);
        Ok(())
    })?;
    dec.finish(&mut |b| {
        out.extend_from_slice(b);
        Ok(())
    })?;
    Ok(out)
}

/// An incremental gzip decoder.
pub struct GzipDecoder {
    state: Box<InflateState>,
    phase: Phase,
    /// Bytes held back while a header or trailer is incomplete.
    pending: Vec<u8>,
    out: Vec<u8>,
    compressed_in: u64,
    decompressed_out: u64,
}

const OUT_BLOCK: usize = 1 << 20;

impl Default for GzipDecoder {
    fn default() -> Self {
        GzipDecoder {
            state: InflateState::new_boxed(DataFormat::Raw),
            phase: Phase::Header,
            pending: Vec::new(),
            out: vec![0; OUT_BLOCK],
            compressed_in: 0,
            decompressed_out: 0,
        }
    }
}

/// Length of a complete gzip header at the start of `b`, `Ok(None)` if more bytes are needed.
fn header_len(b: &[u8]) -> Result<Option<usize>> {
    if b.len() < 10 {
        return Ok(None);
    }
    if !is_gzip(b) || b[2] != 8 {
        return Err(Error::new("bad gzip header (not gzip/deflate)"));
    }
    let flags = b[3];
    let mut i = 10;
    if flags & 4 != 0 {
        if b.len() < i + 2 {
            return Ok(None);
        }
        i += 2 + u16::from_le_bytes([b[i], b[i + 1]]) as usize;
    }
    for bit in [8u8, 16] {
        if flags & bit != 0 {
            match b.get(i..).and_then(|r| r.iter().position(|&c| c == 0)) {
                Some(p) => i += p + 1,
                None => return Ok(None),
            }
        }
    }
    if flags & 2 != 0 {
        i += 2;
    }
    Ok((b.len() >= i).then_some(i))
}

impl GzipDecoder {
    /// Decompresses `input`, calling `emit` with each block of output.
    pub fn push(&mut self, input: &[u8], emit: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        self.compressed_in += input.len() as u64;
        let owned;
        let mut data: &[u8] = if self.pending.is_empty() {
            input
        } else {
            self.pending.extend_from_slice(input);
            owned = std::mem::take(&mut self.pending);
            &owned
        };
        while !data.is_empty() {
            match self.phase {
                Phase::Header => match header_len(data)? {
                    None => {
                        self.pending = data.to_vec();
                        return Ok(());
                    }
                    Some(n) => {
                        data = &data[n..];
                        self.phase = Phase::Body;
                    }
                },
                Phase::Body => {
                    let r = inflate(&mut self.state, data, &mut self.out, MZFlush::None);
                    data = &data[r.bytes_consumed..];
                    if r.bytes_written > 0 {
                        self.decompressed_out += r.bytes_written as u64;
                        emit(&self.out[..r.bytes_written])?;
                    }
                    match r.status {
                        Ok(MZStatus::StreamEnd) => {
                            self.phase = Phase::Trailer;
                        }
                        Ok(_) => {}
                        Err(MZError::Buf) => {
                            if r.bytes_consumed == 0 && r.bytes_written == 0 {
                                // Needs more input.
                                self.pending = data.to_vec();
                                return Ok(());
                            }
                        }
                        Err(e) => {
                            return Err(Error::new(format!(
                                "corrupt gzip data ({e:?}) after {} decompressed bytes",
                                self.decompressed_out
                            )))
                        }
                    }
                }
                Phase::Trailer => {
                    if data.len() < 8 {
                        self.pending = data.to_vec();
                        return Ok(());
                    }
                    data = &data[8..];
                    self.phase = Phase::End;
                }
                Phase::End => {
                    // Another member may follow; zero padding is tolerated.
                    if data.iter().all(|&b| b == 0) {
                        return Ok(());
                    }
                    if data.len() < 2 {
                        self.pending = data.to_vec();
                        return Ok(());
                    }
                    if !is_gzip(data) {
                        return Err(Error::new("unexpected bytes after the end of the gzip stream"));
                    }
                    self.state = InflateState::new_boxed(DataFormat::Raw);
                    self.phase = Phase::Header;
                }
            }
        }
        Ok(())
    }

    /// Checks that the compressed stream ended cleanly.
    pub fn finish(&mut self, emit: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        if self.phase == Phase::Body {
            // Drain anything still buffered inside the inflater.
            loop {
                let r = inflate(&mut self.state, &[], &mut self.out, MZFlush::Finish);
                if r.bytes_written > 0 {
                    self.decompressed_out += r.bytes_written as u64;
                    emit(&self.out[..r.bytes_written])?;
                }
                match r.status {
                    Ok(MZStatus::StreamEnd) => {
                        self.phase = Phase::Trailer;
                        break;
                    }
                    _ if r.bytes_written > 0 => continue,
                    _ => break,
                }
            }
        }
        match self.phase {
            Phase::End | Phase::Trailer => Ok(()),
            _ => Err(Error::new(format!(
                "truncated gzip: the compressed stream ends early ({} compressed bytes read, {} bytes decompressed)",
                self.compressed_in, self.decompressed_out
            ))),
        }
    }

    /// Decompressed bytes so far.
    pub fn decompressed(&self) -> u64 {
        self.decompressed_out
    }
}
