//! Split a trace: a Chrome-trace `.json.gz` holding only the events of one window — a pass, a
//! phase, or a stretch of time — plus the metadata events and the document's other top-level keys,
//! which Perfetto and traceprism open like any trace (TraceLens' trace splitter does this in Python).
//!
//! Two steps. [`select`] reads the analysed model and decides which GPU events belong (by their
//! index in `traceEvents`) and which stretch of CPU time goes with them (from the earliest launch of
//! a chosen kernel to the end of the window). [`Splitter`] then reads the source bytes again (an
//! export, not an analysis: the model never holds the text) and copies each kept event's text as
//! it is, compressing as it goes; only the kept events are ever held. What it writes passes a
//! [`crate::support::secrets::Redactor`]: metadata values under secret-looking keys and strings
//! shaped like credentials come out as `REDACTED`.

use crate::analysis::phases::Phase;
use crate::analysis::Analysis;
use crate::error::{Error, Result};
use crate::model::NONE;
use crate::read::formats::Inflating;
use std::io::Write;

/// What to keep.
#[derive(Debug, Clone, PartialEq)]
pub enum Window {
    /// One forward pass (its index in the `passes` table).
    Pass(u32),
    /// Every pass of a phase.
    Phase(Phase),
    /// GPU events starting in `[from, to)`, µs since the start of the trace (as the timeline
    /// shows times).
    Time {
        /// Window start, µs since the trace's start.
        from_us: f64,
        /// Window end (excluded), µs since the trace's start.
        to_us: f64,
    },
}

/// A window as a face gives it, one way for all (the CLI's `--pass`, `--phase`, `--from`/`--to`;
/// the page's `{pass}`, `{phase}`, `{from_us, to_us}`): exactly one of the three.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WindowGiven {
    /// A pass's index.
    pub pass: Option<u32>,
    /// A phase's name (one phase, not `all`).
    pub phase: Option<String>,
    /// Window start, µs since the trace's start.
    pub from_us: Option<f64>,
    /// Window end (excluded), µs since the trace's start.
    pub to_us: Option<f64>,
}

impl WindowGiven {
    /// The window, or an error saying what a window is.
    pub fn window(self) -> Result<Window> {
        match (self.pass, self.phase, self.from_us, self.to_us) {
            (Some(n), None, None, None) => Ok(Window::Pass(n)),
            (None, Some(p), None, None) => Ok(Window::Phase(
                Phase::select("phase", &p)?.ok_or_else(|| Error::new("phase: one phase, not all (to keep every pass, copy the trace)"))?,
            )),
            (None, None, Some(from_us), Some(to_us)) => Ok(Window::Time { from_us, to_us }),
            _ => Err(Error::new(
                "a window is one of: a pass (--pass N), a phase (--phase prefill|decode), or a time range (--from US --to US, µs since the trace's start)",
            )),
        }
    }
}

/// The events [`Splitter`] keeps.
#[derive(Debug, Clone)]
pub struct Selection {
    /// Per event index of `traceEvents`: 1 for a GPU event to keep, 2 for one to drop, 0 for an
    /// event that is not a GPU event (kept by time or as metadata).
    gpu: Vec<u8>,
    /// Non-GPU events (CPU ops, runtime calls, flows, annotations) are kept when their `ts` lies
    /// in `[cpu_from_ns, to_ns]` (trace clock).
    cpu_from_ns: i64,
    to_ns: i64,
    /// Kernels kept (what the kernels table lists for the window).
    pub kernels: usize,
    /// GPU events kept (kernels, memcpy, memset).
    pub gpu_events: usize,
}

