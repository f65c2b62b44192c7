//! Where an op's time went, per workload of `survey --target`: one stacked bar per method (in the
//! ranking's order) of its mean time per op before the block layer, queued there, on the device and
//! after the completion (`--layers`, the block layer's tracepoints in an untimed pass of each run).

use super::axis::Axis;
use super::charts::{bar_chart, BarChart, BarRow, BarSection};
use super::markup::{figure, Chart};
use iolab_lab::ranking::RankingTable;

/// The parts of an op, in time order.
pub(super) const PARTS: [&str; 4] = [
    "before the block layer",
    "queued in the block layer",
    "on the device",
    "after the completion",
];

/// Each run's mean time per op in each part, by its target and method's name.
pub(super) type Layers<'a> = std::collections::HashMap<(&'a str, &'a str), [f64; 4]>;

/// The figure for ranking `t` (nothing when none of its runs has times per layer).
pub(super) fn figure_of(t: &RankingTable, layers: &Layers, n: usize, o: &mut String) {
    let rows: Vec<BarRow> = t
        .rows
        .iter()
        .filter_map(|row| {
            let parts = *layers.get(&(t.target.as_str(), row.method.as_str()))?;
            let total: f64 = parts.iter().sum();
            // Each part as a share of the op: methods of times a thousand apart side by side; the
            // op's time printed with its name.
            (total > 0.0).then(|| BarRow {
                label: format!("{} ({})", row.method, iolab_engine::units::fmt_ns(total)),
                values: parts.iter().map(|v| v / total * 100.0).collect(),
            })
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    let title = format!("Where an op's time went: {}", t.target);
    let chart = BarChart {
        title: title.clone(),
        axis: Axis::amount("share of the op's time", "%", &[100.0]),
        parts: PARTS.iter().map(|p| p.to_string()).collect(),
        stacked: true,
        sections: vec![BarSection {
            title: String::new(),
            rows,
        }],
    };
    if let Ok(svg) = bar_chart(&chart) {
        figure(
            &Chart {
                name: format!("layers-{n}"),
                title,
                caption: "Each method's mean time per op (after its name) as shares, stacked to 100%, of \
                          where the block layer's own tracepoints put it (block_bio_queue, block_rq_issue, block_rq_complete, recorded in an ftrace \
                          instance during an untimed pass of the median round's run, matched to iolab's ops \
                          by sector): before its bio reached the block layer (the system call, filesystem, \
                          page cache, io-wq), queued there, on the device, and after the completion until \
                          iolab saw it. The time after each name is that pass's mean latency per op, the \
                          parts' sum; the ranking's time per op is wall time over ops at the same requests \
                          in flight."
                    .into(),
                svg,
                run: None,
            },
            o,
        );
    }
}
