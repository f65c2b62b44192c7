//! `iolab report`'s table of runs as a reader meets it: figures in scaled units with the unit in each
//! cell (the recorded value kept in `data-v`), and a `run --repeat 3` document shown as one run, "(3
//! repeats)", at the median of its repeats with the range under it, beside a single run of the same
//! workload.

mod common;
use common::*;

/// The runs table's rows, each a list of cells (the cell's opening tag, its visible text).
fn table_rows(html: &str) -> Vec<Vec<(String, String)>> {
    let start = html.find("<table class=\"runs\">").expect("a runs table");
    let end = start + html[start..].find("</table>").unwrap();
    let mut rows = Vec::new();
    for tr in html[start..end].split("<tr>").skip(1) {
        let mut cells = Vec::new();
        for c in tr.split("<td").skip(1) {
            let (tag, rest) = c.split_once('>').unwrap();
            let body = rest.split("</td>").next().unwrap();
            // Visible text: tags dropped, a line break as a space.
            let mut text = String::new();
            let mut in_tag = false;
            for ch in body.replace("<br>", " ").chars() {
                match ch {
                    '<' => in_tag = true,
                    '>' => in_tag = false,
                    c if !in_tag => text.push(c),
                    _ => {}
                }
            }
            cells.push((tag.to_string(), text));
        }
        if !cells.is_empty() {
            rows.push(cells);
        }
    }
    rows
}

fn data_v(tag: &str) -> f64 {
    let v = tag.split("data-v=\"").nth(1).expect("data-v");
    v[..v.find('"').unwrap()].parse().expect("a number")
}

#[test]
fn a_repeated_run_is_one_row_at_its_median_and_every_figure_has_its_unit() {
    let dir = tmpfs_dir();
    let (one, three) = (file(&dir, "one.json"), file(&dir, "three.json"));
    for (json, repeat, target) in [(&one, "1", "1.dat"), (&three, "3", "3.dat")] {
        let r = iolab(&[
            "run",
            "--method",
            "psync",
            "--target",
            &path_str(&file(&dir, target)),
            "--ops",
            "2000",
            "--count",
            "none",
            "--repeat",
            repeat,
            "--json",
            &path_str(json),
        ]);
        assert_eq!(r.code, 0, "run --repeat {repeat}: {}", r.stderr);
    }
    let html_path = file(&dir, "r.html");
    let r = iolab(&[
        "report",
        &path_str(&one),
        &path_str(&three),
        "-o",
        &path_str(&html_path),
    ]);
    assert_eq!(r.code, 0, "report: {}", r.stderr);
    let html = std::fs::read_to_string(&html_path).unwrap();
    let rows = table_rows(&html);
    // The single run and the repeated configuration: two rows, not four.
    assert_eq!(rows.len(), 2, "{html}");
    let rep: Vec<&Vec<(String, String)>> = rows
        .iter()
        .filter(|r| r[0].1.contains("(3 repeats)"))
        .collect();
    assert_eq!(rep.len(), 1, "{rows:?}");
    let rep = rep[0];
    // time/op (the third figure) at the median of the three runs' ns_per_op.
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&three).unwrap()).unwrap();
    let mut ns: Vec<f64> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| f64_of(r, &["ns_per_op"]))
        .collect();
    assert_eq!(ns.len(), 3);
    ns.sort_by(f64::total_cmp);
    let (tag, text) = &rep[3];
    assert!(
        (data_v(tag) - ns[1]).abs() <= 1e-6 * ns[1],
        "{tag} vs {ns:?}"
    );
    assert!(tag.contains("median of 3 repeats"), "{tag}");
    // The median and under it the range, both with units; three runs whose times print alike (a
    // fast /dev/null write: "2.9 µs" three times) show "all equal" instead of a range.
    assert!(
        (text.contains('-') && text.matches("s").count() >= 2)
            || (text.contains("all equal") && text.contains('s')),
        "{text}"
    );
    assert!(
        html.contains("repeats=K"),
        "the page says how repeats are drawn"
    );
    // Every figure but calls/op (whose header is its unit) carries a unit; none is a bare number.
    for row in &rows {
        for (i, (tag, text)) in row.iter().enumerate().skip(1) {
            assert!(tag.contains("data-v=\""), "{tag}");
            if i == 8 {
                continue;
            }
            let units = ["ns", "µs", "ms", " s", "ops/s", "B/s"];
            assert!(
                units.iter().any(|u| text.contains(u)),
                "column {i}: {text:?} has no unit"
            );
            assert!(text.parse::<f64>().is_err(), "column {i}: bare {text:?}");
        }
    }
    assert!(html.contains("<th>calls/op</th>") && html.contains("<th>time/op</th>"));
    assert!(!html.contains("<th>ns/op</th>") && !html.contains("p50 ns"));
}
