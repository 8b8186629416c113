//! Releases: the version lives in one place, and the release workflow builds what it says with
//! the commands CI runs.

use std::path::Path;

fn read(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn the_version_is_declared_once_and_every_package_inherits_it() {
    let root = read("Cargo.toml");
    let declared: Vec<&str> = root.lines().filter(|l| l.starts_with("version = ")).collect();
    assert_eq!(declared.len(), 1, "one version line in Cargo.toml: {declared:?}");
    let at = root.find("[workspace.package]").expect("a [workspace.package] table");
    assert!(root[at..].lines().skip(1).take_while(|l| !l.starts_with('[')).any(|l| l.starts_with("version = ")));
    for member in ["Cargo.toml", "python/Cargo.toml", "sqlite/Cargo.toml"] {
        let text = read(member);
        let package = &text[text.find("[package]").expect("a package")..];
        let package = &package[..package[1..].find("\n[").map_or(package.len(), |i| i + 1)];
        assert!(package.contains("version.workspace = true"), "{member} inherits the workspace's version");
    }
    // The wheel takes its version from python/Cargo.toml; the page's package.json has none.
    assert!(read("python/pyproject.toml").contains("dynamic = [\"version\"]"));
    let page: serde_json::Value = serde_json::from_str(&read("package.json")).expect("package.json");
    assert!(page.get("version").is_none() && page["private"] == true, "package.json is private and states no version");
    // What the binary reports is that version.
    assert_eq!(
        env!("CARGO_PKG_VERSION"),
        root[at..].lines().find_map(|l| l.strip_prefix("version = ")).unwrap().trim_matches('"')
    );
}

#[test]
fn the_release_workflow_builds_the_cli_everywhere_and_the_linux_wheel_as_ci_does() {
    let workflow = read(".github/workflows/release.yml");
    for target in [
        "x86_64-unknown-linux-gnu",
        "aarch64-unknown-linux-gnu",
        "aarch64-apple-darwin",
        "x86_64-apple-darwin",
        "x86_64-pc-windows-msvc",
    ] {
        assert!(workflow.contains(&format!("target: {target}")), "the CLI for {target}");
    }
    assert!(workflow.contains("tags: [\"v*\"]"), "runs on a version tag");
    // The Linux wheel is the command the test suite runs (scripts/test-python.sh calls it).
    assert!(workflow.contains("run: bash scripts/build-wheel.sh"));
    assert!(read("scripts/test-python.sh").contains("scripts/build-wheel.sh"));
    // abi3: one wheel per platform.
    assert!(read("python/Cargo.toml").contains("abi3-py39"));
    // Trusted publishing: an id token, no password.
    assert!(
        workflow.contains("id-token: write")
            && workflow.contains("pypa/gh-action-pypi-publish")
            && !workflow.contains("password:")
    );
}
