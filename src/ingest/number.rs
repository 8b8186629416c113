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
        int = int.checked_mul(10)?.checked_add((digits[i] - b'0') as i64)?;
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
    let ns = int.checked_mul(1000)?.checked_add(frac_ns + round as i64)?;
    Some(if neg { -ns } else { ns })
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
        v = v.checked_mul(10)?.checked_add((digits[i] - b'0') as i64)?;
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

/// Reads up to 17 integer digits at `pos`; returns (negative, value, position after the digits).
#[inline(always)]
fn quick_digits(buf: &[u8], pos: usize) -> (bool, u64, usize, usize) {
    let neg = buf.get(pos) == Some(&b'-');
    let start = pos + neg as usize;
    let mut i = start;
    let mut v: u64 = 0;
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

#[inline(always)]
fn ends_number(b: u8) -> bool {
    !matches!(b, b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-')
}

/// [`micros_to_ns`] in one pass over the buffer (the common case: `-`? digits (`.` digits)?).
#[inline]
pub fn quick_micros_to_ns(buf: &[u8], pos: usize) -> Quick {
    let (neg, int, start, mut i) = quick_digits(buf, pos);
    if i == buf.len() {
        return Quick::Incomplete;
    }
    if i == start || buf[i].is_ascii_digit() {
        return Quick::Slow;
    }
    let mut frac: u64 = 0;
    let mut round = 0;
    if buf[i] == b'.' {
        i += 1;
        let frac_start = i;
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
        if i == buf.len() {
            return Quick::Incomplete;
        }
        if i == frac_start {
            return Quick::Slow;
        }
        for _ in (i - frac_start).min(3)..3 {
            frac *= 10;
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
    let (neg, v, start, i) = quick_digits(buf, pos);
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
        for &c in cases {
            let mut text = c.to_vec();
            text.push(b',');
            let token_end = c.len();
            type QuickParser = fn(&[u8], usize) -> Quick;
            type SlowParser = fn(&[u8]) -> Option<i64>;
            let pairs: [(QuickParser, SlowParser); 2] = [(quick_micros_to_ns, micros_to_ns), (quick_integer, integer)];
            for (quick, slow) in pairs {
                match quick(&text, 0) {
                    Quick::Done(v, end) => {
                        assert_eq!(Some(v), slow(c), "{}", String::from_utf8_lossy(c));
                        assert_eq!(end, token_end);
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
}
