//! The crate's layers run one way: bytes → events (ingest) → model → read and link → rules →
//! analyses → tables → reports → the pipeline → faces. This test reads every source file and fails
//! if a module imports (`crate::x`) a module of a higher layer, or names one of the crate root's
//! re-exports (`crate::Result`, `crate::Analysis`: the root sits above every layer, so the import
//! graph would show a lower layer reaching the top), or if `lib.rs` declares a module this table
//! does not place. The binary's faces (`cli`, `mcp`) are thin and side by side: neither imports the
//! other. The Python face's modules import each other without a circle.
//!
//! Inside the layers: no circle anywhere (in every folder its modules use each other one way),
//! analyses never import a reader, the analyses' children take their options without climbing to
//! `analysis/mod.rs`, and faces never read a rendered table's cells back.

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
    if let Some(circle) = first_circle(&edges) {
        panic!("the Python face's modules import in a circle: {}", circle.join(" → "));
    }
}

#[test]
fn the_checker_sees_a_root_re_export() {
    let found = imported_modules(&without_comments("fn f() -> crate::Result<()> { crate::Analysis::new() }"));
    assert!(found.contains("Result") && found.contains("Analysis"), "{found:?}");
}

/// A module's path (`analysis::health::check`) from its file under `src/`.
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string()).collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib" || p == "main") {
        parts.pop();
    }
    parts
}

/// The code without its `#[cfg(test)] mod …` blocks, from the first on (a test may reach anywhere).
fn without_tests(code: &str) -> &str {
    code.find("#[cfg(test)]\nmod ").map_or(code, |at| &code[..at])
}

/// The module paths a file's code names: `crate::a::b`, `super::x`, `self::y` (also inside
/// `{...}` groups), and its own child modules named bare (`host::host_bound`).
fn named_paths(me: &[String], code: &str, children: &BTreeSet<String>) -> Vec<Vec<String>> {
    let ident = |s: &str| s.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect::<String>();
    let mut out = Vec::new();
    for head in ["crate::", "super::", "self::"] {
        for (at, _) in code.match_indices(head) {
            if code[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == ':') {
                continue;
            }
            let mut base: Vec<String> = match head {
                "crate::" => Vec::new(),
                "self::" => me.to_vec(),
                _ => me[..me.len().saturating_sub(1)].to_vec(),
            };
            let mut rest = &code[at + head.len()..];
            loop {
                if let Some(r) = rest.strip_prefix("super::") {
                    base.pop();
                    rest = r;
                    continue;
                }
                let name = ident(rest);
                if name.is_empty() {
                    break;
                }
                rest = &rest[name.len()..];
                base.push(name);
                match rest.strip_prefix("::") {
                    Some(r) => rest = r,
                    None => break,
                }
            }
            if let Some(group) = rest.strip_prefix('{') {
                let end = group.find('}').unwrap_or(group.len());
                for item in group[..end].split(',') {
                    let mut p = base.clone();
                    p.extend(item.trim().split("::").map(ident).filter(|s| !s.is_empty() && s != "self"));
                    out.push(p);
                }
            } else {
                // A group names its items (`{self, x}` names the module itself), not its parent.
                out.push(base);
            }
        }
    }
    for child in children {
        let bare = format!("{child}::");
        let named = code
            .match_indices(&bare)
            .any(|(at, _)| !code[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':'));
        if named {
            let mut p = me.to_vec();
            p.push(child.clone());
            out.push(p);
        }
    }
    out
}

