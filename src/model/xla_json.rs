//! A JAX trace in Chrome JSON (xprof's trace-viewer export of an `XSpace`, or a `*.trace.json.gz`
//! written beside the `*.xplane.pb`): its events carry no `cat`. What an event is follows from
//! where it sits, as in the `XSpace` it came from (see `ingest::xplane`):
//!
//! - a process named `… /device:GPU:N` (or `TPU:N`) is device N; its `Stream #…` threads hold
//!   kernels (memcpy / memset on `…Memcpy…` / `…Memset…` streams), and its derived threads
//!   (`XLA Modules`, `XLA Ops`, `Framework Ops`, `Framework Name Scope`, `Source code`, `Steps`)
//!   repeat the kernels' time and are skipped;
//! - a process named `… /host:CPU` is the host: an event with a `correlation_id` is a runtime
//!   launch, inside a CPU op named after the HLO op it runs (`hlo_op`); any other is a CPU op;
//! - each run of a stream's kernels from one HLO module becomes a `user_annotation` named
//!   `XlaModule:<module>` over their launches, so that passes follow module executions.
//!
//! xprof writes the process and thread names before the events, which is what this relies on:
//! the reader parses such a trace in order (a part parsed apart never saw the names).

use super::*;

/// What a process of a JAX trace is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Plane {
    /// `/device:GPU:N`: device N.
    Device(i32),
    /// `/host:CPU`.
    Host,
}

/// The plane a process name (`<host> /device:GPU:N`, `<host> /host:CPU`) names, if any.
pub(super) fn plane_named(name: &str) -> Option<Plane> {
    match name.rsplit_once("/device:") {
        Some((_, dev)) => dev.rsplit(':').next().and_then(|d| d.parse::<i32>().ok()).map(Plane::Device),
        None if name.contains("/host:") => Some(Plane::Host),
        None => None,
    }
}

/// What a `cat`-less event of a JAX trace becomes.
pub(super) enum XlaDest {
    /// A GPU event of a device's stream.
    Gpu(GpuKind, i32),
    /// A host event that launches work (it has a `correlation_id`).
    Launch,
    /// Any other host event.
    CpuOp,
    /// A derived device line, or a process that is not a plane.
    Ignore,
}

/// The planes seen in process names, and each kernel's HLO module for the module runs.
#[derive(Default)]
pub(super) struct XlaJson {
    planes: FastMap<i64, Plane>,
    /// Per GPU row of a device stream: its HLO module (if it has one) and launch correlation
    /// (module runs are cut at the end, when every launch has been read).
    kernels: Vec<(u32, Option<NameId>, i64)>,
}

impl XlaJson {
    /// Notes that process `pid` is `plane`.
    pub(super) fn add_plane(&mut self, pid: i64, plane: Plane) {
        self.planes.insert(pid, plane);
    }

    /// Where a `cat`-less complete event on `pid` (thread named `thread`) goes.
    pub(super) fn dest(&self, pid: i64, thread: &str, has_correlation: bool) -> XlaDest {
        match self.planes.get(&pid) {
            Some(Plane::Device(d)) => {
                if !thread.starts_with("Stream") {
                    XlaDest::Ignore
                } else if thread.contains("Memcpy") {
                    XlaDest::Gpu(GpuKind::Memcpy, *d)
                } else if thread.contains("Memset") {
                    XlaDest::Gpu(GpuKind::Memset, *d)
                } else {
                    XlaDest::Gpu(GpuKind::Kernel, *d)
                }
            }
            Some(Plane::Host) if has_correlation => XlaDest::Launch,
            Some(Plane::Host) => XlaDest::CpuOp,
            None => XlaDest::Ignore,
        }
    }

    /// Remembers GPU row `row`'s module and correlation.
    pub(super) fn kernel(&mut self, row: usize, module: Option<NameId>, correlation: i64) {
        self.kernels.push((row as u32, module, correlation));
    }

    /// A `deviceProperties` entry per device plane, as the `XSpace` reader writes them; the JSON
    /// form has no plane stats, so the vendor is read off the host's launch calls (`hip…` or
    /// `cu…`).
    pub(super) fn device_properties(&self, trace: &Trace) -> serde_json::Value {
        let launches = |prefix: &str| (0..trace.launches.len()).any(|i| trace.name(trace.launches.name[i]).starts_with(prefix));
        let vendor = if launches("hip") {
            "AMD"
        } else if launches("cu") {
            "NVIDIA"
        } else {
            "unknown"
        };
        let mut devices: Vec<i32> =
            self.planes.values().filter_map(|p| if let Plane::Device(d) = p { Some(*d) } else { None }).collect();
        devices.sort_unstable();
        devices.dedup();
        serde_json::Value::Array(
            devices
                .into_iter()
                .map(|d| {
                    serde_json::json!({
                        "id": d,
                        "name": format!("{vendor} GPU {d} (XLA)"),
                        "warpSize": if vendor == "AMD" { 64 } else { 32 },
                    })
                })
                .collect(),
        )
    }

    /// The `XlaModule:<module>` annotations: one per run of a stream's kernels from one module,
    /// spanning their launches on the host (kernels whose launch is not in the trace are left
    /// out of the runs).
    pub(super) fn module_annotations(&self, trace: &mut Trace) {
        let mut launch_of: FastMap<i64, usize> = FastMap::default();
        for i in 0..trace.launches.len() {
            launch_of.insert(trace.launches.correlation[i], i);
        }
        // Rows by stream, in the order read (each stream's events are in time order).
        let mut rows: Vec<&(u32, Option<NameId>, i64)> = self.kernels.iter().collect();
        rows.sort_by_key(|(row, _, _)| {
            let r = *row as usize;
            (trace.gpu.device[r], trace.gpu.stream[r])
        });
        // The stream is part of what must match: a run never spans two streams.
        let mut runs = crate::ingest::interchange::ModuleRuns::default();
        for &&(row, module, corr) in &rows {
            let r = row as usize;
            let stream = (trace.gpu.device[r], trace.gpu.stream[r]);
            let l = &trace.launches;
            let launch = launch_of.get(&corr).map(|&i| (l.ts[i], l.ts[i] + l.dur[i], l.thread[i]));
            runs.push(module.map(|m| (m, stream)), launch);
        }
        for run in runs.into_runs() {
            let name = trace.names.intern(&format!("XlaModule:{}", trace.names.resolve(run.module.0)));
            trace.ops.push(CpuOp::bare(OpKind::UserAnnotation, name, run.ts, run.end - run.ts, run.thread, u32::MAX));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_names_tell_devices_and_the_host() {
        let mut x = XlaJson::default();
        for (pid, name) in [(1, "jax_conv_mi300x /device:GPU:3"), (2, "/device:TPU:0"), (701, "myhost /host:CPU")] {
            x.add_plane(pid, plane_named(name).expect(name));
        }
        assert_eq!(plane_named("python3"), None);
        assert!(matches!(x.dest(1, "Stream #15(Kernel)", true), XlaDest::Gpu(GpuKind::Kernel, 3)));
        assert!(matches!(x.dest(1, "Stream #16(MemcpyD2H)", true), XlaDest::Gpu(GpuKind::Memcpy, 3)));
        assert!(matches!(x.dest(1, "XLA Ops", false), XlaDest::Ignore));
        assert!(matches!(x.dest(701, "Host Threads/583", true), XlaDest::Launch));
        assert!(matches!(x.dest(701, "python", false), XlaDest::CpuOp));
        assert!(matches!(x.dest(9, "python", false), XlaDest::Ignore));
    }
}
