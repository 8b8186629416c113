//! Classifies 16 bytes of JSON text at once: which are quotes, backslashes, opening brackets
//! (`[` `{`) and closing brackets (`]` `}`), as bit masks (bit k = byte k).
//!
//! SSE2 on x86-64 (always present there), WebAssembly SIMD when the page's build enables it
//! (`.cargo/config.toml`), and plain 64-bit arithmetic elsewhere; all three give the same masks.

/// Width of one block in bytes.
pub const WIDTH: usize = 16;

/// The bytes of one block that matter to a container skipper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marks {
    pub quote: u32,
    pub backslash: u32,
    pub open: u32,
    pub close: u32,
}

/// Classifies `bytes` (exactly [`WIDTH`] long).
#[inline(always)]
pub fn classify(bytes: &[u8; WIDTH]) -> Marks {
    imp::classify(bytes)
}

/// For each bit k: the XOR of bits 0..=k of `quotes`. Set where the byte lies inside a string that
/// opened in this block (counting from a block start outside any string).
#[inline(always)]
pub fn inside_strings(quotes: u32) -> u32 {
    let mut x = quotes;
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x & 0xFFFF
}

/// High bit set in each byte of `x` that is not zero, exactly (no borrow between bytes; the
/// number reader uses it too).
#[inline(always)]
pub fn nonzero_bytes(x: u64) -> u64 {
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    (((x & LOW7) + LOW7) | x) & !LOW7
}

#[cfg(target_arch = "x86_64")]
mod imp {
    use super::{Marks, WIDTH};
    use core::arch::x86_64::*;

    #[inline(always)]
    pub fn classify(bytes: &[u8; WIDTH]) -> Marks {
        // SAFETY: SSE2 is part of the x86-64 baseline; the load reads exactly the 16 bytes of
        // `bytes` (unaligned load).
        unsafe {
            let x = _mm_loadu_si128(bytes.as_ptr() as *const __m128i);
            // '[' and ']' differ from '{' and '}' only in bit 5.
            let folded = _mm_or_si128(x, _mm_set1_epi8(0x20));
            let mask = |v: __m128i, b: u8| _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8))) as u32;
            Marks { quote: mask(x, b'"'), backslash: mask(x, b'\\'), open: mask(folded, b'{'), close: mask(folded, b'}') }
        }
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod imp {
    use super::{Marks, WIDTH};
    use core::arch::wasm32::*;

    #[inline(always)]
    pub fn classify(bytes: &[u8; WIDTH]) -> Marks {
        // SAFETY: reads exactly the 16 bytes of `bytes` (v128_load has no alignment requirement).
        let x = unsafe { v128_load(bytes.as_ptr() as *const v128) };
        let folded = v128_or(x, u8x16_splat(0x20));
        let mask = |v: v128, b: u8| u8x16_bitmask(u8x16_eq(v, u8x16_splat(b))) as u32;
        Marks { quote: mask(x, b'"'), backslash: mask(x, b'\\'), open: mask(folded, b'{'), close: mask(folded, b'}') }
    }
}

#[cfg(not(any(target_arch = "x86_64", all(target_arch = "wasm32", target_feature = "simd128"))))]
mod imp {
    pub use super::portable::classify;
}

/// The same classification with 64-bit arithmetic (any target; also checks the SIMD versions).
#[allow(dead_code)]
mod portable {
    use super::{nonzero_bytes, Marks, WIDTH};

    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;

    /// High bit of each byte of `w` that equals `b` (exact).
    fn equal(w: u64, b: u8) -> u64 {
        !nonzero_bytes(w ^ (b as u64 * ONES)) & HIGHS
    }

    /// Gathers the high bit of each byte into bits 0..8.
    fn gather(m: u64) -> u32 {
        ((m >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u32
    }

    pub fn classify(bytes: &[u8; WIDTH]) -> Marks {
        let lo = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
        let hi = u64::from_le_bytes(bytes[8..].try_into().expect("8 bytes"));
        let mask = |f: &dyn Fn(u64) -> u64| gather(f(lo)) | gather(f(hi)) << 8;
        Marks {
            quote: mask(&|w| equal(w, b'"')),
            backslash: mask(&|w| equal(w, b'\\')),
            open: mask(&|w| equal(w | 0x2020_2020_2020_2020, b'{')),
            close: mask(&|w| equal(w | 0x2020_2020_2020_2020, b'}')),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by_hand(bytes: &[u8; WIDTH]) -> Marks {
        let bits = |f: fn(u8) -> bool| bytes.iter().enumerate().filter(|(_, &b)| f(b)).fold(0u32, |m, (k, _)| m | 1 << k);
        Marks {
            quote: bits(|b| b == b'"'),
            backslash: bits(|b| b == b'\\'),
            open: bits(|b| b == b'[' || b == b'{'),
            close: bits(|b| b == b']' || b == b'}'),
        }
    }

    #[test]
    fn every_byte_value_at_every_position_is_classified_as_by_hand() {
        for pos in 0..WIDTH {
            for b in 0..=255u8 {
                let mut block = *b"ab[\"{}]\\ 0,:xyzw";
                block[pos] = b;
                assert_eq!(classify(&block), by_hand(&block), "byte {b:#x} at {pos}");
                assert_eq!(portable::classify(&block), by_hand(&block), "portable: byte {b:#x} at {pos}");
            }
        }
    }

    #[test]
    fn inside_strings_marks_the_bytes_between_quote_pairs() {
        // "ab" [ "c
        let quotes = 0b1_0000_1001;
        assert_eq!(inside_strings(quotes), 0b1111_1111_0000_0111);
    }
}
