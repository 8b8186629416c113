//! Options declared once: each field of an options struct is written once, in
//! `declare_options!`, with its doc, type, default, the keyword and flag users give it, the kind
//! of value it takes and its check. Every face reads that one declaration: the CLI's flags and
//! usage, MCP's schema, the Python keywords and the page's settings ([`Declared`]).

use crate::error::{Error, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Map, Value};

/// The kind of value an option takes: how a face reads it and the type its schema gives.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// A real number.
    Number,
    /// A whole number >= 0.
    Count,
    /// A whole number.
    Integer,
    /// A share: a fraction below 1 (`0.03`), a percentage from 1 (`3`), or text with `%` (`3%`).
    Share,
    /// On or off; the flag (or `true`) turns it to the other side of its default.
    Switch,
    /// Text.
    Text,
    /// The text of a file: users give the file's path (the page gives the text itself).
    FileText,
    /// One of the names the function lists.
    Choice(fn() -> Vec<&'static str>),
    /// Set by the face itself (a file name labelling a side), not by users.
    Internal,
}

impl Kind {
    /// The kind's name, as `options` lists it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Number => "number",
            Kind::Count => "count",
            Kind::Integer => "integer",
            Kind::Share => "share",
            Kind::Switch => "switch",
            Kind::Text => "text",
            Kind::FileText => "file",
            Kind::Choice(_) => "choice",
            Kind::Internal => "internal",
        }
    }
}

/// One option as `declare_options!` declares it.
#[derive(Debug, Clone, Copy)]
pub struct Declaration {
    /// The struct's field: its key in the JSON form (the page's and the wasm API's).
    pub field: &'static str,
    /// The CLI's spellings, the first the one the usage shows (none: no face but the page sets it).
    pub flags: &'static [&'static str],
    /// What value it takes.
    pub kind: Kind,
    /// Its doc comment's lines, as written (see [`Declaration::doc`]).
    pub doc_lines: &'static str,
    /// The value placeholder the usage shows after the flag (`N`, `X`, `FILE`...).
    pub value_name: &'static str,
}

impl Declaration {
    /// The name users give it in MCP arguments and as a Python keyword: the first flag without its
    /// dashes, in snake case (`--exclude-unlinked`: `exclude_unlinked`), else the field.
    pub fn keyword(&self) -> String {
        self.flags.first().map_or_else(|| self.field.to_string(), |f| f.trim_start_matches('-').replace('-', "_"))
    }
    /// Its doc comment on one line.
    pub fn doc(&self) -> String {
        self.doc_lines.split_whitespace().collect::<Vec<_>>().join(" ")
    }
    /// Whether users set it (a face-internal or page-only option is not given by keyword).
    pub fn given_by_users(&self) -> bool {
        !self.flags.is_empty() && !matches!(self.kind, Kind::Internal)
    }
}

/// An options struct made by `declare_options!`: its declarations, and setting its fields by the
/// names users give them.
pub trait Declared: Serialize + DeserializeOwned + Default {
    /// Every option, in declaration order.
    const DECLARED: &'static [Declaration];

    /// What is wrong with field `field`'s value by its own check (`declare_options!`'s `check`),
    /// or `None`.
    fn check_field(&self, field: &str) -> Option<String>;

    /// Every field's own check, with an error naming the first option that fails it.
    fn check_fields(&self) -> Result<()> {
        match Self::DECLARED.iter().find_map(|d| self.check_field(d.field).map(|m| (d, m))) {
            Some((d, message)) => Err(Error::new(format!("{}: {message}", d.keyword()))),
            None => Ok(()),
        }
    }

    /// The defaults in the JSON form: each field's default by its name.
    fn defaults() -> Value {
        serde_json::to_value(Self::default()).unwrap_or(Value::Null)
    }

