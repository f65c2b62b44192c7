//! Distributions per run: latency percentiles on the nines scale (p50, p90, p99, p99.9 an equal step
//! apart), the latency CDF on the same scale so its tail shows, and two histograms drawn as bars, a panel
//! per run: the time between successive ops, and io_uring's requests per io_uring_enter.

use super::axis::Axis;
use super::charts::{Figure, Mark, Marks, Panel};
use super::model::{shared_spec, shares, uninformative, Out, Run};
use super::vary::{self, Legend, Part, MAX_SERIES};
use crate::fields;
use serde_json::Value;

/// A run with its histogram's bars (from, to, share in %).
type Bars<'a, 'b> = (&'b Run<'a>, Vec<(f64, f64, f64)>);

/// Histogram panels one figure draws at most (the caption names the runs left out).
/// Histogram panels drawn in one figure: every run's, or (past this) none, so no run is left out unsaid.
const MAX_PANELS: usize = 120;

/// (quantile, ns) of a run's latency that its op count resolves: quantiles below 1 with at least one op
/// above them. From the recorded CDF, else the named percentiles.
pub(super) fn quantiles(r: &Value) -> Vec<(f64, f64)> {
    let n = fields::LATENCY_COUNT.num(r);
    let resolved = |q: f64| q < 1.0 && n.is_none_or(|n| n * (1.0 - q) >= 1.0 - 1e-9);
    let mut q: Vec<(f64, f64)> = fields::LATENCY_CDF
        .at(r)
        .map(|a| {
            iolab_lab::series::items(a)
                .iter()
                .filter_map(|p| Some((p.get(0)?.as_f64()?, p.get(1)?.as_f64()?)))
                .collect()
        })
        .unwrap_or_default();
    if q.is_empty() {
        q = [
            (0.5, fields::LATENCY_P50),
            (0.9, fields::LATENCY_P90),
            (0.99, fields::LATENCY_P99),
            (0.999, fields::LATENCY_P999),
        ]
        .iter()
        .filter_map(|(p, f)| Some((*p, f.num(r)?)))
        .collect();
    }
    q.retain(|(p, ns)| resolved(*p) && *ns > 0.0);
    q
}

/// Latency percentiles and CDF in panels of at most MAX_SERIES runs, and the time between ops.
pub(super) fn latency_charts(io_runs: &[&Run], out: &mut Out) {
    let runs: Vec<&Run> = io_runs
        .iter()
        .copied()
        .filter(|x| x.has.quantiles)
        .collect();
    if runs.len() > MAX_LINES {
        // A panel of MAX_SERIES lines per group of runs: thousands of charts no one reads.
        let why = too_many_lines(runs.len());
        out.leave_out("Latency percentiles per run", why.clone());
        out.leave_out("Latency CDF", why);
    } else if !runs.is_empty() {
        let panels = |rs| vary::split(rs, &[], MAX_SERIES, &|g| g.len());
        for (part, groups) in vary::palette_parts(runs, &[], &panels) {
            let mine: Vec<&Run> = groups.iter().flat_map(|g| g.1.iter().copied()).collect();
            percentiles_chart(&mine, &groups, &part, out);
            cdf_chart(&mine, &groups, &part, out);
        }
    }
    gaps_chart(io_runs, out);
}

/// A line per run in each group's panel, colored by its name within the group (the same name, the same
/// color, in every panel).
/// Points a figure of lines draws in all, at most: past it each line is thinned to its share (an SVG of
/// millions of points is larger than the records it came from, and no screen shows them).
const FIGURE_POINTS: usize = 4_000;
/// The fewest points a thinned line keeps, however many lines share its figure.
const LINE_POINTS_MIN: usize = 32;

/// `pts` with at most `max` points (`max` >= 4): the first and the last, and of each of the stretches
/// between them the lowest and the highest, in order, so a dip or a spike stays drawn.
fn thin(pts: Vec<(f64, f64)>, max: usize) -> Vec<(f64, f64)> {
    let n = pts.len();
    if n <= max {
        return pts;
    }
    let stretches = (max - 2) / 2;
    let inner = &pts[1..n - 1];
    let mut out = vec![pts[0]];
    for k in 0..stretches {
        let s = &inner[k * inner.len() / stretches..(k + 1) * inner.len() / stretches];
        let lo = s
            .iter()
            .enumerate()
            .min_by(|a, b| a.1 .1.total_cmp(&b.1 .1));
        let hi = s
            .iter()
            .enumerate()
            .max_by(|a, b| a.1 .1.total_cmp(&b.1 .1));
        if let (Some((i, l)), Some((j, h))) = (lo, hi) {
            match i.cmp(&j) {
                std::cmp::Ordering::Less => out.extend([*l, *h]),
                std::cmp::Ordering::Greater => out.extend([*h, *l]),
                std::cmp::Ordering::Equal => out.push(*l),
            }
        }
    }
    out.push(pts[n - 1]);
    out
}

