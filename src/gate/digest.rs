//! A digest: what a later regression gate needs of a trace, small enough to keep as a CI baseline.
//!
//! Per phase (prefill, decode, mixed, denoise): the per-pass samples of GPU kernel time and of wall
//! duration, of the top categories' and the top kernels' time, and each layer's median time per
//! pass; with the device, the model's shape (layers per pass, layer kinds), the workload, the rules
//! and the tool's version. Times are integer nanoseconds and every map is ordered, so the same
//! trace gives the same bytes. A phase with more than [`MAX_SAMPLES`] passes keeps that many,
//! evenly spaced (a sample that size pins a median far below the gate's tolerance), so a digest of
//! 10,000 passes stays well under 1 MB.

use crate::analysis::phases::{Pass, Phase};
use crate::analysis::Analysis;
use crate::model::NONE;
use crate::support::median::upper_median;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// The digest format's version, under the key `traceprism_digest` (first in the file, so a reader
/// tells a digest from a trace by its first bytes).
pub const DIGEST_VERSION: u32 = 1;

/// Most passes sampled per phase.
pub const MAX_SAMPLES: usize = 1000;

/// Categories and kernels kept per phase (by their time in the phase).
pub const TOP: usize = 20;

/// Phases a digest keeps.
pub const PHASES: [Phase; 5] = [Phase::Prefill, Phase::Decode, Phase::Mixed, Phase::Denoise, Phase::NotInference];

/// What the gate needs of one trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Digest {
    /// The format's version ([`DIGEST_VERSION`]).
    pub traceprism_digest: u32,
    /// traceprism's version that wrote it.
    pub tool_version: String,
    /// The category rules: `built-in`, or the user's with their size.
    pub rules: String,
    /// The trace's file name.
    pub source: String,
    /// The first device's name.
    pub device: String,
    /// The workload (`llm_inference`, `diffusion`…).
    pub workload: String,
    /// Layers per whole pass (distinct values).
    pub layers_per_pass: Vec<u32>,
    /// Layer kinds of a typical pass, with their counts.
    pub layer_kinds: Vec<(String, u32)>,
    /// Per phase name.
    pub phases: BTreeMap<String, PhaseDigest>,
}

/// The samples of one phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct PhaseDigest {
    /// Whole passes of this phase in the trace.
    pub passes: usize,
    /// Of them, sampled here (the per-pass vectors' length).
    pub sampled: usize,
    /// Per sampled pass: GPU kernel time, ns.
    pub kernel_ns: Vec<i64>,
    /// Per sampled pass: wall duration (first kernel start to last end), ns.
    pub wall_ns: Vec<i64>,
    /// Top categories by time: per sampled pass, ns.
    pub categories: BTreeMap<String, Vec<i64>>,
    /// Top kernels by time: per sampled pass, ns.
    pub kernels: BTreeMap<String, Vec<i64>>,
    /// Per layer index: median kernel time per pass, ns.
    pub layer_median_ns: BTreeMap<u32, i64>,
}

/// Evenly spaced picks of at most `max` out of `n` (all when `n <= max`).
fn spaced(n: usize, max: usize) -> Vec<usize> {
    if n <= max {
        (0..n).collect()
    } else {
        (0..max).map(|k| k * n / max).collect()
    }
}

impl Digest {
    /// The digest of an analysed trace.
    pub fn of(a: &Analysis, source: &str) -> Digest {
        Digest::of_passes(a, source, &|_| true)
    }

    /// The digest of the passes of `a` that `keep` accepts (an A/A test's halves).
    pub fn of_passes(a: &Analysis, source: &str, keep: &dyn Fn(&Pass) -> bool) -> Digest {
        use crate::report::summary::{device_label, layer_kinds, layers_per_pass_of};
        let mut phases = BTreeMap::new();
        for phase in PHASES {
            let passes: Vec<&Pass> = a.phases.passes.iter().filter(|p| p.phase == phase && !p.incomplete && keep(p)).collect();
            if passes.is_empty() {
                continue;
            }
            phases.insert(phase.as_str().to_string(), phase_digest(a, &passes));
        }
        let mut layers_per_pass = layers_per_pass_of(a);
        layers_per_pass.sort_unstable();
        layers_per_pass.dedup();
        Digest {
            traceprism_digest: DIGEST_VERSION,
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            rules: match &a.options.category_rules {
                Some(text) => format!("built-in + user rules ({} lines)", text.lines().count()),
                None => "built-in".to_string(),
            },
            source: source.to_string(),
            device: device_label(&a.trace.meta),
            workload: a.phases.workload.kind.as_str().to_string(),
            layers_per_pass,
            layer_kinds: layer_kinds(a).into_iter().map(|k| (k.kind, k.count)).collect(),
            phases,
        }
    }

