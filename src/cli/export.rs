//! `traceprism export` (every table as CSV) and `traceprism table` (one table in the terminal).

use super::args::Args;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use traceprism::report::{table, table_names, write_csv};
use traceprism::{Analysis, Error, Result};

/// Writes every table as `DIR/<table>.csv` (`--out DIR`), as one workbook (`--xlsx FILE`) and/or
/// as `DIR/<table>.parquet` (`--parquet DIR`).
pub fn run(a: &Args) -> Result<()> {
    let path = a.one_trace()?;
    let parquet = a.extra("--parquet");
    if a.out.is_none() && a.xlsx.is_none() && parquet.is_none() {
        return Err(Error::new("export needs --out DIR, --xlsx FILE and/or --parquet DIR"));
    }
    let analysis = super::load(path, a)?;
    if let Some(dir) = parquet {
        let identity = traceprism::report::batches::identity(analysis, path);
        for (file, rows) in traceprism::report::batches::write_parquet_tables(analysis, &identity, Path::new(dir))? {
            if a.verbose {
                eprintln!("wrote {} ({rows} rows)", file.display());
            }
        }
    }
    if let Some(file) = a.xlsx.as_deref() {
        let bytes = traceprism::report::workbook(analysis);
        std::fs::write(file, &bytes).map_err(|e| Error::new(format!("cannot write {file}: {e}")))?;
        if a.verbose {
            eprintln!("wrote {file} ({} sheets, {} bytes)", table_names().len(), bytes.len());
        }
    }
    let Some(dir) = a.out.as_deref() else { return Ok(()) };
    std::fs::create_dir_all(dir).map_err(|e| Error::new(format!("cannot create {dir}: {e}")))?;
    for (file, rows) in write_all_csv(analysis, Path::new(dir))? {
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

/// Writes every table as `dir/<table>.csv` and returns each file with its row count, in table order.
///
/// Table builders only read the analysis, so two threads take tables from one list, `kernels`
/// (by far the longest to write) first; on one core this is the plain loop.
fn write_all_csv(analysis: &Analysis, dir: &Path) -> Result<Vec<(PathBuf, usize)>> {
    let names = table_names();
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by_key(|&i| names[i] != "kernels");
    let next = AtomicUsize::new(0);
    let write_one = |i: usize| -> Result<(PathBuf, usize)> {
        let file = dir.join(format!("{}.csv", names[i]));
        let cannot = |e: std::io::Error| Error::new(format!("cannot write {}: {e}", file.display()));
        let out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&file).map_err(cannot)?);
        let rows = write_csv(analysis, names[i], out).map_err(cannot)?.expect("listed table");
        Ok((file, rows))
    };
    let work = || {
        let mut done = Vec::new();
        while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
            done.push((i, write_one(i)));
        }
        done
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(2);
    let mut done = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
        let mut done = work();
        for h in helpers {
            done.extend(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        }
        done
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// Prints one table (aligned text, or CSV with `--csv`).
pub fn print_table(a: &Args) -> Result<()> {
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
