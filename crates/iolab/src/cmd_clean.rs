//! `iolab clean [DIR]`: removes the files and directories that iolab processes which are gone (SIGKILL,
//! SIGQUIT, a crash) left behind, as their journals record them (`iolab_engine::leftovers`), and refuses
//! anything that is no longer what iolab created. Exit 0, or 1 when something of iolab's could not be
//! removed.

use crate::output::outln;
use clap::Args;
use iolab_engine::error::Error;
use iolab_engine::leftovers::{self, CleanReport, Outcome, Verdict};
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct CleanArgs {
    /// Only what iolab left under DIR (default: everywhere). Run it as the user the interrupted iolab ran
    /// as: each user's iolab keeps its own journal.
    #[arg(value_name = "DIR")]
    pub(crate) dir: Option<PathBuf>,
}

pub(crate) fn cmd_clean(a: &CleanArgs) -> Result<i32, Error> {
    if let Some(d) = &a.dir {
        if d.exists() && !d.is_dir() {
            return Err(Error::usage(
                "clean",
                format!(
                    "{} is not a directory: give the directory under which to clean",
                    d.display()
                ),
            ));
        }
    }
    let rep = leftovers::clean(a.dir.as_deref())?;
    for line in lines(&rep, a.dir.as_ref()) {
        outln(&line)?;
    }
    Ok(if rep.failed() { 1 } else { 0 })
}

fn what(o: &Outcome) -> &'static str {
    match (o.zram, o.is_dir) {
        (true, _) => "zram device, reset,",
        (false, true) => "directory",
        (false, false) => "file",
    }
}

/// What to print: one line per recorded path of a gone iolab (removed, refused, failed), the journals'
/// notes, and a summary.
fn lines(rep: &CleanReport, dir: Option<&PathBuf>) -> Vec<String> {
    let mut out = Vec::new();
    let (mut removed, mut refused, mut failed, mut gone) = (0, 0, 0, 0);
    for o in &rep.outcomes {
        let p = o.path.display();
        let by = format!("left by iolab pid {}, which is gone", o.pid);
        match &o.verdict {
            Verdict::Removed => {
                removed += 1;
                out.push(format!("removed {p} ({} {by})", what(o)));
            }
            Verdict::Refused(why) => {
                refused += 1;
                out.push(format!("refused {p}: {why}; left as it is"));
            }
            Verdict::Failed(why) => {
                failed += 1;
                out.push(format!("could not remove {p} ({by}): {why}"));
            }
            Verdict::Gone => gone += 1,
        }
    }
    out.extend(rep.notes.iter().map(|n| format!("note: {n}")));
    let under = dir
        .map(|d| format!(" under {}", d.display()))
        .unwrap_or_default();
    let mut summary = if removed + refused + failed == 0 {
        format!(
            "iolab clean: nothing to clean: no file, directory, zram device or memory cgroup left by an interrupted iolab{under} (journals in {})",
            rep.journal_dir.display()
        )
    } else {
        format!("iolab clean: removed {removed}, refused {refused}, could not remove {failed}")
    };
    if gone > 0 {
        summary.push_str(&format!("; {gone} recorded path(s) already gone"));
    }
    if rep.outside > 0 {
        summary.push_str(&format!(
            "; {} left elsewhere (outside{under}: run `iolab clean` without DIR)",
            rep.outside
        ));
    }
    if !rep.running.is_empty() {
        let pids: Vec<String> = rep.running.iter().map(|p| p.to_string()).collect();
        summary.push_str(&format!(
            "; iolab still running (pid {}): its files are its own, left alone",
            pids.join(", ")
        ));
    }
    out.push(summary);
    out
}
