//! Command-line arguments: positional paths plus `--flag [value]` options mapped onto [`Options`].

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
    pub options: Options,
    /// Flags a subcommand reads itself (`--phase`, `--label-a`...), in the order given.
    pub extra: Vec<(String, String)>,
    /// Flags given more than once (an error unless the command reads them with [`Args::values`]).
    pub repeated: Vec<String>,
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

/// A flag more than one command reads, declared once: its spellings, whether it takes a value and
/// the commands that read it. A command given a flag it does not read refuses it by name; a flag
/// only one command reads is declared with that command (`Command::flags` in `cli/mod.rs`).
struct Flag {
    names: &'static [&'static str],
    switch: bool,
    takers: Takers,
}

/// Every flag more than one command reads.
const SHARED: &[Flag] = &[
    Flag {
        names: &["--json"],
        switch: true,
        takers: Takers::Only(&["summary", "doctor", "findings", "layers", "compare", "ranks", "gate"]),
    },
    Flag {
        names: &["--verbose", "-v"],
        switch: true,
        takers: Takers::Only(&["summary", "compare", "export", "ranks", "report"]),
    },
    Flag {
        names: &["--out", "-o"],
        switch: false,
        takers: Takers::Only(&["export", "compare", "ranks", "split", "synth-ranks", "digest"]),
    },
    Flag { names: &["--truth"], switch: false, takers: Takers::Only(&["summary"]) },
    Flag { names: &["--html"], switch: false, takers: Takers::Only(&["report", "ranks"]) },
    Flag { names: &["--xlsx"], switch: false, takers: Takers::Only(&["export", "ranks"]) },
    Flag { names: &["--debug-layers"], switch: false, takers: Takers::Only(&["layers"]) },
    Flag { names: &["--threads"], switch: false, takers: Takers::Analysing },
    Flag { names: &["--rules"], switch: false, takers: Takers::Analysing },
    Flag { names: &["--micro-idle-us", "--micro_idle_thresh_us"], switch: false, takers: Takers::Analysing },
    Flag { names: &["--short-kernel-us"], switch: false, takers: Takers::Analysing },
    Flag { names: &["--short-kernel-bins"], switch: false, takers: Takers::Analysing },
    Flag { names: &["--decode-threshold", "--decode_threshold"], switch: false, takers: Takers::Analysing },
    Flag { names: &["--phase-method"], switch: false, takers: Takers::Analysing },
    Flag { names: &["--device"], switch: false, takers: Takers::Analysing },
    Flag { names: &["--topk"], switch: false, takers: Takers::Analysing },
    Flag { names: &["--split-half-layers"], switch: true, takers: Takers::Analysing },
    Flag { names: &["--exclude-unlinked"], switch: true, takers: Takers::Analysing },
    Flag { names: &["--strict"], switch: true, takers: Takers::Analysing },
];

/// The commands that read `flag`, when it is a shared flag.
fn takers(flag: &Flag) -> &'static [&'static str] {
    match flag.takers {
        Takers::Analysing => ANALYSING,
        Takers::Only(c) => c,
    }
}

/// Refuses a shared flag `command` does not read, naming the commands that do.
fn check_taken(command: &str, flag: &str) -> Result<Option<&'static Flag>> {
    let Some(f) = SHARED.iter().find(|f| f.names.contains(&flag)) else { return Ok(None) };
    let takers = takers(f);
    if command.is_empty() || takers.contains(&command) {
        return Ok(Some(f));
    }
    Err(Error::new(format!("{flag} is not an option of `{command}` (it is of: {})", takers.join(", "))))
}

/// Parses `args` for `command`, which has switches of its own (flags without a value that other
/// subcommands may take with one: `watch --ranks` against `synth-ranks --ranks N`). A shared flag
/// the command does not read is an error naming it (an empty `command` takes every one).
pub fn parse_with(args: &[String], command: &str, switches: &[&str]) -> Result<Args> {
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
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) => (f, Some(v.to_string())),
            None => (a, None),
        };
        if seen.contains(&flag) {
            if !out.repeated.iter().any(|r| r == flag) {
                out.repeated.push(flag.to_string());
            }
        } else {
            seen.push(flag);
        }
        let shared = check_taken(command, flag)?;
        if shared.is_some_and(|f| f.switch) || switches.contains(&flag) {
            match flag {
                "--json" => out.json = true,
                "--verbose" | "-v" => out.verbose = true,
                "--split-half-layers" => out.options.split_half_layers = true,
                "--exclude-unlinked" => out.options.include_unlinked = false,
                "--strict" => out.options.strict = true,
                _ => out.extra.push((flag.to_string(), String::new())),
            }
            i += 1;
            continue;
        }
        let value = match inline {
            Some(v) => v,
            None => {
                i += 1;
                args.get(i).cloned().ok_or_else(|| Error::new(format!("{flag} needs a value")))?
            }
        };
        i += 1;
        apply(&mut out, flag, value)?;
    }
    Ok(out)
}

