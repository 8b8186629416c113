//! Reads object keys fast by predicting them: trace writers put the keys of each kind of event in
//! the same order (`"ph": `, `"cat": `, `"name": `, ...), so after a given key the next one is
//! almost always the one that followed it last time.
//!
//! A [`KeyOrder`] remembers each key it has read as a token — the exact text from the opening
//! quote up to the value (`"ts": `) — and, for each token, the last two different tokens that came
//! next (two, because objects of two kinds often share a context and alternate: in a file written
//! with sorted keys, `args` comes before `cat`, and the args of kernels and of their launches both
//! start with `"External id"`). Reading a key first compares the text with the predicted tokens (a
//! few word compares, no scanning); only a miss of both scans the key the ordinary way and learns
//! from it. A prediction is used only when the text matches byte for byte, so the result is always
//! the same as scanning.

use super::scan::{self, skip_ws, Step, Stop};

/// Most tokens remembered per kind of object (keys seen after that are always scanned).
const MAX_TOKENS: usize = 62;
/// Longest token remembered, quote to value; one less than the bytes compared, so the value's
/// first byte is always inside the compared window.
const MAX_TOKEN_LEN: usize = 31;
/// Contexts that keep separate orders (e.g. `args` of kernels and of CPU ops).
const CONTEXTS: usize = 8;
/// Slot of the "no key yet" state in the order table.
const START: usize = MAX_TOKENS;
const NONE: u8 = u8::MAX;

/// One remembered key token.
#[derive(Debug, Clone)]
struct Token<K> {
    words: [u64; 4],
    masks: [u64; 4],
    len: usize,
    key: K,
}

impl<K> Token<K> {
    #[inline(always)]
    fn matches(&self, window: &[u8; 32]) -> bool {
        let mut diff = 0;
        for k in 0..4 {
            let w = u64::from_le_bytes(window[k * 8..k * 8 + 8].try_into().expect("8 bytes"));
            diff |= (w ^ self.words[k]) & self.masks[k];
        }
        diff == 0
    }
}

/// Key prediction for one kind of object; `K` is what a key means to the reader.
#[derive(Debug, Clone)]
pub struct KeyOrder<K> {
    tokens: Vec<Token<K>>,
    /// `next[context][token]`: the token that followed `token` last time in that context
    /// (`token` = [`START`] for the first key of an object).
    next: [[u8; MAX_TOKENS + 1]; CONTEXTS],
    /// `other[context][token]`: the token that followed it before that, if it differs.
    other: [[u8; MAX_TOKENS + 1]; CONTEXTS],
}

impl<K> Default for KeyOrder<K> {
    fn default() -> Self {
        KeyOrder { tokens: Vec::new(), next: [[NONE; MAX_TOKENS + 1]; CONTEXTS], other: [[NONE; MAX_TOKENS + 1]; CONTEXTS] }
    }
}

/// Where a key reader stands inside one object.
#[derive(Debug, Clone, Copy)]
pub struct KeyCursor {
    /// The token just read ([`START`] before the first key).
    prev: usize,
    /// Which order to follow (`0..CONTEXTS`).
    context: usize,
}

impl KeyCursor {
    /// A cursor before the first key of an object, following order `context` (any number: it
    /// wraps to one of the kept orders).
    pub fn new(context: usize) -> Self {
        KeyCursor { prev: START, context: context % CONTEXTS }
    }

    /// Follows order `context` from the next key on (e.g. once `ph` has told the kind of event).
    pub fn switch_to(&mut self, context: usize) {
        self.context = context % CONTEXTS;
    }
}

impl<K: Copy> KeyOrder<K> {
    /// Reads the key at `i` (the opening quote) and the `:` after it; returns what the key means
    /// (`classify` maps the raw key text) and the position of its value (first non-space byte).
    #[inline(always)]
    pub fn read(&mut self, buf: &[u8], i: usize, at: &mut KeyCursor, classify: fn(&[u8]) -> K) -> Step<(K, usize)> {
        // `context` is already below CONTEXTS; the mask only lets the compiler drop a bounds check.
        let guess = self.next[at.context % CONTEXTS][at.prev];
        if let Some(found) = self.try_token(buf, i, guess) {
            at.prev = guess as usize;
            return Ok(found);
        }
        self.read_other(buf, i, at, classify)
    }

    /// `(key, value position)` if the text at `i` is token `guess` (none for [`NONE`], no prediction).
    #[inline(always)]
    fn try_token(&self, buf: &[u8], i: usize, guess: u8) -> Option<(K, usize)> {
        let token = self.tokens.get(guess as usize)?;
        let window = buf.get(i..i + 32)?;
        (token.matches(window.try_into().expect("32 bytes")) && buf[i + token.len] > b' ').then_some((token.key, i + token.len))
    }

    /// The first prediction missed: tries the second, which then becomes the first.
    #[inline(never)]
    fn read_other(&mut self, buf: &[u8], i: usize, at: &mut KeyCursor, classify: fn(&[u8]) -> K) -> Step<(K, usize)> {
        let (context, prev) = (at.context % CONTEXTS, at.prev);
        let guess = self.other[context][prev];
        if let Some(found) = self.try_token(buf, i, guess) {
            self.other[context][prev] = self.next[context][prev];
            self.next[context][prev] = guess;
            at.prev = guess as usize;
            return Ok(found);
        }
        self.read_slowly(buf, i, at, classify)
    }

