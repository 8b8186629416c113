//! Kernel categories: every GPU row (kernel, memcpy, memset) gets a category from one ordered
//! rules table (`rules/categories.toml`, user rules first), then a sequence pass relabels unfused
//! eager chains (RMSNorm as pow → mean → add → rsqrt → mul).
//!
//! Cost: the rule patterns run once per distinct kernel name (one `RegexSet` pass); conditions on
//! the op, its shapes and the launcher run once per distinct (name, op name, input dims, launcher,
//! kind). Only rules with an `under` condition (enclosing ranges) are looked at per row.

use super::per_name::PerName;
use crate::analysis::options::Options;
use crate::error::Result;
use crate::model::{FastMap, GpuKind, NameId, Trace, NONE, NO_NAME};
use crate::rules::categories::{Rule, RuleSet, SequenceDef};

/// A category and its coarse family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Category {
    /// The category's name (`GEMM`, `FlashAttention`...).
    pub name: String,
    /// The family it belongs to (`GEMM`, `Attention`, `Communication`...).
    pub family: String,
}

/// Category of every GPU row of the trace.
#[derive(Debug, Clone, Default)]
pub struct KernelCategories {
    /// All categories, indexed by category id.
    pub categories: Vec<Category>,
    /// Category id of each GPU row (`trace.gpu`).
    pub of_row: Vec<u16>,
    /// Which rule decided each row (index into `rules`).
    pub rule_of_row: Vec<u16>,
    /// Rule descriptions, indexed by rule id: the table's rules in order, then the sequences, then
    /// the default ("no rule matched").
    pub rules: Vec<String>,
}

impl KernelCategories {
    /// Per category id, whether it is a collective's (family `Communication`): decided once per
    /// category, read per row.
    pub fn communication_flags(&self) -> Vec<bool> {
        self.categories.iter().map(|c| c.family == "Communication").collect()
    }
    /// Category name of GPU row `i`.
    pub fn name(&self, i: usize) -> &str {
        &self.categories[self.of_row[i] as usize].name
    }
    /// Family of GPU row `i` (GEMM, Attention, Norm, Activation, MoE, Communication, Memory, Elementwise/Reduce, Other).
    pub fn family(&self, i: usize) -> &str {
        &self.categories[self.of_row[i] as usize].family
    }
    /// True if a rule named row `i` (its family is not `Other`).
    pub fn is_named(&self, i: usize) -> bool {
        self.family(i) != "Other"
    }
    /// True if row `i` is a collective / communication kernel.
    pub fn is_communication(&self, i: usize) -> bool {
        self.family(i) == "Communication"
    }
    /// The rule that decided row `i`.
    pub fn rule(&self, i: usize) -> &str {
        &self.rules[self.rule_of_row[i] as usize]
    }
    /// Id of a category by name.
    pub fn id(&self, name: &str) -> Option<u16> {
        self.categories.iter().position(|c| c.name == name).map(|i| i as u16)
    }
    /// Family of a category id.
    pub fn family_of(&self, id: u16) -> &str {
        &self.categories[id as usize].family
    }
}

/// Categorises every GPU row with the built-in rules and `options.category_rules`.
/// Share of kernels a category rule must name before their names can show that a kind of kernel
/// is absent ([`names_known`]).
pub const MIN_NAMED_SHARE: f64 = 0.5;

/// Whether the rules know the names of most of `of` kernels, `named` of which a rule named: only
/// then can the absence of a kind of kernel (attention, a token mixer) say anything; a stream of
/// names no rule knows is read by its structure.
pub fn names_known(named: usize, of: usize) -> bool {
    named as f64 >= MIN_NAMED_SHARE * of as f64
}

/// Sorts every kernel into a category: the user's rules (`Options::category_rules`) first, then
/// the built-in table.
pub fn categorize(trace: &Trace, options: &Options) -> Result<KernelCategories> {
    let rules = RuleSet::load(options.category_rules.as_deref())?;
    Ok(Classifier::new(&rules)?.classify(trace))
}

/// A compiled rules table, reusable across traces.
pub struct Classifier<'r> {
    set: &'r RuleSet,
    /// Whether any rule looks at `op_dims` / `launcher` (keeps cache keys small when not).
    uses_dims: bool,
    uses_launcher: bool,
}

