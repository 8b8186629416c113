//! All ranks of one run: collectives matched across ranks, clocks aligned on them, waits measured,
//! and the rank that arrives last named with the phase, pass and layer it is late in, and what it
//! computed meanwhile.
//!
//! Each rank's trace is analysed on its own first ([`Analysis`]); this module reads those analyses
//! and never the files. A collective kernel (family Communication) of one rank is matched with the
//! same kernel name's occurrence of the same index on every other rank (graph replays have no CPU op
//! per kernel, so order on the stream is the key that always exists); occurrences some rank lacks
//! are counted and listed as unmatched. The end of a synchronous collective is nearly simultaneous
//! on every rank, so each rank's clock offset against the first rank is the median difference of
//! the matched collectives' ends (the residual is the median deviation from it). Aligned, a rank's
//! wait at a collective is the latest start minus its own start.

mod collectives;
pub mod cost;
mod identify;
pub mod lateness;
pub mod sequence;

pub use collectives::{message_bytes, Kind};
pub use cost::CostClass;
pub use identify::{rank_from_file_name, rank_group_key, trace_rank};
pub use lateness::{LateSide, Lateness, LATE_FLOOR_NS};

use crate::analysis::phases::Phase;
use crate::analysis::Analysis;
use crate::error::{Error, Result};
use crate::model::NONE;
use crate::support::median::{lower_median, upper_median};
use std::collections::{BTreeMap, HashMap};

/// One rank's analysed trace and the file it came from.
pub struct RankTrace {
    /// The file's name as given (for tables and messages).
    pub file: String,
    /// Its analysis.
    pub analysis: Analysis,
}

/// How to analyse a run.
#[derive(Debug, Clone, Copy)]
pub struct RunOptions {
    /// Align each rank's clock on the collectives (off: times as recorded).
    pub align: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions { align: true }
    }
}

/// One rank of the run, ordered by rank.
pub struct Rank {
    /// The rank number.
    pub rank: u32,
    /// Where the number came from: `distributedInfo`, `file name` or `order`.
    pub rank_from: &'static str,
    /// The trace.
    pub trace: RankTrace,
    /// What was added to this rank's times to align it with the first rank, ns.
    pub clock_offset_ns: i64,
    /// Median deviation of the collectives' end differences from the offset, ns.
    pub residual_ns: i64,
}

/// One rank's side of a matched collective (times aligned).
#[derive(Debug, Clone, Copy)]
pub struct Side {
    /// GPU row in that rank's trace.
    pub row: usize,
    /// Aligned start, ns.
    pub start_ns: i64,
    /// Aligned end, ns.
    pub end_ns: i64,
    /// Duration, ns.
    pub dur_ns: i64,
    /// Latest start over all ranks minus this start, ns.
    pub wait_ns: i64,
    /// Phase of the kernel on this rank.
    pub phase: Option<Phase>,
    /// Pass index on this rank, or [`NONE`].
    pub pass: u32,
    /// Layer index on this rank, or [`NONE`].
    pub layer: u32,
    /// N of the `ProfilerStep#N` the collective was launched in on this rank, if any.
    pub step: Option<u64>,
}

/// One collective matched across every rank.
pub struct Collective {
    /// Position among the run's matched collectives (in the first rank's time order).
    pub index: usize,
    /// Its kind.
    pub kind: Kind,
    /// The kernel's name (the first rank's).
    pub name: String,
    /// What it was matched by across the ranks: the process group and collective
    /// (`pg 3 · _allgather_base`) or the kernel's name.
    pub key: String,
    /// The process group and its ranks (`3 [0, 1, 2, 3]`), when the launching op recorded them.
    pub group: String,
    /// `process group` or `kernel name`.
    pub matched_by: &'static str,
    /// Occurrence of this name on each rank (0 = first).
    pub occurrence: usize,
    /// Message bytes: the larger of `In msg nelems` and `Out msg nelems` × the dtype's size when the
    /// launching op recorded them (nccl-tests' size: AllGather's output, ReduceScatter's input),
    /// else its first tensor input's shape.
    pub bytes: Option<u64>,
    /// One side per rank, in [`Run::ranks`] order.
    pub sides: Vec<Side>,
}

impl Collective {
    /// Shortest duration over the ranks: the time the transfer itself took (TraceLens'
    /// `comm_latency`), ns.
    pub fn comm_latency_ns(&self) -> i64 {
        self.sides.iter().map(|s| s.dur_ns).min().unwrap_or(0)
    }
    /// The collective's duration once the last rank has arrived: the transfer itself (the same
    /// value as [`Collective::comm_latency_ns`], named for what it is), ns.
    pub fn transfer_ns(&self) -> i64 {
        self.comm_latency_ns()
    }
    /// The ranks' waits at it, summed: the rank-arrival skew it cost, ns.
    pub fn skew_ns(&self) -> i64 {
        self.sides.iter().map(|s| s.wait_ns).sum()
    }
    /// Latest start minus earliest start, ns.
    pub fn start_skew_ns(&self) -> i64 {
        let (lo, hi) = min_max(self.sides.iter().map(|s| s.start_ns));
        hi - lo
    }
    /// Latest end minus earliest end, ns.
    pub fn end_skew_ns(&self) -> i64 {
        let (lo, hi) = min_max(self.sides.iter().map(|s| s.end_ns));
        hi - lo
    }
    /// Position (in [`Run::ranks`]) of the rank that started last (the first such on a tie).
    pub fn last(&self) -> usize {
        let latest = self.sides.iter().map(|s| s.start_ns).max().unwrap_or(0);
        self.sides.iter().position(|s| s.start_ns == latest).unwrap_or(0)
    }
    /// Position of the rank that started first.
    pub fn first(&self) -> usize {
        let earliest = self.sides.iter().map(|s| s.start_ns).min().unwrap_or(0);
        self.sides.iter().position(|s| s.start_ns == earliest).unwrap_or(0)
    }
    /// Algorithm bandwidth, GB/s: bytes over the shortest duration.
    pub fn algbw_gbps(&self) -> Option<f64> {
        let ns = self.comm_latency_ns();
        self.bytes.filter(|_| ns > 0).map(|b| b as f64 / ns as f64)
    }
    /// Bus bandwidth, GB/s: algbw × the kind's factor for this many ranks.
    pub fn busbw_gbps(&self) -> Option<f64> {
        self.algbw_gbps().map(|a| a * self.kind.bus_factor(self.sides.len()))
    }
}

