//! The tools `traceprism mcp` offers: each a question an agent asks of traces, answered by the
//! library functions the CLI calls, so an answer is the CLI's `--json` output (tables as pages).

use super::cache::Cache;
use super::page::{page, Filter, Query};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use traceprism::analysis::compare::CompareOptions;
use traceprism::analysis::options::Declared;
use traceprism::Options;
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
        call: |v, c| summary(with_options("summary", v)?, c),
    },
    Tool {
        name: "doctor",
        description: "The trace's health: what the profiler recorded (CPU ops, kernels, shapes, stacks, step annotations, graphs...), what each gap limits, and the exact profiler setting that records it; broken JSON repaired, kernels dropped, events not read. Ask it when an answer looks thin or a summary warns. Same JSON as `traceprism doctor --json`.",
        schema: TraceArgs::schema,
        call: |v, c| doctor(with_options("doctor", v)?, c),
    },
    Tool {
        name: "findings",
        description: "What to fix first, read from every step's time budget (the `step_budget` table): each cause of lost time the trace shows, by `kind`: host_activity (the host in a named range such as a data loader or scheduler), host_bound (launching kernels one by one), sync (after a synchronising call), stalled (waits with the next kernel queued), step_gaps (idle between steps), exposed_communication and exposed_copy (collectives or copies with nothing beside them), unlinked_idle (idle before work whose launch is not recorded), fusion (unfused chains), roofline (shapes far from the roof), or gpu_bound (a busy step, what ran ranked); ranked by what fixing it would save per step (µs and % of the step), with the figures it rests on, its confidence, the fix in the engine's or PyTorch's terms and what a re-profile should show. Ask it for \"what should I fix first?\". Same JSON as `traceprism findings --json`.",
        schema: TraceArgs::schema,
        call: |v, c| findings(with_options("findings", v)?, c),
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
        call: |v, c| table(with_options("table", v)?, c),
    },
    Tool {
        name: "compare",
        description: "Where trace A is slower than trace B, and why. `headline` says it in one sentence: per phase, A's median step against B's, a verdict (slower, faster, same, inconclusive) against the noise of each side's steps (`compare_verdict`), and the budget rows that add up to the difference (`compare_budget`: busy by category, kernels only one side runs, launch, host, queued, sync...). Then per phase and pass, by category, kernel, op and layer, fusions and the kernels only one side runs (ratio = A / B, gaps in µs per pass). Each table cut to `max_rows` rows (default 25; its full count in `rows_total`). Same tables as `traceprism compare A B --json`.",
        schema: CompareArgs::schema,
        call: |v, c| compare(v, c),
    },
    Tool {
        name: "ranks",
        description: "All ranks of one distributed run: collectives matched across ranks (sequence matching; those some rank lacks are named), clocks aligned, each rank's wait, the straggler named with the phase and layer it is late in and whether its host or its GPU made it late, each collective's cost class (transfer, skew, mixed, inconclusive). Give a folder, the rank files, or one Nsight Systems export of several processes. Each table cut to `max_rows` rows (default 25). Same JSON as `traceprism ranks --json`.",
        schema: RanksArgs::schema,
        call: |v, _| ranks(with_options("ranks", v)?),
    },
    Tool {
        name: "gate",
        description: "Is NEW slower than BASELINE beyond noise? A statistical verdict per phase and overall: `no_change`, `improvement`, `regression` or `inconclusive` (each an answer, not an error; the CLI exits 0, 0, 1, 2), with the change and its confidence interval. BASELINE may be a trace or a digest (see `digest`). Same JSON as `traceprism gate BASELINE NEW --json`.",
        schema: GateArgs::schema,
        call: |v, c| gate(with_options("gate", v)?, c),
    },
    Tool {
        name: "digest",
        description: "A small baseline of a trace for the gate: per phase, each pass's kernel and wall time. Save it to compare later builds against without keeping the trace. The JSON `traceprism digest TRACE --out FILE` writes.",
        schema: TraceArgs::schema,
        call: |v, c| digest(with_options("digest", v)?, c),
    },
    Tool {
        name: "layers",
        description: "The transformer layers of each forward pass: layer count, layer-type sequence (dense, MoE, attention kinds) and kernel time per pass, and per layer its mean, min and max time by phase (µs). Same JSON as `traceprism layers TRACE --json`.",
        schema: TraceArgs::schema,
        call: |v, c| layers(with_options("layers", v)?, c),
    },
];

