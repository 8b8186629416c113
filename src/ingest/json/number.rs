//! Number parsing straight from JSON text, without going through `f64` for times.
//!
//! Kineto writes `ts` in microseconds since an epoch (~1.7e15 µs absolute) with a fractional
//! part; an `f64` cannot hold that to the nanosecond, so times are parsed as decimal text into
//! integer nanoseconds.

/// Parses a JSON number given in microseconds into integer nanoseconds (rounded half up).
/// Returns `None` if the text is not a number.
pub fn micros_to_ns(text: &[u8]) -> Option<i64> {
    let (neg, digits) = match text.first()? {
        b'-' => (true, &text[1..]),
        _ => (false, text),
    };
    let mut int: i64 = 0;
    let mut i = 0;
    while i < digits.len() && digits[i].is_ascii_digit() {
        int = push_digit(int, digits[i])?;
        i += 1;
    }
    if i == 0 {
        return None;
    }
    let mut frac_ns: i64 = 0;
    let mut round = false;
    if i < digits.len() && digits[i] == b'.' {
        i += 1;
        let start = i;
        while i < digits.len() && digits[i].is_ascii_digit() {
            let n = i - start;
            if n < 3 {
                frac_ns = frac_ns * 10 + (digits[i] - b'0') as i64;
            } else if n == 3 {
                round = digits[i] >= b'5';
            }
            i += 1;
        }
        if i == start {
            return None;
        }
        let n = (i - start).min(3);
        for _ in n..3 {
            frac_ns *= 10;
        }
    }
    if i < digits.len() {
        // Exponent or junk: take the slow path.
        let s = std::str::from_utf8(text).ok()?;
        let v: f64 = s.parse().ok()?;
        if !v.is_finite() {
            return None;
        }
        return Some((v * 1000.0).round() as i64);
    }
    // A range check first, not `checked_mul` (see `push_digit`).
    let ns = if int <= (i64::MAX - 1000) / 1000 {
        int * 1000 + frac_ns + round as i64
    } else {
        int.checked_mul(1000)?.checked_add(frac_ns + round as i64)?
    };
    Some(if neg { -ns } else { ns })
}

/// `v * 10` plus the digit `digit` (an ASCII `0`-`9`), `None` past `i64::MAX`, for `v >= 0`.
/// A range check decides, not `checked_mul`: on wasm that is a call to a 128-bit multiply, which
/// showed as 13 ms of each 1 GB page load (grid and block dims go through [`integer`]).
#[inline(always)]
fn push_digit(v: i64, digit: u8) -> Option<i64> {
    const SAFE: i64 = (i64::MAX - 9) / 10;
    let d = (digit - b'0') as i64;
    if v <= SAFE {
        Some(v * 10 + d)
    } else {
        v.checked_mul(10)?.checked_add(d)
    }
}

/// Parses a JSON number as an integer (a fractional part is truncated). `None` if not a number.
pub fn integer(text: &[u8]) -> Option<i64> {
    let (neg, digits) = match text.first()? {
        b'-' => (true, &text[1..]),
        _ => (false, text),
    };
    let mut v: i64 = 0;
    let mut i = 0;
    while i < digits.len() && digits[i].is_ascii_digit() {
        v = push_digit(v, digits[i])?;
        i += 1;
    }
    if i == 0 {
        return None;
    }
    if i < digits.len() {
        let s = std::str::from_utf8(text).ok()?;
        let f: f64 = s.parse().ok()?;
        return f.is_finite().then_some(f as i64);
    }
    Some(if neg { -v } else { v })
}

/// Outcome of a one-pass read of a plain decimal number straight from the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quick {
    /// The value and the position after the number.
    Done(i64, usize),
    /// The buffer ends inside the number: wait for more text.
    Incomplete,
    /// Exponent, very long digits or junk: use [`micros_to_ns`] / [`integer`] on the whole token.
    Slow,
}

/// Reads up to 17 integer digits at `pos`; returns (negative, value, position of the first digit,
/// position after the digits). `WIDE`: eight digits at a time when the buffer has 16 bytes to
/// spare (for times, which have 13 to 16 integer digits; ids and counts are shorter and faster
/// read one digit at a time).
#[inline(always)]
fn quick_digits<const WIDE: bool>(buf: &[u8], pos: usize) -> (bool, u64, usize, usize) {
    let neg = buf.get(pos) == Some(&b'-');
    let start = pos + neg as usize;
    let (mut v, mut i) = (0u64, start);
    if let (true, Some(bytes)) = (WIDE, buf.get(start..start + 16)) {
        let first = word(&bytes[..8]);
        let n = leading_digits(first);
        if n < 8 {
            return (neg, digits_value(first, n), start, start + n);
        }
        let second = word(&bytes[8..]);
        let m = leading_digits(second);
        v = digits_value(first, 8) * POW10[m] + digits_value(second, m);
        if m < 8 {
            return (neg, v, start, start + 8 + m);
        }
        i = start + 16;
    }
    let limit = (start + 17).min(buf.len());
    while i < limit {
        let d = buf[i].wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        v = v * 10 + d as u64;
        i += 1;
    }
    (neg, v, start, i)
}

