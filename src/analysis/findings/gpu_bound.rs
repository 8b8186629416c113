//! `gpu_bound`: the GPU is busy at least [`GPU_BOUND_SHARE`] of the median step. No idle is left
//! to win back; what ran decides the step, so the finding ranks it (the budget's busy rows by
//! family, and the categories with most kernel time), judges it against the roof where shapes
//! were recorded, and says what recording them would tell where they were not. It claims no
//! time of its own: its saving is 0 and it ranks after every finding that saves something.

use super::{Finding, Group, Kind};
use crate::analysis::budget::{Part, What};
use crate::analysis::Analysis;

/// The share of the step the GPU must be busy for the step to be GPU-bound.
pub const GPU_BOUND_SHARE: f64 = 0.90;

/// The GPU-bound finding of `g`, if its median step is busy enough.
pub fn gpu_bound(a: &Analysis, g: &Group) -> Option<Finding> {
    let (per, ms) = (g.per(), g.median_step());
    let wall_us = g.wall_us();
    let busy_us = g.median_of(|s| s.busy_ns());
    if wall_us <= 0.0 || busy_us < GPU_BOUND_SHARE * wall_us {
        return None;
    }
    let b = a.budget();
    // Families by their median time a step.
    let mut families: Vec<(String, f64)> = Vec::new();
    for (f, name) in b.families.iter().enumerate() {
        let us = g.median_of(|s| {
            s.rows.iter().filter(|r| r.part == Part::Busy && r.what == What::Family(f as u16)).map(|r| r.ns).sum()
        });
        if us > 0.0 {
            families.push((name.clone(), us));
        }
    }
    for (part, label) in [(Part::ExposedCommunication, "exposed communication"), (Part::Copy, "copies")] {
        let us = g.median_of(|s| s.part_ns(part));
        if us > 0.0 {
            families.push((label.into(), us));
        }
    }
    families.sort_by(|x, y| y.1.total_cmp(&x.1));
    let ranked: Vec<String> = families.iter().take(5).map(|(n, us)| format!("{n} {:.0}%", 100.0 * us / wall_us)).collect();
    // The categories with most kernel time in the group's passes.
    let mut per_category: Vec<Option<i64>> = vec![None; a.categories.categories.len()];
    for p in &g.passes {
        for &r in &p.rows {
            *per_category[a.categories.of_row[r as usize] as usize].get_or_insert(0) += a.trace.gpu.dur[r as usize];
        }
    }
    let mut cats: Vec<(u16, i64)> = per_category.into_iter().enumerate().filter_map(|(c, ns)| Some((c as u16, ns?))).collect();
    cats.sort_by_key(|x| std::cmp::Reverse(x.1));
    let total: i64 = cats.iter().map(|x| x.1).sum();
    let top_cats: Vec<String> = cats
        .iter()
        .take(3)
        .map(|&(c, ns)| format!("{} {:.0}%", a.categories.categories[c as usize].name, 100.0 * ns as f64 / total.max(1) as f64))
        .collect();
    let roof = roof_words(a);
    let i = g.median_pass(|i| g.steps[i].wall_ns());
    let (from_ns, to_ns) = g.window(i);
    let mut evidence = format!(
        "the GPU is busy {:.1}% of {ms} ({busy_us:.1} of {wall_us:.1} µs): {}",
        100.0 * busy_us / wall_us,
        ranked.join(", ")
    );
    if !top_cats.is_empty() {
        evidence.push_str(&format!("; by category (share of kernel time): {}", top_cats.join(", ")));
    }
    Some(Finding {
        evidence,
        saving_us: 0.0,
        saving_pct: 0.0,
        fix: format!(
            "the step is the GPU's work: make the largest share cheaper (fewer or smaller kernels: a faster kernel for the top category, lower precision, larger batches per step) rather than the host; {roof}"
        ),
        check: format!("the top family's time {per} down, the GPU still busy"),
        from_ns,
        to_ns,
        ..g.finding(Kind::GpuBound)
    })
}

/// What the roofline says of the trace's GEMMs and attention, or what recording shapes would tell.
fn roof_words(a: &Analysis) -> String {
    let r = a.roofline();
    if r.rows.is_empty() {
        return "shapes were not recorded: record_shapes=True would let the roofline say how far each GEMM and attention call is from the device's roof, and so whether a faster kernel exists".into();
    }
    let Some(peaks) = &r.peaks else {
        return "the device's roofs are not known (no deviceProperties): give --device to judge its kernels against them".into();
    };
    let (mut weighted, mut ns) = (0.0, 0.0);
    for row in r.rows.iter().filter(|x| x.work.flops > 0.0) {
        weighted += row.against(peaks).pct_of_roof.min(100.0) * row.total_ns as f64;
        ns += row.total_ns as f64;
    }
    if ns <= 0.0 {
        return "no modelled op carries work the roofline can judge".into();
    }
    format!("the modelled ops reach {:.0}% of their roof, weighted by time (roofline tables)", weighted / ns)
}