/// A tool's arguments read into its argument struct; an argument the schema does not name, or of
/// the wrong type, is refused with the tool's name.
fn parse<A: serde::de::DeserializeOwned>(tool: &str, v: Value) -> Result<A> {
    serde_json::from_value(v).map_err(|e| Error::new(format!("{tool}: {e}")))
}

/// Options struct `O` set from the keywords of arguments `v` it declares (as `--rules`,
/// `--phase-method`... are on the command line), which are taken out of `v`.
fn take_options<O: Declared>(tool: &str, v: &mut Value) -> Result<O> {
    let mut o = O::default();
    if let Value::Object(m) = v {
        let given: Vec<(String, Value)> = std::mem::take(m).into_iter().collect();
        let rest = o.take_keywords(given).map_err(|e| Error::new(format!("{tool}: {e}")))?;
        *m = rest.into_iter().collect();
    }
    Ok(o)
}

/// A tool's arguments and the analysis options among them.
fn with_options<A: serde::de::DeserializeOwned>(tool: &str, mut v: Value) -> Result<(A, Options)> {
    let o = take_options::<Options>(tool, &mut v)?;
    Ok((parse(tool, v)?, o))
}

/// The JSON schema of argument struct `A` (from its fields and their docs, subschemas inlined),
/// with the option keywords of `options` among its properties.
fn schema_of<A: JsonSchema>(options: &[Map<String, Value>]) -> Value {
    let settings = schemars::generate::SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
        s.meta_schema = None;
    });
    let mut v = settings.into_generator().into_root_schema_for::<A>().to_value();
    if let Value::Object(m) = &mut v {
        m.remove("title");
        let props = m.entry("properties").or_insert_with(|| json!({}));
        if let Value::Object(props) = props {
            for extra in options {
                props.extend(extra.clone());
            }
        }
    }
    v
}

/// The arguments of a tool that reads one trace (and the analysis options).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceArgs {
    /// Path of a torch.profiler trace (.json or .json.gz), a JAX/TensorFlow .xplane.pb, or an Nsight Systems SQLite export (.sqlite).
    trace: String,
    /// Capture traces (or folders) whose ops the trace's CUDA/HIP graph replays take.
    #[serde(default)]
    captures: Vec<String>,
}

impl TraceArgs {
    /// The schema: `trace`, `captures` and the analysis options.
    pub fn schema() -> Value {
        schema_of::<TraceArgs>(&[Options::schema_properties()])
    }
}

/// `tables`' arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TablesArgs {
    /// A trace whose tables to list; without it, a built-in example's.
    trace: Option<String>,
}

impl TablesArgs {
    /// The schema: an optional `trace`.
    pub fn schema() -> Value {
        schema_of::<TablesArgs>(&[])
    }
}

/// `table`'s arguments (and the analysis options).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TableArgs {
    /// Path of the trace.
    trace: String,
    /// Capture traces (or folders) whose ops the trace's CUDA/HIP graph replays take.
    #[serde(default)]
    captures: Vec<String>,
    /// Table name, from `tables` (kernel_summary, passes, phase_summary, layers, category_summary, health...).
    name: String,
    /// Keep rows whose `column` equals `equals` (as written in CSV), contains `contains`, or lies in [`min`, `max`].
    filter: Option<FilterArgs>,
    /// How to sort the rows.
    sort: Option<SortArgs>,
    /// Rows per page (default 100).
    #[schemars(range(min = 1))]
    limit: Option<usize>,
    /// The page's first row (default 0).
    offset: Option<usize>,
}

