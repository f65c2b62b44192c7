//! What the commands show while they work, on a terminal's stderr: a status line drawn by a helper
//! process (`iolab_engine::progress`), which names the run ("run 3/12" and its label in a sweep, suite or
//! `run --repeat`) and the pass it is in (counting pass, timed pass ...), how far the pass is, its live
//! rate (ops/s and MiB/s) and its ETA: exact for a --duration pass, from the live rate otherwise. The
//! per-run lines go to stdout while the helper is on hold (its line cleared).

use iolab_engine::progress::{Board, Draw, View, Watcher};
use iolab_lab::series;
use std::io::Write;
use std::time::{Duration, Instant};

/// A single `iolab run` shows nothing for its first second (a short run draws no line).
const QUIET: Duration = Duration::from_secs(1);

/// Per-run lines on stdout and, on a terminal's stderr, the status line of the run going on.
pub(crate) struct Progress {
    board: Option<Board>,
    watcher: Option<Watcher>,
    /// Runs to make, started so far, finished so far and when the first started.
    n: usize,
    started: usize,
    finished: usize,
    since: Instant,
    failed: Option<iolab_engine::error::Error>,
}

impl Progress {
    /// `n` runs of `what` ("sweep", "suite NAME", "run --repeat"); no status line when `n` is 0 or stderr
    /// is not a terminal. Make it before the first run: its helper is forked here (see
    /// `iolab_engine::progress`).
    pub(crate) fn new(what: &str, n: usize) -> Progress {
        let board = (n > 0 && iolab_sys::isatty(2)).then(Board::new).flatten();
        let line = Line {
            title: format!("iolab {what}"),
        };
        Progress {
            board,
            watcher: board.and_then(|b| Watcher::start(b, Duration::ZERO, line)),
            n,
            started: 0,
            finished: 0,
            since: Instant::now(),
            failed: None,
        }
    }

    /// The board the runs report to (give it to the runner).
    pub(crate) fn board(&self) -> Option<Board> {
        self.watcher.as_ref().and(self.board)
    }

    /// The next run starts, labelled `label`: the status line names it.
    pub(crate) fn start(&mut self, label: &str) {
        self.started += 1;
        let Some(board) = self.board() else { return };
        // What the runs after this one may take, at the mean of those finished.
        let after = self.n.saturating_sub(self.started);
        let then_s = (self.finished > 0)
            .then(|| self.since.elapsed().as_secs_f64() / self.finished as f64 * after as f64);
        board.set_run(self.started, self.n, label, then_s);
    }

    /// The status line is cleared (and stays away until [`Progress::release`]), so that the command can
    /// print.
    pub(crate) fn hold(&self) {
        if let Some(b) = self.board() {
            b.hold();
        }
    }

    pub(crate) fn release(&self) {
        if let Some(b) = self.board() {
            b.release();
        }
    }

    /// A run finished: its line on stdout, the status line held meanwhile; the first write that fails
    /// is kept (`failed`) and later lines are not tried: the runs still run and are recorded, and the
    /// command ends with the error.
    pub(crate) fn say(&mut self, line: &str) {
        self.finished += 1;
        if self.failed.is_none() {
            self.hold();
            self.failed = crate::output::outln(line).err();
            self.release();
        }
    }

    /// The first write to stdout that failed, if any.
    pub(crate) fn take_failure(&mut self) -> Option<iolab_engine::error::Error> {
        self.failed.take()
    }

    pub(crate) fn event(&mut self, ev: &series::Event) {
        match ev {
            series::Event::Start { label, .. } => self.start(label),
            series::Event::Done { i, n, label, rec } => self.say(&point_line(*i, *n, label, rec)),
            series::Event::Skipped { .. } => {}
        }
    }

    /// The status line goes for good (its helper clears it and exits).
    pub(crate) fn finish(&mut self) {
        if let Some(w) = self.watcher.take() {
            w.stop();
        }
    }
}

impl Drop for Progress {
    /// A command that ends early (an error) clears the status line before it says why.
    fn drop(&mut self) {
        self.finish();
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
            iolab_report::series_view::point_figures(r)
        ),
        (None, Some(e)) => format!(
            "{:>4}/{n}  {label:<50}  {}: {e}",
            i + 1,
            if iolab_lab::suite::point_failed(rec) {
                "failed"
            } else {
                "not run"
            }
        ),
        _ => String::new(),
    }
}