/// Occurrences of a collective that some rank lacks: a key whose counts differ (`missing` empty),
/// or one collective some ranks did not run (`missing` says which and where; `per_rank` is 1 on
/// the ranks that ran it, 0 on the others).
#[derive(Debug, Clone)]
pub struct Unmatched {
    /// What ranks are matched by: process group and collective, or the kernel's name.
    pub name: String,
    /// Occurrences on each rank, in [`Run::ranks`] order.
    pub per_rank: Vec<usize>,
    /// The one collective some ranks lack, when sequence matching found it.
    pub missing: Option<Missing>,
}

/// One collective that some ranks ran and others did not.
#[derive(Debug, Clone)]
pub struct Missing {
    /// Its position among the run's collectives (matched or not), in time order.
    pub position: usize,
    /// Its end on the first rank's clock, since that rank's trace began (ns).
    pub at_ns: i64,
    /// Its kind.
    pub kind: Kind,
    /// The kernel's name (on a rank that ran it).
    pub kernel: String,
    /// Message bytes, when recorded.
    pub bytes: Option<u64>,
    /// Whether every rank was being traced then (else a window cut differently explains it).
    pub while_all_traced: bool,
}

/// The collectives of one phase and kind (and layer, unless `layer` is None): their cost and
/// classes.
#[derive(Debug, Clone)]
pub struct ClassRollup {
    /// Phase on the first rank (`none` outside passes).
    pub phase: String,
    /// Collective kind.
    pub kind: Kind,
    /// Layer on the first rank; None: every collective of the phase and kind.
    pub layer: Option<u32>,
    /// How many.
    pub collectives: usize,
    /// Their zero-skew cost (n × transfer), summed, ns.
    pub transfer_ns: i64,
    /// Their waits, summed over ranks and collectives, ns.
    pub wait_ns: i64,
    /// Collectives per class, in [`CostClass::ALL`] order.
    pub classes: [usize; 4],
    /// Wait caused by each rank (the skew of the collectives it arrived last at), in rank order.
    pub wait_by_rank: Vec<i64>,
}

impl ClassRollup {
    /// Waiting's share of the cost, %.
    pub fn wait_pct(&self) -> f64 {
        let cost = self.transfer_ns + self.wait_ns;
        if cost <= 0 {
            0.0
        } else {
            100.0 * self.wait_ns as f64 / cost as f64
        }
    }

    /// The class of the summed cost.
    pub fn class(&self) -> CostClass {
        if self.classes[3] == self.collectives {
            CostClass::Inconclusive
        } else {
            CostClass::of_cost(self.transfer_ns, self.wait_ns)
        }
    }

    /// The rank most of the wait was for (position in the run) and its share of it, %.
    pub fn waited_for(&self) -> Option<(usize, f64)> {
        let (rank, &ns) = self.wait_by_rank.iter().enumerate().max_by_key(|(r, ns)| (**ns, std::cmp::Reverse(*r)))?;
        (ns > 0 && self.wait_ns > 0).then(|| (rank, 100.0 * ns as f64 / self.wait_ns as f64))
    }
}

/// Compute one rank ran between the previous collective and this one, by category, beyond the
/// median rank: the excess of a late rank.
#[derive(Debug, Clone)]
pub struct Excess {
    /// Position of the late rank.
    pub rank: usize,
    /// Category → excess ns summed over the collectives where it arrived last.
    pub by_category: Vec<(String, i64)>,
    /// Layers (on the late rank) of the collectives where it arrived last.
    pub layers: Vec<u32>,
    /// Phases of those collectives: (phase, count).
    pub phases: Vec<(String, usize)>,
    /// Collectives where it arrived last (and someone waited for it).
    pub times_last: usize,
}

/// One rank's figures over a run's collectives ([`Run::straggler_stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RankStats {
    /// Its waits at the collectives, summed (ns).
    pub wait_ns: i64,
    /// Collectives it started last, and first.
    pub times_last: usize,
    /// Collectives it reached first.
    pub times_first: usize,
    /// Its collectives' kernel time, summed (ns).
    pub comm_ns: i64,
}

