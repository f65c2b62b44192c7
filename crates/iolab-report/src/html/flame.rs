//! Where the time goes: for each profiled run (`--profile`), a flame graph of its folded stacks (drawn
//! by the inferno crate, then made static: no script, no event handlers, every id and style rule scoped
//! to the graph so several can share one page), a bar chart of its groups' shares, and a table of its
//! top functions; and over all profiled runs, the storage paper's Figure 4: the share of samples
//! copying between user and kernel space against block size.

use super::axis::{bytes, Axis};
use super::charts::{bar_chart, BarChart, BarRow, BarSection};
use super::markup::Chart;
use super::markup::{embed, esc};
use super::model::{Out, Run};
use crate::fields::{self, Field};
use serde_json::Value;
use std::fmt::Write as _;

#[cfg(feature = "flamegraphs")]
mod draw;
#[cfg(feature = "flamegraphs")]
use draw::flame_svg;

/// Without the `flamegraphs` feature (a board's build): no flame graph, and why.
#[cfg(not(feature = "flamegraphs"))]
fn flame_svg(_: &[String], _: &str, _: &str, _: &str) -> Result<String, String> {
    Err("flame graphs are drawn by a host build of iolab (a board's build leaves the inferno crate \
         out of its 3 MiB): run iolab report there on this file"
        .into())
}
/// Functions in each top list of the page's table.
const TOP: usize = 10;

/// The profile of a run, when it has one.
pub(super) fn profile(r: &Value) -> Option<&Value> {
    fields::PROFILE.at(r).filter(|p| !p.is_null())
}

/// The runs' flame graphs and group charts, each tied to its run (`Chart::run`).
pub(super) fn profile_charts(runs: &[Run], out: &mut Out) {
    let mut n = 0;
    for (i, x) in runs.iter().enumerate() {
        if !x.has.profile {
            continue;
        }
        n += 1;
        let name = format!("flame-{n}");
        let title = format!("Flame graph: {}", run_title(x));
        // The graph's own title is drawn in one line: the workload with a short target.
        let drawn = format!("Flame graph: {}", workload(&x.r(), true));
        let samples = fields::PROFILE_SAMPLES.num(&x.r()).unwrap_or(0.0);
        let sub = sampling(&x.r());
        let folded = fields::PROFILE_FOLDED
            .at(&x.r())
            .map(strings)
            .unwrap_or_default();
        // No stack, no graph and no shares: the run's section says why it has none.
        if folded.is_empty() {
            continue;
        }
        out.add_to(
            Some(i),
            &name,
            &title,
            format!(
                "Every sampled stack of {sub}, merged: each box is a function, the thread's name at the \
                 bottom and the function that was running on top of those it was called from. A box's \
                 width is its share of the {samples:.0} samples, so of the CPU time of that pass spent in \
                 it and in what it called; left to right is alphabetical, not time; colors are by name \
                 and mean nothing. A static SVG (no scripts): hover a box for its name, samples and share. \
                 Drawn with the inferno crate."
            ),
            flame_svg(&folded, &drawn, &sub, &name),
        );
        groups_chart(x, i, n, out);
    }
}

/// "method op bs=N buffered|O_DIRECT on target (the run's label)".
fn run_title(x: &Run) -> String {
    format!("{} ({})", workload(&x.r(), false), x.label)
}

/// "method op bs=N buffered|O_DIRECT on target"; `short`: a long target by its file name.
fn workload(r: &Value, short: bool) -> String {
    let bs = fields::SPEC_BS
        .num(r)
        .map(bytes)
        .unwrap_or_else(|| "?".into());
    let direct = if fields::SPEC_DIRECT.at(r).and_then(Value::as_bool) == Some(true) {
        "O_DIRECT"
    } else {
        "buffered"
    };
    let target = fields::SPEC_TARGET.text(r);
    let target = match target.rsplit_once('/') {
        Some((_, name)) if short && target.len() > 40 => format!(".../{name}"),
        _ => target,
    };
    format!(
        "{} {} bs={bs} {direct} on {target}",
        fields::SPEC_METHOD.text(r),
        fields::SPEC_OP.text(r),
    )
}

