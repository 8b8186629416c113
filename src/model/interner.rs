//! String interning: every name in a trace is stored once and referred to by a `NameId`.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Index of an interned string inside an [`Interner`].
pub type NameId = u32;

/// Id reserved for "no string" (an absent field).
pub const NO_NAME: NameId = 0;

/// A fast, non-cryptographic hasher (the Fx hash used by rustc) for short keys we produced
/// ourselves. Not exposed to untrusted collision attacks in a meaningful way: a trace that
/// collides only slows its own analysis.
#[derive(Default, Clone, Copy)]
pub struct FastHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

/// One step of the Fx hash: mixes `word` into state `h` (shared by [`FastHasher`] and the
/// interner's own [`hash_bytes`]).
#[inline(always)]
fn fx_step(h: u64, word: u64) -> u64 {
    (h.rotate_left(5) ^ word).wrapping_mul(SEED)
}

impl FastHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = fx_step(self.0, word);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, mut bytes: &[u8]) {
        if bytes.len() >= 64 {
            // Long kernel names: four independent lanes, so the multiplies overlap instead of
            // waiting on each other, then folded into the one state.
            let mut lanes = [self.0, self.0 ^ 1, self.0 ^ 2, self.0 ^ 3];
            let mut blocks = bytes.chunks_exact(32);
            for b in &mut blocks {
                for (k, lane) in lanes.iter_mut().enumerate() {
                    *lane = fx_step(*lane, word(b, k * 8));
                }
            }
            for lane in lanes {
                self.add(lane);
            }
            bytes = blocks.remainder();
        }
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().unwrap()));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut buf = [0u8; 8];
            buf[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(buf));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_i64(&mut self, i: i64) {
        self.add(i as u64);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A `HashMap` using [`FastHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// A `HashSet` using [`FastHasher`].
pub type FastSet<K> = std::collections::HashSet<K, BuildHasherDefault<FastHasher>>;

/// Stores each distinct string once. Id 0 is the empty string, used for absent fields.
///
/// The table holds only ids: a lookup hashes the bytes and compares them with the strings already
/// stored (so each string is kept once, not again as a map key). Input that is not valid UTF-8
/// is stored with replacement characters; its raw bytes are remembered in a side map so that the
/// same raw bytes find the same id.
#[derive(Debug, Clone)]
pub struct Interner {
    table: hashbrown::HashTable<NameId>,
    strings: Vec<Box<str>>,
    not_utf8: FastMap<Box<[u8]>, NameId>,
}

impl Default for Interner {
    fn default() -> Self {
        let mut interner = Interner { table: hashbrown::HashTable::new(), strings: Vec::new(), not_utf8: FastMap::default() };
        interner.intern("");
        interner
    }
}

/// Little-endian word of the eight bytes at `at` (the caller checks the length).
#[inline(always)]
fn word(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Hash of an interned string. Names, shapes and kernel names are mostly 8 to 200 bytes: they are
/// read eight bytes at a time in two independent lanes (so the multiplies overlap instead of
/// waiting on each other), and the last bytes with one load that may overlap the ones before
/// instead of a copy into a scratch word. Only the interner's table uses it: ids follow the order
/// strings are first met, so this hash never shows in any output.
#[inline]
fn hash_bytes(b: &[u8]) -> u64 {
    let n = b.len();
    let (mut x, mut y) = (n as u64, (n as u64) ^ 0x9E37_79B9_7F4A_7C15);
    if n >= 8 {
        let mut i = 0;
        while i + 16 <= n {
            x = fx_step(x, word(b, i));
            y = fx_step(y, word(b, i + 8));
            i += 16;
        }
        if i < n {
            // One or two words left, the last one ending at the string's end.
            if i + 8 < n {
                x = fx_step(x, word(b, i));
            }
            y = fx_step(y, word(b, n - 8));
        }
    } else if n >= 4 {
        let half = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes")) as u64;
        x = fx_step(x, half(0) << 32 | half(n - 4));
    } else if n > 0 {
        x = fx_step(x, (b[0] as u64) << 16 | (b[n / 2] as u64) << 8 | b[n - 1] as u64);
    }
    fx_step(x, y)
}

/// Byte equality. Short strings (most op names, types and shapes) are compared without a call: up
/// to 16 bytes with two word loads that may overlap. Longer ones go eight bytes at a time on
/// WebAssembly (which has no vector `memcmp`: the runtime's compares byte by byte) and through
/// libc's `memcmp` natively.
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if (8..=16).contains(&n) {
        return word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8);
    }
    if n < 8 {
        return a.iter().zip(b).all(|(x, y)| x == y);
    }
    #[cfg(target_arch = "wasm32")]
    {
        let (mut ca, mut cb) = (a.chunks_exact(8), b.chunks_exact(8));
        for (x, y) in (&mut ca).zip(&mut cb) {
            if u64::from_le_bytes(x.try_into().expect("8 bytes")) != u64::from_le_bytes(y.try_into().expect("8 bytes")) {
                return false;
            }
        }
        ca.remainder() == cb.remainder()
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        a == b
    }
}

impl Interner {
    /// Returns the id of `s`, adding it if it is new.
    pub fn intern(&mut self, s: &str) -> NameId {
        self.intern_bytes(s.as_bytes())
    }

    /// Returns the id of raw text; invalid UTF-8 is stored with replacement characters.
    /// UTF-8 is validated only the first time a string is seen.
    #[inline]
    pub fn intern_bytes(&mut self, b: &[u8]) -> NameId {
        let hash = hash_bytes(b);
        let strings = &self.strings;
        if let Some(&id) = self.table.find(hash, |&id| same_bytes(strings[id as usize].as_bytes(), b)) {
            return id;
        }
        self.add(b, hash)
    }

    #[cold]
    fn add(&mut self, b: &[u8], hash: u64) -> NameId {
        let id = self.strings.len() as NameId;
        match std::str::from_utf8(b) {
            Ok(text) => {
                self.strings.push(text.into());
                let strings = &self.strings;
                self.table.insert_unique(hash, id, |&i| hash_bytes(strings[i as usize].as_bytes()));
            }
            Err(_) => {
                if let Some(&known) = self.not_utf8.get(b) {
                    return known;
                }
                self.strings.push(String::from_utf8_lossy(b).into());
                self.not_utf8.insert(b.into(), id);
            }
        }
        id
    }

    /// Looks up an id without adding the string.
    pub fn get(&self, s: &str) -> Option<NameId> {
        self.table.find(hash_bytes(s.as_bytes()), |&id| same_bytes(self.strings[id as usize].as_bytes(), s.as_bytes())).copied()
    }

    /// The string behind an id.
    pub fn resolve(&self, id: NameId) -> &str {
        &self.strings[id as usize]
    }

    /// Number of distinct strings (including the empty string).
    pub fn len(&self) -> usize {
        self.strings.len()
    }

    /// True when only the reserved empty string is stored.
    pub fn is_empty(&self) -> bool {
        self.strings.len() <= 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_one_byte_apart_get_their_own_ids_at_every_length() {
        // The hash and the compare read words that overlap at the end: a change at any position
        // of any length must still make a new string, and the same text must find its id.
        let mut n = Interner::default();
        for len in 0..90usize {
            let base: Vec<u8> = (0..len).map(|k| b'a' + (k % 23) as u8).collect();
            let id = n.intern_bytes(&base);
            for at in 0..len {
                let mut other = base.clone();
                other[at] = b'#';
                let other_id = n.intern_bytes(&other);
                assert_ne!(other_id, id, "len {len}, changed at {at}");
                assert_eq!(n.intern_bytes(&other), other_id);
            }
            assert_eq!(n.intern_bytes(&base), id, "len {len}");
            assert_eq!(n.resolve(id).as_bytes(), &base[..]);
        }
    }

    #[test]
    fn each_string_gets_one_id_and_invalid_utf8_is_stable() {
        let mut n = Interner::default();
        let long = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int, T2, T3)";
        let a = n.intern("aten::mm");
        let b = n.intern(long);
        assert_eq!((n.intern("aten::mm"), n.intern_bytes(long.as_bytes())), (a, b));
        assert_eq!(n.intern(""), NO_NAME);
        let bad = n.intern_bytes(b"ab\xffcd");
        assert_eq!(n.intern_bytes(b"ab\xffcd"), bad);
        assert_eq!(n.resolve(bad), "ab\u{FFFD}cd");
        // The lossy text is its own string only if met as valid UTF-8 too.
        let text = n.intern("ab\u{FFFD}cd");
        assert_ne!(text, bad);
        assert_eq!(n.get("aten::mm"), Some(a));
        assert_eq!(n.get("aten::bmm"), None);
        assert_eq!(n.len(), 5);
        // Many strings (the table grows and rehashes from the stored strings).
        let ids: Vec<NameId> = (0..5000).map(|i| n.intern(&format!("kernel_{i}"))).collect();
        assert!((0..5000).all(|i| n.intern(&format!("kernel_{i}")) == ids[i]));
    }
}
