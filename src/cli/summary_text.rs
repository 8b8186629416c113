//! `traceprism summary`: the readable terminal summary, or the same facts as JSON.

use super::args::Args;
use std::fmt::Write;
use traceprism::analysis::health::{CheckId, Status};
use traceprism::report::summary::{summary, Summary};
use traceprism::table::Table;
use traceprism::{Error, Result};

/// Runs `summary`.
pub fn run(a: &Args) -> Result<()> {
    let path = a.one_trace()?;
    let started = std::time::Instant::now();
    let analysis = super::load(path, a)?;
    let elapsed = started.elapsed();
    let s = summary(analysis);
    if a.json {
        let text = serde_json::to_string_pretty(&s).map_err(|e| Error::new(e.to_string()))?;
        super::out(&format!("{text}\n"));
        return Ok(());
    }
    super::out(&render(path, &s));
    if a.verbose {
        let (method, agreement) = method_agreement(analysis);
        if !agreement.is_empty() {
            super::out(&format!("\nphase method '{method}'; agreement of each method with it: {agreement}\n"));
        }
        if !analysis.phases.decode_threshold_reason.is_empty() {
            super::out(&format!("decode threshold: {}\n", analysis.phases.decode_threshold_reason));
        }
        let mb = s.input.json_bytes as f64 / 1e6;
        println!(
            "\nread {:.1} MB of {} ({} input bytes) in {:.2} s ({:.0} MB/s), {} distinct names",
            mb,
            s.input.format.label(),
            s.input.bytes_in,
            elapsed.as_secs_f64(),
            mb / elapsed.as_secs_f64().max(1e-9),
            s.counts.distinct_names
        );
        if let Some(kb) = peak_memory_kb() {
            println!(
                "peak memory {:.1} MB ({:.2}× the {} size)",
                kb as f64 / 1024.0,
                kb as f64 * 1024.0 / s.input.json_bytes.max(1) as f64,
                s.input.format.label()
            );
        }
    }
    let truth = a.truth.clone().or_else(|| if a.verbose { truth_beside(path) } else { None });
    if let Some(path) = &truth {
        let truth = traceprism::pipeline::read_truth(std::path::Path::new(path))?;
        let phases = traceprism::analysis::truth::score_phases(analysis, &truth);
        let layers = traceprism::analysis::truth::score_layers(analysis, &truth);
        let mut calibration = traceprism::analysis::truth::Calibration::default();
        calibration.add(analysis, &truth);
        let indent = |t: String| t.trim_end().replace('\n', "\n  ");
        super::out(&format!(
            "\naccuracy against {path}\n  {}\n  {}\n  calibration of passes (confidence bucket: passes, right, doubted)\n  {}\n",
            indent(phases.to_string()),
            indent(layers.to_string()),
            indent(calibration.to_string())
        ));
    }
    Ok(())
}

/// The phase method used and each method's agreement with the final answer (of the passes it
/// voted on, by kernel time: [`MethodAgreement::agreement_pct_of_voted`], as `phase_methods` gives it).
///
/// [`MethodAgreement::agreement_pct_of_voted`]: traceprism::analysis::phases::MethodAgreement::agreement_pct_of_voted
fn method_agreement(a: &traceprism::Analysis) -> (String, String) {
    let parts: Vec<String> = a
        .phases
        .method_agreement()
        .iter()
        .map(|m| match m.passes_voted {
            0 => format!("{} (no vote)", m.method),
            n => format!("{} {}% of {n} passes", m.method, float(m.agreement_pct_of_voted().unwrap_or(0.0))),
        })
        .collect();
    (a.options.phase_method.as_str().to_string(), parts.join("; "))
}

/// A ground-truth file recorded beside the trace (`X.pt.trace.json.gz` → `X.truth.json.gz`), if any.
fn truth_beside(trace: &str) -> Option<String> {
    let p = std::path::Path::new(trace);
    let name = p.file_name()?.to_str()?;
    let stem = [".pt.trace.json.gz", ".pt.trace.json", ".trace.json.gz", ".trace.json", ".json.gz", ".json"]
        .iter()
        .find_map(|suffix| name.strip_suffix(suffix))?;
    let candidate = p.with_file_name(format!("{stem}.truth.json.gz"));
    candidate.exists().then(|| candidate.to_string_lossy().into_owned())
}

/// Peak resident memory of this process (Linux `VmHWM`), if known.
pub fn peak_memory_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A number as the tables write it (shortest exact form, rounded as CSV cells are).
fn float(v: f64) -> String {
    traceprism::table::Cell::Float(v).text()
}

fn ms(v: i64) -> String {
    format!("{:.3} ms", v as f64 / 1e6)
}

