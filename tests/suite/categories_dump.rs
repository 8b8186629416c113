//! Development aid: `cargo test --release --test categories_dump -- --ignored --nocapture` prints,
//! per fixture, the category shares and every distinct kernel name with its category and rule.

use crate::categories_common;
use categories_common::*;
use std::collections::BTreeMap;

#[test]
#[ignore]
fn dump_categories() {
    let only = std::env::var("DUMP").unwrap_or_default();
    for f in fixture_names() {
        if !only.is_empty() && !f.contains(&only) {
            continue;
        }
        let a = analysis(&f);
        println!("===== {f}");
        for (c, s, _) in kernel_shares(&a) {
            println!("  {:6.2}% {c}", s * 100.0);
        }
        let t = &a.trace;
        let mut seen: BTreeMap<(String, String, String), (u64, i64)> = BTreeMap::new();
        for i in 0..t.gpu.len() {
            let name: String = t.name(t.gpu.name[i]).chars().take(110).collect();
            let e = seen
                .entry((a.categories.name(i).to_string(), name, a.categories.rule(i).chars().take(70).collect()))
                .or_default();
            e.0 += 1;
            e.1 += t.gpu.dur[i];
        }
        for ((c, n, r), (k, d)) in seen {
            println!("    {c:24} {k:6} {:10.1}us  {n}  [{r}]", d as f64 / 1000.0);
        }
    }
}

/// `cargo test --release --test categories_dump time_categorize -- --ignored --nocapture`:
/// time to read+link a trace versus time to categorise it (fresh rules each run).
#[test]
#[ignore]
fn time_categorize() {
    use std::time::Instant;
    let file = std::env::var("DUMP").unwrap_or_else(|_| "llama_dense_eager".into());
    let name = fixture_names().into_iter().find(|f| f.contains(&file)).unwrap();
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(&name);
    let bytes = std::fs::read(&path).unwrap();
    let mut read_best = f64::MAX;
    let mut trace = None;
    for _ in 0..3 {
        let t0 = Instant::now();
        let t = traceprism::read_trace(std::io::Cursor::new(&bytes)).unwrap();
        read_best = read_best.min(t0.elapsed().as_secs_f64());
        trace = Some(t);
    }
    let trace = trace.unwrap();
    let options = traceprism::Options::default();
    let t0 = Instant::now();
    let _ = traceprism::analysis::categories::categorize(&trace, &options).unwrap();
    println!("first categorize (compiles the built-in rules once per process): {:.2} ms", t0.elapsed().as_secs_f64() * 1e3);
    let mut cat_best = f64::MAX;
    for _ in 0..5 {
        let t0 = Instant::now();
        let c = traceprism::analysis::categories::categorize(&trace, &options).unwrap();
        cat_best = cat_best.min(t0.elapsed().as_secs_f64());
        assert_eq!(c.of_row.len(), trace.gpu.len());
    }
    let t0 = Instant::now();
    let set = traceprism::rules::categories::RuleSet::load(None).unwrap();
    println!("load rules {:.2} ms", t0.elapsed().as_secs_f64() * 1e3);
    let t0 = Instant::now();
    let cl = traceprism::analysis::categories::Classifier::new(&set).unwrap();
    let compile = t0.elapsed().as_secs_f64();
    let t0 = Instant::now();
    let _ = cl.classify(&trace);
    let classify = t0.elapsed().as_secs_f64();
    println!(
        "{name}: {} GPU rows; read+link {:.1} ms; categorize {:.2} ms ({:.1}% of read) = compile rules {:.2} ms + classify {:.2} ms",
        trace.gpu.len(),
        read_best * 1e3,
        cat_best * 1e3,
        100.0 * cat_best / read_best,
        compile * 1e3,
        classify * 1e3
    );
}
