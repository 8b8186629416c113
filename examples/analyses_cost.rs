//! Times the analyses on one file, N rounds: `Analysis::new` as a whole (what the CLI and the page
//! run), then categories, phases and layers one after another, each on one thread.
//!
//!   cargo run --release --example analyses_cost -- TRACE [N]
fn main() {
    let p = std::env::args().nth(1).expect("path");
    let n: usize = std::env::args().nth(2).map_or(5, |v| v.parse().unwrap());
    let trace = traceprism::pipeline::read_path(std::path::Path::new(&p)).unwrap();
    let opts = traceprism::Options::default();
    for _ in 0..n {
        let copy = trace.clone();
        let t = std::time::Instant::now();
        let a = traceprism::Analysis::new(copy, opts.clone()).unwrap();
        let whole = t.elapsed();
        drop(a);
        let t0 = std::time::Instant::now();
        let cats = traceprism::analysis::categories::categorize(&trace, &opts).unwrap();
        let t1 = std::time::Instant::now();
        let ph = traceprism::analysis::phases::detect(&trace, &cats, &opts);
        let t2 = std::time::Instant::now();
        let _layers = traceprism::analysis::layers::detect(&trace, &cats, &ph, &opts);
        println!(
            "Analysis::new {whole:?} | one after another: categories {:?} phases {:?} layers {:?}",
            t1 - t0,
            t2 - t1,
            t2.elapsed()
        );
    }
}
