//! `traceprism export` (every table as CSV) and `traceprism table` (one table in the terminal).

use super::args::Args;
use traceprism::report::{table, table_names, write_csv};
use traceprism::{Error, Result};

/// Writes every table as `DIR/<table>.csv` (`--out DIR`) and/or as one workbook (`--xlsx FILE`).
pub fn run(a: &Args) -> Result<()> {
    a.reject_unknown(&[])?;
    let path = a.one_trace()?;
    if a.out.is_none() && a.xlsx.is_none() {
        return Err(Error::new("export needs --out DIR and/or --xlsx FILE"));
    }
    let analysis = super::load(path, a)?;
    if let Some(file) = a.xlsx.as_deref() {
        let bytes = traceprism::report::workbook(analysis);
        std::fs::write(file, &bytes).map_err(|e| Error::new(format!("cannot write {file}: {e}")))?;
        if a.verbose {
            eprintln!("wrote {file} ({} sheets, {} bytes)", table_names().len(), bytes.len());
        }
    }
    let Some(dir) = a.out.as_deref() else { return Ok(()) };
    std::fs::create_dir_all(dir).map_err(|e| Error::new(format!("cannot create {dir}: {e}")))?;
    for name in table_names() {
        let file = std::path::Path::new(dir).join(format!("{name}.csv"));
        let cannot = |e: std::io::Error| Error::new(format!("cannot write {}: {e}", file.display()));
        let out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&file).map_err(cannot)?);
        let rows = write_csv(analysis, name, out).map_err(cannot)?.expect("listed table");
        if a.verbose {
            eprintln!("wrote {} ({rows} rows)", file.display());
        }
    }
    if a.verbose {
        if let Some(kb) = super::summary_text::peak_memory_kb() {
            eprintln!("peak memory {:.1} MB", kb as f64 / 1024.0);
        }
    }
    Ok(())
}

/// Prints one table (aligned text, or CSV with `--csv`).
pub fn print_table(a: &Args) -> Result<()> {
    a.reject_unknown(&["--csv"])?;
    let [path, name] = a.positional.as_slice() else {
        return Err(Error::new("usage: traceprism table TRACE NAME"));
    };
    if !table_names().contains(&name.as_str()) {
        return Err(Error::new(format!("no table named '{name}' (tables: {})", table_names().join(", "))));
    }
    let analysis = super::load(path, a)?;
    let t = table(analysis, name).expect("checked name");
    if a.extra("--csv").is_some() {
        super::out(&t.to_csv());
    } else {
        super::out(&super::summary_text::render_table(&t, 60, 200));
    }
    Ok(())
}
