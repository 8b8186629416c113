//! The tools `traceprism mcp` offers: each a question an agent asks of traces, answered by the
//! library functions the CLI calls, so an answer is the CLI's `--json` output (tables as pages).

use super::cache::Cache;
use super::page::{page, Filter, Query};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use traceprism::{Error, Result};

/// An answer: a JSON object (given as text and as structured content), or a JSON object with a
/// text of its own (a table page: its CSV).
pub enum Answer {
    Json(Value),
    JsonWithText(Value, String),
}

/// Rows per table in `compare` and `ranks` answers unless `max_rows` says otherwise.
pub const DEFAULT_MAX_ROWS: usize = 25;

fn to_json<T: serde::Serialize>(v: &T) -> Result<Value> {
    serde_json::to_value(v).map_err(|e| Error::new(e.to_string()))
}

/// Cuts each table (a JSON object with `rows`) to `max` rows, noting `rows_total` where it cut.
fn cut_tables(tables: &mut [Value], max: usize) {
    for t in tables {
        let Some(rows) = t.get_mut("rows").and_then(Value::as_array_mut) else { continue };
        let total = rows.len();
        if total > max {
            rows.truncate(max);
            t["rows_total"] = json!(total);
        }
    }
}

/// The most text one answer holds (an agent's context is small): tables beyond it are cut to
/// fewer rows, with a note saying so and how to page.
pub const MAX_ANSWER_BYTES: usize = 100_000;

/// Answers tool `name` with `args`, within [`MAX_ANSWER_BYTES`].
pub fn call(name: &str, args: &Map<String, Value>, cache: &mut Cache) -> Result<Answer> {
    let Some(tool) = TOOLS.iter().find(|t| t.name == name) else {
        let names: Vec<&str> = TOOLS.iter().map(|t| t.name).collect();
        return Err(Error::new(format!("no tool named '{name}' (tools: {})", names.join(", "))));
    };
    Ok(match (tool.call)(Value::Object(args.clone()), cache)? {
        Answer::Json(v) => Answer::Json(bounded(v)),
        Answer::JsonWithText(v, text) => Answer::JsonWithText(bounded(v), text),
    })
}

