//! What a method declares in its own folder and the layers below it read without knowing the method:
//! its options' values in the spec ([`MethodOpts`]), its checks of a spec ([`SPEC_CHECKS`]) and its
//! figures in the result ([`Figure`]). The option itself is a static in
//! [`super::options::METHOD_OPTIONS`]; the runner, the result and the report carry these as values.

use super::options::{RawSpec, Ty, METHOD_OPTIONS};

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A method's option as the spec holds it: on/off, a number (sizes and counts in their unit, bytes or
/// ones) or a word.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MethodVal {
    Bool(bool),
    Int(u64),
    Text(String),
}

/// The values of the methods' own options a spec gives, by key (the `--KEY` without its dashes).
/// Written into the result's `spec.method_opts` only when one is given.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MethodOpts(pub BTreeMap<String, MethodVal>);

impl MethodOpts {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Is the flag `key` on?
    pub fn flag(&self, key: &str) -> bool {
        matches!(self.0.get(key), Some(MethodVal::Bool(true)))
    }

    /// The number given for `key`, if any.
    pub fn int(&self, key: &str) -> Option<u64> {
        match self.0.get(key) {
            Some(MethodVal::Int(n)) => Some(*n),
            _ => None,
        }
    }

    /// The word given for `key`, if any.
    pub fn text(&self, key: &str) -> Option<&str> {
        match self.0.get(key) {
            Some(MethodVal::Text(t)) => Some(t),
            _ => None,
        }
    }
}

impl RawSpec {
    /// The values given of the methods' own options (whether they apply to the method was checked with
    /// every option's), each read as its kind says.
    pub(crate) fn method_opts(&self) -> Result<MethodOpts> {
        let mut opts = MethodOpts::default();
        for o in METHOD_OPTIONS.iter().filter(|o| self.has(o.key)) {
            let v = match o.ty {
                Ty::Bool { .. } => MethodVal::Bool(self.bool(o.key)?),
                Ty::Size => self
                    .size(o.key)?
                    .map_or(MethodVal::Bool(false), MethodVal::Int),
                Ty::Count => self
                    .count(o.key)?
                    .map_or(MethodVal::Bool(false), MethodVal::Int),
                Ty::Word(words) => {
                    let w = self.text(o.key)?.unwrap_or_default();
                    if !words.contains(&w.as_str()) {
                        return Err(Error::usage(
                            o.flag(),
                            format!("'{w}' is not one of {}", words.join(", ")),
                        ));
                    }
                    MethodVal::Text(w)
                }
                _ => MethodVal::Text(self.text(o.key)?.unwrap_or_default()),
            };
            opts.0.insert(o.key.to_string(), v);
        }
        Ok(opts)
    }
}

/// A method's check of a resolved spec (its options against each other and the workload) for a run on
/// this machine or another (what only this machine can tell is checked `RunsOn::Here` only), run by
/// `RawSpec::resolve` after the common checks; an error names the flag. Declared in the method's folder
/// with `#[distributed_slice(SPEC_CHECKS)]`.
#[linkme::distributed_slice]
pub static SPEC_CHECKS: [fn(&super::Spec, super::RunsOn) -> Result<()>];

/// A row of `iolab probe` a method declares for an option of its own: a run of 16 ops of `spec` (key,
/// value pairs; the probe adds a file of its own as the target) that works where the kernel has what
/// the option needs. Tests ask the probe, by `name`, before they run what needs it.
#[derive(Debug)]
pub struct Probe {
    pub name: &'static str,
    pub spec: &'static [(&'static str, &'static str)],
}

/// The methods' own probe rows (`#[distributed_slice(PROBES)]` in the method's folder).
#[linkme::distributed_slice]
pub static PROBES: [Probe];

/// One figure a method reports of its run, by name: the result's `method_figures`, which the report
/// shows as it finds them (name, value, unit and what it counts), with no code of the method's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// A short name, a key: "buffers_recycled".
    pub name: String,
    pub value: f64,
    /// Its unit ("requests", "bytes", "ns"); counts of things name the things.
    pub unit: String,
    /// What it counts, continuing "VALUE UNIT ...": "whose completion named a buffer".
    pub about: String,
}

impl Figure {
    pub fn new(name: &str, value: f64, unit: &str, about: &str) -> Figure {
        Figure {
            name: name.into(),
            value,
            unit: unit.into(),
            about: about.into(),
        }
    }
}

/// The figures of several threads' methods as one: values of the same name added (every figure a
/// method reports is a count over its thread), in the order first seen.
pub fn add_up(into: &mut Vec<Figure>, more: Vec<Figure>) {
    for f in more {
        match into.iter_mut().find(|g| g.name == f.name) {
            Some(g) => g.value += f.value,
            None => into.push(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_back_by_kind_and_serialize_plainly() {
        let mut o = MethodOpts::default();
        o.0.insert("on".into(), MethodVal::Bool(true));
        o.0.insert("n".into(), MethodVal::Int(4096));
        o.0.insert("w".into(), MethodVal::Text("ring".into()));
        assert!(o.flag("on") && !o.flag("n") && !o.flag("missing"));
        assert_eq!((o.int("n"), o.int("on")), (Some(4096), None));
        assert_eq!(o.text("w"), Some("ring"));
        let json = serde_json::to_string(&o).unwrap();
        assert_eq!(json, r#"{"n":4096,"on":true,"w":"ring"}"#);
        assert_eq!(serde_json::from_str::<MethodOpts>(&json).unwrap(), o);
    }

    /// The kinds a method's own option may take are those `RawSpec::method_opts` reads as they are meant
    /// (a duration, a list or a word-or-flag would be read as bare text).
    #[test]
    fn the_methods_options_are_of_kinds_read_as_meant() {
        for o in METHOD_OPTIONS.iter() {
            assert!(
                matches!(
                    o.ty,
                    Ty::Bool { .. } | Ty::Size | Ty::Count | Ty::Word(_) | Ty::Text
                ),
                "--{}: a method's own option of a kind method_opts reads as text",
                o.key
            );
        }
    }

    #[test]
    fn figures_of_threads_add_up_by_name() {
        let mut all = vec![Figure::new("a", 1.0, "x", "")];
        add_up(
            &mut all,
            vec![
                Figure::new("b", 2.0, "y", ""),
                Figure::new("a", 3.0, "x", ""),
            ],
        );
        assert_eq!(all.len(), 2);
        assert_eq!((all[0].value, all[1].value), (4.0, 2.0));
    }
}
