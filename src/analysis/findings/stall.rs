//! `stalled`: inside a step the GPU idles with its next kernel already issued: the stream waits
//! for an event, another stream or work the trace does not hold (another process, a peer rank).
//! Only waits of at least the micro-idle threshold (`Options::micro_idle_us`) count: shorter ones
//! are the gaps a graph replay or a dependency leaves between kernels. Saving: that idle, an upper
//! bound whose cause the trace can only point at: the runtime call
//! the host sat in during the longest stall.

use super::{code_site, Finding, Group, Kind};
use crate::analysis::Analysis;

/// The stall finding of `g`, if the queued idle is worth raising ([`Group::worth`]).
pub fn stalled(a: &Analysis, g: &Group) -> Option<Finding> {
    let ms = g.median_step();
    let saving_us = g.median_of(|w| w.stalled_ns);
    let wall_us = g.wall_us();
    if !g.worth(saving_us, wall_us) {
        return None;
    }
    let i = g.median_pass(|i| g.steps[i].stalled_ns);
    let (from, to) = g.steps[i].longest_queued;
    let t = &a.trace;
    let l = &t.launches;
    // The host call that overlapped the longest stall most, with where it came from.
    let held = (0..l.len())
        .map(|c| (c, (l.ts[c] + l.dur[c]).min(to) - l.ts[c].max(from)))
        .filter(|&(_, overlap)| overlap > 0)
        .max_by_key(|&(_, overlap)| overlap);
    let host = match held {
        Some((c, overlap)) => {
            let mut s = format!("the host sat {:.1} µs of it in {}", overlap as f64 / 1e3, t.name(l.name[c]));
            if let Some(site) = code_site(t, c) {
                s.push_str(&format!(" from {site}"));
            }
            s
        }
        None => "the host made no runtime call during it".to_string(),
    };
    Some(Finding {
        evidence: format!(
            "the GPU idles {saving_us:.1} µs of {ms}'s {wall_us:.1} µs with the next kernel already issued (in waits of at least {:.0} µs); the longest stall {:.1} µs; {host}",
            a.options.micro_idle_us,
            (to - from) as f64 / 1e3
        ),
        saving_us,
        saving_pct: 100.0 * saving_us / wall_us,
        confidence: format!("low: what the stream waited for is not in the trace; {}", g.confidence()),
        fix: "find what the stream waited for: an event recorded on another stream, another process or a peer rank (profile every rank and every stream: torch.profiler on all ranks, or nsys with --trace=cuda,nvtx across processes); an engine's overlap scheduler waiting on the previous batch shows here too".to_string(),
        check: "no idle longer than a few µs inside the step while a kernel is queued".to_string(),
        from_ns: from,
        to_ns: to,
        ..g.finding(Kind::Stalled)
    })
}
