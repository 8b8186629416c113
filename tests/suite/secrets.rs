//! No credentials in the repository, and none in what traceprism writes (issue 30).
//!
//! 1. Every tracked file (gzip inflated; JSON, protobuf, fuzz inputs, CSV, text and source alike) is
//!    scanned for the credential shapes of `traceprism::support::secrets::PATTERNS`; a failure
//!    names the file and the shape, never the secret.
//! 2. A trace holding a token (a real fixture with a made-up token put back where its recorder's
//!    was) is flagged by the summary (the key path, not the value), and neither `split`, the
//!    tables nor the HTML report copy the token.

use crate::common;
use common::*;
use std::path::{Path, PathBuf};
use traceprism::split::{select, Splitter, Window};
use traceprism::support::secrets;

/// The repository's tracked files (`git ls-files`), or every file under the root but `target`,
/// `node_modules` and dot folders when git is not at hand.
fn tracked_files(root: &Path) -> Vec<PathBuf> {
    let listed = std::process::Command::new("git").arg("-C").arg(root).args(["ls-files", "-z"]).output();
    if let Ok(out) = listed {
        if out.status.success() && !out.stdout.is_empty() {
            return out
                .stdout
                .split(|&b| b == 0)
                .filter(|p| !p.is_empty())
                .map(|p| root.join(String::from_utf8_lossy(p).as_ref()))
                .collect();
        }
    }
    let mut files = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                if !(name.starts_with('.') || name == "target" || name == "node_modules") {
                    stack.push(p);
                }
            } else {
                files.push(p);
            }
        }
    }
    files
}

/// A file's bytes as they would be read: a gzip stream inflated (whole, with every member).
fn contents(path: &Path) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap_or_default();
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        let mut d = flate2::read::MultiGzDecoder::new(&bytes[..]);
        if std::io::Read::read_to_end(&mut d, &mut out).is_ok() {
            return out;
        }
    }
    bytes
}

#[test]
fn no_tracked_file_holds_a_credential() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = tracked_files(root);
    assert!(files.len() > 100, "the scan found only {} files", files.len());
    let mut found = Vec::new();
    let mut bytes = 0usize;
    for f in &files {
        let text = contents(f);
        bytes += text.len();
        if let Some(kind) = secrets::find(&text) {
            found.push(format!("{}: a {kind}", f.strip_prefix(root).unwrap_or(f).display()));
        }
    }
    eprintln!("scanned {} tracked files, {:.1} MB once inflated", files.len(), bytes as f64 / 1e6);
    assert!(found.is_empty(), "credentials in tracked files (redact them as fixtures/README.md says):\n{}", found.join("\n"));
}

/// A token of Hugging Face's shape, made here so that no file holds one.
fn made_up_token() -> String {
    let letters: String = (0..34).map(|i| (b'A' + (i * 7 % 26) as u8) as char).collect();
    format!("hf_{letters}")
}

const REDACTED_FIXTURE: &str = "hf_bert_small_forward_h100.json.gz";

/// The BERT fixture with a made-up token in the `HF_TOKEN` entry its recorder's token was
/// redacted from, written to a temporary `.json.gz`.
fn trace_with_token(token: &str) -> PathBuf {
    let text = String::from_utf8(plain_fixture(REDACTED_FIXTURE)).unwrap();
    let redacted = format!("\"HF_TOKEN\": \"{}\"", "x".repeat(37));
    assert_eq!(text.matches(&redacted).count(), 1, "the fixture holds its redacted HF_TOKEN once");
    // And nowhere else a token's text: the made-up one below is the only one.
    assert_eq!(secrets::find(text.as_bytes()), None);
    let with = text.replace(&redacted, &format!("\"HF_TOKEN\": \"{token}\""));
    let path = std::env::temp_dir().join(format!("traceprism-secret-{}.json.gz", std::process::id()));
    std::fs::write(&path, gzip(with.as_bytes())).unwrap();
    path
}

#[test]
fn a_trace_with_a_token_is_flagged_and_nothing_written_copies_it() {
    let token = made_up_token();
    let path = trace_with_token(&token);
    let analysis = traceprism::analyze_path(&path, traceprism::Options::default()).unwrap();
    let summary = traceprism::report::summary::summary(&analysis);
    assert_eq!(summary.secret_metadata, vec!["metadata.system.env.HF_TOKEN".to_string()]);
    let json = serde_json::to_string(&summary).unwrap();
    assert!(
        json.contains("metadata.system.env.HF_TOKEN") && !json.contains(&token),
        "summary --json names the key, not the value"
    );

    // Every table and the HTML report.
    for def in traceprism::report::TABLES {
        let t = (def.build)(&analysis);
        let csv = format!("{:?}", t.rows);
        assert!(!csv.contains(&token) && !csv.contains("hf_"), "table {} shows the token", def.name);
    }
    assert!(!traceprism::report::html::html_report(&analysis).contains(&token), "the HTML report shows the token");

    // A split keeps the metadata but writes the value as REDACTED.
    let bytes = std::fs::read(&path).unwrap();
    let mut s = Splitter::new(select(&analysis, &Window::Pass(0)).unwrap());
    for piece in bytes.chunks(4096) {
        s.push(piece).unwrap();
    }
    assert_eq!(s.redacted(), 1);
    let text = String::from_utf8(traceprism::ingest::gunzip(&s.finish().unwrap()).unwrap()).unwrap();
    let _ = std::fs::remove_file(&path);
    assert!(!text.contains(&token) && secrets::find(text.as_bytes()).is_none(), "the split copies the token");
    assert!(text.contains("\"HF_TOKEN\": \"REDACTED\""), "the split keeps the key with its value redacted");
    assert!(text.contains("\"HF_HOME\": \".cache/huggingface\""), "other metadata is copied as it is");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("the split is valid JSON");
    assert!(doc["traceEvents"].as_array().is_some_and(|e| !e.is_empty()));
}

#[test]
fn the_redacted_fixtures_carry_no_secret_but_keep_their_metadata() {
    for name in [REDACTED_FIXTURE, "hf_qwen15_05b_base_forward_h100.json.gz", "hf_timesformer_forward_h100.json.gz"] {
        let t = trace(name);
        assert!(t.meta.secret_keys.is_empty(), "{name}: {:?}", t.meta.secret_keys);
        let text = String::from_utf8(plain_fixture(name)).unwrap();
        assert!(
            text.contains(&format!("\"HF_TOKEN\": \"{}\"", "x".repeat(37))),
            "{name}: the redaction keeps the value's length"
        );
    }
}
