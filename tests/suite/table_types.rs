//! Typed tables: every cell of every table, on every fixture (and on a run of ranks and a
//! comparison), fits the type its column declares (`src/table/mod.rs`), so CSV, the workbook, the
//! page and typed exports can trust the declaration.

use crate::common;
use common::*;
use traceprism::table::{ColumnType, Table};

fn check(what: &str, t: &Table, problems: &mut Vec<String>) {
    assert_eq!(t.columns.len(), t.types.len(), "{what}: {}", t.name);
    for (r, c) in t.mistyped().into_iter().take(3) {
        problems.push(format!("{what}: {}.{} is {:?}, row {r}: {:?}", t.name, t.columns[c], t.types[c], t.rows[r][c]));
    }
}

fn fixtures() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(fixture(""))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| (n.ends_with(".json.gz") || n.ends_with(".pb")) && !n.contains("truth"))
        .collect();
    v.sort();
    v
}

#[test]
fn every_cell_fits_its_column() {
    let mut problems = Vec::new();
    let mut tables = 0;
    for name in fixtures() {
        let a = analysis(&name);
        for def in traceprism::report::TABLES {
            let t = (def.build)(&a);
            tables += 1;
            check(&name, &t, &mut problems);
        }
    }
    use traceprism::analysis::ranks::{analyse_run, RankTrace, RunOptions};
    let traces = ["hta_sampled_rank0_train_w128.json.gz", "hta_sampled_rank1_train_w128.json.gz"]
        .map(|f| RankTrace { file: f.to_string(), analysis: analysis(f) })
        .into_iter()
        .collect();
    let run = analyse_run(traces, RunOptions::default()).expect("the run analyses");
    for t in traceprism::report::ranks::run_tables(&run) {
        tables += 1;
        check("ranks", &t, &mut problems);
    }
    let (a, b) = (analysis("llama_dense_eager.pt.trace.json.gz"), analysis("moe_eager.pt.trace.json.gz"));
    for t in traceprism::report::compare::compare_tables(&a, &b, &Default::default()).expect("compares") {
        tables += 1;
        check("compare", &t, &mut problems);
    }
    eprintln!("{tables} tables checked");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn booleans_are_typed_and_written_as_true_or_false() {
    let a = analysis("llama_dense_eager.pt.trace.json.gz");
    let t = traceprism::report::table(&a, "passes").unwrap();
    let c = t.column("complete").unwrap();
    assert_eq!(t.types[c], ColumnType::Boolean);
    let csv = t.to_csv();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let k = header.iter().position(|h| *h == "complete").unwrap();
    assert!(csv.lines().skip(1).all(|l| l.split(',').nth(k) == Some("true")), "every pass of a whole trace is complete");
}
