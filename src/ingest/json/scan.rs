//! Low-level JSON scanning over a byte buffer that may end mid-value.
//!
//! Every function takes a position and returns the position after what it read, or
//! [`Stop::Incomplete`] when the buffer ends first (the caller waits for more bytes and
//! retries), or [`Stop::Bad`] for text that is not JSON. Nothing recurses: nesting depth
//! is a counter, so a 100,000-deep array cannot overflow the stack.

use super::simd16;
use std::borrow::Cow;

/// Why a scan stopped early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// The buffer ended before the value did.
    Incomplete,
    /// Not valid JSON at this position (relative to the buffer).
    Bad(&'static str, usize),
}

/// Result of a scan step.
pub type Step<T> = Result<T, Stop>;

/// Skips JSON whitespace. Trace writers put none or one space between tokens (`"ph": "X", `), so
/// those two cases are decided first, with one or two byte compares (every byte above the space is
/// not whitespace).
#[inline(always)]
pub fn skip_ws(buf: &[u8], pos: usize) -> usize {
    match buf.get(pos) {
        Some(&b) if b > b' ' => pos,
        Some(&b' ') if buf.get(pos + 1).is_some_and(|&c| c > b' ') => pos + 1,
        _ => skip_ws_loop(buf, pos),
    }
}

#[inline(never)]
fn skip_ws_loop(buf: &[u8], mut pos: usize) -> usize {
    while pos < buf.len() {
        match buf[pos] {
            b' ' | b'\n' | b'\r' | b'\t' => pos += 1,
            _ => break,
        }
    }
    pos
}

/// Requires byte `want` at `pos` (after whitespace); returns the position after it.
#[inline]
pub fn expect(buf: &[u8], pos: usize, want: u8, what: &'static str) -> Step<usize> {
    let pos = skip_ws(buf, pos);
    match buf.get(pos) {
        None => Err(Stop::Incomplete),
        Some(&b) if b == want => Ok(pos + 1),
        Some(_) => Err(Stop::Bad(what, pos)),
    }
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// High bit set in each byte of `w` that equals `byte` (exact for the lowest match: the classic
/// "has zero byte" test on `w ^ byte*ONES`; bytes above a match may be flagged spuriously).
#[inline(always)]
fn bytes_equal(w: u64, byte: u8) -> u64 {
    let x = w ^ (byte as u64 * ONES);
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// Finds the end of a string whose opening quote is at `pos`. Returns (end position after the
/// closing quote, whether it contains escapes).
#[inline(always)]
pub fn string_end(buf: &[u8], pos: usize) -> Step<(usize, bool)> {
    debug_assert_eq!(buf[pos], b'"');
    let mut i = pos + 1;
    let mut escaped = false;
    loop {
        // Keys and short values: eight bytes at a time, no call; long names: memchr's SIMD.
        let short_end = (i + 32).min(buf.len());
        let mut found = false;
        while i + 8 <= short_end {
            let w = u64::from_le_bytes(buf[i..i + 8].try_into().expect("8 bytes"));
            let hits = bytes_equal(w, b'"') | bytes_equal(w, b'\\');
            if hits != 0 {
                i += (hits.trailing_zeros() / 8) as usize;
                found = true;
                break;
            }
            i += 8;
        }
        if !found {
            match memchr::memchr2(b'"', b'\\', &buf[i..]) {
                None => return Err(Stop::Incomplete),
                Some(off) => i += off,
            }
        }
        if buf[i] == b'"' {
            return Ok((i + 1, escaped));
        }
        escaped = true;
        if i + 1 >= buf.len() {
            return Err(Stop::Incomplete);
        }
        i += 2;
    }
}

/// Reads a string at `pos` (which must be a quote). Returns its text and the end position.
pub fn string<'a>(buf: &'a [u8], pos: usize) -> Step<(Cow<'a, str>, usize)> {
    if buf.get(pos) != Some(&b'"') {
        return if pos >= buf.len() { Err(Stop::Incomplete) } else { Err(Stop::Bad("expected a string", pos)) };
    }
    let (end, escaped) = string_end(buf, pos)?;
    let raw = &buf[pos + 1..end - 1];
    let text = if escaped { Cow::Owned(unescape(raw).ok_or(Stop::Bad("bad escape in string", pos))?) } else { utf8(raw) };
    Ok((text, end))
}

/// Reads a string at `pos` as bytes (unescaped, UTF-8 not yet validated).
pub fn raw_string(buf: &[u8], pos: usize) -> Step<(Cow<'_, [u8]>, usize)> {
    if buf.get(pos) != Some(&b'"') {
        return if pos >= buf.len() { Err(Stop::Incomplete) } else { Err(Stop::Bad("expected a string", pos)) };
    }
    let (end, escaped) = string_end(buf, pos)?;
    let raw = &buf[pos + 1..end - 1];
    if escaped {
        let s = unescape(raw).ok_or(Stop::Bad("bad escape in string", pos))?;
        Ok((Cow::Owned(s.into_bytes()), end))
    } else {
        Ok((Cow::Borrowed(raw), end))
    }
}

fn utf8(raw: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(raw) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(raw),
    }
}

