//! A suite's findings, the seed's published figures checked and the answers to its questions, as text
//! after the suite's tables (and the survey's findings, grouped the same way).

use iolab_lab::answers::Summary;

pub use crate::text::wrap::line;

/// The findings, the published figures checked and the answers, as printed after a suite's table.
pub fn render(sum: &Summary) -> String {
    let mut o = String::new();
    crate::findings_by_cause::render(&sum.findings, &sum.memory, &mut o);
    if !sum.published.is_empty() {
        o.push_str("\nThe seed's published throughputs, checked against the seed's own instruction counts, then this machine's memory copy rate:\n");
        for p in &sum.published {
            o.push_str(&line(&format!("- {}: {}", p.label, p.verdict), 2));
        }
    }
    if !sum.answers.is_empty() {
        o.push_str("\nAnswers (the seed's questions, answered from this run's figures):\n");
    }
    let shared = iolab_lab::answers::needed_by_all(&sum.answers);
    if let Some(w) = shared {
        o.push_str(&line(&format!("Every answer also needs {w}."), 2));
    }
    for (i, a) in sum.answers.iter().enumerate() {
        let src = if a.source.is_empty() {
            String::new()
        } else {
            format!(" ({})", a.source)
        };
        o.push_str(&line(
            &format!("{}. {}{src} [{}]", i + 1, a.question, a.status.word()),
            2,
        ));
        if !a.text.is_empty() {
            o.push_str(&line(&a.text, 5));
        }
        if let Some(n) = a.needs_besides(shared) {
            o.push_str(&line(&format!("Needs: {n}"), 5));
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_its_words_after_the_indent() {
        assert_eq!(line("a  b\n c", 2), "  a b c\n");
    }

    #[test]
    fn every_question_of_a_suite_is_printed_with_its_answer() {
        let s = iolab_lab::suite::load("uring").unwrap();
        let sum =
            iolab_lab::answers::summarize(&s, &[], &[], &iolab_engine::measure::memcopy::sample());
        let text = render(&sum);
        assert!(text.contains("Answers (the seed's questions"), "{text}");
        for qn in &s.questions {
            assert!(text.contains(&qn.text[..20.min(qn.text.len())]), "{text}");
        }
    }
}