/// The row lists of an answer: its `rows`, or each of its `tables`' rows.
fn row_lists(v: &mut Value) -> Vec<&mut Value> {
    match v {
        Value::Object(m) if m.contains_key("rows") => vec![v],
        Value::Object(m) => match m.get_mut("tables").and_then(Value::as_array_mut) {
            Some(list) => list.iter_mut().filter(|t| t.get("rows").is_some()).collect(),
            None => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// `v` cut to fewer rows per table until its text fits [`MAX_ANSWER_BYTES`], with a `cut` note.
fn bounded(mut v: Value) -> Value {
    let size = |v: &Value| serde_json::to_string(v).map_or(0, |s| s.len());
    if size(&v) <= MAX_ANSWER_BYTES {
        return v;
    }
    let longest = row_lists(&mut v).iter().filter_map(|t| t["rows"].as_array().map(Vec::len)).max().unwrap_or(0);
    let mut max = longest;
    while max > 1 && size(&v) > MAX_ANSWER_BYTES {
        max /= 2;
        for t in row_lists(&mut v) {
            let Some(rows) = t.get_mut("rows").and_then(Value::as_array_mut) else { continue };
            let total = rows.len();
            if total > max {
                rows.truncate(max);
                if t.get("rows_total").is_none() {
                    t["rows_total"] = json!(total);
                }
            }
        }
    }
    if let Value::Object(m) = &mut v {
        m.insert(
            "cut".into(),
            json!(format!(
                "this answer would exceed {MAX_ANSWER_BYTES} bytes of text: tables are cut to {max} rows (each cut table says its rows_total); ask for one table with the `table` tool and page with `offset`, or give a smaller `max_rows`"
            )),
        );
    }
    v
}

/// One tool: its name, what it answers (for an agent choosing one), the schema of its argument
/// struct, and the call that answers it. [`TOOLS`] lists them all, as `report::TABLES` lists tables.
pub struct Tool {
    /// The tool's name.
    pub name: &'static str,
    /// What it answers, for an agent choosing one.
    pub description: &'static str,
    /// The JSON schema of its arguments (the argument struct's).
    pub schema: fn() -> Value,
    /// Reads the arguments into the tool's argument struct and answers.
    pub call: fn(Value, &mut Cache) -> Result<Answer>,
}

/// Every tool, in the order they are listed.
pub const TOOLS: &[Tool] = &[
    Tool {
        name: "summary",
        description: "What a trace holds and what it says: device, workload (llm_inference, training, diffusion), forward passes with their phase (prefill/decode/mixed) and doubt, layers per pass, kernel time by category, top kernels, warnings and the health checks. Start here. Times in µs. Same JSON as `traceprism summary --json`.",
        schema: TraceArgs::schema,
        call: |v, c| summary(parse("summary", v)?, c),
    },
    Tool {
        name: "doctor",
        description: "The trace's health: what the profiler recorded (CPU ops, kernels, shapes, stacks, step annotations, graphs...), what each gap limits, and the exact profiler setting that records it; broken JSON repaired, kernels dropped, events not read. Ask it when an answer looks thin or a summary warns. Same JSON as `traceprism doctor --json`.",
        schema: TraceArgs::schema,
        call: |v, c| doctor(parse("doctor", v)?, c),
    },
    Tool {
        name: "findings",
        description: "What to fix first, read from every step's time budget (the `step_budget` table): each cause of lost time the trace shows, by `kind`: host_activity (the host in a named range such as a data loader or scheduler), host_bound (launching kernels one by one), sync (after a synchronising call), stalled (waits with the next kernel queued), step_gaps (idle between steps), exposed_communication and exposed_copy (collectives or copies with nothing beside them), unlinked_idle (idle before work whose launch is not recorded), fusion (unfused chains), roofline (shapes far from the roof), or gpu_bound (a busy step, what ran ranked); ranked by what fixing it would save per step (µs and % of the step), with the figures it rests on, its confidence, the fix in the engine's or PyTorch's terms and what a re-profile should show. Ask it for \"what should I fix first?\". Same JSON as `traceprism findings --json`.",
        schema: TraceArgs::schema,
        call: |v, c| findings(parse("findings", v)?, c),
    },
    Tool {
        name: "tables",
        description: "The tables a trace analysis gives (names, columns and their types: int, float, us = microseconds, bool, text). Read one with `table`. Without `trace`, the columns are those of a built-in example.",
        schema: TablesArgs::schema,
        call: |v, c| tables(parse("tables", v)?, c),
    },
    Tool {
        name: "table",
        description: "One table of a trace, a page at a time (default 100 rows, never more than ~48 KB of CSV), optionally filtered on a column and sorted; says the total and matched row counts and the offset of the next page. The text is the page as CSV, the structured content its rows. Times in µs. Same rows as `traceprism table TRACE NAME --csv`.",
        schema: TableArgs::schema,
        call: |v, c| table(parse("table", v)?, c),
    },
    Tool {
        name: "compare",
        description: "Where trace A is slower than trace B, and why. `headline` says it in one sentence: per phase, A's median step against B's, a verdict (slower, faster, same, inconclusive) against the noise of each side's steps (`compare_verdict`), and the budget rows that add up to the difference (`compare_budget`: busy by category, kernels only one side runs, launch, host, queued, sync...). Then per phase and pass, by category, kernel, op and layer, fusions and the kernels only one side runs (ratio = A / B, gaps in µs per pass). Each table cut to `max_rows` rows (default 25; its full count in `rows_total`). Same tables as `traceprism compare A B --json`.",
        schema: CompareArgs::schema,
        call: |v, c| compare(parse("compare", v)?, c),
    },
    Tool {
        name: "ranks",
        description: "All ranks of one distributed run: collectives matched across ranks (sequence matching; those some rank lacks are named), clocks aligned, each rank's wait, the straggler named with the phase and layer it is late in and whether its host or its GPU made it late, each collective's cost class (transfer, skew, mixed, inconclusive). Give a folder, the rank files, or one Nsight Systems export of several processes. Each table cut to `max_rows` rows (default 25). Same JSON as `traceprism ranks --json`.",
        schema: RanksArgs::schema,
        call: |v, _| ranks(parse("ranks", v)?),
    },
    Tool {
        name: "gate",
        description: "Is NEW slower than BASELINE beyond noise? A statistical verdict per phase and overall: `no_change`, `improvement`, `regression` or `inconclusive` (each an answer, not an error; the CLI exits 0, 0, 1, 2), with the change and its confidence interval. BASELINE may be a trace or a digest (see `digest`). Same JSON as `traceprism gate BASELINE NEW --json`.",
        schema: GateArgs::schema,
        call: |v, c| gate(parse("gate", v)?, c),
    },
    Tool {
        name: "digest",
        description: "A small baseline of a trace for the gate: per phase, each pass's kernel and wall time. Save it to compare later builds against without keeping the trace. The JSON `traceprism digest TRACE --out FILE` writes.",
        schema: TraceArgs::schema,
        call: |v, c| digest(parse("digest", v)?, c),
    },
    Tool {
        name: "layers",
        description: "The transformer layers of each forward pass: layer count, layer-type sequence (dense, MoE, attention kinds) and kernel time per pass, and per layer its mean, min and max time by phase (µs). Same JSON as `traceprism layers TRACE --json`.",
        schema: TraceArgs::schema,
        call: |v, c| layers(parse("layers", v)?, c),
    },
];

/// A tool's arguments read into its argument struct; an argument the schema does not name, or of
/// the wrong type, is refused with the tool's name.
fn parse<A: serde::de::DeserializeOwned>(tool: &str, v: Value) -> Result<A> {
    serde_json::from_value(v).map_err(|e| Error::new(format!("{tool}: {e}")))
}

/// The arguments of a tool that reads one trace.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceArgs {
    /// The trace's path.
    trace: String,
    /// Capture traces (or folders) whose ops the trace's graph replays take.
    #[serde(default)]
    captures: Vec<String>,
}

impl TraceArgs {
    fn properties() -> Map<String, Value> {
        let v = json!({
            "trace": {"type": "string", "description": "path of a torch.profiler trace (.json or .json.gz), a JAX/TensorFlow .xplane.pb, or an Nsight Systems SQLite export (.sqlite)"},
            "captures": {"type": "array", "items": {"type": "string"}, "description": "capture traces (or folders) whose ops the trace's CUDA/HIP graph replays take"},
        });
        v.as_object().cloned().unwrap_or_default()
    }
    /// The schema: `trace` and `captures`.
    pub fn schema() -> Value {
        json!({"type": "object", "properties": Self::properties(), "required": ["trace"]})
    }
}

/// `tables`' arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TablesArgs {
    /// A trace whose tables to list; without it, a built-in example's.
    trace: Option<String>,
}

impl TablesArgs {
    /// The schema: an optional `trace`.
    pub fn schema() -> Value {
        json!({"type": "object", "properties": {"trace": {"type": "string", "description": "a trace whose tables to list (optional)"}}})
    }
}

/// `table`'s arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableArgs {
    trace: String,
    #[serde(default)]
    captures: Vec<String>,
    /// The table's name.
    name: String,
    filter: Option<FilterArgs>,
    sort: Option<SortArgs>,
    /// Rows per page.
    limit: Option<usize>,
    /// The page's first row.
    offset: Option<usize>,
}

