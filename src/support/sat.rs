//! Sums of trace-supplied times that saturate instead of wrapping: a trace may carry timestamps
//! and durations near `i64::MAX` nanoseconds (a writer's bug, or a mangled file), and a sum of two
//! of them must read as "very long", never as a negative time.

/// Saturating sum of nanosecond times.
pub trait SatSum {
    /// The sum, held at `i64::MAX` / `i64::MIN` instead of wrapping.
    fn sat_sum(self) -> i64;
}

impl<I: Iterator<Item = i64>> SatSum for I {
    fn sat_sum(self) -> i64 {
        self.fold(0i64, i64::saturating_add)
    }
}

#[cfg(test)]
mod tests {
    use super::SatSum;

    #[test]
    fn sums_saturate() {
        assert_eq!([i64::MAX - 1, 5].into_iter().sat_sum(), i64::MAX);
        assert_eq!([1, 2, 3].into_iter().sat_sum(), 6);
    }
}