    /// The option a user names by keyword, field or CLI spelling.
    fn declaration(name: &str) -> Option<&'static Declaration> {
        Self::DECLARED.iter().find(|d| d.field == name || d.flags.contains(&name) || d.keyword() == name)
    }

    /// Sets one option from what a user gave: `text` as a command line gives it, or a JSON value
    /// (MCP, Python). A switch given is turned from its default (`--strict`, `strict: true`); a
    /// file option reads the file. An unknown name, a wrong type or a failed check is an error
    /// naming the option.
    fn set_given(&mut self, name: &str, given: Given<'_>) -> Result<()> {
        let Some(d) = Self::declaration(name).filter(|d| d.given_by_users()) else {
            let known: Vec<String> = Self::DECLARED.iter().filter(|d| d.given_by_users()).map(Declaration::keyword).collect();
            return Err(Error::new(format!("unknown option '{name}' (options: {})", known.join(", "))));
        };
        let value = json_of(d, name, given, Self::defaults()[d.field].as_bool().unwrap_or(false))?;
        let mut current = match serde_json::to_value(&*self) {
            Ok(Value::Object(m)) => m,
            _ => return Err(Error::new("options do not serialise to an object")),
        };
        current.insert(d.field.to_string(), value);
        let next: Self = serde_json::from_value(Value::Object(current)).map_err(|e| Error::new(format!("{name}: {e}")))?;
        // Kept only once it passes its check: a refused value leaves the options as they were.
        if let Some(message) = next.check_field(d.field) {
            return Err(Error::new(format!("{name}: {message}")));
        }
        *self = next;
        Ok(())
    }

    /// Sets every keyword of `given` (MCP's arguments, Python's keywords, in the order given) that
    /// these options declare ([`Declaration::keyword`]), and hands back the others, in order, for
    /// the caller's own arguments or another options struct.
    fn take_keywords(&mut self, given: Vec<(String, Value)>) -> Result<Vec<(String, Value)>> {
        let mut rest = Vec::new();
        for (k, v) in given {
            if Self::DECLARED.iter().any(|d| d.given_by_users() && d.keyword() == k) {
                self.set_given(&k, Given::Json(&v))?;
            } else {
                rest.push((k, v));
            }
        }
        Ok(rest)
    }

    /// The struct from its JSON form (the page's, the wasm API's): missing fields take defaults, an
    /// unknown field or a failed check is an error naming it.
    fn from_json(text: &str) -> Result<Self> {
        if text.trim().is_empty() {
            return Ok(Self::default());
        }
        let o: Self = serde_json::from_str(text).map_err(|e| Error::new(format!("bad options: {e}")))?;
        o.check_fields()?;
        Ok(o)
    }

    /// The options users give, as the properties of a JSON schema (MCP's tools): keyword, type,
    /// description, default and choices.
    fn schema_properties() -> Map<String, Value> {
        let defaults = Self::defaults();
        let mut props = Map::new();
        for d in Self::DECLARED.iter().filter(|d| d.given_by_users()) {
            let mut p = match d.kind {
                Kind::Number => json!({"type": "number"}),
                Kind::Count => json!({"type": "integer", "minimum": 0}),
                Kind::Integer => json!({"type": "integer"}),
                Kind::Share => json!({"type": "number", "minimum": 0}),
                Kind::Switch => json!({"type": "boolean"}),
                Kind::Text | Kind::FileText | Kind::Internal => json!({"type": "string"}),
                Kind::Choice(names) => json!({"type": "string", "enum": names()}),
            };
            let doc = match d.kind {
                Kind::FileText => format!("path of a file: {}", d.doc()),
                _ => d.doc(),
            };
            p["description"] = json!(doc);
            match (d.kind, &defaults[d.field]) {
                (Kind::Switch, _) => p["default"] = json!(false),
                (_, Value::Null) => {}
                (_, v) => p["default"] = v.clone(),
            }
            props.insert(d.keyword(), p);
        }
        props
    }

    /// Every option as a list of `{field, keyword, flags, kind, choices, default, doc}`: what the
    /// page builds its settings from and `traceprism.options()` gives Python.
    fn declarations_json() -> Value {
        let defaults = Self::defaults();
        let list: Vec<Value> = Self::DECLARED
            .iter()
            .map(|d| {
                let choices = match d.kind {
                    Kind::Choice(names) => json!(names()),
                    _ => Value::Null,
                };
                json!({"field": d.field, "keyword": d.keyword(), "flags": d.flags, "kind": d.kind.name(),
                    "choices": choices, "default": defaults[d.field], "doc": d.doc()})
            })
            .collect();
        Value::Array(list)
    }

    /// The usage's lines for these options: each flag, its value and its doc with the default.
    fn usage_lines() -> String {
        let defaults = Self::defaults();
        let mut out = String::new();
        for d in Self::DECLARED.iter().filter(|d| d.given_by_users()) {
            let head = match d.kind {
                Kind::Switch => d.flags[0].to_string(),
                _ => format!("{} {}", d.flags[0], d.value_name),
            };
            // The usage's style: lower case, no full stop.
            let mut doc = d.doc().trim_end_matches('.').to_string();
            if doc.chars().nth(1).is_some_and(char::is_lowercase) {
                doc = doc[..1].to_lowercase() + &doc[1..];
            }
            if let Kind::Choice(names) = d.kind {
                doc.push_str(&format!(" ({})", names().join("|")));
            }
            match &defaults[d.field] {
                Value::Number(n) if !matches!(d.kind, Kind::Switch) => doc.push_str(&format!(" (default {n})")),
                Value::String(s) => doc.push_str(&format!(" (default {s})")),
                _ => {}
            }
            out.push_str(&wrapped(&head, &doc));
        }
        out
    }
}

