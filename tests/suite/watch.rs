//! `traceprism watch` (issue 36, CLI): a background writer puts trace files into a folder one after
//! another — one written atomically (a `.part` renamed), one written in two halves with a pause
//! longer than two intervals, a broken one, a temporary one — and deletes an old one. The trend
//! must grow by exactly one window per complete file, the half-written file read once (as one
//! window), the broken file named and skipped, the deletion noted, and Ctrl-C (SIGINT) must stop
//! the watch with exit status 0. `--once` reads what is there and exits.

use crate::common;

use common::*;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_traceprism");

fn rows(trend: &Path) -> Vec<String> {
    std::fs::read_to_string(trend).map(|t| t.lines().skip(1).map(String::from).collect()).unwrap_or_default()
}

fn wait_for(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let until = Instant::now() + timeout;
    while !done() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[cfg(unix)]
#[test]
fn a_watched_folder_grows_by_one_window_per_complete_file_and_stops_on_ctrl_c() {
    let dir = std::env::temp_dir().join(format!("traceprism-watch-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let trend = dir.join("trend.csv");
    let mut child = Command::new(BIN)
        .args(["watch", dir.to_str().unwrap(), "--interval", "0.2", "--trend", trend.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the watch starts");

    // 1. A file written atomically: a .part, then renamed.
    let small = std::fs::read(fixture("llama_small_stack.pt.trace.json.gz")).unwrap();
    std::fs::write(dir.join("w0.json.gz.part"), &small).unwrap();
    std::fs::rename(dir.join("w0.json.gz.part"), dir.join("w0.json.gz")).unwrap();
    wait_for("window 0", Duration::from_secs(60), || rows(&trend).len() == 1);

    // 2. A file written in two halves, with a pause of five intervals between them.
    let moe = std::fs::read(fixture("moe_eager.pt.trace.json.gz")).unwrap();
    let half = moe.len() / 2;
    let mut f = std::fs::File::create(dir.join("w1.json.gz")).unwrap();
    f.write_all(&moe[..half]).unwrap();
    f.flush().unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    assert_eq!(rows(&trend).len(), 1, "a half-written file is not a window");
    f.write_all(&moe[half..]).unwrap();
    drop(f);
    wait_for("window 1", Duration::from_secs(60), || rows(&trend).len() == 2);

    // 3. A broken file and a temporary one; the first file deleted.
    std::fs::write(dir.join("w2.json"), b"{\"traceEvents\": [{\"ph\": \"X\", \"name\": 5}, nonsense").unwrap();
    std::fs::write(dir.join("w3.json.crswap"), &small).unwrap();
    std::fs::remove_file(dir.join("w0.json.gz")).unwrap();
    std::thread::sleep(Duration::from_millis(1500));

    // Ctrl-C.
    let status = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let out = wait_with_timeout(&mut child, Duration::from_secs(30));
    let (stdout, stderr) = out;
    let rows = rows(&trend);
    eprintln!("stdout:\n{stdout}\nstderr:\n{stderr}\ntrend:\n{}", rows.join("\n"));
    assert_eq!(rows.len(), 2, "one window per complete file");
    assert!(rows[0].contains("w0.json.gz") && rows[1].contains("w1.json.gz"));
    assert!(rows[1].contains("decode 24; prefill 1"), "the half-written file read whole once: {}", rows[1]);
    assert_eq!(stdout.lines().filter(|l| l.contains(" window ")).count(), 2);
    assert!(stderr.contains("w2.json cannot be read, skipped"), "{stderr}");
    assert!(stderr.contains("w0.json.gz was deleted"), "{stderr}");
    assert!(!stderr.contains("crswap") && !stdout.contains("crswap"));
    assert!(stderr.contains("watch stopped: 2 windows"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Waits for the child (exit status must be 0) and returns its stdout and stderr.
fn wait_with_timeout(child: &mut std::process::Child, timeout: Duration) -> (String, String) {
    let until = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert_eq!(status.code(), Some(0), "Ctrl-C stops the watch cleanly");
            break;
        }
        assert!(Instant::now() < until, "the watch did not stop on Ctrl-C");
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut out = String::new();
    let mut err = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut out).unwrap();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    (out, err)
}

#[test]
fn once_reads_what_is_there_and_exits() {
    let dir = std::env::temp_dir().join(format!("traceprism-watch-once-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (r, name) in
        ["vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz", "llama_small_stack.pt.trace.json.gz"].iter().enumerate()
    {
        std::fs::copy(fixture(name), dir.join(format!("win{r}.json.gz"))).unwrap();
    }
    let bytes = std::fs::read(fixture("moe_eager.pt.trace.json.gz")).unwrap();
    std::fs::write(dir.join("win2.json.gz"), &bytes[..bytes.len() / 2]).unwrap();
    let out = Command::new(BIN).args(["watch", dir.to_str().unwrap(), "--once"]).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout.lines().count(), 2, "{stdout}");
    assert!(
        stdout.contains("win0.json.gz: 9 decode, 1 prefill") || stdout.contains("win0.json.gz: 1 prefill, 9 decode"),
        "{stdout}"
    );
    assert!(stderr.contains("win2.json.gz is cut short"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ranks_groups_a_windows_rank_files_and_names_the_straggler() {
    use traceprism::synth::ranks::{make_run, LateKind, RunSpec};
    let dir = std::env::temp_dir().join(format!("traceprism-watch-ranks-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let spec = RunSpec { ranks: 3, straggler: 1, every: 40, delay_us: 300.0, kind: LateKind::Host, ..RunSpec::default() };
    let run = make_run(&plain_fixture("vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz"), &spec).unwrap();
    for (r, t) in run.traces.iter().enumerate() {
        std::fs::write(dir.join(format!("step7_rank{r}.json")), t).unwrap();
    }
    let out = Command::new(BIN).args(["watch", dir.to_str().unwrap(), "--once", "--ranks"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "one window line and its straggler line: {stdout}");
    assert!(lines[0].contains("step7_rank*.json (3 ranks)"), "{}", lines[0]);
    assert!(lines[1].contains("straggler: rank 1 arrives last") && lines[1].contains("waiting for its host"), "{}", lines[1]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_nsight_systems_export_in_the_folder_is_a_window_and_half_of_one_is_named() {
    let dir = std::env::temp_dir().join(format!("traceprism-watch-nsys-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(fixture("nsys/mfu_2gpu_before.sqlite"), dir.join("capture.sqlite")).unwrap();
    let bytes = std::fs::read(fixture("nsys/h100_2gpu_1s.sqlite")).unwrap();
    std::fs::write(dir.join("half.sqlite"), &bytes[..bytes.len() / 2]).unwrap();
    let out = Command::new(BIN).args(["watch", dir.to_str().unwrap(), "--once"]).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(stdout.contains("capture.sqlite"), "{stdout}");
    assert!(stderr.contains("half.sqlite"), "the half export is named: {stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
