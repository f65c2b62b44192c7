//! What the commands show while they work, on a terminal's stderr: the bar of sweeps, suites and
//! `run --repeat` (with the per-point lines on stdout), and the bar `iolab run` draws from a forked helper.

use iolab_core::progress::{Draw, Goal, Position, Watcher};
use iolab_core::series;

/// Per-point lines on stdout, and on a terminal's stderr a progress bar with ETA between points. The bar
/// is drawn only when a point starts or ends (no ticking thread: a second thread in a one-thread run
/// makes every syscall of it dearer, see cleanup.rs).
pub(crate) struct Progress {
    pub(crate) bar: Option<indicatif::ProgressBar>,
    failed: Option<iolab_core::error::Error>,
}

impl Progress {
    pub(crate) fn new(what: &str, n: usize) -> Progress {
        let bar = (n > 0 && iolab_core::sys::isatty(2)).then(|| {
            let b = indicatif::ProgressBar::with_draw_target(
                Some(n as u64),
                indicatif::ProgressDrawTarget::stderr(),
            );
            if let Ok(st) = indicatif::ProgressStyle::with_template(
                "{prefix} [{bar:30}] {pos}/{len} points, {elapsed} so far, ETA {eta}  {wide_msg}",
            ) {
                b.set_style(st.progress_chars("=> "));
            }
            b.set_prefix(format!("iolab {what}"));
            b
        });
        Progress { bar, failed: None }
    }

    /// A point's line on stdout; the first write that fails is kept (`failed`) and later lines are not
    /// tried: the points still run and are recorded, and the command ends with the error.
    fn say(&mut self, line: String) {
        if self.failed.is_some() {
            return;
        }
        let r = match &self.bar {
            Some(b) => b.suspend(|| crate::output::outln(&line)),
            None => crate::output::outln(&line),
        };
        self.failed = r.err();
    }

    /// The first write to stdout that failed, if any.
    pub(crate) fn take_failure(&mut self) -> Option<iolab_core::error::Error> {
        self.failed.take()
    }

    pub(crate) fn event(&mut self, ev: &series::Event) {
        match ev {
            series::Event::Start { label, .. } => {
                if let Some(b) = &self.bar {
                    b.set_message(label.to_string());
                }
            }
            series::Event::Done { i, n, label, rec } => {
                self.say(point_line(*i, *n, label, rec));
                if let Some(b) = &self.bar {
                    b.inc(1);
                }
            }
            series::Event::Skipped { .. } => {}
        }
    }

    pub(crate) fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// One line per finished point.
fn point_line(i: usize, n: usize, label: &str, rec: &serde_json::Value) -> String {
    let f = |r: &serde_json::Value, k: &str| r.get(k).and_then(|v| v.as_f64()).unwrap_or(f64::NAN);
    match (rec.get("result"), rec.get("error").and_then(|e| e.as_str())) {
        (Some(r), _) if r.get("workload").and_then(|w| w.as_str()) == Some("decimal-lines") => {
            format!(
                "{:>4}/{n}  {label:<50}  {:>10.3} ms first write to fsync done, verified",
                i + 1,
                f(r, "wall_s") * 1e3
            )
        }
        (Some(r), _) if r.get("workload").and_then(|w| w.as_str()) == Some("clock") => format!(
            "{:>4}/{n}  {label:<50}  one clock read {:.1} ns",
            i + 1,
            r["clock"]["overhead_ns"].as_f64().unwrap_or(f64::NAN)
        ),
        (Some(r), _) => format!(
            "{:>4}/{n}  {label}  {}",
            i + 1,
            crate::views::point_figures(r)
        ),
        (None, Some(e)) => format!("{:>4}/{n}  {label:<50}  not run: {e}", i + 1),
        _ => String::new(),
    }
}

/// `iolab run`'s progress bar with ETA, on a terminal's stderr, once a run has taken a second. A forked
/// helper process (`iolab_core::progress`) draws it from a counter in shared memory the workers add to
/// every 1024 ops: the measured process gains no thread and writes nothing to the terminal while it is
/// timed. `None` when stderr is not a terminal (or the helper cannot be had); otherwise give the
/// watcher's counter to the runner and stop the watcher after the run.
pub(crate) fn run_bar(spec: &iolab_core::spec::Spec) -> Option<Watcher> {
    if !iolab_core::sys::isatty(2) {
        return None;
    }
    Watcher::start(spec, RunBar { bar: None })
}

/// The helper's drawing: an indicatif bar made at the first draw.
struct RunBar {
    bar: Option<indicatif::ProgressBar>,
}

impl Draw for RunBar {
    fn show(&mut self, goal: Goal, at: Position) {
        let b = self.bar.get_or_insert_with(|| {
            let (len, tmpl) = match goal {
                Goal::Ops(n) => (
                    n,
                    "iolab run [{bar:30}] {human_pos}/{human_len} ops of the timed pass, ETA {eta}",
                ),
                Goal::Millis(ms) => (
                    ms,
                    "iolab run [{bar:30}] {human_pos}/{human_len} ms of the timed pass, ETA {eta}",
                ),
                Goal::Open => (1, "iolab run {spinner}"),
            };
            let b = indicatif::ProgressBar::with_draw_target(
                Some(len),
                indicatif::ProgressDrawTarget::stderr(),
            );
            if let Ok(st) = indicatif::ProgressStyle::with_template(tmpl) {
                b.set_style(st.progress_chars("=> "));
            }
            b
        });
        match at {
            Position::At(p) => b.set_position(p),
            Position::Tick => b.tick(),
        }
    }

    fn clear(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}
