//! Category level: GPU time per kernel family and per kernel category, both sides paired by name.
//!
//! Two levels in one list, told apart by the first key part (`family` or `category`): every GPU
//! row of each side is in exactly one family row and exactly one category row. Category names
//! carry the library (`GEMM-cuBLAS`, `GEMM-hipBLASLt`), so across vendors the family rows are the
//! ones that line up.

use super::{keyed_rows, CompareOptions, LevelRow, Side};

/// Family rows then category rows, each level sorted by absolute gap per pass.
pub fn compare(a: &Side, b: &Side, opts: &CompareOptions) -> Vec<LevelRow> {
    let mut out = Vec::new();
    for level in ["family", "category"] {
        // Rows grouped by category id; each category named once.
        let raw = |s: &Side, i: usize| s.analysis.categories.of_row[i];
        let key = |s: &Side, c: u16| -> (String, String) {
            let c = &s.analysis.categories.categories[c as usize];
            (c.family.clone(), if level == "family" { String::new() } else { c.name.clone() })
        };
        let show = |k: &(String, String)| vec![level.to_string(), k.0.clone(), k.1.clone()];
        let mut rows = keyed_rows(a, b, raw, key, show, |s, _| s.pass_divisor(), opts);
        super::sort_by_gap(&mut rows);
        out.extend(rows);
    }
    out
}