/// The warning for secret-looking metadata: the keys (never the values).
pub fn secret_warning(keys: &[String]) -> String {
    let shown: Vec<&str> = keys.iter().take(5).map(String::as_str).collect();
    let more = if keys.len() > shown.len() { format!(" and {} more", keys.len() - shown.len()) } else { String::new() };
    format!(
        "the trace holds secret-looking metadata ({}{more}): redact it before sharing the trace itself (traceprism's outputs never copy it)",
        shown.join(", ")
    )
}

/// The terminal rendering of a summary.
pub fn render(path: &str, s: &Summary) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "trace    {path}");
    if let Some(cut) = &s.input.truncation {
        let _ = writeln!(o, "WARNING  {}", cut.message());
    }
    if !s.secret_metadata.is_empty() {
        let _ = writeln!(o, "WARNING  {}", secret_warning(&s.secret_metadata));
    }
    // Every other problem the health report finds (truncation and secrets are said above).
    for c in s
        .health
        .iter()
        .filter(|c| c.status == Status::Warning && !matches!(c.check, CheckId::Truncation | CheckId::SecretMetadata))
    {
        let fix = if c.fix.is_empty() { String::new() } else { format!(" (fix: {})", c.fix) };
        let _ = writeln!(o, "WARNING  {}: {}{fix}", c.check, c.found);
    }
    for note in &s.input.notes {
        let _ = writeln!(o, "note     {note}");
    }
    let rank = match (s.rank, s.world_size) {
        (Some(r), Some(w)) => format!(", rank {r} of {w}"),
        _ => String::new(),
    };
    let _ = writeln!(o, "device   {} ({:?}{rank})", s.device, s.vendor);
    let c = &s.counts;
    let _ = writeln!(
        o,
        "events   {} read: {} kernels, {} memcpy, {} memset, {} CPU ops, {} runtime calls ({} graph launches), {} python frames, {} annotations",
        s.input.events, c.kernels, c.memcpy, c.memset, c.cpu_ops, c.runtime_calls, c.graph_launches, c.python_functions, c.user_annotations
    );
    let l = &s.links;
    let _ = writeln!(
        o,
        "links    {:.2}% of kernels linked to their launch ({} via graph launches), {} linked to a CPU op, {} with no launch in the trace",
        l.launch_link_pct, l.kernels_from_graph_launch, l.kernels_with_cpu_op, l.kernels_unlinked
    );
    let _ = writeln!(o, "kernels  {:.3} ms of kernel time ({:.3} ms incl. memcpy/memset)", s.kernel_time_ms, s.gpu_time_ms);
    for c in s.copies.iter().take(4) {
        let moved = match c.gb_per_s {
            Some(rate) => format!(", {} at {rate:.2} GB/s", bytes_text(c.bytes)),
            None => String::new(),
        };
        let _ = writeln!(o, "copies   {} × {}: {:.3} ms{moved}", c.count, c.name, c.time_ms);
    }
    if let Some(g) = &s.graph_replays {
        let _ = writeln!(o, "graphs   {}", g.note);
    }
    for t in &s.timeline {
        let pct = |v: i64| if t.total > 0 { 100.0 * v as f64 / t.total as f64 } else { 0.0 };
        let _ = writeln!(
            o,
            "timeline device {}: span {}, busy {} ({:.1}%), compute {}, comm {} (exposed {}), memcpy {}, idle {} ({:.1}%, micro-idle {})",
            t.device,
            ms(t.total),
            ms(t.busy),
            pct(t.busy),
            ms(t.compute),
            ms(t.comm),
            ms(t.exposed_comm),
            ms(t.memcpy),
            ms(t.idle),
            pct(t.idle),
            ms(t.micro_idle)
        );
    }
    let _ = writeln!(o, "workload {}: {}", s.workload, s.workload_evidence.join("; "));
    match s.trace_phase.as_deref() {
        _ if s.workload == "diffusion" => {
            let steps = s.phases.iter().find(|p| p.phase == "denoise");
            if let Some(p) = steps {
                let _ = writeln!(o, "steps    {} denoising steps, {:.3} ms ({:.1}%)", s.passes, p.time_ms, p.pct);
            }
            for stage in &s.stages {
                let _ = writeln!(o, "stage    {stage}");
            }
        }
        Some("not-inference") => {
            let why = s.not_inference_reason.as_deref().unwrap_or("training or non-LLM work");
            let _ = writeln!(o, "phases   not-inference: no prefill/decode ({why})");
        }
        _ if !s.phases.is_empty() => {
            let parts: Vec<String> = s
                .phases
                .iter()
                .map(|p| match p.passes {
                    // Kernels of passes the trace holds only part of.
                    0 => format!("{} {:.3} ms ({:.1}%) in incomplete passes", p.phase, p.time_ms, p.pct),
                    n => format!("{} {n} passes, {:.3} ms ({:.1}%)", p.phase, p.time_ms, p.pct),
                })
                .collect();
            let incomplete = match s.incomplete_passes {
                0 => String::new(),
                n => format!(" (+ {n} incomplete: the trace starts or stops inside it)"),
            };
            let _ = writeln!(o, "phases   {} forward passes{incomplete}: {}", s.passes, parts.join("; "));
            if let Some(m) = &s.mixed {
                let _ = writeln!(o, "mixed    {m}");
            }
            if s.doubtful_passes > 0 {
                let _ = writeln!(
                    o,
                    "doubt    {} of {} passes on thin or conflicting evidence (the passes table's doubt column says why)",
                    s.doubtful_passes,
                    s.passes + s.incomplete_passes
                );
            }
        }
        _ => {}
    }
    if !s.layers_per_pass.is_empty() {
        let mut v = s.layers_per_pass.clone();
        v.sort_unstable();
        v.dedup();
        let per = if s.workload == "diffusion" { "per step" } else { "per pass" };
        let kinds: Vec<String> = s.layer_kinds.iter().map(|k| format!("{} {}", k.count, k.kind)).collect();
        let kinds = if s.layer_kinds.len() > 1 { format!(" ({})", kinds.join(", ")) } else { String::new() };
        let _ = writeln!(o, "layers   {:?} {per}{kinds}", v);
    }
    let _ = writeln!(o, "\ntop ops (kernel time)");
    for t in &s.top_ops {
        let _ = writeln!(o, "  {:>6.2}%  {:>10.3} ms  {}", t.pct, t.time_ms, shorten(&t.name, 90));
    }
    let _ = writeln!(o, "\ntop kernel categories");
    for t in &s.top_categories {
        let _ = writeln!(o, "  {:>6.2}%  {:>10.3} ms  {}", t.pct, t.time_ms, t.name);
    }
    if s.warnings.total() > 0 {
        let _ = writeln!(o, "\nwarnings ({}):", s.warnings.total());
        for (k, n) in &s.warnings.counts {
            let _ = writeln!(o, "  {n} × {k}");
        }
    } else {
        let _ =
            writeln!(o, "\nwarnings: none ({} events skipped, {} of unmodelled kinds ignored)", s.input.skipped, s.input.ignored);
    }
    let missing: Vec<&str> = s
        .health
        .iter()
        .filter(|c| matches!(c.status, Status::Missing | Status::Partial) && !c.fix.is_empty())
        .map(|c| c.check.as_str())
        .collect();
    if !missing.is_empty() {
        let _ =
            writeln!(o, "not recorded: {} (`traceprism doctor` says what that limits and how to record it)", missing.join(", "));
    }
    o
}

