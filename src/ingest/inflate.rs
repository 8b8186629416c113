//! Streaming gzip decompression: gzip framing by hand, DEFLATE by zlib-rs (through `flate2`).
//!
//! Handles headers split across chunks, optional header fields, and concatenated gzip members.
//! Output goes wherever the caller wants it ([`Output`]): the CLI's gzip reader inflates straight
//! into the blocks it hands to the parser, with no copy in between.
//!
//! Each member's trailer is checked: its length (ISIZE) and its CRC-32 (the page may turn the CRC
//! off for large files, see [`GzipDecoder::check_crc`]). A stream that stops early, or whose last
//! trailer is missing or wrong, is not an error here: [`GzipDecoder::finish`] says what is wrong at
//! the end and the reader analyses the text that came before it (see `Truncation`); a wrong
//! trailer followed by another member is corruption in the middle, an error.

use crate::error::{Error, Result};
use flate2::{Decompress, FlushDecompress, Status};
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
    gunzip_pieces([bytes])
}

/// Decompresses gzip data that arrives in `pieces`, into one buffer.
fn gunzip_pieces<'a>(pieces: impl IntoIterator<Item = &'a [u8]>) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut dec = GzipDecoder::default();
    for piece in pieces {
        dec.push(piece, &mut |b| {
            out.extend_from_slice(b);
            Ok(())
        })?;
    }
    let end = dec.finish(&mut |b| {
        out.extend_from_slice(b);
        Ok(())
    })?;
    match end {
        None => Ok(out),
        Some(what) => Err(Error::new(format!("truncated gzip: {what}"))),
    }
}

/// Where inflated text goes: the decoder asks for room, inflates into it, then says how much it wrote.
pub trait Output {
    /// Room for more output; never empty.
    fn room(&mut self) -> &mut [u8];
    /// The first `n` bytes of the last room are new output.
    fn wrote(&mut self, n: usize) -> Result<()>;
}

/// An [`Output`] that hands each piece of output to a function, through a buffer of its own.
struct Staged<'a> {
    buffer: &'a mut [u8],
    emit: &'a mut dyn FnMut(&[u8]) -> Result<()>,
}

impl Output for Staged<'_> {
    fn room(&mut self) -> &mut [u8] {
        self.buffer
    }
    fn wrote(&mut self, n: usize) -> Result<()> {
        (self.emit)(&self.buffer[..n])
    }
}

/// An incremental gzip decoder.
pub struct GzipDecoder {
    inflater: Box<Decompress>,
    phase: Phase,
    /// Bytes held back while a header or trailer is incomplete.
    pending: Vec<u8>,
    /// The buffer behind [`GzipDecoder::push`]'s pieces of output (allocated on first use).
    staging: Vec<u8>,
    compressed_in: u64,
    decompressed_out: u64,
    /// CRC-32 and length of the current member's output, for its trailer.
    member_crc: u32,
    /// Whether the CRC-32 is computed and checked (see [`GzipDecoder::check_crc`]).
    check_crc: bool,
    member_len: u64,
    /// What was wrong with the last trailer read: an error if another member follows it.
    bad_trailer: Option<String>,
}

/// Output per piece handed out by [`GzipDecoder::push`].
const PIECE: usize = 1 << 20;

