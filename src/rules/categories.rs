//! The kernel-category rules table: parsing and validation of `categories.toml` (built in) and of
//! user rules in the same format. Matching lives in `analysis::categories`.
//!
//! Every problem is an [`Error`] that names the rule (its source, index and pattern), so a user
//! can find the line to fix.

use crate::error::{Error, Result};
use crate::model::GpuKind;
use regex::bytes::{Regex, RegexBuilder};
use std::sync::OnceLock;
use toml::Value;

/// The built-in table, embedded at build time.
pub const BUILTIN: &str = include_str!("categories.toml");

/// Fields a `[[rule]]` may have.
pub const RULE_FIELDS: &[&str] = &["pattern", "category", "kind", "op", "op_dims", "under", "launcher", "note"];
const CATEGORY_FIELDS: &[&str] = &["name", "family", "about"];
const SEQUENCE_FIELDS: &[&str] = &["category", "steps", "lead", "trail", "relabel", "match"];
const TOP_LEVEL: &[&str] = &["category", "rule", "sequence"];
/// Families a category may belong to.
pub const FAMILIES: &[&str] =
    &["GEMM", "Attention", "Norm", "Activation", "MoE", "Communication", "Memory", "Elementwise/Reduce", "Other"];

/// Where a rule came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The user's rules file (`Options::category_rules`).
    User,
    /// The embedded `categories.toml`.
    Builtin,
}

impl Origin {
    /// "user" or "builtin".
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::User => "user",
            Origin::Builtin => "builtin",
        }
    }
}

/// A category with its coarse family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategoryDef {
    /// The category's name (`GEMM-cuBLAS`).
    pub name: String,
    /// Its coarse family (`GEMM`).
    pub family: String,
    /// What the category holds, for people.
    pub about: String,
}

/// One ordered rule: every present condition must hold.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Built in, or from the user's file.
    pub origin: Origin,
    /// Index within its source file (0-based).
    pub index: usize,
    /// Index into [`RuleSet::categories`].
    pub category: u16,
    /// Regex on the kernel name.
    pub pattern: Option<Regex>,
    /// Only GPU events of this kind.
    pub kind: Option<GpuKind>,
    /// Regex on the launching CPU op's name.
    pub op: Option<Regex>,
    /// Regex on the launching op's `Input Dims`.
    pub op_dims: Option<Regex>,
    /// Regex on an enclosing annotation or op.
    pub under: Option<Regex>,
    /// Regex on the runtime call that launched it.
    pub launcher: Option<Regex>,
    /// Why the rule exists.
    pub note: String,
}

impl Rule {
    /// One-line description: `builtin rule 12: pattern /^nvjet_/ -> GEMM-cuBLAS`.
    pub fn describe(&self, categories: &[CategoryDef]) -> String {
        let mut s = format!("{} rule {}:", self.origin.as_str(), self.index);
        let parts: [(&str, Option<&Regex>); 5] = [
            ("pattern", self.pattern.as_ref()),
            ("op", self.op.as_ref()),
            ("op_dims", self.op_dims.as_ref()),
            ("under", self.under.as_ref()),
            ("launcher", self.launcher.as_ref()),
        ];
        if let Some(k) = self.kind {
            s.push_str(&format!(" kind {}", k.as_str()));
        }
        for (field, re) in parts {
            if let Some(re) = re {
                s.push_str(&format!(" {field} /{}/", re.as_str()));
            }
        }
        s.push_str(&format!(" -> {}", categories[self.category as usize].name));
        s
    }
}

/// A chain of adjacent kernels on one stream that together form one operation (unfused RMSNorm).
#[derive(Debug, Clone)]
pub struct SequenceDef {
    /// Built in, or from the user's file.
    pub origin: Origin,
    /// Index within its source file.
    pub index: usize,
    /// Index into [`RuleSet::categories`].
    pub category: u16,
    /// Required steps, in order (indices into `step_names`).
    pub steps: Vec<usize>,
    /// Optional steps just before the first required step (in order).
    pub lead: Vec<usize>,
    /// Optional steps just after the last required step (in order).
    pub trail: Vec<usize>,
    /// Categories a row may carry to be relabelled.
    pub relabel: Vec<u16>,
    /// Step names and their regexes (tested on the kernel name and on the op name).
    pub step_names: Vec<String>,
    /// Each step's regex, parallel to `step_names`.
    pub step_regex: Vec<Regex>,
}