/// `iolab run`'s status line, on a terminal's stderr, once the run has taken a second: `None` when stderr
/// is not a terminal (or the helper cannot be had); otherwise give [`RunLine::board`] to the runner and
/// [`RunLine::stop`] it after the run.
pub(crate) struct RunLine {
    pub(crate) board: Board,
    watcher: Watcher,
}

impl RunLine {
    pub(crate) fn stop(self) {
        self.watcher.stop();
    }
}

pub(crate) fn run_bar() -> Option<RunLine> {
    if !iolab_sys::isatty(2) {
        return None;
    }
    let board = Board::new()?;
    let line = Line {
        title: "iolab run".into(),
    };
    let watcher = Watcher::start(board, QUIET, line)?;
    Some(RunLine { board, watcher })
}

/// The status line, drawn by the helper (the run, its label and what the runs after it may take come
/// with the view, from the board).
struct Line {
    /// "iolab sweep".
    title: String,
}

impl Draw for Line {
    fn show(&mut self, v: &View) {
        let width = iolab_sys::terminal_size(2).map_or(80, |(c, _)| c as usize);
        // One write: the line replaces the one before (and never reaches the last column, where a
        // terminal would wrap).
        let text = format!("\r{}\x1b[K", render(self, v, width.saturating_sub(1)));
        let _ = std::io::stderr().write_all(text.as_bytes());
    }

    fn clear(&mut self) {
        let _ = std::io::stderr().write_all(b"\r\x1b[K");
    }
}

/// Seconds as the line shows them: "0.44 s", "2.5 s", "12 s", "3m05s", "1h02m".
fn secs(s: f64) -> String {
    if s < 0.995 {
        format!("{s:.2} s")
    } else if s < 10.0 {
        format!("{s:.1} s")
    } else if s < 60.0 {
        format!("{s:.0} s")
    } else if s < 3600.0 {
        let m = (s / 60.0).floor();
        format!("{m:.0}m{:02.0}s", (s - m * 60.0).floor())
    } else {
        let h = (s / 3600.0).floor();
        format!("{h:.0}h{:02.0}m", ((s - h * 3600.0) / 60.0).floor())
    }
}

/// A count with k, M, G: "950", "51.2k", "4.21M".
fn count(v: f64) -> String {
    let (d, u) = match v.abs() {
        a if a >= 1e9 => (1e9, "G"),
        a if a >= 1e6 => (1e6, "M"),
        a if a >= 1e3 => (1e3, "k"),
        _ => (1.0, ""),
    };
    let x = v / d;
    let p = if u.is_empty() || x >= 100.0 {
        0
    } else if x >= 10.0 {
        1
    } else {
        2
    };
    format!("{x:.p$}{u}")
}

/// Bytes per second in binary units: "512 B/s", "16.1 GiB/s".
fn bytes_s(v: f64) -> String {
    const U: [(&str, f64); 4] = [
        ("GiB/s", 1073741824.0),
        ("MiB/s", 1048576.0),
        ("KiB/s", 1024.0),
        ("B/s", 1.0),
    ];
    let (u, d) = U.iter().copied().find(|(_, d)| v >= *d).unwrap_or(U[3]);
    format!("{:.1} {u}", v / d)
}

/// The parts of a status line; [`render`] leaves some out, or shortens them, to fit a width.
struct Parts {
    title: String,
    /// "run 3/12" in a series.
    run: String,
    label: String,
    pass: (&'static str, &'static str),
    fraction: Option<f64>,
    position: String,
    ops_s: String,
    bytes_s: String,
    eta: String,
    then: String,
}