fn number<T: std::str::FromStr>(flag: &str, v: &str) -> Result<T> {
    v.parse().map_err(|_| Error::new(format!("{flag}: '{v}' is not a number")))
}

fn apply(out: &mut Args, flag: &str, v: String) -> Result<()> {
    let o = &mut out.options;
    match flag {
        "--out" | "-o" => out.out = Some(v),
        "--threads" => match number(flag, &v)? {
            0 => return Err(Error::new("--threads: give 1 or more")),
            n => out.threads = Some(n),
        },
        "--truth" => out.truth = Some(v),
        "--html" => out.html = Some(v),
        "--xlsx" => out.xlsx = Some(v),
        "--rules" => {
            let text = std::fs::read_to_string(&v).map_err(|e| Error::new(format!("cannot read rules file {v}: {e}")))?;
            o.category_rules = Some(text);
        }
        "--micro-idle-us" | "--micro_idle_thresh_us" => o.micro_idle_us = number(flag, &v)?,
        "--short-kernel-us" => o.short_kernel_us = number(flag, &v)?,
        "--short-kernel-bins" => o.short_kernel_bins = number(flag, &v)?,
        "--decode-threshold" | "--decode_threshold" => o.decode_threshold = number(flag, &v)?,
        "--phase-method" => o.phase_method = traceprism::analysis::options::PhaseMethod::parse(&v)?,
        "--device" => o.device = Some(v),
        "--topk" => o.topk = number(flag, &v)?,
        "--debug-layers" => {
            out.debug_layers = v.split(',').filter(|s| !s.is_empty()).map(|s| number(flag, s.trim())).collect::<Result<_>>()?
        }
        _ => out.extra.push((flag.to_string(), v)),
    }
    Ok(())
}

impl Args {
    /// Errors on flags the subcommand does not know (`allowed` lists the extra ones it reads), and
    /// on a flag given twice that the subcommand takes once (a second `--out` would silently win)
    /// unless `repeatable` lists it (read with [`Args::values`]).
    pub fn reject_unknown_repeating(&self, allowed: &[&str], repeatable: &[&str]) -> Result<()> {
        if let Some((f, _)) = self.extra.iter().find(|(f, _)| !allowed.contains(&f.as_str())) {
            return Err(Error::new(format!("unknown option {f} (see `traceprism help`)")));
        }
        match self.repeated.iter().find(|f| !repeatable.contains(&f.as_str())) {
            Some(f) => Err(Error::new(format!("{f} is given more than once; this command takes it once"))),
            None => Ok(()),
        }
    }
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
    use super::{parse_with, Args, ANALYSING, SHARED};
    use traceprism::Result;

    fn parse(v: &[String]) -> Result<Args> {
        parse_with(v, "", &[])
    }

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn repeated_flags_are_kept_in_order_and_refused_where_taken_once() {
        let a = parse(&args(&["t.json", "--capture", "a.json", "--capture=b.json", "--phase", "decode"])).unwrap();
        assert_eq!(a.values("--capture"), ["a.json", "b.json"]);
        assert!(a.reject_unknown_repeating(&["--capture", "--phase"], &["--capture"]).is_ok());
        let e = a.reject_unknown_repeating(&["--capture", "--phase"], &[]).unwrap_err().to_string();
        assert!(e.contains("--capture is given more than once"), "{e}");
        let twice = parse(&args(&["t.json", "--out", "a", "--out", "b"])).unwrap();
        assert!(twice.reject_unknown_repeating(&[], &[]).unwrap_err().to_string().contains("--out is given more than once"));
        assert!(parse(&args(&["t.json", "--json", "--verbose"])).unwrap().reject_unknown_repeating(&[], &[]).is_ok());
    }

    #[test]
    fn a_command_refuses_by_name_a_shared_flag_it_does_not_read() {
        let e = parse_with(&args(&["t.json", "--html", "x.html"]), "layers", &[]).unwrap_err().to_string();
        assert_eq!(e, "--html is not an option of `layers` (it is of: report, ranks)");
        let e = parse_with(&args(&["t.json", "--out", "d"]), "doctor", &[]).unwrap_err().to_string();
        assert!(e.starts_with("--out is not an option of `doctor`"), "{e}");
        assert!(parse_with(&args(&["t.json", "--html", "x.html"]), "report", &[]).is_ok());
        assert!(parse_with(&args(&["t.json", "--threads", "3"]), "summary", &[]).is_ok());
        assert!(parse_with(&args(&["--threads", "3"]), "tables", &[]).is_err());
    }

    #[test]
    fn every_shared_flag_is_read_by_a_known_command_and_spelled_once() {
        let mut seen = std::collections::HashSet::new();
        for f in SHARED {
            for n in f.names {
                assert!(seen.insert(*n), "{n} declared twice");
            }
            assert!(super::takers(f).iter().all(|c| ANALYSING.contains(c) || *c == "synth-ranks"), "{:?}", f.names);
        }
    }
}
