//! Categories that do the same job across vendors and libraries (`rules/compare_equivalents.toml`):
//! the alignment treats a class like one category.

use serde::Deserialize;
use std::collections::HashMap;
use std::sync::OnceLock;

#[derive(Deserialize)]
struct File {
    #[serde(default)]
    class: Vec<Class>,
    #[serde(default)]
    family_weight: HashMap<String, f32>,
}

#[derive(Deserialize)]
struct Class {
    name: String,
    categories: Vec<String>,
}

const BUILTIN: &str = include_str!("../../rules/compare_equivalents.toml");

struct Tables {
    class_of: HashMap<String, String>,
    family_weight: HashMap<String, f32>,
}

fn tables() -> &'static Tables {
    static T: OnceLock<Tables> = OnceLock::new();
    T.get_or_init(|| {
        // the embedded file is checked by a unit test; a parse failure means "no classes"
        let f: File = toml::from_str(BUILTIN).unwrap_or(File { class: Vec::new(), family_weight: HashMap::new() });
        Tables {
            class_of: f.class.into_iter().flat_map(|c| c.categories.into_iter().map(move |k| (k, c.name.clone()))).collect(),
            family_weight: f.family_weight,
        }
    })
}

/// The alignment class of a category: its equivalence class name, or the category itself.
pub fn class_of(category: &str) -> &str {
    tables().class_of.get(category).map_or(category, |s| s.as_str())
}

/// Weight of pairings within a family (1 unless the rules say otherwise).
pub fn family_weight(family: &str) -> f32 {
    tables().family_weight.get(family).copied().unwrap_or(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_classes_parse() {
        let f: File = toml::from_str(BUILTIN).expect("compare_equivalents.toml parses");
        assert!(f.class.len() >= 4);
        assert_eq!(class_of("GEMM-cuBLAS"), class_of("GEMM-hipBLASLt"));
        assert_eq!(class_of("Attention-Decode"), class_of("PagedAttention-Compute"));
        assert_eq!(class_of("MoE-Routing"), "MoE-Routing");
        assert_eq!(class_of("GEMM-SplitK"), class_of("GEMM-cuBLAS"));
        assert_ne!(class_of("MoE-GEMM"), class_of("GEMM-cuBLAS"));
        assert!(family_weight("Memory") < family_weight("GEMM"));
    }
}
