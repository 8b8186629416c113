//! An N-rank run made from one real rank's trace, with a truth file: the test data for the
//! analysis of all ranks, since real multi-rank inference traces are rarely published.
//!
//! Every rank is a copy of the real trace with its own clock (rank r's times shifted by an offset)
//! and a little jitter at each collective (its start moved later by up to [`RunSpec::jitter_us`],
//! its end kept). On one rank, the straggler, chosen collectives are delayed: the compute kernel
//! just before each on its stream runs longer by the delay, so the collective and every GPU event
//! after it start that much later. The other ranks wait for it inside the collective, which runs
//! longer by the delay, and their GPU events after it start later too: as on real hardware, every
//! rank leaves a synchronous collective together once the last one has arrived. That is a
//! device-side delay; a host-side one ([`LateKind::Host`]) instead shifts every event of the
//! straggler, CPU and GPU, from the end of that kernel on (the ranges around that moment grow by
//! the delay): its host starts the next work later and its GPU sits idle meanwhile. The truth says
//! what was done: the offsets, the straggler, the kind, and each delay with the collective's name
//! and occurrence.

use serde::Serialize;
use serde_json::Value;

/// What to make.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// Ranks in the run (2 or more).
    pub ranks: u32,
    /// The rank that arrives late.
    pub straggler: u32,
    /// Delays: (kernel name, occurrence of that name, delay µs). Empty: [`RunSpec::every`].
    pub delays: Vec<(String, usize, f64)>,
    /// Without explicit delays: delay every `every`-th collective (in time order) by `delay_us`.
    pub every: usize,
    /// The delay for [`RunSpec::every`], µs.
    pub delay_us: f64,
    /// Largest jitter added to a collective's start on every rank, µs.
    pub jitter_us: f64,
    /// Seed of the jitter and the offsets.
    pub seed: u64,
    /// Which side of the straggler is late.
    pub kind: LateKind,
}

/// Which side of the straggler a delay is put on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum LateKind {
    /// The kernel before the collective runs longer (more GPU work).
    #[default]
    Device,
    /// The host is late: every later CPU and GPU event shifts, the GPU idles meanwhile.
    Host,
}

impl Default for RunSpec {
    fn default() -> Self {
        RunSpec {
            ranks: 4,
            straggler: 2,
            delays: Vec::new(),
            every: 8,
            delay_us: 40.0,
            jitter_us: 0.2,
            seed: 7,
            kind: LateKind::Device,
        }
    }
}

/// One injected delay.
#[derive(Debug, Clone, Serialize)]
pub struct InjectedDelay {
    /// The collective kernel's name.
    pub name: String,
    /// Which occurrence of that name (0 = first).
    pub occurrence: usize,
    /// Its start in the source trace, µs.
    pub ts_us: f64,
    /// The delay, µs.
    pub delay_us: f64,
}

/// What the generator did.
#[derive(Debug, Clone, Serialize)]
pub struct RunTruth {
    /// Ranks made.
    pub world_size: u32,
    /// The late rank.
    pub straggler: u32,
    /// What was added to each rank's clock, µs (the analysis should add the opposite to align).
    pub offsets_us: Vec<f64>,
    /// Largest jitter, µs.
    pub jitter_us: f64,
    /// Which side of the straggler the delays are on.
    pub kind: LateKind,
    /// The delays on the straggler.
    pub delays: Vec<InjectedDelay>,
}

/// The run: one Chrome-trace JSON text per rank, and the truth.
pub struct Run {
    /// Rank r's trace text.
    pub traces: Vec<Vec<u8>>,
    /// What was done.
    pub truth: RunTruth,
}

/// Whether a kernel name is a collective's (NCCL/RCCL, custom all-reduce, DeepEP). A Triton kernel
/// never is: Inductor names fused kernels after the ops they fuse, and `all_reduce` there is a
/// reduction over a tensor (`triton_poi_fused_add_all_reduce_...` in the vLLM trace).
pub fn is_collective(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    if n.starts_with("triton_") {
        return false;
    }
    ["nccl", "rccl", "cross_device_reduce", "all_reduce", "allreduce", "allgather", "reducescatter", "alltoall", "deep_ep"]
        .iter()
        .any(|k| n.contains(k))
}

fn err(what: impl Into<String>) -> String {
    format!("synth-ranks: {}", what.into())
}

