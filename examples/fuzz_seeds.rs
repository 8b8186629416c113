//! Writes the fuzz targets' seed corpora from the fixtures (used by `scripts/fuzz.sh`):
//! `cargo run --release --example fuzz_seeds -- fuzz/corpus`.
//!
//! Seeds: whole small traces (gzip and plain), the first 4, 16 and 64 kB of plain ones (cut mid-event,
//! as truncated uploads are), slices of events re-wrapped as a document, the built-in rules in pieces,
//! and parts of traces in their transfer bytes.

use std::path::Path;

const SMALL: &[&str] = &[
    "torch_compile_triton_mi300x.json.gz",
    "gpu_only_mi210.json.gz",
    "sglang_qwen3-8b_decode_graph_mi300x.json.gz",
    "vllm_gptoss_decode_fullgraph_mi300x.json.gz",
    "sglang_qwen3-30b-a3b_decode_b300.trace.json.gz",
    "hta_sampled_rank0_train_w128.json.gz",
];

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::create_dir_all(dir).expect("corpus dir");
    std::fs::write(dir.join(name), bytes).expect("seed written");
}

fn main() {
    let out = std::env::args().nth(1).unwrap_or_else(|| "fuzz/corpus".into());
    let out = Path::new(&out);
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    for (i, name) in SMALL.iter().enumerate() {
        let gz = std::fs::read(fixtures.join(name)).expect("fixture");
        let plain = traceprism::ingest::gunzip(&gz).expect("fixture inflates");
        // The pipeline's first byte picks the chunk size.
        let with_chunk = |b: &[u8]| [&[7u8][..], b].concat();
        if gz.len() < 64 << 10 {
            write(&out.join("pipeline"), &format!("{i}-gz"), &with_chunk(&gz));
        }
        for (k, cut) in [4usize << 10, 16 << 10, 64 << 10].into_iter().enumerate() {
            let head = &plain[..cut.min(plain.len())];
            write(&out.join("pipeline"), &format!("{i}-head{k}"), &with_chunk(head));
            write(&out.join("events"), &format!("{i}-head{k}"), &[&[128u8][..], head].concat());
        }
        // A slice of whole events from the middle, wrapped as a document.
        let text = String::from_utf8_lossy(&plain);
        if let Some(start) = traceprism::ingest::likely_event_start(&plain, plain.len() / 2) {
            let end = text[start..]
                .char_indices()
                .filter(|&(_, c)| c == '}')
                .map(|(p, _)| start + p + 1)
                .take(40)
                .last()
                .unwrap_or(start);
            let doc = format!("{{\"traceEvents\": [{}]}}", &text[start..end]);
            write(&out.join("pipeline"), &format!("{i}-slice"), &with_chunk(doc.as_bytes()));
            // The same slice as PyTorch broke such text (unescaped quotes, a raw Windows path in
            // names): seeds for the repair path.
            let broken = doc.replacen("\"name\": \"", "\"name\": \"{\"device\": \"cpu\"} ", 3).replacen(
                "\"name\": \"",
                "\"name\": \"C:\\Users\\me ",
                2,
            );
            write(&out.join("pipeline"), &format!("{i}-broken"), &with_chunk(broken.as_bytes()));
            write(&out.join("events"), &format!("{i}-broken"), &[&[128u8][..], broken.as_bytes()].concat());
            write(&out.join("compare"), &format!("{i}-pair"), &[doc.as_bytes(), &[0xFF], doc.as_bytes()].concat());
            // A part of the text in its transfer bytes.
            let form = traceprism::ingest::document_form(&plain).unwrap_or(traceprism::ingest::DocumentForm::Object);
            let mut part = traceprism::read::PartReader::new(form, start as u64);
            let _ = part.push(&plain[start..(start + (32 << 10)).min(plain.len())]);
            write(&out.join("part"), &format!("{i}-part"), &part.finish().to_bytes());
        }
    }
    // The JAX profile whole and cut at a few points (a cut XSpace must be a clear error).
    let xplane = std::fs::read(fixtures.join("jax_conv_mi300x.xplane.pb")).expect("xplane fixture");
    for cut in [xplane.len(), 4096, 32 << 10, xplane.len() / 2] {
        write(&out.join("xplane"), &format!("xplane-{cut}"), &xplane[..cut.min(xplane.len())]);
    }
    let rules = traceprism::rules::categories::BUILTIN;
    for (k, piece) in rules.split("[[rule]]").collect::<Vec<_>>().chunks(12).enumerate() {
        write(&out.join("rules"), &format!("builtin-{k}"), piece.join("[[rule]]").as_bytes());
    }
    write(
        &out.join("rules"),
        "user",
        b"[[category]]\nname = \"Mine\"\nfamily = \"Other\"\n\n[[rule]]\npattern = 'my_kernel'\ncategory = \"Mine\"\n",
    );
    println!("seeds written under {}", out.display());
}