/// Which rows of a table to keep.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FilterArgs {
    column: String,
    /// A value as written in CSV (a number is taken as its text).
    equals: Option<Value>,
    contains: Option<String>,
    min: Option<f64>,
    max: Option<f64>,
}

/// How to sort a table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SortArgs {
    column: String,
    #[serde(default)]
    descending: bool,
}

impl TableArgs {
    /// The schema: a trace, a table name, a filter, a sort and a page.
    pub fn schema() -> Value {
        let mut props = TraceArgs::properties();
        let more = json!({
            "name": {"type": "string", "description": "table name, from `tables` (kernel_summary, passes, phase_summary, layers, category_summary, health...)"},
            "filter": {"type": "object", "description": "keep rows whose `column` equals `equals` (as written in CSV), contains `contains`, or lies in [`min`, `max`]",
                "properties": {"column": {"type": "string"}, "equals": {"type": "string"}, "contains": {"type": "string"}, "min": {"type": "number"}, "max": {"type": "number"}}, "required": ["column"]},
            "sort": {"type": "object", "properties": {"column": {"type": "string"}, "descending": {"type": "boolean"}}, "required": ["column"]},
            "limit": {"type": "integer", "minimum": 1, "description": "rows per page (default 100)"},
            "offset": {"type": "integer", "minimum": 0, "description": "first row of the page (default 0)"},
        });
        props.extend(more.as_object().cloned().unwrap_or_default());
        json!({"type": "object", "properties": props, "required": ["trace", "name"]})
    }
}