fn parts(l: &Line, v: &View) -> Parts {
    let position = match (v.elapsed_s, v.goal_ops, v.goal_s) {
        // Work that is no iolab run (a suite's decimal lines) tells nothing more.
        (None, _, _) if v.stage == iolab_engine::progress::Stage::Other => String::new(),
        (None, _, _) => "setting up".to_string(),
        (Some(_), Some(n), _) => format!("{}/{} ops", count(v.done as f64), count(n as f64)),
        (Some(e), None, Some(d)) => {
            format!("{}/{}", secs(e.min(d)).trim_end_matches(" s"), secs(d))
        }
        (Some(e), None, None) => secs(e),
    };
    let eta = match (v.elapsed_s, v.eta_s) {
        (None, _) => String::new(),
        // Its counters are read and closed, --verify reads the target back, the target is cleaned up.
        (Some(_), _) if v.ended => "ops done, finishing".into(),
        (Some(_), Some(e)) => format!("ETA {}", secs(e)),
        (Some(_), None) => "ETA ?".into(),
    };
    Parts {
        title: l.title.clone(),
        run: v
            .run
            .map(|(i, n)| format!("run {i}/{n}"))
            .unwrap_or_default(),
        label: v.label.clone(),
        pass: (v.stage.name(), v.stage.short()),
        fraction: v.fraction,
        position,
        ops_s: v
            .ops_s
            .map(|r| format!("{} ops/s", count(r)))
            .unwrap_or_default(),
        bytes_s: v
            .bytes_s
            .filter(|b| *b > 0.0)
            .map(bytes_s)
            .unwrap_or_default(),
        eta,
        // Where the series ends: this run's ETA and the runs after it at the mean of those done.
        then: match (v.then_s, v.eta_s) {
            (Some(t), Some(e)) => format!("all runs ~{}", secs(t + e)),
            (Some(t), None) => format!("the runs after it ~{}", secs(t)),
            (None, _) => String::new(),
        },
    }
}

/// How much of the parts a line shows.
#[derive(Clone, Copy)]
struct Fit {
    long_pass: bool,
    bytes: bool,
    then: bool,
    /// Characters of the label kept (usize::MAX: all).
    label: usize,
    /// Width of the bar inside its brackets (0: no bar).
    bar: usize,
    title: bool,
}

fn assemble(p: &Parts, f: Fit) -> String {
    let mut out: Vec<String> = Vec::new();
    if f.title {
        out.push(p.title.clone());
    }
    out.push(p.run.clone());
    let n = p.label.chars().count();
    if f.label > 0 && n > 0 {
        out.push(if n <= f.label {
            p.label.clone()
        } else {
            p.label
                .chars()
                .take(f.label.saturating_sub(1))
                .collect::<String>()
                + "…"
        });
    }
    let mut pass = (if f.long_pass { p.pass.0 } else { p.pass.1 }).to_string();
    if let (Some(x), true) = (p.fraction, f.bar > 0) {
        let full = ((x * f.bar as f64).round() as usize).min(f.bar);
        let tip = usize::from(full < f.bar && full > 0);
        pass += &format!(
            " [{}{}{}]",
            "=".repeat(full.saturating_sub(tip)),
            ">".repeat(tip),
            " ".repeat(f.bar - full.saturating_sub(tip) - tip)
        );
    }
    out.push(pass);
    out.push(p.position.clone());
    let mut rate = p.ops_s.clone();
    if f.bytes && !p.bytes_s.is_empty() {
        rate += &format!(" {}", p.bytes_s);
    }
    let mut eta = p.eta.clone();
    if f.then && !p.then.is_empty() {
        eta += &format!(", {}", p.then);
    }
    out.extend([rate, eta]);
    out.retain(|s| !s.is_empty());
    out.join("  ")
}

