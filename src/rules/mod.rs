//! Rules as data: kernel categories, phase signals, layer markers.
//!
//! Each table is a readable TOML file next to its loader, embedded with `include_str!`.

pub mod categories;
