//! `traceprism compare A B`: where is one trace slower than the other, and why.

use super::args::Args;
use super::summary_text::render_table;
use traceprism::table::Table;
use traceprism::{Error, Result};

/// Keeps some columns of a table (in the given order) for the terminal.
fn project(t: &Table, cols: &[&str]) -> Table {
    let idx: Vec<usize> = cols.iter().filter_map(|c| t.column(c)).collect();
    t.project(&idx)
}

/// Runs `compare`.
pub fn run(a: &Args) -> Result<()> {
    let [pa, pb] = a.positional.as_slice() else {
        return Err(Error::new("usage: traceprism compare A B [--phase prefill|decode|all] [--json] [--out DIR]"));
    };
    let mut opts = a.compare.clone();
    opts.validate()?;
    opts.source_a = Some(pa.to_string());
    opts.source_b = Some(pb.to_string());
    // Each side is read, analysed and given the results a comparison reads of it (its roofline,
    // step budget and call paths, kept once made) on a thread of its own, so the two sides' work
    // runs side by side rather than after the join.
    let derived = |r: Result<&'static traceprism::Analysis>| {
        r.inspect(|x| {
            x.roofline();
            x.budget();
            x.call_paths();
        })
    };
    let clock = std::time::Instant::now();
    let (ra, rb) = std::thread::scope(|s| {
        let ha = s.spawn(|| derived(super::load_with(pa, a, &a.values("--capture-a"))));
        let rb = derived(super::load_with(pb, a, &a.values("--capture-b")));
        (ha.join().unwrap_or_else(|_| Err(Error::new("analysis thread failed"))), rb)
    });
    let (ta, tb) = (ra?, rb?);
    let read_ms = clock.elapsed().as_secs_f64() * 1e3;
    let c = traceprism::analysis::compare::compare(ta, tb, &opts)?;
    let compared_ms = clock.elapsed().as_secs_f64() * 1e3;
    let tables = traceprism::report::compare::tables_of(&c, ta, tb, &opts);
    if a.verbose {
        let done_ms = clock.elapsed().as_secs_f64() * 1e3;
        eprintln!(
            "compare: both traces read and analysed in {read_ms:.0} ms, compared in {:.0} ms, tables in {:.0} ms",
            compared_ms - read_ms,
            done_ms - compared_ms
        );
    }
    if let Some(dir) = a.out.as_deref() {
        std::fs::create_dir_all(dir).map_err(|e| Error::new(format!("cannot create {dir}: {e}")))?;
        for t in &tables {
            let file = std::path::Path::new(dir).join(format!("{}.csv", t.name));
            std::fs::write(&file, t.to_csv()).map_err(|e| Error::new(format!("cannot write {}: {e}", file.display())))?;
            if a.verbose {
                eprintln!("wrote {} ({} rows)", file.display(), t.rows.len());
            }
        }
    }
    if a.json {
        let answer = serde_json::json!({ "headline": c.headline(), "tables": tables });
        let text = serde_json::to_string_pretty(&answer).map_err(|e| Error::new(e.to_string()))?;
        super::out(&(text + "\n"));
        return Ok(());
    }
    if a.out.is_some() && !a.verbose {
        return Ok(());
    }
    let mut o = format!("{}\n\n", c.headline());
    let level = ["a_count", "b_count", "a_per_pass_us", "b_per_pass_us", "ratio", "gap_per_pass_us", "status"];
    let with = |keys: &[&'static str], tail: &[&'static str]| -> Vec<&'static str> {
        keys.iter().chain(level.iter()).chain(tail.iter()).copied().collect()
    };
    let views: [(&str, Vec<&str>, usize); 8] = [
        (
            "compare_verdict",
            vec!["phase", "verdict", "delta_us", "delta_pct", "noise_us", "samples", "a_step_us", "b_step_us"],
            20,
        ),
        ("compare_budget", vec![], 60),
        ("compare_summary", vec![], 200),
        ("compare_categories", with(&["level", "family", "category"], &[]), 60),
        ("compare_ops", with(&["op"], &["a_top_kernel", "b_top_kernel"]), 25),
        ("compare_layers", with(&["phase", "part", "layer"], &[]), 80),
        ("compare_alignment", vec!["block", "kind", "a_kernel", "b_kernel", "a_time_us", "b_time_us", "ratio", "status"], 120),
        (
            "compare_fusions",
            vec!["block", "fused_label", "fused_kernel", "fused_time_us", "unfused_count", "unfused_kernels", "unfused_time_us"],
            40,
        ),
    ];
    for (name, cols, max) in views {
        let Some(t) = tables.iter().find(|t| t.name == name) else { continue };
        let shown = if cols.is_empty() { t.clone() } else { project(t, &cols) };
        o.push_str(&format!("== {} ({} rows)\n", t.name, t.rows.len()));
        o.push_str(&render_table(&shown, 48, max));
        o.push('\n');
    }
    o.push_str(&findings_text(&c.outcomes));
    o.push_str("ratio = A / B per pass; status says how A fares against B. Full tables: --out DIR (CSV) or --json.\n");
    super::out(&o);
    Ok(())
}

/// A's findings checked in B (what `compare_findings` holds, from the outcomes the comparison
/// made once), in lines: each finding with its prediction, the measured change and the verdict
/// (too long for a table's columns).
fn findings_text(outcomes: &[traceprism::analysis::findings::outcome::Outcome]) -> String {
    let mut o = format!("== compare_findings (A's findings, in B: {} rows)\n", outcomes.len());
    // µs with three decimals, as the table's cells write them.
    let us = |v: f64| traceprism::table::Cell::Micros((v * 1e3).round() as i64).text();
    for x in outcomes {
        // A phase B has no step of says so, not `→  µs`.
        let change = match (x.after_step_us, x.measured_us) {
            (Some(after), Some(measured)) => {
                format!("step {} → {} µs, measured {} µs", us(x.before_step_us), us(after), us(measured))
            }
            _ => format!("step {} µs in A", us(x.before_step_us)),
        };
        o.push_str(&format!(
            "{} ({}): predicted {} µs a step; {change}; {}\n",
            x.kind.as_str(),
            x.scope,
            us(x.predicted_us),
            x.verdict
        ));
    }
    if outcomes.is_empty() {
        o.push_str("A has no finding to check (traceprism findings A)\n");
    }
    o.push('\n');
    o
}
