//! Warm-up calls the worker makes while the user picks a file (see [`crate::warm_up`]).

use super::{js_error, summary_of, to_js, Inflater};
use crate::report;
use wasm_bindgen::prelude::*;

/// Warms up the parallel parse path ([`crate::pipeline::warm_up::warm_up_part`]). Helper workers call it
/// for their parse path; the main worker for the adopting side.
#[wasm_bindgen]
pub fn warm_up_part(decode_steps: u32) -> Result<(), JsValue> {
    crate::pipeline::warm_up::warm_up_part(decode_steps.max(1) as usize).map_err(js_error)
}

/// Warms up inflating for a helper worker: the synthetic trace of `decode_steps` decode steps
/// ([`crate::synth::synthetic_trace`]) as a gzip member, inflated by an [`Inflater`] in small
/// pieces (many calls of the hot functions, so the engine's optimising tier picks them up).
#[wasm_bindgen]
pub fn warm_up_inflate(decode_steps: u32) -> Result<(), JsValue> {
    let member = crate::synth::gzip(crate::synth::synthetic_trace(decode_steps.max(1) as usize).as_bytes());
    let mut inflater = Inflater::new(64 << 10);
    for piece in member.chunks(4 << 10) {
        inflater.push(piece)?;
        while inflater.ready() {
            inflater.take();
        }
    }
    match inflater.finish()? {
        None => Ok(()),
        Some(what) => Err(js_error(what)),
    }
}

/// Runs the whole pipeline once on a synthetic trace of `decode_steps` decode steps
/// ([`crate::pipeline::warm_up::warm_up_with`]; 0 means [`crate::pipeline::warm_up::WARM_UP_DECODE_STEPS`]) and
/// converts its summary, rollup and every table to JS values, so the engine has compiled all of it
/// before the user's file arrives. The worker calls this right after instantiating the module, then
/// a few more times (while no file has arrived) so the hot functions reach the optimising tier.
#[wasm_bindgen]
pub fn warm_up(decode_steps: u32) -> Result<(), JsValue> {
    let steps = if decode_steps == 0 { crate::pipeline::warm_up::WARM_UP_DECODE_STEPS } else { decode_steps as usize };
    let analysis = crate::pipeline::warm_up::warm_up_with(steps).map_err(js_error)?;
    to_js(&summary_of(&analysis))?;
    to_js(&report::rollup::rollup(&analysis))?;
    for def in report::TABLES {
        to_js(&(def.build)(&analysis))?;
    }
    Ok(())
}

/// Compiles the built-in rule sets ([`crate::pipeline::warm_up::compile_rules`]): the first, cheapest step of
/// the worker's warm-up.
#[wasm_bindgen]
pub fn warm_up_rules() -> Result<(), JsValue> {
    crate::pipeline::warm_up::compile_rules().map_err(js_error)
}
