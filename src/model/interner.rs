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

impl FastHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SEED);
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
                    let word = u64::from_le_bytes(b[k * 8..k * 8 + 8].try_into().unwrap());
                    *lane = (lane.rotate_left(5) ^ word).wrapping_mul(SEED);
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

#[inline]
fn hash_bytes(b: &[u8]) -> u64 {
    let mut h = FastHasher::default();
    h.write(b);
    h.write_usize(b.len());
    h.finish()
}

/// Byte equality. WebAssembly has no vector `memcmp` (the runtime's compares byte by byte), so
/// there the comparison goes eight bytes at a time; natively libc's `memcmp` is faster still.
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
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