/// Which rows of a table to keep.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FilterArgs {
    /// The column filtered on.
    column: String,
    /// A value as written in CSV (a number is taken as its text).
    equals: Option<Value>,
    /// Text the value contains.
    contains: Option<String>,
    /// Smallest value kept.
    min: Option<f64>,
    /// Largest value kept.
    max: Option<f64>,
}

/// How to sort a table.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SortArgs {
    /// The column sorted on.
    column: String,
    /// Largest first.
    #[serde(default)]
    descending: bool,
}

impl TableArgs {
    /// The schema: a trace, a table name, a filter, a sort, a page and the analysis options.
    pub fn schema() -> Value {
        schema_of::<TableArgs>(&[Options::schema_properties()])
    }
}

/// `compare`'s arguments (and the comparison's and the analyses' options).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompareArgs {
    /// Path of trace A.
    a: String,
    /// Path of trace B.
    b: String,
    /// Rows per table (default 25).
    #[schemars(range(min = 1))]
    max_rows: Option<usize>,
}

impl CompareArgs {
    /// The schema: two traces, rows per table, the comparison's options (phase, labels,
    /// thresholds) and the analysis options (both sides).
    pub fn schema() -> Value {
        schema_of::<CompareArgs>(&[CompareOptions::schema_properties(), Options::schema_properties()])
    }
}

/// `ranks`' arguments (and the analysis options, every rank).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RanksArgs {
    /// The rank trace files, or one folder holding them.
    paths: Vec<String>,
    /// Align clocks on the collectives (default true).
    align: Option<bool>,
    /// Rows per table (default 25).
    #[schemars(range(min = 1))]
    max_rows: Option<usize>,
}

impl RanksArgs {
    /// The schema: the rank files (or a folder), clock alignment, rows per table and the
    /// analysis options.
    pub fn schema() -> Value {
        schema_of::<RanksArgs>(&[Options::schema_properties()])
    }
}

/// `gate`'s arguments (and the analysis options of traces read).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GateArgs {
    /// A trace or a digest file.
    baseline: String,
    /// A trace (or a digest).
    new: String,
    /// Slowdown allowed, a share (0.03) or percent (3); default 3%.
    max_slowdown: Option<f64>,
    /// Confidence of the verdict, a share (0.99) or percent; default 0.99.
    confidence: Option<f64>,
    /// Per-pass kernel time (default) or wall time.
    metric: Option<GateMetric>,
}

/// The gate's metric, as MCP names it.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum GateMetric {
    Kernel,
    Wall,
}

impl GateArgs {
    /// The schema: a baseline, a new trace, the slowdown allowed, the confidence, the metric and
    /// the analysis options.
    pub fn schema() -> Value {
        schema_of::<GateArgs>(&[Options::schema_properties()])
    }
}

fn summary((args, options): (TraceArgs, Options), cache: &mut Cache) -> Result<Answer> {
    let a = cache.get(&args.trace, &args.captures, &options)?;
    Ok(Answer::Json(to_json(&traceprism::report::summary::summary(&a))?))
}

fn doctor((args, options): (TraceArgs, Options), cache: &mut Cache) -> Result<Answer> {
    let a = cache.get(&args.trace, &args.captures, &options)?;
    Ok(Answer::Json(traceprism::report::health::doctor_json(&args.trace, &a)))
}

fn findings((args, options): (TraceArgs, Options), cache: &mut Cache) -> Result<Answer> {
    let a = cache.get(&args.trace, &args.captures, &options)?;
    Ok(Answer::Json(traceprism::report::findings::findings_json(&args.trace, &traceprism::analysis::findings::findings(&a))))
}

fn layers((args, options): (TraceArgs, Options), cache: &mut Cache) -> Result<Answer> {
    let a = cache.get(&args.trace, &args.captures, &options)?;
    Ok(Answer::Json(traceprism::report::layers::layers_json(&a)))
}

