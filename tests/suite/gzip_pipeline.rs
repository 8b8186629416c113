//! The native gzip reader inflates on one thread and parses on another; when the parser is behind,
//! the inflating thread parses whole blocks itself (`Sharing`). Whatever it shares, the model and
//! any error must be those of plain in-order reading.

use crate::common;
use common::*;
use traceprism::read::{read_gzip, Sharing};
use traceprism::Trace;

/// In-order reading on this thread only (the streaming Reader inflates and parses as it goes).
/// The model (unlinked, as `read_gzip` returns it) read in order on one thread.
fn in_order(gz: &[u8]) -> traceprism::Result<Trace> {
    let mut r = traceprism::Reader::new();
    r.push(gz)?;
    r.finish()
}

/// Decompressed text per block (the reader's block size).
const BLOCK: usize = 4 << 20;

#[test]
fn shared_blocks_give_the_in_order_model() {
    // recsys has negative numeric tids next to text ones (they once collided when parts were merged).
    for file in ["llama_dense_eager.pt.trace.json.gz", "moe_eager.pt.trace.json.gz", "recsys_train_rank0_a100.json.gz"] {
        let gz = std::fs::read(fixture(file)).unwrap();
        let text_len = plain_fixture(file).len();
        let want = in_order(&gz).unwrap();
        assert_eq!(want.stats.parallel_blocks, 0);
        let always = read_gzip(&gz[..], Sharing::Always).unwrap();
        // Every full block but the first is parsed by the inflating thread and adopted.
        let full_blocks = text_len / BLOCK;
        assert!(full_blocks >= 4, "{file}: {text_len} bytes of text");
        assert_eq!(always.stats.parallel_blocks as usize, full_blocks - 1, "{file}");
        assert_eq!(all_columns(&always), all_columns(&want), "{file}: Sharing::Always");
        let never = read_gzip(&gz[..], Sharing::Never).unwrap();
        assert_eq!(never.stats.parallel_blocks, 0);
        assert_eq!(all_columns(&never), all_columns(&want), "{file}: Sharing::Never");
        let when_behind = read_gzip(&gz[..], Sharing::WhenBehind).unwrap();
        assert_eq!(all_columns(&when_behind), all_columns(&want), "{file}: Sharing::WhenBehind");
    }
}

#[test]
fn a_wrong_guess_in_a_shared_block_is_parsed_again_in_order() {
    // The second block starts inside a kernel name holding `}, {`: the inflating thread's guess of
    // the first event start in that block is wrong, so its part must be refused.
    let plain = String::from_utf8(plain_fixture("llama_dense_eager.pt.trace.json.gz")).unwrap();
    let start = plain.find("\"traceEvents\": [").unwrap() + "\"traceEvents\": [".len();
    let events = &plain[start..plain.rfind(']').unwrap()];
    let head = "{\"traceEvents\": [{\"ph\":\"X\",\"cat\":\"kernel\",\"ts\":1,\"dur\":1,\"name\":\"";
    let text = format!("{head}{}}}, {{{}\"}}, {events}]}}", "x".repeat(BLOCK - head.len() + 10), "x".repeat(1000));
    let gz = gzip(text.as_bytes());
    let want = in_order(&gz).unwrap();
    let got = read_gzip(&gz[..], Sharing::Always).unwrap();
    let full_blocks = text.len() / BLOCK;
    assert_eq!(got.stats.parallel_blocks as usize, full_blocks - 2, "the second block's part is refused, the others kept");
    assert_eq!(all_columns(&got), all_columns(&want));
    assert_eq!(got.kernel_rows().count(), 22903 + 1);
}

#[test]
fn a_syntax_error_in_a_shared_block_is_reported_at_its_in_order_offset() {
    let mut text = plain_fixture("llama_dense_eager.pt.trace.json.gz");
    // Break the first `"ts":` after 10 MB of text.
    let at = 10_000_000 + text[10_000_000..].windows(5).position(|w| w == b"\"ts\":").unwrap() + 4;
    text[at] = b';';
    let gz = gzip(&text);
    let want = in_order(&gz).map(|_| ()).unwrap_err().to_string();
    assert!(want.contains(&format!("byte {at}")) || want.contains(&at.to_string()), "in-order error names the offset: {want}");
    for sharing in [Sharing::Always, Sharing::WhenBehind, Sharing::Never] {
        let got = read_gzip(&gz[..], sharing).map(|_| ()).unwrap_err().to_string();
        assert_eq!(got, want, "{sharing:?}");
    }
}
