//! What iolab prints for people, laid out in one place: prose lines wrapped to the terminal's width
//! without splitting a word ([`wrap`]), tables whose columns follow their widest cell and split into
//! groups on a narrow terminal ([`table`]), and the same document as Markdown (`--md FILE`).
//!
//! A view (a run, a sweep, the survey, a suite, compare) builds a [`Doc`]; the command renders it for
//! where it goes: [`Doc::render`] with the width of the terminal (see [`width_for`]), or
//! [`Doc::markdown`].
//!
//! The width: `COLUMNS` when it is set to a number (as shells set it for a terminal, and as tests and
//! scripts can), else the terminal's own size (TIOCGWINSZ) when the output is a terminal; output that
//! goes to a file or a pipe is not wrapped (one line per item, for grep and scripts).

pub mod table;
pub mod wrap;

pub use table::{Align, Row, Table};
pub use wrap::{wrap_line, wrap_text, NBSP};

/// The narrowest width text is wrapped to (a `COLUMNS` below it is taken as this).
pub const MIN_WIDTH: usize = 40;

/// The width to wrap text for descriptor `fd` to (see the module doc); `None`: not wrapped.
pub fn width_for(fd: i32) -> Option<usize> {
    if let Some(c) = std::env::var("COLUMNS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&c| c > 0)
    {
        return Some(c.max(MIN_WIDTH));
    }
    match iolab_sys::terminal_columns(fd) {
        Ok(c) if c > 0 => Some((c as usize).max(MIN_WIDTH)),
        _ => None,
    }
}

/// One block of a document.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// A line of prose, wrapped with continuation lines hanging at `hang` (`None`: found from the line,
    /// see [`wrap::hang_of`]).
    Line(String, Option<usize>),
    /// A section title.
    Heading(String),
    /// An empty line.
    Blank,
    Table(Table),
    /// Lines laid out by hand (a seed's published table): printed as they are where they fit (wrapped
    /// like prose where not), a code block in Markdown.
    Pre(String),
}

/// A document: what a command prints, before it knows the width it is printed at.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Doc {
    pub blocks: Vec<Block>,
}

impl Doc {
    pub fn new() -> Doc {
        Doc::default()
    }

    /// A line of prose (its hanging indent found from its shape).
    pub fn line(&mut self, s: impl Into<String>) -> &mut Doc {
        self.blocks.push(Block::Line(s.into(), None));
        self
    }

    /// A line of prose whose continuation lines start at column `hang`.
    pub fn hang(&mut self, s: impl Into<String>, hang: usize) -> &mut Doc {
        self.blocks.push(Block::Line(s.into(), Some(hang)));
        self
    }

    /// Each line of `text` as a line of prose; empty lines as blank lines.
    pub fn text(&mut self, text: &str) -> &mut Doc {
        for l in text.lines() {
            if l.trim().is_empty() {
                self.blank();
            } else {
                self.line(l);
            }
        }
        self
    }

    pub fn heading(&mut self, s: impl Into<String>) -> &mut Doc {
        self.blocks.push(Block::Heading(s.into()));
        self
    }

    pub fn blank(&mut self) -> &mut Doc {
        self.blocks.push(Block::Blank);
        self
    }

    pub fn table(&mut self, t: Table) -> &mut Doc {
        self.blocks.push(Block::Table(t));
        self
    }

    pub fn pre(&mut self, s: impl Into<String>) -> &mut Doc {
        self.blocks.push(Block::Pre(s.into()));
        self
    }

    /// Appends another document's blocks.
    pub fn append(&mut self, other: Doc) -> &mut Doc {
        self.blocks.extend(other.blocks);
        self
    }

    /// The tables of the document.
    pub fn tables(&self) -> impl Iterator<Item = &Table> {
        self.blocks.iter().filter_map(|b| match b {
            Block::Table(t) => Some(t),
            _ => None,
        })
    }

    /// The document for a terminal `width` columns wide (`None`: nothing wrapped).
    pub fn render(&self, width: Option<usize>) -> String {
        let mut out = String::new();
        for b in &self.blocks {
            match b {
                Block::Line(s, hang) => {
                    let h = hang.unwrap_or_else(|| wrap::hang_of(s));
                    out.push_str(&wrap::wrap_hanging(s, width, h));
                    out.push('\n');
                }
                Block::Heading(s) => {
                    out.push_str(&wrap::wrap_hanging(s, width, 3));
                    out.push('\n');
                }
                Block::Blank => out.push('\n'),
                Block::Table(t) => out.push_str(&t.render(width)),
                Block::Pre(s) => {
                    // Laid out by hand: kept as it is where it fits, else wrapped like prose.
                    out.push_str(&wrap::wrap_text(s.trim_end_matches('\n'), width));
                    out.push('\n');
                }
            }
        }
        out
    }

    /// The document as Markdown: headings as `##`, tables as tables, prose lines as paragraphs, `Pre`
    /// as code blocks.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let mut prose = false;
        for b in &self.blocks {
            let para = matches!(b, Block::Line(..));
            if !para && prose {
                out.push('\n');
            }
            match b {
                Block::Line(s, _) => {
                    // A line of its own: two trailing spaces make a Markdown line break.
                    let t = s.trim().replace(NBSP, " ");
                    out.push_str(&md_escape_line(&t));
                    out.push_str("  \n");
                }
                Block::Heading(s) => {
                    out.push_str(&format!("## {}\n\n", s.trim().trim_matches('=').trim()));
                }
                Block::Blank => {}
                Block::Table(t) => {
                    out.push_str(&t.markdown());
                    out.push('\n');
                }
                Block::Pre(s) => {
                    out.push_str("```\n");
                    out.push_str(s.trim_end_matches('\n'));
                    out.push_str("\n```\n\n");
                }
            }
            prose = para;
        }
        out.trim_end().to_string() + "\n"
    }
}

/// A prose line that Markdown would read as something else (a heading, a list, a table) is escaped.
fn md_escape_line(s: &str) -> String {
    let s = s.replace('|', "\\|");
    match s.chars().next() {
        Some('#' | '-' | '*' | '+' | '>' | '=') => format!("\\{s}"),
        _ => s,
    }
}

impl From<&str> for Doc {
    fn from(text: &str) -> Doc {
        let mut d = Doc::new();
        d.text(text);
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_renders_and_exports() {
        let mut d = Doc::new();
        d.line("iolab sweep: 2 points");
        d.heading("== /dev/null ==");
        let mut t = Table::new(&[("method", Align::Left), ("IOPS", Align::Right)], 1);
        t.row(["psync", "3.69 M"]);
        d.table(t);
        d.line("FINDING      a finding that is long enough to wrap at forty columns, for sure");
        let text = d.render(Some(40));
        assert!(text.lines().all(|l| l.chars().count() <= 40), "{text}");
        let md = d.markdown();
        assert!(md.contains("## /dev/null\n"), "{md}");
        assert!(
            md.contains("| method | IOPS |\n| --- | ---: |\n| psync | 3.69 M |\n"),
            "{md}"
        );
    }
}
