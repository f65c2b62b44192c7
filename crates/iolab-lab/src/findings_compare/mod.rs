//! Findings that compare: sentences about the rows of one table (a suite's points, or one target of the
//! survey) set side by side, each carrying the figures that triggered it ("io_uring took 3.4x write()'s
//! time per op on the same target: 100% of its requests were punted to io-wq ...").
//!
//! As in `findings.rs`, every rule lives in a table, works on [`Row`]s (a few numbers pulled out of a
//! result, so each rule can be tested with figures made up on the spot), and has one test that triggers
//! it and one that does not:
//! - [`PAIR_RULES`] look at a row and another row of the same workload (same target, direction, block
//!   size, O_DIRECT or not, pattern and threads): another method against the workload's reference row
//!   (write()/read() where the table has one, else the fastest), batched against one request per
//!   submission, a shared ring against per-thread rings;
//! - [`SET_RULES`] look at the rows of a workload family at once: where buffered and O_DIRECT cross over
//!   the block sizes (`findings_crossover`);
//! - [`plausibility`] looks at one throughput (a row's, or a seed's published one) against what this
//!   machine's memory can copy (`measure::memcopy`): beyond it, the figure is impossible.

mod cited;
mod crossover;
mod plausible;
pub mod row;
mod rules;
mod why;

pub(crate) use crossover::crossover;
pub use plausible::{plausibility, PLAUSIBLE_MARGIN};
#[cfg(test)]
pub(crate) use row::test_row;
pub use row::{mark_references, noise, way, within_noise, Row, Spread};
pub use rules::{PAIR_RULES, RATIO, SET_RULES};
use why::{causes_faster, causes_slower};
pub(crate) use why::{why_faster, why_slower};
pub use why::{Cause, CAUSES};

use crate::cite::{collect, Cite};
use crate::findings::{self};
pub use cited::Fig;
use iolab_engine::measure::memcopy::MemCopy;
use serde::{Deserialize, Serialize};

/// A comparative finding: its rule, the table part it is about, and the sentence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compared {
    pub rule: String,
    /// The workload ("4 B writes to /dev/null") or, for a row's own finding, the row ("write(), 4 B
    /// writes to /dev/null").
    pub about: String,
    pub text: String,
    /// A row against the workload's reference: the row's way, its time per op over the reference's, and
    /// the causes the sentence gives (so the rows one cause explains can be named together).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub against: Option<Against>,
    /// The figures the sentence used, each from a field of a record ([`crate::cite`]).
    #[serde(default)]
    pub cites: Vec<Cite>,
}

/// A row's comparison with its workload's reference row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Against {
    /// The row ("io_uring (qd 1 batch 1)").
    pub way: String,
    /// The reference ("write()").
    pub reference: String,
    /// The row's time per op over the reference's.
    pub ratio: f64,
    pub causes: Vec<Cause>,
}

/// Every comparative finding over `rows` (references marked first), then the plausibility rule on each
/// row and each row's own findings (`findings.rs`, recomputed from its facts).
pub fn compare(rows: &mut [Row], mem: &MemCopy) -> Vec<Compared> {
    mark_references(rows);
    let mut out = Vec::new();
    for (name, rule) in PAIR_RULES {
        for a in rows.iter() {
            for b in rows.iter() {
                if std::ptr::eq(a, b) {
                    continue;
                }
                if let (Some(text), cites) = collect(|| rule(a, b)) {
                    out.push(Compared {
                        rule: (*name).into(),
                        about: a.workload(),
                        text: text + &noise(a, b),
                        against: against(name, a, b),
                        cites,
                    });
                }
            }
        }
    }
    let refs: Vec<&Row> = rows.iter().collect();
    for (name, about, rule) in SET_RULES {
        for (text, cites) in rule(&refs) {
            out.push(Compared {
                rule: (*name).into(),
                about: (*about).into(),
                text,
                against: None,
                cites,
            });
        }
    }
    // One heading per workload: the comparisons about one workload together, in first-seen order.
    let first: Vec<String> = out.iter().map(|c| c.about.clone()).collect();
    out.sort_by_key(|c| first.iter().position(|a| *a == c.about));
    for r in rows.iter() {
        let about = format!("{}, {}", r.way(), r.workload());
        // An emulated CPU's memory rates bound nothing: QEMU translates iolab's measuring copy and the
        // kernel's copies differently (a guest's sink moved 1.6 GB/s against 935 MB/s measured).
        if r.copies && mem.emulated.is_none() {
            if let Some(text) = plausibility(
                r.bytes as f64,
                r.facts.wall_s,
                r.working_set,
                r.cpus.max(1),
                mem,
            ) {
                out.push(Compared {
                    rule: "beyond_memory_copy".into(),
                    about: about.clone(),
                    text,
                    against: None,
                    cites: r.cites_of(&[Fig::Bytes, Fig::WallS]),
                });
            }
        }
        for f in findings::findings_of(&r.facts) {
            out.push(Compared {
                cites: r.cites_at(findings::figures_of(&f.rule)),
                rule: f.rule,
                about: about.clone(),
                text: f.text,
                against: None,
            });
        }
    }
    out
}

/// What a row-against-reference rule found, cause by cause (None for the other rules).
fn against(rule: &str, a: &Row, b: &Row) -> Option<Against> {
    let causes = match rule {
        "slower_than_reference" => causes_slower(a, b),
        "faster_than_reference" => causes_faster(a, b),
        _ => return None,
    };
    Some(Against {
        way: a.way.clone(),
        reference: b.way.clone(),
        ratio: a.ns() / b.ns(),
        causes,
    })
}

#[cfg(test)]
mod tests;
