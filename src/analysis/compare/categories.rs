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
        let key = |s: &Side, i: usize| -> (String, String) {
            let c = &s.analysis.categories;
            let fam = c.family(i).to_string();
            if level == "family" {
                (fam, String::new())
            } else {
                (fam, c.name(i).to_string())
            }
        };
        let mut rows =
            keyed_rows(a, b, key, |k| vec![level.to_string(), k.0.clone(), k.1.clone()], |s, _| s.pass_divisor(), opts);
        super::sort_by_gap(&mut rows);
        out.extend(rows);
    }
    out
}