/// The run: its ranks, matched collectives, what did not match, and warnings.
pub struct Run {
    /// The ranks, by rank number.
    pub ranks: Vec<Rank>,
    /// Matched collectives, in the first rank's time order.
    pub collectives: Vec<Collective>,
    /// Collective kernels that do not occur equally often on every rank.
    pub unmatched: Vec<Unmatched>,
    /// Things the user should know (a world size that disagrees...).
    pub warnings: Vec<String>,
    /// Whether clocks were aligned.
    pub aligned: bool,
    /// Late arrivals (see [`lateness`]), computed once.
    late: Vec<Lateness>,
    /// The run's own jitter (see [`cost::jitter_ns`]), ns.
    pub jitter_ns: i64,
}

fn min_max(values: impl Iterator<Item = i64>) -> (i64, i64) {
    values.fold((i64::MAX, i64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)))
}

/// The communication parameters of a trace's CPU ops, found from a kernel.
struct CommLookup {
    /// CPU op row → row of `Trace::comm`.
    by_op: HashMap<u32, usize>,
}

impl CommLookup {
    fn new(t: &crate::model::Trace) -> Self {
        CommLookup { by_op: t.comm.op.iter().enumerate().map(|(i, &op)| (op, i)).collect() }
    }

    /// The comm row of the op that launched GPU row `row`, or of one of its enclosing ops.
    fn row_of(&self, t: &crate::model::Trace, row: usize) -> Option<usize> {
        let mut op = t.gpu.cpu_op[row];
        for _ in 0..4 {
            if op == NONE {
                return None;
            }
            if let Some(&c) = self.by_op.get(&op) {
                return Some(c);
            }
            op = t.ops.parent[op as usize];
        }
        None
    }

    /// What GPU row `row` is matched by across ranks.
    fn key(&self, t: &crate::model::Trace, row: usize) -> String {
        match self.row_of(t, row) {
            Some(c) => format!("pg {} · {}", t.name(t.comm.group[c]), t.name(t.comm.collective[c])),
            None => t.name(t.gpu.name[row]).to_string(),
        }
    }

    fn group(&self, t: &crate::model::Trace, c: usize) -> String {
        let ranks = t.name(t.comm.group_ranks[c]);
        let group = t.name(t.comm.group[c]);
        if ranks.is_empty() {
            group.to_string()
        } else {
            format!("{group} {ranks}")
        }
    }

    fn bytes(&self, t: &crate::model::Trace, c: usize) -> Option<u64> {
        let n = t.comm.in_nelems[c].max(t.comm.out_nelems[c]);
        let size = collectives::dtype_bytes(t.name(t.comm.dtype[c]))?;
        (n >= 0).then(|| n as u64 * size)
    }
}

/// Communication kernels of a trace, in time order: (row, name).
fn collective_rows(a: &Analysis) -> Vec<usize> {
    let mut rows: Vec<usize> = a.trace.kernel_rows().filter(|&i| a.categories.is_communication(i)).collect();
    rows.sort_by_key(|&i| (a.trace.gpu.ts[i], i));
    rows
}

/// A trace with its rank number and where the number came from.
struct Numbered {
    rank: u32,
    /// `distributedInfo`, `file name` or `order`.
    from: &'static str,
    trace: RankTrace,
}

/// Numbers the traces' ranks (`distributedInfo.rank`, else the file name, else the order) and
/// orders them; two traces with one rank number are an error.
fn number_ranks(traces: Vec<RankTrace>, warnings: &mut Vec<String>) -> Result<Vec<Numbered>> {
    let mut numbered: Vec<Numbered> = traces
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            let (rank, from) = match t.analysis.trace.meta.rank.and_then(|r| u32::try_from(r).ok()) {
                Some(r) => (r, "distributedInfo"),
                None => match rank_from_file_name(&t.file) {
                    Some(r) => (r, "file name"),
                    None => (i as u32, "order"),
                },
            };
            Numbered { rank, from, trace: t }
        })
        .collect();
    numbered.sort_by_key(|n| n.rank);
    for pair in numbered.windows(2) {
        if pair[0].rank == pair[1].rank {
            return Err(Error::new(format!(
                "two traces claim rank {}: {} and {} (from {} and {})",
                pair[0].rank, pair[0].trace.file, pair[1].trace.file, pair[0].from, pair[1].from
            )));
        }
    }
    let sizes: Vec<(Option<i64>, &str)> =
        numbered.iter().map(|n| (n.trace.analysis.trace.meta.world_size, n.trace.file.as_str())).collect();
    let mut counts: HashMap<i64, usize> = HashMap::new();
    for (s, _) in &sizes {
        if let Some(s) = s {
            *counts.entry(*s).or_default() += 1;
        }
    }
    if let Some((&common, _)) = counts.iter().max_by_key(|(s, n)| (**n, -**s)) {
        for (s, file) in &sizes {
            if let Some(s) = s.filter(|&s| s != common) {
                warnings.push(format!(
                    "{file}: distributedInfo says world size {s}, the other ranks say {common}: is it from another run?"
                ));
            }
        }
        if counts.len() == 1 && (numbered.len() as i64) < common {
            warnings.push(format!("{} of {common} ranks given: waits are measured among these only", numbered.len()));
        }
    }
    Ok(numbered)
}

/// What sequence matching left out: a row and a warning per collective some ranks lack.
struct MissingCollectives {
    rows: Vec<Unmatched>,
    warnings: Vec<String>,
}

