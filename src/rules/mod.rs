//! Rules as data: kernel categories, phase signals, layer markers, the families' colours.
//!
//! Each table is a readable TOML file next to its loader, embedded with `include_str!`.

pub mod categories;
pub mod palette;
