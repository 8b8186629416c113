//! Category level: GPU time per kernel family and per kernel category, both sides paired by name.
//!
//! Two levels in one list, told apart by the first key part (`family` or `category`): every GPU
//! row of each side is in exactly one family row and exactly one category row. Category names
//! carry the library (`GEMM-cuBLAS`, `GEMM-hipBLASLt`), so across vendors the family rows are the
//! ones that line up.

use super::{group, judge, pair, CompareOptions, LevelRow, Side};
use std::collections::{BTreeMap, HashMap};

/// For each key, the kernel name with most time among the selected rows of `side` (one pass).
pub fn top_kernels<K: Ord>(side: &Side, mut key: impl FnMut(usize) -> K) -> BTreeMap<K, String> {
    let g = &side.analysis.trace.gpu;
    let mut per: BTreeMap<K, HashMap<u32, i64>> = BTreeMap::new();
    for &i in &side.rows {
        *per.entry(key(i)).or_default().entry(g.name[i]).or_insert(0) += g.dur[i];
    }
    per.into_iter()
        .map(|(k, m)| {
            let top = m.into_iter().max_by(|x, y| x.1.cmp(&y.1).then(y.0.cmp(&x.0))).map(|(n, _)| n);
            (k, top.map(|n| side.analysis.trace.name(n).to_string()).unwrap_or_default())
        })
        .collect()
}

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
        let (mut ta, mut tb) = (top_kernels(a, |i| key(a, i)), top_kernels(b, |i| key(b, i)));
        let mut rows: Vec<LevelRow> = pair(group(a, |i| key(a, i)), group(b, |i| key(b, i)))
            .into_iter()
            .map(|(k, xa, xb)| LevelRow {
                a_note: ta.remove(&k).unwrap_or_default(),
                b_note: tb.remove(&k).unwrap_or_default(),
                key: vec![level.to_string(), k.0, k.1],
                a: xa,
                b: xb,
                a_div: a.pass_divisor(),
                b_div: b.pass_divisor(),
                verdict: judge(xa, xb, a.pass_divisor(), b.pass_divisor(), opts),
            })
            .collect();
        super::sort_by_gap(&mut rows);
        out.extend(rows);
    }
    out
}