/// Every module of `src/` (library and binary) with the modules its code names, resolved to the
/// longest path that is a module.
fn module_graph() -> std::collections::BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_path(f.strip_prefix(&src).unwrap())).collect();
    let mut graph = std::collections::BTreeMap::new();
    for file in &files {
        let me = module_path(file.strip_prefix(&src).unwrap());
        let children: BTreeSet<String> =
            modules.iter().filter(|m| m.len() == me.len() + 1 && m.starts_with(&me)).map(|m| m[me.len()].clone()).collect();
        let text = std::fs::read_to_string(file).expect("readable");
        let code = without_comments(without_tests(&text));
        let mut uses = BTreeSet::new();
        for path in named_paths(&me, &code, &children) {
            let target = (1..=path.len()).rev().map(|n| path[..n].to_vec()).find(|p| modules.contains(p));
            if let Some(t) = target.filter(|t| *t != me) {
                uses.insert(t);
            }
        }
        graph.insert(me, uses);
    }
    graph
}

/// The first circle in a directed graph, if any (depth-first search for a back edge).
fn first_circle(edges: &std::collections::BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
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
        if !done.insert(m.to_string()) {
            return None;
        }
        path.push(m.to_string());
        for next in edges.get(m).into_iter().flatten() {
            if let Some(c) = visit(next, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    edges.keys().find_map(|m| visit(m, edges, &mut Vec::new(), &mut done))
}

/// No circle anywhere in the house: at every level, the sibling modules of one folder (each taken
/// with everything inside it) use each other one way. A module's own `mod.rs` declaring and calling
/// its children is the folder, not a circle.
#[test]
fn no_circle_among_the_modules_of_any_folder() {
    let graph = module_graph();
    assert!(graph.len() > 150, "only {} modules seen", graph.len());
    let mut levels: std::collections::BTreeMap<Vec<String>, std::collections::BTreeMap<String, BTreeSet<String>>> =
        Default::default();
    for (from, uses) in &graph {
        for to in uses {
            let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
            if common < from.len() && common < to.len() {
                let level = levels.entry(from[..common].to_vec()).or_default();
                level.entry(from[common].clone()).or_default().insert(to[common].clone());
            }
        }
    }
    let circles: Vec<String> = levels
        .iter()
        .filter_map(|(folder, edges)| first_circle(edges).map(|c| format!("in {}: {}", folder.join("::"), c.join(" → "))))
        .collect();
    assert!(circles.is_empty(), "modules that use each other in a circle:\n{}", circles.join("\n"));
    // The checker sees what it must: the folder of analyses holds edges, and a known one-way edge.
    assert!(levels[&vec!["analysis".to_string()]].get("findings").is_some_and(|e| e.contains("phases")));
}

/// Analyses read the model; they never import a reader (`ingest`, `read`): format facts reach them
/// through the model's typed metadata.
#[test]
fn analyses_never_import_a_reader() {
    let graph = module_graph();
    let reaching: Vec<String> = graph
        .iter()
        .filter(|(m, _)| m.first().is_some_and(|t| t == "analysis"))
        .flat_map(|(m, uses)| {
            uses.iter()
                .filter(|u| u[0] == "ingest" || u[0] == "read")
                .map(move |u| format!("{} uses {}", m.join("::"), u.join("::")))
        })
        .collect();
    assert!(reaching.is_empty(), "analyses that import a reader:\n{}", reaching.join("\n"));
}

/// The analyses' children take the options and the phase methods' names from the leaf
/// `analysis::options`, never by climbing to `analysis/mod.rs`.
#[test]
fn analyses_take_options_without_climbing() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/analysis");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let climbing: Vec<String> = files
        .iter()
        .filter(|f| !f.ends_with("analysis/mod.rs"))
        .filter(|f| {
            let code = without_comments(&std::fs::read_to_string(f).expect("readable"));
            ["super::Options", "crate::analysis::Options", "analysis::{Options", ", Options}"].iter().any(|p| code.contains(p))
        })
        .map(|f| f.display().to_string())
        .collect();
    assert!(files.len() > 50);
    assert!(climbing.is_empty(), "take Options from crate::analysis::options:\n{}", climbing.join("\n"));
}

/// Faces read analyses, not rendered tables: no face builds a table it names itself and reads its
/// cells back (a table the user names is shown or paged, which is what faces are for).
#[test]
fn faces_never_render_then_parse() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for face in ["src/cli", "src/mcp", "src/wasm", "python/src"] {
        rust_files(&root.join(face), &mut files);
    }
    let mut found = Vec::new();
    for f in &files {
        let code = without_comments(&std::fs::read_to_string(f).expect("readable"));
        let named_table = code.match_indices("report::table(").any(|(at, _)| {
            let args = &code[at..code[at..].find(')').map_or(code.len(), |e| at + e)];
            args.contains('"')
        });
        if named_table || code.contains("].text()") {
            found.push(f.display().to_string());
        }
    }
    assert!(files.len() > 20);
    assert!(found.is_empty(), "faces that read a rendered table's cells back:\n{}", found.join("\n"));
}

