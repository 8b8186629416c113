//! The format of every input is decided once, by `ingest::sniff`: each kind of real fixture is told
//! by its first bytes (gzip outside, what the inflated text is inside).

use traceprism::ingest::{sniff, DocumentForm, Format};

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
    for (format, name) in [(Format::Gzip, "gzip"), (Format::Xspace, "xspace"), (Format::NsysSqlite, "nsys")] {
        assert_eq!(format.as_str(), name, "the page branches on these names");
    }
}
