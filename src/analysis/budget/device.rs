//! What one device was busy with, moment by moment: its GPU rows flattened into sorted spans that
//! do not overlap, each labelled once. Compute kernels first (an instant two kernels share goes to
//! the one that started first), then collectives no compute covers (exposed communication), then
//! copies and fills nothing else covers (copies to or from pageable host memory apart). The holes
//! between spans are the device's idle.

use crate::analysis::categories::KernelCategories;
use crate::analysis::timeline::merge;
use crate::model::{GpuKind, Trace};

/// What a busy span ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Busy {
    /// A compute kernel: its category (id into `KernelCategories::categories`) and its GPU row.
    Compute(u16, u32),
    /// A collective with no compute kernel beside it.
    Communication,
    /// A copy or fill with no kernel beside it.
    Copy,
    /// A copy to or from pageable host memory (the memcpy's kind says `Pageable`) with no kernel
    /// beside it.
    PageableCopy,
}

/// One device's busy spans and its GPU rows by start.
#[derive(Debug, Clone, Default)]
pub struct DeviceTime {
    /// The device.
    pub device: i32,
    /// Busy spans: start, end, what (sorted, disjoint).
    pub spans: Vec<(i64, i64, Busy)>,
    /// Every GPU row of the device with a positive duration, as (start, row), sorted.
    pub starts: Vec<(i64, u32)>,
}

impl DeviceTime {
    /// Rows that start at `ts`, looked up from `*at` forward (an index into `starts` no later
    /// than the first row at `ts`; left at that row): what a walk through time in order uses
    /// instead of a search per idle.
    pub fn rows_starting_from(&self, at: &mut usize, ts: i64) -> impl Iterator<Item = u32> + '_ {
        while *at < self.starts.len() && self.starts[*at].0 < ts {
            *at += 1;
        }
        self.starts[*at..].iter().take_while(move |&&(s, _)| s == ts).map(|&(_, r)| r)
    }
    /// A GPU row of `kind` (copies: memcpy or memset) that runs at `ts`, the latest to start
    /// among the 256 that start at or before it; [`crate::model::NONE`] when none does.
    pub fn row_running_at(&self, g: &crate::model::GpuEvents, ts: i64, copy: bool) -> u32 {
        let upto = self.starts.partition_point(|&(s, _)| s <= ts);
        self.starts[upto.saturating_sub(256)..upto]
            .iter()
            .rev()
            .map(|&(_, r)| r)
            .find(|&r| g.end(r as usize) > ts && (g.kind[r as usize] != GpuKind::Kernel) == copy)
            .unwrap_or(crate::model::NONE)
    }
    /// Index of the first span that ends after `ts`.
    pub fn first_span_after(&self, ts: i64) -> usize {
        self.spans.partition_point(|&(_, e, _)| e <= ts)
    }
}

/// The busy spans of every device that ran anything, by device number.
pub fn device_times(t: &Trace, cats: &KernelCategories) -> Vec<DeviceTime> {
    let g = &t.gpu;
    let mut devices: Vec<i32> = g.device.clone();
    devices.sort_unstable();
    devices.dedup();
    let mut rows: Vec<Vec<(i64, u32)>> = vec![Vec::new(); devices.len()];
    for r in 0..g.len() {
        if g.dur[r] > 0 {
            let d = devices.binary_search(&g.device[r]).expect("listed");
            rows[d].push((g.ts[r], r as u32));
        }
    }
    devices
        .into_iter()
        .zip(rows)
        .map(|(device, mut starts)| {
            // Mostly in time order already (each stream's rows are): the stable sort finds the
            // runs; the keys are unique, so the order is the same as any sort's.
            starts.sort();
            let spans = spans_of(t, cats, &starts);
            DeviceTime { device, spans, starts }
        })
        .collect()
}

