//! Where the figures of an answer or a finding come from: each figure a sentence used, the 1-based line
//! of the record file holding its record (a survey: the index of its run), and the dot path of its field
//! in that line's JSON (`result.ns_per_op`). A reader checks a sentence against its records with them, and the suites' test
//! checks every one.
//!
//! The figures are taken through `Row::cited` (`findings_compare::cited`), which notes each one while
//! [`collect`] runs an answer or a finding rule; the figures of a ratio are its two sides.

use serde::{Deserialize, Serialize};
use std::cell::RefCell;

/// One figure a sentence used: `value` before rounding, from field `field` of the record on `line` of a
/// record file, or of run `run` (an index into `runs`) of a survey's document; with neither, of the
/// answer itself (`seed.NAME`: the seed's figure, as the suite file publishes it).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct Cite {
    pub value: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<usize>,
    pub field: String,
}

/// Where a row's record is kept, for its cites.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Source {
    /// Nowhere a reader can look (a row made in a test, or from a result alone): no cites.
    #[default]
    Nowhere,
    /// The 1-based line of a record file.
    Line(usize),
    /// The index of a run in a survey's `runs`.
    Run(usize),
}

impl Source {
    /// The cite of `value`, field `field` of the record kept here (none for [`Source::Nowhere`]).
    pub fn cite(self, value: f64, field: String) -> Option<Cite> {
        let (line, run) = match self {
            Source::Nowhere => return None,
            Source::Line(0) => return None,
            Source::Line(n) => (Some(n), None),
            Source::Run(i) => (None, Some(i)),
        };
        Some(Cite {
            value,
            line,
            run,
            field,
        })
    }
}

thread_local! {
    static NOTED: RefCell<Option<Vec<Cite>>> = const { RefCell::new(None) };
}

/// Runs `f`, returning what it returned and the figures it took through [`Row::cited`], each once, in
/// the order first taken.
pub fn collect<T>(f: impl FnOnce() -> T) -> (T, Vec<Cite>) {
    let outer = NOTED.with(|n| n.borrow_mut().replace(Vec::new()));
    let out = f();
    let cites = NOTED.with(|n| std::mem::replace(&mut *n.borrow_mut(), outer));
    (out, cites.unwrap_or_default())
}

/// Whether a [`collect`] runs (figures taken outside one are noted nowhere).
pub fn collecting() -> bool {
    NOTED.with(|n| n.borrow().is_some())
}

/// Notes a figure taken, while [`collect`] runs.
pub fn note(c: Cite) {
    NOTED.with(|n| {
        if let Some(v) = n.borrow_mut().as_mut() {
            if !v
                .iter()
                .any(|x| x.line == c.line && x.run == c.run && x.field == c.field)
            {
                v.push(c);
            }
        }
    });
}
