//! Transformer layer detection. PLACEHOLDER until issue 5 lands.
//! The interface (`Layers`) is the contract other analyses use.

use super::categories::KernelCategories;
use super::phases::Phases;
use super::Options;
use crate::model::{Trace, NONE};

/// Where a kernel sits relative to the decoder layers of its pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Before the first layer (embedding...).
    Pre,
    /// Inside a layer.
    Layer,
    /// After the last layer (final norm, LM head, sampling).
    Post,
    /// Not in any pass.
    None,
}

/// Layer assignment of every GPU row.
#[derive(Debug, Clone, Default)]
pub struct Layers {
    /// Layer index within its pass, or `NONE`.
    pub layer_of_row: Vec<u32>,
    /// Layer type of each row's layer (e.g. "MHA_FC"), empty if none.
    pub type_of_row: Vec<String>,
    pub role_of_row: Vec<Role>,
    /// Layers per pass (index = pass index).
    pub layers_per_pass: Vec<u32>,
}

/// Detects layers in every pass.
pub fn detect(trace: &Trace, _c: &KernelCategories, _p: &Phases, _o: &Options) -> Layers {
    let n = trace.gpu.len();
    Layers { layer_of_row: vec![NONE; n], type_of_row: vec![String::new(); n], role_of_row: vec![Role::None; n], layers_per_pass: Vec::new() }
}
