//! Little-endian bytes of fixed-size values and length-prefixed text: how a part of a trace
//! parsed in one Web Worker travels to another ([`crate::model::transfer`] uses it). Every read is
//! bounds-checked: malformed bytes give an [`Error`], never a panic.

use crate::error::{Error, Result};

/// Appends values to a byte buffer.
#[derive(Default)]
pub struct WireWriter {
    /// The bytes written so far.
    pub out: Vec<u8>,
}

/// A fixed-size value with a little-endian byte form.
pub trait Le: Sized + Copy {
    /// Bytes per value.
    const SIZE: usize;
    /// Appends the value's bytes.
    fn put(self, out: &mut Vec<u8>);
    /// Reads a value from exactly `SIZE` bytes.
    fn get(b: &[u8]) -> Self;
    /// Appends all values' bytes (one pass over a pre-sized buffer: columns run to millions of rows).
    fn put_all(values: &[Self], out: &mut Vec<u8>);
    /// Appends the `bytes.len() / SIZE` values in `bytes` to `dst` (which grows once, exactly).
    fn extend_from_le(bytes: &[u8], dst: &mut Vec<Self>);
}

macro_rules! le_int {
    ($($t:ty),*) => {$(
        impl Le for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline]
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            #[inline]
            fn get(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(b);
                <$t>::from_le_bytes(a)
            }
            fn put_all(values: &[Self], out: &mut Vec<u8>) {
                let start = out.len();
                out.resize(start + values.len() * Self::SIZE, 0);
                let (chunks, _) = out[start..].as_chunks_mut::<{ std::mem::size_of::<$t>() }>();
                for (dst, v) in chunks.iter_mut().zip(values) {
                    *dst = v.to_le_bytes();
                }
            }
            fn extend_from_le(bytes: &[u8], dst: &mut Vec<Self>) {
                let (chunks, _) = bytes.as_chunks::<{ std::mem::size_of::<$t>() }>();
                dst.reserve_exact(chunks.len());
                dst.extend(chunks.iter().map(|&c| <$t>::from_le_bytes(c)));
            }
        }
    )*};
}
le_int!(u8, u32, u64, i32, i64);

impl Le for [u32; 3] {
    const SIZE: usize = 12;
    fn put(self, out: &mut Vec<u8>) {
        for v in self {
            v.put(out);
        }
    }
    fn get(b: &[u8]) -> Self {
        [u32::get(&b[0..4]), u32::get(&b[4..8]), u32::get(&b[8..12])]
    }
    fn put_all(values: &[Self], out: &mut Vec<u8>) {
        u32::put_all(values.as_flattened(), out);
    }
    fn extend_from_le(bytes: &[u8], dst: &mut Vec<Self>) {
        let (chunks, _) = bytes.as_chunks::<12>();
        dst.reserve_exact(chunks.len());
        let word = |c: &[u8; 12], i: usize| u32::from_le_bytes([c[i], c[i + 1], c[i + 2], c[i + 3]]);
        dst.extend(chunks.iter().map(|c| [word(c, 0), word(c, 4), word(c, 8)]));
    }
}

/// Bytes staged at once when a column is written to a [`WireSink`] that is not a `Vec`.
pub const STAGE_BYTES: usize = 256 << 10;

/// Where a part's bytes go: a `Vec`, a byte counter ([`ByteCount`], to size the output exactly
/// first) or, in the page, a JS ArrayBuffer written piece by piece (no copy of the whole part in
/// wasm memory).
pub trait WireSink {
    /// Appends raw bytes.
    fn write(&mut self, bytes: &[u8]);
    /// Appends a column's values as little-endian bytes, through a small staging buffer.
    fn column<T: Le>(&mut self, values: &[T]) {
        let per = (STAGE_BYTES / T::SIZE).max(1);
        let mut stage = Vec::with_capacity(per * T::SIZE);
        for chunk in values.chunks(per) {
            stage.clear();
            T::put_all(chunk, &mut stage);
            self.write(&stage);
        }
    }
}

