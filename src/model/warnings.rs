//! What was skipped, repaired or found wrong while a trace was read and linked: each kind a
//! [`WarningKind`] that carries its data, counted, with the first few occurrences.

use serde::{Serialize, Serializer};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// One kind of warning. Tables and JSON show it as a sentence ([`WarningKind::sentence`]); code
/// matches the variant, never the sentence.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum WarningKind {
    /// An event without `ts` (skipped).
    EventWithoutTs,
    /// An event whose `ts` is not a number (skipped).
    TsNotANumber,
    /// A complete event with a negative `dur` (set to 0).
    NegativeDur,
    /// A complete event without `dur` (skipped).
    CompleteWithoutDur,
    /// A complete event whose `dur` is not a number (skipped).
    DurNotANumber,
    /// An element of `traceEvents` that is not a JSON object (skipped).
    NotAnObject,
    /// A flow event without `ts` or `id` (skipped).
    FlowWithoutTsOrId,
    /// A top-level value (beside `traceEvents`) that could not be read.
    HeaderUnread,
    /// An event whose broken JSON was repaired.
    RepairedJson,
    /// Counter events (`ph: C`: Kineto's hardware counters under `GPU N Counters`), not modelled.
    CounterEvents,
    /// Complete events of a category no analysis reads (a device kind we do not model: MTIA,
    /// XPU, HPU...), with that category.
    UnreadCategory(String),
    /// Kernel launches recorded with no GPU event anywhere in the trace (found by health).
    CpuOnly,
    /// Kernel launches whose kernel is missing, in a trace that has kernels (found by health).
    LaunchWithoutKernel,
    /// GPU events with no launch (and no graph replay) on the CPU side (found by health).
    GpuWithoutCpu,
    /// Kernels that start before the previous kernel on their stream ended (found by health).
    StreamOverlap,
    /// Kernels of zero duration (found by health).
    ZeroDuration,
    /// Events of lanes a profiler derived from the device's tasks (torch_npu's `Overlap
    /// Analysis`), not read: the tasks are.
    DerivedLanes,
}

impl WarningKind {
    /// Every kind without data, and `UnreadCategory` with an empty category, in wire-tag order.
    const TAGGED: [WarningKind; 17] = [
        WarningKind::EventWithoutTs,
        WarningKind::TsNotANumber,
        WarningKind::NegativeDur,
        WarningKind::CompleteWithoutDur,
        WarningKind::DurNotANumber,
        WarningKind::NotAnObject,
        WarningKind::FlowWithoutTsOrId,
        WarningKind::HeaderUnread,
        WarningKind::RepairedJson,
        WarningKind::CounterEvents,
        WarningKind::UnreadCategory(String::new()),
        WarningKind::CpuOnly,
        WarningKind::LaunchWithoutKernel,
        WarningKind::GpuWithoutCpu,
        WarningKind::StreamOverlap,
        WarningKind::ZeroDuration,
        WarningKind::DerivedLanes,
    ];

    /// The sentence tables, JSON and the CLI show for this kind (the key of `warnings.counts`).
    pub fn sentence(&self) -> Cow<'static, str> {
        use WarningKind::*;
        Cow::Borrowed(match self {
            EventWithoutTs => "event without ts (skipped)",
            TsNotANumber => "ts is not a number (skipped)",
            NegativeDur => "negative dur (set to 0)",
            CompleteWithoutDur => "complete event without dur (skipped)",
            DurNotANumber => "dur is not a number (skipped)",
            NotAnObject => "event is not a JSON object (skipped)",
            FlowWithoutTsOrId => "flow event without ts or id (skipped)",
            HeaderUnread => "top-level values not read (their facts, e.g. deviceProperties, are missing)",
            RepairedJson => {
                "event with broken JSON, repaired (an unescaped quote, a stray backslash or a control character in a string)"
            }
            CounterEvents => "counter events (ph C, e.g. GPU hardware counters) not read: counters are not modelled",
            UnreadCategory(_) => return Cow::Owned(format!("{} not read: this device or event kind is not modelled", self.unread_what())),
            CpuOnly => {
                "kernel launches with no GPU event in the whole trace: the profiler recorded the CPU only (add ProfilerActivity.CUDA)"
            }
            LaunchWithoutKernel => {
                "kernel launches whose kernel is not in the trace (dropped by the profiler, often at the session's start)"
            }
            GpuWithoutCpu => "device events (kernels, copies) with no CPU side (no runtime launch recorded for them)",
            StreamOverlap => "kernels that overlap the previous kernel on their own stream (without programmatic dependent launch a stream runs one kernel at a time: a clock or writer error)",
            ZeroDuration => "kernels of zero duration",
            DerivedLanes => {
                "events of lanes the profiler derived from the device's tasks (torch_npu's Overlap Analysis: computing, communication, free), not read: the tasks themselves are"
            }
        })
    }

    /// True for events of a kind no analysis reads (an unread category, counter events).
    pub fn is_unread(&self) -> bool {
        matches!(self, WarningKind::UnreadCategory(_) | WarningKind::CounterEvents)
    }

    /// What an unread kind is, in words (`events of category 'mtia_kernel'`); empty otherwise.
    pub fn unread_what(&self) -> String {
        match self {
            WarningKind::UnreadCategory(cat) => format!("events of category '{cat}'"),
            WarningKind::CounterEvents => "counter events (ph C, e.g. GPU hardware counters)".into(),
            _ => String::new(),
        }
    }

    /// The kind's wire tag and data, for [`crate::model::transfer`].
    pub fn to_wire(&self) -> (u64, &str) {
        let tag = Self::TAGGED.iter().position(|k| std::mem::discriminant(k) == std::mem::discriminant(self)).unwrap_or(0);
        match self {
            WarningKind::UnreadCategory(cat) => (tag as u64, cat.as_str()),
            _ => (tag as u64, ""),
        }
    }

    /// The kind of a wire tag and its data ([`WarningKind::to_wire`]); `None` for an unknown tag.
    pub fn from_wire(tag: u64, data: &str) -> Option<WarningKind> {
        match Self::TAGGED.get(tag as usize)? {
            WarningKind::UnreadCategory(_) => Some(WarningKind::UnreadCategory(data.to_string())),
            k => Some(k.clone()),
        }
    }
}