fn unescape(raw: &[u8]) -> Option<String> {
    let mut out: Vec<u8> = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        if b != b'\\' {
            out.push(b);
            i += 1;
            continue;
        }
        let e = *raw.get(i + 1)?;
        i += 2;
        match e {
            b'"' => out.push(b'"'),
            b'\\' => out.push(b'\\'),
            b'/' => out.push(b'/'),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'u' => {
                let hi = hex4(raw.get(i..i + 4)?)?;
                i += 4;
                let c = if (0xD800..0xDC00).contains(&hi) && raw.get(i) == Some(&b'\\') && raw.get(i + 1) == Some(&b'u') {
                    let lo = hex4(raw.get(i + 2..i + 6)?)?;
                    i += 6;
                    char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo.wrapping_sub(0xDC00) & 0x3FF))
                } else {
                    char::from_u32(hi)
                };
                let mut tmp = [0u8; 4];
                out.extend_from_slice(c.unwrap_or('\u{FFFD}').encode_utf8(&mut tmp).as_bytes());
            }
            _ => return None,
        }
    }
    Some(match String::from_utf8(out) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

fn hex4(h: &[u8]) -> Option<u32> {
    let s = std::str::from_utf8(h).ok()?;
    u32::from_str_radix(s, 16).ok()
}

/// Scans a JSON number at `pos`: returns the position after it (validation is left to the
/// number parsers).
#[inline]
pub fn number_end(buf: &[u8], pos: usize) -> Step<usize> {
    let mut i = pos;
    while i < buf.len() {
        match buf[i] {
            b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E' => i += 1,
            _ => return if i == pos { Err(Stop::Bad("expected a value", pos)) } else { Ok(i) },
        }
    }
    Err(Stop::Incomplete)
}

/// Finds the end of the scalar (number, true, false, null) starting at `pos`.
#[inline]
pub fn scalar_end(buf: &[u8], pos: usize) -> Step<usize> {
    let mut i = pos;
    while i < buf.len() {
        match buf[i] {
            b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t' => {
                return if i == pos { Err(Stop::Bad("expected a value", pos)) } else { Ok(i) };
            }
            b'"' | b'{' | b'[' | b':' => return Err(Stop::Bad("unexpected character in a value", i)),
            _ => i += 1,
        }
    }
    Err(Stop::Incomplete)
}

/// Skips one JSON value starting at `pos` (after whitespace). Returns the position after it.
pub fn skip_value(buf: &[u8], pos: usize) -> Step<usize> {
    let pos = skip_ws(buf, pos);
    let Some(&first) = buf.get(pos) else { return Err(Stop::Incomplete) };
    match first {
        b'"' => Ok(string_end(buf, pos)?.0),
        b'{' | b'[' => container_end(buf, pos),
        b'}' | b']' | b',' | b':' => Err(Stop::Bad("expected a value", pos)),
        _ => scalar_end(buf, pos),
    }
}

/// Where a container skip stands between blocks: nesting depth and whether it is inside a string.
struct Nesting {
    depth: usize,
    in_string: bool,
}

/// Finds the end of the array or object whose opening bracket is at `pos`, by counting brackets
/// outside strings, 16 bytes at a time ([`block`]). Iterative: any depth is fine.
fn container_end(buf: &[u8], pos: usize) -> Step<usize> {
    let mut at = Nesting { depth: 0, in_string: false };
    let mut i = pos;
    while let Some(bytes) = buf.get(i..i + simd16::WIDTH) {
        let marks = simd16::classify(bytes.try_into().expect("one block"));
        if marks.backslash != 0 {
            // Escapes are rare in traces: this block byte by byte.
            match container_bytes(buf, i, i + simd16::WIDTH, &mut at) {
                Ok(end) => return Ok(end),
                Err(next) => i = next,
            }
            continue;
        }
        let mut inside = simd16::inside_strings(marks.quote);
        if at.in_string {
            inside = !inside;
        }
        at.in_string ^= marks.quote.count_ones() % 2 == 1;
        let (open, close) = (marks.open & !inside, marks.close & !inside);
        if (close.count_ones() as usize) < at.depth {
            // The depth cannot reach zero inside this block.
            at.depth = at.depth + open.count_ones() as usize - close.count_ones() as usize;
        } else {
            let mut brackets = open | close;
            while brackets != 0 {
                let k = brackets.trailing_zeros();
                brackets &= brackets - 1;
                if open & (1 << k) != 0 {
                    at.depth += 1;
                } else {
                    at.depth -= 1;
                    if at.depth == 0 {
                        return Ok(i + k as usize + 1);
                    }
                }
            }
        }
        i += simd16::WIDTH;
    }
    // Fewer than 16 bytes left.
    container_bytes(buf, i, buf.len(), &mut at).or(Err(Stop::Incomplete))
}