/// Makes the run from one trace's JSON text.
pub fn make_run(text: &[u8], spec: &RunSpec) -> Result<Run, String> {
    if spec.ranks < 2 || spec.straggler >= spec.ranks {
        return Err(err(format!(
            "{} ranks with straggler {}: need 2+ ranks and a straggler below that",
            spec.ranks, spec.straggler
        )));
    }
    let mut doc: Value = serde_json::from_slice(text).map_err(|e| err(format!("the trace is not JSON: {e}")))?;
    let events_len = match doc.get("traceEvents").and_then(Value::as_array) {
        Some(events) => events.len(),
        None => return Err(err("the trace has no traceEvents array")),
    };
    let events = doc["traceEvents"].as_array().expect("checked above");
    let num = |e: &Value, k: &str| e.get(k).and_then(Value::as_f64);
    let ts: Vec<Option<f64>> = events.iter().map(|e| num(e, "ts")).collect();
    // Kernels: (stream key, ts, index); collectives among them in time order.
    let is_kernel =
        |e: &Value| e.get("ph").and_then(Value::as_str) == Some("X") && e.get("cat").and_then(Value::as_str) == Some("kernel");
    let name_of = |e: &Value| e.get("name").and_then(Value::as_str).unwrap_or("").to_string();
    let stream_of = |e: &Value| format!("{}/{}", e.get("pid").unwrap_or(&Value::Null), e.get("tid").unwrap_or(&Value::Null));
    let mut kernels: Vec<(String, f64, usize)> = (0..events_len)
        .filter(|&i| is_kernel(&events[i]) && ts[i].is_some())
        .map(|i| (stream_of(&events[i]), ts[i].unwrap_or(0.0), i))
        .collect();
    kernels.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    // The kernel before each kernel on its stream.
    let mut before: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    for w in kernels.windows(2) {
        if w[0].0 == w[1].0 {
            before.insert(w[1].2, w[0].2);
        }
    }
    let mut collectives: Vec<usize> = kernels.iter().map(|k| k.2).filter(|&i| is_collective(&name_of(&events[i]))).collect();
    collectives.sort_by(|&a, &b| ts[a].unwrap_or(0.0).total_cmp(&ts[b].unwrap_or(0.0)).then(a.cmp(&b)));
    if collectives.is_empty() {
        return Err(err("the trace has no collective kernel to match ranks on"));
    }
    // Occurrence of each collective's name, in time order.
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let occurrence: Vec<(String, usize)> = collectives
        .iter()
        .map(|&i| {
            let name = name_of(&events[i]);
            let n = seen.entry(name.clone()).or_default();
            *n += 1;
            (name, *n - 1)
        })
        .collect();
    // Which collectives are delayed, and by how much: a delay needs a compute kernel before the
    // collective on its stream and a collective long enough to start later and end as before.
    let wanted: Vec<(usize, f64)> = if spec.delays.is_empty() {
        (0..collectives.len())
            .filter(|k| spec.every > 0 && k % spec.every == spec.every / 2)
            .map(|k| (k, spec.delay_us))
            .collect()
    } else {
        spec.delays
            .iter()
            .filter_map(|(name, occ, d)| occurrence.iter().position(|(n, o)| n == name && o == occ).map(|k| (k, *d)))
            .collect()
    };
    let mut delays = Vec::new();
    let mut delayed: Vec<(usize, usize, f64)> = Vec::new(); // (collective event, previous kernel, delay)
    for (k, d) in wanted {
        let i = collectives[k];
        let Some(&prev) = before.get(&i) else { continue };
        let dur = num(&events[i], "dur").unwrap_or(0.0);
        if is_collective(&name_of(&events[prev])) || dur <= spec.jitter_us {
            continue;
        }
        delays.push(InjectedDelay {
            name: occurrence[k].0.clone(),
            occurrence: occurrence[k].1,
            ts_us: ts[i].unwrap_or(0.0),
            delay_us: d,
        });
        delayed.push((i, prev, d));
    }
    let durs: Vec<Option<f64>> = events.iter().map(|e| num(e, "dur")).collect();
    let mut mix = crate::support::mix::SplitMix64::new(spec.seed);
    let offsets_us: Vec<f64> = (0..spec.ranks)
        .map(|r| if r == 0 { 0.0 } else { (r as f64 * 1_234.5 + (mix.unit() * 1000.0).round()).round() })
        .collect();
    // GPU-side events (what a late rank delays): kernels, copies, GPU annotations, flow finishes.
    let on_gpu: Vec<bool> = events
        .iter()
        .map(|e| {
            let cat = e.get("cat").and_then(Value::as_str).unwrap_or("");
            matches!(cat, "kernel" | "gpu_memcpy" | "gpu_memset" | "gpu_user_annotation")
                || (cat == "ac2g" && e.get("ph").and_then(Value::as_str) == Some("f"))
        })
        .collect();
    // Each rank's delays as (from this time on, shift by): the straggler's GPU work shifts from the
    // end of the lengthened kernel, the others' from just after the collective's start.
    let mut shifts: Vec<Vec<(f64, f64)>> = (0..spec.ranks as usize).map(|_| Vec::new()).collect();
    for &(i, prev, d) in &delayed {
        let prev_end = ts[prev].unwrap_or(0.0) + durs[prev].unwrap_or(0.0);
        for (r, list) in shifts.iter_mut().enumerate() {
            list.push(if r as u32 == spec.straggler { (prev_end, d) } else { (ts[i].unwrap_or(0.0), d) });
        }
    }
    let mut traces = Vec::new();
    for r in 0..spec.ranks {
        let offset = offsets_us[r as usize];
        let straggler = r == spec.straggler;
        let mut list = shifts[r as usize].clone();
        list.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut running = 0.0;
        let cumulative: Vec<(f64, f64)> = list
            .iter()
            .map(|&(t, d)| {
                running += d;
                (t, running)
            })
            .collect();
        // The straggler shifts events at or after a boundary, the others strictly after it.
        let shift_at = |t: f64| -> f64 {
            let n = cumulative.partition_point(|&(b, _)| if straggler { b <= t } else { b < t });
            if n == 0 {
                0.0
            } else {
                cumulative[n - 1].1
            }
        };
        // A host-side straggler's CPU events shift too (its host was late), and the ranges
        // spanning a delay's moment (the step, the module around it) grow by it.
        let host_late = straggler && spec.kind == LateKind::Host;
        let mut new_ts: Vec<Option<f64>> = ts
            .iter()
            .zip(&on_gpu)
            .map(|(t, &gpu)| t.map(|t| t + offset + if gpu || host_late { shift_at(t) } else { 0.0 }))
            .collect();
        let mut new_dur = durs.clone();
        for &(i, prev, d) in &delayed {
            if host_late {
                let at = ts[prev].unwrap_or(0.0) + durs[prev].unwrap_or(0.0);
                for (k, (t, dur)) in ts.iter().zip(&durs).enumerate() {
                    if let (Some(t), Some(dur)) = (t, dur) {
                        if !on_gpu[k] && *t < at && t + dur > at {
                            new_dur[k] = new_dur[k].map(|v| v + d);
                        }
                    }
                }
            } else if straggler {
                new_dur[prev] = new_dur[prev].map(|v| v + d);
            } else {
                new_dur[i] = new_dur[i].map(|v| v + d);
            }
        }
        for &i in &collectives {
            let j = (mix.unit() * spec.jitter_us * 1000.0).round() / 1000.0;
            if let (Some(t), Some(d)) = (new_ts[i], new_dur[i]) {
                if d > j {
                    new_ts[i] = Some(t + j);
                    new_dur[i] = Some(d - j);
                }
            }
        }
        let events = doc["traceEvents"].as_array_mut().expect("checked above");
        for (i, e) in events.iter_mut().enumerate() {
            let Some(obj) = e.as_object_mut() else { continue };
            if let Some(t) = new_ts[i] {
                obj.insert("ts".into(), round3(t));
            }
            if let Some(d) = new_dur[i] {
                obj.insert("dur".into(), round3(d));
            }
        }
        if let Some(top) = doc.as_object_mut() {
            top.insert("distributedInfo".into(), serde_json::json!({"backend": "nccl", "rank": r, "world_size": spec.ranks}));
        }
        traces.push(serde_json::to_vec(&doc).map_err(|e| err(e.to_string()))?);
    }
    Ok(Run {
        traces,
        truth: RunTruth {
            world_size: spec.ranks,
            straggler: spec.straggler,
            offsets_us,
            jitter_us: spec.jitter_us,
            kind: spec.kind,
            delays,
        },
    })
}

/// A time in µs with at most three decimals (ns), as the profiler writes it.
fn round3(v: f64) -> Value {
    let r = (v * 1000.0).round() / 1000.0;
    serde_json::Number::from_f64(r).map_or(Value::Null, Value::Number)
}