/// Lines a figure draws at most: past it the figure is left out, saying why (as histogram panels are).
const MAX_LINES: usize = 400;

/// Why a chart of a line per run is left out for `lines` runs (more than [`MAX_LINES`]).
fn too_many_lines(lines: usize) -> String {
    format!(
        "{} runs, a line each: more than the {MAX_LINES} a chart draws apart (iolab compare sets runs \
         side by side; a report of fewer records draws them)",
        iolab_engine::units::thousands_u64(lines as u64)
    )
}

/// A line per run, in panels by group; each line thinned (see [`thin`]) where the figure would draw more
/// than [`FIGURE_POINTS`]: the figure and the caption's words for that (or nothing). Err: why no figure
/// is drawn (more than [`MAX_LINES`] runs).
pub(super) fn run_lines(
    title: &str,
    groups: &[(String, Vec<&Run>)],
    (x, y): (&Axis, &Axis),
    points: &dyn Fn(&Run) -> Vec<(f64, f64)>,
) -> Result<(Figure, String), String> {
    let lines: usize = groups.iter().map(|g| g.1.len()).sum();
    if lines > MAX_LINES {
        return Err(too_many_lines(lines));
    }
    let most = (FIGURE_POINTS / lines.max(1)).max(LINE_POINTS_MIN);
    let mut longest = 0;
    let mut points = |r: &Run| {
        let p = points(r);
        longest = longest.max(p.len());
        thin(p, most)
    };
    let mut legend = Legend::default();
    let keys = vary::series_keys(groups, &[]);
    let panels = groups
        .iter()
        .map(|(t, g)| Panel {
            title: t.clone(),
            x: x.clone(),
            y: y.clone(),
            marks: g
                .iter()
                .map(|r| Mark {
                    series: legend.index(&vary::label_in(r, &keys)),
                    marks: Marks::Line(points(r)),
                })
                .collect(),
        })
        .collect();
    let note = match longest > most {
        true => format!(
            " Lines of more than {most} points ({} the longest) are drawn with {most}: the first, the last, \
             and the lowest and highest of each stretch between.",
            iolab_engine::units::thousands_u64(longest as u64)
        ),
        false => String::new(),
    };
    let fig = Figure {
        title: title.into(),
        legend: legend.0,
        panels,
    };
    Ok((fig, note))
}

pub(super) fn panels_note(groups: &[(String, Vec<&Run>)]) -> String {
    if groups.len() > 1 {
        format!(
            " A panel per group of runs ({}), named above it.",
            groups.len()
        )
    } else {
        String::new()
    }
}

fn percentiles_chart(runs: &[&Run], groups: &[(String, Vec<&Run>)], part: &Part, out: &mut Out) {
    let title = &format!("Latency percentiles per run{}", part.title);
    let tail = |r: &Run| -> Vec<(f64, f64)> {
        quantiles(&r.r())
            .into_iter()
            .filter(|(q, _)| *q >= 0.5)
            .collect()
    };
    let pts: Vec<(f64, f64)> = runs.iter().flat_map(|r| tail(r)).collect();
    let y = Axis::time("latency", &pts.iter().map(|p| p.1).collect::<Vec<_>>());
    if let Some(why) = uninformative(&pts.iter().map(|p| p.1).collect::<Vec<_>>(), &|v| {
        y.value_text(v)
    }) {
        out.leave_out(title, why);
        return;
    }
    let x = Axis::nines("percentile", &pts.iter().map(|p| p.0).collect::<Vec<_>>());
    let (fig, thinned) = match run_lines(title, groups, (&x, &y), &tail) {
        Ok(f) => f,
        Err(why) => return out.leave_out(title, why),
    };
    out.figure(
        &format!("latency-percentiles{}", part.name),
        title,
        format!(
            "Per-op latency (y, log axis) at each percentile from p50 up (x: a \"nines\" axis, -log10(1 - p), \
             so p90, p99, p99.9 and p99.99 are an equal step apart and the tail gets as much room as the \
             median). A run's percentiles beyond what its op count resolves (no op above them) are not \
             drawn. Synchronous methods: completion to completion; asynchronous: queued to completion \
             seen.{}{thinned} Shared spec: {}.",
            panels_note(groups),
            shared_spec(runs)
        ),
        &fig,
    );
}

