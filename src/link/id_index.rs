//! A map from non-negative integer ids (correlation, External id) to the first row that has them.
//!
//! Kineto's ids count up from a small number, so they usually fit a plain array indexed by
//! `id - min`: no hashing, one load per lookup. Sparse ids fall back to a hash map.

use crate::model::FastMap;
use crate::model::NONE;

/// First row per id.
pub enum IdIndex {
    /// Dense ids: `rows[id - min]`, `NONE` where absent.
    Dense {
        min: i64,
        rows: Vec<u32>,
    },
    Sparse(FastMap<i64, u32>),
}

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
        } else {
            let mut map = FastMap::default();
            for (id, row) in ids.filter(|&(id, _)| id >= 0) {
                map.entry(id).or_insert(row);
            }
            IdIndex::Sparse(map)
        }
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
        assert!(matches!(s, IdIndex::Sparse(_)));
        assert_eq!((d.get(5), d.get(6), d.get(7), d.get(4), d.get(8), d.get(-1)), (Some(0), Some(4), Some(1), None, None, None));
        assert_eq!((s.get(5), s.get(1 << 40), s.get(6), s.get(-1)), (Some(0), Some(1), None, None));
    }
}
