//! The status line as a terminal shows it. iolab runs with its stderr on a pseudo-terminal (opened with
//! `iolab_sys::openpty`: the kernel's pty, four calls, so neither tmux nor an expect crate is
//! needed and the test runs wherever the kernel has ptys), and every line its helper draws is read as
//! it arrives, with the time it arrived. A `--duration 3` run's timed pass must show its rate, and an
//! ETA that counts down the time asked (how close it lands to the end the test saw is printed: a loaded
//! machine delays the test's reading, not iolab's clock); a counting pass
//! and a sweep's runs must be named as such, and a sweep's line must move within a run. Every line must
//! fit the terminal's width.

mod common;
use common::*;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A line the helper drew, and when the test read it.
#[derive(Debug)]
struct Frame {
    at: Instant,
    text: String,
}

/// Runs iolab with `args` and its stderr on a `cols`-wide pty: every line drawn on it, the moment the
/// process was seen to exit, and its exit code.
fn watch(cols: u16, args: &[&str]) -> (Vec<Frame>, Instant, i32) {
    let (master, slave) = iolab_sys::openpty(cols, 24).expect("a pseudo-terminal");
    let mut child = {
        let mut cmd = Command::new(bin());
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(slave));
        cmd.spawn().expect("iolab starts")
        // The command, and with it the test's copy of the terminal's end, goes here: the reader sees
        // the end of the output once iolab and its helper are gone.
    };
    let reader = std::thread::spawn(move || read_frames(master));
    let (code, exited) = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break (st.code().unwrap_or(-1), Instant::now());
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    (reader.join().expect("reader"), exited, code)
}

/// The lines drawn on the pty, until it closes: each starts with "\r" and ends with "\x1b[K".
fn read_frames(master: OwnedFd) -> Vec<Frame> {
    let mut f = std::fs::File::from(master);
    let mut frames = Vec::new();
    let mut buf = [0u8; 4096];
    let mut pending = String::new();
    // EIO once the terminal's end is closed by everyone.
    while let Ok(n) = f.read(&mut buf) {
        if n == 0 {
            break;
        }
        let at = Instant::now();
        pending.push_str(&String::from_utf8_lossy(&buf[..n]));
        while let Some(end) = pending.find("\x1b[K") {
            let line: String = pending[..end].rsplit('\r').next().unwrap_or("").into();
            pending.drain(..end + 3);
            if !line.trim().is_empty() {
                frames.push(Frame { at, text: line });
            }
        }
    }
    frames
}

/// The seconds of "ETA 1.6 s" / "ETA 0.44 s" in a line.
fn eta_of(line: &str) -> Option<f64> {
    let rest = line.split("ETA ").nth(1)?;
    let num = rest
        .strip_suffix(" s")
        .unwrap_or(rest)
        .split(" s,")
        .next()?;
    num.trim().parse().ok()
}

