//! Times the analyses a summary does not run (the step budget and the findings that read it; the
//! call-path tree and its source lines)
//! against a whole summary (read, analyse, summarise) of one trace, the 1 GB bench input by
//! default: `cargo run --profile ci --example analysis_cost -- [TRACE]`.
use std::time::Instant;

/// Runs `f`, returning what it gave and how long it took (ms).
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t = Instant::now();
    let out = f();
    (out, t.elapsed().as_secs_f64() * 1e3)
}

fn main() {
    let path = std::env::args().nth(1).unwrap_or_else(|| "target/bench-data/llama_1000mb.json".into());
    // A summary's time: reading, analysing and summarising (what `traceprism summary` does).
    let ((a, s), summary_ms) = timed(|| {
        let a = traceprism::analyze_path(std::path::Path::new(&path), Default::default()).expect("trace reads");
        let s = traceprism::report::summary::summary(&a);
        (a, s)
    });
    println!("{path}: summary {summary_ms:.1} ms ({} passes)", s.passes);
    // What `traceprism findings` pays after the summary: the budget (made beside the roofline)
    // and the findings that read it.
    let (found, ms) = timed(|| traceprism::analysis::findings::findings(&a));
    println!(
        "  budget and findings together {ms:.1} ms ({} findings): {:.1}% of the summary",
        found.len(),
        100.0 * ms / summary_ms
    );
    // The budget alone, made again (uncached).
    let (steps, budget_ms) = timed(|| traceprism::analysis::budget::step_budget(&a).steps.len());
    println!(
        "  of which the step budget alone {budget_ms:.1} ms ({steps} steps): {:.1}% of the summary",
        100.0 * budget_ms / summary_ms
    );
    let ((nodes, lines), ms) = timed(|| {
        let cp = traceprism::analysis::code::call_paths::call_paths(&a);
        (cp.nodes.len(), traceprism::analysis::code::sources::sources(&cp).len())
    });
    println!(
        "  call paths and sources {ms:.1} ms ({nodes} nodes, {lines} lines): {:.1}% of the summary",
        100.0 * ms / summary_ms
    );
}