impl Default for GzipDecoder {
    fn default() -> Self {
        GzipDecoder {
            inflater: Box::new(Decompress::new(false)),
            phase: Phase::Header,
            pending: Vec::new(),
            staging: Vec::new(),
            compressed_in: 0,
            decompressed_out: 0,
            member_crc: 0,
            check_crc: true,
            member_len: 0,
            bad_trailer: None,
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
    /// Turns the CRC-32 check of each member's trailer on (the default) or off. Off, a corrupt
    /// stream is still found by its deflate data or its trailer's length, just not by a flipped
    /// bit deflate accepts; the page offers this for large files, where the CRC costs time.
    pub fn check_crc(&mut self, on: bool) {
        self.check_crc = on;
    }

    /// Decompresses `input`, calling `emit` with each piece of output.
    pub fn push(&mut self, input: &[u8], emit: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        let mut staging = self.staging_buffer();
        let result = self.push_to(input, &mut Staged { buffer: &mut staging, emit });
        self.staging = staging;
        result
    }

    /// Decompresses `input` into `out`.
    pub fn push_to(&mut self, input: &[u8], out: &mut dyn Output) -> Result<()> {
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
                    let (done, consumed) = self.inflate(data, out)?;
                    data = &data[consumed..];
                    if !done {
                        // Needs more input (the inflater keeps its own state between calls).
                        return Ok(());
                    }
                    self.phase = Phase::Trailer;
                }
                Phase::Trailer => {
                    if data.len() < 8 {
                        self.pending = data.to_vec();
                        return Ok(());
                    }
                    self.bad_trailer = self.check_trailer(&data[..8]);
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
                    if let Some(bad) = self.bad_trailer.take() {
                        return Err(Error::new(format!("corrupt gzip data: {bad}, and another member follows")));
                    }
                    (self.member_crc, self.member_len) = (0, 0);
                    self.inflater.reset(false);
                    self.phase = Phase::Header;
                }
            }
        }
        Ok(())
    }

    /// Ends the input (any last output goes to `emit`). `Some(what)` if the stream does not end
    /// cleanly: it stops inside a member, its last trailer is missing, or the trailer's length or
    /// CRC does not match the text. The text emitted so far is all there is.
    pub fn finish(&mut self, emit: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<Option<String>> {
        let mut staging = self.staging_buffer();
        let result = self.finish_to(&mut Staged { buffer: &mut staging, emit });
        self.staging = staging;
        result
    }

    /// [`GzipDecoder::finish`] with the output going to `out`.
    pub fn finish_to(&mut self, out: &mut dyn Output) -> Result<Option<String>> {
        if self.phase == Phase::Body && self.inflate(&[], out)?.0 {
            self.phase = Phase::Trailer;
        }
        Ok(match self.phase {
            Phase::End => self.bad_trailer.take(),
            Phase::Trailer => {
                Some(format!("the gzip trailer (CRC-32 and length) is cut: {} of its 8 bytes are present", self.pending.len()))
            }
            Phase::Header | Phase::Body => Some(format!(
                "the gzip stream ends early ({} compressed bytes read, {} bytes decompressed)",
                self.compressed_in, self.decompressed_out
            )),
        })
    }

    /// What is wrong with a member's 8-byte trailer (CRC-32, then length mod 2^32), if anything.
    fn check_trailer(&self, trailer: &[u8]) -> Option<String> {
        let word = |k: usize| u32::from_le_bytes([trailer[k], trailer[k + 1], trailer[k + 2], trailer[k + 3]]);
        if word(4) != self.member_len as u32 {
            return Some(format!(
                "the gzip trailer gives a length of {} bytes (mod 2^32) but the member inflates to {}",
                word(4),
                self.member_len
            ));
        }
        if self.check_crc && word(0) != self.member_crc {
            return Some(format!("the gzip trailer's CRC-32 is {:08x} but the text's is {:08x}", word(0), self.member_crc));
        }
        None
    }

    fn staging_buffer(&mut self) -> Vec<u8> {
        let mut staging = std::mem::take(&mut self.staging);
        staging.resize(PIECE, 0);
        staging
    }

    /// Inflates `input` into `out` until the input is used up or the DEFLATE stream ends. Returns
    /// whether it ended and how many input bytes were read.
    fn inflate(&mut self, input: &[u8], out: &mut dyn Output) -> Result<(bool, usize)> {
        let mut consumed = 0;
        loop {
            let room = out.room();
            let room_len = room.len();
            let (in_before, out_before) = (self.inflater.total_in(), self.inflater.total_out());
            let status = self
                .inflater
                .decompress(&input[consumed..], room, FlushDecompress::None)
                .map_err(|e| Error::new(format!("corrupt gzip data ({e}) after {} decompressed bytes", self.decompressed_out)))?;
            let read = (self.inflater.total_in() - in_before) as usize;
            let written = (self.inflater.total_out() - out_before) as usize;
            consumed += read;
            if written > 0 {
                if self.check_crc {
                    self.member_crc = zlib_rs::crc32::crc32(self.member_crc, &room[..written]);
                }
                self.member_len += written as u64;
                self.decompressed_out += written as u64;
                out.wrote(written)?;
            }
            match status {
                Status::StreamEnd => return Ok((true, consumed)),
                // The room is full: more output may be waiting.
                _ if written == room_len => {}
                // All input read (a truncated stream is reported by `finish`).
                _ if consumed == input.len() => return Ok((false, consumed)),
                _ if read > 0 || written > 0 => {}
                _ => {
                    return Err(Error::new(format!(
                        "corrupt gzip data (the inflater stopped) after {} decompressed bytes",
                        self.decompressed_out
                    )))
                }
            }
        }
    }

    /// Decompressed bytes so far.
    pub fn decompressed(&self) -> u64 {
        self.decompressed_out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A gzip member of `data`.
    fn member(data: &[u8]) -> Vec<u8> {
        let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
        out.extend(miniz_oxide::deflate::compress_to_vec(data, 6));
        out.extend(zlib_rs::crc32::crc32(0, data).to_le_bytes());
        out.extend((data.len() as u32).to_le_bytes());
        out
    }

    /// Text with back references near and far (up to the 32 KiB limit) and some noise, longer than
    /// several windows.
    fn sample(len: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(len);
        let mut x: u32 = 12345;
        while out.len() < len {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            if x.is_multiple_of(7) && out.len() > 40_000 {
                let from = out.len() - 32_768 + (x as usize >> 8) % 1000;
                let n = 20 + (x as usize >> 4) % 200;
                for k in 0..n {
                    out.push(out[from + k]);
                }
            } else {
                out.extend_from_slice(format!("{{\"ts\": {}, \"name\": \"k{}\"}}, ", x >> 3, x % 97).as_bytes());
            }
        }
        out.truncate(len);
        out
    }

    fn inflate_in_pieces(gz: &[u8], piece: usize) -> Result<Vec<u8>> {
        gunzip_pieces(gz.chunks(piece))
    }

    #[test]
    fn round_trips_across_many_windows_in_any_piece_size() {
        let data = sample(3 * PIECE + 12_345);
        let gz = member(&data);
        for piece in [1 << 30, 1 << 20, 65_536, 4096, 7] {
            assert!(inflate_in_pieces(&gz, piece).unwrap() == data, "piece {piece}");
        }
    }

    #[test]
    fn byte_by_byte_and_concatenated_members() {
        let (a, b) = (sample(70_000), sample(5_000));
        let mut gz = member(&a);
        gz.extend(member(&b));
        let mut want = a.clone();
        want.extend_from_slice(&b);
        assert!(inflate_in_pieces(&gz, 1).unwrap() == want);
        assert!(inflate_in_pieces(&gz, 1 << 20).unwrap() == want);
    }

    #[test]
    fn every_truncation_is_an_error_never_a_panic() {
        let gz = member(&sample(40_000));
        for cut in 1..gz.len() {
            let e = inflate_in_pieces(&gz[..cut], 997).expect_err("truncated");
            assert!(e.to_string().contains("truncated gzip"), "cut {cut}: {e}");
        }
    }

    /// Inflates `gz` whole; returns the text and what `finish` said of the end.
    fn inflate_to_end(gz: &[u8]) -> Result<(Vec<u8>, Option<String>)> {
        let mut out = Vec::new();
        let mut dec = GzipDecoder::default();
        let mut emit = |b: &[u8]| {
            out.extend_from_slice(b);
            Ok(())
        };
        dec.push(gz, &mut emit)?;
        let end = dec.finish(&mut emit)?;
        Ok((out, end))
    }

    #[test]
    fn a_cut_stream_keeps_the_text_before_the_cut_and_says_what_is_missing() {
        let data = sample(300_000);
        let gz = member(&data);
        for cut in [gz.len() / 3, gz.len() - 20, gz.len() - 8, gz.len() - 3] {
            let (text, end) = inflate_to_end(&gz[..cut]).unwrap();
            assert!(data.starts_with(&text), "cut {cut}: the text is a prefix");
            let end = end.expect("a cut stream is reported");
            let want = if cut >= gz.len() - 8 { "trailer" } else { "ends early" };
            assert!(end.contains(want), "cut {cut}: {end}");
        }
        assert_eq!(inflate_to_end(&gz).unwrap(), (data, None));
    }

    #[test]
    fn a_wrong_last_trailer_is_reported_and_a_wrong_middle_one_is_an_error() {
        let data = sample(50_000);
        let mut bad_len = member(&data);
        let n = bad_len.len();
        bad_len[n - 4] ^= 1;
        assert!(inflate_to_end(&bad_len).unwrap().1.unwrap().contains("length"));
        let mut bad_crc = member(&data);
        bad_crc[n - 8] ^= 1;
        let end = inflate_to_end(&bad_crc).unwrap().1;
        {
            assert!(end.unwrap().contains("CRC-32"));
        }
        bad_crc.extend(member(&data));
        let e = inflate_to_end(&bad_crc).expect_err("a wrong trailer in the middle");
        assert!(e.to_string().contains("another member follows"), "{e}");
    }

    #[test]
    fn corrupt_deflate_data_is_an_error() {
        let mut gz = member(&sample(40_000));
        // Block type 3 does not exist.
        gz[10] |= 0b110;
        let e = inflate_in_pieces(&gz, 4096).expect_err("corrupt");
        assert!(e.to_string().contains("corrupt gzip data"), "{e}");
    }
}
