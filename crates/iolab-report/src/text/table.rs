//! Tables for people: columns as wide as their widest cell (so a long method name moves the columns
//! instead of pushing its row out of line), and, on a terminal too narrow for all of them, the columns
//! after the key columns shown in groups that fit, each group repeating the keys. The same table as
//! Markdown (`--md`).

use super::wrap::{width_of, wrap_hanging};

/// How a column's cells sit in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
    /// Left, and wrapped to what is left of the width (the last column only: prose such as a finding).
    Wrap,
}

/// One row: its cells, or (`Note`) the key cells and a text spanning the other columns ("not run: ...").
#[derive(Debug, Clone, PartialEq)]
pub enum Row {
    Cells(Vec<String>),
    Note(Vec<String>, String),
}

/// A table: headed columns, rows, and how many leading columns say what a row is (repeated in every
/// group when the columns are split to fit).
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub heads: Vec<String>,
    pub align: Vec<Align>,
    pub rows: Vec<Row>,
    pub keys: usize,
    /// Spaces before every line.
    pub indent: usize,
    /// Whether the header line is printed on a terminal (a table of labelled lines has none; Markdown
    /// always has one).
    pub show_heads: bool,
}

/// Spaces between two columns.
const GAP: usize = 2;

/// The narrowest a wrapped column is made before the table is split instead.
const MIN_WRAP: usize = 16;

impl Table {
    /// A table with these column heads and alignments, the first `keys` columns naming the row.
    pub fn new(cols: &[(&str, Align)], keys: usize) -> Table {
        Table {
            heads: cols.iter().map(|(h, _)| h.to_string()).collect(),
            align: cols.iter().map(|(_, a)| *a).collect(),
            rows: Vec::new(),
            keys: keys.min(cols.len()),
            indent: 0,
            show_heads: true,
        }
    }

    pub fn indent(mut self, n: usize) -> Table {
        self.indent = n;
        self
    }

    pub fn without_heads(mut self) -> Table {
        self.show_heads = false;
        self
    }

