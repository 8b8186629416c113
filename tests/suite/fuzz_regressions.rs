//! Replays what fuzzing found (`fixtures/fuzz/<target>/`) through the fuzz targets' own harness,
//! and runs the harness over inputs that are known to be hard: real traces cut at many points
//! (plain and gzip), their events with bytes flipped, and rules cut mid-line. Every call must
//! return; a panic fails the test.

#[allow(dead_code)]
#[path = "../../fuzz/harness.rs"]
mod harness;

use crate::common;

use std::path::Path;

type Target = fn(&[u8]);

const TARGETS: &[(&str, Target)] = &[
    ("pipeline", harness::pipeline),
    ("events", harness::events),
    ("rules", harness::rules),
    ("compare", harness::compare),
    ("part", harness::part),
    ("xplane", harness::xplane),
];

#[test]
fn every_kept_finding_replays_without_a_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fuzz");
    let mut replayed = 0;
    for (name, target) in TARGETS {
        let Ok(dir) = std::fs::read_dir(root.join(name)) else { continue };
        for entry in dir {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            let outcome = std::panic::catch_unwind(|| target(&bytes));
            assert!(outcome.is_ok(), "{name}: {} panics again", path.display());
            replayed += 1;
        }
    }
    eprintln!("replayed {replayed} kept findings");
}

#[test]
fn traces_cut_anywhere_and_bytes_flipped_never_panic() {
    for name in ["torch_compile_triton_mi300x.json.gz", "gpu_only_mi210.json.gz", "sglang_qwen3-8b_decode_graph_mi300x.json.gz"] {
        let gz = std::fs::read(common::fixture(name)).unwrap();
        let plain = common::plain_fixture(name);
        let head = &plain[..plain.len().min(48 << 10)];
        for k in 0..=40 {
            // Chunk size 1 + 7·k, cut at k/40 of the head; the gzip member cut likewise.
            let cut = head.len() * k / 40;
            harness::pipeline(&[&[k as u8][..], &head[..cut]].concat());
            harness::pipeline(&[&[k as u8][..], &gz[..gz.len() * k / 40]].concat());
            harness::events(&[&[(k * 6) as u8][..], &head[..cut]].concat());
            // A byte flipped in every 997th place from k on.
            let mut flipped = head.to_vec();
            for i in (k..flipped.len()).step_by(997) {
                flipped[i] ^= 0x5a;
            }
            harness::pipeline(&[&[3u8][..], &flipped].concat());
        }
        harness::compare(&[head, &[0xFF], head].concat());
    }
    // The JAX profile cut at 41 points and with bytes flipped.
    let xplane = std::fs::read(common::fixture("jax_conv_mi300x.xplane.pb")).unwrap();
    for k in 0..=40 {
        harness::xplane(&xplane[..xplane.len() * k / 40]);
        let mut flipped = xplane.clone();
        for i in (k..flipped.len()).step_by(499) {
            flipped[i] ^= 0x5a;
        }
        harness::xplane(&flipped);
    }
    let rules = traceprism::rules::categories::BUILTIN.as_bytes();
    for k in 0..=60 {
        harness::rules(&rules[..rules.len() * k / 60]);
    }
}
