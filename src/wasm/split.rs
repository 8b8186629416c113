//! One window of a trace written as a `.json.gz` ([`crate::split`]).

use super::js_error;
use wasm_bindgen::prelude::*;

/// Writes one window of a trace as a `.json.gz` ([`crate::split`]), from the file's bytes pushed
/// again.
#[wasm_bindgen]
pub struct TraceSplitter {
    pub(super) inner: Option<crate::split::Splitter>,
    pub(super) kernels: u32,
}

#[wasm_bindgen]
impl TraceSplitter {
    /// Feeds the next bytes of the trace file.
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), JsValue> {
        self.inner.as_mut().ok_or_else(|| js_error("splitter finished"))?.push(chunk).map_err(js_error)
    }
    /// The `.json.gz` of the window.
    pub fn finish(&mut self) -> Result<Vec<u8>, JsValue> {
        self.inner.take().ok_or_else(|| js_error("splitter finished"))?.finish().map_err(js_error)
    }
    /// Kernels in the window (what the kernels table lists for it).
    pub fn kernels(&self) -> u32 {
        self.kernels
    }
}
