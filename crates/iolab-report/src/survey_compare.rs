//! `iolab compare A B` of two surveys as text: per table whether its order changed (by each survey's own
//! rounds), then the rows whose time moved most; `-v` adds every row's figures.

use crate::text::Doc;
use iolab_lab::compare_surveys::{Moved, TableChange};

/// The rows that moved most, shown.
const MOVED: usize = 5;

/// The answer: a line per table, the rows that moved most.
pub fn doc(a: &str, b: &str, changes: &[TableChange], moved: &[Moved]) -> Doc {
    let mut d = Doc::new();
    d.line(format!(
        "iolab compare of two surveys: A = {a}, B = {b}; each order as its own survey's rounds decided it (two \
         methods are ordered where their paired rounds separate them, else within noise)"
    ));
    let changed = changes.iter().filter(|c| !c.reversed.is_empty()).count();
    d.blank().line(format!(
        "{changed} of {} tables changed order (a pair ordered one way in A and the other in B):",
        changes.len()
    ));
    for c in changes {
        d.line(format!("  {}: {}", c.table, said(c)));
    }
    // Only a move beyond both sides' spread of their rounds is one.
    let beyond: Vec<&Moved> = moved.iter().filter(|m| !m.within_noise()).collect();
    d.blank();
    if beyond.is_empty() {
        d.line("No row's time per op moved beyond the spread of both surveys' rounds.");
    } else {
        d.line(format!(
            "{} rows moved beyond the spread of both surveys' rounds; the most (median time per op):",
            beyond.len()
        ));
    }
    for m in beyond.iter().take(MOVED) {
        d.line(format!(
            "  {} in {}: {} -> {}, {:.2}x",
            m.method,
            m.table,
            crate::rounds_text::short_ns(m.a.median),
            crate::rounds_text::short_ns(m.b.median),
            m.ratio(),
        ));
    }
    d.blank().line("-v: every row's figures, A against B");
    d
}

/// "1 pair", "5 pairs".
fn pairs(n: usize) -> String {
    format!("{n} pair{}", if n == 1 { "" } else { "s" })
}

/// One table's change: its fastest, the pairs reversed (the first two named), the pairs now tied or now
/// ordered.
fn said(c: &TableChange) -> String {
    let mut parts = Vec::new();
    let (fa, fb) = (&c.fastest.0, &c.fastest.1);
    let sorted = |v: &Vec<String>| {
        let mut v = v.clone();
        v.sort();
        v
    };
    if sorted(fa) != sorted(fb) {
        parts.push(format!("fastest {} -> {}", group(fa), group(fb)));
    }
    if !c.reversed.is_empty() {
        let named: Vec<String> = c
            .reversed
            .iter()
            .take(2)
            .map(|(x, y)| format!("{x} before {y}"))
            .collect();
        let more = c.reversed.len().saturating_sub(2);
        parts.push(format!(
            "reversed: {}{}",
            named.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ));
    }
    if c.now_within_noise > 0 {
        parts.push(format!("{} now within noise", pairs(c.now_within_noise)));
    }
    if c.now_ordered > 0 {
        parts.push(format!("{} now ordered", pairs(c.now_ordered)));
    }
    match parts.is_empty() {
        true => "same order".into(),
        false => parts.join("; "),
    }
}

/// A group of methods by its first three names and how many more.
fn group(names: &[String]) -> String {
    match names.len() {
        0..=3 => names.join(" = "),
        n => format!("{} +{} tied", names[..2].join(" = "), n - 2),
    }
}