/// `compare`'s arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompareArgs {
    a: String,
    b: String,
    phase: Option<String>,
    max_rows: Option<usize>,
}

impl CompareArgs {
    /// The schema: two traces, a phase, rows per table.
    pub fn schema() -> Value {
        json!({"type": "object", "properties": {
            "a": {"type": "string", "description": "path of trace A"},
            "b": {"type": "string", "description": "path of trace B"},
            "phase": {"type": "string", "enum": ["prefill", "decode", "all"], "description": "compare one phase (default all)"},
            "max_rows": {"type": "integer", "minimum": 1}},
            "required": ["a", "b"]})
    }
}

/// `ranks`' arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RanksArgs {
    paths: Vec<String>,
    align: Option<bool>,
    max_rows: Option<usize>,
}

impl RanksArgs {
    /// The schema: the rank files (or a folder), clock alignment, rows per table.
    pub fn schema() -> Value {
        json!({"type": "object", "properties": {
            "paths": {"type": "array", "items": {"type": "string"}, "description": "the rank trace files, or one folder holding them"},
            "align": {"type": "boolean", "description": "align clocks on the collectives (default true)"},
            "max_rows": {"type": "integer", "minimum": 1}},
            "required": ["paths"]})
    }
}

/// `gate`'s arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateArgs {
    baseline: String,
    new: String,
    max_slowdown: Option<f64>,
    confidence: Option<f64>,
    metric: Option<String>,
}

impl GateArgs {
    /// The schema: a baseline, a new trace, the slowdown allowed, the confidence and the metric.
    pub fn schema() -> Value {
        json!({"type": "object", "properties": {
            "baseline": {"type": "string", "description": "a trace or a digest file"},
            "new": {"type": "string", "description": "a trace (or a digest)"},
            "max_slowdown": {"type": "number", "description": "slowdown allowed, a share (0.03) or percent (3); default 3%"},
            "confidence": {"type": "number", "description": "confidence of the verdict, a share (0.99) or percent; default 0.99"},
            "metric": {"type": "string", "enum": ["kernel", "wall"], "description": "per-pass kernel time (default) or wall time"}},
            "required": ["baseline", "new"]})
    }
}

fn summary(args: TraceArgs, cache: &mut Cache) -> Result<Answer> {
    let a = cache.get(&args.trace, &args.captures)?;
    Ok(Answer::Json(to_json(&traceprism::report::summary::summary(&a))?))
}

fn doctor(args: TraceArgs, cache: &mut Cache) -> Result<Answer> {
    let a = cache.get(&args.trace, &args.captures)?;
    Ok(Answer::Json(traceprism::report::health::doctor_json(&args.trace, &a)))
}