const POW10: [u64; 9] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000];

/// Eight bytes as a little-endian word (byte 0, the first character, lowest).
#[inline(always)]
fn word(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes.try_into().expect("8 bytes"))
}

/// How many of the eight characters in `w` are ASCII digits before the first non-digit.
#[inline(always)]
fn leading_digits(w: u64) -> usize {
    const HIGH_NIBBLES: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    const THREES: u64 = 0x3030_3030_3030_3030;
    // A byte is a digit when it is 0x3_ and stays 0x3_ after adding 6; a carry out of a
    // non-digit byte can only disturb the bytes after it.
    let x = ((w & HIGH_NIBBLES) ^ THREES) | ((w.wrapping_add(0x0606_0606_0606_0606) & HIGH_NIBBLES) ^ THREES);
    (super::simd16::nonzero_bytes(x).trailing_zeros() / 8) as usize
}

/// The value of the first `n` (0..=8) characters of `w`, which are digits.
#[inline(always)]
fn digits_value(w: u64, n: usize) -> u64 {
    if n == 0 {
        return 0;
    }
    // Move the n digits to the top; the zero bytes shifted in read as leading zeros.
    let mut v = w << (8 * (8 - n));
    v = ((v & 0x0F0F_0F0F_0F0F_0F0F).wrapping_mul(2561)) >> 8;
    v = ((v & 0x00FF_00FF_00FF_00FF).wrapping_mul(6_553_601)) >> 16;
    ((v & 0x0000_FFFF_0000_FFFF).wrapping_mul(42_949_672_960_001)) >> 32
}

/// Reads a fraction's digits at `i` (after the point): (first three digits as thousandths,
/// whether the fourth rounds up, position after the digits).
#[inline(always)]
fn quick_fraction(buf: &[u8], mut i: usize) -> (u64, u64, usize) {
    let frac_start = i;
    if let Some(bytes) = buf.get(i..i + 8) {
        let w = word(bytes);
        let n = leading_digits(w);
        let kept = n.min(3);
        let frac = digits_value(w, kept) * POW10[3 - kept];
        let round = (n > 3 && bytes[3] >= b'5') as u64;
        if n < 8 {
            return (frac, round, i + n);
        }
        i += 8;
        while i < buf.len() && buf[i].is_ascii_digit() {
            i += 1;
        }
        return (frac, round, i);
    }
    let (mut frac, mut round) = (0u64, 0u64);
    while i < buf.len() {
        let d = buf[i].wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        match i - frac_start {
            0..=2 => frac = frac * 10 + d as u64,
            3 => round = (d >= 5) as u64,
            _ => {}
        }
        i += 1;
    }
    for _ in (i - frac_start).min(3)..3 {
        frac *= 10;
    }
    (frac, round, i)
}

