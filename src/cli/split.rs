//! `traceprism split TRACE (--pass N | --phase prefill|decode | --from US --to US) --out FILE`: the
//! events of one window as a Chrome-trace `.json.gz` (see `traceprism::split`).

use super::args::Args;
use traceprism::analysis::phases::Phase;
use traceprism::split::{select, Splitter, Window};
use traceprism::{Error, Result};

/// Writes the chosen window of the trace to `--out FILE`.
pub fn run(a: &Args) -> Result<()> {
    let path = a.one_trace()?;
    if path == "-" {
        return Err(Error::new("split reads the trace twice: give a file, not standard input"));
    }
    let file = a.out.as_deref().ok_or_else(|| Error::new("split needs --out FILE (a .json.gz is written)"))?;
    let number = |flag: &str, v: &str| v.parse::<f64>().map_err(|_| Error::new(format!("{flag}: not a number: {v}")));
    let window = match (a.extra("--pass"), a.extra("--phase"), a.extra("--from"), a.extra("--to")) {
        (Some(n), None, None, None) => Window::Pass(n.parse().map_err(|_| Error::new(format!("--pass: not a pass index: {n}")))?),
        (None, Some(p), None, None) => Window::Phase(
            Phase::select("--phase", p)?
                .ok_or_else(|| Error::new("--phase: one phase, not all (to keep every pass, copy the trace)"))?,
        ),
        (None, None, Some(from), Some(to)) => Window::Time { from_us: number("--from", from)?, to_us: number("--to", to)? },
        _ => {
            return Err(Error::new(
                "split needs one of --pass N, --phase prefill|decode, or --from US --to US (µs since the trace's start)",
            ))
        }
    };
    let analysis = super::load(path, a)?;
    let selection = select(analysis, &window)?;
    let kernels = selection.kernels;
    let mut splitter = Splitter::new(selection);
    let mut source = std::fs::File::open(path).map_err(|e| Error::new(format!("cannot open {path}: {e}")))?;
    let mut buf = vec![0u8; 8 << 20];
    loop {
        let n = std::io::Read::read(&mut source, &mut buf).map_err(|e| Error::new(format!("cannot read {path}: {e}")))?;
        if n == 0 {
            break;
        }
        splitter.push(&buf[..n])?;
    }
    let (events, kept, redacted) = (splitter.events, splitter.kept, splitter.redacted());
    let bytes = splitter.finish()?;
    std::fs::write(file, &bytes).map_err(|e| Error::new(format!("cannot write {file}: {e}")))?;
    let redacted = match redacted {
        0 => String::new(),
        n => format!("; {n} secret-looking metadata value{} written as REDACTED", if n == 1 { "" } else { "s" }),
    };
    eprintln!("wrote {file}: {kept} of {events} events ({kernels} kernels), {} bytes{redacted}", bytes.len());
    Ok(())
}