impl SequenceDef {
    /// One-line description: `builtin sequence 0: pow > mean > ... -> Norm-RMS`.
    pub fn describe(&self, categories: &[CategoryDef]) -> String {
        let names: Vec<&str> = self.steps.iter().map(|&s| self.step_names[s].as_str()).collect();
        format!(
            "{} sequence {}: {} -> {}",
            self.origin.as_str(),
            self.index,
            names.join(" > "),
            categories[self.category as usize].name
        )
    }
}

/// Categories, rules (user first) and sequences, validated and compiled.
#[derive(Debug, Clone)]
pub struct RuleSet {
    /// Every category, built-in and the user's.
    pub categories: Vec<CategoryDef>,
    /// Every rule, the user's first.
    pub rules: Vec<Rule>,
    /// Every kernel sequence.
    pub sequences: Vec<SequenceDef>,
    /// Id of the `Other` category (the default).
    pub other: u16,
}

impl RuleSet {
    /// The built-in table plus optional user rules (TOML text, same format), which go first.
    /// The built-in part is compiled once per process and shared (its regexes are the main cost).
    pub fn load(user: Option<&str>) -> Result<RuleSet> {
        static BUILTIN_SET: OnceLock<Result<RuleSet>> = OnceLock::new();
        let builtin = BUILTIN_SET.get_or_init(RuleSet::compile_builtin).clone()?;
        match user {
            None => Ok(builtin),
            Some(text) => builtin.with_user_rules(&parse_toml(text, Origin::User)?),
        }
    }

    fn compile_builtin() -> Result<RuleSet> {
        let doc = parse_toml(BUILTIN, Origin::Builtin)?;
        let mut categories: Vec<CategoryDef> = Vec::new();
        for (i, c) in doc.categories.iter().enumerate() {
            let def = read_category(c, Origin::Builtin, i)?;
            if categories.iter().any(|k| k.name == def.name) {
                return Err(Error::new(format!("builtin category {i}: '{}' declared twice", def.name)));
            }
            categories.push(def);
        }
        if !categories.iter().any(|c| c.name == "Other") {
            categories.push(CategoryDef { name: "Other".into(), family: "Other".into(), about: "nothing matched".into() });
        }
        let other = categories.iter().position(|c| c.name == "Other").unwrap_or(0) as u16;
        let rules = doc
            .rules
            .iter()
            .enumerate()
            .map(|(i, r)| read_rule(r, Origin::Builtin, i, &categories))
            .collect::<Result<Vec<_>>>()?;
        let sequences = doc
            .sequences
            .iter()
            .enumerate()
            .map(|(i, s)| read_sequence(s, Origin::Builtin, i, &categories))
            .collect::<Result<Vec<_>>>()?;
        Ok(RuleSet { categories, rules, sequences, other })
    }

    /// This set with user categories added (or redefined) and user rules and sequences first.
    fn with_user_rules(mut self, doc: &Doc) -> Result<RuleSet> {
        for (i, c) in doc.categories.iter().enumerate() {
            let def = read_category(c, Origin::User, i)?;
            match self.categories.iter().position(|k| k.name == def.name) {
                Some(at) => self.categories[at] = def,
                None => self.categories.push(def),
            }
        }
        if self.categories.len() > u16::MAX as usize {
            return Err(Error::new("too many categories"));
        }
        let mut rules = doc
            .rules
            .iter()
            .enumerate()
            .map(|(i, r)| read_rule(r, Origin::User, i, &self.categories))
            .collect::<Result<Vec<_>>>()?;
        let mut sequences = doc
            .sequences
            .iter()
            .enumerate()
            .map(|(i, s)| read_sequence(s, Origin::User, i, &self.categories))
            .collect::<Result<Vec<_>>>()?;
        rules.append(&mut self.rules);
        sequences.append(&mut self.sequences);
        if rules.len() + sequences.len() + 1 > u16::MAX as usize {
            return Err(Error::new("too many rules"));
        }
        Ok(RuleSet { rules, sequences, ..self })
    }