/// Chooses the events of `window` from the analysed trace.
pub fn select(a: &Analysis, window: &Window) -> Result<Selection> {
    let t = &a.trace;
    if t.stats.format != crate::model::InputFormat::ChromeJson {
        let how = match t.stats.format {
            crate::model::InputFormat::NsysSqlite => "cut the report with `nsys export --times` instead",
            _ => "profile the window alone instead",
        };
        return Err(Error::new(format!(
            "split copies the events of a Chrome-trace JSON; this trace was read from {}: {how}",
            t.stats.format.label()
        )));
    }
    let g = &t.gpu;
    let origin = t.time_origin_ns;
    let chosen: Vec<usize> = match window {
        Window::Pass(n) => {
            if *n as usize >= a.phases.passes.len() {
                return Err(Error::new(format!(
                    "no pass {n}: the trace has {} passes (0 to {})",
                    a.phases.passes.len(),
                    a.phases.passes.len().saturating_sub(1)
                )));
            }
            (0..g.len()).filter(|&i| a.phases.pass_of_row.get(i) == Some(n)).collect()
        }
        Window::Phase(p) => (0..g.len()).filter(|&i| a.phases.phase_of_row.get(i).copied().flatten() == Some(*p)).collect(),
        Window::Time { from_us, to_us } => {
            // Written this way so that a NaN bound is refused too.
            #[allow(clippy::neg_cmp_op_on_partial_ord)]
            if !(to_us > from_us) {
                return Err(Error::new(format!("--from {from_us} --to {to_us}: the window is empty")));
            }
            let (from, to) = (origin + (from_us * 1e3) as i64, origin + (to_us * 1e3) as i64);
            (0..g.len()).filter(|&i| g.ts[i] >= from && g.ts[i] < to).collect()
        }
    };
    if chosen.is_empty() {
        return Err(Error::new(format!("nothing to split: no GPU event in {window:?}")));
    }
    let events = g.event_index.iter().copied().max().unwrap_or(0) as usize + 1;
    let mut gpu = vec![0u8; events];
    for &e in &g.event_index {
        gpu[e as usize] = 2;
    }
    let (mut gpu_from, mut to) = (i64::MAX, i64::MIN);
    let mut cpu_from = i64::MAX;
    let mut kernels = 0;
    for &i in &chosen {
        gpu[g.event_index[i] as usize] = 1;
        gpu_from = gpu_from.min(g.ts[i]);
        to = to.max(g.ts[i] + g.dur[i]);
        if g.launch[i] != NONE {
            cpu_from = cpu_from.min(t.launches.ts[g.launch[i] as usize]);
        }
        kernels += usize::from(g.kind[i] == crate::model::GpuKind::Kernel);
    }
    if let Window::Time { from_us, to_us } = window {
        gpu_from = gpu_from.min(origin + (from_us * 1e3) as i64);
        to = to.max(origin + (to_us * 1e3) as i64);
    }
    Ok(Selection { gpu, cpu_from_ns: cpu_from.min(gpu_from), to_ns: to, kernels, gpu_events: chosen.len() })
}

/// The two fields of an event the splitter reads to place it.
#[derive(serde::Deserialize)]
struct PhTs {
    ph: Option<String>,
    ts: Option<serde_json::Value>,
}

/// Re-reads a trace's bytes (gzip or plain, in chunks of any size) and writes the kept events as
/// a gzip-compressed Chrome trace.
pub struct Splitter {
    selection: Selection,
    /// The source's text (inflated when it is gzip).
    input: Inflating,
    scan: Scan,
    out: flate2::write::GzEncoder<Vec<u8>>,
    /// Writes secret-looking metadata values as `REDACTED` (issue 30: a split is shared).
    redactor: crate::support::secrets::Redactor,
    /// The redactor's output, reused.
    redacted: Vec<u8>,
    /// Events seen and kept.
    pub events: u64,
    /// Events kept (the window's and the metadata).
    pub kept: u64,
}

/// Where the text scanner is: it copies everything outside the event array and hands each
/// element of the array to the splitter whole.
#[derive(Default)]
struct Scan {
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// Depth of the event array once found.
    array_depth: Option<u32>,
    /// The array has been closed (the rest is copied).
    array_done: bool,
    /// The last string seen at depth 1 (the current top-level key).
    key: Vec<u8>,
    string: Vec<u8>,
    /// The text of the element being read (from its first byte).
    element: Vec<u8>,
    in_element: bool,
    /// The form: `[...]` (true) or `{...}` (false), once known.
    bare: Option<bool>,
}