/// The status line of `l` at `v`, at most `width` characters: the parts that do not fit are left out
/// or shortened, the least needed first (the pass's explanation, the bar bit by bit, a series' title,
/// the end of the run's label, bytes/s, when all runs end, the rest of the label, the title).
fn render(l: &Line, v: &View, width: usize) -> String {
    let p = parts(l, v);
    let mut f = Fit {
        long_pass: true,
        bytes: true,
        then: true,
        label: usize::MAX,
        bar: 24,
        title: true,
    };
    let fits = |f: Fit| assemble(&p, f).chars().count() <= width;
    // In a series the title ("iolab sweep") says least: "run 3/12" and the label name the run.
    let series = v.run.is_some();
    let steps: [fn(&mut Fit, bool); 8] = [
        |f, _| f.long_pass = false,
        |f, _| f.bar = 12,
        |f, series| f.title &= !series,
        |f, _| f.bar = 8,
        |f, _| f.label = 40,
        |f, _| f.bar = 0,
        |f, _| f.bytes = false,
        |f, _| f.then = false,
    ];
    for step in steps {
        if fits(f) {
            return assemble(&p, f);
        }
        step(&mut f, series);
    }
    while f.label > 0 && !fits(f) {
        f.label -= 1;
    }
    f.title &= fits(f);
    assemble(&p, f).chars().take(width).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_engine::progress::Stage;

    fn view(stage: Stage, elapsed: Option<f64>) -> View {
        View {
            stage,
            elapsed_s: elapsed,
            done: 4_200_000,
            goal_ops: None,
            goal_s: Some(3.0),
            fraction: elapsed.map(|e| e / 3.0),
            ops_s: Some(4_213_000.0),
            bytes_s: Some(4_213_000.0 * 4096.0),
            eta_s: elapsed.map(|e| 3.0 - e),
            ended: false,
            run: None,
            label: String::new(),
            then_s: None,
        }
    }

    fn line(title: &str) -> Line {
        Line {
            title: title.into(),
        }
    }

    /// Run 3 of 12 of a sweep, 1.4 s into its timed pass of 3 s.
    fn sweep_view() -> View {
        View {
            run: Some((3, 12)),
            label: "method=io_uring bs=4k qd=32 threads=4 target=/var/tmp/some/long/path.dat"
                .into(),
            then_s: Some(25.0),
            ..view(Stage::Timed, Some(1.4))
        }
    }

    #[test]
    fn the_line_names_the_run_the_pass_the_rate_and_the_eta() {
        let l = line("iolab sweep");
        let wide = render(&l, &sweep_view(), 400);
        assert_eq!(
            wide,
            "iolab sweep  run 3/12  method=io_uring bs=4k qd=32 threads=4 target=/var/tmp/some/long/path.dat  \
             timed pass [==========>             ]  1.4/3.0 s  4.21M ops/s 16.1 GiB/s  ETA 1.6 s, all runs \
             ~27 s"
        );
        for w in [160, 120, 80, 60, 40] {
            let s = render(&l, &sweep_view(), w);
            assert!(s.chars().count() <= w, "{w}: {s}");
            if w >= 60 {
                assert!(
                    s.contains("run 3/12") && s.contains("ops/s") && s.contains("ETA 1.6 s"),
                    "{w}: {s}"
                );
            }
        }
        let s = render(&l, &sweep_view(), 80);
        assert_eq!(
            s,
            "run 3/12  method=io_uring bs=4k …  timed pass  1.4/3.0 s  4.21M ops/s  ETA 1.6 s"
        );
        // A repeat's runs have no label: at 80 columns the title goes before when all runs end.
        let repeat = View {
            run: Some((2, 3)),
            then_s: Some(1.6),
            ..view(Stage::Timed, Some(1.4))
        };
        assert_eq!(
            render(&line("iolab run --repeat"), &repeat, 79),
            "run 2/3  timed pass  1.4/3.0 s  4.21M ops/s  ETA 1.6 s, all runs ~3.2 s"
        );
        // A single run keeps its bar at 80 columns.
        let s = render(&line("iolab run"), &view(Stage::Timed, Some(1.4)), 79);
        assert_eq!(
            s,
            "iolab run  timed pass [===>    ]  1.4/3.0 s  4.21M ops/s 16.1 GiB/s  ETA 1.6 s"
        );
    }

    #[test]
    fn setting_up_and_untimed_passes_say_so() {
        let l = line("iolab run");
        let mut v = view(Stage::Counting, None);
        (v.ops_s, v.bytes_s, v.eta_s) = (None, None, None);
        let s = render(&l, &v, 200);
        assert_eq!(
            s,
            "iolab run  counting pass (untimed, tracepoints on)  setting up"
        );
        v.stage = Stage::Other;
        assert_eq!(render(&l, &v, 200), "iolab run  running");
        let mut v = view(Stage::Timed, Some(0.2));
        v.eta_s = None;
        assert!(render(&l, &v, 200).ends_with("ETA ?"));
        v.ended = true;
        assert!(render(&l, &v, 200).ends_with("ops done, finishing"));
    }

    #[test]
    fn units_read_as_people_write_them() {
        assert_eq!(secs(0.44), "0.44 s");
        assert_eq!(secs(2.46), "2.5 s");
        assert_eq!(secs(12.3), "12 s");
        assert_eq!(secs(185.0), "3m05s");
        assert_eq!(secs(3720.0), "1h02m");
        assert_eq!(count(950.0), "950");
        assert_eq!(count(51_200.0), "51.2k");
        assert_eq!(count(4_213_000.0), "4.21M");
        assert_eq!(count(600_000.0), "600k");
        assert_eq!(bytes_s(17.25 * 1073741824.0), "17.2 GiB/s");
        assert_eq!(bytes_s(3.0), "3.0 B/s");
    }
}
