//! What each fuzz target runs, shared with `tests/suite/fuzz_regressions.rs` (which replays every
//! finding kept in `fixtures/fuzz/`). Each function must return normally for any input: an error
//! is a fine answer, a panic, an abort or a hang is a finding.

use traceprism::analysis::compare::CompareOptions;
use traceprism::ingest::{EventSink, JsonStream, RawEvent};
use traceprism::{Analysis, Options, Reader};

/// The whole pipeline from bytes (plain JSON or gzip): read in chunks whose size the first byte
/// picks, link, analyse, every table and the summary.
pub fn pipeline(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else { return };
    let chunk = 1 + first as usize * 7;
    let mut reader = Reader::new();
    for piece in rest.chunks(chunk) {
        if reader.push(piece).is_err() {
            return;
        }
    }
    let Ok(trace) = traceprism::pipeline::finish(reader) else { return };
    let Ok(analysis) = Analysis::new(trace, Options::default()) else { return };
    for def in traceprism::report::TABLES {
        let table = (def.build)(&analysis);
        let _ = table.to_csv();
    }
    let _ = traceprism::report::summary::summary(&analysis);
}

struct Count(u64);

impl EventSink for Count {
    fn event(&mut self, ev: &RawEvent<'_>, _index: u64, _offset: u64) {
        self.0 += 1 + ev.name.len() as u64;
    }
    fn header(&mut self, _key: &str, _value: serde_json::Value) {}
    fn not_an_object(&mut self, _index: u64, _offset: u64) {}
}

/// The JAX profile reader (protobuf XSpace) alone, then the whole pipeline when it reads.
pub fn xplane(data: &[u8]) {
    if traceprism::ingest::read_xspace(data, &mut Count(0)).is_ok() && traceprism::ingest::looks_like_xspace(data) {
        pipeline(&[&[255u8][..], data].concat());
    }
}

/// The JSON event reader alone, fed in two pieces split where the first byte says.
pub fn events(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else { return };
    let at = (first as usize * rest.len() / 255).min(rest.len());
    let mut stream = JsonStream::default();
    let mut sink = Count(0);
    if stream.feed(&rest[..at], &mut sink).is_ok() && stream.feed(&rest[at..], &mut sink).is_ok() {
        let _ = stream.finish(&mut sink);
    }
}

/// The category rules loader (the TOML `--rules` and the page's rules view read).
pub fn rules(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = traceprism::rules::categories::RuleSet::load(Some(text));
    }
}

/// Two traces (the input cut at its first `0xFF` byte, which no JSON text holds) analysed and
/// compared.
pub fn compare(data: &[u8]) {
    let cut = data.iter().position(|&b| b == 0xFF).unwrap_or(data.len() / 2);
    let (a, b) = (&data[..cut], data.get(cut + 1..).unwrap_or(&[]));
    let analyse = |bytes: &[u8]| {
        let mut reader = Reader::new();
        reader.push(bytes).ok()?;
        Analysis::new(traceprism::pipeline::finish(reader).ok()?, Options::default()).ok()
    };
    let (Some(a), Some(b)) = (analyse(a), analyse(b)) else { return };
    let _ = traceprism::report::compare::compare_tables(&a, &b, &CompareOptions::default());
}

/// A part of a trace moved between workers, as bytes (the page's transfer): decoding must refuse
/// anything malformed, and what decodes must adopt without a panic.
pub fn part(data: &[u8]) {
    if let Ok(part) = traceprism::read::Part::from_bytes(data) {
        let mut reader = Reader::new();
        let _ = reader.push(b"{\"traceEvents\": [");
        let _ = reader.adopt_part(part);
        let _ = traceprism::pipeline::finish(reader);
    }
}