/// Shortens long (template-heavy) names for display: keeps the head and the tail.
pub fn shorten(name: &str, max: usize) -> String {
    let chars: Vec<char> = name.chars().collect();
    if chars.len() <= max {
        return name.to_string();
    }
    let head: String = chars[..max - 20].iter().collect();
    let tail: String = chars[chars.len() - 17..].iter().collect();
    format!("{head}...{tail}")
}

/// Renders a table as aligned text, cells cut to `width` chars, at most `max_rows` rows.
pub fn render_table(t: &Table, width: usize, max_rows: usize) -> String {
    let rows: Vec<Vec<String>> =
        t.rows.iter().take(max_rows).map(|r| r.iter().map(|c| shorten(&c.text(), width)).collect()).collect();
    let mut widths: Vec<usize> = t.columns.iter().map(|c| c.chars().count().min(width)).collect();
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let mut o = String::new();
    let line = |cells: Vec<String>, o: &mut String| {
        let parts: Vec<String> = cells.iter().enumerate().map(|(i, c)| format!("{:<w$}", c, w = widths[i])).collect();
        let _ = writeln!(o, "{}", parts.join("  ").trim_end());
    };
    line(t.columns.iter().map(|c| shorten(c, width)).collect(), &mut o);
    for r in rows {
        line(r, &mut o);
    }
    if t.rows.len() > max_rows {
        let _ = writeln!(o, "... {} more rows (use --csv for all)", t.rows.len() - max_rows);
    }
    o
}

/// Bytes in the largest unit that keeps a number of at least 1 (decimal units, as GB/s are).
fn bytes_text(b: u64) -> String {
    match b {
        0..1_000 => format!("{b} B"),
        1_000..1_000_000 => format!("{:.1} kB", b as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} MB", b as f64 / 1e6),
        _ => format!("{:.2} GB", b as f64 / 1e9),
    }
}
