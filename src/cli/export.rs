//! `traceprism export` (every table as CSV) and `traceprism table` (one table in the terminal).

use super::args::Args;
use traceprism::report::{table, table_names};
use traceprism::{Error, Result};

/// Writes every table as `DIR/<table>.csv`.
pub fn run(a: &Args) -> Result<()> {
    a.reject_unknown(&[])?;
    let path = a.one_trace()?;
    let dir = a.out.as_deref().ok_or_else(|| Error::new("export needs --out DIR"))?;
    let analysis = super::load(path, a)?;
    std::fs::create_dir_all(dir).map_err(|e| Error::new(format!("cannot create {dir}: {e}")))?;
    for name in table_names() {
        let t = table(&analysis, name).expect("listed table");
        let file = std::path::Path::new(dir).join(format!("{name}.csv"));
        std::fs::write(&file, t.to_csv()).map_err(|e| Error::new(format!("cannot write {}: {e}", file.display())))?;
        if a.verbose {
            eprintln!("wrote {} ({} rows)", file.display(), t.rows.len());
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
    let t = table(&analysis, name).expect("checked name");
    if a.extra("--csv").is_some() {
        print!("{}", t.to_csv());
    } else {
        print!("{}", super::summary_text::render_table(&t, 60, 200));
    }
    Ok(())
}
