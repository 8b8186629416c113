//! String interning: every name in a trace is stored once and referred to by a `NameId`.

use std::collections::HashMap;

/// Index of an interned string inside an [`Interner`].
pub type NameId = u32;

/// Id reserved for "no string" (an absent field).
pub const NO_NAME: NameId = 0;

/// Stores each distinct string once. Id 0 is the empty string, used for absent fields.
#[derive(Debug, Clone)]
pub struct Interner {
    ids: HashMap<Box<str>, NameId>,
    strings: Vec<Box<str>>,
}

impl Default for Interner {
    fn default() -> Self {
        let mut interner = Interner { ids: HashMap::new(), strings: Vec::new() };
        interner.intern("");
        interner
    }
}

impl Interner {
    /// Returns the id of `s`, adding it if it is new.
    pub fn intern(&mut self, s: &str) -> NameId {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = self.strings.len() as NameId;
        let boxed: Box<str> = s.into();
        self.strings.push(boxed.clone());
        self.ids.insert(boxed, id);
        id
    }

    /// Looks up an id without adding the string.
    pub fn get(&self, s: &str) -> Option<NameId> {
        self.ids.get(s).copied()
    }

    /// The string behind an id.
    pub fn resolve(&self, id: NameId) -> &str {
        &self.strings[id as usize]
    }

    /// Number of distinct strings (including the empty string).
    pub fn len(&self) -> usize {
        self.strings.len()
    }

    /// True when only the reserved empty string is stored.
    pub fn is_empty(&self) -> bool {
        self.strings.len() <= 1
    }
}
