#![no_main]
//! Fuzz target `rules`: see `fuzz/harness.rs`.

#[allow(dead_code)]
#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::rules(data));
