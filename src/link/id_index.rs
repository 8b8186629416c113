//! A map from non-negative integer ids (correlation, External id) to the first row that has them.
//!
//! Kineto's ids count up from a small number, so they usually fit a plain array indexed by
//! `id - min`: no hashing, one load per lookup. Ids that come in dense runs far apart (traces
//! stitched from several captures) fit arrays per block of ids, found through a small map of
//! blocks. Ids sparse everywhere fall back to a hash map (one random access into a large table per
//! lookup: the slowest form for hundreds of thousands of ids).

use crate::model::FastMap;
use crate::model::NONE;

/// First row per id.
pub enum IdIndex {
    /// Dense ids: `rows[id - min]`, `NONE` where absent.
    Dense {
        min: i64,
        rows: Vec<u32>,
    },
    /// Dense runs: block `id >> BLOCK_BITS` starts at `blocks[block]` in `rows`.
    Blocks {
        blocks: FastMap<i64, u32>,
        rows: Vec<u32>,
    },
    Sparse(FastMap<i64, u32>),
}

/// Ids per block of [`IdIndex::Blocks`] (4096: 16 KiB of rows per block).
const BLOCK_BITS: u32 = 12;
const BLOCK: i64 = 1 << BLOCK_BITS;

impl IdIndex {
    /// Indexes `(id, row)` pairs; negative ids (absent) are left out; the first row of an id wins.
    pub fn build(ids: impl Iterator<Item = (i64, u32)> + Clone) -> IdIndex {
        let (mut min, mut max, mut count) = (i64::MAX, i64::MIN, 0usize);
        for (id, _) in ids.clone().filter(|&(id, _)| id >= 0) {
            min = min.min(id);
            max = max.max(id);
            count += 1;
        }
        if count == 0 {
            return IdIndex::Sparse(FastMap::default());
        }
        let span = (max - min) as u64 + 1;
        if span <= 4 * count as u64 + 4096 {
            let mut rows = vec![NONE; span as usize];
            for (id, row) in ids.filter(|&(id, _)| id >= 0) {
                let slot = &mut rows[(id - min) as usize];
                if *slot == NONE {
                    *slot = row;
                }
            }
            IdIndex::Dense { min, rows }
        } else if let Some(blocks) = Self::blocks(ids.clone(), count) {
            blocks
        } else {
            let mut map = FastMap::default();
            map.reserve(count);
            for (id, row) in ids.filter(|&(id, _)| id >= 0) {
                map.entry(id).or_insert(row);
            }
            IdIndex::Sparse(map)
        }
    }

    /// The block form, if the ids occupy few enough blocks (the same density bound as the dense form).
    fn blocks(ids: impl Iterator<Item = (i64, u32)> + Clone, count: usize) -> Option<IdIndex> {
        let budget = (4 * count as u64 + 4096) / BLOCK as u64 + 1;
        let mut blocks: FastMap<i64, u32> = FastMap::default();
        let mut last = i64::MIN;
        for (id, _) in ids.clone().filter(|&(id, _)| id >= 0) {
            let b = id >> BLOCK_BITS;
            if b != last {
                last = b;
                let next = blocks.len() as u32;
                blocks.entry(b).or_insert(next);
                if blocks.len() as u64 > budget {
                    return None;
                }
            }
        }
        let mut rows = vec![NONE; blocks.len() * BLOCK as usize];
        let mut last = (i64::MIN, 0usize);
        for (id, row) in ids.filter(|&(id, _)| id >= 0) {
            let b = id >> BLOCK_BITS;
            if b != last.0 {
                last = (b, blocks[&b] as usize * BLOCK as usize);
            }
            let slot = &mut rows[last.1 + (id & (BLOCK - 1)) as usize];
            if *slot == NONE {
                *slot = row;
            }
        }
        Some(IdIndex::Blocks { blocks, rows })
    }

    /// The first row with `id`, if any.
    #[inline]
    pub fn get(&self, id: i64) -> Option<u32> {
        if id < 0 {
            return None;
        }
        match self {
            IdIndex::Dense { min, rows } => {
                let at = id.checked_sub(*min)?;
                rows.get(usize::try_from(at).ok()?).copied().filter(|&r| r != NONE)
            }
            IdIndex::Blocks { blocks, rows } => {
                let base = *blocks.get(&(id >> BLOCK_BITS))? as usize * BLOCK as usize;
                rows.get(base + (id & (BLOCK - 1)) as usize).copied().filter(|&r| r != NONE)
            }
            IdIndex::Sparse(map) => map.get(&id).copied(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_and_sparse_ids_give_the_first_row() {
        let dense = [(5, 0), (7, 1), (5, 2), (-1, 3), (6, 4)];
        let sparse = [(5, 0), (1 << 40, 1), (5, 2), (-1, 3)];
        let d = IdIndex::build(dense.iter().copied());
        let s = IdIndex::build(sparse.iter().copied());
        assert!(matches!(d, IdIndex::Dense { .. }));
        // Two far-apart ids: two small blocks (within the density bound), not one huge array.
        assert!(matches!(s, IdIndex::Blocks { .. }));
        assert_eq!((d.get(5), d.get(6), d.get(7), d.get(4), d.get(8), d.get(-1)), (Some(0), Some(4), Some(1), None, None, None));
        assert_eq!((s.get(5), s.get(1 << 40), s.get(6), s.get(-1)), (Some(0), Some(1), None, None));
    }

    #[test]
    fn dense_runs_far_apart_use_blocks() {
        // Three runs of 3000 ids, 10^8 apart, with one repeated id (first row wins) and gaps.
        let mut pairs: Vec<(i64, u32)> = Vec::new();
        for run in 0..3i64 {
            for k in 0..3000i64 {
                pairs.push((run * 100_000_000 + 4000 + 2 * k, pairs.len() as u32));
            }
        }
        pairs.push((4000, 99_999));
        pairs.push((-7, 5));
        let index = IdIndex::build(pairs.iter().copied());
        assert!(matches!(index, IdIndex::Blocks { .. }));
        for &(id, row) in &pairs[..9000] {
            assert_eq!(index.get(id), Some(row), "id {id}");
        }
        for id in [4001, 3999, 100_000_000 + 4001, 250_000_000, 1 << 50, -7, 0] {
            assert_eq!(index.get(id), None, "id {id}");
        }
        // Ids sparse everywhere stay in the hash map.
        let scattered: Vec<(i64, u32)> = (0..1000).map(|k| (k * 1_000_003, k as u32)).collect();
        let s = IdIndex::build(scattered.iter().copied());
        assert!(matches!(s, IdIndex::Sparse(_)));
        assert_eq!((s.get(1_000_003 * 999), s.get(7)), (Some(999), None));
    }
}
