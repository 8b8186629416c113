//! Times each stage of the pipeline on one file: read+link, analyses, every table.
use std::time::Instant;
fn main() {
    let p = std::env::args().nth(1).expect("path");
    let bytes = std::fs::read(&p).unwrap();
    let t0 = Instant::now();
    let mut r = traceprism::Reader::new();
    for c in bytes.chunks(8 << 20) {
        r.push(c).unwrap();
    }
    let t1 = Instant::now();
    let trace = r.finish().unwrap();
    let t2 = Instant::now();
    let a = traceprism::Analysis::new(trace, Default::default()).unwrap();
    let t3 = Instant::now();
    println!("parse {:?} finish+link {:?} analyses {:?}", t1 - t0, t2 - t1, t3 - t2);
    for n in traceprism::report::table_names() {
        let s = Instant::now();
        let t = traceprism::report::table(&a, n).unwrap();
        eprintln!("  {n}: {} rows {:?}", t.rows.len(), s.elapsed());
    }
    let s = Instant::now();
    let _ = traceprism::summary::summary(&a);
    println!("  summary {:?}", s.elapsed());
}
