//! The traceability check of a suite's summary: every figure an answer or a finding cites is the field
//! it names of the record on the line it names, and shows in the sentence at some printed precision.

use serde_json::Value;

/// The value at dot path `field` of `line`.
fn at<'a>(line: &'a Value, field: &str) -> Option<&'a Value> {
    field.split('.').try_fold(line, |v, k| match v {
        Value::Array(a) => a.get(k.parse::<usize>().ok()?),
        _ => v.get(k),
    })
}

/// `v` as a sentence can print it: scaled (ns as µs, ms or s; s as ms; a share as a percentage), to 0-3
/// decimals, with or without thousands separators.
fn printed_forms(v: f64) -> Vec<String> {
    let mut out = Vec::new();
    for scale in [1.0, 1e-3, 1e-6, 1e-9, 1e3, 1e6, 100.0] {
        let s = v * scale;
        for d in 0..=3 {
            let plain = format!("{s:.d$}");
            out.push(super::thousands_str(&plain));
            out.push(plain);
        }
    }
    out
}

/// Whether `text` holds `v` in one of its printed forms, as a number of its own (not inside a longer one).
pub fn shows(text: &str, v: f64) -> bool {
    printed_forms(v).iter().any(|f| {
        text.match_indices(f.as_str()).any(|(i, _)| {
            let before = text[..i].chars().next_back();
            let after = text[i + f.len()..].chars().next();
            let digit = |c: Option<char>| c.is_some_and(|c| c.is_ascii_digit());
            let decimals = after == Some('.') && digit(text[i + f.len() + 1..].chars().next());
            !(digit(before) || digit(after) || decimals)
        })
    })
}

/// What the check found: cites checked, the entries (answers and findings that print a figure) with
/// none, and the numbers of sentences that no cite explains ([`unexplained`]), each with its entry.
pub struct Traced {
    pub cites: usize,
    pub uncited: Vec<String>,
    pub unexplained: Vec<String>,
}

/// The scales a figure is printed at: as itself, ns as µs/ms/s, s as ms/µs, a share as a percentage,
/// bytes as KiB/MiB/GiB, a rate as thousands or millions.
const SCALES: [f64; 10] = [
    1.0,
    1e-3,
    1e-6,
    1e-9,
    1e3,
    1e6,
    100.0,
    1.0 / 1024.0,
    1.0 / 1048576.0,
    1.0 / 1073741824.0,
];

/// Words that name a place in a seed or a kernel release, not a figure: "Figure 4.3", "Figures 18-20",
/// "Table 5", "§4.3", "Linux 6.1".
const REFERENCES: [&str; 6] = ["Figures ", "Figure ", "Tables ", "Table ", "§", "Linux "];

/// Facts and thresholds of iolab's rules a sentence states, which are no measurement.
const CONSTANTS: [&str; 8] = [
    "too few for a share (at least 50)",
    "one per 4 KiB page is 256",
    "queue/io_poll is 1",
    "queue/io_poll is 0",
    "reached 90% of the limit",
    "within 10% of each other",
    "whole 10 ms ticks",
    "rates within 5%",
];

/// Seed figures a per-run finding quotes from iolab's own code (the offload thesis's Figure 4.3,
/// `iolab_engine::offload::SEED_*`), with their values: a sentence's ratios to them are explained.
const QUOTED: [(&str, f64); 2] = [
    ("the thesis's offloaded 487,894", 487_894.0),
    ("its native 4,170", 4_170.0),
];

/// `text` without the labels it quotes (step names of the suite file), nor the seed references of
/// [`REFERENCES`] with their numbers (and a table's title up to its colon), nor [`CONSTANTS`].
fn strip_labels(text: &str, labels: &[String]) -> String {
    let mut t = text.to_string();
    for c in CONSTANTS {
        t = t.replace(c, " ");
    }
    for l in labels.iter().filter(|l| !l.is_empty()) {
        t = t.replace(l.as_str(), " ");
    }
    for word in REFERENCES {
        while let Some(i) = t.find(word) {
            let rest = &t[i + word.len()..];
            let mut end = rest
                .find(|c: char| !(c.is_ascii_digit() || ".,-".contains(c) || c == ' '))
                .unwrap_or(rest.len());
            if word.starts_with("Table") && rest[end..].starts_with(':') {
                end += rest[end + 1..].find(':').map_or(0, |j| j + 1);
            }
            t.replace_range(i..i + word.len() + end, " ");
        }
    }
    t
}

/// The numbers `text` prints (each with its decimals), not those inside a word (`pread64`, `ng0n1`).
fn numbers(text: &str) -> Vec<(String, f64, i32)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let word_before =
            i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b'.');
        if !b[i].is_ascii_digit() || word_before {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < b.len()
            && (b[j].is_ascii_digit()
                || (b[j] == b','
                    && b.get(j + 1..j + 4)
                        .is_some_and(|d| d.iter().all(u8::is_ascii_digit)))
                || (b[j] == b'.' && b.get(j + 1).is_some_and(u8::is_ascii_digit)))
        {
            j += 1;
        }
        let inside_word = b
            .get(j)
            .is_some_and(|c| c.is_ascii_alphabetic() && *c != b'x' || *c == b'_');
        // A file's path ("/tmp/iolab-suite-27890/x.dat") names no figure.
        let start = text[..i].rfind(char::is_whitespace).map_or(0, |k| k + 1);
        let end = text[j..]
            .find(char::is_whitespace)
            .map_or(text.len(), |k| j + k);
        let in_path =
            text[start..end].contains('/') && text[start..i].contains(|c: char| c.is_alphabetic());
        let tok = &text[i..j];
        if !inside_word && !in_path {
            let decimals = tok.find('.').map_or(0, |d| (tok.len() - d - 1) as i32);
            if let Ok(v) = tok.replace(',', "").parse::<f64>() {
                out.push((tok.to_string(), v, decimals));
            }
        }
        i = j;
    }
    out
}