fn cdf_chart(runs: &[&Run], groups: &[(String, Vec<&Run>)], part: &Part, out: &mut Out) {
    let title = &format!("Latency CDF{}", part.title);
    let pts: Vec<(f64, f64)> = runs.iter().flat_map(|r| quantiles(&r.r())).collect();
    let x = Axis::time("latency", &pts.iter().map(|p| p.1).collect::<Vec<_>>());
    let y = Axis::nines_share(
        "ops at or below",
        &pts.iter().map(|p| p.0).collect::<Vec<_>>(),
    );
    let (fig, thinned) = match run_lines(title, groups, (&x, &y), &|r| {
        quantiles(&r.r())
            .into_iter()
            .map(|(q, ns)| (ns, q))
            .collect()
    }) {
        Ok(f) => f,
        Err(why) => return out.leave_out(title, why),
    };
    out.figure(
        &format!("latency-cdf{}", part.name),
        title,
        format!(
            "Share of ops (y) completing within a latency (x, log axis), from the recorded quantiles of each \
             run (0, 1%, 5%, 10% ... 99.999%). The y axis is the \"nines\" scale of the percentile chart, so \
             the tail (p99 to p99.99) is as tall as the body; quantiles beyond what a run's op count resolves \
             are not drawn.{}{thinned} Shared spec: {}.",
            panels_note(groups),
            shared_spec(runs)
        ),
        &fig,
    );
}

/// Histograms as bars, a panel per run, on shared axes.
fn histogram_panels(runs: &[Bars], x: &Axis, y: &Axis) -> Vec<Panel> {
    let all: Vec<&Run> = runs.iter().map(|r| r.0).collect();
    let keys = vary::independent(&all, vary::varying(&all, &[]));
    runs.iter()
        .map(|(r, bars)| Panel {
            title: vary::label_in(r, &keys),
            x: x.clone(),
            y: y.clone(),
            marks: vec![Mark {
                series: 0,
                marks: Marks::Bars(bars.clone()),
            }],
        })
        .collect()
}

/// Time between ops as a histogram per run (drawn when some run has one).
fn gaps_chart(io_runs: &[&Run], out: &mut Out) {
    let title = "Time between ops (histogram)";
    // Buckets are half an octave wide: each from its bound / sqrt(2) to its bound.
    let runs: Vec<Bars> = io_runs
        .iter()
        .filter(|x| x.has.gap)
        .filter_map(|x| {
            let s = shares(fields::GAP_BUCKETS.at(&x.r())?)?;
            let bars = s
                .into_iter()
                .filter(|b| b.0 > 0.0)
                .map(|(b, share)| (b / std::f64::consts::SQRT_2, b, share * 100.0))
                .collect::<Vec<_>>();
            (!bars.is_empty()).then_some((*x, bars))
        })
        .collect();
    if runs.is_empty() {
        return;
    }
    let bounds: Vec<f64> = runs
        .iter()
        .flat_map(|r| r.1.iter().flat_map(|b| [b.0, b.1]))
        .collect();
    let x = Axis::time("time between op starts", &bounds);
    let shares: Vec<f64> = runs.iter().flat_map(|r| r.1.iter().map(|b| b.2)).collect();
    let y = Axis::amount("share of ops", "%", &shares);
    if let Some(why) = single_bar_everywhere(&runs, &x) {
        out.leave_out(title, why);
        return;
    }
    if runs.len() > MAX_PANELS {
        out.leave_out(
            title,
            format!(
                "{} runs have one, more panels than a page shows ({MAX_PANELS}); a report of fewer result \
                 files draws them, and each run's buckets are in its JSON (gap.buckets)",
                runs.len()
            ),
        );
        return;
    }
    let panels = histogram_panels(&runs, &x, &y);
    let all: Vec<&Run> = runs.iter().map(|r| r.0).collect();
    out.figure(
        "time-between-ops",
        title,
        format!(
            "Share of ops (y, bars) by the time from one op's start to the next op's start on the same \
             thread (x, log axis; buckets half an octave wide, empty ones have no bar); the seed thesis's \
             \"time between writes\". A panel per run ({}), on the same axes. Shared spec: {}.",
            runs.len(),
            shared_spec(&all)
        ),
        &Figure {
            title: title.into(),
            legend: Vec::new(),
            panels,
        },
    );
}