    /// Id of a category by name.
    pub fn category_id(&self, name: &str) -> Option<u16> {
        self.categories.iter().position(|c| c.name == name).map(|i| i as u16)
    }
}

struct Doc {
    categories: Vec<Value>,
    rules: Vec<Value>,
    sequences: Vec<Value>,
}

fn parse_toml(text: &str, origin: Origin) -> Result<Doc> {
    let src = origin.as_str();
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| Error::new(format!("{src} rules: not valid TOML: {}", e.to_string().trim())))?;
    for key in table.keys() {
        if !TOP_LEVEL.contains(&key.as_str()) {
            return Err(Error::new(format!(
                "{src} rules: unknown top-level key '{key}' (expected [[rule]], [[category]] or [[sequence]])"
            )));
        }
    }
    let list = |key: &str| -> Result<Vec<Value>> {
        match table.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(a)) => Ok(a.clone()),
            Some(_) => Err(Error::new(format!("{src} rules: '{key}' must be an array of tables ([[{key}]])"))),
        }
    };
    Ok(Doc { categories: list("category")?, rules: list("rule")?, sequences: list("sequence")? })
}

fn as_table<'a>(v: &'a Value, what: &str) -> Result<&'a toml::Table> {
    v.as_table().ok_or_else(|| Error::new(format!("{what}: must be a table")))
}

fn check_fields(t: &toml::Table, allowed: &[&str], what: &str) -> Result<()> {
    for key in t.keys() {
        if !allowed.contains(&key.as_str()) {
            return Err(Error::new(format!("{what}: unknown field '{key}' (allowed: {})", allowed.join(", "))));
        }
    }
    Ok(())
}

fn string_field(t: &toml::Table, key: &str, what: &str) -> Result<Option<String>> {
    match t.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(Error::new(format!("{what}: field '{key}' must be a string"))),
    }
}

fn string_list(t: &toml::Table, key: &str, what: &str) -> Result<Vec<String>> {
    match t.get(key) {
        None => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| v.as_str().map(str::to_string).ok_or_else(|| Error::new(format!("{what}: '{key}' must list strings"))))
            .collect(),
        Some(_) => Err(Error::new(format!("{what}: field '{key}' must be an array of strings"))),
    }
}

/// Compiles a rule regex: byte-oriented, ASCII classes (kernel names are ASCII; this keeps the
/// automata small and fast).
pub fn compile(pattern: &str) -> std::result::Result<Regex, regex::Error> {
    RegexBuilder::new(pattern).unicode(false).size_limit(1 << 24).build()
}

fn regex_field(t: &toml::Table, key: &str, what: &str) -> Result<Option<Regex>> {
    match string_field(t, key, what)? {
        None => Ok(None),
        Some(p) if p.is_empty() => Err(Error::new(format!("{what}: field '{key}' is empty"))),
        Some(p) => compile(&p).map(Some).map_err(|e| Error::new(format!("{what}: bad regex in '{key}': {e}"))),
    }
}

fn read_category(v: &Value, origin: Origin, i: usize) -> Result<CategoryDef> {
    let what = format!("{} category {i}", origin.as_str());
    let t = as_table(v, &what)?;
    check_fields(t, CATEGORY_FIELDS, &what)?;
    let name = string_field(t, "name", &what)?.ok_or_else(|| Error::new(format!("{what}: missing 'name'")))?;
    let what = format!("{what} ('{name}')");
    let family = string_field(t, "family", &what)?.ok_or_else(|| Error::new(format!("{what}: missing 'family'")))?;
    if !FAMILIES.contains(&family.as_str()) {
        return Err(Error::new(format!("{what}: unknown family '{family}' (one of: {})", FAMILIES.join(", "))));
    }
    Ok(CategoryDef { name, family, about: string_field(t, "about", &what)?.unwrap_or_default() })
}

fn rule_label(t: &toml::Table, origin: Origin, i: usize) -> String {
    let mut label = format!("{} rule {i}", origin.as_str());
    for key in ["pattern", "op", "kind"] {
        if let Some(Value::String(p)) = t.get(key) {
            label.push_str(&format!(" ({key} '{p}')"));
            break;
        }
    }
    label
}