/// Collectives named in warnings, at most (the rest are counted; all are rows).
const NAMED_MISSING: usize = 5;

/// The groups some ranks lack, as rows and warnings; an error when a rank lacks more than
/// [`sequence::MAX_MISSING_SHARE`] of the collectives run while every rank was traced (the ranks
/// do not run the same sequence), naming the first divergence.
fn missing_collectives(
    numbered: &[Numbered],
    params: &[CommLookup],
    keys: &[sequence::KeyOccurrences<'_>],
    groups: &[sequence::Group],
    offsets: &[i64],
) -> Result<MissingCollectives> {
    let n = numbered.len();
    let (from, to) = sequence::common_span(keys, offsets);
    let origin = numbered[0].trace.analysis.trace.time_origin_ns;
    let mut rows = Vec::new();
    let mut inside = 0usize;
    let mut lacking = vec![0usize; n];
    for (position, g) in groups.iter().enumerate() {
        let while_all_traced = g.end_ns >= from && g.end_ns <= to;
        inside += usize::from(while_all_traced);
        if g.complete() {
            continue;
        }
        let (r, row) = g.rows.iter().enumerate().find_map(|(r, row)| row.map(|row| (r, row))).expect("a group has a rank");
        let t = &numbered[r].trace.analysis.trace;
        let bytes = params[r].row_of(t, row).and_then(|c| params[r].bytes(t, c)).or_else(|| message_bytes(t, row));
        if while_all_traced {
            for (k, present) in g.rows.iter().enumerate() {
                lacking[k] += usize::from(present.is_none());
            }
        }
        rows.push(Unmatched {
            name: keys[g.key].key.to_string(),
            per_rank: g.rows.iter().map(|x| usize::from(x.is_some())).collect(),
            missing: Some(Missing {
                position,
                at_ns: g.end_ns - origin,
                kind: Kind::of(keys[g.key].key),
                kernel: t.name(t.gpu.name[row]).to_string(),
                bytes,
                while_all_traced,
            }),
        });
    }
    let lacks = |u: &Unmatched| -> Vec<u32> { (0..n).filter(|&k| u.per_rank[k] == 0).map(|k| numbered[k].rank).collect() };
    let describe = |u: &Unmatched| {
        let m = u.missing.as_ref().expect("a missing row");
        let bytes = m.bytes.map_or(String::new(), |b| format!(", {b} bytes"));
        format!(
            "collective #{} ({} {}{bytes}, at {:.1} µs on rank {}'s clock)",
            m.position,
            m.kind.as_str(),
            u.name,
            m.at_ns as f64 / 1e3,
            numbered[0].rank
        )
    };
    for (k, &count) in lacking.iter().enumerate() {
        if inside > 0 && count as f64 > sequence::MAX_MISSING_SHARE * inside as f64 {
            let first = rows
                .iter()
                .find(|u| u.per_rank[k] == 0 && u.missing.as_ref().is_some_and(|m| m.while_all_traced))
                .expect("a row it lacks");
            return Err(Error::new(format!(
                "the ranks do not run the same collectives: rank {} ({}) lacks {count} of the {inside} collectives run while every rank was traced, the first {}; different code paths or programs? (ranks are matched by their sequences of collectives)",
                numbered[k].rank,
                numbered[k].trace.file,
                describe(first)
            )));
        }
    }
    let mut warnings = Vec::new();
    let within: Vec<&Unmatched> = rows.iter().filter(|u| u.missing.as_ref().is_some_and(|m| m.while_all_traced)).collect();
    for u in within.iter().take(NAMED_MISSING) {
        let ranks = lacks(u).iter().map(|r| r.to_string()).collect::<Vec<_>>().join(", ");
        warnings.push(format!(
            "rank {ranks} lacks {} that the other ranks ran: left out, and the collectives after it paired with their right partners (see unmatched_collectives)",
            describe(u)
        ));
    }
    if within.len() > NAMED_MISSING {
        warnings.push(format!(
            "{} more collectives lacked by some rank while every rank was traced (see unmatched_collectives)",
            within.len() - NAMED_MISSING
        ));
    }
    let outside = rows.len() - within.len();
    if outside > 0 {
        warnings.push(format!(
            "{outside} collectives before or after the span every rank was traced in are lacked by some ranks (their windows were cut differently): left out (see unmatched_collectives)"
        ));
    }
    Ok(MissingCollectives { rows, warnings })
}

/// Analyses a run of at least two ranks' traces.
pub fn analyse_run(traces: Vec<RankTrace>, options: RunOptions) -> Result<Run> {
    if traces.len() < 2 {
        return Err(Error::new(format!(
            "a run needs the traces of at least two ranks; {} given (use `summary` or `export` for one trace)",
            traces.len()
        )));
    }
    let mut warnings = Vec::new();
    let numbered = number_ranks(traces, &mut warnings)?;
    let n = numbered.len();
    // Each rank's collectives by key (process group and collective when the launching op recorded
    // them, else the kernel's name), in time order.
    let rows: Vec<Vec<usize>> = numbered.iter().map(|n| collective_rows(&n.trace.analysis)).collect();
    let params: Vec<CommLookup> = numbered.iter().map(|n| CommLookup::new(&n.trace.analysis.trace)).collect();
    let by_name: Vec<BTreeMap<String, Vec<usize>>> = numbered
        .iter()
        .zip(&rows)
        .zip(&params)
        .map(|((Numbered { trace: t, .. }, rows), params)| {
            let mut m: BTreeMap<String, Vec<usize>> = BTreeMap::new();
            for &r in rows {
                m.entry(params.key(&t.analysis.trace, r)).or_default().push(r);
            }
            m
        })
        .collect();
    let mut names: Vec<&str> = by_name.iter().flat_map(|m| m.keys().map(String::as_str)).collect();
    names.sort_unstable();
    names.dedup();
    let mut unmatched = Vec::new();
    // Keys some rank never runs (another process group, another program): counted, not matched.
    let (everywhere, somewhere): (Vec<&str>, Vec<&str>) =
        names.into_iter().partition(|name| by_name.iter().all(|m| m.contains_key(*name)));
    for name in somewhere {
        let per_rank: Vec<usize> = by_name.iter().map(|m| m.get(name).map_or(0, Vec::len)).collect();
        unmatched.push(Unmatched { name: name.to_string(), per_rank, missing: None });
    }
    let end = |rank: usize, row: usize| numbered[rank].trace.analysis.trace.gpu.end(row);
    let occurrences: Vec<sequence::KeyOccurrences> = everywhere
        .iter()
        .map(|&key| sequence::KeyOccurrences {
            key,
            per_rank: (0..n).map(|r| by_name[r][key].iter().map(|&row| (row, end(r, row))).collect()).collect(),
        })
        .collect();
    // (first rank's start, name, occurrence, rows per rank)
    let mut matched: Vec<(i64, &str, usize, Vec<usize>)> = Vec::new();
    match sequence::match_sequences(&occurrences, n) {
        sequence::Matching::ByTime { groups, offsets, .. } => {
            let missing = missing_collectives(&numbered, &params, &occurrences, &groups, &offsets)?;
            warnings.extend(missing.warnings);
            unmatched.extend(missing.rows);
            for g in groups.iter().filter(|g| g.complete()) {
                let key = &occurrences[g.key];
                let sides: Vec<usize> = g.rows.iter().map(|r| r.expect("complete")).collect();
                let occurrence = key.per_rank[0].iter().position(|&(row, _)| row == sides[0]).unwrap_or(0);
                let start = numbered[0].trace.analysis.trace.gpu.ts[sides[0]];
                matched.push((start, key.key, occurrence, sides));
            }
        }
        sequence::Matching::ByOccurrence { .. } => {
            for key in &occurrences {
                let per_rank: Vec<usize> = key.per_rank.iter().map(Vec::len).collect();
                if per_rank.iter().any(|&c| c != per_rank[0]) {
                    warnings.push(format!(
                        "{}: {} times on the ranks ({}), and their ends agree on no clock offset: left out, since which occurrence is which cannot be told (see unmatched_collectives)",
                        key.key,
                        per_rank.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", "),
                        numbered.iter().map(|n| format!("rank {}", n.rank)).collect::<Vec<_>>().join(", ")
                    ));
                    unmatched.push(Unmatched { name: key.key.to_string(), per_rank, missing: None });
                    continue;
                }
                for k in 0..per_rank[0] {
                    let sides: Vec<usize> = key.per_rank.iter().map(|v| v[k].0).collect();
                    let start = numbered[0].trace.analysis.trace.gpu.ts[sides[0]];
                    matched.push((start, key.key, k, sides));
                }
            }
        }
    }
    matched.sort_by_key(|(start, name, k, _)| (*start, *name, *k));
    let offsets = clock_offsets(&numbered, &matched, options.align, &mut warnings);
    if matched.is_empty() {
        warnings.push("no collective kernel occurs on every rank: clocks are not aligned and no wait is measured".to_string());
    }
    let hosts: Vec<lateness::HostTops> = numbered.iter().map(|n| lateness::HostTops::new(&n.trace.analysis.trace)).collect();
    let collectives: Vec<Collective> = matched
        .into_iter()
        .enumerate()
        .map(|(index, (_, name, occurrence, rows))| {
            let run = RunSoFar { numbered: &numbered, offsets: &offsets, hosts: &hosts, params: &params[0] };
            run.collective(index, name, occurrence, &rows)
        })
        .collect();
    let ranks = numbered
        .into_iter()
        .zip(offsets)
        .map(|(Numbered { rank, from: rank_from, trace }, (clock_offset_ns, residual_ns))| Rank {
            rank,
            rank_from,
            trace,
            clock_offset_ns,
            residual_ns,
        })
        .collect::<Vec<Rank>>();
    let late = lateness::lateness(&ranks, &collectives, &hosts);
    let jitter_ns = cost::jitter_ns(&collectives);
    Ok(Run { ranks, collectives, unmatched, warnings, aligned: options.align, late, jitter_ns })
}