impl WireSink for Vec<u8> {
    fn write(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
    fn column<T: Le>(&mut self, values: &[T]) {
        T::put_all(values, self);
    }
}

/// A [`WireSink`] that only counts the bytes written to it.
#[derive(Default)]
pub struct ByteCount(pub usize);

impl WireSink for ByteCount {
    fn write(&mut self, bytes: &[u8]) {
        self.0 += bytes.len();
    }
    fn column<T: Le>(&mut self, values: &[T]) {
        self.0 += values.len() * T::SIZE;
    }
}

impl WireWriter {
    /// One value.
    pub fn put<T: Le>(&mut self, v: T) {
        v.put(&mut self.out);
    }
    /// A flag as one byte.
    pub fn flag(&mut self, v: bool) {
        self.put(v as u8);
    }
    /// Length-prefixed bytes.
    pub fn bytes(&mut self, b: &[u8]) {
        self.put(b.len() as u32);
        self.out.extend_from_slice(b);
    }
    /// Length-prefixed UTF-8.
    pub fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
    /// An optional value: a presence byte, then the value.
    pub fn option<T: Le>(&mut self, v: Option<T>) {
        self.flag(v.is_some());
        if let Some(v) = v {
            self.put(v);
        }
    }
}

/// Reads what a [`WireWriter`] wrote; every read is bounds-checked.
pub struct WireReader<'a> {
    data: &'a [u8],
    pos: usize,
}

/// The error of bytes that do not decode: `what` says what is wrong.
pub fn malformed(what: &str) -> Error {
    Error::new(format!("malformed part bytes: {what}"))
}

impl<'a> WireReader<'a> {
    /// A reader at the start of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        WireReader { data, pos: 0 }
    }
    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }
    /// The next `n` raw bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(malformed("ends early"));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    /// One value.
    pub fn get<T: Le>(&mut self) -> Result<T> {
        Ok(T::get(self.take(T::SIZE)?))
    }
    /// A flag byte (0 or 1).
    pub fn flag(&mut self) -> Result<bool> {
        match self.get::<u8>()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(malformed("bad flag byte")),
        }
    }
    /// Length-prefixed bytes.
    pub fn bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.get::<u32>()? as usize;
        self.take(n)
    }
    /// Length-prefixed UTF-8.
    pub fn str(&mut self) -> Result<&'a str> {
        std::str::from_utf8(self.bytes()?).map_err(|_| malformed("text is not UTF-8"))
    }
    /// A count of items of at least `min_size` bytes each, checked against what is left.
    pub fn count(&mut self, min_size: usize) -> Result<usize> {
        let n = self.get::<u64>()?;
        if n.saturating_mul(min_size.max(1) as u64) > self.remaining() as u64 {
            return Err(malformed("count larger than the data"));
        }
        Ok(n as usize)
    }
    /// An optional value.
    pub fn option<T: Le>(&mut self) -> Result<Option<T>> {
        Ok(if self.flag()? { Some(self.get()?) } else { None })
    }
}

/// The bytes a part arrived in, read piece by piece: a `Vec`, or in the page the JS array the
/// part was moved in (so it is never copied whole into wasm memory).
pub trait ByteSource {
    /// Total bytes.
    fn len(&self) -> usize;
    /// True when there are no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// `bytes[at..at + len]` when they are in this memory already (no copy needed).
    fn slice(&self, _at: usize, _len: usize) -> Option<&[u8]> {
        None
    }
    /// Copies `bytes[at..at + dst.len()]` into `dst` (the caller keeps inside `len()`).
    fn read(&self, at: usize, dst: &mut [u8]);
}

impl ByteSource for Vec<u8> {
    fn len(&self) -> usize {
        Vec::len(self)
    }
    fn slice(&self, at: usize, len: usize) -> Option<&[u8]> {
        self.get(at..at.checked_add(len)?)
    }
    fn read(&self, at: usize, dst: &mut [u8]) {
        if let Some(src) = self.get(at..at + dst.len()) {
            dst.copy_from_slice(src);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_read_back_as_written() {
        let mut out = Vec::new();
        let (a, b, c) = (vec![1u32, u32::MAX, 7], vec![-5i64, i64::MIN, 9], vec![[1u32, 2, 3], [4, 5, u32::MAX]]);
        out.column(&a);
        out.column(&b);
        out.column(&c);
        let mut staged = ByteCount::default();
        staged.column(&a);
        staged.column(&b);
        staged.column(&c);
        assert_eq!(staged.0, out.len());
        let (mut a2, mut b2, mut c2) = (Vec::new(), Vec::new(), Vec::new());
        u32::extend_from_le(&out[..12], &mut a2);
        i64::extend_from_le(&out[12..36], &mut b2);
        <[u32; 3]>::extend_from_le(&out[36..], &mut c2);
        assert_eq!((a, b, c), (a2, b2, c2));
    }
}
