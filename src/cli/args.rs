//! Command-line arguments: positional paths plus `--flag [value]` options mapped onto [`Options`].

use traceprism::analysis::compare::CompareOptions;
use traceprism::analysis::options::{Declaration, Declared, Given, Kind};
use traceprism::{Error, Options, Result};

/// Parsed arguments of one subcommand.
#[derive(Debug, Default)]
pub struct Args {
    pub positional: Vec<String>,
    pub json: bool,
    pub verbose: bool,
    pub out: Option<String>,
    pub truth: Option<String>,
    pub html: Option<String>,
    pub xlsx: Option<String>,
    pub debug_layers: Vec<u32>,
    /// `--threads N`: threads that parse a plain-JSON trace (none: one per core).
    pub threads: Option<usize>,
    /// The analysis options ([`Options`]'s declared flags, every analysing command).
    pub options: Options,
    /// The comparison options ([`CompareOptions`]'s declared flags, `compare`).
    pub compare: CompareOptions,
    /// Flags a subcommand reads itself (`--phase`, `--label-a`...), in the order given.
    pub extra: Vec<(String, String)>,
}

/// The commands that analyse a trace: every option of the analysis applies to each.
pub const ANALYSING: &[&str] = &[
    "summary", "doctor", "findings", "flame", "export", "report", "layers", "split", "table", "compare", "ranks", "digest",
    "watch", "gate",
];

/// Which commands read a flag.
enum Takers {
    /// Every command in [`ANALYSING`].
    Analysing,
    /// These commands only.
    Only(&'static [&'static str]),
}

/// What reading a flag does.
#[derive(Clone, Copy)]
enum Reads {
    /// A switch (no value) that sets a field of [`Args`].
    Switch(fn(&mut Args)),
    /// A value checked and stored in a field of [`Args`] (the flag's name for its error).
    Value(fn(&mut Args, &str, String) -> Result<()>),
    /// A switch the command reads itself ([`Args::extra`] holds it, with an empty value).
    OwnSwitch,
    /// A value the command reads itself ([`Args::extra`], [`Args::values`]).
    OwnValue,
}

/// A flag, declared once: its spellings, what reading it does, the commands that read it and
/// whether it may be given more than once. A command given a flag it does not read refuses it by
/// name. (One spelling may be two flags for disjoint commands: `watch --ranks` is a switch,
/// `synth-ranks --ranks N` takes a value.)
struct Flag {
    names: &'static [&'static str],
    reads: Reads,
    takers: Takers,
    repeatable: bool,
}

impl Flag {
    /// A flag its commands give once.
    const fn once(names: &'static [&'static str], reads: Reads, takers: Takers) -> Flag {
        Flag { names, reads, takers, repeatable: false }
    }
}