/// "the separate pass, cpu-clock at 997 Hz: 1000 samples (0 lost)".
fn sampling(r: &Value) -> String {
    let lost = fields::PROFILE_LOST.num(r).unwrap_or(0.0);
    format!(
        "the {} pass, {} at {} Hz: {} samples{}",
        fields::PROFILE_PASS.text(r),
        fields::PROFILE_EVENT.text(r),
        fields::PROFILE_HZ.text(r),
        fields::PROFILE_SAMPLES.text(r),
        if lost > 0.0 {
            format!(" ({lost:.0} lost: the buffer was full)")
        } else {
            String::new()
        }
    )
}

fn strings(v: &Value) -> Vec<String> {
    iolab_lab::series::items(v)
        .iter()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect()
}

/// A run's groups as bars: kernel groups in one color, user-space groups in another.
fn groups_chart(x: &Run, i: usize, n: usize, out: &mut Out) {
    let rows: Vec<BarRow> = shares(&x.r(), fields::PROFILE_GROUPS)
        .into_iter()
        .map(|(name, kernel, share)| {
            let v = share * 100.0;
            BarRow {
                label: name,
                values: if kernel { vec![v, 0.0] } else { vec![0.0, v] },
            }
        })
        .collect();
    let title = format!("Where the time goes: {}", x.label);
    let chart = BarChart {
        title: title.clone(),
        axis: Axis::amount(
            "share of samples",
            "%",
            &rows
                .iter()
                .map(|r| r.values[0] + r.values[1])
                .collect::<Vec<_>>(),
        ),
        parts: vec!["kernel".into(), "user space".into()],
        stacked: true,
        sections: vec![BarSection {
            title: String::new(),
            rows,
        }],
    };
    out.add_to(
        Some(i),
        &format!("profile-groups-{n}"),
        &title,
        format!(
            "Share (%) of the samples of {} by what the sampled code was doing, from the function names \
             on each stack (the first group that matches from the leaf down).",
            sampling(&x.r())
        ),
        bar_chart(&chart),
    );
}

/// (name, kernel, share) of each of a run's profile shares at `list`.
fn shares(r: &Value, list: Field) -> Vec<(String, bool, f64)> {
    let Some(list) = list.at(r) else {
        return Vec::new();
    };
    iolab_lab::series::items(list)
        .iter()
        .filter_map(|s| {
            Some((
                fields::SHARE_NAME.text(s),
                fields::SHARE_KERNEL.at(s)?.as_bool()?,
                fields::SHARE_SHARE.num(s)?,
            ))
        })
        .collect()
}

/// The share of a run's samples in the "copy to/from user" group (0 when the group had none; None when
/// the run has no profile or its profile no samples).
pub(crate) fn copy_share(r: &Value) -> Option<f64> {
    profile(r)?;
    if fields::PROFILE_SAMPLES.num(r)? <= 0.0 {
        return None;
    }
    Some(
        shares(r, fields::PROFILE_GROUPS)
            .into_iter()
            .find(|g| g.0 == fields::COPY_GROUP)
            .map_or(0.0, |g| g.2),
    )
}

/// The page's section of every profiled run: its sampling, its charts, and its top functions.
pub(super) fn section(runs: &[Run], charts: &mut [Chart], keep_svgs: bool, o: &mut String) {
    let mut any = false;
    for (i, x) in runs.iter().enumerate() {
        if !x.has.profile {
            continue;
        }
        if !any {
            o.push_str("<h2>Where the time goes</h2>\n");
            any = true;
        }
        let _ = writeln!(
            o,
            "<h3>{}</h3>\n<p>Sampled in {}.</p>",
            esc(&run_title(x)),
            esc(&sampling(&x.r()))
        );
        let notes: Vec<String> = [fields::PROFILE_UNSYMBOLIZED, fields::PROFILE_NOTES]
            .iter()
            .flat_map(|f| f.at(&x.r()).map(strings).unwrap_or_default())
            .collect();
        if !notes.is_empty() {
            o.push_str("<ul>");
            for n in &notes {
                let _ = write!(o, "<li>{}</li>", esc(n));
            }
            o.push_str("</ul>\n");
        }
        let mut mine: Vec<&mut Chart> = charts.iter_mut().filter(|c| c.run == Some(i)).collect();
        if !mine.iter().any(|c| c.name.starts_with("flame-")) {
            o.push_str("<p>No flame graph: the profile holds no stacks.</p>\n");
        }
        for c in mine.iter_mut() {
            embed(c, keep_svgs, o);
        }
        top_table(&x.r(), o);
    }
}

