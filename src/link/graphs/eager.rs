//! Without a capture trace: a replayed kernel sequence that some eager stretch of the same trace
//! also ran (the same kernel names in the same order, at least [`MIN_RUN`] of them, or the whole
//! replay) takes that stretch's ops, by name only. Nothing is given where the sequences differ.

use crate::model::graphs::OpFrom;
use crate::model::{FastMap, Trace, NONE};

/// Shortest run of equal kernel names that counts as the same code (shorter runs of common
/// kernels, such as a copy then a fill, match by chance).
pub const MIN_RUN: usize = 8;

/// Candidate starts kept per key (the first ones: enough to find a run, bounded work).
const STARTS_PER_KEY: usize = 16;

/// The eager GPU rows of a trace in time order, indexed by the keys of three rows in a row.
pub struct EagerIndex {
    /// Eager rows (with a CPU op from their launch), by start time.
    pub rows: Vec<u32>,
    /// Their keys (see `super::row_key`).
    pub keys: Vec<u32>,
    starts: FastMap<[u32; 3], Vec<u32>>,
}

impl EagerIndex {
    /// Indexes the rows of `t` that have an op of their own (not replayed from a graph).
    pub fn new(t: &Trace, key: impl Fn(usize) -> u32) -> EagerIndex {
        let g = &t.gpu;
        let mut rows: Vec<u32> = (0..g.len())
            .filter(|&i| {
                let l = g.launch[i];
                g.cpu_op[i] != NONE && t.op_from(i) == OpFrom::Launch && (l == NONE || !t.launches.is_graph[l as usize])
            })
            .map(|i| i as u32)
            .collect();
        rows.sort_by_key(|&i| (g.ts[i as usize], g.stream[i as usize]));
        let keys: Vec<u32> = rows.iter().map(|&i| key(i as usize)).collect();
        let mut starts: FastMap<[u32; 3], Vec<u32>> = FastMap::default();
        for p in 0..keys.len().saturating_sub(2) {
            let v = starts.entry([keys[p], keys[p + 1], keys[p + 2]]).or_default();
            if v.len() < STARTS_PER_KEY {
                v.push(p as u32);
            }
        }
        EagerIndex { rows, keys, starts }
    }

    /// Runs of `replayed` that an eager stretch also ran: `(replay position, eager position,
    /// length)`, each at least [`MIN_RUN`] long or the whole replay, not overlapping.
    pub fn runs(&self, replayed: &[u32]) -> Vec<(usize, usize, usize)> {
        let mut out = Vec::new();
        let need = MIN_RUN.min(replayed.len()).max(3);
        let mut p = 0;
        while p + 3 <= replayed.len() {
            let best = self
                .starts
                .get(&[replayed[p], replayed[p + 1], replayed[p + 2]])
                .into_iter()
                .flatten()
                .map(|&e| {
                    let e = e as usize;
                    let len = replayed[p..].iter().zip(&self.keys[e..]).take_while(|(a, b)| a == b).count();
                    (len, e)
                })
                .max_by_key(|&(len, e)| (len, std::cmp::Reverse(e)));
            match best {
                Some((len, e)) if len >= need => {
                    out.push((p, e, len));
                    p += len;
                }
                _ => p += 1,
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(keys: &[u32]) -> EagerIndex {
        let mut starts: FastMap<[u32; 3], Vec<u32>> = FastMap::default();
        for p in 0..keys.len() - 2 {
            starts.entry([keys[p], keys[p + 1], keys[p + 2]]).or_default().push(p as u32);
        }
        EagerIndex { rows: (0..keys.len() as u32).collect(), keys: keys.to_vec(), starts }
    }

    #[test]
    fn a_replay_takes_the_eager_stretch_that_ran_the_same_kernels() {
        let eager: Vec<u32> = (0..20).chain(100..110).collect();
        let idx = index(&eager);
        // The replay runs kernels 100..110 (one eager layer), then 0..10.
        let replay: Vec<u32> = (100..110).chain(0..10).collect();
        assert_eq!(idx.runs(&replay), vec![(0, 20, 10), (10, 0, 10)]);
    }

    #[test]
    fn short_chance_matches_and_different_sequences_take_nothing() {
        let eager: Vec<u32> = (0..30).collect();
        let idx = index(&eager);
        let replay: Vec<u32> = vec![5, 6, 7, 8, 50, 51, 52, 53, 54, 55, 56, 57];
        assert!(idx.runs(&replay).is_empty(), "4 kernels in common is not the same code");
        let whole: Vec<u32> = vec![5, 6, 7, 8];
        assert_eq!(idx.runs(&whole), vec![(0, 5, 4)], "a replay shorter than a run matches whole");
    }
}
