//! XLA facts the readers of XLA's output share with the model: module runs told from a stream's
//! kernels in order (the XSpace reader; a JAX trace in Chrome JSON, `model::xla_json`), and a
//! kernel's launch dimensions from XLA's `kernel_details`.

/// One execution of an HLO module, as the span of its kernels' launches on the host.
#[derive(Debug, Clone, PartialEq)]
pub struct ModuleRun<M, T> {
    /// The module (with whatever else must match for kernels to be one run).
    pub module: M,
    /// Start of its first launch, ns.
    pub ts: i64,
    /// End of its last launch, ns.
    pub end: i64,
    /// The host thread of its first launch.
    pub thread: T,
}

/// Module executions from a stream's kernels in order: consecutive kernels of one module form one
/// run; a kernel with no module, or whose launch is not in the trace, ends the run before it.
/// Used by the XSpace reader and for a JAX trace in Chrome JSON (`model::xla_json`).
#[derive(Debug)]
pub struct ModuleRuns<M, T> {
    runs: Vec<ModuleRun<M, T>>,
    open: bool,
}

impl<M, T> Default for ModuleRuns<M, T> {
    fn default() -> Self {
        ModuleRuns { runs: Vec::new(), open: false }
    }
}

impl<M: PartialEq, T> ModuleRuns<M, T> {
    /// The next kernel: its module and its launch (start, end, host thread), when known.
    pub fn push(&mut self, module: Option<M>, launch: Option<(i64, i64, T)>) {
        let (Some(module), Some((ts, end, thread))) = (module, launch) else {
            self.open = false;
            return;
        };
        match self.runs.last_mut() {
            Some(run) if self.open && run.module == module => {
                run.ts = run.ts.min(ts);
                run.end = run.end.max(end);
            }
            _ => self.runs.push(ModuleRun { module, ts, end, thread }),
        }
        self.open = true;
    }

    /// The runs, in the order they started.
    pub fn into_runs(self) -> Vec<ModuleRun<M, T>> {
        self.runs
    }
}

/// `grid:1280,1,1 block:256,1,1 …` → grid and block (XLA's `kernel_details`).
pub fn launch_dims(details: &str) -> (Option<[u32; 3]>, Option<[u32; 3]>) {
    let dims = |key: &str| {
        let rest = details.split_whitespace().find_map(|w| w.strip_prefix(key))?;
        let v: Vec<u32> = rest.split(',').filter_map(|x| x.parse().ok()).collect();
        (v.len() == 3).then(|| [v[0], v[1], v[2]])
    };
    (dims("grid:"), dims("block:"))
}
