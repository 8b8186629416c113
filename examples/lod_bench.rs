//! Times the timeline's bucket queries on a trace at zooms from the whole trace to 1/4096 of it:
//! `cargo run --release --example lod_bench -- TRACE`.
fn main() {
    let path = std::env::args().nth(1).expect("usage: lod_bench TRACE");
    let a = traceprism::analyze_path(std::path::Path::new(&path), traceprism::Options::default()).expect("trace");
    let t = std::time::Instant::now();
    let index = traceprism::analysis::lod::TimelineIndex::new(&a);
    println!(
        "index built in {:.0} ms; pyramids {:.1} MB; lanes {}",
        t.elapsed().as_secs_f64() * 1e3,
        index.meta.pyramid_bytes as f64 / 1e6,
        index.meta.lanes.len()
    );
    let (start, end) = (index.meta.start, index.meta.end);
    for zoom in [1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0] {
        let span = (end - start) / zoom;
        let mut times = Vec::new();
        for k in 0..20 {
            let from = start + (end - start - span) * (k as f64 / 19.0);
            let t = std::time::Instant::now();
            let b = index.buckets(from, from + span, 1600);
            std::hint::black_box(b);
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
        times.sort_by(f64::total_cmp);
        println!("zoom 1/{zoom}: p50 {:.2} ms, max {:.2} ms", times[10], times[19]);
    }
}
