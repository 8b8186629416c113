//! The CLI contract: subcommand names, exit codes, one-line errors, kernels.csv columns.

use crate::common;
use common::*;
use std::process::Command;

fn traceprism(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_traceprism")).args(args).output().expect("runs")
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("traceprism-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn summary_prints_device_counts_and_timeline() {
    let f = fixture("sglang_qwen3-8b_decode_graph_mi300x.json.gz");
    let out = traceprism(&["summary", f.to_str().unwrap()]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("555 kernels"), "{text}");
    assert!(text.contains("544 via graph launches"), "{text}");
    assert!(text.contains("timeline device"), "{text}");
}

#[test]
fn summary_json_is_one_object_with_the_same_facts() {
    let f = fixture("llama_dense_eager.pt.trace.json.gz");
    let out = traceprism(&["summary", f.to_str().unwrap(), "--json"]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["counts"]["kernels"], 22903);
    assert_eq!(v["device"], "NVIDIA H100 80GB HBM3");
    // 81338.744 µs of kernel time (independent count, see tests/core_counts.rs).
    assert!((v["kernel_time_ms"].as_f64().unwrap() - 81.338744).abs() < 1e-9);
}

#[test]
fn a_dash_reads_the_trace_from_standard_input() {
    use std::io::Write;
    let f = fixture("sglang_qwen3-8b_decode_graph_mi300x.json.gz");
    let from_file = traceprism(&["summary", f.to_str().unwrap(), "--json"]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_traceprism"))
        .args(["summary", "-", "--json"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("runs");
    let bytes = std::fs::read(&f).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&bytes));
    let from_stdin = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(from_stdin.status.success(), "{}", String::from_utf8_lossy(&from_stdin.stderr));
    let (a, b): (serde_json::Value, serde_json::Value) =
        (serde_json::from_slice(&from_file.stdout).unwrap(), serde_json::from_slice(&from_stdin.stdout).unwrap());
    // Same analysis; 555 kernels is the independent count used above.
    assert_eq!(b["counts"]["kernels"], 555);
    assert_eq!(a["counts"], b["counts"]);
    assert_eq!(a["timeline"], b["timeline"]);
    assert_eq!(a["kernel_time_ms"], b["kernel_time_ms"]);
}

#[test]
fn threads_change_how_a_plain_trace_is_read_not_what_is_read() {
    // A plain 58 MB trace: mapped, and cut into ranges of at least 4 MB (14 are possible).
    let dir = tmp("threads");
    let plain = dir.join("llama.json");
    std::fs::write(&plain, plain_fixture("llama_dense_eager.pt.trace.json.gz")).unwrap();
    let run = |threads: &str| {
        let out = traceprism(&["summary", plain.to_str().unwrap(), "--json", "--threads", threads]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let (mut one, mut three) = (run("1"), run("3"));
    // Read in order, then as three ranges (two parts adopted)...
    assert_eq!(one["input"]["parallel_blocks"], 0);
    assert_eq!(three["input"]["parallel_blocks"], 2);
    // ...and otherwise the same summary; 22903 kernels is the independent count of
    // tests/core_counts.rs.
    one["input"]["parallel_blocks"] = 0.into();
    three["input"]["parallel_blocks"] = 0.into();
    assert_eq!(one["counts"]["kernels"], 22903);
    assert_eq!(one, three);
    let bad = traceprism(&["summary", plain.to_str().unwrap(), "--threads", "0"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--threads"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn export_writes_every_table_with_rfc4180_quoting() {
    let f = fixture("vllm_moe_tp8_eager_b200.json.gz");
    let dir = tmp("export");
    let out = traceprism(&["export", f.to_str().unwrap(), "--out", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for name in traceprism::report::table_names() {
        assert!(dir.join(format!("{name}.csv")).exists(), "{name}.csv missing");
    }
    let csv = std::fs::read_to_string(dir.join("kernels.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    assert!(header.starts_with(
        "index,ts_us,dur_us,name,category,device,stream,correlation,launcher,cpu_op,phase,phase_confidence,pass,layer,layer_type"
    ));
    // 768 kernels (independent count) + header; names with commas are quoted.
    let rows = csv.split("\r\n").filter(|l| !l.is_empty()).count();
    assert_eq!(rows, 769);
    assert!(csv.contains("\"void vllm::"), "templated names with commas are quoted");
}

#[test]
fn bad_input_exits_non_zero_with_one_line() {
    let dir = tmp("bad");
    let p = dir.join("bad.json");
    std::fs::write(&p, b"{\"traceEvents\": [{\"ph\": \"X\",").unwrap();
    let out = traceprism(&["summary", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("traceprism: error: truncated trace") && err.contains("before the first complete event"), "{err}");
    let out = traceprism(&["summary", "/nonexistent/trace.json"]);
    assert_eq!(out.status.code(), Some(1));
    let out = traceprism(&["summary", p.to_str().unwrap(), "--no-such-flag", "x"]);
    assert_eq!(out.status.code(), Some(1));
    let out = traceprism(&[]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_cut_trace_is_summarised_with_a_warning_in_every_output_and_refused_with_strict() {
    // The real decode trace with its last 3,000 compressed bytes missing (an upload cut short).
    let gz = std::fs::read(fixture("sglang_qwen3-8b_decode_graph_mi300x.json.gz")).unwrap();
    let dir = tmp("cut");
    let p = dir.join("cut.json.gz");
    std::fs::write(&p, &gz[..gz.len() - 3000]).unwrap();
    let path = p.to_str().unwrap();
    let out = traceprism(&["summary", path]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.lines().nth(1).is_some_and(|l| l.starts_with("WARNING  truncated trace: the gzip stream ends early")), "{text}");
    assert!(String::from_utf8(out.stderr).unwrap().contains("warning"));
    let out = traceprism(&["summary", path, "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cut = &v["input"]["truncation"];
    assert_eq!(cut["input_bytes"], (gz.len() - 3000) as u64);
    assert!(cut["events_read"].as_u64().unwrap() > 0 && cut["message"].as_str().unwrap().contains("truncated trace"));
    // The HTML report and the exported tables say it too.
    let html = dir.join("r.html");
    assert_eq!(traceprism(&["report", path, "--html", html.to_str().unwrap()]).status.code(), Some(0));
    assert!(std::fs::read_to_string(&html)
        .unwrap()
        .contains("class=\"warning\" role=\"alert\"><strong>Warning:</strong> truncated trace"));
    let out_dir = dir.join("csv");
    assert_eq!(traceprism(&["export", path, "--out", out_dir.to_str().unwrap()]).status.code(), Some(0));
    let input = std::fs::read_to_string(out_dir.join("trace_input.csv")).unwrap();
    assert!(input.contains("status,truncated") && input.contains("warning,"), "{input}");
    let out = traceprism(&["summary", path, "--strict"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.lines()
            .any(|l| l.starts_with("traceprism: error: truncated trace") && l.contains("strict mode") && l.contains("byte ")),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn help_after_a_subcommand_prints_the_usage() {
    for args in [&["summary", "--help"][..], &["compare", "a.json", "-h"], &["help"]] {
        let out = traceprism(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("USAGE:") && text.contains("traceprism summary TRACE"), "{args:?}: {text}");
    }
}

#[test]
fn verbose_summary_scores_the_truth_file_found_beside_the_trace() {
    let f = fixture("llama_dense_eager.pt.trace.json.gz");
    let out = traceprism(&["summary", f.to_str().unwrap(), "--verbose"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("accuracy against"), "{text}");
    assert!(text.contains("100.000% of kernel time right"), "{text}");
    assert!(text.contains("33 found, 33 in truth"), "{text}");
    assert!(text.contains("100.00% of in-layer kernels right"), "{text}");
}

#[test]
fn streamed_csv_equals_the_built_table_for_every_table() {
    // `export` streams `kernels` row by row and writes the rest from built tables; the page's
    // `csv()` does the same. Both must give exactly the bytes of `table(..).to_csv()`.
    let a = analysis("llama_dense_eager.pt.trace.json.gz");
    for name in traceprism::report::table_names() {
        let mut streamed = Vec::new();
        let rows = traceprism::report::write_csv(&a, name, &mut streamed).unwrap().expect("listed table");
        let built = traceprism::report::table(&a, name).unwrap();
        assert_eq!(rows, built.rows.len(), "{name}");
        assert_eq!(String::from_utf8(streamed).unwrap(), built.to_csv(), "{name}");
    }
    // 22903 kernels (independent count, tests/core_counts.rs).
    let mut kernels = Vec::new();
    assert_eq!(traceprism::report::write_csv(&a, "kernels", &mut kernels).unwrap(), Some(22903));
    assert_eq!(traceprism::report::write_csv(&a, "no_such_table", &mut Vec::new()).unwrap(), None);
}

/// Issue 63's cases: each command refuses, by name, a flag it does not read (they used to exit 0
/// and do nothing with it), before it reads the trace; `flame --folded` does what its doc says.
#[test]
fn a_flag_a_command_does_not_read_is_refused_by_name() {
    let f = fixture("llama_small_stack.pt.trace.json.gz");
    let t = f.to_str().unwrap();
    for (args, flag) in [
        (vec!["layers", t, "--html", "x.html"], "--html"),
        (vec!["doctor", t, "--out", "d"], "--out"),
        (vec!["findings", t, "--xlsx", "f.xlsx"], "--xlsx"),
        (vec!["tables", "--threads", "3"], "--threads"),
    ] {
        let out = traceprism(&args);
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(&format!("{flag} is not an option of `{}`", args[0])), "{err}");
    }
    let folded = traceprism(&["flame", t, "--folded"]);
    assert!(folded.status.success(), "{}", String::from_utf8_lossy(&folded.stderr));
    let plain = traceprism(&["flame", t]);
    assert_eq!(folded.stdout, plain.stdout, "--folded is the default output, said out loud");
    assert!(!traceprism(&["flame", t, "--folded", "--svg", "x.svg"]).status.success());
}