/// Byte-by-byte container skipping from `i` up to `limit` (an escape may carry one byte past
/// it): `Ok(end)` after the closing bracket, or `Err(next)`, where to go on.
fn container_bytes(buf: &[u8], mut i: usize, limit: usize, at: &mut Nesting) -> std::result::Result<usize, usize> {
    while i < limit {
        let b = buf[i];
        i += 1;
        if at.in_string {
            match b {
                b'\\' => i += 1,
                b'"' => at.in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => at.in_string = true,
            b'[' | b'{' => at.depth += 1,
            b']' | b'}' => {
                at.depth -= 1;
                if at.depth == 0 {
                    return Ok(i);
                }
            }
            _ => {}
        }
    }
    Err(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skips_nested_values_and_strings_with_brackets() {
        let s = br#"{"a": [1, "]}", {"b": "\"}"}], "c": null} tail"#;
        let end = skip_value(s, 0).unwrap();
        assert_eq!(&s[end..], b" tail");
    }

    #[test]
    fn incomplete_values_ask_for_more() {
        assert_eq!(skip_value(br#"{"a": [1, 2"#, 0), Err(Stop::Incomplete));
        assert_eq!(skip_value(br#""abc"#, 0), Err(Stop::Incomplete));
        assert_eq!(skip_value(b"123", 0), Err(Stop::Incomplete));
    }

    /// The obvious byte-at-a-time container skip, to check the block-wise one against.
    fn container_end_by_hand(s: &[u8]) -> Option<usize> {
        let (mut depth, mut in_string, mut i) = (0usize, false, 0);
        while i < s.len() {
            match (in_string, s[i]) {
                (true, b'\\') => i += 1,
                (true, b'"') | (false, b'"') => in_string = !in_string,
                (false, b'[' | b'{') => depth += 1,
                (false, b']' | b'}') => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(i + 1);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        None
    }

    #[test]
    fn containers_end_where_counted_by_hand_at_every_length_and_cut() {
        // Pieces chosen so that random joins hit every block position with brackets inside and
        // outside strings, escaped quotes and backslashes, and strings that span blocks.
        let pieces: [&[u8]; 12] = [
            b"[",
            b"]",
            b"{",
            b"}",
            b"\"a]b\"",
            br#""x\"]""#,
            br#""\\""#,
            b"12, ",
            br#""[2048, 2048]""#,
            b" ",
            br#""{\\\"}""#,
            b"\"long string without any marks at all\"",
        ];
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for round in 0..3000 {
            let mut s = vec![b'['];
            let mut depth = 1;
            let target = 1 + round % 90;
            while s.len() < target || depth > 0 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let piece = pieces[(seed % pieces.len() as u64) as usize];
                match piece {
                    b"[" | b"{" if s.len() < target => depth += 1,
                    b"]" | b"}" if depth > 0 => depth -= 1,
                    b"[" | b"{" | b"]" | b"}" => continue,
                    _ => {}
                }
                s.extend_from_slice(piece);
            }
            let want = container_end_by_hand(&s).expect("balanced");
            s.extend_from_slice(b", \"after\": [1]}");
            assert_eq!(container_end(&s, 0), Ok(want), "{}", String::from_utf8_lossy(&s));
            for cut in 1..want {
                assert_eq!(container_end(&s[..cut], 0), Err(Stop::Incomplete), "cut {cut}: {}", String::from_utf8_lossy(&s));
            }
        }
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let mut s = vec![b'['; 100_000];
        s.extend(std::iter::repeat_n(b']', 100_000));
        assert_eq!(skip_value(&s, 0), Ok(200_000));
    }

    #[test]
    fn string_ends_are_found_at_every_length_and_escape_position() {
        for len in 0usize..80 {
            for esc in [None, Some(0), Some(len / 2), Some(len.saturating_sub(1))] {
                let mut body: Vec<u8> = (0..len).map(|k| b'a' + (k % 26) as u8).collect();
                if let (Some(at), true) = (esc, len >= 2) {
                    body[at.min(len - 2)] = b'\\';
                    body[at.min(len - 2) + 1] = b'"';
                }
                let mut s = vec![b'"'];
                s.extend_from_slice(&body);
                s.extend_from_slice(b"\"tail\"");
                let (end, escaped) = string_end(&s, 0).unwrap();
                assert_eq!(end, len + 2, "len {len} esc {esc:?}");
                assert_eq!(escaped, esc.is_some() && len >= 2);
                // Cut anywhere inside: the scan must ask for more, never overrun.
                for cut in 1..=len + 1 {
                    assert_eq!(string_end(&s[..cut], 0), Err(Stop::Incomplete), "len {len} cut {cut}");
                }
            }
        }
    }

    #[test]
    fn unescapes_strings() {
        let (t, end) = string(br#""a\u003cb\n\ud83d\ude00" "#, 0).unwrap();
        assert_eq!(t, "a<b\n😀");
        assert_eq!(end, 24);
    }
}
