//! Reading one file in several workers: byte ranges parsed by helpers ([`TextPart`]), gzip
//! inflated by a helper ([`Inflater`]), and the moves of their results as JS arrays.

use super::js_error;
use wasm_bindgen::prelude::*;

/// One byte range of a plain-JSON trace, parsed by a helper worker from a guessed event start
/// ([`find_event_start`]), for the main worker's [`Analyzer::adopt_part`].
#[wasm_bindgen]
pub struct TextPart {
    reader: Option<crate::read::PartReader>,
}

#[wasm_bindgen]
impl TextPart {
    /// A part starting at byte `start` of the file; `bare` is the document's form
    /// ([`sniff`]'s `form` is `"array"`).
    #[wasm_bindgen(constructor)]
    pub fn new(bare: bool, start: f64) -> TextPart {
        let form = if bare { crate::ingest::DocumentForm::BareArray } else { crate::ingest::DocumentForm::Object };
        TextPart { reader: Some(crate::read::PartReader::new(form, start as u64)) }
    }

    /// Feeds the next piece of the range. An error means the guess or the text is wrong: the
    /// main worker then parses the range itself (and reports any real error with its offset).
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), JsValue> {
        let reader = self.reader.as_mut().ok_or_else(|| js_error("push after finish"))?;
        reader.push(chunk).map_err(|e| {
            self.reader = None;
            js_error(e)
        })
    }

    /// Events read so far.
    pub fn events(&self) -> f64 {
        self.reader.as_ref().map_or(0.0, |r| r.events() as f64)
    }

    /// Ends the range; returns the part as bytes (to transfer to the main worker), written
    /// straight into a JS array of the exact size: no copy of the whole part is made in wasm memory.
    pub fn finish(&mut self) -> Result<js_sys::Uint8Array, JsValue> {
        let reader = self.reader.take().ok_or_else(|| js_error("finish called twice"))?;
        let part = reader.finish();
        let len = u32::try_from(part.encoded_len()).map_err(|_| js_error("part too large to move"))?;
        let mut sink = JsSink { out: js_sys::Uint8Array::new_with_length(len), at: 0 };
        part.write_to(&mut sink);
        Ok(sink.out)
    }
}

/// Inflates a gzip file in a helper worker for an [`Analyzer::push_inflated`] in another: the
/// decompressed text is inflated straight into blocks of a fixed size, each handed out once full
/// (with the compressed bytes read since the previous one), so the text never piles up in wasm memory.
#[wasm_bindgen]
pub struct Inflater {
    decoder: crate::ingest::GzipDecoder,
    blocks: Blocks,
    /// Compressed bytes pushed since the last block was taken.
    compressed: u64,
}

/// The block being inflated into, and the full ones not yet taken.
struct Blocks {
    /// `block_bytes` long, the first `filled` bytes inflated text.
    block: Vec<u8>,
    filled: usize,
    block_bytes: usize,
    full: std::collections::VecDeque<Vec<u8>>,
    /// A taken block's buffer, for the next block (fresh pages cost page faults).
    spare: Option<Vec<u8>>,
}

impl crate::ingest::Output for Blocks {
    fn room(&mut self) -> &mut [u8] {
        &mut self.block[self.filled..]
    }

    fn wrote(&mut self, n: usize) -> crate::error::Result<()> {
        self.filled += n;
        if self.filled == self.block_bytes {
            let next = self.spare.take().unwrap_or_else(|| vec![0; self.block_bytes]);
            self.full.push_back(std::mem::replace(&mut self.block, next));
            self.filled = 0;
        }
        Ok(())
    }
}

impl Blocks {
    /// Copies the next full block out with `copy` and keeps its buffer for reuse.
    fn pop<T>(&mut self, copy: impl FnOnce(&[u8]) -> T) -> Option<T> {
        let block = self.full.pop_front()?;
        let out = copy(&block);
        self.spare = Some(block);
        Some(out)
    }
}

#[wasm_bindgen]
impl Inflater {
    /// An inflater handing out blocks of `block_bytes` of text (at least 64 KiB).
    #[wasm_bindgen(constructor)]
    pub fn new(block_bytes: u32) -> Inflater {
        let block_bytes = (block_bytes as usize).max(64 << 10);
        let blocks = Blocks { block: vec![0; block_bytes], filled: 0, block_bytes, full: Default::default(), spare: None };
        Inflater { decoder: crate::ingest::GzipDecoder::default(), blocks, compressed: 0 }
    }

