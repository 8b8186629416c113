//! The tools `traceprism mcp` offers: each a question an agent asks of traces, answered by the
//! library functions the CLI calls, so an answer is the CLI's `--json` output (tables as pages).

use super::cache::Cache;
use super::page::{page, Filter, Query};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use traceprism::{Error, Result};

/// A tool: its name, what it answers (for an agent choosing one), and its input schema.
pub struct Spec {
    pub name: &'static str,
    pub description: &'static str,
    pub schema: Value,
}

/// An answer: a JSON object (given as text and as structured content), or a JSON object with a
/// text of its own (a table page: its CSV).
pub enum Answer {
    Json(Value),
    JsonWithText(Value, String),
}

/// Rows per table in `compare` and `ranks` answers unless `max_rows` says otherwise.
pub const DEFAULT_MAX_ROWS: usize = 25;

fn trace_schema(extra: Value) -> Value {
    let mut props = json!({
        "trace": {"type": "string", "description": "path of a torch.profiler trace (.json or .json.gz), a JAX/TensorFlow .xplane.pb, or an Nsight Systems SQLite export (.sqlite)"},
        "captures": {"type": "array", "items": {"type": "string"}, "description": "capture traces (or folders) whose ops the trace's CUDA/HIP graph replays take"},
    });
    if let (Some(p), Some(e)) = (props.as_object_mut(), extra.as_object()) {
        p.extend(e.clone());
    }
    json!({"type": "object", "properties": props, "required": ["trace"]})
}

/// Every tool, in the order they are listed.
pub fn specs() -> Vec<Spec> {
    vec![
        Spec {
            name: "summary",
            description: "What a trace holds and what it says: device, workload (llm_inference, training, diffusion), forward passes with their phase (prefill/decode/mixed) and doubt, layers per pass, kernel time by category, top kernels, warnings and the health checks. Start here. Times in µs. Same JSON as `traceprism summary --json`.",
            schema: trace_schema(json!({})),
        },
        Spec {
            name: "doctor",
            description: "The trace's health: what the profiler recorded (CPU ops, kernels, shapes, stacks, step annotations, graphs...), what each gap limits, and the exact profiler setting that records it; broken JSON repaired, kernels dropped, events not read. Ask it when an answer looks thin or a summary warns. Same JSON as `traceprism doctor --json`.",
            schema: trace_schema(json!({})),
        },
        Spec {
            name: "findings",
            description: "What to fix first: each cause of lost time the trace shows (the host starving the GPU inside steps, idle between steps), ranked by what fixing it would save per step (µs and % of the step), with the figures it rests on, its confidence, the fix in the engine's or PyTorch's terms and what a re-profile should show. Ask it for \"what should I fix first?\". Same JSON as `traceprism findings --json`.",
            schema: trace_schema(json!({})),
        },
        Spec {
            name: "tables",
            description: "The tables a trace analysis gives (names, columns and their types: int, float, us = microseconds, bool, text). Read one with `table`. Without `trace`, the columns are those of a built-in example.",
            schema: json!({"type": "object", "properties": {"trace": {"type": "string", "description": "a trace whose tables to list (optional)"}}}),
        },
        Spec {
            name: "table",
            description: "One table of a trace, a page at a time (default 100 rows, never more than ~48 KB of CSV), optionally filtered on a column and sorted; says the total and matched row counts and the offset of the next page. The text is the page as CSV, the structured content its rows. Times in µs. Same rows as `traceprism table TRACE NAME --csv`.",
            schema: trace_schema(json!({
                "name": {"type": "string", "description": "table name, from `tables` (kernel_summary, passes, phase_summary, layers, category_summary, health...)"},
                "filter": {"type": "object", "description": "keep rows whose `column` equals `equals` (as written in CSV), contains `contains`, or lies in [`min`, `max`]",
                    "properties": {"column": {"type": "string"}, "equals": {"type": "string"}, "contains": {"type": "string"}, "min": {"type": "number"}, "max": {"type": "number"}}, "required": ["column"]},
                "sort": {"type": "object", "properties": {"column": {"type": "string"}, "descending": {"type": "boolean"}}, "required": ["column"]},
                "limit": {"type": "integer", "minimum": 1, "description": "rows per page (default 100)"},
                "offset": {"type": "integer", "minimum": 0, "description": "first row of the page (default 0)"},
            })),
        },
        Spec {
            name: "compare",
            description: "Where trace A is slower than trace B, and why: per phase and pass, by category, kernel, op and layer, fusions and the kernels only one side runs (ratio = A / B, gaps in µs per pass). Each table cut to `max_rows` rows (default 25; its full count in `rows_total`). Same tables as `traceprism compare A B --json`.",
            schema: json!({"type": "object", "properties": {
                "a": {"type": "string", "description": "path of trace A"},
                "b": {"type": "string", "description": "path of trace B"},
                "phase": {"type": "string", "enum": ["prefill", "decode", "all"], "description": "compare one phase (default all)"},
                "max_rows": {"type": "integer", "minimum": 1}},
                "required": ["a", "b"]}),
        },
        Spec {
            name: "ranks",
            description: "All ranks of one distributed run: collectives matched across ranks (sequence matching; those some rank lacks are named), clocks aligned, each rank's wait, the straggler named with the phase and layer it is late in and whether its host or its GPU made it late, each collective's cost class (transfer, skew, mixed, inconclusive). Give a folder, the rank files, or one Nsight Systems export of several processes. Each table cut to `max_rows` rows (default 25). Same JSON as `traceprism ranks --json`.",
            schema: json!({"type": "object", "properties": {
                "paths": {"type": "array", "items": {"type": "string"}, "description": "the rank trace files, or one folder holding them"},
                "align": {"type": "boolean", "description": "align clocks on the collectives (default true)"},
                "max_rows": {"type": "integer", "minimum": 1}},
                "required": ["paths"]}),
        },
        Spec {
            name: "gate",
            description: "Is NEW slower than BASELINE beyond noise? A statistical verdict per phase and overall: `no_change`, `improvement`, `regression` or `inconclusive` (each an answer, not an error; the CLI exits 0, 0, 1, 2), with the change and its confidence interval. BASELINE may be a trace or a digest (see `digest`). Same JSON as `traceprism gate BASELINE NEW --json`.",
            schema: json!({"type": "object", "properties": {
                "baseline": {"type": "string", "description": "a trace or a digest file"},
                "new": {"type": "string", "description": "a trace (or a digest)"},
                "max_slowdown": {"type": "number", "description": "slowdown allowed, a share (0.03) or percent (3); default 3%"},
                "confidence": {"type": "number", "description": "confidence of the verdict, a share (0.99) or percent; default 0.99"},
                "metric": {"type": "string", "enum": ["kernel", "wall"], "description": "per-pass kernel time (default) or wall time"}},
                "required": ["baseline", "new"]}),
        },
        Spec {
            name: "digest",
            description: "A small baseline of a trace for the gate: per phase, each pass's kernel and wall time. Save it to compare later builds against without keeping the trace. The JSON `traceprism digest TRACE --out FILE` writes.",
            schema: trace_schema(json!({})),
        },
        Spec {
            name: "layers",
            description: "The transformer layers of each forward pass: layer count, layer-type sequence (dense, MoE, attention kinds) and kernel time per pass, and per layer its mean, min and max time by phase (µs). Same JSON as `traceprism layers TRACE --json`.",
            schema: trace_schema(json!({})),
        },
    ]
}

