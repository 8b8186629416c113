//! A capture trace: the profile recorded while an engine captured its CUDA/HIP graphs. Nothing
//! runs on the GPU during a capture; each launch inside `StreamBeginCapture` …
//! `StreamEndCapture` is recorded under the CPU op that made it, with the kernel it dispatches in
//! `args.kernel`. Each such pair is one captured graph.

use super::align::{ANY, MEMCPY, MEMSET};
use crate::model::{FastMap, NameId, Trace, NO_NAME};

/// One graph as captured: the runtime calls that dispatched its work, in program order.
#[derive(Debug, Clone)]
pub struct CapturedGraph {
    /// Rows in the capture trace's `launches`, in time order.
    pub dispatches: Vec<u32>,
    /// Start of the capture (end of `StreamBeginCapture`), ns.
    pub start: i64,
    /// End of the capture (start of `StreamEndCapture`), ns.
    pub end: i64,
}

/// A linked capture trace, its graphs, and what `execution_details.json` said of it.
pub struct Capture {
    /// The capture trace.
    pub trace: Trace,
    /// Its graphs in capture order.
    pub graphs: Vec<CapturedGraph>,
    /// The file's name as given.
    pub label: String,
    /// The batch size its graphs were captured for, when known.
    pub batch_size: Option<u64>,
    /// `FULL` or `PIECEWISE`, when known.
    pub mode: Option<String>,
}

impl Capture {
    /// Finds the captured graphs of a linked capture trace.
    pub fn new(trace: Trace, label: String, batch_size: Option<u64>, mode: Option<String>) -> Capture {
        let graphs = captured_graphs(&trace);
        Capture { trace, graphs, label, batch_size, mode }
    }

    /// Dispatches over all graphs.
    pub fn dispatches(&self) -> usize {
        self.graphs.iter().map(|g| g.dispatches.len()).sum()
    }

    /// The key of each dispatch of graph `g`, with kernel names interned in `names` (the
    /// execution trace's): `kernels` caches the translation of the capture's name ids.
    pub fn keys(&self, g: usize, names: &mut crate::model::Interner, kernels: &mut FastMap<NameId, u32>) -> Vec<u32> {
        let l = &self.trace.launches;
        self.graphs[g]
            .dispatches
            .iter()
            .map(|&d| {
                let call = self.trace.name(l.name[d as usize]);
                if call.contains("Memcpy") {
                    MEMCPY
                } else if call.contains("Memset") {
                    MEMSET
                } else if l.kernel[d as usize] == NO_NAME {
                    ANY
                } else {
                    let k = l.kernel[d as usize];
                    *kernels.entry(k).or_insert_with(|| names.intern(self.trace.name(k)))
                }
            })
            .collect()
    }
}

/// What a runtime call is, for finding captures.
#[derive(PartialEq)]
enum Call {
    Begin,
    End,
    Dispatch,
    Other,
}

fn call_of(name: &str) -> Call {
    if name.contains("StreamBeginCapture") {
        Call::Begin
    } else if name.contains("StreamEndCapture") {
        Call::End
    } else if (name.contains("Launch") && !name.contains("GraphLaunch")) || name.contains("Memcpy") || name.contains("Memset") {
        Call::Dispatch
    } else {
        Call::Other
    }
}

/// Each `StreamBeginCapture` with the next `StreamEndCapture` of its thread, and the dispatches
/// of that thread between them.
fn captured_graphs(t: &Trace) -> Vec<CapturedGraph> {
    let l = &t.launches;
    let mut kind_of: FastMap<NameId, u8> = FastMap::default();
    let mut order: Vec<u32> = (0..l.len() as u32).collect();
    order.sort_by_key(|&i| (l.thread[i as usize], l.ts[i as usize]));
    let mut open: FastMap<u32, CapturedGraph> = FastMap::default();
    let mut graphs = Vec::new();
    for i in order {
        let i = i as usize;
        let k = *kind_of.entry(l.name[i]).or_insert_with(|| call_of(t.name(l.name[i])) as u8);
        let thread = l.thread[i];
        if k == Call::Begin as u8 {
            open.insert(thread, CapturedGraph { dispatches: Vec::new(), start: l.ts[i] + l.dur[i], end: i64::MAX });
        } else if k == Call::End as u8 {
            if let Some(mut g) = open.remove(&thread) {
                g.end = l.ts[i];
                graphs.push(g);
            }
        } else if k == Call::Dispatch as u8 {
            if let Some(g) = open.get_mut(&thread) {
                g.dispatches.push(i as u32);
            }
        }
    }
    graphs.retain(|g| !g.dispatches.is_empty());
    graphs.sort_by_key(|g| g.start);
    graphs
}

/// The op around a dispatch in its capture trace, or `NONE`.
pub fn dispatch_op(c: &Capture, d: u32) -> u32 {
    c.trace.launches.cpu_op[d as usize]
}

/// One entry of `execution_details.json`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct CaptureEntry {
    /// The capture trace's file name, beside the list.
    pub file: String,
    /// Batch size its graphs were captured for.
    pub batch_size: Option<u64>,
    /// `FULL` or `PIECEWISE`.
    pub mode: Option<String>,
}

/// Reads `execution_details.json`: `[{"file": …, "batch_size": 32, "mode": "FULL"}, …]`.
pub fn execution_details(text: &str) -> crate::error::Result<Vec<CaptureEntry>> {
    serde_json::from_str(text).map_err(|e| {
        crate::error::Error::new(format!(
            "execution_details.json: {e} (expected a list of {{\"file\", \"batch_size\", \"mode\"}})"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_calls_are_told_apart() {
        assert!(call_of("hipStreamBeginCapture") == Call::Begin);
        assert!(call_of("cudaStreamEndCapture") == Call::End);
        assert!(call_of("hipExtModuleLaunchKernel") == Call::Dispatch);
        assert!(call_of("cudaMemcpyAsync") == Call::Dispatch);
        assert!(call_of("hipMemsetAsync") == Call::Dispatch);
        assert!(call_of("cudaGraphLaunch") == Call::Other, "a graph launched inside a capture is not a kernel");
        assert!(call_of("hipStreamGetCaptureInfo") == Call::Other);
    }

    #[test]
    fn execution_details_are_read_and_bad_ones_say_what_was_expected() {
        let d = execution_details(r#"[{"file": "bs_32_rank0.json.gz", "batch_size": 32, "mode": "FULL"}]"#).unwrap();
        assert_eq!(d, vec![CaptureEntry { file: "bs_32_rank0.json.gz".into(), batch_size: Some(32), mode: Some("FULL".into()) }]);
        let e = execution_details(r#"{"file": 1}"#).unwrap_err().to_string();
        assert!(e.contains("execution_details.json") && e.contains("expected a list"), "{e}");
    }
}
