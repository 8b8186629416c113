//! Times the call-path tree and the source lines against a whole summary (read, analyse,
//! summarise) of one trace (the 1 GB bench input by default):
//! `cargo run --profile ci --example call_paths_cost -- [TRACE]`.
use std::time::Instant;
fn main() {
    let path = std::env::args().nth(1).unwrap_or_else(|| "target/bench-data/llama_1000mb.json".into());
    let t = Instant::now();
    let a = traceprism::analyze_path(std::path::Path::new(&path), Default::default()).expect("trace reads");
    let _ = traceprism::report::summary::summary(&a);
    let summary_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let cp = traceprism::analysis::call_paths::call_paths(&a);
    let lines = traceprism::analysis::sources::sources(&cp);
    let cost_s = t.elapsed().as_secs_f64();
    println!(
        "{path}: summary {:.1} ms, call paths and sources {:.1} ms ({} nodes, {} lines): {:.1}% of the summary",
        summary_s * 1e3,
        cost_s * 1e3,
        cp.nodes.len(),
        lines.len(),
        100.0 * cost_s / summary_s
    );
}
