//! Where buffered and O_DIRECT cross over the block sizes, in one family of rows (same target,
//! direction, method and threads): the set rule `direct_crossover` of `findings_compare`, and the storage
//! paper's answer.

use super::cited::Fig;
use super::row::Row;
use iolab_engine::units::fmt_size;

/// Which of buffered and O_DIRECT moved more at one block size (within 10% of each other: even).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Lead {
    Buffered,
    Direct,
    Even,
}

/// Throughputs within this factor of each other are called even.
const EVEN: f64 = 1.1;

/// (bs, buffered MiB/s, O_DIRECT MiB/s) at each block size a family measured both ways, smallest first.
fn both_ways(family: &[&&Row]) -> Vec<(u64, f64, f64)> {
    let mut sizes: Vec<u64> = family.iter().map(|r| r.facts.bs).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let rate = |bs: u64, direct: bool| {
        family
            .iter()
            .find(|r| r.facts.bs == bs && r.facts.direct == direct)
            .map(|r| {
                r.cited(Fig::Bs);
                r.cited(Fig::MibS)
            })
    };
    sizes
        .iter()
        .filter_map(|&bs| Some((bs, rate(bs, false)?, rate(bs, true)?)))
        .collect()
}

/// "512 B: buffered 40.0 MiB/s, O_DIRECT 3.0".
fn at_size((bs, b, d): (u64, f64, f64)) -> String {
    format!("{}: buffered {b:.1} MiB/s, O_DIRECT {d:.1}", fmt_size(bs))
}

/// Runs of the same lead over `both`: (lead, first index, last index).
fn lead_runs(both: &[(u64, f64, f64)]) -> Vec<(Lead, usize, usize)> {
    let mut runs: Vec<(Lead, usize, usize)> = Vec::new();
    for (i, &(_, b, d)) in both.iter().enumerate() {
        let l = if d > b * EVEN {
            Lead::Direct
        } else if b > d * EVEN {
            Lead::Buffered
        } else {
            Lead::Even
        };
        match runs.last_mut() {
            Some(r) if r.0 == l => r.2 = i,
            _ => runs.push((l, i, i)),
        }
    }
    runs
}

/// Where buffered and O_DIRECT cross in one family of rows (same target, direction, method), over the
/// block sizes both were measured at; `None` without such a size.
pub(crate) fn crossover(family: &[&&Row]) -> Option<String> {
    let both = both_ways(family);
    let first = family.first()?;
    let what = format!(
        "{} {} {}",
        if first.facts.write {
            "writes to"
        } else {
            "reads from"
        },
        first.target,
        first.way()
    );
    let runs = lead_runs(&both);
    let decided: Vec<Lead> = runs
        .iter()
        .map(|r| r.0)
        .filter(|l| *l != Lead::Even)
        .collect();
    if decided == [Lead::Buffered, Lead::Direct] {
        let lb = runs.iter().rfind(|r| r.0 == Lead::Buffered)?.2;
        let fd = runs.iter().find(|r| r.0 == Lead::Direct)?.1;
        return Some(format!(
            "{what}: buffered and O_DIRECT cross between {} and {} ({}; {})",
            fmt_size(both[lb].0),
            fmt_size(both[fd].0),
            at_size(both[lb]),
            at_size(both[fd])
        ));
    }
    // The smallest and the largest size (once, where only one was measured both ways).
    let ends = match both.as_slice() {
        [one] => at_size(*one),
        _ => format!("{}; {}", at_size(*both.first()?), at_size(*both.last()?)),
    };
    Some(match runs.as_slice() {
        [(Lead::Buffered, ..)] => {
            format!("{what}: buffered faster at every block size measured, O_DIRECT never caught up ({ends})")
        }
        [(Lead::Direct, ..)] => format!("{what}: O_DIRECT faster at every block size measured ({ends})"),
        [(Lead::Even, ..)] => format!(
            "{what}: buffered and O_DIRECT within 10% of each other at every block size measured ({ends})"
        ),
        _ => {
            let word = |l: Lead| match l {
                Lead::Buffered => "buffered faster",
                Lead::Direct => "O_DIRECT faster",
                Lead::Even => "within 10% of each other",
            };
            let range = |a: usize, b: usize| match a == b {
                true => fmt_size(both[a].0),
                false => format!("{}-{}", fmt_size(both[a].0), fmt_size(both[b].0)),
            };
            format!(
                "{what}: {} ({})",
                runs.iter()
                    .map(|(l, a, b)| format!("{} at {}", word(*l), range(*a, *b)))
                    .collect::<Vec<_>>()
                    .join(", then "),
                both.iter().map(|p| at_size(*p)).collect::<Vec<_>>().join("; ")
            )
        }
    })
}
