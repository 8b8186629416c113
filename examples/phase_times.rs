//! Times each stage of the pipeline on one file: read+link, analyses, every table.
//! `--single-thread` parses on one thread (as the page and the gzip path do); `--parse-only`
//! stops after read+link (for profiling the reader); `--cli-reader` reads the file as the CLI does
//! (`ingest::read_path`: memory map and two halves, or threaded inflate) and times it as a whole;
//! `--chunk-kib N` sets the size of the pieces pushed to the reader (default 8192);
//! `--gzip-sharing never|always|behind` reads a .gz file with the CLI's two-thread gzip reader and
//! that sharing of the parse (see `ingest::Sharing`).
use std::time::Instant;
fn main() {
    let p = std::env::args().nth(1).expect("path");
    let flag = |f: &str| std::env::args().any(|a| a == f);
    let sharing = std::env::args().skip_while(|a| a != "--gzip-sharing").nth(1);
    let trace = if let Some(sharing) = sharing {
        use traceprism::read::Sharing;
        let sharing = match sharing.as_str() {
            "never" => Sharing::Never,
            "always" => Sharing::Always,
            _ => Sharing::WhenBehind,
        };
        let t0 = Instant::now();
        let trace = traceprism::read::read_gzip(std::fs::File::open(&p).unwrap(), sharing).unwrap();
        println!(
            "read_gzip {sharing:?} (read+inflate+parse+link) {:?}, {} blocks shared",
            t0.elapsed(),
            trace.stats.parallel_blocks
        );
        trace
    } else if flag("--cli-reader") {
        let t0 = Instant::now();
        let trace = traceprism::pipeline::read_path(std::path::Path::new(&p)).unwrap();
        println!("read_path (read+parse+link) {:?}", t0.elapsed());
        trace
    } else {
        let bytes = std::fs::read(&p).unwrap();
        let t0 = Instant::now();
        let mut r = traceprism::Reader::new();
        let chunk_kib: usize = std::env::args().skip_while(|a| a != "--chunk-kib").nth(1).map_or(8192, |v| v.parse().unwrap());
        for c in bytes.chunks(chunk_kib << 10) {
            if flag("--single-thread") {
                r.push_json(c, c.len() as u64).unwrap();
            } else {
                r.push(c).unwrap();
            }
        }
        let t1 = Instant::now();
        let trace = traceprism::pipeline::finish(r).unwrap();
        println!("parse {:?} finish+link {:?}", t1 - t0, t1.elapsed());
        trace
    };
    if flag("--parse-only") {
        return;
    }
    let opts = traceprism::Options::default();
    let c0 = Instant::now();
    let cats = traceprism::analysis::categories::categorize(&trace, &opts).unwrap();
    let c1 = Instant::now();
    let ph = traceprism::analysis::phases::detect(&trace, &cats, &opts);
    let c2 = Instant::now();
    let _layers = traceprism::analysis::layers::detect(&trace, &cats, &ph, &opts);
    println!("categories {:?} phases {:?} layers {:?} (first run in this process)", c1 - c0, c2 - c1, c2.elapsed());
    let t3 = Instant::now();
    let a = traceprism::Analysis::new(trace, Default::default()).unwrap();
    println!("all analyses again (Analysis::new) {:?}", t3.elapsed());
    for n in traceprism::report::table_names() {
        let s = Instant::now();
        let t = traceprism::report::table(&a, n).unwrap();
        eprintln!("  {n}: {} rows {:?}", t.rows.len(), s.elapsed());
    }
    let s = Instant::now();
    let _ = traceprism::report::summary::summary(&a);
    println!("  summary {:?}", s.elapsed());
}