fn string<'a>(args: &'a Map<String, Value>, key: &str, tool: &str) -> Result<&'a str> {
    args.get(key).and_then(Value::as_str).ok_or_else(|| Error::new(format!("{tool} needs `{key}` (a string)")))
}

fn strings(args: &Map<String, Value>, key: &str) -> Vec<String> {
    args.get(key)
        .and_then(Value::as_array)
        .map_or(Vec::new(), |a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
}

fn count(args: &Map<String, Value>, key: &str) -> Result<Option<usize>> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => {
            v.as_u64().map(|n| Some(n as usize)).ok_or_else(|| Error::new(format!("`{key}` must be a whole number, not {v}")))
        }
    }
}

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
    Ok(match answer(name, args, cache)? {
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

fn answer(name: &str, args: &Map<String, Value>, cache: &mut Cache) -> Result<Answer> {
    match name {
        "summary" => {
            let a = cache.get(string(args, "trace", name)?, &strings(args, "captures"))?;
            Ok(Answer::Json(to_json(&traceprism::report::summary::summary(&a))?))
        }
        "doctor" => {
            let path = string(args, "trace", name)?;
            let a = cache.get(path, &strings(args, "captures"))?;
            Ok(Answer::Json(traceprism::report::health::doctor_json(path, &a)))
        }
        "findings" => {
            let path = string(args, "trace", name)?;
            let a = cache.get(path, &strings(args, "captures"))?;
            Ok(Answer::Json(traceprism::analysis::findings::findings_json(path, &traceprism::analysis::findings::findings(&a))))
        }
        "layers" => {
            let a = cache.get(string(args, "trace", name)?, &strings(args, "captures"))?;
            Ok(Answer::Json(traceprism::report::layers::layers_json(&a)))
        }
        "digest" => {
            let path = string(args, "trace", name)?;
            let a = cache.get(path, &strings(args, "captures"))?;
            let text = traceprism::gate::Digest::of(&a, &traceprism::gate::Digest::source_name(Path::new(path))).to_json();
            Ok(Answer::Json(serde_json::from_str(&text).map_err(|e| Error::new(e.to_string()))?))
        }
        "tables" => tables(args, cache),
        "table" => table(args, cache),
        "compare" => compare(args, cache),
        "ranks" => ranks(args),
        "gate" => gate(args, cache),
        other => Err(Error::new(format!(
            "no tool named '{other}' (tools: {})",
            specs().iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
        ))),
    }
}

fn tables(args: &Map<String, Value>, cache: &mut Cache) -> Result<Answer> {
    let example;
    let kept;
    let a: &traceprism::Analysis = match args.get("trace").and_then(Value::as_str) {
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

fn table(args: &Map<String, Value>, cache: &mut Cache) -> Result<Answer> {
    let path = string(args, "trace", "table")?;
    let name = string(args, "name", "table")?;
    let names = traceprism::report::table_names();
    if !names.contains(&name) {
        return Err(Error::new(format!("no table named '{name}' (tables: {})", names.join(", "))));
    }
    let a = cache.get(path, &strings(args, "captures"))?;
    let t = traceprism::report::table(&a, name).ok_or_else(|| Error::new(format!("no table named '{name}'")))?;
    let filter = match args.get("filter") {
        Some(Value::Object(f)) => Some(Filter {
            column: f.get("column").and_then(Value::as_str).ok_or_else(|| Error::new("filter needs `column`"))?.to_string(),
            equals: f.get("equals").map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string)),
            contains: f.get("contains").and_then(Value::as_str).map(str::to_string),
            min: f.get("min").and_then(Value::as_f64),
            max: f.get("max").and_then(Value::as_f64),
        }),
        None | Some(Value::Null) => None,
        Some(other) => return Err(Error::new(format!("`filter` must be an object, not {other}"))),
    };
    let sort = match args.get("sort") {
        Some(Value::Object(s)) => Some((
            s.get("column").and_then(Value::as_str).ok_or_else(|| Error::new("sort needs `column`"))?.to_string(),
            s.get("descending").and_then(Value::as_bool).unwrap_or(false),
        )),
        None | Some(Value::Null) => None,
        Some(other) => return Err(Error::new(format!("`sort` must be an object, not {other}"))),
    };
    let q = Query { filter, sort, limit: count(args, "limit")?, offset: count(args, "offset")?.unwrap_or(0) };
    let (answer, csv) = page(&t, &q)?;
    Ok(Answer::JsonWithText(answer, csv))
}

fn compare(args: &Map<String, Value>, cache: &mut Cache) -> Result<Answer> {
    let (pa, pb) = (string(args, "a", "compare")?, string(args, "b", "compare")?);
    let mut o = traceprism::analysis::compare::CompareOptions::default();
    if let Some(p) = args.get("phase").and_then(Value::as_str) {
        o.phase = p.to_string();
    }
    o.validate()?;
    let (ta, tb) = (cache.get(pa, &[])?, cache.get(pb, &[])?);
    let tables = traceprism::report::compare::compare_tables(&ta, &tb, &o)?;
    let Value::Array(mut list) = to_json(&tables)? else { return Err(Error::new("compare tables are not a list")) };
    cut_tables(&mut list, count(args, "max_rows")?.unwrap_or(DEFAULT_MAX_ROWS));
    Ok(Answer::Json(json!({ "tables": list })))
}

fn ranks(args: &Map<String, Value>) -> Result<Answer> {
    let paths: Vec<PathBuf> = strings(args, "paths").into_iter().map(PathBuf::from).collect();
    if paths.is_empty() {
        return Err(Error::new("ranks needs `paths`: the rank trace files, or one folder holding them"));
    }
    let files = traceprism::pipeline::ranks::rank_files(&paths)?;
    let align = args.get("align").and_then(Value::as_bool).unwrap_or(true);
    let loaded = traceprism::pipeline::ranks::read_run(
        &files,
        &traceprism::Options::default(),
        None,
        &[],
        traceprism::analysis::ranks::RunOptions { align },
    )?;
    let tables = traceprism::report::ranks::run_tables(&loaded.run);
    let mut v = traceprism::pipeline::ranks::run_json(&loaded, &tables);
    if let Some(list) = v.get_mut("tables").and_then(Value::as_array_mut) {
        cut_tables(list, count(args, "max_rows")?.unwrap_or(DEFAULT_MAX_ROWS));
    }
    Ok(Answer::Json(v))
}

fn share(key: &str, v: f64) -> Result<f64> {
    traceprism::gate::fraction(v, false).ok_or_else(|| Error::new(format!("`{key}`: {v} is out of range")))
}

fn gate(args: &Map<String, Value>, cache: &mut Cache) -> Result<Answer> {
    use traceprism::gate::{Digest, GateOptions, Metric};
    let mut digest_of = |path: &str| Digest::of_file(Path::new(path), || cache.get(path, &[]));
    let (base, new) = (string(args, "baseline", "gate")?, string(args, "new", "gate")?);
    let mut o = GateOptions::default();
    if let Some(v) = args.get("max_slowdown").and_then(Value::as_f64) {
        o.max_slowdown = share("max_slowdown", v)?;
    }
    if let Some(v) = args.get("confidence").and_then(Value::as_f64) {
        o.confidence = share("confidence", v)?;
    }
    o.metric = match args.get("metric").and_then(Value::as_str) {
        None | Some("kernel") => Metric::Kernel,
        Some("wall") => Metric::Wall,
        Some(other) => return Err(Error::new(format!("`metric`: kernel or wall, not {other}"))),
    };
    let (b, n) = (digest_of(base)?, digest_of(new)?);
    Ok(Answer::Json(to_json(&traceprism::gate::gate(&b, &n, &o))?))
}
