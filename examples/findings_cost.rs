//! Times `findings` against a whole summary (read, analyse, summarise) of one trace (the 1 GB bench input by default):
//! `cargo run --profile ci --example findings_cost -- [TRACE]`.
use std::time::Instant;
fn main() {
    let path = std::env::args().nth(1).unwrap_or_else(|| "target/bench-data/llama_1000mb.json".into());
    // A summary's time: reading, analysing and summarising (what `traceprism summary` does).
    let t = Instant::now();
    let a = traceprism::analyze_path(std::path::Path::new(&path), Default::default()).expect("trace reads");
    let s = traceprism::report::summary::summary(&a);
    let summary_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let f = traceprism::analysis::findings::findings(&a);
    let findings_s = t.elapsed().as_secs_f64();
    println!(
        "{path}: summary {:.1} ms ({} passes), findings {:.1} ms ({} findings): {:.1}% of the summary",
        summary_s * 1e3,
        s.passes,
        findings_s * 1e3,
        f.len(),
        100.0 * findings_s / summary_s
    );
}
