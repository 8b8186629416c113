//! The format of every input is decided once, by `read::sniff`: each kind of real fixture is told
//! by its first bytes (gzip outside, what the inflated text is inside).

use traceprism::ingest::{DocumentForm, Format};
use traceprism::read::{reading as reading_of, sniff, ReadSettings, Reader, Reading};

fn head(name: &str) -> Vec<u8> {
    let bytes = std::fs::read(crate::common::fixture(name)).expect("fixture");
    bytes[..bytes.len().min(64)].to_vec()
}

#[test]
fn every_kind_of_fixture_is_told_by_its_first_bytes() {
    assert_eq!(sniff(&head("hf_bert_small_forward_h100.json.gz")), Format::Gzip);
    let inflated =
        traceprism::read::whole_text(std::fs::read(crate::common::fixture("hf_bert_small_forward_h100.json.gz")).unwrap())
            .unwrap();
    assert_eq!(sniff(&inflated[..64]), Format::ChromeJson(DocumentForm::Object));
    assert_eq!(sniff(&head("jax_conv_mi300x.xplane.pb")), Format::Xspace);
    assert_eq!(sniff(&head("nsys/mfu_2gpu_after.sqlite")), Format::NsysSqlite);
    // The page's worker picks its strategy by how a format is read, never by its name.
    for (file, reading) in [
        ("hf_bert_small_forward_h100.json.gz", Reading::Inflated),
        ("jax_conv_mi300x.xplane.pb", Reading::InOrder),
        ("nsys/mfu_2gpu_after.sqlite", Reading::AsRows),
    ] {
        assert_eq!(reading_of(sniff(&head(file))), reading, "{file}");
    }
    assert_eq!(reading_of(sniff(&inflated[..64])), Reading::InParts);
}

/// Whatever the format, the reader of what a gzip stream holds is the one its inflated bytes
/// tell: a compressed JAX profile and a compressed Nsight export read as the files themselves, and
/// a reader told the format reads as one that tells it from the first bytes.
#[cfg(feature = "nsys")]
#[test]
fn a_compressed_input_reads_as_what_it_holds() {
    use std::io::Write;
    let summary = |bytes: &[u8], told: bool| {
        let mut reader = if told { Reader::of(sniff(bytes), ReadSettings::default()) } else { Reader::new() };
        for chunk in bytes.chunks(1 << 16) {
            reader.push(chunk).expect("reads");
        }
        let trace = traceprism::pipeline::finish(reader).expect("a trace");
        let stats = &trace.stats;
        (trace.gpu.len(), trace.ops.len(), stats.events, stats.kept, stats.format, stats.notes.clone())
    };
    for name in ["jax_conv_mi300x.xplane.pb", "nsys/mfu_2gpu_after.sqlite"] {
        let plain = std::fs::read(crate::common::fixture(name)).expect("fixture");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&plain).unwrap();
        let compressed = gz.finish().unwrap();
        let as_is = summary(&plain, false);
        assert!(as_is.0 > 0, "{name}: GPU events read");
        assert_eq!(summary(&plain, true), as_is, "{name}: told its format");
        assert_eq!(summary(&compressed, false), as_is, "{name}: compressed");
        assert_eq!(summary(&compressed, true), as_is, "{name}: compressed, told gzip");
    }
}