fn digest((args, options): (TraceArgs, Options), cache: &mut Cache) -> Result<Answer> {
    let a = cache.get(&args.trace, &args.captures, &options)?;
    let text = traceprism::gate::Digest::of(&a, &traceprism::gate::Digest::source_name(Path::new(&args.trace))).to_json();
    Ok(Answer::Json(serde_json::from_str(&text).map_err(|e| Error::new(e.to_string()))?))
}

fn tables(args: TablesArgs, cache: &mut Cache) -> Result<Answer> {
    let example;
    let kept;
    let a: &traceprism::Analysis = match &args.trace {
        Some(path) => {
            kept = cache.get(path, &[], &Options::default())?;
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

fn table((args, options): (TableArgs, Options), cache: &mut Cache) -> Result<Answer> {
    let name = args.name.as_str();
    let names = traceprism::report::table_names();
    if !names.contains(&name) {
        return Err(Error::new(format!("no table named '{name}' (tables: {})", names.join(", "))));
    }
    let a = cache.get(&args.trace, &args.captures, &options)?;
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

fn compare(mut v: Value, cache: &mut Cache) -> Result<Answer> {
    let mut o = take_options::<CompareOptions>("compare", &mut v)?;
    let (args, options): (CompareArgs, Options) = with_options("compare", v)?;
    o.validate()?;
    o.source_a = Some(args.a.clone());
    o.source_b = Some(args.b.clone());
    let (ta, tb) = (cache.get(&args.a, &[], &options)?, cache.get(&args.b, &[], &options)?);
    let c = traceprism::analysis::compare::compare(&ta, &tb, &o)?;
    let tables = traceprism::report::compare::tables_of(&c, &ta, &tb, &o);
    let Value::Array(mut list) = to_json(&tables)? else { return Err(Error::new("compare tables are not a list")) };
    cut_tables(&mut list, args.max_rows.unwrap_or(DEFAULT_MAX_ROWS));
    Ok(Answer::Json(json!({ "headline": c.headline(), "tables": list })))
}

fn ranks((args, options): (RanksArgs, Options)) -> Result<Answer> {
    let paths: Vec<PathBuf> = args.paths.into_iter().map(PathBuf::from).collect();
    if paths.is_empty() {
        return Err(Error::new("ranks needs `paths`: the rank trace files, or one folder holding them"));
    }
    let files = traceprism::pipeline::ranks::rank_files(&paths)?;
    let loaded = traceprism::pipeline::ranks::read_run(
        &files,
        &options,
        None,
        &[],
        traceprism::analysis::ranks::RunOptions { align: args.align.unwrap_or(true) },
    )?;
    let tables = traceprism::report::ranks::run_tables(&loaded.run);
    let mut v = traceprism::report::ranks::run_json(&loaded.run, loaded.left_out.len(), &tables);
    if let Some(list) = v.get_mut("tables").and_then(Value::as_array_mut) {
        cut_tables(list, args.max_rows.unwrap_or(DEFAULT_MAX_ROWS));
    }
    Ok(Answer::Json(v))
}

fn gate((args, options): (GateArgs, Options), cache: &mut Cache) -> Result<Answer> {
    use traceprism::gate::{Digest, GateOptions, GivenShare};
    let mut digest_of = |path: &str| Digest::of_file(Path::new(path), || cache.get(path, &[], &options));
    let o = GateOptions::from_given(
        ["`max_slowdown`", "`confidence`", "`metric`"],
        args.max_slowdown.map(GivenShare::Number),
        args.confidence.map(GivenShare::Number),
        args.metric.map(|m| match m {
            GateMetric::Kernel => "kernel",
            GateMetric::Wall => "wall",
        }),
    )?;
    let (b, n) = (digest_of(&args.baseline)?, digest_of(&args.new)?);
    Ok(Answer::Json(to_json(&traceprism::gate::gate(&b, &n, &o))?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value of a schema property's type (the first of a list of types): its default, else its
    /// first choice, else one of its type.
    fn example(property: &Value) -> Value {
        if let Some(v) = property.get("default").filter(|v| !v.is_null()) {
            return v.clone();
        }
        if let Some(first) = property["enum"].get(0) {
            return first.clone();
        }
        let ty = match &property["type"] {
            Value::Array(list) => list[0].as_str(),
            t => t.as_str(),
        };
        match ty {
            Some("string") => json!("x"),
            Some("array") => json!(["x"]),
            Some("integer") => json!(1),
            Some("number") => json!(0.5),
            Some("boolean") => json!(true),
            Some("object") => json!({"column": "x"}),
            other => panic!("no example of type {other:?} in {property}"),
        }
    }

    #[test]
    fn every_schema_property_is_read_and_nothing_else_is_taken() {
        type Check = fn(Value) -> Result<()>;
        let checks: [(&str, Check); 6] = [
            ("trace", |v| with_options::<TraceArgs>("t", v).map(drop)),
            ("tables", |v| parse::<TablesArgs>("t", v).map(drop)),
            ("table", |v| with_options::<TableArgs>("t", v).map(drop)),
            ("compare", |mut v| {
                take_options::<CompareOptions>("t", &mut v)?;
                with_options::<CompareArgs>("t", v).map(drop)
            }),
            ("ranks", |v| with_options::<RanksArgs>("t", v).map(drop)),
            ("gate", |v| with_options::<GateArgs>("t", v).map(drop)),
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
            // A file option's example must be a file that exists.
            let rules = concat!(env!("CARGO_MANIFEST_DIR"), "/src/rules/categories.toml");
            let value = |k: &str, p: &Value| if k == "rules" { json!(rules) } else { example(p) };
            let full: Map<String, Value> = props.iter().map(|(k, p)| (k.clone(), value(k, p))).collect();
            check(Value::Object(full.clone())).unwrap_or_else(|e| panic!("{what}: every property read: {e}"));
            let mut extra = full;
            extra.insert("no_such_argument".into(), json!(1));
            assert!(check(Value::Object(extra)).is_err(), "{what}: an argument not in the schema is refused");
            for required in schema["required"].as_array().into_iter().flatten() {
                let mut lacking: Map<String, Value> = props.iter().map(|(k, p)| (k.clone(), value(k, p))).collect();
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

    #[test]
    fn every_analysing_tool_takes_the_rules_and_the_phase_method_and_the_full_phase_choice() {
        for t in TOOLS.iter().filter(|t| t.name != "tables") {
            let schema = (t.schema)();
            let props = &schema["properties"];
            assert_eq!(props["rules"]["type"], "string", "{}: rules", t.name);
            let methods = props["phase_method"]["enum"].as_array().unwrap_or_else(|| panic!("{}: phase_method", t.name));
            let names: Vec<&str> = methods.iter().filter_map(Value::as_str).collect();
            assert_eq!(names, traceprism::analysis::options::PhaseMethod::names());
        }
        let compare = CompareArgs::schema();
        let phases: Vec<&str> =
            compare["properties"]["phase"]["enum"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        assert_eq!(phases, traceprism::analysis::steps::Phase::selectable());
        // An option reaches the analysis: the hybrid method is what the analysis ran.
        let mut v = json!({"trace": "x", "phase_method": "hybrid", "exclude_unlinked": true});
        let o = take_options::<Options>("t", &mut v).unwrap();
        assert_eq!(o.phase_method, traceprism::analysis::options::PhaseMethod::Hybrid);
        assert!(!o.include_unlinked);
        assert_eq!(v, json!({"trace": "x"}));
        let e = take_options::<Options>("summary", &mut json!({"phase_method": "vibes"})).unwrap_err().to_string();
        assert!(e.starts_with("summary: phase_method: unknown value 'vibes' (one of: union, hybrid,"), "{e}");
    }
}