fn findings(args: TraceArgs, cache: &mut Cache) -> Result<Answer> {
    let a = cache.get(&args.trace, &args.captures)?;
    Ok(Answer::Json(traceprism::analysis::findings::findings_json(&args.trace, &traceprism::analysis::findings::findings(&a))))
}

fn layers(args: TraceArgs, cache: &mut Cache) -> Result<Answer> {
    let a = cache.get(&args.trace, &args.captures)?;
    Ok(Answer::Json(traceprism::report::layers::layers_json(&a)))
}

fn digest(args: TraceArgs, cache: &mut Cache) -> Result<Answer> {
    let a = cache.get(&args.trace, &args.captures)?;
    let text = traceprism::gate::Digest::of(&a, &traceprism::gate::Digest::source_name(Path::new(&args.trace))).to_json();
    Ok(Answer::Json(serde_json::from_str(&text).map_err(|e| Error::new(e.to_string()))?))
}

fn tables(args: TablesArgs, cache: &mut Cache) -> Result<Answer> {
    let example;
    let kept;
    let a: &traceprism::Analysis = match &args.trace {
        Some(path) => {
            kept = cache.get(path, &[])?;
            &kept
        }
        None => {
            example = traceprism::pipeline::warm_up::warm_up()?;
            &example
        }
    };
    let list: Vec<Value> = traceprism::report::table_names()
        .iter()
        .filter_map(|n| traceprism::report::table(a, n))
        .map(|t| {
            let columns: Vec<Value> = t
                .columns
                .iter()
                .zip(&t.types)
                .map(|(c, ty)| json!({"name": c, "type": serde_json::to_value(ty).unwrap_or(Value::Null)}))
                .collect();
            json!({"name": t.name, "columns": columns})
        })
        .collect();
    Ok(Answer::Json(json!({ "tables": list })))
}

fn table(args: TableArgs, cache: &mut Cache) -> Result<Answer> {
    let name = args.name.as_str();
    let names = traceprism::report::table_names();
    if !names.contains(&name) {
        return Err(Error::new(format!("no table named '{name}' (tables: {})", names.join(", "))));
    }
    let a = cache.get(&args.trace, &args.captures)?;
    let t = traceprism::report::table(&a, name).ok_or_else(|| Error::new(format!("no table named '{name}'")))?;
    let filter = args.filter.map(|f| Filter {
        column: f.column,
        equals: f.equals.map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string)),
        contains: f.contains,
        min: f.min,
        max: f.max,
    });
    let sort = args.sort.map(|s| (s.column, s.descending));
    let q = Query { filter, sort, limit: args.limit, offset: args.offset.unwrap_or(0) };
    let (answer, csv) = page(&t, &q)?;
    Ok(Answer::JsonWithText(answer, csv))
}

fn compare(args: CompareArgs, cache: &mut Cache) -> Result<Answer> {
    let mut o = traceprism::analysis::compare::CompareOptions::default();
    if let Some(p) = args.phase {
        o.phase = p;
    }
    o.validate()?;
    o.source_a = Some(args.a.clone());
    o.source_b = Some(args.b.clone());
    let (ta, tb) = (cache.get(&args.a, &[])?, cache.get(&args.b, &[])?);
    let c = traceprism::analysis::compare::compare(&ta, &tb, &o)?;
    let tables = traceprism::report::compare::tables_of(&c, &ta, &tb, &o);
    let Value::Array(mut list) = to_json(&tables)? else { return Err(Error::new("compare tables are not a list")) };
    cut_tables(&mut list, args.max_rows.unwrap_or(DEFAULT_MAX_ROWS));
    Ok(Answer::Json(json!({ "headline": c.headline(), "tables": list })))
}

