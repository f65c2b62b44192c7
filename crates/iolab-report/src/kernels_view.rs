//! `suite --kernels`: the kernels side by side (`iolab_lab::kernels::Side`), what the probe found on
//! some and not on others, and the answers across kernels.

use crate::text::{Align, Doc, Table};
use iolab_lab::answers::Answer;
use iolab_lab::kernels::{KTable, Side, Unit};

/// How many of the probe's differences are shown (the rest are in the summary line's JSON).
const DIFFER_SHOWN: usize = 5;

/// The document: its lead, a table per figure, the probe's differences, the answers.
pub fn doc(lead: &str, side: &Side, answers: &[Answer]) -> Doc {
    let mut d = Doc::new();
    d.line(lead);
    for t in &side.tables {
        d.blank();
        d.line(format!("{}:", t.title));
        d.table(table(side, t));
    }
    if side.kernels.iter().any(|k| k.emulated) {
        d.line("  * emulated (QEMU TCG): its counts are the kernel's, its times the emulator's");
    }
    if !side.differ.is_empty() {
        d.blank();
        d.line("What `iolab probe` found on some of these kernels and not on others:");
        d.table(differ(side));
        if side.differ.len() > DIFFER_SHOWN {
            d.line(format!(
                "  and {} more (the summary line's kernels.differ)",
                side.differ.len() - DIFFER_SHOWN
            ));
        }
    }
    for (k, why) in &side.failed {
        d.line(format!(
            "No result from {k}: {}",
            why.lines().next().unwrap_or_default()
        ));
    }
    if !answers.is_empty() {
        d.blank();
        d.line("Answers (across the kernels, from this run's figures):");
        for (i, a) in answers.iter().enumerate() {
            d.hang(
                format!(
                    "  {}. {} ({}) [{}]",
                    i + 1,
                    a.question,
                    a.source,
                    a.status.word()
                ),
                5,
            );
            d.hang(format!("     {}", a.text), 5);
            if let Some(n) = &a.needs {
                d.hang(format!("     Needs: {n}"), 5);
            }
        }
    }
    d
}

fn heads(side: &Side) -> Vec<(String, Align)> {
    side.kernels
        .iter()
        .map(|k| {
            let h = match k.emulated {
                true => format!("{}*", k.label),
                false => k.label.clone(),
            };
            (h, Align::Right)
        })
        .collect()
}

fn table(side: &Side, t: &KTable) -> Table {
    let mut cols = vec![("workload".to_string(), Align::Left)];
    cols.extend(heads(side));
    let cols: Vec<(&str, Align)> = cols.iter().map(|(h, a)| (h.as_str(), *a)).collect();
    let mut tab = Table::new(&cols, 1).indent(2);
    for r in &t.rows {
        let mut cells = vec![r.label.clone()];
        // Shares as whole percents ("100/0": the title says so), to keep a column per kernel narrow.
        let sep = if t.unit == Unit::Ns { " / " } else { "/" };
        cells.extend(r.values.iter().map(|fs| {
            fs.iter()
                .map(|v| v.map_or("-".to_string(), |v| cell(v, t.unit)))
                .collect::<Vec<_>>()
                .join(sep)
        }));
        tab.row(cells);
    }
    tab
}

fn cell(v: f64, unit: Unit) -> String {
    match unit {
        Unit::Share => format!("{:.0}", v * 100.0),
        Unit::Ns => iolab_engine::units::fmt_ns(v),
        Unit::PerOp => format!("{v:.2}"),
    }
}

fn differ(side: &Side) -> Table {
    let mut cols = vec![("tried".to_string(), Align::Left)];
    cols.extend(side.kernels.iter().map(|k| (k.label.clone(), Align::Right)));
    let cols: Vec<(&str, Align)> = cols.iter().map(|(h, a)| (h.as_str(), *a)).collect();
    let mut tab = Table::new(&cols, 1).indent(2);
    for (name, each) in side.differ.iter().take(DIFFER_SHOWN) {
        let mut cells = vec![name.clone()];
        cells.extend(each.iter().map(|v| match v {
            Some(true) => "works".to_string(),
            Some(false) => "no".to_string(),
            None => "-".to_string(),
        }));
        tab.row(cells);
    }
    tab
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_lab::kernels::{KRow, KernelRan};

    fn k(label: &str, emulated: bool) -> KernelRan {
        KernelRan {
            label: label.into(),
            release: format!("{label}.0"),
            emulated,
            preempt: None,
            features: Default::default(),
        }
    }

    #[test]
    fn each_kernel_is_a_column_and_an_emulated_one_says_so() {
        let side = Side {
            kernels: vec![k("host", false), k("6.1", true)],
            tables: vec![KTable {
                title: "Shares".into(),
                figures: vec!["would block".into(), "punted".into()],
                unit: Unit::Share,
                rows: vec![KRow {
                    label: "4 KiB writes to the disk file w.dat (ext4)".into(),
                    values: vec![vec![Some(1.0), Some(1.0)], vec![Some(0.0), None]],
                }],
            }],
            differ: vec![("io_uring send_zc".into(), vec![Some(true), Some(false)])],
            failed: vec![("6.12-rt".into(), "the guest timed out".into())],
        };
        let text = doc("lead", &side, &[]).render(None);
        assert!(
            text.contains("6.1*") && text.contains("* emulated (QEMU TCG)"),
            "{text}"
        );
        assert!(text.contains("100/100"), "{text}");
        assert!(text.contains(" 0/-"), "{text}");
        assert!(
            text.contains("io_uring send_zc") && text.contains("works"),
            "{text}"
        );
    }
}