/// The top functions by self and by inclusive share, side by side.
fn top_table(r: &Value, o: &mut String) {
    let s = shares(r, fields::PROFILE_TOP_SELF);
    let t = shares(r, fields::PROFILE_TOP_INCLUSIVE);
    if s.is_empty() && t.is_empty() {
        return;
    }
    o.push_str(
        "<table><tr><th>#</th><th>function (self: running)</th><th>self %</th>\
         <th>function (inclusive: on the stack)</th><th>inclusive %</th></tr>\n",
    );
    let cell = |v: Option<&(String, bool, f64)>| match v {
        Some((name, kernel, share)) => format!(
            "<td class=\"fn\">{}{}</td><td>{:.1}</td>",
            esc(name),
            if *kernel { " [k]" } else { "" },
            share * 100.0
        ),
        None => "<td></td><td></td>".into(),
    };
    for k in 0..s.len().max(t.len()).min(TOP) {
        let _ = writeln!(
            o,
            "<tr><td>{}</td>{}{}</tr>",
            k + 1,
            cell(s.get(k)),
            cell(t.get(k))
        );
    }
    o.push_str("</table>\n<p>[k]: kernel code.</p>\n");
}

#[cfg(test)]
mod tests {
    use super::super::build;
    use serde_json::{json, Value};

    /// A buffered write's record with a made-up profile: 80% copying, 20% in iolab.
    fn profiled(bs: u64, direct: bool, copy: u64) -> Value {
        let rest = 1000 - copy;
        json!({
            "point": {"step": "disk", "op": "write", "direct": direct.to_string(), "bs": bs.to_string()},
            "result": {
                "spec": {"method": "psync", "op": "write", "bs": bs, "direct": direct, "target": "/var/tmp/x.dat"},
                "mib_s": 100.0, "iops": 10.0, "ns_per_op": 100.0, "wall_s": 1.0,
                "latency": {"p50_ns": 100.0, "p90_ns": 150.0, "p99_ns": 300.0, "p999_ns": 900.0,
                            "cdf": [[0.0, 50.0], [1.0, 1000.0]]},
                "profile": {
                    "pass": "separate", "event": "cpu-clock", "frequency_hz": 997,
                    "samples": 1000, "lost": 0, "unsymbolized": [],
                    "groups": [
                        {"name": "copy to/from user", "kernel": true, "samples": copy, "share": copy as f64 / 1000.0},
                        {"name": "iolab", "kernel": false, "samples": rest, "share": rest as f64 / 1000.0}
                    ],
                    "top_self": [{"name": "rep_movs_alternative", "kernel": true, "samples": copy, "share": copy as f64 / 1000.0}],
                    "top_inclusive": [{"name": "vfs_write", "kernel": true, "samples": copy, "share": copy as f64 / 1000.0}],
                    "folded": [
                        format!("iolab-w;entry_SYSCALL_64;do_syscall_64;ksys_write;vfs_write;ext4_buffered_write_iter;generic_perform_write;copy_folio_from_iter_atomic;rep_movs_alternative {copy}"),
                        format!("iolab-w;iolab::runner::loops::<a & b> {rest}")
                    ],
                    "notes": ["sampled <apart>"]
                }
            }
        })
    }

    fn texts(svg: &str) -> Vec<String> {
        let doc = roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{e}: {svg}"));
        doc.descendants()
            .filter(|n| n.has_tag_name("text") || n.has_tag_name("title"))
            .filter_map(|n| n.text().map(|t| t.trim().to_string()))
            .collect()
    }

