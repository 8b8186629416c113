//! `traceprism layers`: the transformer layers of each forward pass, in the terminal.

use super::args::Args;
use traceprism::Result;

/// Prints the layer view; `--debug-layers 0,1,2` also lists the kernels of those layers;
/// `--json` the layers per pass and `layer_summary` as one JSON object.
pub fn run(a: &Args) -> Result<()> {
    let analysis = super::load(a.one_trace()?, a)?;
    if a.json {
        let v = traceprism::report::layers::layers_json(analysis);
        super::out(&format!("{}\n", serde_json::to_string_pretty(&v).map_err(|e| traceprism::Error::new(e.to_string()))?));
        return Ok(());
    }
    super::out(&traceprism::report::layers_view(analysis, &a.debug_layers));
    Ok(())
}
