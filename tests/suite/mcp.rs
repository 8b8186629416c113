//! `traceprism mcp` (issue 46), as an agent's client meets it: raw JSON-RPC 2.0 over the server's
//! stdin and stdout, a message a line, no SDK on this side. Initialise, list the tools, call every
//! tool on fixtures; each answer must equal the CLI's `--json` output (a `table` page the lines of
//! `table --csv`, `digest` the file `digest --out` writes). A missing file and an unknown table are
//! error answers and the server goes on serving; a table answer stays bounded on the largest
//! fixture; the server exits 0 when its input closes.

use crate::common;

use common::fixture;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_traceprism");

struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Client {
    fn start() -> Client {
        let mut child =
            Command::new(BIN).arg("mcp").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("the server starts");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut c = Client { child, stdin, stdout, next: 1 };
        let init = c.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw-test", "version": "0"}}),
        );
        assert_eq!(init["protocolVersion"], "2025-06-18", "{init}");
        assert_eq!(init["serverInfo"]["name"], "traceprism");
        assert!(init["capabilities"]["tools"].is_object(), "{init}");
        c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        c
    }

    fn send(&mut self, v: &Value) {
        let stdin = self.stdin.as_mut().expect("open");
        writeln!(stdin, "{v}").expect("write");
        stdin.flush().expect("flush");
    }

    /// Sends a request and reads lines until its answer (skipping notifications); the result.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).expect("read") > 0, "the server closed its output");
            let msg: Value = serde_json::from_str(&line).expect("a JSON line");
            if msg["id"] == json!(id) {
                assert!(msg.get("error").is_none(), "{method}: {msg}");
                return msg["result"].clone();
            }
        }
    }

    fn call(&mut self, tool: &str, args: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": args}))
    }

    /// Closes the server's input; its exit code.
    fn close(mut self) -> i32 {
        drop(self.stdin.take());
        self.child.wait().expect("the server exits").code().unwrap_or(-1)
    }
}

fn cli(args: &[&str]) -> String {
    let out = Command::new(BIN).args(args).output().expect("the CLI runs");
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("utf-8")
}

fn cli_json(args: &[&str]) -> Value {
    serde_json::from_str(&cli(args)).expect("JSON")
}

/// `v` without the fields that depend on the machine's scheduling, not on the trace.
fn steady(mut v: Value) -> Value {
    fn walk(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.remove("parallel_blocks");
                m.values_mut().for_each(walk);
            }
            Value::Array(a) => a.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut v);
    v
}

/// A run of two ranks made by `synth-ranks` from the real vLLM TP4 trace, in `dir/run`.
fn two_ranks(dir: &std::path::Path) -> std::path::PathBuf {
    let run = dir.join("run");
    cli(&[
        "synth-ranks",
        &path("vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz"),
        "--out",
        run.to_str().unwrap(),
        "--ranks",
        "2",
        "--straggler",
        "1",
    ]);
    run
}

fn ok(answer: &Value) -> &Value {
    assert_ne!(answer["isError"], json!(true), "{answer}");
    &answer["structuredContent"]
}

fn path(name: &str) -> String {
    fixture(name).to_string_lossy().into_owned()
}

