//! Subcommands of the `traceprism` binary.

mod args;
mod compare;
mod doctor;
mod export;
mod findings;
mod flame;
mod gate;
mod layers;
mod ranks;
mod report;
mod split;
mod summary_text;
mod watch;

use traceprism::analysis::compare::CompareOptions;
use traceprism::analysis::options::Declared;
use traceprism::Options;
use traceprism::{analyze_path_with, Analysis, Error, Result};

/// The usage's first lines, before the commands.
const USAGE_HEAD: &str =
    "traceprism — read GPU profiler traces of LLM inference (torch.profiler/Kineto, JAX XSpace, Nsight Systems)

USAGE:
";

/// The usage's last lines, after the commands: what TRACE is, the options every analysing command
/// takes.
const USAGE_TAIL: &str = "
TRACE is a Chrome-trace JSON file, plain or gzip, a JAX profile (*.xplane.pb, protobuf XSpace) or an Nsight
Systems export (nsys export --type sqlite), told apart by its bytes; `-` reads standard input.

OPTIONS (all analysing commands):
";

/// The usage's options that are not [`traceprism::Options`]' (which are listed from their
/// declaration).
const USAGE_READING: &str =
    "  --capture FILE|DIR       a capture trace (recorded while the engine captured its CUDA/HIP graphs), or a
                           folder with execution_details.json; repeat for several. Kernels replayed from
                           graphs take the op, shapes and module that dispatched them at capture.
                           summary, export, report, table, layers; compare: --capture-a / --capture-b;
                           ranks: each capture goes to its rank (distributedInfo or file name)
  --threads N              threads that parse a plain-JSON trace (default: one per core, up to 8;
                           1 reads it in order on one thread; a .gz is inflated on a second thread)
";

/// One command: its name, its lines of the usage, what runs it and the exit status of its errors. [`COMMANDS`] lists them all, as
/// `report::TABLES` lists tables: the usage text and the dispatch are both made from it.
struct Command {
    name: &'static str,
    usage: &'static str,
    /// Runs the command; its `Ok` is the exit status (0 but for the gate's verdicts).
    run: fn(&args::Args) -> Result<i32>,
    /// The exit status of an error (the gate keeps 1 and 2 for its verdicts).
    error_exit: i32,
}

/// Every command, in the usage's order.
const COMMANDS: &[Command] = &[
    Command {
        name: "summary",
        usage: "  traceprism summary TRACE [--json] [--verbose [--truth FILE]]   terminal summary (or one JSON object); --verbose
                                                                 scores a truth file given or found beside TRACE
",
        run: |a| summary_text::run(a).map(|()| 0),
        error_exit: 1,
    },
    Command {
        name: "doctor",
        usage: "  traceprism doctor TRACE [--json]                               the trace's health: what the profiler recorded
                                                                 (CPU ops, kernels, shapes, stacks, steps, graphs...),
                                                                 what that limits, the exact switch for the rest;
                                                                 broken JSON repaired, kernels dropped, events not read
",
        run: |a| doctor::run(a).map(|()| 0),
        error_exit: 1,
    },
    Command {
        name: "findings",
        usage: "  traceprism findings TRACE [--json]                             what to fix first, read from every step's budget
                                                                 (`table TRACE step_budget`): the host in a named
                                                                 activity (data loader, scheduler...), launching one
                                                                 by one, syncs, stalls, exposed collectives or copies,
                                                                 unfused chains, idle between steps, GPU-bound steps,
                                                                 with the saving per step, the fix and the check
",
        run: |a| findings::run(a).map(|()| 0),
        error_exit: 1,
    },
    Command {
        name: "flame",
        usage: "  traceprism flame TRACE [--phase P] [--folded | --svg FILE] [--against B]\n                                                                 GPU time by call path (Python frames, modules, the op
                                                                 chain, the kernel) as folded stacks (`frame;kernel ns`,
                                                                 for inferno/speedscope) or an SVG flame graph; with
                                                                 --against B the differential graph, per pass
",
        run: |a| flame::run(a).map(|()| 0),
        error_exit: 1,
    },
    Command {
        name: "export",
        usage: "  traceprism export TRACE --out DIR                              every table as DIR/<table>.csv
  traceprism export TRACE --xlsx FILE                            every table as a sheet of one .xlsx workbook
  traceprism export TRACE --parquet DIR                          every table as DIR/<table>.parquet (typed, zstd,
                                                                 the trace's file, rank, device and workload
                                                                 as key-value metadata)
",
        run: |a| export::run(a).map(|()| 0),
        error_exit: 1,
    },
    Command {
        name: "report",
        usage: "  traceprism report TRACE --html FILE                            one self-contained HTML report (charts inline)
",
        run: |a| report::run(a).map(|()| 0),
        error_exit: 1,
    },
    Command {
        name: "layers",
        usage: "  traceprism layers TRACE [--debug-layers 0,1,2] [--split-half-layers] [--json]  layers per pass; kernels of chosen layers
",
        run: |a| layers::run(a).map(|()| 0),
        error_exit: 1,
    },
    Command {
        name: "split",
        usage: "  traceprism split TRACE (--pass N | --phase prefill|decode | --from US --to US) --out FILE
                                                                 the events of one pass, phase or time window
                                                                 (µs since the trace's start) as a .json.gz
",
        run: |a| split::run(a).map(|()| 0),
        error_exit: 1,
    },
    Command {
        name: "table",
        usage: "  traceprism table TRACE NAME [--csv]                            print one table
",
        run: |a| export::print_table(a).map(|()| 0),
        error_exit: 1,
    },
    Command {
        name: "tables",
        usage: "  traceprism tables                                              list table names
",
        run: |_| {
            out(&traceprism::report::table_names().iter().map(|n| format!("{n}\n")).collect::<String>());
            Ok(0)
        },
        error_exit: 1,
    },
    Command {
        name: "compare",
        usage: "  traceprism compare A B [--phase prefill|decode|all] [--json] [--out DIR] [COMPARE OPTIONS]
                                                                 where is A slower than B, and why
",
        run: |a| compare::run(a).map(|()| 0),
        error_exit: 1,
    },
    Command {
        name: "ranks",
        usage: "  traceprism ranks FILE... | DIR [--out DIR] [--xlsx FILE] [--html FILE] [--parquet DIR] [--json] [--no-align]
                                                                 all ranks of one run: collectives matched,
                                                                 clocks aligned, waits, the straggler by
                                                                 phase and layer
",
        run: |a| ranks::run(a).map(|()| 0),
        error_exit: 1,
    },
    Command {
        name: "synth-ranks",
        usage: "  traceprism synth-ranks TRACE --out DIR [--ranks N] [--straggler R] [--delay-us D] [--every K] [--seed S] [--late host|device]
                                                                 an N-rank run made from one real rank's
                                                                 trace, with injected delays and a truth file
",
        run: |a| ranks::synth(a).map(|()| 0),
        error_exit: 1,
    },
    Command {
        name: "digest",
        usage: "  traceprism digest TRACE --out FILE.json                        a small baseline for the gate (per-pass samples)
",
        run: |a| gate::digest(a).map(|()| 0),
        error_exit: 1,
    },
    Command {
        name: "mcp",
        usage: "  traceprism mcp                                                  a Model Context Protocol server on stdin/stdout: the
                                                                 commands above as tools for an agent (see
                                                                 skills/traceprism/SKILL.md)
",
        run: |_| Err(Error::new("`traceprism mcp` is served by the binary's MCP face, not the command line")),
        error_exit: 1,
    },
    Command {
        name: "watch",
        usage: "  traceprism watch DIR [--interval S] [--trend FILE] [--ranks] [--once]
                                                                 each new trace of a folder once complete:
                                                                 a line per window, a trend CSV row
",
        run: |a| watch::run(a).map(|()| 0),
        error_exit: 1,
    },
    Command {
        name: "gate",
        usage: "  traceprism gate BASELINE NEW [--max-slowdown 3%] [--confidence 0.99] [--metric kernel|wall] [--json] [--markdown FILE]
                                                                 is NEW slower than BASELINE (a trace or a digest)
                                                                 beyond noise: exit 0 pass, 1 regression,
                                                                 2 inconclusive, 3 error
",
        run: gate::run,
        error_exit: 3,
    },
];