    #[test]
    fn a_profiled_run_gets_a_static_flame_graph() {
        let recs = vec![profiled(4096, false, 800), profiled(65536, true, 300)];
        let rep = build(&recs, &["x.jsonl".into()]);
        let flames: Vec<_> = rep
            .charts
            .iter()
            .filter(|c| c.name.starts_with("flame-"))
            .collect();
        assert_eq!(flames.len(), 2);
        for (i, f) in flames.iter().enumerate() {
            assert_eq!(f.run, Some(i));
            let t = texts(&f.svg);
            let want = [
                "Flame graph: psync write bs=4 KiB buffered on /var/tmp/x.dat",
                "Flame graph: psync write bs=64 KiB O_DIRECT on /var/tmp/x.dat",
            ][i];
            assert!(t.iter().any(|x| x == want), "{want}: {t:?}");
            assert!(t.iter().any(|x| x.contains("1000 samples")), "{t:?}");
            assert!(
                t.iter().any(|x| x.starts_with("rep_movs_alternative (")),
                "{t:?}"
            );
            assert!(t.iter().any(|x| x.contains("<a & b>")), "{t:?}");
            for bad in [
                "<script",
                "onload",
                "onclick",
                "onmouseover",
                "Reset Zoom",
                "<!DOCTYPE",
            ] {
                assert!(!f.svg.contains(bad), "{bad} in {}", f.svg);
            }
            // Ids and style are the graph's own, so two graphs share a page.
            let doc = roxmltree::Document::parse(&f.svg).unwrap();
            let id = &f.name;
            assert_eq!(doc.root_element().attribute("id"), Some(id.as_str()));
            for n in doc.descendants().filter(|n| n.attribute("id").is_some()) {
                assert!(
                    n.attribute("id").unwrap().starts_with(id.as_str()),
                    "{:?}",
                    n
                );
            }
            let style = doc.descendants().find(|n| n.has_tag_name("style")).unwrap();
            for rule in style
                .text()
                .unwrap()
                .split('}')
                .filter(|r| !r.trim().is_empty())
            {
                assert!(rule.trim().starts_with(&format!("#{id}")), "{rule}");
            }
        }
        let groups = rep
            .charts
            .iter()
            .find(|c| c.name == "profile-groups-1")
            .unwrap();
        let t = texts(&groups.svg);
        assert!(
            t.contains(&"copy to/from user".to_string()) && t.contains(&"user space".to_string())
        );
        // The page: one section per profiled run, with its graphs and top functions, and no script.
        let html = &rep.html;
        assert!(html.contains("<h2>Where the time goes</h2>"));
        assert_eq!(html.matches("<h3>psync write").count(), 2);
        assert!(html.contains(
            "<h3>psync write bs=4 KiB buffered on /var/tmp/x.dat (disk op=write direct=false bs=4096)</h3>"
        ));
        assert!(
            html.contains("rep_movs_alternative [k]") && html.contains("sampled &lt;apart&gt;")
        );
        assert!(!html.contains("<script") && !html.contains(" onload="));
    }

    #[test]
    fn copy_share_is_drawn_against_the_measured_sizes() {
        let recs: Vec<Value> = [(512, 100), (65536, 500), (1 << 20, 800)]
            .iter()
            .flat_map(|&(bs, c)| [profiled(bs, false, c), profiled(bs, true, c / 2)])
            .collect();
        let rep = build(&recs, &["x.jsonl".into()]);
        let c = rep
            .charts
            .iter()
            .find(|c| c.name == "copy-share-vs-bs")
            .unwrap();
        assert_eq!(c.run, None);
        let t = texts(&c.svg);
        for want in [
            "Copying to and from user space against block size",
            "direct=false",
            "direct=true",
            "512 B",
            "64 KiB",
            "1 MiB",
        ] {
            assert!(t.contains(&want.to_string()), "{want}: {t:?}");
        }
        assert!(super::copy_share(&recs[0]["result"]) == Some(0.1));
        // In the charts section, above the profiles.
        let chart_pos = rep.html.find("id=\"copy-share-vs-bs\"").unwrap();
        assert!(chart_pos < rep.html.find("Where the time goes").unwrap());
        // A run that was not profiled has no share, and no section.
        let mut plain = recs[0].clone();
        plain["result"]["profile"] = Value::Null;
        assert_eq!(super::copy_share(&plain["result"]), None);
        // Nor has a profile without samples (nothing to share out).
        let mut empty = recs[0].clone();
        empty["result"]["profile"]["samples"] = json!(0);
        assert_eq!(super::copy_share(&empty["result"]), None);
        let rep = build(&[plain], &["x.jsonl".into()]);
        assert!(!rep.html.contains("Where the time goes"));
        assert!(rep.charts.iter().all(|c| c.run.is_none()));
    }

    #[test]
    fn no_stacks_no_flame_graph_but_the_section_says_so() {
        let mut rec = profiled(4096, false, 800);
        rec["result"]["profile"]["folded"] = json!([]);
        let rep = build(&[rec], &["x.jsonl".into()]);
        assert!(!rep.charts.iter().any(|c| c.name.starts_with("flame-")));
        assert!(rep
            .html
            .contains("No flame graph: the profile holds no stacks."));
    }
}