/// Every flag of every command, in one table (as ripgrep's `flags/defs.rs`), but the options
/// declared with their structs: [`Options`]' (every analysing command) and [`CompareOptions`]'
/// (`compare`), read by [`Declared::set_given`].
const FLAGS: &[Flag] = &[
    // Shared by several commands.
    Flag::once(
        &["--json"],
        Reads::Switch(|a| a.json = true),
        Takers::Only(&["summary", "doctor", "findings", "layers", "compare", "ranks", "gate"]),
    ),
    Flag::once(
        &["--verbose", "-v"],
        Reads::Switch(|a| a.verbose = true),
        Takers::Only(&["summary", "compare", "export", "ranks", "report"]),
    ),
    Flag::once(
        &["--out", "-o"],
        Reads::Value(|a, _, v| {
            a.out = Some(v);
            Ok(())
        }),
        Takers::Only(&["export", "compare", "ranks", "split", "synth-ranks", "digest"]),
    ),
    Flag::once(
        &["--truth"],
        Reads::Value(|a, _, v| {
            a.truth = Some(v);
            Ok(())
        }),
        Takers::Only(&["summary"]),
    ),
    Flag::once(
        &["--html"],
        Reads::Value(|a, _, v| {
            a.html = Some(v);
            Ok(())
        }),
        Takers::Only(&["report", "ranks"]),
    ),
    Flag::once(
        &["--xlsx"],
        Reads::Value(|a, _, v| {
            a.xlsx = Some(v);
            Ok(())
        }),
        Takers::Only(&["export", "ranks"]),
    ),
    Flag::once(&["--parquet"], Reads::OwnValue, Takers::Only(&["export", "ranks"])),
    Flag::once(&["--phase"], Reads::OwnValue, Takers::Only(&["flame", "split"])),
    Flag {
        names: &["--capture"],
        reads: Reads::OwnValue,
        takers: Takers::Only(&["summary", "doctor", "findings", "flame", "export", "report", "layers", "table", "ranks"]),
        repeatable: true,
    },
    // Every analysing command's options.
    Flag::once(&["--threads"], Reads::Value(threads), Takers::Analysing),
    // One command's own.
    Flag::once(&["--debug-layers"], Reads::Value(debug_layers), Takers::Only(&["layers"])),
    Flag::once(&["--folded"], Reads::OwnSwitch, Takers::Only(&["flame"])),
    Flag::once(&["--svg"], Reads::OwnValue, Takers::Only(&["flame"])),
    Flag::once(&["--against"], Reads::OwnValue, Takers::Only(&["flame"])),
    Flag::once(&["--pass"], Reads::OwnValue, Takers::Only(&["split"])),
    Flag::once(&["--from"], Reads::OwnValue, Takers::Only(&["split"])),
    Flag::once(&["--to"], Reads::OwnValue, Takers::Only(&["split"])),
    Flag::once(&["--csv"], Reads::OwnSwitch, Takers::Only(&["table"])),
    Flag { names: &["--capture-a"], reads: Reads::OwnValue, takers: Takers::Only(&["compare"]), repeatable: true },
    Flag { names: &["--capture-b"], reads: Reads::OwnValue, takers: Takers::Only(&["compare"]), repeatable: true },
    Flag::once(&["--no-align"], Reads::OwnSwitch, Takers::Only(&["ranks"])),
    Flag::once(&["--ranks"], Reads::OwnValue, Takers::Only(&["synth-ranks"])),
    Flag::once(&["--straggler"], Reads::OwnValue, Takers::Only(&["synth-ranks"])),
    Flag::once(&["--delay-us"], Reads::OwnValue, Takers::Only(&["synth-ranks"])),
    Flag::once(&["--every"], Reads::OwnValue, Takers::Only(&["synth-ranks"])),
    Flag::once(&["--seed"], Reads::OwnValue, Takers::Only(&["synth-ranks"])),
    Flag::once(&["--late"], Reads::OwnValue, Takers::Only(&["synth-ranks"])),
    Flag::once(&["--interval"], Reads::OwnValue, Takers::Only(&["watch"])),
    Flag::once(&["--trend"], Reads::OwnValue, Takers::Only(&["watch"])),
    Flag::once(&["--ranks"], Reads::OwnSwitch, Takers::Only(&["watch"])),
    Flag::once(&["--once"], Reads::OwnSwitch, Takers::Only(&["watch"])),
    Flag::once(&["--max-slowdown"], Reads::OwnValue, Takers::Only(&["gate"])),
    Flag::once(&["--confidence"], Reads::OwnValue, Takers::Only(&["gate"])),
    Flag::once(&["--metric"], Reads::OwnValue, Takers::Only(&["gate"])),
    Flag::once(&["--markdown"], Reads::OwnValue, Takers::Only(&["gate"])),
];

/// The commands that read `flag`.
fn takers(flag: &Flag) -> &'static [&'static str] {
    match flag.takers {
        Takers::Analysing => ANALYSING,
        Takers::Only(c) => c,
    }
}

