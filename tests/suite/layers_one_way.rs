//! The crate's layers run one way: bytes → events (ingest) → model → read and link → rules →
//! analyses → tables → reports → the pipeline → faces. This test reads every source file and fails
//! if a module imports (`crate::x`) a module of a higher layer, or names one of the crate root's
//! re-exports (`crate::Result`, `crate::Analysis`: the root sits above every layer, so the import
//! graph would show a lower layer reaching the top), or if `lib.rs` declares a module this table
//! does not place. The binary's faces (`cli`, `mcp`) are thin and side by side: neither imports the
//! other. The Python face's modules import each other without a circle.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Each top-level module and its layer; a module may use only modules of its own layer or below.
const LAYERS: &[(&str, u32)] = &[
    ("error", 0),
    ("support", 1),
    ("ingest", 2),
    ("synth", 2),
    ("model", 3),
    ("read", 4),
    ("link", 4),
    ("rules", 5),
    ("analysis", 6),
    ("table", 7),
    ("report", 8),
    ("split", 8),
    ("gate", 8),
    ("pipeline", 9),
    ("wasm", 10),
    // The binary's faces, over the library's public API (`crate::` there is the binary).
    ("cli", 11),
    ("mcp", 11),
];

/// The binary's faces: each is its own, none imports another.
const FACES: &[&str] = &["cli", "mcp"];

fn layer(module: &str) -> Option<u32> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|&(_, l)| l)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src is readable") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The text without `//` comments (doc links to higher layers are not imports).
fn without_comments(text: &str) -> String {
    text.lines().map(|l| l.find("//").map_or(l, |i| &l[..i])).collect::<Vec<_>>().join("\n")
}

/// Top-level modules named after `crate::` (also inside `crate::{a, b::c}` groups).
fn imported_modules(code: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let ident = |s: &str| s.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect::<String>();
    for (at, _) in code.match_indices("crate::") {
        // `$crate::` inside a macro is the same crate.
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name = ident(item.trim());
                if !name.is_empty() {
                    found.insert(name);
                }
            }
        } else {
            found.insert(ident(rest));
        }
    }
    found
}

#[test]
fn no_module_imports_a_higher_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut upward = Vec::new();
    let mut checked = 0;
    for file in &files {
        let rel = file.strip_prefix(&src).expect("inside src");
        let top = rel.components().next().expect("a path").as_os_str().to_string_lossy().trim_end_matches(".rs").to_string();
        if top == "main" || top == "lib" {
            continue;
        }
        let Some(own) = layer(&top) else { panic!("{}: module {top} has no layer in LAYERS", rel.display()) };
        checked += 1;
        let face = FACES.contains(&top.as_str());
        let code = without_comments(&std::fs::read_to_string(file).expect("readable"));
        for module in imported_modules(&code) {
            match layer(&module) {
                Some(l) if l > own => upward.push(format!("{} (layer {own}) uses crate::{module} (layer {l})", rel.display())),
                _ if face && module != top && FACES.contains(&module.as_str()) => {
                    upward.push(format!("{} (face {top}) uses crate::{module}, another face", rel.display()))
                }
                // `crate::Result`, `crate::Analysis`: the root's re-exports, above every layer.
                None if !face && module.chars().next().is_some_and(|c| c.is_ascii_uppercase()) => upward.push(format!(
                    "{} (layer {own}) uses crate::{module}, a re-export of the crate root: name its module",
                    rel.display()
                )),
                _ => {}
            }
        }
    }
    assert!(checked > 50, "only {checked} files were checked");
    assert!(upward.is_empty(), "imports that run up the layers:\n{}", upward.join("\n"));
}

#[test]
fn every_module_of_the_library_has_a_layer() {
    let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).expect("lib.rs");
    let declared: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod ").or_else(|| l.trim().strip_prefix("mod ")))
        .map(|l| l.trim_end_matches(';'))
        .collect();
    assert!(declared.len() >= 10, "lib.rs declares {declared:?}");
    for m in declared {
        assert!(layer(m).is_some(), "lib.rs declares `{m}`, which LAYERS does not place");
    }
}

#[test]
fn the_checker_sees_an_upward_import() {
    // The checker itself: a group import and a plain path are both found.
    let code = without_comments("use crate::{model::Trace, pipeline};\n// crate::wasm in a comment\nlet x = crate::report::x;");
    let found = imported_modules(&code);
    assert!(found.contains("pipeline") && found.contains("model") && found.contains("report"), "{found:?}");
    assert!(!found.contains("wasm"));
}

#[test]
fn the_python_face_has_no_import_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("python/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut edges: std::collections::BTreeMap<String, BTreeSet<String>> = Default::default();
    for file in &files {
        let name = file.file_stem().expect("a name").to_string_lossy().to_string();
        let code = without_comments(&std::fs::read_to_string(file).expect("readable"));
        let uses: BTreeSet<String> = imported_modules(&code).into_iter().filter(|m| *m != name).collect();
        edges.insert(name, uses);
    }
    assert!(edges.len() >= 5, "{edges:?}");
    // Depth-first search for a back edge.
    fn visit(
        m: &str,
        edges: &std::collections::BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == m) {
            let mut circle = path[at..].to_vec();
            circle.push(m.to_string());
            return Some(circle);
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.to_string());
        for next in edges.get(m).into_iter().flatten() {
            if let Some(c) = visit(next, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(m.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for m in edges.keys() {
        if let Some(circle) = visit(m, &edges, &mut Vec::new(), &mut done) {
            panic!("the Python face's modules import in a circle: {}", circle.join(" → "));
        }
    }
}

#[test]
fn the_checker_sees_a_root_re_export() {
    let found = imported_modules(&without_comments("fn f() -> crate::Result<()> { crate::Analysis::new() }"));
    assert!(found.contains("Result") && found.contains("Analysis"), "{found:?}");
}