    /// The digest as JSON text (deterministic).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a digest serializes")
    }

    /// The name a digest gives its source: the file's name, without its folder.
    pub fn source_name(path: &std::path::Path) -> String {
        path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned())
    }

    /// The digest in the file at `path` when it is one, else the digest of the trace there, which
    /// `analyse` reads (a trace of gigabytes is read once, and not at all when it is a digest).
    pub fn of_file<A: std::ops::Deref<Target = Analysis>>(
        path: &std::path::Path,
        analyse: impl FnOnce() -> crate::error::Result<A>,
    ) -> crate::error::Result<Digest> {
        match Digest::read_file(path)? {
            Some(d) => Ok(d),
            None => Ok(Digest::of(&*analyse()?, &Digest::source_name(path))),
        }
    }

    /// The digest in the file at `path`, or `None` when the file is a trace (its first bytes tell,
    /// so a trace of gigabytes is not read twice).
    pub fn read_file(path: &std::path::Path) -> crate::error::Result<Option<Digest>> {
        let cannot = |e: std::io::Error| crate::error::Error::new(format!("cannot read {}: {e}", path.display()));
        let mut head = [0u8; 64];
        let n = std::fs::File::open(path).and_then(|mut f| std::io::Read::read(&mut f, &mut head)).map_err(cannot)?;
        if crate::read::sniff(&head[..n]) != crate::ingest::Format::Digest {
            return Ok(None);
        }
        let bytes = std::fs::read(path).map_err(cannot)?;
        match Digest::parse(&bytes) {
            Some(d) => d.map(Some).map_err(|e| crate::error::Error::new(format!("{}: {e}", path.display()))),
            None => Ok(None),
        }
    }

    /// Reads a digest; `None` when `bytes` are not one (a trace).
    pub fn parse(bytes: &[u8]) -> Option<crate::error::Result<Digest>> {
        if crate::read::sniff(bytes) != crate::ingest::Format::Digest {
            return None;
        }
        Some(
            serde_json::from_slice::<Digest>(bytes)
                .map_err(|e| crate::error::Error::new(format!("not a readable digest: {e}")))
                .and_then(|d| {
                    if d.traceprism_digest == DIGEST_VERSION {
                        Ok(d)
                    } else {
                        Err(crate::error::Error::new(format!(
                            "digest version {} (this traceprism reads version {DIGEST_VERSION})",
                            d.traceprism_digest
                        )))
                    }
                }),
        )
    }
}

fn phase_digest(a: &Analysis, passes: &[&Pass]) -> PhaseDigest {
    let t = &a.trace;
    let g = &t.gpu;
    let picks = spaced(passes.len(), MAX_SAMPLES);
    let chosen: Vec<&Pass> = picks.iter().map(|&k| passes[k]).collect();
    // Per chosen pass: kernel time, by category, by kernel name, by layer.
    let mut by_cat: Vec<HashMap<u16, i64>> = Vec::with_capacity(chosen.len());
    let mut by_kernel: Vec<HashMap<u32, i64>> = Vec::with_capacity(chosen.len());
    let mut by_layer: BTreeMap<u32, Vec<i64>> = BTreeMap::new();
    let (mut cat_total, mut kernel_total): (HashMap<u16, i64>, HashMap<u32, i64>) = Default::default();
    let mut kernel_ns = Vec::with_capacity(chosen.len());
    let mut wall_ns = Vec::with_capacity(chosen.len());
    for p in &chosen {
        let (mut cats, mut kernels, mut layers): (HashMap<u16, i64>, HashMap<u32, i64>, HashMap<u32, i64>) = Default::default();
        let mut total = 0;
        for &r in &p.rows {
            let r = r as usize;
            if g.kind[r] != crate::model::GpuKind::Kernel {
                continue;
            }
            let d = g.dur[r];
            total += d;
            *cats.entry(a.categories.of_row[r]).or_default() += d;
            *kernels.entry(g.name[r]).or_default() += d;
            let layer = a.layers.layer_of_row.get(r).copied().unwrap_or(NONE);
            if layer != NONE {
                *layers.entry(layer).or_default() += d;
            }
        }
        for (&c, &d) in &cats {
            *cat_total.entry(c).or_default() += d;
        }
        for (&k, &d) in &kernels {
            *kernel_total.entry(k).or_default() += d;
        }
        for (l, d) in layers {
            by_layer.entry(l).or_default().push(d);
        }
        kernel_ns.push(total);
        wall_ns.push(p.end_ns - p.start_ns);
        by_cat.push(cats);
        by_kernel.push(kernels);
    }
    let top = |totals: HashMap<u32, i64>, name: &dyn Fn(u32) -> String| -> Vec<(u32, String)> {
        let mut v: Vec<(u32, i64, String)> = totals.into_iter().map(|(k, d)| (k, d, name(k))).collect();
        v.sort_by(|x, y| y.1.cmp(&x.1).then(x.2.cmp(&y.2)));
        v.into_iter().take(TOP).map(|(k, _, n)| (k, n)).collect()
    };
    let cat_totals: HashMap<u32, i64> = cat_total.into_iter().map(|(c, d)| (c as u32, d)).collect();
    let categories = top(cat_totals, &|c| a.categories.categories[c as usize].name.clone())
        .into_iter()
        .map(|(c, name)| (name, by_cat.iter().map(|m| m.get(&(c as u16)).copied().unwrap_or(0)).collect()))
        .collect();
    let kernels = top(kernel_total, &|k| t.name(k).to_string())
        .into_iter()
        .map(|(k, name)| (name, by_kernel.iter().map(|m| m.get(&k).copied().unwrap_or(0)).collect()))
        .collect();
    PhaseDigest {
        passes: passes.len(),
        sampled: chosen.len(),
        kernel_ns,
        wall_ns,
        categories,
        kernels,
        layer_median_ns: by_layer.into_iter().map(|(l, v)| (l, upper_median(v))).collect(),
    }
}