impl std::fmt::Display for WarningKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.sentence())
    }
}

/// Kinds sort by their sentence, so tables and JSON list them as they always have.
impl Ord for WarningKind {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.sentence().cmp(&other.sentence())
    }
}

impl PartialOrd for WarningKind {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Serialize for WarningKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.sentence())
    }
}

/// What was skipped or repaired while reading, counted by kind, never silent.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Warnings {
    /// Count per warning kind.
    pub counts: BTreeMap<WarningKind, u64>,
    /// The first few occurrences with their event index, for the user to look at.
    pub examples: Vec<WarningExample>,
}

/// One recorded occurrence of a warning.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WarningExample {
    /// Index of the event in `traceEvents`.
    pub event: u64,
    /// What kind of warning (the key of [`Warnings::counts`]).
    pub kind: WarningKind,
    /// The event's name, when it has one (with its process, for events of a process).
    pub detail: String,
    /// The event's process, for a kind counted per process (events no analysis reads).
    #[serde(skip)]
    pub pid: Option<i64>,
    /// That process's name, once the trace named it.
    #[serde(skip)]
    pub process: Option<String>,
    /// The event's name alone (what `detail` says before the process).
    #[serde(skip)]
    pub subject: String,
}

impl WarningExample {
    /// Names the example's process (`name (pid N, process "GPU 0 Counters")`).
    pub fn name_process(&mut self, process: &str) {
        let Some(pid) = self.pid else { return };
        self.detail = format!("{} (pid {pid}, process \"{process}\")", self.subject).chars().take(200).collect();
        self.process = Some(process.to_string());
    }
}

impl std::fmt::Display for WarningExample {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "event {}: {}: {}", self.event, self.kind, self.detail)
    }
}

const MAX_EXAMPLES: usize = 20;
/// Examples kept of one kind, so that one frequent kind leaves room for the others.
const EXAMPLES_PER_KIND: u64 = 5;

impl Warnings {
    /// Records one occurrence of `kind` at event `index`, with detail text.
    pub fn add(&mut self, kind: WarningKind, index: u64, detail: &str) {
        let seen = match self.counts.get_mut(&kind) {
            Some(n) => {
                *n += 1;
                *n
            }
            None => {
                self.counts.insert(kind.clone(), 1);
                1
            }
        };
        if self.examples.len() < MAX_EXAMPLES && seen <= EXAMPLES_PER_KIND {
            self.examples.push(WarningExample {
                event: index,
                kind,
                detail: detail.chars().take(200).collect(),
                pid: None,
                process: None,
                subject: String::new(),
            });
        }
    }

    /// Records one occurrence of `kind` for event `index` named `name` of process `pid` (the
    /// process's name follows once the trace gives it: [`WarningExample::name_process`]).
    pub fn add_of_process(&mut self, kind: WarningKind, index: u64, name: &str, pid: i64) {
        let before = self.examples.len();
        self.add(kind, index, &format!("{name} (pid {pid})"));
        if let Some(e) = self.examples.get_mut(before) {
            e.pid = Some(pid);
            e.subject = name.to_string();
        }
    }

    /// Adds another reader's warnings whose event indices start at `event_offset`.
    pub fn absorb(&mut self, other: Warnings, event_offset: u64) {
        for (k, n) in other.counts {
            *self.counts.entry(k).or_insert(0) += n;
        }
        for mut e in other.examples {
            let of_kind = self.examples.iter().filter(|x| x.kind == e.kind).count() as u64;
            if self.examples.len() < MAX_EXAMPLES && of_kind < EXAMPLES_PER_KIND {
                e.event += event_offset;
                self.examples.push(e);
            }
        }
    }

    /// How many warnings of `kind` (0 when none).
    pub fn count(&self, kind: &WarningKind) -> u64 {
        self.counts.get(kind).copied().unwrap_or(0)
    }

    /// The examples of one kind.
    pub fn examples_of<'a>(&'a self, kind: &'a WarningKind) -> impl Iterator<Item = &'a WarningExample> + 'a {
        self.examples.iter().filter(move |e| &e.kind == kind)
    }

    /// Total number of warnings.
    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::WarningKind;

    #[test]
    fn every_kind_crosses_the_wire_with_its_data() {
        let mut kinds = WarningKind::TAGGED.to_vec();
        kinds.push(WarningKind::UnreadCategory("mtia_kernel".into()));
        for k in kinds {
            let (tag, data) = k.to_wire();
            assert_eq!(WarningKind::from_wire(tag, data), Some(k.clone()));
        }
        assert_eq!(WarningKind::from_wire(99, ""), None);
    }

    #[test]
    fn an_unread_category_is_named_in_its_sentence() {
        let k = WarningKind::UnreadCategory("mtia_kernel".into());
        assert_eq!(k.sentence(), "events of category 'mtia_kernel' not read: this device or event kind is not modelled");
        assert!(k.is_unread() && WarningKind::CounterEvents.is_unread() && !WarningKind::NegativeDur.is_unread());
    }
}