    /// Adds a row; missing cells are empty, extra ones dropped.
    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        let mut c: Vec<String> = cells.into_iter().map(Into::into).collect();
        c.resize(self.heads.len(), String::new());
        self.rows.push(Row::Cells(c));
    }

    /// Adds a row of key cells and a text in place of the other columns.
    pub fn note<S: Into<String>>(
        &mut self,
        keys: impl IntoIterator<Item = S>,
        text: impl Into<String>,
    ) {
        let mut k: Vec<String> = keys.into_iter().map(Into::into).collect();
        k.resize(self.keys, String::new());
        self.rows.push(Row::Note(k, text.into()));
    }

    /// Each column's width: its widest cell or head (notes count for the key columns only).
    fn widths(&self) -> Vec<usize> {
        let mut w: Vec<usize> = self
            .heads
            .iter()
            .map(|h| if self.show_heads { width_of(h) } else { 0 })
            .collect();
        for r in &self.rows {
            let cells = match r {
                Row::Cells(c) => c,
                Row::Note(k, _) => k,
            };
            for (i, c) in cells.iter().enumerate() {
                w[i] = w[i].max(width_of(c));
            }
        }
        w
    }

    /// The columns of each group that fits `width` (all in one group when it fits or is unbounded).
    fn groups(&self, w: &[usize], width: Option<usize>) -> Vec<Vec<usize>> {
        let all: Vec<usize> = (0..w.len()).collect();
        let Some(width) = width else {
            return vec![all];
        };
        let span = |cols: &[usize]| {
            self.indent
                + cols.iter().map(|&i| w[i]).sum::<usize>()
                + GAP * cols.len().saturating_sub(1)
        };
        let wraps = self.align.last() == Some(&Align::Wrap);
        let fixed = &all[..all.len() - usize::from(wraps)];
        if span(&all) <= width || (wraps && span(fixed) + GAP + self.min_wrap() <= width) {
            return vec![all];
        }
        // Rows that are all notes show the key columns only: no group of heads without a row under it.
        if !self.rows.iter().any(|r| matches!(r, Row::Cells(_))) {
            let mut cur: Vec<usize> = (0..self.keys).collect();
            for i in self.keys..w.len() {
                let mut with = cur.clone();
                with.push(i);
                if span(&with) > width {
                    break;
                }
                cur = with;
            }
            return vec![cur];
        }
        let keys: Vec<usize> = (0..self.keys).collect();
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut cur = keys.clone();
        for i in self.keys..w.len() {
            let mut with = cur.clone();
            with.push(i);
            if cur.len() > keys.len() && span(&with) > width {
                groups.push(std::mem::replace(&mut cur, keys.clone()));
                cur.push(i);
            } else {
                cur = with;
            }
        }
        groups.push(cur);
        groups
    }

    /// The narrowest the wrapped last column can be: [`MIN_WRAP`], or its longest word (a word is never
    /// split: a function name wider than the column would stick out of the width).
    fn min_wrap(&self) -> usize {
        let last = self.heads.len().saturating_sub(1);
        self.rows
            .iter()
            .filter_map(|r| match r {
                Row::Cells(c) => c.get(last),
                Row::Note(..) => None,
            })
            .flat_map(|c| c.split_whitespace())
            .map(width_of)
            .fold(MIN_WRAP, usize::max)
    }

    /// The table as text for a terminal `width` columns wide (`None`: unbounded), each line ending in a
    /// newline.
    pub fn render(&self, width: Option<usize>) -> String {
        let w = self.widths();
        let groups = self.groups(&w, width);
        let mut out = String::new();
        for (g, cols) in groups.iter().enumerate() {
            if g > 0 {
                out.push('\n');
            }
            if self.show_heads {
                let heads: Vec<&str> = self.heads.iter().map(String::as_str).collect();
                out.push_str(&self.line(&heads, cols, &w, width));
            }
            for r in &self.rows {
                match r {
                    Row::Cells(c) => {
                        let c: Vec<&str> = c.iter().map(String::as_str).collect();
                        out.push_str(&self.line(&c, cols, &w, width));
                    }
                    Row::Note(k, text) if g == 0 => {
                        out.push_str(&self.note_line(k, text, &w, width))
                    }
                    Row::Note(..) => {}
                }
            }
        }
        out
    }

    /// One line of the columns `cols`; a wrapped last column continues under itself.
    fn line(&self, cells: &[&str], cols: &[usize], w: &[usize], width: Option<usize>) -> String {
        let mut s = " ".repeat(self.indent);
        for (n, &i) in cols.iter().enumerate() {
            if n > 0 {
                s.push_str(&" ".repeat(GAP));
            }
            let last = n + 1 == cols.len();
            let cell = cells.get(i).copied().unwrap_or("");
            let pad = w[i].saturating_sub(width_of(cell));
            match self.align[i] {
                Align::Right => {
                    s.push_str(&" ".repeat(pad));
                    s.push_str(cell);
                }
                Align::Left | Align::Wrap if last => {
                    let hang = width_of(&s);
                    s.push_str(cell);
                    s = wrap_hanging(&s, width, hang);
                }
                Align::Left | Align::Wrap => {
                    s.push_str(cell);
                    s.push_str(&" ".repeat(pad));
                }
            }
        }
        s.truncate(s.trim_end().len());
        s.push('\n');
        s
    }

    /// A note row: the key cells, then the text wrapped under itself.
    fn note_line(&self, keys: &[String], text: &str, w: &[usize], width: Option<usize>) -> String {
        let mut s = " ".repeat(self.indent);
        for (i, k) in keys.iter().enumerate() {
            if self.align[i] == Align::Right {
                s.push_str(&" ".repeat(w[i].saturating_sub(width_of(k))));
                s.push_str(k);
            } else {
                s.push_str(k);
                s.push_str(&" ".repeat(w[i].saturating_sub(width_of(k))));
            }
            s.push_str(&" ".repeat(GAP));
        }
        let hang = width_of(&s);
        s.push_str(text);
        wrap_hanging(&s, width, hang) + "\n"
    }

    /// The table as a Markdown (GitHub-flavoured) table: a head line, an alignment line, then a line per
    /// row; a note's text sits in the first column after the keys.
    pub fn markdown(&self) -> String {
        let esc = |s: &str| {
            let t = s.replace(super::wrap::NBSP, " ").replace('|', "\\|");
            if t.is_empty() {
                " ".to_string()
            } else {
                t
            }
        };
        let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
        let mut out = line(self.heads.iter().map(|h| esc(h)).collect());
        out.push_str(&line(
            self.align
                .iter()
                .map(|a| match a {
                    Align::Right => "---:".to_string(),
                    _ => "---".to_string(),
                })
                .collect(),
        ));
        for r in &self.rows {
            let cells: Vec<String> = match r {
                Row::Cells(c) => c.iter().map(|c| esc(c)).collect(),
                Row::Note(k, text) => {
                    let mut c: Vec<String> = k.iter().map(|c| esc(c)).collect();
                    c.push(esc(text));
                    c.resize(self.heads.len().max(c.len()), " ".to_string());
                    c
                }
            };
            out.push_str(&line(cells));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new(
            &[
                ("method", Align::Left),
                ("bs", Align::Right),
                ("time/op", Align::Right),
                ("MiB/s", Align::Right),
                ("syscalls/op", Align::Right),
            ],
            2,
        );
        t.row(["psync", "4 KiB", "271.2 ns", "14.07 GiB/s", "1.000"]);
        t.row([
            "shared-submitter",
            "4 KiB",
            "23.0 µs",
            "169.8 MiB/s",
            "0.031",
        ]);
        t.note(
            ["splice", "4 B"],
            "not run: needs a file to copy from, and a long reason that wraps",
        );
        t
    }

    #[test]
    fn a_table_of_notes_only_shows_no_heads_without_rows() {
        let mut t = Table::new(
            &[
                ("point", Align::Left),
                ("user s", Align::Right),
                ("sys s", Align::Right),
                ("time/op", Align::Right),
                ("gap p50", Align::Right),
            ],
            1,
        );
        t.note(["bs=4"], "not run: not available on this machine");
        let out = t.render(Some(40));
        assert_eq!(
            out.lines().filter(|l| l.contains("point")).count(),
            1,
            "{out}"
        );
        assert!(out.lines().all(|l| l.chars().count() <= 40), "{out}");
        assert!(out.contains("not run"), "{out}");
    }

    #[test]
    fn a_wrapped_column_is_never_narrower_than_its_longest_word() {
        let mut t = Table::new(
            &[
                ("point", Align::Left),
                ("samples", Align::Right),
                ("top kernel function (self %)", Align::Wrap),
            ],
            1,
        );
        let long = "__memcg_slab_post_alloc_hook (12.0%)";
        t.row(["bs=4k target={disk}/writes.dat", "192", long]);
        for width in [64, 72, 80] {
            let out = t.render(Some(width));
            assert!(
                out.lines().all(|l| l.chars().count() <= width),
                "{width}:\n{out}"
            );
            assert!(out.contains("__memcg_slab_post_alloc_hook"), "{out}");
        }
    }

    #[test]
    fn columns_line_up_whatever_the_method_name() {
        let text = sample().render(None);
        let lines: Vec<&str> = text.lines().collect();
        // Every row's right-aligned last cell ends in the same column as the head's.
        let end = width_of(lines[0]);
        assert_eq!(width_of(lines[1]), end, "{text}");
        assert_eq!(width_of(lines[2]), end, "{text}");
        // The note starts where the first column after the keys starts (16 + 2 + 5 + 2).
        assert_eq!(lines[3].find("not run"), Some(25), "{text}");
    }

    #[test]
    fn too_wide_tables_split_into_groups_repeating_the_keys() {
        let text = sample().render(Some(50));
        for l in text.lines() {
            assert!(width_of(l) <= 50, "{l:?}\n{text}");
        }
        let heads: Vec<&str> = text.lines().filter(|l| l.starts_with("method")).collect();
        assert!(heads.len() >= 2, "{text}");
        assert!(text.contains("syscalls/op") && text.contains("shared-submitter"));
    }

    #[test]
    fn markdown_has_the_same_rows() {
        let md = sample().markdown();
        let lines: Vec<&str> = md.lines().collect();
        assert_eq!(lines.len(), 2 + 3);
        assert_eq!(lines[1], "| --- | ---: | ---: | ---: | ---: |");
        assert!(lines
            .iter()
            .all(|l| l.starts_with("| ") && l.ends_with(" |")));
        assert_eq!(
            lines[0].matches(" | ").count(),
            lines[2].matches(" | ").count()
        );
        assert!(lines[4].contains("| not run: needs"), "{md}");
    }

    #[test]
    fn a_wrapped_column_hangs_under_itself() {
        let mut t = Table::new(&[("", Align::Left), ("", Align::Wrap)], 1).without_heads();
        t.row([
            "FINDING",
            "one two three four five six seven eight nine ten eleven twelve",
        ]);
        let text = t.render(Some(40));
        for l in text.lines().skip(1) {
            assert!(l.starts_with(&" ".repeat(9)), "{text}");
        }
        assert!(text.lines().all(|l| width_of(l) <= 40), "{text}");
    }
}
