//! A run of several ranks in the page: each rank is read by an [`Analyzer`] (in turn, each using
//! the helper workers), handed to a [`RankRun`], and the run is analysed as `traceprism ranks`
//! does: the same tables, CSV, workbook and HTML report.

use super::{js_error, to_js, Analyzer};
use crate::analysis::ranks::{analyse_run, RankTrace, Run, RunOptions};
use crate::report::ranks::run_tables;
use crate::table::Table;
use serde::Serialize;
use wasm_bindgen::prelude::*;

/// The ranks of one run, then their analysis.
#[wasm_bindgen]
#[derive(Default)]
pub struct RankRun {
    /// Ranks added and not analysed yet.
    pending: Vec<RankTrace>,
    /// The last analysis, with its tables.
    run: Option<(Run, Vec<Table>)>,
}

/// Aligned times of every matched collective on every rank, for the page's lanes.
#[derive(Serialize)]
struct Lanes {
    ranks: Vec<u32>,
    /// Earliest aligned start, µs (every time below is relative to it).
    origin_us: f64,
    /// Per collective then per rank: start, end and wait, µs.
    start_us: Vec<f64>,
    end_us: Vec<f64>,
    wait_us: Vec<f64>,
    kind: Vec<&'static str>,
    /// Per collective: its cost class (`transfer`, `skew`, `mixed`, `inconclusive`).
    class: Vec<&'static str>,
    phase: Vec<Option<&'static str>>,
    layer: Vec<i64>,
    /// Late arrivals (the `lateness` rows): the rank's position, its arrival (µs, relative), the
    /// GPU idle and busy excess before it (µs) and the side.
    late_rank: Vec<usize>,
    late_arrival_us: Vec<f64>,
    late_idle_us: Vec<f64>,
    late_busy_us: Vec<f64>,
    late_side: Vec<&'static str>,
}

/// What the page shows first about a run.
#[derive(Serialize)]
struct RunSummary {
    ranks: Vec<RankLine>,
    collectives: usize,
    unmatched: usize,
    /// Collectives some ranks lack (left out by sequence matching).
    missing: usize,
    aligned: bool,
    finding: Option<String>,
    /// Where the collectives' time went (see `Run::cost_finding`).
    cost_finding: Option<String>,
    warnings: Vec<String>,
    tables: Vec<String>,
}

#[derive(Serialize)]
struct RankLine {
    rank: u32,
    rank_from: &'static str,
    file: String,
}

#[wasm_bindgen]
impl RankRun {
    /// An empty run.
    #[wasm_bindgen(constructor)]
    pub fn new() -> RankRun {
        RankRun::default()
    }

    /// Adds a rank: `analyzer` must be finished; it is consumed (its analysis moves into the run).
    pub fn add(&mut self, analyzer: Analyzer, file: String) -> Result<(), JsValue> {
        let analysis = analyzer.into_analysis()?;
        // A rank added after an analysis joins the ranks analysed before.
        if let Some((run, _)) = self.run.take() {
            self.pending.extend(run.ranks.into_iter().map(|r| r.trace));
        }
        self.pending.push(RankTrace { file, analysis });
        Ok(())
    }

    /// Ranks added so far.
    pub fn len(&self) -> usize {
        self.pending.len() + self.run.as_ref().map_or(0, |(r, _)| r.ranks.len())
    }

    /// True when no rank was added.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Analyses the run (`align`: clocks aligned on the collectives); returns its summary.
    pub fn analyse(&mut self, align: bool) -> Result<JsValue, JsValue> {
        let mut traces = std::mem::take(&mut self.pending);
        if let Some((run, _)) = self.run.take() {
            traces.splice(0..0, run.ranks.into_iter().map(|r| r.trace));
        }
        let run = analyse_run(traces, RunOptions { align }).map_err(js_error)?;
        let tables = run_tables(&run);
        let summary = RunSummary {
            ranks: run
                .ranks
                .iter()
                .map(|r| RankLine { rank: r.rank, rank_from: r.rank_from, file: r.trace.file.clone() })
                .collect(),
            collectives: run.collectives.len(),
            unmatched: run.unmatched_names(),
            missing: run.missing_collectives(),
            aligned: run.aligned,
            finding: run.finding(),
            cost_finding: run.cost_finding(),
            warnings: run.warnings.clone(),
            tables: tables.iter().map(|t| t.name.clone()).collect(),
        };
        self.run = Some((run, tables));
        to_js(&summary)
    }