#[test]
fn the_checker_sees_a_sibling_and_a_bare_child() {
    let me = ["analysis".to_string(), "health_nsys".to_string()];
    let paths = named_paths(&me, "use super::health::{Check, Status};\nlet x = crate::model::Trace;", &BTreeSet::new());
    assert!(paths.iter().any(|p| p.starts_with(&["analysis".to_string(), "health".to_string()])), "{paths:?}");
    assert!(paths.iter().any(|p| p.starts_with(&["model".to_string()])), "{paths:?}");
    let parent = ["analysis".to_string(), "findings".to_string()];
    let children: BTreeSet<String> = ["host".to_string()].into();
    let paths = named_paths(&parent, "out.extend(host::host_bound(g)); ghost::x();", &children);
    assert_eq!(paths, vec![vec!["analysis".to_string(), "findings".to_string(), "host".to_string()]]);
    let circle: std::collections::BTreeMap<String, BTreeSet<String>> =
        [("a".into(), ["b".into()].into()), ("b".into(), ["a".into()].into())].into();
    assert_eq!(first_circle(&circle), Some(vec!["a".into(), "b".into(), "a".into()]));
}

/// Every `.js` and `.mjs` file under `dir` (the wasm package left out: it is generated).
fn js_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            if !path.ends_with("pkg") && !path.ends_with("node_modules") {
                js_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "js" || e == "mjs") {
            out.push(path);
        }
    }
}

/// The magic bytes a page script would test to tell a file's format itself.
const MAGIC: &[&str] = &["0x1f", "0x8b", "=== 0x7b", "=== 0x5b", "document_form", "sniff_format", "=== '{'", "=== '['"];

/// The ways `code` tells a format by the bytes on its own ([`MAGIC`]).
fn bytes_tested_in(code: &str) -> Vec<&'static str> {
    MAGIC.iter().copied().filter(|m| code.contains(m)).collect()
}

/// Calls of the core's `sniff` in `code`: `sniff(` not defined there (`async sniff(`, `sniff({`
/// of an op) and not a method of something else (`.sniff(`).
fn sniff_calls(code: &str) -> usize {
    code.match_indices("sniff(")
        .filter(|(at, _)| {
            let before = &code[..*at];
            let after = &code[at + "sniff(".len()..];
            !before.ends_with('.') && !before.ends_with("async ") && !before.ends_with("_") && !after.starts_with('{')
        })
        .count()
}

/// The core's names of input formats (`ingest::Format::as_str`), quoted as a script would test them.
const FORMAT_NAMES: &[&str] = &["gzip", "json", "xspace", "nsys", "nsys_rows", "nsys_sqlite"];

/// The formats `code` names as strings (`'gzip'`, `"xspace"`), or by a sniff's answer
/// (`.format`, `sniffed`).
fn formats_named_in(code: &str) -> Vec<String> {
    let mut named: Vec<String> = FORMAT_NAMES
        .iter()
        .flat_map(|name| [format!("'{name}'"), format!("\"{name}\"")])
        .filter(|quoted| code.contains(quoted.as_str()))
        .collect();
    named.extend([".format ===", "sniffed"].iter().filter(|w| code.contains(*w)).map(|w| w.to_string()));
    named
}

