#![no_main]
//! Fuzz target `xplane`: see `fuzz/harness.rs`.

#[allow(dead_code)]
#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::xplane(data));
