//! The survey's findings grouped by cause: each cause said once, with every row it explains and that
//! row's own figures, so a cause that explains ten rows is one line, not ten sentences (each row's whole
//! sentence stays in the JSON's `findings`).

#[cfg(feature = "html")]
use crate::markup::esc;
use crate::text::wrap::line;
use iolab_engine::measure::memcopy::MemCopy;
use iolab_lab::findings_compare::{Compared, CAUSES};
use std::fmt::Write;

/// One group: what it says once, and the rows it names (each with its own figures).
struct Group {
    said: String,
    rows: Vec<String>,
}

/// Rows against the reference, grouped by each cause their sentences give (`slower`: the rows slower
/// than the reference, else the faster ones). A row whose sentence gives no cause is grouped as such.
fn against_groups(fs: &[Compared], slower: bool) -> Vec<Group> {
    let rule = if slower {
        "slower_than_reference"
    } else {
        "faster_than_reference"
    };
    let mine: Vec<&Compared> = fs.iter().filter(|c| c.rule == rule).collect();
    let mut out: Vec<Group> = Vec::new();
    let unexplained = ("unexplained", "no counter of the run explains it");
    for (kind, said) in CAUSES.iter().chain([&unexplained]) {
        let items: Vec<(String, String)> = mine
            .iter()
            .filter_map(|c| {
                let a = c.against.as_ref()?;
                let figures = if *kind == "unexplained" {
                    a.causes.is_empty().then(String::new)?
                } else {
                    format!(" ({})", a.causes.iter().find(|x| x.kind == *kind)?.figures)
                };
                Some((
                    a.way.clone(),
                    format!("{} {:.2}x{figures}", c.about, a.ratio),
                ))
            })
            .collect();
        let rows = by_way(items);
        if !rows.is_empty() {
            out.push(Group {
                said: said.to_string(),
                rows,
            });
        }
    }
    out
}

/// Items of rows as "way: item, item", a way once with all its items, ways in first-seen order.
fn by_way(items: Vec<(String, String)>) -> Vec<String> {
    let mut ways: Vec<(String, Vec<String>)> = Vec::new();
    for (way, item) in items {
        match ways.iter_mut().find(|w| w.0 == way) {
            Some(w) => w.1.push(item),
            None => ways.push((way, vec![item])),
        }
    }
    ways.into_iter()
        .map(|(w, items)| format!("{w} at {}", items.join(", ")))
        .collect()
}

/// The one reference every comparison is against ("write()"), if they share one.
fn one_reference(fs: &[Compared]) -> Option<&str> {
    let mut refs = fs
        .iter()
        .filter_map(|c| Some(c.against.as_ref()?.reference.as_str()));
    let first = refs.next()?;
    refs.all(|r| r == first).then_some(first)
}

/// `s` with each number (digits, with their separators) as '#', and the numbers in order.
fn numbers_aside(s: &str) -> (String, Vec<String>) {
    let (mut shape, mut nums, mut cur) = (String::new(), Vec::new(), String::new());
    for ch in s.chars() {
        let inside = !cur.is_empty() && (ch == '.' || ch == ',');
        if ch.is_ascii_digit() || inside {
            cur.push(ch);
            continue;
        }
        if !cur.is_empty() {
            // A separator the number ended on ("1.5," or "3.") is punctuation, not part of it.
            let tail: String = cur
                .chars()
                .rev()
                .take_while(|c| !c.is_ascii_digit())
                .collect();
            nums.push(cur.trim_end_matches(['.', ',']).to_string());
            shape.push('#');
            shape.extend(tail.chars().rev());
            cur.clear();
        }
        shape.push(ch);
    }
    if !cur.is_empty() {
        nums.push(cur.trim_end_matches(['.', ',']).to_string());
        shape.push('#');
    }
    (shape, nums)
}

/// The other findings (each row's own, the checks and crossovers), the same sentence (numbers aside)
/// once: the first row's words, then the other rows it holds for, each with its figures where they differ.
fn sentence_groups(fs: &[Compared]) -> Vec<Group> {
    let mut groups: Vec<(String, Vec<&Compared>)> = Vec::new();
    for c in fs.iter().filter(|c| c.against.is_none()) {
        let shape = format!("{}\u{0}{}", c.rule, numbers_aside(&c.text).0);
        match groups.iter_mut().find(|g| g.0 == shape) {
            Some(g) => g.1.push(c),
            None => groups.push((shape, vec![c])),
        }
    }
    groups
        .into_iter()
        .map(|(_, cs)| {
            let first = numbers_aside(&cs[0].text).1;
            let items = cs
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let nums = numbers_aside(&c.text).1;
                    // A row's own finding is about "way, workload".
                    let (way, what) = c.about.rsplit_once(", ").unwrap_or(("", &c.about));
                    let what = if i == 0 || nums == first || nums.is_empty() {
                        what.to_string()
                    } else {
                        format!("{what} ({})", nums.join(", "))
                    };
                    (way.to_string(), what)
                })
                .collect();
            let rows = by_way(items)
                .into_iter()
                .map(|r| r.trim_start_matches(" at ").to_string())
                .collect();
            Group {
                said: cs[0].text.clone(),
                rows,
            }
        })
        .collect()
}