fn category_ref(name: &str, categories: &[CategoryDef], what: &str) -> Result<u16> {
    categories.iter().position(|c| c.name == name).map(|i| i as u16).ok_or_else(|| {
        Error::new(format!("{what}: unknown category '{name}' (declare it with [[category]] name/family, or use a built-in one)"))
    })
}

fn read_rule(v: &Value, origin: Origin, i: usize, categories: &[CategoryDef]) -> Result<Rule> {
    let t = as_table(v, &format!("{} rule {i}", origin.as_str()))?;
    let what = rule_label(t, origin, i);
    check_fields(t, RULE_FIELDS, &what)?;
    let category = string_field(t, "category", &what)?.ok_or_else(|| Error::new(format!("{what}: missing 'category'")))?;
    let category = category_ref(&category, categories, &what)?;
    let kind = match string_field(t, "kind", &what)?.as_deref() {
        None => None,
        Some("kernel") => Some(GpuKind::Kernel),
        Some("gpu_memcpy") => Some(GpuKind::Memcpy),
        Some("gpu_memset") => Some(GpuKind::Memset),
        Some(other) => {
            return Err(Error::new(format!("{what}: unknown kind '{other}' (kernel, gpu_memcpy or gpu_memset)")));
        }
    };
    let rule = Rule {
        origin,
        index: i,
        category,
        pattern: regex_field(t, "pattern", &what)?,
        kind,
        op: regex_field(t, "op", &what)?,
        op_dims: regex_field(t, "op_dims", &what)?,
        under: regex_field(t, "under", &what)?,
        launcher: regex_field(t, "launcher", &what)?,
        note: string_field(t, "note", &what)?.unwrap_or_default(),
    };
    let has_condition = rule.pattern.is_some()
        || rule.kind.is_some()
        || rule.op.is_some()
        || rule.op_dims.is_some()
        || rule.under.is_some()
        || rule.launcher.is_some();
    if !has_condition {
        return Err(Error::new(format!("{what}: needs a pattern or a condition (kind, op, op_dims, under, launcher)")));
    }
    Ok(rule)
}

fn read_sequence(v: &Value, origin: Origin, i: usize, categories: &[CategoryDef]) -> Result<SequenceDef> {
    let what = format!("{} sequence {i}", origin.as_str());
    let t = as_table(v, &what)?;
    check_fields(t, SEQUENCE_FIELDS, &what)?;
    let category = string_field(t, "category", &what)?.ok_or_else(|| Error::new(format!("{what}: missing 'category'")))?;
    let category = category_ref(&category, categories, &what)?;
    let matchers = match t.get("match") {
        Some(Value::Table(m)) => m,
        _ => return Err(Error::new(format!("{what}: missing [sequence.match] table (step name -> regex)"))),
    };
    let mut step_names = Vec::new();
    let mut step_regex = Vec::new();
    for (name, pattern) in matchers {
        let p = pattern.as_str().ok_or_else(|| Error::new(format!("{what}: match '{name}' must be a regex string")))?;
        let re = compile(p).map_err(|e| Error::new(format!("{what}: bad regex for step '{name}': {e}")))?;
        step_names.push(name.clone());
        step_regex.push(re);
    }
    let resolve = |key: &str| -> Result<Vec<usize>> {
        string_list(t, key, &what)?
            .iter()
            .map(|s| {
                step_names
                    .iter()
                    .position(|n| n == s)
                    .ok_or_else(|| Error::new(format!("{what}: step '{s}' in '{key}' has no regex in [sequence.match]")))
            })
            .collect()
    };
    let steps = resolve("steps")?;
    if steps.len() < 2 {
        return Err(Error::new(format!("{what}: 'steps' needs at least two steps")));
    }
    let lead = resolve("lead")?;
    let trail = resolve("trail")?;
    let relabel =
        string_list(t, "relabel", &what)?.iter().map(|c| category_ref(c, categories, &what)).collect::<Result<Vec<u16>>>()?;
    Ok(SequenceDef { origin, index: i, category, steps, lead, trail, relabel, step_names, step_regex })
}
