//! Putting GPU rows in time order.

/// Sorts `rows` (indices into `ts`) by `(ts[row], row)`. Rows usually come in that order already
/// (traces list each stream's kernels by start time): that is checked first, and a sort, when
/// needed, runs on contiguous `(time, row)` pairs rather than looking times up per comparison.
/// The result is the same as `rows.sort_by_key(|&r| (ts[r as usize], r))`.
pub fn sort_by_time(ts: &[i64], rows: &mut [u32]) {
    if rows.windows(2).all(|w| (ts[w[0] as usize], w[0]) <= (ts[w[1] as usize], w[1])) {
        return;
    }
    let mut keyed: Vec<(i64, u32)> = rows.iter().map(|&r| (ts[r as usize], r)).collect();
    // The stable sort merges runs already in order (each stream's rows usually are): keys are
    // distinct, so it gives the same order as any other sort.
    keyed.sort();
    for (slot, (_, r)) in rows.iter_mut().zip(keyed) {
        *slot = r;
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn sorts_by_time_then_row() {
        let ts = [30, 10, 10, 20, 5];
        let mut rows = vec![0, 2, 1, 3, 4];
        super::sort_by_time(&ts, &mut rows);
        assert_eq!(rows, vec![4, 1, 2, 3, 0]);
        let mut sorted = vec![4, 1, 2];
        super::sort_by_time(&ts, &mut sorted);
        assert_eq!(sorted, vec![4, 1, 2]);
    }
}
