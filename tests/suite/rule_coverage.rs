//! Rule coverage (issue 52): the health report says how much kernel time no category rule names,
//! which kernel families those are, and whether passes came from names or from the stream's
//! structure alone. Every fixture is named to within 1% of its kernel time; a trace whose names
//! mean nothing says so.

use crate::common;
use crate::name_blind::name_blind;
use common::*;
use traceprism::analysis::coverage::Coverage;
use traceprism::analysis::health::{health, Status};
use traceprism::{analyze_path, Options};

/// Every fixture of every format: Kineto JSON, XSpace, Nsight Systems exports.
fn every_fixture() -> Vec<String> {
    let mut out: Vec<String> = TRACES.iter().map(|s| s.to_string()).collect();
    for dir in ["", "nsys"] {
        for e in std::fs::read_dir(fixture(dir)).unwrap() {
            let name = e.unwrap().file_name().into_string().unwrap();
            let path = if dir.is_empty() { name.clone() } else { format!("{dir}/{name}") };
            let wanted = name.ends_with(".xplane.pb") || name.ends_with(".sqlite") || name.ends_with(".trace.json.gz");
            if wanted && !name.contains("truth") && !out.contains(&path) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_fixture_is_named_to_within_one_percent_of_its_kernel_time() {
    let mut over = Vec::new();
    for name in every_fixture() {
        let a = analyze_path(&fixture(&name), Options::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let c = Coverage::of(&a);
        eprintln!("{name:<58} {:>6.2}% unnamed of {:>7} kernels; {}", 100.0 * c.unnamed_share(), c.kernels, c.sentence());
        // The figure is the raw kernel time of the kernels categorised Other.
        let other: i64 = (0..a.trace.gpu.len())
            .filter(|&i| a.trace.gpu.kind[i] == traceprism::model::GpuKind::Kernel && a.categories.family(i) == "Other")
            .map(|i| a.trace.gpu.dur[i])
            .sum();
        assert_eq!(other, c.unnamed_time_ns, "{name}");
        if c.unnamed_share() > 0.01 {
            over.push(format!("{name}: {}", c.sentence()));
        }
        let check = health(&a)
            .into_iter()
            .find(|k| k.check == traceprism::analysis::health::CheckId::RuleCoverage)
            .expect("a rule_coverage check");
        assert_eq!(check.count, c.unnamed, "{name}");
    }
    assert!(over.is_empty(), "{}", over.join("\n"));
}

#[test]
fn a_trace_of_names_no_rule_knows_says_its_passes_stand_on_structure_alone() {
    let (bytes, _) = name_blind("llama_small_stack.pt.trace.json.gz");
    let a = analyse_bytes(&bytes);
    let c = Coverage::of(&a);
    assert_eq!(c.unnamed, c.kernels, "no kernel name is known");
    assert_eq!(c.structure_only_passes(), 13, "{}", c.sentence());
    let check = health(&a).into_iter().find(|k| k.check == traceprism::analysis::health::CheckId::RuleCoverage).unwrap();
    assert_eq!(check.status, Status::Warning);
    assert!(
        check.found.contains("100.00% of kernel time") && check.found.contains("the stream's structure alone"),
        "{}",
        check.found
    );
    assert!(check.fix.contains("--rules"), "{}", check.fix);
    // The same trace as recorded: names confirm every pass and name every kernel.
    let named = Coverage::of(&analysis("llama_small_stack.pt.trace.json.gz"));
    assert_eq!((named.unnamed, named.structure_only_passes()), (0, 0), "{}", named.sentence());
    assert_eq!(named.layers_with_named_mixer, named.layers);
}
