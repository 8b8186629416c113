//! The standalone HTML report: no external request possible (no URL, no external `src`/`href`, a
//! CSP forbidding everything but inline styles), trace-derived text escaped (a kernel named
//! `<img src=x onerror=alert(1)>` in a generated trace), charts present, and it renders in
//! headless Chromium without CSP violations (skipped loudly when Chromium is missing).

use traceprism::report::html_report;
use traceprism::{analyze_path, read_trace, Analysis, Options};

const EVIL_KERNEL: &str = "<img src=x onerror=alert(1)>";

/// A tiny Kineto trace: one aten::mm (with shapes) launching the evil-named kernel, and an op with
/// a script tag in its name launching a second kernel.
fn tiny_trace() -> String {
    serde_json::json!({
        "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "numSms": 132, "computeMajor": 9, "computeMinor": 0, "warpSize": 32}],
        "traceEvents": [
            {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 100, "dur": 50,
             "args": {"External id": 1, "Input Dims": [[256, 512], [512, 1024]], "Input type": ["c10::BFloat16", "c10::BFloat16"], "Concrete Inputs": ["", ""]}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 110, "dur": 5,
             "args": {"correlation": 7, "External id": 1}},
            {"ph": "X", "cat": "kernel", "name": EVIL_KERNEL, "pid": 0, "tid": 7, "ts": 120, "dur": 10,
             "args": {"correlation": 7, "device": 0, "stream": 7, "External id": 1}},
            {"ph": "X", "cat": "cpu_op", "name": "</title><script>alert(2)</script>", "pid": 1, "tid": 1, "ts": 200, "dur": 50,
             "args": {"External id": 2}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 210, "dur": 5,
             "args": {"correlation": 8, "External id": 2}},
            {"ph": "X", "cat": "kernel", "name": "vectorized_elementwise_kernel\"'&", "pid": 0, "tid": 7, "ts": 220, "dur": 4,
             "args": {"correlation": 8, "device": 0, "stream": 7, "External id": 2}}
        ]
    })
    .to_string()
}

fn tiny_analysis() -> Analysis {
    let trace = read_trace(tiny_trace().as_bytes()).expect("tiny trace reads");
    Analysis::new(trace, Options::default()).expect("analyses")
}

/// Checks that hold for every report.
fn assert_self_contained(html: &str) {
    let lower = html.to_ascii_lowercase();
    assert!(lower.starts_with("<!doctype html>"));
    assert!(lower.contains("http-equiv=\"content-security-policy\""), "CSP meta tag");
    assert!(lower.contains("default-src 'none'"), "CSP forbids by default");
    for bad in [
        "http://", "https://", "//cdn", "<script", "<link", "<iframe", "<object", "<embed", "@import", "url(", "src=\"",
        "href=\"",
    ] {
        assert!(!lower.contains(bad), "report contains {bad:?}");
    }
}

#[test]
fn evil_names_are_escaped() {
    let a = tiny_analysis();
    assert!(a.trace.gpu.len() == 2, "both kernels read");
    let html = html_report(&a);
    assert_self_contained(&html);
    assert!(!html.contains(EVIL_KERNEL), "raw kernel name leaked into the report");
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"), "escaped kernel name shown");
    assert!(!html.contains("<script>alert(2)"), "raw op name leaked");
    assert!(html.contains("&lt;/title&gt;&lt;script&gt;alert(2)&lt;/script&gt;"), "escaped op name shown");
    // The mm has shapes: 2·256·1024·512 = 268,435,456 FLOP = 0.268 GFLOP in the roofline table.
    assert!(html.contains("<td class=\"n\">0.268</td>"), "roofline row of the tiny mm");
    assert!(html.matches("<svg").count() >= 6, "six charts");
}

#[test]
fn fixture_report_is_self_contained_and_renders() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/llama_dense_eager.pt.trace.json.gz");
    let a = analyze_path(&path, Options::default()).unwrap();
    let html = html_report(&a);
    assert_self_contained(&html);
    for section in [
        "Phase overview",
        "Top bottlenecks",
        "Operation frequency",
        "Kernel category breakdown",
        "Roofline",
        "roofline_gemm",
        "ops_summary",
    ] {
        assert!(html.contains(section), "section {section}");
    }
    assert!(html.contains("NVIDIA H100 SXM5 80GB"), "device roof named");
    // What to fix first, as `traceprism findings` says it, before the health report.
    let first = &traceprism::analysis::findings::findings(&a)[0];
    let findings_at = html.find("Findings (what to fix first").expect("a findings section");
    assert!(findings_at < html.find("Health (what the profiler").unwrap());
    assert!(
        html.contains(&format!("{} ({}): saves {:.1} µs a step", first.kind, first.scope, first.saving_us)),
        "the first finding"
    );
    assert!(html.matches("<circle").count() > 10, "roofline points");

    let dir = std::env::temp_dir().join(format!("traceprism-html-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("report.html");
    std::fs::write(&file, &html).unwrap();
    let browser = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| std::process::Command::new(b).arg("--version").output().map(|o| o.status.success()).unwrap_or(false));
    let Some(browser) = browser else {
        eprintln!("\n!!!!!!!! SKIPPED Chromium render check: no chromium on PATH !!!!!!!!\n");
        return;
    };
    let out = std::process::Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
            "--proxy-server=127.0.0.1:9",
            "--dump-dom",
        ])
        .arg(format!("file://{}", file.display()))
        .output()
        .expect("chromium runs");
    let dom = String::from_utf8_lossy(&out.stdout);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(dom.contains("<svg"), "Chromium rendered the charts (stderr: {log})");
    assert!(!log.contains("Content Security Policy") && !log.contains("Refused to"), "CSP violation: {log}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_mixed_step_is_drawn_as_its_prefill_and_decode_work() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/vllm_gptoss_mixed_piecewise_mi300x.json.gz");
    let a = analyze_path(&path, Options::default()).unwrap();
    let html = html_report(&a);
    assert_self_contained(&html);
    let m = traceprism::report::summary::summary(&a).mixed.expect("a mixed step");
    // One bar each, labelled with the tokens the step's annotation states.
    assert!(html.contains(&format!("mixed steps: prefill ({} tokens)", m.prefill_tokens)), "prefill bar");
    assert!(html.contains(&format!("mixed steps: decode ({} tokens)", m.decode_tokens)), "decode bar");
    assert!(html.contains("Mixed steps"), "the overview line");
}