#[test]
fn every_tool_answers_as_the_cli_does() {
    let trace = path("llama_small_stack.pt.trace.json.gz");
    let (a, b) =
        (path("sglang_qwen3-30b-a3b_decode_b300.trace.json.gz"), path("sglang_qwen3-30b-a3b_decode_mi300x.trace.json.gz"));
    let mut c = Client::start();

    let listed = c.request("tools/list", json!({}));
    let names: Vec<&str> = listed["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["summary", "doctor", "findings", "tables", "table", "compare", "ranks", "gate", "digest", "layers"]);
    for t in listed["tools"].as_array().unwrap() {
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
        assert!(t["description"].as_str().unwrap().len() > 80, "a description written for an agent: {t}");
    }
    // The findings tool names every kind one trace's findings can hold (the table declares them).
    let described =
        listed["tools"].as_array().unwrap().iter().find(|t| t["name"] == "findings").unwrap()["description"].as_str().unwrap();
    for spec in traceprism::analysis::findings::Kind::of_one_trace() {
        assert!(described.contains(spec.name), "the MCP findings description misses {}", spec.name);
    }

    assert_eq!(steady(ok(&c.call("summary", json!({"trace": trace}))).clone()), steady(cli_json(&["summary", &trace, "--json"])));
    assert_eq!(ok(&c.call("doctor", json!({"trace": trace}))), &cli_json(&["doctor", &trace, "--json"]));
    assert_eq!(ok(&c.call("layers", json!({"trace": trace}))), &cli_json(&["layers", &trace, "--json"]));
    let findings = ok(&c.call("findings", json!({"trace": trace}))).clone();
    assert_eq!(&findings, &cli_json(&["findings", &trace, "--json"]));
    assert!(findings["findings"].as_array().is_some_and(|f| f.iter().any(|x| x["kind"] == "host_bound")), "{findings}");

    // tables: every name the CLI lists, with columns and types.
    let tables = c.call("tables", json!({"trace": trace}));
    let listed: Vec<String> =
        ok(&tables)["tables"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect();
    let want: Vec<String> = cli(&["tables"]).lines().map(str::to_string).collect();
    assert_eq!(listed, want);
    let example = c.call("tables", json!({}));
    assert_eq!(ok(&example)["tables"].as_array().unwrap().len(), want.len(), "without a trace: the example's");

    // table: pages whose CSV lines are `table --csv`'s.
    let csv = cli(&["table", &trace, "kernels", "--csv"]);
    let lines: Vec<&str> = csv.split("\r\n").filter(|l| !l.is_empty()).collect();
    assert!(lines.len() > 300);
    let first = c.call("table", json!({"trace": trace, "name": "kernels"}));
    let s = ok(&first);
    // 100 rows by default, fewer when 100 of these wide rows would pass the page size.
    let n = s["returned"].as_u64().unwrap() as usize;
    assert!((50..=100).contains(&n), "{n} rows");
    assert_eq!((s["total_rows"].as_u64(), s["next_offset"].as_u64()), (Some(lines.len() as u64 - 1), Some(n as u64)));
    let text = first["content"][0]["text"].as_str().unwrap();
    let got: Vec<&str> = text.split("\r\n").filter(|l| !l.is_empty()).collect();
    assert_eq!(got, lines[..n + 1].to_vec());
    assert_eq!(s["rows"].as_array().unwrap().len(), n);
    let second = c.call("table", json!({"trace": trace, "name": "kernels", "offset": n, "limit": 20}));
    let got: Vec<&str> = second["content"][0]["text"].as_str().unwrap().split("\r\n").filter(|l| !l.is_empty()).collect();
    assert_eq!(got[0], lines[0]);
    assert_eq!(got[1..], lines[n + 1..n + 21]);
    // Filter and sort: decode passes, longest first.
    let decode = c.call(
        "table",
        json!({"trace": trace, "name": "passes", "filter": {"column": "phase", "equals": "decode"}, "sort": {"column": "duration_us", "descending": true}}),
    );
    let d = ok(&decode);
    assert_eq!(d["matched_rows"], 12, "{d}");
    let col = d["columns"].as_array().unwrap().iter().position(|c| c == "duration_us").unwrap();
    let durations: Vec<f64> = d["rows"].as_array().unwrap().iter().map(|r| r[col].as_f64().unwrap()).collect();
    assert!(durations.windows(2).all(|w| w[0] >= w[1]), "{durations:?}");

    // compare: the CLI's tables; cut to 25 rows each unless asked, and never over 100 KB of
    // text: asked for every row, the tables are the CLI's first rows, each cut one saying its
    // rows_total, and the answer says it was cut.
    let whole = c.call("compare", json!({"a": a, "b": b, "max_rows": 1_000_000}));
    let whole = ok(&whole);
    let size = serde_json::to_string(whole).unwrap().len();
    assert!(size <= traceprism_mcp_cap(), "{size} bytes");
    let cli_compare = cli_json(&["compare", &a, &b, "--json"]);
    let cut = same_tables_as_cli(&whole["tables"], &cli_compare["tables"]);
    // The first thing it says is the CLI's first line.
    assert_eq!(whole["headline"], cli_compare["headline"]);
    assert!(whole["headline"].as_str().is_some_and(|h| h.contains(" a decode step")), "{}", whole["headline"]);
    eprintln!("compare, every row asked: {size} bytes, {cut} tables cut");
    assert_eq!(whole.get("cut").is_some(), cut > 0);
    let cut = c.call("compare", json!({"a": a, "b": b}));
    assert!(ok(&cut)["tables"].as_array().unwrap().iter().all(|t| t["rows"].as_array().unwrap().len() <= 25));

    // digest: the file `digest --out` writes; gate: the CLI's verdict JSON.
    let dir = std::env::temp_dir().join(format!("traceprism-mcp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let digest_file = dir.join("base.digest.json").to_string_lossy().into_owned();
    cli(&["digest", &trace, "--out", &digest_file]);
    let written: Value = serde_json::from_slice(&std::fs::read(&digest_file).unwrap()).unwrap();
    assert_eq!(ok(&c.call("digest", json!({"trace": trace}))), &written);
    let verdict = c.call("gate", json!({"baseline": digest_file, "new": trace}));
    let out = Command::new(BIN).args(["gate", &digest_file, &trace, "--json"]).output().unwrap();
    assert_eq!(ok(&verdict), &serde_json::from_slice::<Value>(&out.stdout).unwrap());
    // A regression is an answer, not an error: B300 against MI300X.
    let slower = c.call("gate", json!({"baseline": a, "new": b}));
    let overall = ok(&slower)["overall"].as_str().unwrap_or_default().to_string();
    assert!(["no_change", "improvement", "regression", "inconclusive"].contains(&overall.as_str()), "{overall}");

    // ranks: two ranks made from a real trace.
    let run = two_ranks(&dir);
    let r0 = run.join("rank0.json").to_string_lossy().into_owned();
    let r1 = run.join("rank1.json").to_string_lossy().into_owned();
    let answer = c.call("ranks", json!({"paths": [r0, r1], "max_rows": 1_000_000}));
    let (mut got, mut want) = (ok(&answer).clone(), cli_json(&["ranks", &r0, &r1, "--json"]));
    assert!(serde_json::to_string(&got).unwrap().len() <= traceprism_mcp_cap());
    let cut = same_tables_as_cli(&got["tables"], &want["tables"]);
    assert_eq!(got.get("cut").is_some(), cut > 0);
    for v in [&mut got, &mut want] {
        let m = v.as_object_mut().unwrap();
        m.remove("tables");
        m.remove("cut");
    }
    assert_eq!(got, want, "the run's facts beside its tables");

    // Errors are answers; the server goes on serving.
    let missing = c.call("summary", json!({"trace": "/no/such/trace.json.gz"}));
    assert_eq!(missing["isError"], true);
    assert!(missing["content"][0]["text"].as_str().unwrap().contains("cannot read /no/such/trace.json.gz"), "{missing}");
    let unknown = c.call("table", json!({"trace": trace, "name": "no_such_table"}));
    assert_eq!(unknown["isError"], true);
    assert!(unknown["content"][0]["text"].as_str().unwrap().contains("no table named 'no_such_table'"), "{unknown}");
    let tool = c.call("no_such_tool", json!({}));
    assert_eq!(tool["isError"], true, "{tool}");
    assert_eq!(ok(&c.call("layers", json!({"trace": trace}))), &cli_json(&["layers", &trace, "--json"]), "still serving");
    assert_eq!(c.close(), 0, "exits 0 when its input closes");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_table_answer_stays_bounded_on_the_largest_fixture() {
    let trace = path("llama_dense_eager.pt.trace.json.gz");
    let mut c = Client::start();
    let answer = c.call("table", json!({"trace": trace, "name": "kernels", "limit": 1_000_000}));
    let s = ok(&answer);
    let text = answer["content"][0]["text"].as_str().unwrap();
    assert!(s["total_rows"].as_u64().unwrap() > 20_000, "the largest fixture: {}", s["total_rows"]);
    assert!(text.len() <= 100 * 1024, "{} bytes of text", text.len());
    assert!(s.to_string().len() <= 100 * 1024, "{} bytes of structured content", s.to_string().len());
    assert!(
        s["next_offset"].as_u64().is_some() && s["paging"].as_str().unwrap().contains("call again with offset"),
        "{}",
        s["paging"]
    );
    assert_eq!(c.close(), 0);
}

/// Every column header of the CSVs in `dir`, and the tables' names.
fn tables_in(dir: &std::path::Path, known: &mut std::collections::BTreeSet<String>) {
    for entry in std::fs::read_dir(dir).expect("a folder of CSVs") {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|e| e == "csv") {
            known.insert(p.file_stem().unwrap().to_string_lossy().into_owned());
            let text = std::fs::read_to_string(&p).unwrap();
            let header = text.lines().next().unwrap_or("");
            // Headers hold commas only inside quotes.
            let mut field = String::new();
            let mut quoted = false;
            for ch in header.chars().chain(std::iter::once(',')) {
                match ch {
                    '"' => quoted = !quoted,
                    ',' if !quoted => {
                        known.insert(std::mem::take(&mut field));
                    }
                    c => field.push(c),
                }
            }
        }
    }
}

/// Keys (and short string values) of a JSON value, recursively.
fn words_of(v: &Value, known: &mut std::collections::BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                known.insert(k.clone());
                words_of(x, known);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| words_of(x, known)),
        Value::String(s) if s.len() < 40 => {
            known.insert(s.clone());
        }
        _ => {}
    }
}

/// The skill (`skills/traceprism/SKILL.md`) names only what exists: every `traceprism X` is a
/// command, every name in code is a command, a tool, a table, a column or a key of the answers
/// (or one of the documented values below, each a word the tables write).
#[test]
fn the_skill_names_only_commands_tools_tables_and_columns_that_exist() {
    let skill =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("skills/traceprism/SKILL.md")).unwrap();
    let front = skill.strip_prefix("---\n").and_then(|s| s.split_once("\n---\n")).expect("front matter").0;
    assert!(front.lines().any(|l| l == "name: traceprism"), "{front}");
    assert!(front.lines().any(|l| l.starts_with("description: ") && l.len() > 100), "{front}");

    let mut commands: Vec<String> = cli(&["help"])
        .lines()
        .filter_map(|l| l.trim().strip_prefix("traceprism "))
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect();
    commands.push("mcp".into());
    let mut known: std::collections::BTreeSet<String> = commands.iter().cloned().collect();
    let mut c = Client::start();
    known.insert("traceprism".into());
    for t in c.request("tools/list", json!({}))["tools"].as_array().unwrap() {
        known.insert(t["name"].as_str().unwrap().to_string());
        // Its parameters.
        known.extend(t["inputSchema"]["properties"].as_object().unwrap().keys().cloned());
    }
    assert_eq!(c.close(), 0);
    let dir = std::env::temp_dir().join(format!("traceprism-skill-{}", std::process::id()));
    let trace = path("llama_small_stack.pt.trace.json.gz");
    let (a, b) =
        (path("sglang_qwen3-30b-a3b_decode_mi300x.trace.json.gz"), path("sglang_qwen3-30b-a3b_decode_b300.trace.json.gz"));
    cli(&["export", &trace, "--out", dir.join("trace").to_str().unwrap()]);
    cli(&["compare", &a, &b, "--out", dir.join("compare").to_str().unwrap()]);
    let run = two_ranks(&dir);
    cli(&["ranks", run.to_str().unwrap(), "--out", dir.join("ranks").to_str().unwrap()]);
    for sub in ["trace", "compare", "ranks"] {
        tables_in(&dir.join(sub), &mut known);
    }
    for args in [
        vec!["summary", &trace, "--json"],
        vec!["doctor", &trace, "--json"],
        vec!["findings", &trace, "--json"],
        vec!["gate", &a, &b, "--json"],
    ] {
        let out = Command::new(BIN).args(&args).output().unwrap();
        words_of(&serde_json::from_slice(&out.stdout).unwrap(), &mut known);
    }
    // Values the skill explains that these fixtures do not all produce: the gate's verdicts, the
    // health statuses, the workload kinds, the collective classes and late sides, how a pass was
    // delimited.
    for w in [
        "no_change",
        "improvement",
        "regression",
        "inconclusive",
        "present",
        "partial",
        "missing",
        "ok",
        "warning",
        "llm_inference",
        "training",
        "diffusion",
        "transfer",
        "skew",
        "mixed",
        "host",
        "device",
        "prefill",
        "decode",
        // How a pass was delimited when no name confirmed it (`delimited_by`).
        "structure",
        // Finding confidences (the kinds are added from the code below).
        "medium",
        "low",
    ] {
        known.insert(w.to_string());
    }
    known.extend(traceprism::analysis::findings::Kind::ALL.iter().map(|k| k.to_string()));
    // The step budget's parts (its `part` column).
    known.extend(traceprism::analysis::budget::Part::ALL.iter().map(|p| p.as_str().to_string()));
    std::fs::remove_dir_all(&dir).ok();

    let mut unknown = Vec::new();
    let mut checked = 0;
    for (k, span) in skill.split('`').enumerate() {
        if k % 2 == 0 || span.is_empty() {
            continue;
        }
        if let Some(rest) = span.strip_prefix("traceprism ") {
            checked += 1;
            let cmd = rest.split_whitespace().next().unwrap_or("");
            if !commands.iter().any(|c| c == cmd) {
                unknown.push(format!("command `{span}`"));
            }
        } else if known.contains(span) {
            checked += 1;
        } else if span.chars().all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_') && span.contains('_')
            || span.chars().all(|ch| ch.is_ascii_lowercase()) && span.len() > 2
        {
            checked += 1;
            unknown.push(format!("`{span}`"));
        }
    }
    assert!(checked > 60, "only {checked} names checked");
    assert!(unknown.is_empty(), "the skill names what does not exist: {}", unknown.join(", "));
}

/// Tables of an answer against the CLI's: the same columns, each table's rows the CLI's first
/// ones, a cut table saying its `rows_total`. Returns how many were cut.
fn same_tables_as_cli(got: &Value, want: &Value) -> usize {
    let (got, want) = (got.as_array().unwrap(), want.as_array().unwrap());
    assert_eq!(got.len(), want.len());
    let mut cut = 0;
    for (g, w) in got.iter().zip(want) {
        assert_eq!(g["columns"], w["columns"]);
        let (gr, wr) = (g["rows"].as_array().unwrap(), w["rows"].as_array().unwrap());
        assert_eq!(gr[..], wr[..gr.len()], "{}", g["name"]);
        if gr.len() < wr.len() {
            cut += 1;
            assert_eq!(g["rows_total"], wr.len(), "{}", g["name"]);
        }
    }
    cut
}

/// The MCP server's answer cap (its `MAX_ANSWER_BYTES`, a binary's constant the suite cannot import).
fn traceprism_mcp_cap() -> usize {
    100_000
}