fn render_groups(title: &str, groups: &[Group], o: &mut String) {
    if groups.is_empty() {
        return;
    }
    let _ = writeln!(o, "  {title}");
    for g in groups {
        o.push_str(&line(&format!("- {}: {}", g.said, g.rows.join("; ")), 4));
    }
}

/// The three parts of the grouped findings, each titled.
fn parts(fs: &[Compared]) -> [(String, Vec<Group>); 3] {
    let reference = one_reference(fs).unwrap_or("the workload's reference");
    [
        (
            format!("Slower than {reference}, by cause (time per op as a multiple of its):"),
            against_groups(fs, true),
        ),
        (
            format!("Faster than {reference}, by cause:"),
            against_groups(fs, false),
        ),
        (
            "Each row's own findings, each said once:".to_string(),
            sentence_groups(fs),
        ),
    ]
}

/// The grouped findings as HTML: a titled list per part.
#[cfg(feature = "html")]
pub fn html_groups(fs: &[Compared]) -> String {
    let mut o = String::new();
    for (title, groups) in parts(fs) {
        if groups.is_empty() {
            continue;
        }
        let _ = writeln!(o, "<p><b>{}</b></p>\n<ul class=\"by-cause\">", esc(&title));
        for g in groups {
            let _ = writeln!(o, "<li>{}: {}</li>", esc(&g.said), esc(&g.rows.join("; ")));
        }
        o.push_str("</ul>\n");
    }
    o
}

/// `page` with a survey's findings, grouped by cause, after the answer it opens with (unchanged where it
/// has none).
#[cfg(feature = "html")]
pub fn with_survey_findings(mut page: String, fs: &[Compared]) -> String {
    // Before the heading that follows the answer's.
    let Some(at) = page
        .find("<h2>The answer</h2>")
        .and_then(|a| page[a + 1..].find("<h2>").map(|b| a + 1 + b))
    else {
        return page;
    };
    if fs.is_empty() {
        return page;
    }
    let o = format!(
        "<h3>Why, by cause</h3>\n<p>Each cause once, with every row it explains and that row's figures; each \
         row's whole sentence is under Findings below.</p>\n{}",
        html_groups(fs)
    );
    page.insert_str(at, &o);
    page
}

/// The findings, each cause and each sentence once with the rows it holds for.
pub(crate) fn render(fs: &[Compared], mem: &MemCopy, o: &mut String) {
    let _ = writeln!(
        o,
        "\nFindings, each cause once with every row it explains (each row's sentence: the JSON's findings):"
    );
    o.push_str(&line(
        &format!("Throughputs are checked against what {}.", mem.describe()),
        2,
    ));
    if fs.is_empty() {
        o.push_str("  none: no rule found anything to say\n");
    }
    for (title, groups) in parts(fs) {
        render_groups(&title, &groups, o);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_set_aside_with_their_separators_but_not_the_punctuation_after() {
        let (shape, nums) = numbers_aside("took 1,234.5 ns, then 3. and 0.90 CPU");
        assert_eq!(shape, "took # ns, then #. and # CPU");
        assert_eq!(nums, ["1,234.5", "3", "0.90"]);
    }

    #[test]
    fn one_cause_is_one_line_naming_every_row_it_explains() {
        use iolab_lab::findings_compare::{Against, Cause};
        let row = |about: &str, ratio: f64, fig: &str| Compared {
            rule: "slower_than_reference".into(),
            about: about.into(),
            text: format!(
                "aio took {ratio}x write()'s time per op: native AIO completed {fig} ..."
            ),
            against: Some(Against {
                way: "aio".into(),
                reference: "write()".into(),
                ratio,
                causes: vec![Cause {
                    kind: "aio_inline".into(),
                    text: format!("native AIO completed {fig} of its requests inside io_submit"),
                    figures: fig.into(),
                }],
            }),
            cites: Vec::new(),
        };
        let own = |about: &str, n: &str| Compared {
            rule: "one_enter_per_request".into(),
            about: about.into(),
            text: format!("{n} requests per io_uring_enter: raise --qd and --batch to amortise it"),
            against: None,
            cites: Vec::new(),
        };
        let fs = vec![
            row("4 B writes to /dev/null", 5.4, "100%"),
            row("4 KiB writes to /dev/null", 4.8, "99%"),
            own("io_uring, 4 B writes to /dev/null", "1.00"),
            own("io_uring, 4 KiB writes to /dev/null", "1.00"),
            own("io_uring, 4 B writes to file", "1.02"),
        ];
        let mut text = String::new();
        render(&fs, &iolab_engine::measure::memcopy::sample(), &mut text);
        let lines: Vec<&str> = text.lines().collect();
        let aio: Vec<&&str> = lines
            .iter()
            .filter(|l| l.contains("inside io_submit"))
            .collect();
        assert_eq!(aio.len(), 1, "{text}");
        assert!(aio[0].contains("aio at 4 B writes to /dev/null 5.40x (100%), 4 KiB writes to /dev/null 4.80x (99%)"), "{text}");
        let own: Vec<&&str> = lines.iter().filter(|l| l.contains("amortise")).collect();
        assert_eq!(own.len(), 1, "{text}");
        assert!(own[0].contains("io_uring at 4 B writes to /dev/null, 4 KiB writes to /dev/null, 4 B writes to file (1.02)"), "{text}");
    }
}