/// Result of looking at the per-key conditions.
#[derive(Clone, Copy)]
enum Decision {
    /// This rule (index into `RuleSet::rules`) or the default when `None`.
    Rule(Option<u16>),
    /// An `under` rule is a candidate: decide per row.
    PerRow,
}

/// Per-row facts the conditions look at.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    name: NameId,
    op_name: NameId,
    dims: NameId,
    launcher: NameId,
    kind: u8,
}

impl<'r> Classifier<'r> {
    /// Prepares `set` for classifying (the regexes are already compiled by `RuleSet::load`).
    pub fn new(set: &'r RuleSet) -> Result<Classifier<'r>> {
        let uses_dims = set.rules.iter().any(|r| r.op_dims.is_some());
        let uses_launcher = set.rules.iter().any(|r| r.launcher.is_some());
        Ok(Classifier { set, uses_dims, uses_launcher })
    }

    /// Candidate rules for a kernel name, in table order: rules whose pattern matches or that
    /// have none, up to the first one with no other condition (it always wins). Each pattern is
    /// its own regex (literal prefilters make misses cheap), tried once per distinct name.
    fn candidates(&self, name: &str) -> Vec<u16> {
        let bytes = name.as_bytes();
        let mut out = Vec::new();
        for (i, rule) in self.set.rules.iter().enumerate() {
            if rule.pattern.as_ref().is_some_and(|p| !p.is_match(bytes)) {
                continue;
            }
            out.push(i as u16);
            if is_unconditional(rule) {
                break;
            }
        }
        out
    }

    /// Decides every GPU row of `trace`.
    pub fn classify(&self, trace: &Trace) -> KernelCategories {
        let g = &trace.gpu;
        let n = g.len();
        let default_rule = (self.set.rules.len() + self.set.sequences.len()) as u16;
        let mut of_row = vec![self.set.other; n];
        let mut rule_of_row = vec![default_rule; n];
        // Candidate rules of every kernel name (the regex work), once per distinct name.
        let mut used = vec![false; trace.names.len()];
        for &name in &g.name {
            used[name as usize] = true;
        }
        let mut by_name: Vec<Box<[u16]>> = vec![Box::default(); trace.names.len()];
        for (name, _) in used.iter().enumerate().filter(|(_, &u)| u) {
            by_name[name] = self.candidates(trace.name(name as NameId)).into_boxed_slice();
        }
        // Then every row, in two halves on two threads where that pays (each half keeps its own
        // decisions per key; a decision depends on the key only), else in one run.
        let half = if crate::support::threads::two_threads(n) { n / 2 } else { 0 };
        let (of_first, of_second) = of_row.split_at_mut(half);
        let (rule_first, rule_second) = rule_of_row.split_at_mut(half);
        let by_name = &by_name;
        crate::support::threads::both(
            n,
            || self.classify_rows(trace, half, by_name, of_second, rule_second),
            || self.classify_rows(trace, 0, by_name, of_first, rule_first),
        );
        for (s, seq) in self.set.sequences.iter().enumerate() {
            apply_sequence(trace, seq, (self.set.rules.len() + s) as u16, &mut of_row, &mut rule_of_row);
        }
        let mut rules: Vec<String> = self.set.rules.iter().map(|r| r.describe(&self.set.categories)).collect();
        rules.extend(self.set.sequences.iter().map(|s| s.describe(&self.set.categories)));
        rules.push("default: no rule matched -> Other".to_string());
        KernelCategories {
            categories: self.set.categories.iter().map(|c| Category { name: c.name.clone(), family: c.family.clone() }).collect(),
            of_row,
            rule_of_row,
            rules,
        }
    }

    /// Fills the category and rule of the rows from `first` on (as many as `of_row` holds), from
    /// the candidate rules of each kernel name.
    fn classify_rows(&self, trace: &Trace, first: usize, by_name: &[Box<[u16]>], of_row: &mut [u16], rule_of_row: &mut [u16]) {
        let g = &trace.gpu;
        let mut by_key: FastMap<Key, Decision> = FastMap::default();
        for (k, (category, rule_slot)) in of_row.iter_mut().zip(rule_of_row.iter_mut()).enumerate() {
            let i = first + k;
            let op = effective_op(trace, i);
            let key = Key {
                name: g.name[i],
                op_name: if op != NONE { trace.ops.name[op as usize] } else { NO_NAME },
                dims: if self.uses_dims && op != NONE { trace.ops.input_dims[op as usize] } else { NO_NAME },
                launcher: if self.uses_launcher && g.launch[i] != NONE {
                    trace.launches.name[g.launch[i] as usize]
                } else {
                    NO_NAME
                },
                kind: g.kind[i] as u8,
            };
            let cands = &by_name[key.name as usize];
            let decision = *by_key.entry(key).or_insert_with(|| self.decide(trace, &key, g.kind[i], cands));
            let rule = match decision {
                Decision::Rule(r) => r,
                Decision::PerRow => self.decide_row(trace, &key, g.kind[i], op, cands),
            };
            if let Some(r) = rule {
                *category = self.set.rules[r as usize].category;
                *rule_slot = r;
            }
        }
    }

    /// First candidate whose per-key conditions hold; `PerRow` if an `under` rule is reached first.
    fn decide(&self, trace: &Trace, key: &Key, kind: GpuKind, cands: &[u16]) -> Decision {
        for &r in cands {
            let rule = &self.set.rules[r as usize];
            if !self.key_conditions_hold(trace, rule, key, kind) {
                continue;
            }
            if rule.under.is_some() {
                return Decision::PerRow;
            }
            return Decision::Rule(Some(r));
        }
        Decision::Rule(None)
    }

    fn decide_row(&self, trace: &Trace, key: &Key, kind: GpuKind, op: u32, cands: &[u16]) -> Option<u16> {
        for &r in cands {
            let rule = &self.set.rules[r as usize];
            if !self.key_conditions_hold(trace, rule, key, kind) {
                continue;
            }
            if let Some(under) = &rule.under {
                if !enclosing_matches(trace, op, under) {
                    continue;
                }
            }
            return Some(r);
        }
        None
    }

    fn key_conditions_hold(&self, trace: &Trace, rule: &Rule, key: &Key, kind: GpuKind) -> bool {
        let text = |id: NameId| (id != NO_NAME).then(|| trace.name(id));
        conditions_hold(rule, kind, text(key.op_name), text(key.dims), text(key.launcher))
    }

    /// Decides one event described by text: its kernel name, kind, launching op name and that
    /// op's `Input Dims` text, launcher name, and the names of the enclosing CPU ranges (innermost
    /// first, the op itself included). Returns the index of the deciding rule in `RuleSet::rules`
    /// (`None` = no rule, i.e. `Other`). Sequences are not applied. For tests and rule editors.
    pub fn decide_text(
        &self,
        name: &str,
        kind: GpuKind,
        op: Option<&str>,
        dims: Option<&str>,
        launcher: Option<&str>,
        enclosing: &[&str],
    ) -> Option<usize> {
        for r in self.candidates(name) {
            let rule = &self.set.rules[r as usize];
            if !conditions_hold(rule, kind, op, dims, launcher) {
                continue;
            }
            if let Some(under) = &rule.under {
                if !enclosing.iter().chain(op.iter()).any(|n| under.is_match(n.as_bytes())) {
                    continue;
                }
            }
            return Some(r as usize);
        }
        None
    }
}

fn conditions_hold(rule: &Rule, kind: GpuKind, op: Option<&str>, dims: Option<&str>, launcher: Option<&str>) -> bool {
    if rule.kind.is_some_and(|k| k != kind) {
        return false;
    }
    let holds = |re: &Option<regex::bytes::Regex>, text: Option<&str>| match re {
        None => true,
        Some(re) => text.is_some_and(|t| re.is_match(t.as_bytes())),
    };
    holds(&rule.op, op) && holds(&rule.op_dims, dims) && holds(&rule.launcher, launcher)
}

fn is_unconditional(rule: &Rule) -> bool {
    rule.kind.is_none() && rule.op.is_none() && rule.op_dims.is_none() && rule.under.is_none() && rule.launcher.is_none()
}

/// The CPU op that launched row `i`, or `NONE`. Graph replays have no op of their own: the op
/// around the graph launch says nothing about each replayed kernel.
pub fn effective_op(trace: &Trace, i: usize) -> u32 {
    let l = trace.gpu.launch[i];
    if l != NONE && trace.launches.is_graph[l as usize] {
        return NONE;
    }
    trace.gpu.cpu_op[i]
}

/// True if `op` or any range enclosing it has a name matching `re`.
fn enclosing_matches(trace: &Trace, mut op: u32, re: &regex::bytes::Regex) -> bool {
    let mut guard = 0;
    while op != NONE && guard < 256 {
        if re.is_match(trace.name(trace.ops.name[op as usize]).as_bytes()) {
            return true;
        }
        op = trace.ops.parent[op as usize];
        guard += 1;
    }
    false
}

/// Relabels chains of adjacent kernels on one stream that match `seq`.
fn apply_sequence(trace: &Trace, seq: &SequenceDef, rule_id: u16, of_row: &mut [u16], rule_of_row: &mut [u16]) {
    let g = &trace.gpu;
    // Step of each kernel row, or NO_STEP: the op's step if its name matches one (it names the
    // operation exactly), else the kernel name's; each decided once per distinct name.
    const NO_STEP: u8 = u8::MAX;
    let step_of_text = |id: NameId| {
        let text = trace.name(id).as_bytes();
        seq.step_regex.iter().position(|re| re.is_match(text)).map_or(NO_STEP, |p| p as u8)
    };
    let names = trace.names.len();
    let (mut by_op, mut by_kernel) = (PerName::new(names), PerName::new(names));
    let mut step = vec![NO_STEP; g.len()];
    let mut any = false;
    for i in 0..g.len() {
        if g.kind[i] != GpuKind::Kernel || !seq.relabel.contains(&of_row[i]) {
            continue;
        }
        let op = effective_op(trace, i);
        let mut s = NO_STEP;
        if op != NONE {
            let op_name = trace.ops.name[op as usize];
            if op_name != NO_NAME {
                s = *by_op.get_or_insert_with(op_name, || step_of_text(op_name));
            }
        }
        if s == NO_STEP {
            s = *by_kernel.get_or_insert_with(g.name[i], || step_of_text(g.name[i]));
        }
        step[i] = s;
        any |= s != NO_STEP;
    }
    if !any {
        return;
    }
    // Kernel rows per (device, stream), in time order; only streams with a step can match.
    let mut stream_of: FastMap<(i32, i32), usize> = FastMap::default();
    let mut streams: Vec<(Vec<u32>, bool)> = Vec::new();
    let mut last: Option<((i32, i32), usize)> = None;
    for (i, &s) in step.iter().enumerate() {
        if g.kind[i] != GpuKind::Kernel {
            continue;
        }
        let key = (g.device[i], g.stream[i]);
        let at = match last {
            Some((k, at)) if k == key => at,
            _ => {
                let next = streams.len();
                let at = *stream_of.entry(key).or_insert(next);
                if at == next {
                    streams.push((Vec::new(), false));
                }
                last = Some((key, at));
                at
            }
        };
        streams[at].0.push(i as u32);
        streams[at].1 |= s != NO_STEP;
    }
    let is = |row: u32, want: usize| step[row as usize] as usize == want;
    for (rows, _) in streams.iter_mut().filter(|(_, has_step)| *has_step) {
        // Rows were pushed in row order: (time, row) is the stable order by time.
        crate::analysis::rows::sort_by_time(&g.ts, rows);
        let mut k = 0;
        while k + seq.steps.len() <= rows.len() {
            if !seq.steps.iter().enumerate().all(|(j, &s)| is(rows[k + j], s)) {
                k += 1;
                continue;
            }
            let mut first = k;
            for &s in seq.lead.iter().rev() {
                if first > 0 && is(rows[first - 1], s) {
                    first -= 1;
                }
            }
            let mut end = k + seq.steps.len();
            for &s in &seq.trail {
                if end < rows.len() && is(rows[end], s) {
                    end += 1;
                }
            }
            for &r in &rows[first..end] {
                of_row[r as usize] = seq.category;
                rule_of_row[r as usize] = rule_id;
            }
            k = end;
        }
    }
}

/// Categories present in `cats`, with their GPU time (ns) and row count, over the rows `rows`.
pub fn time_by_category(trace: &Trace, cats: &KernelCategories, rows: impl Iterator<Item = usize>) -> Vec<(u16, u64, i64)> {
    let mut acc = vec![(0u64, 0i64); cats.categories.len()];
    for i in rows {
        let c = cats.of_row[i] as usize;
        acc[c].0 += 1;
        acc[c].1 = acc[c].1.saturating_add(trace.gpu.dur[i]);
    }
    acc.into_iter().enumerate().filter(|(_, (n, _))| *n > 0).map(|(c, (n, t))| (c as u16, n, t)).collect()
}
