//! `traceprism split TRACE (--pass N | --phase prefill|decode | --from US --to US) --out FILE`: the
//! events of one window as a Chrome-trace `.json.gz` (see `traceprism::split`).

use super::args::{number, Args};
use traceprism::split::{select, Splitter, WindowGiven};
use traceprism::{Error, Result};

/// Writes the chosen window of the trace to `--out FILE`.
pub fn run(a: &Args) -> Result<()> {
    let path = a.one_trace()?;
    if path == "-" {
        return Err(Error::new("split reads the trace twice: give a file, not standard input"));
    }
    let file = a.out.as_deref().ok_or_else(|| Error::new("split needs --out FILE (a .json.gz is written)"))?;
    let given = WindowGiven {
        pass: a.extra("--pass").map(|n| number("--pass", n)).transpose()?,
        phase: a.extra("--phase").map(str::to_string),
        from_us: a.extra("--from").map(|v| number("--from", v)).transpose()?,
        to_us: a.extra("--to").map(|v| number("--to", v)).transpose()?,
    };
    let window = given.window()?;
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
