//! Memo of a decision made once per interned name (kernel name, op name, `Input Dims` text).
//!
//! Analyses look at the same few thousand names again for every one of millions of rows; a plain
//! vector indexed by [`NameId`] answers a repeat with one load instead of a hash-map lookup.

use crate::model::NameId;

/// One optional value per interned name, filled on first use.
pub struct PerName<T> {
    slots: Vec<Option<T>>,
}

impl<T> PerName<T> {
    /// An empty memo for a trace with `names` interned strings (ids beyond that grow it).
    pub fn new(names: usize) -> Self {
        PerName { slots: std::iter::repeat_with(|| None).take(names).collect() }
    }

    /// The value for `id`, computed by `f` the first time.
    #[inline]
    pub fn get_or_insert_with(&mut self, id: NameId, f: impl FnOnce() -> T) -> &mut T {
        let i = id as usize;
        if i >= self.slots.len() {
            self.slots.resize_with(i + 1, || None);
        }
        self.slots[i].get_or_insert_with(f)
    }
}

impl<T> Default for PerName<T> {
    fn default() -> Self {
        PerName { slots: Vec::new() }
    }
}