    /// Inflates the next compressed bytes of the file. An error is the core's own message
    /// (corrupt data, with the decompressed offset); the text inflated before it stays available
    /// through [`Inflater::finish_block`].
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), JsValue> {
        self.compressed += chunk.len() as u64;
        self.decoder.push_to(chunk, &mut self.blocks).map_err(js_error)
    }

    /// Ends the compressed stream: `undefined` if it ended cleanly, else what is wrong at its end
    /// (cut short, trailer missing or wrong), for [`Analyzer::input_cut`]. The text inflated
    /// before the cut stays available as usual.
    pub fn finish(&mut self) -> Result<Option<String>, JsValue> {
        self.decoder.finish_to(&mut self.blocks).map_err(js_error)
    }

    /// Checks each member's CRC-32 (on by default) or not (a page setting for large files).
    pub fn check_crc(&mut self, on: bool) {
        self.decoder.check_crc(on);
    }

    /// True if a full block is ready for [`Inflater::take`].
    pub fn ready(&self) -> bool {
        !self.blocks.full.is_empty()
    }

    /// The next full block (empty if none is ready), copied out to a JS array.
    pub fn take(&mut self) -> js_sys::Uint8Array {
        self.blocks.pop(|b| js_sys::Uint8Array::from(b)).unwrap_or_else(|| js_sys::Uint8Array::new_with_length(0))
    }

    /// Copies the next full block into `out` (a buffer handed back for reuse: a fresh JS buffer per
    /// block costs more than the copy) and returns its length; 0 if none is ready, -1 if `out` is
    /// too small (the block stays for [`Inflater::take`]).
    pub fn take_into(&mut self, out: &js_sys::Uint8Array) -> i32 {
        let Some(len) = self.blocks.full.front().map(Vec::len) else { return 0 };
        if (out.length() as usize) < len {
            return -1;
        }
        self.blocks.pop(|b| out.subarray(0, len as u32).copy_from(b));
        len as i32
    }

    /// The text inflated but not yet in a full block (after [`Inflater::finish`] or an error).
    pub fn finish_block(&mut self) -> js_sys::Uint8Array {
        let out = js_sys::Uint8Array::from(&self.blocks.block[..self.blocks.filled]);
        self.blocks.filled = 0;
        out
    }

    /// Compressed bytes pushed since the last call, to send with the block just taken.
    pub fn take_compressed(&mut self) -> f64 {
        std::mem::take(&mut self.compressed) as f64
    }
}

/// Writes a part's bytes into a JS array, piece by piece.
struct JsSink {
    out: js_sys::Uint8Array,
    at: u32,
}

impl crate::support::codec::WireSink for JsSink {
    fn write(&mut self, bytes: &[u8]) {
        let end = self.at.saturating_add(bytes.len() as u32);
        // The array was sized by `Part::encoded_len`, so this always holds.
        if end <= self.out.length() {
            self.out.subarray(self.at, end).copy_from(bytes);
        }
        self.at = end;
    }
}

/// A part's bytes in the JS array they were moved in.
pub(crate) struct JsBytes(pub(crate) js_sys::Uint8Array);

impl crate::support::codec::ByteSource for JsBytes {
    fn len(&self) -> usize {
        self.0.length() as usize
    }
    fn read(&self, at: usize, dst: &mut [u8]) {
        let end = at + dst.len();
        // Callers keep inside `len()`; `copy_to` would panic on a short range.
        if end <= self.len() {
            self.0.subarray(at as u32, end as u32).copy_to(dst);
        }
    }
}

/// Where an event likely starts in `window` at or after index `from` (see
/// [`crate::ingest::likely_event_start`]): the index into `window`, or -1 if none was found.
#[wasm_bindgen]
pub fn find_event_start(window: &[u8], from: u32) -> i32 {
    crate::ingest::likely_event_start(window, from as usize).map_or(-1, |p| p as i32)
}

/// What [`sniff`] tells the worker of a file: `format` (`"gzip"`, `"json"`, `"xspace"`, `"nsys"`,
/// `"nsys_rows"`, `"digest"` or `"unknown"`), for JSON its `form` (`"array"` or `"object"`), and
/// how it is read (`reading`: `"parts"`, `"inflate"`, `"rows"` or `"stream"`, see
/// [`crate::read::Reading`]): the worker picks its strategy by `reading` alone. It hands the
/// answer back to [`super::Analyzer::new`] and to the helpers, which never ask again.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct Sniffed {
    format: String,
    form: Option<String>,
    #[serde(default)]
    reading: Option<String>,
}

impl Sniffed {
    /// The format the page hands back; an unknown name is an error that names it.
    pub(crate) fn format(value: JsValue) -> Result<Option<crate::ingest::Format>, JsValue> {
        if value.is_undefined() || value.is_null() {
            return Ok(None);
        }
        let s: Sniffed = serde_wasm_bindgen::from_value(value).map_err(|e| js_error(format!("bad format: {e}")))?;
        crate::ingest::Format::from_names(&s.format, s.form.as_deref())
            .map(Some)
            .ok_or_else(|| js_error(format!("unknown format {:?} (form {:?})", s.format, s.form)))
    }
}

/// What a file is from its first bytes (64 are plenty), as [`crate::read::sniff`] decides for
/// every reader: `{format, form, reading}` ([`Sniffed`]). The worker asks here once per file and
/// hands the answer on; the page's own scripts never ask.
#[wasm_bindgen]
pub fn sniff(head: &[u8]) -> Result<JsValue, JsValue> {
    let format = crate::read::sniff(head);
    super::to_js(&Sniffed {
        format: format.as_str().into(),
        form: format.form().map(|f| f.as_str().into()),
        reading: Some(crate::read::reading(format).as_str().into()),
    })
}