/// `head` in a 27-column gutter and `doc` wrapped at 110 columns, as the usage lays options out.
fn wrapped(head: &str, doc: &str) -> String {
    let mut out = format!("  {head:<25}");
    if head.len() > 24 {
        out.push('\n');
        out.push_str(&" ".repeat(27));
    }
    let mut col = 27;
    for word in doc.split_whitespace() {
        if col + word.len() > 110 && col > 27 {
            out.push('\n');
            out.push_str(&" ".repeat(27));
            col = 27;
        }
        if col > 27 {
            out.push(' ');
            col += 1;
        }
        out.push_str(word);
        col += word.chars().count();
    }
    out.push('\n');
    out
}

/// A value as a face gives it.
#[derive(Debug, Clone, Copy)]
pub enum Given<'a> {
    /// As typed on a command line (a switch's is empty).
    Text(&'a str),
    /// As a JSON value (MCP's arguments, a Python keyword).
    Json(&'a Value),
}

/// The JSON value of field `d` from what was given, by its kind (`default_on`: a switch's default).
fn json_of(d: &Declaration, shown: &str, given: Given<'_>, default_on: bool) -> Result<Value> {
    let not_a = |what: &str, v: &dyn std::fmt::Display| Error::new(format!("{shown}: '{v}' is not {what}"));
    Ok(match (d.kind, given) {
        (Kind::Switch, Given::Text(_)) => json!(!default_on),
        (Kind::Switch, Given::Json(v)) => {
            let on = v.as_bool().ok_or_else(|| not_a("true or false", v))?;
            json!(on != default_on)
        }
        (Kind::Number, Given::Text(t)) => json!(t.trim().parse::<f64>().map_err(|_| not_a("a number", &t))?),
        (Kind::Count | Kind::Integer, Given::Text(t)) => {
            json!(t.trim().parse::<i64>().map_err(|_| not_a("a whole number", &t))?)
        }
        (Kind::Share, Given::Text(t)) => json!(parse_share(shown, GivenShare::Text(t))?),
        (Kind::Share, Given::Json(v)) => {
            json!(parse_share(shown, GivenShare::Number(v.as_f64().ok_or_else(|| not_a("a number", v))?))?)
        }
        (Kind::FileText, given) => {
            let path = match given {
                Given::Text(t) => t.to_string(),
                Given::Json(v) => v.as_str().ok_or_else(|| not_a("a file path", v))?.to_string(),
            };
            let text = std::fs::read_to_string(&path);
            json!(text.map_err(|e| Error::new(format!("{shown}: cannot read {} file {path}: {e}", d.keyword())))?)
        }
        (Kind::Choice(names), given) => {
            let name = match given {
                Given::Text(t) => t.trim().to_string(),
                Given::Json(v) => v.as_str().ok_or_else(|| not_a("a name", v))?.to_string(),
            };
            if !names().contains(&name.as_str()) {
                return Err(Error::new(format!("{shown}: unknown value '{name}' (one of: {})", names().join(", "))));
            }
            json!(name)
        }
        (_, Given::Text(t)) => json!(t),
        (_, Given::Json(v)) => v.clone(),
    })
}

/// A share as a face gave it.
#[derive(Debug, Clone, Copy)]
pub enum GivenShare<'a> {
    /// Text, a `%` suffix meaning percent.
    Text(&'a str),
    /// A number: a fraction below 1, a percentage from 1.
    Number(f64),
}

/// A share given as a fraction (`0.03`) or a percentage (`3`, or any value when `percent`: it was
/// written `3%`): the fraction, when it lies in [0, 1).
pub fn fraction(x: f64, percent: bool) -> Option<f64> {
    let x = if percent || x >= 1.0 { x / 100.0 } else { x };
    (0.0..1.0).contains(&x).then_some(x)
}

/// A share checked: a number in [0, 1) once read as a fraction or a percentage; else an error
/// naming `key`.
pub fn parse_share(key: &str, given: GivenShare<'_>) -> Result<f64> {
    let (x, percent, shown) = match given {
        GivenShare::Text(v) => {
            let (num, pct) = v.strip_suffix('%').map_or((v, false), |n| (n, true));
            let x: f64 = num.trim().parse().map_err(|_| Error::new(format!("{key}: '{v}' is not a number")))?;
            (x, pct, v.to_string())
        }
        GivenShare::Number(x) => (x, false, x.to_string()),
    };
    fraction(x, percent).ok_or_else(|| Error::new(format!("{key}: {shown} is out of range")))
}

/// Declares an options struct once: each field with its doc comment, type, default, kind, CLI
/// spellings, the usage's value name and optionally a check (`check |v| ... => "message"`).
/// Makes the struct, its `Default` and its [`Declared`] implementation.
macro_rules! declare_options {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[doc = $doc:literal])*
                $field:ident : $ty:ty = $default:expr, $kind:expr, [$($flag:literal),*] $value_name:literal
                $(, check $check:expr => $message:literal)? ;
            )*
        }
    ) => {
        $(#[$meta])*
        pub struct $name {
            $( $(#[doc = $doc])* pub $field: $ty, )*
        }
        impl Default for $name {
            fn default() -> Self {
                $name { $( $field: $default, )* }
            }
        }
        impl $crate::analysis::options::Declared for $name {
            const DECLARED: &'static [$crate::analysis::options::Declaration] = &[
                $( $crate::analysis::options::Declaration {
                    field: stringify!($field),
                    flags: &[$($flag),*],
                    kind: $kind,
                    doc_lines: concat!($($doc, "\n"),*),
                    value_name: $value_name,
                }, )*
            ];
            fn check_field(&self, field: &str) -> Option<String> {
                $( $(
                    if field == stringify!($field) {
                        let check: fn(&$ty) -> bool = $check;
                        return (!check(&self.$field)).then(|| format!("{} (got {:?})", $message, self.$field));
                    }
                )? )*
                let _ = field;
                None
            }
        }
    };
}

pub(crate) use declare_options;
