//! `traceprism layers`: the transformer layers of each forward pass, in the terminal.

use super::args::Args;
use traceprism::Result;

/// Prints the layer view; `--debug-layers 0,1,2` also lists the kernels of those layers.
pub fn run(a: &Args) -> Result<()> {
    a.reject_unknown_capturing(&[])?;
    let analysis = super::load(a.one_trace()?, a)?;
    super::out(&traceprism::report::layers_view(analysis, &a.debug_layers));
    Ok(())
}