/// What matching a collective across ranks reads: the ranks in order, each one's clock offset
/// against rank 0, their host steps, and the process groups' parameters.
struct RunSoFar<'a> {
    numbered: &'a [Numbered],
    offsets: &'a [(i64, i64)],
    hosts: &'a [lateness::HostTops],
    params: &'a CommLookup,
}

impl RunSoFar<'_> {
    /// One matched collective (the `occurrence`-th of key `name`, on `rows` of each rank): each
    /// rank's side on the aligned clock, each side's wait for the latest to start, its step, and
    /// the process group and bytes the first rank's launching op recorded.
    fn collective(&self, index: usize, name: &str, occurrence: usize, rows: &[usize]) -> Collective {
        let RunSoFar { numbered, offsets, hosts, params } = *self;
        let mut sides: Vec<Side> = rows
            .iter()
            .enumerate()
            .map(|(r, &row)| {
                let a = &numbered[r].trace.analysis;
                let g = &a.trace.gpu;
                Side {
                    row,
                    start_ns: g.ts[row] + offsets[r].0,
                    end_ns: g.end(row) + offsets[r].0,
                    dur_ns: g.dur[row],
                    wait_ns: 0,
                    phase: a.phases.phase_of_row.get(row).copied().flatten(),
                    pass: a.phases.pass_of_row.get(row).copied().unwrap_or(NONE),
                    layer: a.layers.layer_of_row.get(row).copied().unwrap_or(NONE),
                    step: hosts[r].step_at(lateness::host_time(&a.trace, row)),
                }
            })
            .collect();
        let latest = sides.iter().map(|s| s.start_ns).max().unwrap_or(0);
        for s in &mut sides {
            s.wait_ns = latest - s.start_ns;
        }
        let first = &numbered[0].trace.analysis.trace;
        let comm = params.row_of(first, rows[0]);
        let bytes = comm.and_then(|c| params.bytes(first, c)).or_else(|| message_bytes(first, rows[0]));
        Collective {
            index,
            group: comm.map(|c| params.group(first, c)).unwrap_or_default(),
            matched_by: if comm.is_some() { "process group" } else { "kernel name" },
            kind: Kind::of(name),
            key: name.to_string(),
            name: first.name(first.gpu.name[rows[0]]).to_string(),
            occurrence,
            bytes,
            sides,
        }
    }
}