/// Sentences citing up to this many figures are also checked against a difference of two over a third.
const TRIPLES_UP_TO: usize = 40;

/// The numbers of `text` that none of `values` explains at any printed precision and scale: as a figure,
/// or as the ratio, relative difference, difference or product of two of them. Labels and seed
/// references apart ([`strip_labels`]).
pub fn unexplained(text: &str, values: &[f64], labels: &[String]) -> Vec<String> {
    let mut values = values.to_vec();
    let mut text = text.to_string();
    for (phrase, v) in QUOTED {
        if text.contains(phrase) {
            text = text.replace(phrase, " ");
            values.push(v);
        }
    }
    let mut cands: Vec<f64> = values.clone();
    for a in &values {
        for b in &values {
            if *b != 0.0 {
                cands.push(a / b);
                cands.push(a / b - 1.0);
            }
            cands.push(a - b);
            cands.push(a * b);
            // A difference per unit ("+156.3 ns per system call": the time apart over calls per op), where
            // the sentence cites few enough figures to try every third.
            if values.len() <= TRIPLES_UP_TO {
                cands.extend(values.iter().filter(|c| **c != 0.0).map(|c| (a - b) / c));
            }
        }
    }
    let t = strip_labels(&text, labels);
    numbers(&t)
        .into_iter()
        .filter(|(_, v, d)| {
            let tol = 0.5 * 10f64.powi(-d) * (1.0 + 1e-9);
            !cands
                .iter()
                .any(|c| SCALES.iter().any(|s| ((c * s).abs() - v).abs() <= tol))
        })
        .map(|(tok, ..)| tok)
        .collect()
}

/// Checks every cite of `summary` (a suite's `{"summary": ...}` object) against `lines` (the record
/// file's lines, parsed): the line is a record, its field a number equal to the cite's value, and each
/// entry shows at least one of its cited figures. Panics naming the entry otherwise.
pub fn check_cites(name: &str, lines: &[Value], summary: &Value) -> Traced {
    let source = |c: &Value| {
        let n = c["line"].as_u64()? as usize;
        let line = lines.get(n.checked_sub(1)?)?;
        line.get("point").map(|_| line.clone())
    };
    check(name, summary, &source)
}

/// [`check_cites`] of a survey's document: its findings cite fields of its `runs` by index.
pub fn check_survey_cites(doc: &Value) -> Traced {
    let runs = doc["runs"].as_array().cloned().unwrap_or_default();
    let source = |c: &Value| runs.get(c["run"].as_u64()? as usize).cloned();
    check("survey", doc, &source)
}

fn check(name: &str, summary: &Value, source: &dyn Fn(&Value) -> Option<Value>) -> Traced {
    let mut t = Traced {
        cites: 0,
        uncited: Vec::new(),
        unexplained: Vec::new(),
    };
    let entries = ["answers", "findings"]
        .iter()
        .flat_map(|k| summary[*k].as_array().cloned().unwrap_or_default());
    for e in entries {
        let text = e["text"].as_str().unwrap_or_default();
        let cites = e["cites"].as_array().cloned().unwrap_or_default();
        if cites.is_empty() {
            // No cite: no number either (digits in words, paths and references are not numbers).
            if !unexplained(text, &[], &[]).is_empty() {
                t.uncited
                    .push(format!("{}: {text}", e.get("id").unwrap_or(&e["rule"])));
            }
            continue;
        }
        let mut shown = false;
        let mut labels = Vec::new();
        for c in &cites {
            let value = c["value"].as_f64().unwrap();
            let field = c["field"].as_str().unwrap();
            // A cite with no line nor run is of the entry itself (the seed's figures it quotes), or else
            // of the summary (the published figures checked, the memory rates).
            let own = c.get("line").is_none() && c.get("run").is_none();
            let rec = match own {
                true if at(&e, field).is_some() => e.clone(),
                true => summary.clone(),
                false => source(c).unwrap_or_else(|| panic!("{name}: {c} names no record: {e}")),
            };
            if let Some(i) = field
                .strip_prefix("published.")
                .and_then(|f| f.split('.').next())
            {
                let label =
                    &summary["published"][i.parse::<usize>().unwrap_or(usize::MAX)]["label"];
                labels.extend(label.as_str().map(String::from));
            }
            if let Some(step) = rec["point"]["step"].as_str() {
                labels.push(step.to_string());
            }
            let src = at(&rec, field)
                .and_then(|v| v.as_f64())
                .unwrap_or_else(|| panic!("{name}: {c}: no number at {field}: {e}"));
            assert!(
                (src - value).abs() <= 1e-9 * src.abs().max(1e-300),
                "{name}: {c}: {field} is {src} there: {e}"
            );
            shown |= shows(text, value);
            t.cites += 1;
        }
        assert!(
            shown,
            "{name}: none of the cited figures shows in the sentence: {e}"
        );
        let values: Vec<f64> = cites.iter().filter_map(|c| c["value"].as_f64()).collect();
        let loose = unexplained(text, &values, &labels);
        if !loose.is_empty() {
            let id = e
                .get("id")
                .unwrap_or(&e["rule"])
                .as_str()
                .unwrap_or_default();
            t.unexplained
                .push(format!("{name} {id}: {loose:?} in: {text}"));
        }
    }
    t
}
