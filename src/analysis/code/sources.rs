//! GPU time by source line: each kernel's time goes to the innermost Python frame on its call
//! path ([`super::call_paths`]) that is a line of the model or the engine, not the runtime's or
//! PyTorch's own plumbing (`rules/source_plumbing.toml`: `_call_impl`, built-ins…).

use super::call_paths::{CallPaths, NodeKind, PHASES};

/// The plumbing table, embedded.
pub const PLUMBING_TOML: &str = include_str!("../../rules/source_plumbing.toml");

/// Frame-name prefixes that are plumbing.
pub fn plumbing() -> &'static [String] {
    static P: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    P.get_or_init(|| {
        #[derive(serde::Deserialize)]
        struct Table {
            prefixes: Vec<String>,
        }
        toml::from_str::<Table>(PLUMBING_TOML).expect("source_plumbing.toml parses").prefixes
    })
}

/// One source line's GPU time.
#[derive(Debug, Clone)]
pub struct Source {
    /// The frame as Kineto names it: `file.py(line): function`.
    pub frame: String,
    /// GPU time per phase (ns).
    pub ns: [i64; PHASES],
    /// Kernels.
    pub kernels: u64,
    /// Kernel names by time, largest first (name, ns).
    pub top_kernels: Vec<(String, i64)>,
}

impl Source {
    /// The file, line and function of a frame name (`file.py(62): forward`).
    pub fn parts(&self) -> (&str, Option<u64>, &str) {
        let f = self.frame.as_str();
        match (f.find(".py("), f.find("): ")) {
            (Some(p), Some(c)) if c > p => (&f[..p + 3], f[p + 4..c].parse().ok(), &f[c + 3..]),
            _ => (f, None, ""),
        }
    }
}

/// Time by source line, largest first; kernels with no such frame on their path go to
/// `(no Python frame)` (a trace without `with_stack`, graph replays, GPU-only kernels).
pub fn sources(cp: &CallPaths) -> Vec<Source> {
    let prefixes = plumbing();
    // The source frame of each node: its own when it is a Python line, else its parent's.
    let mut source = vec![u32::MAX; cp.nodes.len()];
    for i in 1..cp.nodes.len() {
        let n = &cp.nodes[i];
        let own = n.kind == NodeKind::Python && {
            let name = cp.name(i);
            !prefixes.iter().any(|p| name.starts_with(p.as_str()))
        };
        source[i] = if own { n.label } else { source[n.parent as usize] };
    }
    let mut by_label: std::collections::HashMap<u32, Source> = std::collections::HashMap::new();
    let mut kernels_of: std::collections::HashMap<(u32, u32), i64> = std::collections::HashMap::new();
    for (i, n) in cp.nodes.iter().enumerate().filter(|(_, n)| n.kernels > 0) {
        let s = by_label.entry(source[i]).or_insert_with(|| Source {
            frame: if source[i] == u32::MAX { "(no Python frame)".to_string() } else { cp.labels[source[i] as usize].clone() },
            ns: [0; PHASES],
            kernels: 0,
            top_kernels: Vec::new(),
        });
        for k in 0..PHASES {
            s.ns[k] = s.ns[k].saturating_add(n.self_ns[k]);
        }
        s.kernels += u64::from(n.kernels);
        let own = crate::support::sat::SatSum::sat_sum(n.self_ns.iter().copied());
        let total = kernels_of.entry((source[i], n.label)).or_default();
        *total = total.saturating_add(own);
    }
    for ((src, kernel), ns) in kernels_of {
        by_label.get_mut(&src).expect("source seen").top_kernels.push((cp.labels[kernel as usize].clone(), ns));
    }
    let mut out: Vec<Source> = by_label.into_values().collect();
    for s in &mut out {
        s.top_kernels.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        s.top_kernels.truncate(3);
    }
    out.sort_by(|a, b| b.ns.iter().sum::<i64>().cmp(&a.ns.iter().sum::<i64>()).then_with(|| a.frame.cmp(&b.frame)));
    out
}