/// Each rank's clock offset against rank 0 from the ends of the `matched` collectives (the median
/// difference) with its residual (the median distance from it): all zero unless `align`. A
/// residual above [`RESIDUAL_WARN_NS`] is named in `warnings`.
fn clock_offsets(
    numbered: &[Numbered],
    matched: &[(i64, &str, usize, Vec<usize>)],
    align: bool,
    warnings: &mut Vec<String>,
) -> Vec<(i64, i64)> {
    let end = |rank: usize, row: usize| numbered[rank].trace.analysis.trace.gpu.end(row);
    let mut offsets = vec![(0i64, 0i64); numbered.len()];
    if align && !matched.is_empty() {
        for (r, off) in offsets.iter_mut().enumerate().skip(1) {
            let diffs: Vec<i64> = matched.iter().map(|(_, _, _, s)| end(0, s[0]) - end(r, s[r])).collect();
            let o = upper_median(diffs.clone());
            let residual = upper_median(diffs.iter().map(|d| (d - o).abs()).collect());
            *off = (o, residual);
        }
    }
    for (r, (_, residual)) in offsets.iter().enumerate() {
        if *residual > RESIDUAL_WARN_NS {
            warnings.push(format!(
                "{}: the matched collectives' ends differ from the clock offset by {:.1} µs (median): they may not be the same collectives (point-to-point with other peers, or different groups), so waits are uncertain",
                numbered[r].trace.file,
                *residual as f64 / 1000.0
            ));
        }
    }
    offsets
}

/// A residual of the clock offset above this (ns) is named in a warning.
pub const RESIDUAL_WARN_NS: i64 = 100_000;

/// A late arrival worth naming: the last rank started at least this long after the median of the
/// others.
pub const LATE_NS: i64 = 1_000;

impl Run {
    /// What collective `c`'s time went to (see [`cost`]).
    pub fn cost_class(&self, c: &Collective) -> CostClass {
        cost::class(c, self.jitter_ns)
    }

    /// The one-way link bandwidth of the first rank's GPU (`devices.toml`'s `link`), GB/s.
    pub fn link_peak_gbps(&self) -> Option<f64> {
        let a = &self.ranks.first()?.trace.analysis;
        let peaks = crate::analysis::roofline::devices::select(&a.trace.meta.devices, a.options.device.as_deref())?;
        (peaks.link > 0.0).then_some(peaks.link)
    }

    /// The collectives' cost rolled up by phase and kind (`layer` None) and by phase, kind and
    /// layer: see [`ClassRollup`]. Phases, kinds and layers are the first rank's.
    pub fn class_rollup(&self) -> Vec<ClassRollup> {
        type Key = (String, Kind, Option<u32>);
        let mut by: BTreeMap<Key, ClassRollup> = BTreeMap::new();
        for c in &self.collectives {
            let s = &c.sides[0];
            let phase = s.phase.map_or("none", |p| p.as_str()).to_string();
            let layer = (s.layer != NONE).then_some(s.layer);
            let class = self.cost_class(c);
            let mut keys = vec![(phase.clone(), c.kind, None)];
            if layer.is_some() {
                keys.push((phase, c.kind, layer));
            }
            for key in keys {
                let e = by.entry(key.clone()).or_insert_with(|| ClassRollup {
                    phase: key.0,
                    kind: key.1,
                    layer: key.2,
                    collectives: 0,
                    transfer_ns: 0,
                    wait_ns: 0,
                    classes: [0; 4],
                    wait_by_rank: vec![0; self.ranks.len()],
                });
                e.collectives += 1;
                e.transfer_ns += cost::transfer_cost_ns(c);
                e.wait_ns += c.skew_ns();
                e.classes[CostClass::ALL.iter().position(|k| *k == class).unwrap_or(0)] += 1;
                e.wait_by_rank[c.last()] += c.skew_ns();
            }
        }
        by.into_values().collect()
    }

