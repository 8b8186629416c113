//! Best-of-N wall time of reading a trace's JSON text in memory, split by stage, for A/B
//! comparisons of the reader: `MODE=events` runs the streaming parser with a sink that keeps
//! nothing (the cost of finding and decoding the events), `MODE=model` runs the whole reader
//! (`Reader::push_json`: events plus interning and building the columns), `MODE=serde` times
//! serde_json validating the same bytes (the baseline).
//!
//!   MODE=model cargo run --release --example parse_cost -- FILE [MB [N]]
//!
//! Reads only the first MB megabytes of FILE (default: all; `events` and `model` need no complete
//! document, `serde` does) and prints the best of N runs (default 5). The host's speed drifts: to
//! compare two builds, run both binaries at the same time, one per core, several times, and compare
//! the pairs.
use std::io::Read;
use std::time::Instant;
use traceprism::ingest::{EventSink, JsonStream, RawEvent};

/// Keeps nothing but a checksum, so the events must still be decoded.
struct Discard(u64);

impl EventSink for Discard {
    fn event(&mut self, ev: &RawEvent<'_>, _index: u64, _offset: u64) {
        self.0 = self.0.wrapping_add(ev.name.len() as u64);
    }
    fn header(&mut self, _key: &str, _value: serde_json::Value) {}
    fn not_an_object(&mut self, _index: u64, _offset: u64) {}
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: parse_cost FILE [MB [N]]");
    let mb: u64 = args.next().map_or(u64::MAX >> 20, |v| v.parse().expect("MB"));
    let runs: usize = args.next().map_or(5, |v| v.parse().expect("N"));
    let mode = std::env::var("MODE").unwrap_or_else(|_| "model".into());
    let mut bytes = Vec::new();
    std::fs::File::open(&path).expect("open").take(mb << 20).read_to_end(&mut bytes).expect("read");
    let mut best = f64::MAX;
    for _ in 0..runs {
        let t = Instant::now();
        match mode.as_str() {
            "events" => {
                let (mut stream, mut sink) = (JsonStream::default(), Discard(0));
                for c in bytes.chunks(8 << 20) {
                    stream.feed(c, &mut sink).expect("valid JSON");
                }
                std::hint::black_box(sink.0);
            }
            "model" => {
                let mut reader = traceprism::Reader::new();
                for c in bytes.chunks(8 << 20) {
                    reader.push_json(c, c.len() as u64).expect("valid JSON");
                }
                std::hint::black_box(&reader);
            }
            "serde" => {
                let _: serde::de::IgnoredAny = serde_json::from_slice(&bytes).expect("a complete JSON document");
            }
            other => panic!("MODE is events, model or serde, not {other}"),
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    let mbs = bytes.len() as f64 / 1e6;
    println!("{mode}: best of {runs} {:.1} ms for {mbs:.0} MB ({:.0} MB/s)", best * 1e3, mbs / best);
}