    /// One table of the run as `{name, columns, rows}`.
    pub fn table(&self, name: &str) -> Result<JsValue, JsValue> {
        to_js(self.find(name)?)
    }

    /// One table as CSV, byte for byte what `traceprism ranks --out` writes.
    pub fn csv(&self, name: &str) -> Result<String, JsValue> {
        Ok(self.find(name)?.to_csv())
    }

    /// Every table as one `.xlsx` workbook.
    pub fn workbook(&self) -> Result<Vec<u8>, JsValue> {
        Ok(crate::table::xlsx::workbook(&self.analysed()?.1))
    }

    /// The run's HTML report, as `traceprism ranks --html` writes it.
    pub fn html_report(&self) -> Result<String, JsValue> {
        Ok(crate::report::html::run_html_report(&self.analysed()?.0))
    }

    /// Aligned collective times per rank (`{ranks, origin_us, start_us, end_us, wait_us, kind,
    /// class, phase, layer}`, collective-major), for the page's lanes.
    pub fn lanes(&self) -> Result<JsValue, JsValue> {
        let run = &self.analysed()?.0;
        let origin = run.collectives.iter().flat_map(|c| c.sides.iter().map(|s| s.start_ns)).min().unwrap_or(0);
        let us = |ns: i64| (ns - origin) as f64 / 1000.0;
        let mut lanes = Lanes {
            ranks: run.ranks.iter().map(|r| r.rank).collect(),
            origin_us: origin as f64 / 1000.0,
            start_us: Vec::new(),
            end_us: Vec::new(),
            wait_us: Vec::new(),
            kind: Vec::new(),
            class: Vec::new(),
            phase: Vec::new(),
            layer: Vec::new(),
            late_rank: Vec::new(),
            late_arrival_us: Vec::new(),
            late_idle_us: Vec::new(),
            late_busy_us: Vec::new(),
            late_side: Vec::new(),
        };
        for l in run.lateness() {
            lanes.late_rank.push(l.rank);
            lanes.late_arrival_us.push(us(run.collectives[l.collective].sides[l.rank].start_ns));
            lanes.late_idle_us.push(l.idle_excess_ns.max(0) as f64 / 1000.0);
            lanes.late_busy_us.push(l.busy_excess_ns.max(0) as f64 / 1000.0);
            lanes.late_side.push(l.side.as_str());
        }
        for c in &run.collectives {
            lanes.kind.push(c.kind.as_str());
            lanes.class.push(run.cost_class(c).as_str());
            let first = &c.sides[0];
            lanes.phase.push(first.phase.map(|p| p.as_str()));
            lanes.layer.push(if first.layer == crate::model::NONE { -1 } else { first.layer as i64 });
            for s in &c.sides {
                lanes.start_us.push(us(s.start_ns));
                lanes.end_us.push(us(s.end_ns));
                lanes.wait_us.push(s.wait_ns as f64 / 1000.0);
            }
        }
        to_js(&lanes)
    }
}

impl RankRun {
    fn analysed(&self) -> Result<&(Run, Vec<Table>), JsValue> {
        self.run.as_ref().ok_or_else(|| js_error("the run is not analysed yet"))
    }

    fn find(&self, name: &str) -> Result<&Table, JsValue> {
        self.analysed()?.1.iter().find(|t| t.name == name).ok_or_else(|| js_error(format!("no run table named {name:?}")))
    }
}