/// The whole usage text.
fn usage() -> String {
    let commands: String = COMMANDS.iter().map(|c| c.usage).collect();
    format!(
        "{USAGE_HEAD}{commands}{USAGE_TAIL}{}{USAGE_READING}\nCOMPARE OPTIONS (compare):\n{}{}",
        Options::usage_lines(),
        CompareOptions::usage_lines(),
        finding_kinds()
    )
}

/// The usage's list of finding kinds, made from the table that declares them.
fn finding_kinds() -> String {
    let mut o = String::from("\nFINDING KINDS (findings, ranks):\n");
    for spec in &traceprism::analysis::findings::KINDS {
        o.push_str(&format!("  {:<25}{}\n", spec.name, spec.finds));
    }
    o
}

/// Runs the command line; returns the process exit code.
pub fn run(argv: &[String]) -> i32 {
    let Some((cmd, rest)) = argv.split_first() else {
        eprint!("{}", usage());
        return 2;
    };
    // `traceprism summary --help` and the like: the usage, not an error about a missing value.
    if matches!(cmd.as_str(), "help" | "--help" | "-h") || rest.iter().any(|a| a == "--help" || a == "-h") {
        out(&usage());
        return 0;
    }
    if matches!(cmd.as_str(), "--version" | "-V") {
        out(&format!("traceprism {}\n", env!("CARGO_PKG_VERSION")));
        return 0;
    }
    let Some(command) = COMMANDS.iter().find(|c| c.name == cmd) else {
        eprintln!("traceprism: error: unknown command '{cmd}' (try `traceprism help`)");
        return 1;
    };
    match args::parse_with(rest, command.name).and_then(|a| (command.run)(&a)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("traceprism: error: {e}");
            command.error_exit
        }
    }
}

/// Writes to stdout; a closed pipe (`traceprism table ... | head`) ends the program quietly.
pub(crate) fn out(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_all(text.as_bytes()).and_then(|_| stdout.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("traceprism: error: cannot write output: {e}");
        std::process::exit(1);
    }
}

/// Reads and analyses the trace at `path` with the parsed options.
///
/// The analysis is leaked on purpose: the process ends right after the command, and the OS takes
/// the memory back faster than running the destructors of millions of column entries.
pub(crate) fn load(path: &str, a: &args::Args) -> Result<&'static Analysis> {
    load_with(path, a, &a.values("--capture"))
}

/// [`load`] with capture traces (files or folders) whose ops the trace's graph replays take.
pub(crate) fn load_with(path: &str, a: &args::Args, captures: &[&str]) -> Result<&'static Analysis> {
    let threads = a.threads.unwrap_or_else(traceprism::read::default_read_threads);
    let captures: Vec<std::path::PathBuf> = captures.iter().map(std::path::PathBuf::from).collect();
    let analysis = analyze_path_with(std::path::Path::new(path), a.options.clone(), threads, &captures)?;
    if let Some(cut) = &analysis.trace.stats.truncation {
        // On stderr for every command (the summary also prints it in its text and JSON).
        eprintln!("traceprism: warning: {path}: {}", cut.message());
    }
    Ok(Box::leak(Box::new(analysis)))
}
