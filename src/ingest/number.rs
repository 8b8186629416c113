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
    fn integers_accept_floats_and_reject_text() {
        assert_eq!(integer(b"115120"), Some(115120));
        assert_eq!(integer(b"-1"), Some(-1));
        assert_eq!(integer(b"7.0"), Some(7));
        assert_eq!(integer(b"x"), None);
    }
}
