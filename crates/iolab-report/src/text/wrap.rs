//! Wrapping a line of prose to a width without splitting a word.
//!
//! A line breaks only at spaces. A number and the unit after it ("12.4 µs", "3 ops", "50 %") stay
//! together, and so do words joined by a no-break space (U+00A0, written as a plain space). A word
//! longer than the width is left whole on a line of its own (it overflows; it is never cut). Widths are
//! counted in characters: iolab's text is ASCII plus a few one-column signs (µ, ±, ×).
//!
//! Continuation lines hang under the text of the first one: after a label column ("FINDING      ...",
//! a label followed by two or more spaces within the first 24 columns), after a list bullet ("- "),
//! else under the line's own indentation.

/// The no-break space: joins words that must not be split over two lines; printed as a plain space.
pub const NBSP: char = '\u{a0}';

/// Units that stay on the line of the number before them.
const UNITS: &[&str] = &[
    "ns", "µs", "us", "ms", "s", "min", "B", "KiB", "MiB", "GiB", "TiB", "B/s", "KiB/s", "MiB/s",
    "GiB/s", "TiB/s", "IOPS", "kIOPS", "MIOPS", "ops", "ops/s", "op", "%", "x", "calls", "GHz",
    "Hz", "ticks", "cores", "ns/op", "values", "bytes", "blocks", "runs", "rounds", "threads", "k",
    "M",
];

/// Display width of `s` in columns (characters; see the module doc).
pub fn width_of(s: &str) -> usize {
    s.chars().count()
}

/// Where continuation lines of `line` start (see the module doc).
pub fn hang_of(line: &str) -> usize {
    let lead = line.len() - line.trim_start_matches(' ').len();
    let rest = &line[lead..];
    if rest.starts_with("- ") || rest.starts_with("* ") {
        return lead + 2;
    }
    // A numbered item: "1. ", "12. ".
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits > 0 && rest[digits..].starts_with(". ") {
        return lead + digits + 2;
    }
    if let Some(i) = rest.find("  ") {
        let label = &rest[..i];
        if !label.is_empty() && width_of(label) <= 24 {
            let spaces = rest[i..].len() - rest[i..].trim_start_matches(' ').len();
            return lead + width_of(label) + spaces;
        }
    }
    lead
}

/// Whether `word` is a unit that belongs to the number before it (`prev`).
fn is_unit_after(prev: &str, word: &str) -> bool {
    let ends_in_digit = prev
        .trim_end_matches([')', ',', ';'])
        .chars()
        .last()
        .is_some_and(|c| c.is_ascii_digit());
    let w = word.trim_end_matches([',', ';', ':', '.', ')', ']']);
    ends_in_digit && UNITS.contains(&w)
}

/// A piece of a line that is never broken: words joined by glue, with the spaces before it.
struct Piece {
    sep: String,
    text: String,
}

/// The line cut into unbreakable pieces; the first piece's `sep` is the line's indentation.
fn pieces(line: &str) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::new();
    let mut rest = line;
    while !rest.is_empty() {
        let word_at = rest.find(|c| c != ' ').unwrap_or(rest.len());
        let sep = &rest[..word_at];
        rest = &rest[word_at..];
        let end = rest.find(' ').unwrap_or(rest.len());
        let word = &rest[..end];
        rest = &rest[end..];
        if word.is_empty() {
            break;
        }
        let glued = out
            .last()
            .is_some_and(|p| is_unit_after(p.text.rsplit(' ').next().unwrap_or(""), word));
        match out.last_mut() {
            Some(p) if glued => {
                p.text.push_str(sep);
                p.text.push_str(word);
            }
            _ => out.push(Piece {
                sep: sep.to_string(),
                text: word.to_string(),
            }),
        }
    }
    out
}

