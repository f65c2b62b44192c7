//! The seeds' own comparisons: every way a suite ran one workload, side by side. The Pi thesis's Figures
//! 18, 20 and 22 set write(), io_uring and its "dma" (mmap) path beside each other per target and block
//! size; a suite runs each way as a step of its own, which the charts against a varied key keep apart (a
//! panel per step). Here a section per workload (direction, block size, target, O_DIRECT, pattern,
//! threads) that two or more steps ran holds a bar per step: its time per op, and its CPU per op (user +
//! system of every thread, the thesis's Figure 22).

use super::axis::Axis;
use super::charts::{self, BarChart, BarRow, BarSection};
use super::model::{shared_spec, uninformative, Out, Run};
use super::vary::val;
use crate::fields;

/// The keys that make two runs the same workload.
const WORKLOAD: [&str; 6] = ["op", "bs", "target", "direct", "pattern", "threads"];

/// The workload of a run: its values of the [`WORKLOAD`] keys.
fn workload(x: &Run) -> Vec<String> {
    WORKLOAD.iter().map(|k| val(x, k).to_string()).collect()
}

/// The runs grouped by workload, each group holding runs of two or more suite steps, in record order,
/// each titled by the workload keys whose values differ between the groups ("bs=4 B target=/dev/null").
fn sections<'r, 'a>(runs: &[&'r Run<'a>]) -> Vec<(String, Vec<&'r Run<'a>>)> {
    let mut groups: Vec<(Vec<String>, Vec<&Run>)> = Vec::new();
    for x in runs.iter().copied().filter(|x| !val(x, "step").is_empty()) {
        let w = workload(x);
        match groups.iter_mut().find(|(k, _)| *k == w) {
            Some((_, g)) => g.push(x),
            None => groups.push((w, vec![x])),
        }
    }
    groups.retain(|(_, g)| g.iter().any(|x| val(x, "step") != val(g[0], "step")));
    let differ: Vec<usize> = (0..WORKLOAD.len())
        .filter(|i| groups.iter().any(|(k, _)| k[*i] != groups[0].0[*i]))
        .collect();
    groups
        .into_iter()
        .map(|(k, g)| {
            let t = differ
                .iter()
                // A suite's target as the text says it ("the disk file writes.dat"), never its placeholder.
                .map(|i| super::model::kv(WORKLOAD[*i], &k[*i]))
                .collect::<Vec<_>>()
                .join(" ");
            (t, g)
        })
        .collect()
}

/// A bar's label: the step, and the method where the step ran several in the section.
fn label(x: &Run, g: &[&Run]) -> String {
    let step = val(x, "step");
    let methods = g
        .iter()
        .filter(|y| val(y, "step") == step)
        .any(|y| val(y, "method") != val(x, "method"));
    if methods {
        format!("{step} method={}", val(x, "method"))
    } else {
        step.to_string()
    }
}

/// A figure: its chart name, title, what it is, and its value in a run.
type Fig<'f> = (&'f str, &'f str, &'f str, &'f dyn Fn(&Run) -> Option<f64>);

/// Time per op and CPU per op, a bar per step, a section per workload two or more steps ran.
pub(super) fn ways_charts(io_runs: &[&Run], out: &mut Out) {
    let secs = sections(io_runs);
    if secs.is_empty() {
        return;
    }
    let cpu_ns = |x: &Run| {
        // No CPU per op where its CPUs could not have spent that CPU time in the span.
        let r = x.r();
        if iolab_lab::series::cpu_withheld(&r).is_some() {
            return None;
        }
        let ops = fields::IOPS.num(&r)? * fields::WALL_S.num(&r)?;
        let cpu = fields::CPU_USER_S.num(&r)? + fields::CPU_SYS_S.num(&r)?;
        (ops >= 1.0).then(|| cpu * 1e9 / ops)
    };
    let figs: [Fig; 2] = [
        (
            "ways-time-per-op",
            "Time per op, every way of doing each workload",
            "the timed span's wall time over its ops",
            &|x| fields::NS_PER_OP.num(&x.r()),
        ),
        (
            "ways-cpu-per-op",
            "CPU per op, every way of doing each workload",
            "user + system CPU time of the whole process (every thread, io_uring's SQPOLL and io-wq helpers \
             included) over its ops, the thesis's Figure 22",
            &cpu_ns,
        ),
    ];
    for (name, title, about, value) in figs {
        let ys: Vec<f64> = secs
            .iter()
            .flat_map(|(_, g)| g.iter().filter_map(|x| value(x)))
            .collect();
        if ys.is_empty() {
            continue;
        }
        // Bars from zero, on a log axis only where the values span a factor of 100 or more.
        let axis = Axis::time("per op", &ys)
            .linear_from_zero(&ys)
            .log_if_wide(&ys);
        if let Some(why) = uninformative(&ys, &|v| axis.value_text(v)) {
            out.leave_out(title, why);
            continue;
        }
        let sections = secs
            .iter()
            .map(|(t, g)| BarSection {
                title: t.clone(),
                rows: g
                    .iter()
                    .filter_map(|x| {
                        Some(BarRow {
                            label: label(x, g),
                            values: vec![value(x)?],
                        })
                    })
                    .collect(),
            })
            .collect();
        let all: Vec<&Run> = secs.iter().flat_map(|(_, g)| g.iter().copied()).collect();
        out.add(
            name,
            title,
            format!(
                "{title}: {about}; a bar per suite step (each a way the seed compared: the Pi thesis's write(), \
                 io_uring and \"dma\" (mmap) rows side by side), a section per workload that two or more steps \
                 ran. Shared spec: {}.",
                shared_spec(&all)
            ),
            charts::bar_chart(&BarChart {
                title: title.into(),
                axis,
                parts: Vec::new(),
                stacked: false,
                sections,
            }),
        );
    }
}
