//! What each collective's time went to: moving data or waiting for a late rank (vLLM RFC #52777's
//! classes).
//!
//! A collective's cost over all `n` ranks is `n × transfer` (the zero-skew baseline: had every rank
//! arrived together, each would have spent the shortest rank's kernel time in it) plus `skew` (the
//! ranks' waits, summed). Its class:
//!
//! - `inconclusive`: too short to tell: its transfer and every rank's wait within the run's own
//!   jitter;
//! - `transfer`: nobody waits beyond the jitter, or the waits are at most ⅓ of the cost;
//! - `skew`: the waits are at least ⅔ of the cost;
//! - `mixed`: between.
//!
//! The run's jitter is measured from the run: the 90th percentile of the arrival spread (latest
//! start − earliest start) at the collectives nobody was late for (no rank [`LATE_FLOOR_NS`] after
//! the median one); with none, the floor itself.

use super::{Collective, LATE_FLOOR_NS};

/// A collective's cost class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CostClass {
    /// Moving the data: nobody waited (beyond jitter), or waiting is at most a third of the cost.
    Transfer,
    /// Waiting for a late rank is at least two thirds of the cost.
    Skew,
    /// Between.
    Mixed,
    /// Transfer and waits both within the run's jitter: too short to tell.
    Inconclusive,
}

impl CostClass {
    /// Every class, in table order.
    pub const ALL: [CostClass; 4] = [CostClass::Transfer, CostClass::Skew, CostClass::Mixed, CostClass::Inconclusive];

    /// The name used in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            CostClass::Transfer => "transfer",
            CostClass::Skew => "skew",
            CostClass::Mixed => "mixed",
            CostClass::Inconclusive => "inconclusive",
        }
    }

    /// The class of a cost made of `transfer` (n × the shortest kernel) and `wait` (summed), ns.
    pub fn of_cost(transfer: i64, wait: i64) -> CostClass {
        let cost = transfer + wait;
        if cost <= 0 || wait * 3 <= cost {
            CostClass::Transfer
        } else if wait * 3 >= cost * 2 {
            CostClass::Skew
        } else {
            CostClass::Mixed
        }
    }
}

/// The zero-skew cost of `c` over all its ranks: n × its transfer, ns.
pub fn transfer_cost_ns(c: &Collective) -> i64 {
    c.transfer_ns() * c.sides.len() as i64
}

/// `c`'s class against the run's jitter (ns).
pub fn class(c: &Collective, jitter_ns: i64) -> CostClass {
    let max_wait = c.sides.iter().map(|s| s.wait_ns).max().unwrap_or(0);
    if max_wait <= jitter_ns {
        return if c.transfer_ns() <= jitter_ns { CostClass::Inconclusive } else { CostClass::Transfer };
    }
    CostClass::of_cost(transfer_cost_ns(c), c.skew_ns())
}

/// The run's jitter, ns (see the module's text). `late_ns(c)` is how much later than the median
/// the last rank arrived at `c`.
pub fn jitter_ns(collectives: &[Collective], late_ns: impl Fn(&Collective) -> i64) -> i64 {
    let mut spreads: Vec<i64> = collectives.iter().filter(|c| late_ns(c) < LATE_FLOOR_NS).map(|c| c.start_skew_ns()).collect();
    if spreads.is_empty() {
        return LATE_FLOOR_NS;
    }
    spreads.sort_unstable();
    spreads[(spreads.len() * 9 / 10).min(spreads.len() - 1)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thirds_divide_the_classes() {
        assert_eq!(CostClass::of_cost(900, 100), CostClass::Transfer);
        assert_eq!(CostClass::of_cost(200, 100), CostClass::Transfer, "a third waiting");
        assert_eq!(CostClass::of_cost(100, 100), CostClass::Mixed);
        assert_eq!(CostClass::of_cost(100, 200), CostClass::Skew, "two thirds waiting");
        assert_eq!(CostClass::of_cost(0, 0), CostClass::Transfer);
    }
}