impl Splitter {
    /// A splitter keeping `selection`.
    pub fn new(selection: Selection) -> Self {
        Splitter {
            selection,
            input: Inflating::default(),
            scan: Scan::default(),
            out: flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6)),
            redactor: Default::default(),
            redacted: Vec::new(),
            events: 0,
            kept: 0,
        }
    }

    /// Feeds the next bytes of the source file.
    pub fn push(&mut self, chunk: &[u8]) -> Result<()> {
        let mut input = std::mem::take(&mut self.input);
        let result = input.push(chunk, &mut |text| self.text(text));
        self.input = input;
        result
    }

    /// Ends the input; returns the `.json.gz` bytes.
    pub fn finish(mut self) -> Result<Vec<u8>> {
        let mut input = std::mem::take(&mut self.input);
        if let Some(what) = input.finish(&mut |text| self.text(text))? {
            return Err(Error::new(format!("cannot split a truncated trace: {what}")));
        }
        if !self.scan.array_done {
            return Err(Error::new("cannot split: the trace's event array does not end (truncated trace?)"));
        }
        self.out.finish().map_err(|e| Error::new(format!("cannot compress: {e}")))
    }

    /// Strings written as `REDACTED` so far (values under secret-looking keys, credentials).
    pub fn redacted(&self) -> u64 {
        self.redactor.redacted
    }

    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        self.redacted.clear();
        self.redactor.push(bytes, &mut self.redacted);
        self.out.write_all(&self.redacted).map_err(|e| Error::new(format!("cannot compress: {e}")))
    }

    /// Scans decompressed text: copies what lies outside the event array, collects each element.
    fn text(&mut self, text: &[u8]) -> Result<()> {
        let mut copy_from = 0;
        for (i, &b) in text.iter().enumerate() {
            let s = &mut self.scan;
            if s.in_element {
                s.element.push(b);
            }
            if s.in_string {
                match (s.escaped, b) {
                    (true, _) => s.escaped = false,
                    (false, b'\\') => s.escaped = true,
                    (false, b'"') => {
                        s.in_string = false;
                        if s.depth == 1 && s.array_depth.is_none() {
                            s.key = std::mem::take(&mut s.string);
                        }
                    }
                    (false, c) => {
                        if s.depth == 1 && s.array_depth.is_none() && s.string.len() < 64 {
                            s.string.push(c);
                        }
                    }
                }
                continue;
            }
            match b {
                b'"' => {
                    s.in_string = true;
                    s.string.clear();
                }
                b'{' | b'[' => {
                    s.depth += 1;
                    if s.bare.is_none() {
                        s.bare = Some(b == b'[');
                    }
                    let is_array = b == b'[' && !s.array_done && s.array_depth.is_none();
                    if is_array && ((s.bare == Some(true) && s.depth == 1) || (s.depth == 2 && s.key == b"traceEvents")) {
                        s.array_depth = Some(s.depth);
                        // Everything up to and including the '[' goes out as it is.
                        let upto = i + 1;
                        let head = text[copy_from..upto].to_vec();
                        self.write(&head)?;
                        copy_from = upto;
                        continue;
                    }
                    if Some(s.depth - 1) == s.array_depth && !s.in_element {
                        s.in_element = true;
                        s.element.clear();
                        s.element.push(b);
                    }
                }
                b'}' | b']' => {
                    if Some(s.depth) == s.array_depth && b == b']' && !s.in_element {
                        s.array_depth = None;
                        s.array_done = true;
                        s.depth -= 1;
                        // The array's text so far was elements (handled) and separators: the
                        // closing bracket and the rest go out as they are.
                        copy_from = i;
                        self.write(b"\n")?;
                        continue;
                    }
                    s.depth = s.depth.saturating_sub(1);
                    if s.in_element && Some(s.depth) == s.array_depth {
                        s.in_element = false;
                        let element = std::mem::take(&mut s.element);
                        self.element(&element)?;
                        self.scan.element = element;
                    }
                }
                _ => {}
            }
            if self.scan.array_depth.is_some() {
                // Inside the array nothing is copied through: elements are written by `element`.
                copy_from = i + 1;
            }
        }
        if self.scan.array_depth.is_none() && copy_from < text.len() {
            let rest = text[copy_from..].to_vec();
            self.write(&rest)?;
        }
        Ok(())
    }

    /// Decides one element of the event array and writes it if kept.
    fn element(&mut self, text: &[u8]) -> Result<()> {
        let index = self.events as usize;
        self.events += 1;
        let keep = match self.selection.gpu.get(index).copied().unwrap_or(0) {
            1 => true,
            2 => false,
            _ => match serde_json::from_slice::<PhTs>(text) {
                Ok(PhTs { ph, ts }) if ph.as_deref() == Some("M") || ts.is_none() => true,
                Ok(PhTs { ts: Some(ts), .. }) => {
                    let us = match ts {
                        serde_json::Value::Number(n) => n.as_f64(),
                        serde_json::Value::String(s) => s.parse().ok(),
                        _ => None,
                    };
                    us.is_some_and(|us| {
                        let ns = (us * 1e3) as i64;
                        ns >= self.selection.cpu_from_ns && ns <= self.selection.to_ns
                    })
                }
                _ => false,
            },
        };
        if keep {
            if self.kept > 0 {
                self.write(b",\n")?;
            } else {
                self.write(b"\n")?;
            }
            self.write(text)?;
            self.kept += 1;
        }
        Ok(())
    }
}
