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

/// Stores each distinct string once. Id 0 is the empty string, used for absent fields.
#[derive(Debug, Clone)]
pub struct Interner {
    ids: FastMap<Box<[u8]>, NameId>,
    strings: Vec<Box<str>>,
}

impl Default for Interner {
    fn default() -> Self {
        let mut interner = Interner { ids: FastMap::default(), strings: Vec::new() };
        interner.intern("");
        interner
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
        if let Some(&id) = self.ids.get(b) {
            return id;
        }
        let id = self.strings.len() as NameId;
        let text: Box<str> = String::from_utf8_lossy(b).into();
        self.strings.push(text);
        self.ids.insert(b.into(), id);
        id
    }

    /// Looks up an id without adding the string.
    pub fn get(&self, s: &str) -> Option<NameId> {
        self.ids.get(s.as_bytes()).copied()
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
