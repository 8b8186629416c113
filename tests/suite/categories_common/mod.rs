//! Shared helpers for the category tests: fixtures are read once per test binary.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use traceprism::{Analysis, Options};

/// Every trace fixture (truth files excluded).
pub fn fixture_names() -> Vec<String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("fixtures dir")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| (n.ends_with(".json.gz") || n.ends_with(".json") || n.ends_with(".xplane.pb")) && !n.contains(".truth."))
        .collect();
    names.sort();
    names
}

/// The analysis of one fixture with default options (cached).
pub fn analysis(file: &str) -> Arc<Analysis> {
    type Slot = Arc<OnceLock<Arc<Analysis>>>;
    static CACHE: OnceLock<Mutex<HashMap<String, Slot>>> = OnceLock::new();
    let slot = {
        let mut map = CACHE.get_or_init(Default::default).lock().unwrap();
        map.entry(file.to_string()).or_default().clone()
    };
    slot.get_or_init(|| {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(file);
        Arc::new(traceprism::analyze_path(&path, Options::default()).unwrap_or_else(|e| panic!("{file}: {e}")))
    })
    .clone()
}

#[allow(dead_code)]
/// Kernel time share (0..1) of each category, largest first, over kernels only.
pub fn kernel_shares(a: &Analysis) -> Vec<(String, f64, i64)> {
    let t = &a.trace;
    let mut by: HashMap<String, i64> = HashMap::new();
    let mut total = 0i64;
    for i in t.kernel_rows() {
        *by.entry(a.categories.name(i).to_string()).or_default() += t.gpu.dur[i];
        total += t.gpu.dur[i];
    }
    let mut v: Vec<(String, f64, i64)> =
        by.into_iter().map(|(c, d)| (c, if total > 0 { d as f64 / total as f64 } else { 0.0 }, d)).collect();
    v.sort_by_key(|x| std::cmp::Reverse(x.2));
    v
}
