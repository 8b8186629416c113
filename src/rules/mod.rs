//! Rules as data: kernel categories, phase signals, layer markers, the families' colours.
//!
//! Every table is a readable TOML file in this folder, embedded with `include_str!` by the module
//! that reads it: `categories.toml` here (`categories.rs`); the others by their analysis:
//! `phase_signals.toml` (`analysis/steps/rules.rs`), `layer_markers.toml`
//! (`analysis/layers/markers.rs`), `roofline_ops.toml` and `devices.toml` (`analysis/roofline/`),
//! `compare_equivalents.toml` (`analysis/compare/equivalents.rs`), `source_plumbing.toml`
//! (`analysis/code/sources.rs`) and `host_activities.toml` (`analysis/findings/host_activity.rs`:
//! what the host was doing while the GPU idled, and what removes it).

pub mod categories;
pub mod palette;
