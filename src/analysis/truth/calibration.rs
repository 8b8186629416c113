//! Does confidence mean something? Each pass is right or wrong against the truth (the phase its
//! matched kernels' truth gives most of their time); passes are counted per confidence bucket,
//! with how many are right and how many are doubted ([`crate::analysis::phases::Pass::doubt`]).
//! A wrong pass that is not doubted is the failure this table exists to show.

use super::{match_rows, Truth};
use crate::analysis::Analysis;
use std::collections::HashMap;
use std::fmt;

/// Upper bounds of the confidence buckets (the last one includes 1.0).
pub const BUCKETS: [f32; 4] = [0.5, 0.7, 0.9, 1.0];

/// Passes of one confidence bucket.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Bucket {
    /// Passes with a truth phase in this bucket.
    pub passes: usize,
    /// Of them, right.
    pub right: usize,
    /// Of them, doubted.
    pub doubted: usize,
    /// Right passes doubted (flags on passes that needed none).
    pub right_doubted: usize,
    /// Wrong passes not doubted.
    pub wrong_unflagged: usize,
}

/// Passes per confidence bucket, over one or several traces.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Calibration {
    /// One entry per [`BUCKETS`] bound.
    pub buckets: [Bucket; 4],
}

impl Calibration {
    /// Adds the passes of `a` judged against `truth`.
    pub fn add(&mut self, a: &Analysis, truth: &Truth) {
        let rows = match_rows(a, truth);
        // pass → truth phase → kernel time
        let mut by_pass: HashMap<u32, HashMap<&str, i64>> = HashMap::new();
        for (k, row) in truth.kernels.iter().zip(&rows) {
            let Some(r) = *row else { continue };
            let pass = a.phases.pass_of_row[r];
            *by_pass.entry(pass).or_default().entry(k.phase.as_str()).or_insert(0) += a.trace.gpu.dur[r];
        }
        for p in &a.phases.passes {
            let Some(phases) = by_pass.get(&p.index) else { continue };
            let Some((truth_phase, _)) = phases.iter().max_by_key(|(name, t)| (**t, std::cmp::Reverse(**name))) else {
                continue;
            };
            let k = BUCKETS.iter().position(|&b| p.confidence < b).unwrap_or(BUCKETS.len() - 1);
            let b = &mut self.buckets[k];
            let right = *truth_phase == p.phase.as_str();
            let doubted = p.doubt.is_some();
            b.passes += 1;
            b.right += usize::from(right);
            b.doubted += usize::from(doubted);
            b.right_doubted += usize::from(right && doubted);
            b.wrong_unflagged += usize::from(!right && !doubted);
        }
    }

    /// Passes counted in all buckets.
    pub fn passes(&self) -> usize {
        self.buckets.iter().map(|b| b.passes).sum()
    }
    /// Wrong passes with no doubt on them.
    pub fn wrong_unflagged(&self) -> usize {
        self.buckets.iter().map(|b| b.wrong_unflagged).sum()
    }
    /// Right passes doubted.
    pub fn right_doubted(&self) -> usize {
        self.buckets.iter().map(|b| b.right_doubted).sum()
    }
}

impl fmt::Display for Calibration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "confidence   passes   right   share right   doubted   right but doubted   wrong, not doubted")?;
        let mut low = 0.0;
        for (b, &high) in self.buckets.iter().zip(&BUCKETS) {
            let close = if high >= 1.0 { ']' } else { ')' };
            let share = if b.passes == 0 { "-".to_string() } else { format!("{:.1}%", 100.0 * b.right as f64 / b.passes as f64) };
            writeln!(
                f,
                "[{low:.1}, {high:.1}{close}   {:>6}   {:>5}   {share:>11}   {:>7}   {:>17}   {:>18}",
                b.passes, b.right, b.doubted, b.right_doubted, b.wrong_unflagged
            )?;
            low = high;
        }
        Ok(())
    }
}