fn ranks(args: RanksArgs) -> Result<Answer> {
    let paths: Vec<PathBuf> = args.paths.into_iter().map(PathBuf::from).collect();
    if paths.is_empty() {
        return Err(Error::new("ranks needs `paths`: the rank trace files, or one folder holding them"));
    }
    let files = traceprism::pipeline::ranks::rank_files(&paths)?;
    let loaded = traceprism::pipeline::ranks::read_run(
        &files,
        &traceprism::Options::default(),
        None,
        &[],
        traceprism::analysis::ranks::RunOptions { align: args.align.unwrap_or(true) },
    )?;
    let tables = traceprism::report::ranks::run_tables(&loaded.run);
    let mut v = traceprism::pipeline::ranks::run_json(&loaded, &tables);
    if let Some(list) = v.get_mut("tables").and_then(Value::as_array_mut) {
        cut_tables(list, args.max_rows.unwrap_or(DEFAULT_MAX_ROWS));
    }
    Ok(Answer::Json(v))
}

fn gate(args: GateArgs, cache: &mut Cache) -> Result<Answer> {
    use traceprism::gate::{Digest, GateOptions, GivenShare};
    let mut digest_of = |path: &str| Digest::of_file(Path::new(path), || cache.get(path, &[]));
    let o = GateOptions::from_given(
        ["`max_slowdown`", "`confidence`", "`metric`"],
        args.max_slowdown.map(GivenShare::Number),
        args.confidence.map(GivenShare::Number),
        args.metric.as_deref(),
    )?;
    let (b, n) = (digest_of(&args.baseline)?, digest_of(&args.new)?);
    Ok(Answer::Json(to_json(&traceprism::gate::gate(&b, &n, &o))?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value of a schema property's type.
    fn example(property: &Value) -> Value {
        match property["type"].as_str() {
            Some("string") => property["enum"].get(0).cloned().unwrap_or(json!("x")),
            Some("array") => json!(["x"]),
            Some("integer") => json!(1),
            Some("number") => json!(0.5),
            Some("boolean") => json!(true),
            Some("object") => json!({"column": "x"}),
            other => panic!("no example of type {other:?}"),
        }
    }

    #[test]
    fn every_schema_property_is_a_field_of_its_argument_struct_and_nothing_else_is_taken() {
        type Check = fn(Value) -> Result<()>;
        let checks: [(&str, Check); 6] = [
            ("trace", |v| parse::<TraceArgs>("t", v).map(drop)),
            ("tables", |v| parse::<TablesArgs>("t", v).map(drop)),
            ("table", |v| parse::<TableArgs>("t", v).map(drop)),
            ("compare", |v| parse::<CompareArgs>("t", v).map(drop)),
            ("ranks", |v| parse::<RanksArgs>("t", v).map(drop)),
            ("gate", |v| parse::<GateArgs>("t", v).map(drop)),
        ];
        let schemas = [
            TraceArgs::schema(),
            TablesArgs::schema(),
            TableArgs::schema(),
            CompareArgs::schema(),
            RanksArgs::schema(),
            GateArgs::schema(),
        ];
        for ((what, check), schema) in checks.iter().zip(schemas) {
            let props = schema["properties"].as_object().unwrap();
            let full: Map<String, Value> = props.iter().map(|(k, p)| (k.clone(), example(p))).collect();
            check(Value::Object(full.clone())).unwrap_or_else(|e| panic!("{what}: every property read: {e}"));
            let mut extra = full;
            extra.insert("no_such_argument".into(), json!(1));
            assert!(check(Value::Object(extra)).is_err(), "{what}: an argument not in the schema is refused");
            for required in schema["required"].as_array().into_iter().flatten() {
                let mut lacking: Map<String, Value> = props.iter().map(|(k, p)| (k.clone(), example(p))).collect();
                lacking.remove(required.as_str().unwrap());
                assert!(check(Value::Object(lacking)).is_err(), "{what}: {required} is required");
            }
        }
        let names: Vec<&str> = TOOLS.iter().map(|t| t.name).collect();
        let mut unique = names.clone();
        unique.dedup();
        assert_eq!(names.len(), 10);
        assert_eq!(unique, names);
    }
}