#[inline(always)]
fn ends_number(b: u8) -> bool {
    !matches!(b, b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-')
}

/// [`micros_to_ns`] in one pass over the buffer (the common case: `-`? digits (`.` digits)?).
#[inline]
pub fn quick_micros_to_ns(buf: &[u8], pos: usize) -> Quick {
    let (neg, int, start, mut i) = quick_digits::<true>(buf, pos);
    if i == buf.len() {
        return Quick::Incomplete;
    }
    if i == start || buf[i].is_ascii_digit() {
        return Quick::Slow;
    }
    let (mut frac, mut round) = (0, 0);
    if buf[i] == b'.' {
        let frac_start = i + 1;
        (frac, round, i) = quick_fraction(buf, frac_start);
        if i == buf.len() {
            return Quick::Incomplete;
        }
        if i == frac_start {
            return Quick::Slow;
        }
    }
    if !ends_number(buf[i]) {
        return Quick::Slow;
    }
    // A range check, not `checked_mul`: on wasm that becomes a 128-bit multiply call.
    const MAX_MICROS: u64 = (i64::MAX as u64 - 1000) / 1000;
    if int > MAX_MICROS {
        return Quick::Slow;
    }
    let ns = (int * 1000 + frac + round) as i64;
    Quick::Done(if neg { -ns } else { ns }, i)
}

/// [`integer`] in one pass over the buffer (the common case: `-`? digits).
#[inline]
pub fn quick_integer(buf: &[u8], pos: usize) -> Quick {
    let (neg, v, start, i) = quick_digits::<false>(buf, pos);
    if i == buf.len() {
        return Quick::Incomplete;
    }
    if i == start || !ends_number(buf[i]) {
        return Quick::Slow;
    }
    let v = v as i64;
    Quick::Done(if neg { -v } else { v }, i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractional_micros_become_exact_nanoseconds() {
        assert_eq!(micros_to_ns(b"4488634954857.801"), Some(4_488_634_954_857_801));
        assert_eq!(micros_to_ns(b"1.5"), Some(1500));
        assert_eq!(micros_to_ns(b"2"), Some(2000));
        assert_eq!(micros_to_ns(b"0.0004"), Some(0));
        assert_eq!(micros_to_ns(b"0.0005"), Some(1));
        assert_eq!(micros_to_ns(b"-3.25"), Some(-3250));
        assert_eq!(micros_to_ns(b"1e3"), Some(1_000_000));
        assert_eq!(micros_to_ns(b"1790857026000000.123"), Some(1_790_857_026_000_000_123));
        assert_eq!(micros_to_ns(b"abc"), None);
        assert_eq!(micros_to_ns(b"1."), None);
    }

    #[test]
    fn quick_reads_agree_with_the_token_parsers() {
        let cases: &[&[u8]] = &[
            b"4488634954857.801",
            b"1.5",
            b"2",
            b"0.0004",
            b"0.0005",
            b"-3.25",
            b"1e3",
            b"1790857026000000.123",
            b"12345678901234567890",
            b"-0",
            b"7.0",
            b"115120",
            b"1.",
            b"-",
            b"1.2.3",
            b"99999999999999999.9999",
        ];
        // Every count of integer and fraction digits, so that both the eight-at-a-time reads and
        // the byte loops see numbers ending at every position of a word.
        let mut generated: Vec<Vec<u8>> = Vec::new();
        for int_digits in 1..=19 {
            for frac_digits in [None, Some(0), Some(1), Some(2), Some(3), Some(4), Some(7), Some(8), Some(9), Some(12)] {
                for seed in [1u64, 7, 9] {
                    let mut t: Vec<u8> = (0..int_digits).map(|k| b'0' + ((seed * 7 + k * 3) % 10) as u8).collect();
                    if let Some(f) = frac_digits {
                        t.push(b'.');
                        t.extend((0..f).map(|k| b'0' + ((seed + k * 5) % 10) as u8));
                    }
                    generated.push(t);
                }
            }
        }
        let padded = |c: &[u8]| [c, b", \"next\": 12345678901234567890123}".as_slice()].concat();
        let cases: Vec<(&[u8], Vec<u8>)> = cases
            .iter()
            .copied()
            .chain(generated.iter().map(|g| g.as_slice()))
            .flat_map(|c| [(c, [c, b",".as_slice()].concat()), (c, padded(c))])
            .collect();
        for (c, text) in cases {
            let token_end = c.len();
            type QuickParser = fn(&[u8], usize) -> Quick;
            type SlowParser = fn(&[u8]) -> Option<i64>;
            let pairs: [(QuickParser, SlowParser, bool); 2] =
                [(quick_micros_to_ns, micros_to_ns, true), (quick_integer, integer, false)];
            for (quick, slow, is_time) in pairs {
                match quick(&text, 0) {
                    Quick::Done(v, end) => {
                        assert_eq!(Some(v), slow(c), "{}", String::from_utf8_lossy(c));
                        assert_eq!(end, token_end);
                    }
                    // Plain decimals with up to 15 integer digits fit in i64 nanoseconds.
                    Quick::Slow
                        if is_time
                            && c.iter().all(|b| b.is_ascii_digit() || *b == b'.')
                            && c.iter().filter(|&&b| b == b'.').count() <= 1
                            && c.last() != Some(&b'.')
                            && c.iter().take_while(|b| b.is_ascii_digit()).count() <= 15 =>
                    {
                        panic!("plain number {} took the slow path", String::from_utf8_lossy(c))
                    }
                    Quick::Slow => {}
                    Quick::Incomplete => panic!("complete token reported incomplete"),
                }
                // Cut before the delimiter: never a value, since more digits may follow.
                assert!(!matches!(quick(c, 0), Quick::Done(..)));
            }
        }
        assert_eq!(quick_micros_to_ns(b"1.5}", 0), Quick::Done(1500, 3));
        assert_eq!(quick_integer(b"-12]", 0), Quick::Done(-12, 3));
        assert_eq!(quick_integer(b"1e3,", 0), Quick::Slow);
    }

    #[test]
    fn integers_accept_floats_and_reject_text() {
        assert_eq!(integer(b"115120"), Some(115120));
        assert_eq!(integer(b"-1"), Some(-1));
        assert_eq!(integer(b"7.0"), Some(7));
        assert_eq!(integer(b"x"), None);
    }

    #[test]
    fn the_largest_values_are_read_and_one_more_is_refused() {
        assert_eq!(integer(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(integer(b"-9223372036854775807"), Some(-i64::MAX));
        assert_eq!(integer(b"9223372036854775808"), None);
        assert_eq!(integer(b"92233720368547758070"), None);
        assert_eq!(micros_to_ns(b"9223372036854775.807"), Some(i64::MAX));
        assert_eq!(micros_to_ns(b"9223372036854775.808"), None);
        assert_eq!(micros_to_ns(b"9223372036854776"), None);
    }
}