    /// Scans the key, then remembers its token and that it followed the previous one.
    #[inline(never)]
    fn read_slowly(&mut self, buf: &[u8], i: usize, at: &mut KeyCursor, classify: fn(&[u8]) -> K) -> Step<(K, usize)> {
        let key_end = match buf.get(i) {
            None => return Err(Stop::Incomplete),
            Some(b'"') => scan::string_end(buf, i)?.0,
            Some(_) => return Err(Stop::Bad("expected a key string", i)),
        };
        let colon = scan::expect(buf, key_end, b':', "expected ':' after key")?;
        let value = skip_ws(buf, colon);
        if value >= buf.len() {
            return Err(Stop::Incomplete);
        }
        let key = classify(&buf[i + 1..key_end - 1]);
        let text = &buf[i..value];
        let window = padded(text);
        let found = self.tokens.iter().position(|t| t.len == text.len() && t.matches(&window));
        let slot = match found {
            Some(k) => Some(k),
            None if text.len() <= MAX_TOKEN_LEN && self.tokens.len() < MAX_TOKENS => {
                self.tokens.push(token(text, key));
                Some(self.tokens.len() - 1)
            }
            None => None,
        };
        match slot {
            Some(k) => {
                let last = self.next[at.context][at.prev];
                if last as usize != k {
                    self.other[at.context][at.prev] = last;
                    self.next[at.context][at.prev] = k as u8;
                }
                at.prev = k;
            }
            // Not remembered: predict nothing after it.
            None => at.prev = START,
        }
        Ok((key, value))
    }
}

/// `text` (at most 32 bytes) zero-padded to 32.
fn padded(text: &[u8]) -> [u8; 32] {
    let mut window = [0u8; 32];
    let n = text.len().min(32);
    window[..n].copy_from_slice(&text[..n]);
    window
}

fn token<K>(text: &[u8], key: K) -> Token<K> {
    let window = padded(text);
    let mut words = [0u64; 4];
    let mut masks = [0u64; 4];
    for k in 0..4 {
        words[k] = u64::from_le_bytes(window[k * 8..k * 8 + 8].try_into().expect("8 bytes"));
        let covered = text.len().saturating_sub(k * 8).min(8);
        masks[k] = if covered == 8 { u64::MAX } else { (1u64 << (covered * 8)) - 1 };
    }
    Token { words, masks, len: text.len(), key }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classify(key: &[u8]) -> usize {
        key.len()
    }

    /// Reads every key of the flat object `s` (values are numbers), returning (key length, value
    /// position) pairs.
    fn keys(order: &mut KeyOrder<usize>, s: &[u8], context: usize) -> Vec<(usize, usize)> {
        let mut at = KeyCursor::new(context);
        let mut out = Vec::new();
        let mut i = 1;
        loop {
            i = skip_ws(s, i);
            if s[i] == b'}' {
                return out;
            }
            if s[i] == b',' {
                i = skip_ws(s, i + 1);
            }
            let (key, value) = order.read(s, i, &mut at, classify).unwrap();
            out.push((key, value));
            i = scan::scalar_end(s, value).unwrap();
        }
    }

    #[test]
    fn predictions_give_exactly_what_scanning_gives() {
        let objects: [&[u8]; 5] = [
            br#"{"ph": 1, "cat": 2, "name": 3, "a key that is much too long to remember": 4, "ts": 5}                                "#,
            br#"{"ph": 1, "cat": 2, "name": 3, "ts":   5, "dur": 6}                                "#,
            br#"{"ph":1,"cat":2,"name" : 3,"ts":5}                                "#,
            br#"{"ph": 1, "cats": 2, "nam": 3, "ts": 5}                                "#,
            br#"{"ph": 1, "cat": 2, "name": 3, "ts": 5, "dur": 6}                                "#,
        ];
        let mut order = KeyOrder::default();
        for round in 0..3 {
            for (n, s) in objects.iter().enumerate() {
                let fresh = keys(&mut KeyOrder::default(), s, 0);
                assert_eq!(keys(&mut order, s, round), fresh, "object {n} round {round}");
            }
        }
    }

    #[test]
    fn two_kinds_alternating_in_one_context_read_as_scanned() {
        // Kernel and launch args in a file with sorted keys: the same first key, different keys
        // after it. Every object must still read exactly as a fresh scan reads it.
        let kernel = br#"{"External id": 1, "block": 2, "correlation": 3, "grid": 4}                                "#;
        let launch = br#"{"External id": 1, "cbid": 2, "correlation": 3}                                "#;
        let mut order = KeyOrder::default();
        for round in 0..10 {
            for s in [&kernel[..], &launch[..]] {
                let fresh = keys(&mut KeyOrder::default(), s, 0);
                assert_eq!(keys(&mut order, s, 0), fresh, "round {round}");
            }
        }
    }

    #[test]
    fn a_key_cut_by_the_end_of_the_buffer_asks_for_more() {
        let mut order = KeyOrder::default();
        let s = br#"{"ts": 5, "dur": 6}                                "#;
        keys(&mut order, s, 0);
        let mut at = KeyCursor::new(0);
        assert_eq!(order.read(br#""ts": "#, 0, &mut at, classify), Err(Stop::Incomplete));
        assert_eq!(order.read(br#""ts"#, 0, &mut at, classify), Err(Stop::Incomplete));
    }
}
