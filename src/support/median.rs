//! Medians of integer samples (durations, clock offsets), each picking a sample, never averaging.

/// The middle sample; for an even count the upper of the two middle ones. 0 for none.
pub fn upper_median(mut v: Vec<i64>) -> i64 {
    if v.is_empty() {
        return 0;
    }
    v.sort_unstable();
    v[v.len() / 2]
}

/// The middle sample; for an even count the lower of the two middle ones. 0 for none.
pub fn lower_median(mut v: Vec<i64>) -> i64 {
    if v.is_empty() {
        return 0;
    }
    v.sort_unstable();
    v[(v.len() - 1) / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_counts_agree_and_even_counts_pick_a_side() {
        assert_eq!((upper_median(vec![3, 1, 2]), lower_median(vec![3, 1, 2])), (2, 2));
        assert_eq!((upper_median(vec![4, 1, 3, 2]), lower_median(vec![4, 1, 3, 2])), (3, 2));
        assert_eq!((upper_median(vec![]), lower_median(vec![])), (0, 0));
    }
}