/// Why histograms that each hold one bar, the same one, carry no information; None otherwise.
fn single_bar_everywhere(runs: &[Bars], x: &Axis) -> Option<String> {
    let first = runs.first()?.1.first()?;
    let same = runs
        .iter()
        .all(|r| r.1.len() == 1 && r.1[0].0 == first.0 && r.1[0].1 == first.1);
    same.then(|| {
        format!(
            "every value of all {} runs falls in one bucket ({} to {})",
            runs.len(),
            x.value_text(first.0),
            x.value_text(first.1)
        )
    })
}

/// io_uring batch sizes, of the runs that used io_uring: a histogram per run.
pub(super) fn uring_batches_chart(io_runs: &[&Run], out: &mut Out) {
    let title = "io_uring batch sizes";
    let runs: Vec<Bars> = io_runs
        .iter()
        .filter(|x| x.has.uring)
        .filter_map(|x| {
            // Calls that carried no request (waits) are in the total, not drawn at x = 0.
            let s = shares(fields::URING_BATCHES.at(&x.r())?)?;
            let bars = s
                .into_iter()
                .filter(|b| b.0 > 0.0)
                .map(|(b, share)| (b / 1.25, b * 1.25, share * 100.0))
                .collect::<Vec<_>>();
            (!bars.is_empty()).then_some((*x, bars))
        })
        .collect();
    if runs.is_empty() {
        return;
    }
    let most = runs
        .iter()
        .flat_map(|r| r.1.iter().map(|b| b.1 / 1.25))
        .fold(1.0, f64::max);
    let mut ticks = vec![1.0];
    while *ticks.last().unwrap_or(&1.0) < most {
        ticks.push(ticks.last().unwrap_or(&1.0) * 2.0);
    }
    let x = Axis::measured(
        "requests per io_uring_enter",
        "requests",
        &ticks,
        super::axis::num,
    );
    if single_bar_everywhere(&runs, &x).is_some() {
        let n = runs[0].1[0].1 / 1.25;
        out.leave_out(
            title,
            format!(
                "every io_uring_enter call of all {} io_uring runs that submitted requests carried {} \
                 (the histogram would be one bar at 100%)",
                runs.len(),
                super::axis::num(n)
            ),
        );
        return;
    }
    let shares: Vec<f64> = runs.iter().flat_map(|r| r.1.iter().map(|b| b.2)).collect();
    let y = Axis::amount("share of io_uring_enter calls", "%", &shares);
    if runs.len() > MAX_PANELS {
        out.leave_out(
            title,
            format!(
                "{} io_uring runs, more panels than a page shows ({MAX_PANELS}); each run's batch sizes are \
                 in its JSON (uring.batch_histogram)",
                runs.len()
            ),
        );
        return;
    }
    let panels = histogram_panels(&runs, &x, &y);
    let all: Vec<&Run> = runs.iter().map(|r| r.0).collect();
    out.figure(
        "uring-batches",
        title,
        format!(
            "Share of io_uring_enter calls (y, bars) by the requests each submitted (x, log axis), counted by \
             iolab at every call; calls that only waited are counted in the shares but not drawn. A panel \
             per io_uring run ({}), on the same axes. Shared spec: {}.",
            runs.len(),
            shared_spec(&all)
        ),
        &Figure {
            title: title.into(),
            legend: Vec::new(),
            panels,
        },
    );
}

#[cfg(test)]
mod tests {
    use super::thin;

    #[test]
    fn a_thinned_line_keeps_its_ends_its_dips_and_its_spikes_in_order() {
        let pts: Vec<(f64, f64)> = (0..10_000).map(|i| (i as f64, 100.0)).collect();
        let mut pts = pts;
        pts[4_321].1 = 1.0; // a stall
        pts[7_654].1 = 900.0; // a spike
        let t = thin(pts.clone(), 64);
        assert!(t.len() <= 64, "{}", t.len());
        assert_eq!((t[0], t[t.len() - 1]), (pts[0], pts[9_999]));
        assert!(t.contains(&(4_321.0, 1.0)) && t.contains(&(7_654.0, 900.0)));
        assert!(t.windows(2).all(|w| w[0].0 < w[1].0), "in x order");
        // A line within the bound is drawn as it is.
        assert_eq!(thin(pts[..64].to_vec(), 64), pts[..64].to_vec());
    }
}