fn spans_of(t: &Trace, cats: &KernelCategories, starts: &[(i64, u32)]) -> Vec<(i64, i64, Busy)> {
    let g = &t.gpu;
    let comm = cats.communication_flags();
    let mut compute: Vec<(i64, i64, Busy)> = Vec::new();
    let mut collectives: Vec<(i64, i64)> = Vec::new();
    let mut copy: Vec<(i64, i64)> = Vec::new();
    let mut pageable: Vec<(i64, i64)> = Vec::new();
    let mut cover = Cover::default();
    for &(s, r) in starts {
        let r = r as usize;
        let e = g.end(r);
        match g.kind[r] {
            GpuKind::Kernel if comm[cats.of_row[r] as usize] => collectives.push((s, e)),
            GpuKind::Kernel => {
                if let Some((from, to)) = cover.claim(s, e) {
                    compute.push((from, to, Busy::Compute(cats.of_row[r], r as u32)));
                }
            }
            GpuKind::Memcpy if crate::analysis::budget::syncs::is_pageable_copy(t, r) => pageable.push((s, e)),
            GpuKind::Memcpy | GpuKind::Memset => copy.push((s, e)),
        }
    }
    let (collectives, copy, pageable) = (merge(collectives), merge(copy), merge(pageable));
    let compute_union: Vec<(i64, i64)> = compute.iter().map(|&(s, e, _)| (s, e)).collect();
    let comm_exposed = subtract(&collectives, &compute_union);
    let kernels = merge(compute_union.iter().chain(&collectives).copied().collect());
    // A pageable copy's instant is its own, before another copy's: its fix differs.
    let pageable_exposed = subtract(&pageable, &kernels);
    let copy_exposed = subtract(&subtract(&copy, &kernels), &pageable_exposed);
    let mut out = compute;
    out.extend(comm_exposed.into_iter().map(|(s, e)| (s, e, Busy::Communication)));
    out.extend(copy_exposed.into_iter().map(|(s, e)| (s, e, Busy::Copy)));
    out.extend(pageable_exposed.into_iter().map(|(s, e)| (s, e, Busy::PageableCopy)));
    // Three sorted lists of disjoint spans: the stable sort merges the runs.
    out.sort_by_key(|x| x.0);
    out
}

/// Compute kernels taken in order of start, each claiming the part of its span no earlier-starting
/// kernel covered: the rule by which an instant two kernels share goes to the one that started
/// first (the budget's busy spans, and compare's busy time by kernel).
#[derive(Debug, Clone, Copy)]
pub struct Cover {
    covered: i64,
}

impl Default for Cover {
    fn default() -> Self {
        Cover { covered: i64::MIN }
    }
}

impl Cover {
    /// The part of `[s, e)` (the next kernel by start) nothing before covered, if any.
    pub fn claim(&mut self, s: i64, e: i64) -> Option<(i64, i64)> {
        (e > self.covered).then(|| {
            let from = s.max(self.covered);
            self.covered = e;
            (from, e)
        })
    }
}

/// The parts of `a` outside `b` (both sorted, disjoint).
fn subtract(a: &[(i64, i64)], b: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    let mut j = 0;
    for &(s, e) in a {
        let mut from = s;
        while j < b.len() && b[j].1 <= from {
            j += 1;
        }
        let mut k = j;
        while k < b.len() && b[k].0 < e {
            if b[k].0 > from {
                out.push((from, b[k].0));
            }
            from = from.max(b[k].1);
            k += 1;
        }
        if from < e {
            out.push((from, e));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::subtract;

    #[test]
    fn subtracting_intervals_keeps_what_the_other_list_leaves() {
        assert_eq!(subtract(&[(0, 10), (20, 30)], &[(2, 4), (8, 22), (25, 26)]), vec![(0, 2), (4, 8), (22, 25), (26, 30)]);
        assert_eq!(subtract(&[(0, 10)], &[]), vec![(0, 10)]);
        assert_eq!(subtract(&[(5, 6)], &[(0, 10)]), Vec::<(i64, i64)>::new());
        // Collectives [0, 20) and [30, 40) against compute [2, 4) and [15, 35): 13 + 5 ns exposed.
        let exposed: i64 = subtract(&[(0, 20), (30, 40)], &[(2, 4), (15, 35)]).iter().map(|(s, e)| e - s).sum();
        assert_eq!(exposed, 18);
    }
}