    /// One sentence on where the collectives' time went: the phase and kind that waited the most,
    /// its share of waiting and the rank it waited for.
    pub fn cost_finding(&self) -> Option<String> {
        let groups = self.class_rollup();
        let g = groups.iter().filter(|g| g.layer.is_none()).max_by_key(|g| g.wait_ns)?;
        let phase =
            if matches!(g.phase.as_str(), "prefill" | "decode" | "mixed") { format!("{} ", g.phase) } else { String::new() };
        let mut s = format!(
            "{phase}{} collectives ({}): {:.0}% of their time is waiting ({})",
            g.kind.as_str(),
            g.collectives,
            g.wait_pct(),
            g.class().as_str()
        );
        if let Some((rank, pct)) = g.waited_for() {
            s.push_str(&format!(", {pct:.0}% of it for rank {}", self.ranks[rank].rank));
        }
        Some(s)
    }

    /// Collectives some ranks lack (found by sequence matching).
    pub fn missing_collectives(&self) -> usize {
        self.unmatched.iter().filter(|u| u.missing.is_some()).count()
    }

    /// Keys left unmatched whole: run by only some ranks, or counts that could not be paired.
    pub fn unmatched_names(&self) -> usize {
        self.unmatched.iter().filter(|u| u.missing.is_none()).count()
    }

    /// Every (collective, rank) where the rank arrives at least [`LATE_FLOOR_NS`] after the median
    /// rank: how late, busy and idle excess, side, host op; in collective then rank order.
    pub fn lateness(&self) -> &[Lateness] {
        &self.late
    }

    /// Per rank, in [`Run::ranks`] order: its waits, how often it came last and first, its
    /// collectives' time. A rank counts as last or first only where the collective's start skew is
    /// at least [`LATE_NS`].
    pub fn straggler_stats(&self) -> Vec<RankStats> {
        let mut out = vec![RankStats::default(); self.ranks.len()];
        for c in &self.collectives {
            for (r, s) in c.sides.iter().enumerate() {
                out[r].wait_ns += s.wait_ns;
                out[r].comm_ns += s.dur_ns;
            }
            if c.start_skew_ns() >= LATE_NS {
                out[c.last()].times_last += 1;
                out[c.first()].times_first += 1;
            }
        }
        out
    }

    /// How much later the last rank started than the median of the other ranks, ns.
    pub fn lateness_ns(c: &Collective) -> i64 {
        let late = c.last();
        let others: Vec<i64> = c.sides.iter().enumerate().filter(|(r, _)| *r != late).map(|(_, s)| s.start_ns).collect();
        c.sides[late].start_ns - lower_median(others)
    }

    /// For each rank that arrived last at some collective (by at least [`LATE_NS`] after the
    /// median rank): the compute it ran since its previous collective, by category, beyond the
    /// median of all ranks over the same window (only where its lateness is not host-side);
    /// largest excess first.
    pub fn excess(&self) -> Vec<Excess> {
        let n = self.ranks.len();
        // Each rank's compute kernels (not communication) by start: (ts, row).
        let compute: Vec<Vec<(i64, usize)>> = self
            .ranks
            .iter()
            .map(|r| {
                let a = &r.trace.analysis;
                let mut v: Vec<(i64, usize)> = a
                    .trace
                    .kernel_rows()
                    .filter(|&i| !a.categories.is_communication(i))
                    .map(|i| (a.trace.gpu.ts[i], i))
                    .collect();
                v.sort_unstable();
                v
            })
            .collect();
        // Per rank: excess ns by category, layers, collectives by phase, times last.
        type Tally = (HashMap<String, i64>, Vec<u32>, BTreeMap<String, usize>, usize);
        let mut per: Vec<Tally> = (0..n).map(|_| (HashMap::new(), Vec::new(), BTreeMap::new(), 0)).collect();
        for (ci, c) in self.collectives.iter().enumerate() {
            let late = c.last();
            if Self::lateness_ns(c) < LATE_NS {
                continue;
            }
            // Each rank's compute between its previous collective's end and this one's start.
            let by_rank: Vec<HashMap<&str, i64>> = (0..n)
                .map(|r| {
                    let a = &self.ranks[r].trace.analysis;
                    let offset = self.ranks[r].clock_offset_ns;
                    let from = if ci == 0 { i64::MIN } else { self.collectives[ci - 1].sides[r].end_ns - offset };
                    let to = c.sides[r].start_ns - offset;
                    let mut m: HashMap<&str, i64> = HashMap::new();
                    let compute = &compute[r];
                    let first = compute.partition_point(|&(ts, _)| ts < from);
                    for &(ts, i) in &compute[first..] {
                        if ts >= to {
                            break;
                        }
                        if a.trace.gpu.end(i) <= to {
                            *m.entry(a.categories.name(i)).or_default() += a.trace.gpu.dur[i];
                        }
                    }
                    m
                })
                .collect();
            let mut cats: Vec<&str> = by_rank.iter().flat_map(|m| m.keys().copied()).collect();
            cats.sort_unstable();
            cats.dedup();
            let entry = &mut per[late];
            // The category comparison speaks of GPU work: not where the rank's GPU sat idle
            // waiting for its host.
            let host_side = self.late.iter().any(|l| l.collective == c.index && l.rank == late && l.side == LateSide::Host);
            for cat in cats.into_iter().filter(|_| !host_side) {
                let others = by_rank.iter().enumerate().filter(|(r, _)| *r != late);
                let med = lower_median(others.map(|(_, m)| m.get(cat).copied().unwrap_or(0)).collect());
                let own = by_rank[late].get(cat).copied().unwrap_or(0);
                if own > med {
                    *entry.0.entry(cat.to_string()).or_default() += own - med;
                }
            }
            let side = &c.sides[late];
            if side.layer != NONE {
                entry.1.push(side.layer);
            }
            *entry.2.entry(side.phase.map_or("none", |p| p.as_str()).to_string()).or_default() += 1;
            entry.3 += 1;
        }
        let mut out: Vec<Excess> = per
            .into_iter()
            .enumerate()
            .filter(|(_, e)| e.3 > 0)
            .map(|(rank, (cats, mut layers, phases, times_last))| {
                let mut by_category: Vec<(String, i64)> = cats.into_iter().collect();
                by_category.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
                layers.sort_unstable();
                layers.dedup();
                Excess { rank, by_category, layers, phases: phases.into_iter().collect(), times_last }
            })
            .collect();
        out.sort_by(|a, b| b.times_last.cmp(&a.times_last).then(a.rank.cmp(&b.rank)));
        out
    }

