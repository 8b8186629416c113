#![no_main]
//! Fuzz target `events`: see `fuzz/harness.rs`.

#[allow(dead_code)]
#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::events(data));
