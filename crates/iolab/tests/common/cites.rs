//! The traceability check of a suite's summary: every figure an answer or a finding cites is the field
//! it names of the record on the line it names, and shows in the sentence at some printed precision.

use serde_json::Value;

/// The value at dot path `field` of `line`.
fn at<'a>(line: &'a Value, field: &str) -> Option<&'a Value> {
    field.split('.').try_fold(line, |v, k| v.get(k))
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

/// What the check found: cites checked, and the entries (answers and findings that print a figure) with
/// none.
pub struct Traced {
    pub cites: usize,
    pub uncited: Vec<String>,
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
    };
    let entries = ["answers", "findings"]
        .iter()
        .flat_map(|k| summary[*k].as_array().cloned().unwrap_or_default());
    for e in entries {
        let text = e["text"].as_str().unwrap_or_default();
        let cites = e["cites"].as_array().cloned().unwrap_or_default();
        if cites.is_empty() {
            if text.chars().any(|c| c.is_ascii_digit()) && e["status"] != "not-here" {
                t.uncited
                    .push(format!("{}: {text}", e.get("id").unwrap_or(&e["rule"])));
            }
            continue;
        }
        let mut shown = false;
        for c in &cites {
            let value = c["value"].as_f64().unwrap();
            let field = c["field"].as_str().unwrap();
            let rec = source(c).unwrap_or_else(|| panic!("{name}: {c} names no record: {e}"));
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
    }
    t
}
