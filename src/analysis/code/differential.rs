//! Two traces' call paths side by side: the differential flame graph's data.

use super::call_paths::CallPaths;
use crate::analysis::base::Base;
use crate::analysis::phases::Phase;

/// One trace's side of a differential: its analyses and its call paths.
pub struct Side<'a> {
    /// The trace and its passes.
    pub base: &'a Base,
    /// Its call-path tree.
    pub paths: &'a CallPaths,
}

/// One call path in two traces: its GPU time per pass on each side (ns).
#[derive(Debug, Clone, PartialEq)]
pub struct PathDiff {
    /// Frames from the outermost down to the kernel, joined by `;` (the folded format's stack).
    pub path: String,
    /// GPU time per pass in A (ns).
    pub a_ns_per_pass: f64,
    /// GPU time per pass in B (ns).
    pub b_ns_per_pass: f64,
}

/// Passes of `a` in `phase` (all phases: `None`), at least 1: what a path's time is divided by.
pub fn passes_in(a: &Base, phase: Option<Phase>) -> usize {
    a.phases.passes.iter().filter(|p| phase.is_none_or(|ph| p.phase == ph)).count().max(1)
}

/// The call paths of two traces aligned by path, each side's time per pass of `phase`: the
/// differential flame graph's data, largest absolute change first. Paths one side lacks have 0
/// there.
pub fn differential(a: Side, b: Side, phase: Option<Phase>) -> Vec<PathDiff> {
    let (pa, pb) = (passes_in(a.base, phase) as f64, passes_in(b.base, phase) as f64);
    let mut by_path: std::collections::HashMap<String, (f64, f64)> = std::collections::HashMap::new();
    let (fa, fb) = (a.paths.folded(phase), b.paths.folded(phase));
    let (ra, rb) = same_files(&fa, &fb);
    for (path, ns) in fa {
        by_path.entry(rooted(&path, &ra)).or_default().0 += ns as f64 / pa;
    }
    for (path, ns) in fb {
        by_path.entry(rooted(&path, &rb)).or_default().1 += ns as f64 / pb;
    }
    let mut out: Vec<PathDiff> =
        by_path.into_iter().map(|(path, (x, y))| PathDiff { path, a_ns_per_pass: x, b_ns_per_pass: y }).collect();
    out.sort_by(|x, y| {
        (y.a_ns_per_pass - y.b_ns_per_pass)
            .abs()
            .total_cmp(&(x.a_ns_per_pass - x.b_ns_per_pass).abs())
            .then_with(|| x.path.cmp(&y.path))
    });
    out
}

/// Python frames of one side renamed to the other side's frame of the same file under another
/// folder (`/app/xDiT/xfuser/runner.py(123): <module>` and `xDiT/xfuser/runner.py(123): <module>`,
/// one program run from two working directories): a frame whose text, after a leading folder
/// prefix, is a frame of the other side becomes that shorter frame. Per side, a map of renames.
fn same_files(
    a: &[(String, i64)],
    b: &[(String, i64)],
) -> (std::collections::HashMap<String, String>, std::collections::HashMap<String, String>) {
    let frames = |paths: &[(String, i64)]| -> std::collections::HashSet<String> {
        paths.iter().flat_map(|(p, _)| p.split(';')).filter(|f| f.contains(".py(")).map(str::to_string).collect()
    };
    let (sa, sb) = (frames(a), frames(b));
    let renames = |mine: &std::collections::HashSet<String>, theirs: &std::collections::HashSet<String>| {
        let mut out = std::collections::HashMap::new();
        for f in mine {
            if theirs.contains(f) {
                continue;
            }
            let file_end = f.find(".py(").unwrap_or(0);
            let hit = f[..file_end].match_indices('/').map(|(i, _)| &f[i + 1..]).find(|s| s.contains('/') && theirs.contains(*s));
            if let Some(s) = hit {
                out.insert(f.clone(), s.to_string());
            }
        }
        out
    };
    (renames(&sa, &sb), renames(&sb, &sa))
}

/// `path` with its frames renamed by `renames`.
fn rooted(path: &str, renames: &std::collections::HashMap<String, String>) -> String {
    if renames.is_empty() {
        return path.to_string();
    }
    path.split(';').map(|f| renames.get(f).map_or(f, String::as_str)).collect::<Vec<_>>().join(";")
}

/// One node of the differential call tree: a frame on one or more paths, with the time per pass
/// of everything under it on each side.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffNode {
    /// Its parent's index (`None` for the root, `all`).
    pub parent: Option<usize>,
    /// Frames above it (the root is 0).
    pub depth: usize,
    /// The frame's name.
    pub name: String,
    /// GPU time per pass in A of it and everything under it (ns).
    pub a_ns_per_pass: f64,
    /// The same in B (ns).
    pub b_ns_per_pass: f64,
}

/// The differential's paths as one tree (the page's differential icicle draws it): each path's
/// frames as nodes from the root `all` down, a node's times the sums over the paths through it;
/// children in the order their first path comes.
pub fn tree(diffs: &[PathDiff]) -> Vec<DiffNode> {
    let mut nodes = vec![DiffNode { parent: None, depth: 0, name: "all".into(), a_ns_per_pass: 0.0, b_ns_per_pass: 0.0 }];
    let mut index: std::collections::HashMap<(usize, &str), usize> = std::collections::HashMap::new();
    for d in diffs {
        let mut at = 0;
        nodes[0].a_ns_per_pass += d.a_ns_per_pass;
        nodes[0].b_ns_per_pass += d.b_ns_per_pass;
        for frame in d.path.split(';') {
            let id = *index.entry((at, frame)).or_insert_with(|| {
                nodes.push(DiffNode {
                    parent: Some(at),
                    depth: nodes[at].depth + 1,
                    name: frame.to_string(),
                    a_ns_per_pass: 0.0,
                    b_ns_per_pass: 0.0,
                });
                nodes.len() - 1
            });
            nodes[id].a_ns_per_pass += d.a_ns_per_pass;
            nodes[id].b_ns_per_pass += d.b_ns_per_pass;
            at = id;
        }
    }
    nodes
}

#[cfg(test)]
mod tests {
    use super::{tree, PathDiff};

    #[test]
    fn paths_become_one_tree_with_sums_on_each_side() {
        let d = |path: &str, a: f64, b: f64| PathDiff { path: path.into(), a_ns_per_pass: a, b_ns_per_pass: b };
        let t = tree(&[d("m;attn;k1", 3.0, 1.0), d("m;mlp;k2", 2.0, 2.0), d("m;attn;k3", 1.0, 0.0)]);
        let names: Vec<&str> = t.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["all", "m", "attn", "k1", "mlp", "k2", "k3"]);
        assert_eq!((t[0].a_ns_per_pass, t[0].b_ns_per_pass), (6.0, 3.0));
        assert_eq!((t[2].a_ns_per_pass, t[2].b_ns_per_pass, t[2].depth), (4.0, 1.0, 2));
        assert_eq!(t[6].parent, Some(2));
    }
}
