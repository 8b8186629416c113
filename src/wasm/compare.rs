//! Two analysed traces compared, as `traceprism compare A B` does.

use super::{js_error, to_js, Analyzer};
use crate::analysis::compare::CompareOptions;
use crate::report;
use wasm_bindgen::prelude::*;

/// The comparison tables of two analysed traces (A first), as `traceprism compare A B` builds them.
#[wasm_bindgen]
pub struct Comparison {
    tables: Vec<crate::table::Table>,
}

/// Compares two finished analyzers. `options_json` is the JSON form of
/// [`crate::analysis::compare::CompareOptions`] (missing fields take defaults; labels default to
/// each side's GPU name).
#[wasm_bindgen]
pub fn compare(a: &Analyzer, b: &Analyzer, options_json: &str) -> Result<Comparison, JsValue> {
    let opts: CompareOptions = if options_json.trim().is_empty() {
        CompareOptions::default()
    } else {
        serde_json::from_str(options_json).map_err(|e| js_error(format!("bad compare options: {e}")))?
    };
    opts.validate().map_err(js_error)?;
    let tables = report::compare::compare_tables(a.analysis()?, b.analysis()?, &opts).map_err(js_error)?;
    Ok(Comparison { tables })
}

#[wasm_bindgen]
impl Comparison {
    /// Names of the comparison tables, in order.
    pub fn table_names(&self) -> Vec<String> {
        self.tables.iter().map(|t| t.name.clone()).collect()
    }

    /// One comparison table as `{name, columns, rows}`.
    pub fn table(&self, name: &str) -> Result<JsValue, JsValue> {
        to_js(self.find(name)?)
    }

    /// One comparison table as CSV text, byte for byte what `traceprism compare --out` writes.
    pub fn csv(&self, name: &str) -> Result<String, JsValue> {
        Ok(self.find(name)?.to_csv())
    }
}

impl Comparison {
    fn find(&self, name: &str) -> Result<&crate::table::Table, JsValue> {
        self.tables.iter().find(|t| t.name == name).ok_or_else(|| js_error(format!("no comparison table named {name:?}")))
    }
}