/// What a flag is to the command given it.
enum Found {
    /// A flag of [`FLAGS`].
    Flag(&'static Flag),
    /// An analysis option, declared in [`Options`].
    Analysis(&'static Declaration),
    /// A comparison option, declared in [`CompareOptions`].
    Compare(&'static Declaration),
}

impl Found {
    /// Whether it takes a value after it.
    fn reads_value(&self) -> bool {
        match self {
            Found::Flag(f) => matches!(f.reads, Reads::Value(_) | Reads::OwnValue),
            Found::Analysis(d) | Found::Compare(d) => !matches!(d.kind, Kind::Switch),
        }
    }
    /// Whether it may be given more than once.
    fn repeatable(&self) -> bool {
        matches!(self, Found::Flag(f) if f.repeatable)
    }
}

/// The flag `name` as `command` reads it (an empty `command` takes every flag); an error naming
/// the commands that do read it, or saying no command does.
fn flag_of(command: &str, name: &str) -> Result<Found> {
    let spelled: Vec<&Flag> = FLAGS.iter().filter(|f| f.names.contains(&name)).collect();
    if let Some(f) = spelled.iter().find(|f| command.is_empty() || takers(f).contains(&command)) {
        return Ok(Found::Flag(f));
    }
    let analysis = Options::DECLARED.iter().find(|d| d.given_by_users() && d.flags.contains(&name));
    let compare = CompareOptions::DECLARED.iter().find(|d| d.given_by_users() && d.flags.contains(&name));
    match (analysis, compare) {
        (Some(d), _) if command.is_empty() || ANALYSING.contains(&command) => return Ok(Found::Analysis(d)),
        (_, Some(d)) if command.is_empty() || command == "compare" => return Ok(Found::Compare(d)),
        _ => {}
    }
    if spelled.is_empty() && analysis.is_none() && compare.is_none() {
        return Err(Error::new(format!("unknown option {name} (see `traceprism help`)")));
    }
    let mut of: Vec<&str> = spelled.iter().flat_map(|f| takers(f).iter().copied()).collect();
    if analysis.is_some() {
        of.extend(ANALYSING);
    }
    if compare.is_some() {
        of.push("compare");
    }
    of.dedup();
    Err(Error::new(format!("{name} is not an option of `{command}` (it is of: {})", of.join(", "))))
}

/// Parses `args` for `command`: each flag as [`FLAGS`] declares it. A flag the command does not
/// read is an error naming it (an empty `command` takes every flag), and so is a flag given twice
/// that is not repeatable (a second `--out` would silently win).
pub fn parse_with(args: &[String], command: &str) -> Result<Args> {
    let mut out = Args::default();
    let mut seen: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if !a.starts_with('-') || a == "-" {
            out.positional.push(a.to_string());
            i += 1;
            continue;
        }
        let (name, inline) = match a.split_once('=') {
            Some((f, v)) => (f, Some(v.to_string())),
            None => (a, None),
        };
        let flag = flag_of(command, name)?;
        if seen.contains(&name) && !flag.repeatable() {
            return Err(Error::new(format!("{name} is given more than once; this command takes it once")));
        }
        seen.push(name);
        i += 1;
        let value = match (flag.reads_value(), inline) {
            (false, _) => String::new(),
            (true, Some(v)) => v,
            (true, None) => {
                i += 1;
                args.get(i - 1).cloned().ok_or_else(|| Error::new(format!("{name} needs a value")))?
            }
        };
        match flag {
            Found::Flag(f) => match f.reads {
                Reads::Switch(set) => set(&mut out),
                Reads::Value(store) => store(&mut out, name, value)?,
                Reads::OwnSwitch | Reads::OwnValue => out.extra.push((name.to_string(), value)),
            },
            Found::Analysis(_) => out.options.set_given(name, Given::Text(&value))?,
            Found::Compare(_) => out.compare.set_given(name, Given::Text(&value))?,
        }
    }
    Ok(out)
}

/// `v` read as a number for `flag`, or an error that names both.
pub(crate) fn number<T: std::str::FromStr>(flag: &str, v: &str) -> Result<T> {
    v.parse().map_err(|_| Error::new(format!("{flag}: '{v}' is not a number")))
}

/// `--threads N`: 1 or more.
fn threads(out: &mut Args, flag: &str, v: String) -> Result<()> {
    match number(flag, &v)? {
        0 => Err(Error::new("--threads: give 1 or more")),
        n => {
            out.threads = Some(n);
            Ok(())
        }
    }
}

/// `--debug-layers 3,7`: pass indices.
fn debug_layers(out: &mut Args, flag: &str, v: String) -> Result<()> {
    out.debug_layers = v.split(',').filter(|s| !s.is_empty()).map(|s| number(flag, s.trim())).collect::<Result<_>>()?;
    Ok(())
}

impl Args {
    /// Every value of a flag the command takes several times, in the order given (a repeated
    /// `--capture FILE`).
    pub fn values(&self, flag: &str) -> Vec<&str> {
        self.extra.iter().filter(|(f, _)| f == flag).map(|(_, v)| v.as_str()).collect()
    }
    /// Value of an extra flag.
    pub fn extra(&self, flag: &str) -> Option<&str> {
        self.extra.iter().find(|(f, _)| f == flag).map(|(_, v)| v.as_str())
    }
    /// The single trace path of commands that take one.
    pub fn one_trace(&self) -> Result<&str> {
        match self.positional.as_slice() {
            [p] => Ok(p),
            [] => Err(Error::new("missing TRACE argument")),
            _ => Err(Error::new(format!("expected one TRACE, got {}", self.positional.len()))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_with, takers, Args, Reads, ANALYSING, FLAGS};
    use traceprism::Result;

    fn parse(v: &[String], command: &str) -> Result<Args> {
        parse_with(v, command)
    }

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn repeated_flags_are_kept_in_order_and_refused_where_taken_once() {
        let a = parse(&args(&["t.json", "--capture", "a.json", "--capture=b.json"]), "summary").unwrap();
        assert_eq!(a.values("--capture"), ["a.json", "b.json"]);
        let e = parse(&args(&["t.json", "--out", "a", "--out", "b"]), "export").unwrap_err().to_string();
        assert_eq!(e, "--out is given more than once; this command takes it once");
        let a = parse(&args(&["t.json", "--json", "--verbose"]), "summary").unwrap();
        assert!(a.json && a.verbose);
    }

    #[test]
    fn a_command_refuses_by_name_a_flag_it_does_not_read() {
        let e = parse(&args(&["t.json", "--html", "x.html"]), "layers").unwrap_err().to_string();
        assert_eq!(e, "--html is not an option of `layers` (it is of: report, ranks)");
        let e = parse(&args(&["t.json", "--out", "d"]), "doctor").unwrap_err().to_string();
        assert!(e.starts_with("--out is not an option of `doctor`"), "{e}");
        assert!(parse(&args(&["t.json", "--html", "x.html"]), "report").is_ok());
        assert!(parse(&args(&["t.json", "--threads", "3"]), "summary").is_ok());
        assert!(parse(&args(&["--threads", "3"]), "tables").is_err());
        let e = parse(&args(&["a", "b", "--label-a", "x"]), "flame").unwrap_err().to_string();
        assert_eq!(e, "--label-a is not an option of `flame` (it is of: compare)");
        let e = parse(&args(&["t.json", "--nope"]), "summary").unwrap_err().to_string();
        assert_eq!(e, "unknown option --nope (see `traceprism help`)");
    }

    #[test]
    fn one_spelling_reads_as_each_command_declares_it() {
        // `watch --ranks` is a switch: the folder after it is positional.
        let w = parse(&args(&["--ranks", "dir"]), "watch").unwrap();
        assert_eq!((w.extra("--ranks"), w.positional.as_slice()), (Some(""), &["dir".to_string()][..]));
        // `synth-ranks --ranks 4` takes the value.
        let s = parse(&args(&["t.json", "--ranks", "4"]), "synth-ranks").unwrap();
        assert_eq!(s.extra("--ranks"), Some("4"));
        assert_eq!(parse(&args(&["t.json", "--folded"]), "flame").unwrap().extra("--folded"), Some(""));
        assert_eq!(parse(&args(&["t.json", "--topk=7"]), "summary").unwrap().options.topk, 7);
    }

    #[test]
    fn every_flag_is_read_by_a_known_command_and_declared_once_per_command() {
        let mut seen = std::collections::HashSet::new();
        for f in FLAGS {
            for command in takers(f) {
                assert!(ANALYSING.contains(command) || ["synth-ranks", "tables", "mcp"].contains(command), "{command}");
                for n in f.names {
                    assert!(seen.insert((*n, *command)), "{n} declared twice for {command}");
                }
            }
            assert!(
                !f.repeatable || matches!(f.reads, Reads::OwnValue),
                "{:?}: only a value the command reads is repeatable",
                f.names
            );
        }
    }

    /// Every flag a doc gives a command (`traceprism CMD ... --flag` in README, the skill, the
    /// Python face's docs and the usage) is one that command reads.
    #[test]
    fn every_flag_the_docs_give_a_command_works() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut texts: Vec<(String, String)> =
            ["README.md", "skills/traceprism/SKILL.md", "python/README.md", "fixtures/README.md"]
                .iter()
                .filter_map(|f| std::fs::read_to_string(root.join(f)).ok().map(|t| (f.to_string(), t)))
                .collect();
        texts.push(("usage".into(), super::super::usage()));
        let commands: Vec<&str> = super::super::COMMANDS.iter().map(|c| c.name).collect();
        let mut wrong = Vec::new();
        let mut checked = 0;
        for (file, text) in &texts {
            for line in text.lines() {
                for (at, _) in line.match_indices("traceprism ") {
                    let rest = &line[at + "traceprism ".len()..];
                    let command = rest.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')).next().unwrap_or("");
                    if !commands.contains(&command) {
                        continue;
                    }
                    // The command line ends at a closing backtick, a pipe, a comment or the next
                    // command named on the line.
                    let end = rest.find(['`', '|', '#']).unwrap_or(rest.len());
                    let end = rest[..end].find(" traceprism ").unwrap_or(end);
                    for word in rest[..end].split_whitespace().skip(1) {
                        let word = word.trim_matches(|c| c == '[' || c == ']' || c == ',' || c == ')' || c == '(' || c == ';');
                        let name = word.split('=').next().unwrap_or("");
                        if !(name.starts_with("--")
                            && name.len() > 2
                            && name[2..].chars().all(|c| c.is_ascii_lowercase() || c == '-' || c == '_'))
                        {
                            continue;
                        }
                        checked += 1;
                        if name == "--help" {
                            continue;
                        }
                        if let Err(e) = super::flag_of(command, name) {
                            wrong.push(format!("{file}: `traceprism {command} ... {name}`: {e}"));
                        }
                    }
                }
            }
        }
        assert!(checked > 50, "the docs' command lines are found ({checked} flags)");
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
