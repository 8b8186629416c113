//! The streaming reader gives the same model whatever the chunk boundaries.

mod common;
use common::*;
use traceprism::Reader;

fn read_in_chunks(bytes: &[u8], sizes: &[usize]) -> traceprism::Trace {
    let mut r = Reader::new();
    let (mut pos, mut k) = (0, 0);
    while pos < bytes.len() {
        let n = sizes[k % sizes.len()].min(bytes.len() - pos);
        r.push(&bytes[pos..pos + n]).unwrap();
        pos += n;
        k += 1;
    }
    r.finish().unwrap()
}

fn fingerprint(t: &traceprism::Trace) -> (usize, i64, usize, usize, usize, u64, Vec<u32>) {
    let names: Vec<u32> = t.gpu.name.iter().take(500).copied().collect();
    (t.gpu.len(), t.gpu.dur.iter().sum(), t.ops.len(), t.launches.len(), t.meta.devices.len(), t.stats.events, names)
}

#[test]
fn odd_chunk_sizes_give_identical_models() {
    for file in ["sglang_qwen3-8b_decode_graph_mi300x.json.gz", "torch_compile_triton_mi300x.json.gz"] {
        let gz = std::fs::read(fixture(file)).unwrap();
        let whole = read_in_chunks(&gz, &[gz.len()]);
        for sizes in [&[1usize][..], &[7, 3, 4096], &[65536]] {
            let t = read_in_chunks(&gz, sizes);
            assert_eq!(fingerprint(&t), fingerprint(&whole), "{file} gz chunks {sizes:?}");
        }
        // Plain JSON in small pieces too (inflate it first with our own reader's decoder).
        let mut plain = Vec::new();
        let mut dec = traceprism::ingest::GzipDecoder::default();
        dec.push(&gz, &mut |b| {
            plain.extend_from_slice(b);
            Ok(())
        })
        .unwrap();
        dec.finish(&mut |b| {
            plain.extend_from_slice(b);
            Ok(())
        })
        .unwrap();
        for sizes in [&[1usize][..], &[13, 1000, 2]] {
            let t = read_in_chunks(&plain, sizes);
            assert_eq!(fingerprint(&t), fingerprint(&whole), "{file} plain chunks {sizes:?}");
        }
    }
}