    /// One sentence naming the rank that arrives last most often, where, and why: at its worst
    /// lateness, how late and how much of it its GPU sat idle waiting for its host (with what the
    /// host was doing) or ran more work; the category excess only for device-side lateness.
    pub fn finding(&self) -> Option<String> {
        let excess = self.excess();
        let e = excess.first()?;
        let rank = self.ranks[e.rank].rank;
        let total = self.collectives.len().max(1);
        let (phase, _) = e.phases.iter().max_by_key(|(_, n)| *n)?;
        let in_phase = self.collectives.iter().filter(|c| c.sides[e.rank].phase.map_or("none", |p| p.as_str()) == phase).count();
        let share =
            100.0 * *e.phases.iter().find(|(p, _)| p == phase).map(|(_, n)| n).unwrap_or(&0) as f64 / in_phase.max(1) as f64;
        let training = !self.ranks[e.rank]
            .trace
            .analysis
            .phases
            .passes
            .iter()
            .any(|p| matches!(p.phase, Phase::Prefill | Phase::Decode | Phase::Mixed));
        let mut s = format!("rank {rank} arrives last at {} of {total} collectives", e.times_last);
        if !training {
            s.push_str(&format!(" ({share:.0}% of the {phase} ones)"));
        }
        let late = self.lateness();
        let worst = late.iter().filter(|l| l.rank == e.rank).max_by_key(|l| (l.late_ns, std::cmp::Reverse(l.collective)));
        let ms = |ns: i64| {
            if ns.abs() >= 1_000_000 {
                format!("{:.1} ms", ns as f64 / 1e6)
            } else {
                format!("{:.1} µs", ns as f64 / 1e3)
            }
        };
        match worst {
            Some(l) => {
                let step = match (training, l.step) {
                    (true, Some(n)) => format!(" (step {n})"),
                    _ => String::new(),
                };
                s.push_str(&format!("; at collective {}{step} it is {} late", l.collective, ms(l.late_ns)));
                match l.side {
                    LateSide::Host => {
                        s.push_str(&format!(", {} of it with its GPU idle waiting for its host", ms(l.idle_excess_ns)));
                        if let Some((op, _)) = &l.host_op {
                            s.push_str(&format!(" (in {op})"));
                        }
                    }
                    LateSide::Device | LateSide::Mixed => {
                        let what = if l.side == LateSide::Device { "" } else { " (the rest idle)" };
                        s.push_str(&format!(", {} of it running more GPU work than the median rank{what}", ms(l.busy_excess_ns)));
                        if let Some((cat, ns)) = e.by_category.first() {
                            s.push_str(&format!("; the excess is {cat} ({:.1} µs in all)", *ns as f64 / 1000.0));
                        }
                    }
                }
                let same = late.iter().filter(|x| x.rank == e.rank && x.side == l.side).count();
                let n = late.iter().filter(|x| x.rank == e.rank).count();
                if n > 1 {
                    s.push_str(&format!("; {}-side at {same} of its {n} late arrivals", l.side.as_str()));
                }
            }
            None => {
                if let Some((cat, ns)) = e.by_category.first() {
                    s.push_str(&format!("; the excess is {cat} ({:.1} µs in all)", *ns as f64 / 1000.0));
                }
            }
        }
        if !e.layers.is_empty() {
            s.push_str(&format!(" in layers {}", ranges(&e.layers)));
        }
        Some(s)
    }
}

/// Sorted numbers as ranges: `5–9, 12`.
pub fn ranges(v: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        out.push(if j > i { format!("{}–{}", v[i], v[j]) } else { v[i].to_string() });
        i = j + 1;
    }
    out.join(", ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn ranges_join_runs() {
        assert_eq!(super::ranges(&[5, 6, 7, 8, 9, 12]), "5–9, 12");
        assert_eq!(super::ranges(&[1]), "1");
        assert_eq!(super::ranges(&[]), "");
    }
}
