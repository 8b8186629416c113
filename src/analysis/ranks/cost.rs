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
//! The run's jitter is measured from the run: how much a rank's arrival, relative to the median
//! arrival, changes from one collective to the next (the 75th percentile over ranks and
//! consecutive collectives, at least [`MIN_JITTER_NS`]). A rank late at every collective by the
//! same amount changes nothing from one to the next, so its lateness is skew, not jitter; a rank
//! delayed at some collectives changes few consecutive pairs.

use super::Collective;

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

/// The run's jitter, ns (see the module's text): the 75th percentile, over ranks and consecutive
/// collectives, of how much a rank's arrival relative to the median arrival changes from one
/// collective to the next; at least [`MIN_JITTER_NS`].
pub fn jitter_ns(collectives: &[Collective]) -> i64 {
    let relative = |c: &Collective| -> Vec<i64> {
        let mut starts: Vec<i64> = c.sides.iter().map(|s| s.start_ns).collect();
        starts.sort_unstable();
        let median = starts[starts.len() / 2];
        c.sides.iter().map(|s| s.start_ns - median).collect()
    };
    let mut changes: Vec<i64> = Vec::new();
    let mut previous: Option<Vec<i64>> = None;
    for c in collectives.iter().filter(|c| !c.sides.is_empty()) {
        let now = relative(c);
        if let Some(p) = previous.as_ref().filter(|p| p.len() == now.len()) {
            changes.extend(p.iter().zip(&now).map(|(a, b)| (b - a).abs()));
        }
        previous = Some(now);
    }
    if changes.is_empty() {
        return MIN_JITTER_NS;
    }
    changes.sort_unstable();
    changes[(changes.len() * 3 / 4).min(changes.len() - 1)].max(MIN_JITTER_NS)
}

/// The jitter is never taken below this (ns): kernel launches and clock alignment vary by about a
/// microsecond.
pub const MIN_JITTER_NS: i64 = 1_000;

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