/// `line` wrapped to `width` columns, continuation lines indented by `hang` (no trailing newline).
/// `None`: not wrapped. No-break spaces come out as plain spaces.
pub fn wrap_hanging(line: &str, width: Option<usize>, hang: usize) -> String {
    let plain = |s: &str| s.replace(NBSP, " ");
    let Some(width) = width else {
        return plain(line.trim_end());
    };
    if width_of(line.trim_end()) <= width {
        return plain(line.trim_end());
    }
    // A hang that leaves almost nothing of the line falls back to half the width.
    let hang = if hang + 8 > width {
        hang.min(width / 2)
    } else {
        hang
    };
    let mut out = String::new();
    let mut cur = String::new();
    let mut cur_w = 0;
    for (i, p) in pieces(line).into_iter().enumerate() {
        let w = width_of(&p.text);
        if i == 0 {
            cur = p.sep.clone() + &p.text;
            cur_w = width_of(&cur);
        } else if cur_w + width_of(&p.sep) + w <= width {
            cur.push_str(&p.sep);
            cur.push_str(&p.text);
            cur_w += width_of(&p.sep) + w;
        } else {
            out.push_str(cur.trim_end());
            out.push('\n');
            cur = " ".repeat(hang) + &p.text;
            cur_w = hang + w;
        }
    }
    out.push_str(cur.trim_end());
    plain(&out)
}

/// `line` wrapped to `width` with the continuation indent [`hang_of`] finds.
pub fn wrap_line(line: &str, width: Option<usize>) -> String {
    wrap_hanging(line, width, hang_of(line))
}

/// Every line of `text` wrapped (see [`wrap_line`]); the final newline is kept as it was.
pub fn wrap_text(text: &str, width: Option<usize>) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    for l in text.split_inclusive('\n') {
        let (body, nl) = match l.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (l, ""),
        };
        out.push_str(&wrap_line(body, width));
        out.push_str(nl);
    }
    out
}

/// `text` as one line after `indent` spaces, its whitespace made single spaces: the printer wraps it to
/// the terminal (`iolab_report::text`), continuation lines hanging under the text (after a "- " bullet).
pub fn line(text: &str, indent: usize) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    format!("{:indent$}{}\n", "", words.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line fits (or is one word), and the words are the input's, in order, none split.
    fn check(input: &str, width: usize) -> String {
        let out = wrap_line(input, Some(width));
        for l in out.lines() {
            assert!(
                width_of(l) <= width || !l.trim().contains(' '),
                "{l:?} is wider than {width}"
            );
        }
        let words = |s: &str| -> Vec<String> {
            s.replace(NBSP, " ")
                .split_whitespace()
                .map(String::from)
                .collect()
        };
        assert_eq!(words(&out), words(input), "{out}");
        out
    }

    #[test]
    fn short_lines_stay_as_they_are() {
        assert_eq!(wrap_line("a  b   c", Some(80)), "a  b   c");
        assert_eq!(wrap_line("x".repeat(200).as_str(), None), "x".repeat(200));
    }

    #[test]
    fn long_lines_break_between_words_under_the_label() {
        let l = "FINDING      io_uring took 15.2x write()'s time per op (23016 vs 1517 ns/op): 100% of its \
                 requests were punted to io-wq worker threads; 0.50 context switches per op";
        let out = check(l, 60);
        assert!(out.lines().count() > 2, "{out}");
        for c in out.lines().skip(1) {
            assert!(
                c.starts_with(&" ".repeat(13)) && !c.starts_with(&" ".repeat(14)),
                "{c:?}"
            );
        }
    }

    #[test]
    fn numbers_keep_their_units() {
        let l = "latency      mean 271.2 ns  p50 260.4 ns  p90 280.4 ns  p99 290.4 ns  p99.9 440.7 ns  max 109.9 µs";
        for w in 20..90 {
            let out = check(l, w);
            for line in out.lines() {
                let first = line.split_whitespace().next().unwrap();
                assert!(!UNITS.contains(&first), "width {w}: a unit starts {line:?}");
            }
        }
    }

    #[test]
    fn a_word_longer_than_the_width_is_not_cut() {
        let long = format!("see /{}/file for more", "d".repeat(90));
        let out = check(&long, 40);
        assert!(out
            .lines()
            .any(|l| l.trim() == format!("/{}/file", "d".repeat(90))));
    }

    #[test]
    fn hanging_indents() {
        assert_eq!(hang_of("FINDING      text here"), 13);
        assert_eq!(hang_of("  - a bullet point"), 4);
        assert_eq!(hang_of("plain prose with single spaces"), 0);
        assert_eq!(hang_of("    indented prose"), 4);
        assert_eq!(hang_of("  12. a numbered question"), 6);
        let nb = format!("a{NBSP}b c");
        assert_eq!(wrap_line(&nb, Some(3)), "a b\nc");
    }
}
