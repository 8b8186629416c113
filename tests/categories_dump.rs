//! Development aid: `cargo test --release --test categories_dump -- --ignored --nocapture` prints,
//! per fixture, the category shares and every distinct kernel name with its category and rule.

mod categories_common;
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
            let e = seen.entry((a.categories.name(i).to_string(), name, a.categories.rule(i).chars().take(70).collect())).or_default();
            e.0 += 1;
            e.1 += t.gpu.dur[i];
        }
        for ((c, n, r), (k, d)) in seen {
            println!("    {c:24} {k:6} {:10.1}us  {n}  [{r}]", d as f64 / 1000.0);
        }
    }
}