/// What an input is and how it is read, the worker decides, through the core (`read::sniff`: the
/// format and its `reading`), once per file. The page's scripts (everything outside `www/worker/`)
/// hand the worker whole files and name no format: no magic bytes, no format name, no sniff. On the
/// worker's side the wasm `sniff` is called twice: once for every file (`sniffFile`) and once by
/// the inflating helper (what a gzip stream holds: a question about other bytes); no script tests
/// magic bytes itself.
#[test]
fn the_page_names_no_format_and_the_worker_asks_once() {
    let www = Path::new(env!("CARGO_MANIFEST_DIR")).join("www");
    let mut files = Vec::new();
    js_files(&www, &mut files);
    assert!(files.len() > 20, "the page's scripts are found");
    let mut found = Vec::new();
    let mut total_calls = 0;
    for f in &files {
        let code = without_js_comments(&std::fs::read_to_string(f).expect("readable"));
        let rel = f.strip_prefix(&www).expect("under www").display().to_string();
        for magic in bytes_tested_in(&code) {
            found.push(format!("{rel} tests bytes itself ({magic})"));
        }
        let calls = sniff_calls(&code);
        total_calls += calls;
        let worker_side = rel.starts_with("worker/");
        let allowed = match rel.as_str() {
            "worker/worker.js" | "worker/part-worker.js" => 1,
            _ => 0,
        };
        if calls > allowed {
            found.push(format!("{rel} calls the core's sniff {calls} times (at most {allowed})"));
        }
        if !worker_side {
            for named in formats_named_in(&code) {
                found.push(format!("{rel} is a page script and names a format ({named})"));
            }
        }
    }
    assert_eq!(total_calls, 2, "every file once in the worker, and the inflated stream");
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// A script's code without its `//` line comments and `/* */` blocks (JSDoc may explain formats).
fn without_js_comments(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("/*") {
        out.push_str(&rest[..at]);
        rest = rest[at..].find("*/").map_or("", |end| &rest[at + end + 2..]);
    }
    out.push_str(rest);
    out.lines().map(|l| l.find("// ").map_or(l, |i| &l[..i])).collect::<Vec<_>>().join("\n")
}

/// The checker finds a script that tests gzip's magic bytes itself or names a format, and tells a
/// call of the core's sniff from its definitions.
#[test]
fn the_checker_sees_magic_bytes_and_sniff_calls() {
    assert_eq!(formats_named_in("if (sniffed.format === 'gzip') {}"), ["'gzip'", ".format ===", "sniffed"]);
    assert!(formats_named_in("session.call('digest', {}); // 'gzip' in a comment").contains(&"'gzip'".to_string()));
    assert!(formats_named_in(&without_js_comments("call('digest'); // 'gzip'\n/* 'nsys' */ x")).is_empty());
    assert_eq!(bytes_tested_in("const gz = head[0] === 0x1f && head[1] === 0x8b;"), ["0x1f", "0x8b"]);
    assert!(bytes_tested_in("const gz = sniffed.format === 'gzip';").is_empty());
    assert_eq!(sniff_calls("async sniff(blob) {} sniff({ head }) { return sniff(head); } s.sniff(b); sniff(x)"), 2);
}

/// Inside `analysis/`, one way: what `analysis/mod.rs` uses (the base analyses, the derived ones
/// it keeps beside them: roofline, budget, call paths), and all they reach, never names
/// `Analysis` back; they take `analysis::base::Base`. Analyses over the whole `Analysis`
/// (findings, health, compare...) sit above it and are reached by nothing it uses.
#[test]
fn nothing_the_analysis_keeps_reaches_back_to_it() {
    let graph = module_graph();
    let top = vec!["analysis".to_string()];
    let mut reached: BTreeSet<Vec<String>> = BTreeSet::new();
    let mut todo: Vec<Vec<String>> = graph[&top].iter().filter(|m| m.first() == top.first()).cloned().collect();
    while let Some(m) = todo.pop() {
        if !reached.insert(m.clone()) {
            continue;
        }
        todo.extend(graph.get(&m).into_iter().flatten().filter(|u| u.first() == top.first() && **u != top).cloned());
    }
    assert!(reached.len() > 10, "what analysis/mod.rs uses is found: {reached:?}");
    let back: Vec<String> =
        reached.iter().filter(|m| graph.get(*m).is_some_and(|u| u.contains(&top))).map(|m| m.join("::")).collect();
    assert!(
        back.is_empty(),
        "modules analysis/mod.rs reaches that name it back (take analysis::base::Base):\n{}",
        back.join("\n")
    );
}

/// The model reads what readers hand on and nothing else of `ingest`: the interchange types
/// (`ingest::interchange`: events, facts, how the input ended, XLA's module runs), never a
/// reader's own module.
#[test]
fn the_model_reads_interchange_types_only() {
    let graph = module_graph();
    let reaching: Vec<String> = graph
        .iter()
        .filter(|(m, _)| m.first().is_some_and(|t| t == "model"))
        .flat_map(|(m, uses)| {
            uses.iter()
                .filter(|u| u[0] == "ingest" && u.get(1).is_none_or(|s| s != "interchange"))
                .map(move |u| format!("{} uses {}", m.join("::"), u.join("::")))
        })
        .collect();
    assert!(graph.keys().filter(|m| m.first().is_some_and(|t| t == "model")).count() >= 8);
    assert!(reaching.is_empty(), "model modules reaching past ingest::interchange:\n{}", reaching.join("\n"));
}

/// README's "How it works" names every folder of `src/`, every top-level module file and every
/// rules table (`src/rules/*.toml`): a new one is described where newcomers read the flow.
#[test]
fn how_it_works_names_every_folder_and_every_rules_table() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let at = readme.find("## How it works").expect("the section");
    let section = &readme[at..at + readme[at..].find("\n## Tests").expect("the next section")];
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(root.join("src")).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let named = if entry.path().is_dir() {
            section.contains(&format!("src/{name}")) || (name == "rules" && section.contains("src/rules/"))
        } else {
            ["lib.rs", "main.rs", "error.rs"].contains(&name.as_str()) || section.contains(&format!("src/{name}"))
        };
        if !named {
            missing.push(format!("src/{name}"));
        }
    }
    for entry in std::fs::read_dir(root.join("src/rules")).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".toml") && !section.contains(&format!("`{name}`")) {
            missing.push(format!("src/rules/{name}"));
        }
    }
    if !section.contains("sqlite/") {
        missing.push("sqlite/".into());
    }
    assert!(missing.is_empty(), "README's How it works does not name: {}", missing.join(", "));
}

/// The page's views are side by side: no view imports another (shared pieces, the icicle, the
/// gate's section, live beside them in `www/js/`); a view may use `views/common.js` only.
#[test]
fn no_view_of_the_page_imports_a_view() {
    let views = Path::new(env!("CARGO_MANIFEST_DIR")).join("www/js/views");
    let mut found = Vec::new();
    let mut seen = 0;
    for entry in std::fs::read_dir(&views).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".js") {
            continue;
        }
        seen += 1;
        let code = std::fs::read_to_string(entry.path()).unwrap();
        for line in code.lines().filter(|l| l.starts_with("import ")) {
            if let Some(at) = line.find("from './") {
                let target = &line[at + "from './".len()..];
                if !target.starts_with("common.js") {
                    found.push(format!("views/{name}: {line}"));
                }
            }
        }
    }
    assert!(seen > 10, "the views are found");
    assert!(found.is_empty(), "views importing views:\n{}", found.join("\n"));
}
