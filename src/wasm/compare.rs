//! Two analysed traces compared, as `traceprism compare A B` does.

use super::{js_error, to_js, Analyzer};
use crate::analysis::compare::CompareOptions;
use crate::analysis::options::Declared;
use crate::report;
use wasm_bindgen::prelude::*;

/// The comparison tables of two analysed traces (A first), as `traceprism compare A B` builds them.
#[wasm_bindgen]
pub struct Comparison {
    tables: Vec<crate::table::Table>,
    headline: String,
    labels: (String, String),
}

/// Compares two finished analyzers. `options_json` is the JSON form of
/// [`crate::analysis::compare::CompareOptions`] (missing fields take defaults; labels default to
/// each side's GPU name, or on one GPU model to what tells `source_a` and `source_b` apart).
#[wasm_bindgen]
pub fn compare(a: &Analyzer, b: &Analyzer, options_json: &str) -> Result<Comparison, JsValue> {
    let opts = CompareOptions::from_json(options_json).map_err(js_error)?;
    opts.validate().map_err(js_error)?;
    let (aa, ab) = (a.analysis()?, b.analysis()?);
    let c = crate::analysis::compare::compare(aa, ab, &opts).map_err(js_error)?;
    let tables = report::compare::tables_of(&c, aa, ab, &opts);
    Ok(Comparison { tables, headline: c.headline(), labels: (c.label_a.clone(), c.label_b.clone()) })
}

#[wasm_bindgen]
impl Comparison {
    /// The verdict in one sentence, the CLI's first line.
    pub fn headline(&self) -> String {
        self.headline.clone()
    }

    /// The labels the core gave the sides: `[a, b]` (given ones, else the GPU names, else the
    /// part of the file names that tells them apart).
    pub fn labels(&self) -> Vec<String> {
        vec![self.labels.0.clone(), self.labels.1.clone()]
    }

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

/// The digest of a finished analyzer (`traceprism digest`), as JSON text named after `source`.
#[wasm_bindgen]
pub fn digest(a: &Analyzer, source: &str) -> Result<String, JsValue> {
    Ok(crate::gate::Digest::of(a.analysis()?, source).to_json())
}

/// The regression gate of digest `new_json` against digest `base_json` (`traceprism gate`):
/// `{report, markdown}`. `options_json` holds `max_slowdown` (a share), `confidence` and `metric`
/// (`kernel` or `wall`); missing fields take the CLI's defaults.
#[wasm_bindgen]
pub fn gate(base_json: &str, new_json: &str, options_json: &str) -> Result<JsValue, JsValue> {
    use crate::gate::{Digest, GateOptions, GivenShare};
    let read = |text: &str, what: &str| -> Result<Digest, JsValue> {
        match Digest::parse(text.as_bytes()) {
            Some(Ok(d)) => Ok(d),
            Some(Err(e)) => Err(js_error(format!("{what}: {e}"))),
            None => Err(js_error(format!("{what}: not a traceprism digest"))),
        }
    };
    let (base, new) = (read(base_json, "baseline")?, read(new_json, "new")?);
    let o: serde_json::Value = serde_json::from_str(if options_json.trim().is_empty() { "{}" } else { options_json })
        .map_err(|e| js_error(format!("bad gate options: {e}")))?;
    // Checked as the CLI and MCP check them: a share out of range or an unknown metric is an
    // error, never read as the default.
    let number = |key: &str| -> Result<Option<GivenShare<'_>>, JsValue> {
        match o.get(key) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(v) => {
                v.as_f64().map(|x| Some(GivenShare::Number(x))).ok_or_else(|| js_error(format!("{key}: {v} is not a number")))
            }
        }
    };
    let metric = match o.get("metric") {
        None | Some(serde_json::Value::Null) => None,
        Some(v) => Some(v.as_str().ok_or_else(|| js_error(format!("metric: {v} is not kernel or wall")))?),
    };
    let opts =
        GateOptions::from_given(["max_slowdown", "confidence", "metric"], number("max_slowdown")?, number("confidence")?, metric)
            .map_err(|e| js_error(e.to_string()))?;
    let report = crate::gate::gate(&base, &new, &opts);
    let markdown = crate::gate::markdown::to_markdown(&report);
    to_js(&serde_json::json!({ "report": report, "markdown": markdown }))
}

/// How the page's folder watch takes each of `names` (an array of file names): `[{candidate,
/// group}]`, whether it reads the file and the key its window's rank files share, as the CLI's
/// watch decides ([`crate::gate::trend::WatchedName`]).
#[wasm_bindgen]
pub fn watch_names(names: Vec<String>) -> Result<JsValue, JsValue> {
    let taken: Vec<crate::gate::trend::WatchedName> = names.iter().map(|n| crate::gate::trend::WatchedName::of(n)).collect();
    to_js(&taken)
}

/// What one watched window shows (`traceprism watch`'s line as numbers), from its digest:
/// `{file, passes, decode_median_us, decode_p90_us, prefill_median_us, top_categories}`.
#[wasm_bindgen]
pub fn watch_window(digest_json: &str, file: &str) -> Result<JsValue, JsValue> {
    match crate::gate::Digest::parse(digest_json.as_bytes()) {
        Some(Ok(d)) => to_js(&crate::gate::trend::Window::of(&d, file)),
        Some(Err(e)) => Err(js_error(e.to_string())),
        None => Err(js_error("not a traceprism digest")),
    }
}
