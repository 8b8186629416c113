//! GPU timeline: busy compute, communication, memcpy and memset time, their overlap, and idle
//! time (micro-idle gaps below a threshold kept apart), per device. Intervals are merged per class
//! across streams, so kernels replayed from a graph count as busy like any other kernel.

use super::base::Base;
use crate::model::GpuKind;
use serde::Serialize;

/// Timeline totals of one device, all in ns.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Timeline {
    /// The device.
    pub device: i32,
    /// First GPU event start to last GPU event end.
    pub total: i64,
    /// Union of all GPU activity.
    pub busy: i64,
    /// Union of compute kernels (everything but communication, memcpy, memset).
    pub compute: i64,
    /// Union of communication kernels.
    pub comm: i64,
    /// Union of memcpys.
    pub memcpy: i64,
    /// Union of memsets.
    pub memset: i64,
    /// Compute ∩ communication.
    pub compute_comm_overlap: i64,
    /// Communication not hidden under compute.
    pub exposed_comm: i64,
    /// Memcpy not hidden under compute or communication.
    pub exposed_memcpy: i64,
    /// `total - busy`.
    pub idle: i64,
    /// Idle gaps shorter than the micro-idle threshold.
    pub micro_idle: i64,
    /// How many micro-idle gaps.
    pub micro_idle_gaps: u64,
    /// How many idle gaps in all.
    pub idle_gaps: u64,
}

/// Merges intervals (sorted by start) into disjoint ones.
pub fn merge(mut v: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    // Stable: merges the runs already in order (each stream's rows) instead of sorting from scratch.
    v.sort();
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(v.len());
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Union of two lists of disjoint intervals, each sorted by start (as [`merge`] returns them):
/// the same as `merge` of the two concatenated, in one linear pass instead of a sort.
pub fn union(a: &[(i64, i64)], b: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let next = if j == b.len() || (i < a.len() && a[i] <= b[j]) {
            i += 1;
            a[i - 1]
        } else {
            j += 1;
            b[j - 1]
        };
        match out.last_mut() {
            Some(last) if next.0 <= last.1 => last.1 = last.1.max(next.1),
            _ => out.push(next),
        }
    }
    out
}

/// Total length of disjoint intervals.
pub fn length(v: &[(i64, i64)]) -> i64 {
    v.iter().map(|(s, e)| e - s).sum()
}

/// Length of the intersection of two disjoint, sorted interval lists.
pub fn intersection(a: &[(i64, i64)], b: &[(i64, i64)]) -> i64 {
    let (mut i, mut j, mut total) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let s = a[i].0.max(b[j].0);
        let e = a[i].1.min(b[j].1);
        if e > s {
            total += e - s;
        }
        if a[i].1 < b[j].1 {
            i += 1
        } else {
            j += 1
        }
    }
    total
}

/// Timeline of every device in the trace, sorted by device id.
pub fn timelines(a: &Base) -> Vec<Timeline> {
    let g = &a.trace.gpu;
    let mut devices: Vec<i32> = g.device.clone();
    devices.sort_unstable();
    devices.dedup();
    let micro = (a.options.micro_idle_us * 1000.0) as i64;
    let cats = &a.categories;
    let comm_category = cats.communication_flags();
    devices
        .into_iter()
        .map(|d| {
            let (mut compute, mut comm, mut memcpy, mut memset) = (vec![], vec![], vec![], vec![]);
            for i in (0..g.len()).filter(|&i| g.device[i] == d) {
                let iv = (g.ts[i], g.end(i));
                match g.kind[i] {
                    GpuKind::Memcpy => memcpy.push(iv),
                    GpuKind::Memset => memset.push(iv),
                    GpuKind::Kernel if comm_category[cats.of_row[i] as usize] => comm.push(iv),
                    GpuKind::Kernel => compute.push(iv),
                }
            }
            let (compute, comm, memcpy, memset) = (merge(compute), merge(comm), merge(memcpy), merge(memset));
            // The union of unions is the union of everything: merging the merged lists needs no sort.
            let compute_or_comm = union(&compute, &comm);
            let all = union(&compute_or_comm, &union(&memcpy, &memset));
            let total = match (all.first(), all.last()) {
                (Some(f), Some(l)) => l.1 - f.0,
                _ => 0,
            };
            let busy = length(&all);
            let overlap = intersection(&compute, &comm);
            let mut t = Timeline {
                device: d,
                total,
                busy,
                compute: length(&compute),
                comm: length(&comm),
                memcpy: length(&memcpy),
                memset: length(&memset),
                compute_comm_overlap: overlap,
                exposed_comm: length(&comm) - overlap,
                exposed_memcpy: length(&memcpy) - intersection(&memcpy, &compute_or_comm),
                idle: total - busy,
                ..Default::default()
            };
            for w in all.windows(2) {
                let gap = w[1].0 - w[0].1;
                t.idle_gaps += 1;
                if gap < micro {
                    t.micro_idle += gap;
                    t.micro_idle_gaps += 1;
                }
            }
            t
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_and_intersects() {
        let a = merge(vec![(5, 10), (0, 3), (2, 4), (10, 12)]);
        assert_eq!(a, vec![(0, 4), (5, 12)]);
        assert_eq!(length(&a), 11);
        assert_eq!(intersection(&a, &[(3, 6), (11, 20)]), 1 + 1 + 1);
    }

    #[test]
    fn union_of_merged_lists_equals_merge_of_all() {
        // Touching, nested, zero-length and repeated intervals, in an order no list is sorted in.
        let x = vec![(5, 10), (0, 3), (2, 4), (10, 12), (20, 20), (30, 31), (14, 14)];
        let y = vec![(3, 5), (12, 13), (20, 25), (40, 40), (41, 45), (14, 14), (0, 1)];
        let expected = merge([&x[..], &y[..]].concat());
        assert_eq!(union(&merge(x.clone()), &merge(y.clone())), expected);
        assert_eq!(union(&merge(y), &merge(x)), expected);
        assert_eq!(union(&[], &[]), vec![]);
    }
}