#[test]
fn a_duration_run_shows_its_rate_and_an_eta_counting_down() {
    let dir = disk_dir();
    for cols in [80u16, 160] {
        let json = file(&dir, &format!("r{cols}.json"));
        let (frames, exited, code) = watch(
            cols,
            &["run", "--duration", "3", "--json", &path_str(&json)],
        );
        assert_eq!(code, 0, "{frames:?}");
        let timed: Vec<&Frame> = frames
            .iter()
            .filter(|f| f.text.contains("timed pass"))
            .collect();
        // Drawn every 100 ms once the run has taken a second: well over five lines in 3 s.
        assert!(timed.len() >= 5, "{cols} columns: {frames:?}");
        for f in &frames {
            assert!(
                f.text.chars().count() < cols as usize,
                "{cols} columns: a line of {} characters: {:?}",
                f.text.chars().count(),
                f.text
            );
        }
        // The ETA counts down the 3 s asked, never up (to its tenth of a second). How far it lands from
        // the moment this test saw the process end is printed, not asserted: on a loaded machine the
        // test's own reading of the screen is late by whatever the load took.
        let (mut checked, mut worst, mut last, mut first) = (0, 0f64, f64::INFINITY, None);
        for f in &timed {
            assert!(f.text.contains("ops/s"), "no rate: {:?}", f.text);
            let Some(eta) = eta_of(&f.text) else {
                assert!(f.text.contains("ops done, finishing"), "{:?}", f.text);
                continue;
            };
            assert!(eta <= 3.0, "{cols} columns: {:?}", f.text);
            assert!(
                eta <= last + 0.1,
                "{cols} columns: the ETA went up from {last} s: {:?}",
                f.text
            );
            last = eta;
            first.get_or_insert(eta);
            let said = f.at + Duration::from_secs_f64(eta);
            let off = if said > exited {
                (said - exited).as_secs_f64()
            } else {
                (exited - said).as_secs_f64()
            };
            checked += 1;
            worst = worst.max(off);
        }
        assert!(checked >= 5, "{timed:?}");
        // Drawn from a second into the run to its end: the ETA came down by most of that.
        let fell = first.unwrap_or(0.0) - last;
        assert!(
            fell >= 0.5,
            "{cols} columns: the ETA fell by {fell} s only: {timed:?}"
        );
        println!("{cols} columns: {checked} ETAs read, the farthest {worst:.3} s from the end (not asserted)");
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert!(u64_of(&r, &["ops"]) > 0);
    }
}

#[test]
fn the_line_names_the_pass_it_shows() {
    let dir = disk_dir();
    let json = file(&dir, "r.json");
    // --count full: an untimed counting pass of the whole workload (1.5 s), then the timed pass.
    let (frames, _, code) = watch(
        160,
        &[
            "run",
            "--duration",
            "1.5",
            "--count",
            "full",
            "--no-breakdown",
            "--json",
            &path_str(&json),
        ],
    );
    assert_eq!(code, 0, "{frames:?}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    if r["kernel"]["tracepoint_pass"].is_null() {
        return skip(
            "tracepoints",
            "the_line_names_the_pass_it_shows: none here, so no counting pass",
        );
    }
    let first_timed = frames
        .iter()
        .position(|f| f.text.contains("timed pass"))
        .unwrap_or_else(|| panic!("no timed pass shown: {frames:?}"));
    let counting: Vec<&Frame> = frames[..first_timed]
        .iter()
        .filter(|f| f.text.contains("counting pass (untimed, tracepoints on)"))
        .collect();
    assert!(!counting.is_empty(), "{frames:?}");
    for f in &counting {
        // Its own bound: never the timed pass's, never more than its 1.5 s.
        assert!(eta_of(&f.text).is_none_or(|e| e <= 1.5), "{:?}", f.text);
    }
    assert!(
        frames[first_timed..]
            .iter()
            .all(|f| !f.text.contains("counting")),
        "{frames:?}"
    );
}

#[test]
fn a_sweep_names_its_runs_and_moves_within_each() {
    let dir = disk_dir();
    let out = file(&dir, "s.jsonl");
    let (frames, _, code) = watch(
        160,
        &[
            "sweep",
            "--vary",
            "bs=4k,8k",
            "--duration",
            "1.2",
            "--count",
            "none",
            "--out",
            &path_str(&out),
        ],
    );
    assert_eq!(code, 0, "{frames:?}");
    for (run, bs) in [("run 1/2", "bs=4k"), ("run 2/2", "bs=8k")] {
        let mine: Vec<&Frame> = frames
            .iter()
            .filter(|f| f.text.contains(run) && f.text.contains("timed pass"))
            .collect();
        assert!(
            mine.iter().all(|f| f.text.contains(bs)),
            "{run} is not {bs}: {mine:?}"
        );
        // Within the run the line moves: its position differs from one draw to a later one.
        let positions: std::collections::BTreeSet<&str> = mine
            .iter()
            .filter_map(|f| f.text.split("timed pass").nth(1))
            .filter_map(|t| t.split_whitespace().find(|w| w.ends_with("/1.2")))
            .collect();
        assert!(positions.len() >= 3, "{run}: {mine:?}");
    }
}
