//! How fio reports the jobs of a job file: `group_reporting` and the jobs' reporting groups (fio's
//! `groupid`), and the runs `--fio-json` writes with them.

use super::parts::{self, Part};
use iolab_engine::result::RunResult;

/// One run to write: the job's name, its result, and how fio reports its job.
pub struct FioRun<'a> {
    pub name: String,
    pub result: &'a RunResult,
    pub reporting: Reporting,
}

/// How fio reports a job of a job file ([`reporting`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reporting {
    /// The job asks for `group_reporting`: its clones as one entry.
    pub group_reporting: bool,
    /// fio's `groupid`: its reporting group's number in the file.
    pub groupid: u32,
    /// With group_reporting, the run joins the entry before it when that run was of the same `groupid`
    /// (fio's group_reporting over the jobs of a group); off where runs of one job are not fio's jobs
    /// (--across-methods).
    pub merge: bool,
}

impl<'a, 'b: 'a> From<&'a (String, &'b RunResult)> for FioRun<'a> {
    fn from((name, result): &'a (String, &'b RunResult)) -> FioRun<'a> {
        FioRun {
            name: name.clone(),
            result,
            reporting: Reporting::default(),
        }
    }
}

impl<'a, 'b: 'a> From<&'a (String, &'b RunResult, Reporting)> for FioRun<'a> {
    fn from((name, result, reporting): &'a (String, &'b RunResult, Reporting)) -> FioRun<'a> {
        FioRun {
            name: name.clone(),
            result,
            reporting: *reporting,
        }
    }
}

/// How fio reports each job of the fio job file at `path` that runs (all, or the one `section` names, as
/// fio's --section runs it alone), by name: `group_reporting` asked (bare, as fio's flags are set, or with
/// a value other than 0), and its group, numbered as fio's add_job numbers them (a job with `stonewall`
/// or `new_group` after others starts the next). None where the file cannot be read again (it was read
/// once already, to run it).
pub fn reporting(path: &std::path::Path, section: Option<&str>) -> Vec<(String, Reporting)> {
    let env = |v: &str| std::env::var(v).ok();
    let mut jobs = iolab_lab::fio_job::parse::parse_file(path, &env).unwrap_or_default();
    jobs.retain(|j| section.is_none_or(|s| j.name == s));
    let on = |j: &iolab_lab::fio_job::Job, k: &str| {
        j.get(k).is_some_and(|v| !matches!(v, "0" | "false"))
    };
    let (mut groupid, mut in_group) = (0u32, 0u32);
    let mut out = Vec::new();
    for j in jobs {
        if (on(&j, "stonewall") || on(&j, "new_group")) && in_group > 0 {
            groupid += 1;
            in_group = 0;
        }
        in_group += 1;
        let group_reporting = on(&j, "group_reporting");
        let r = Reporting {
            group_reporting,
            groupid,
            merge: group_reporting,
        };
        out.push((j.name, r));
    }
    out
}

/// The entries of `runs`, each as the (run, part) it holds, as fio's __show_run_stats makes them of its
/// job clones (stat.c): a clone starts an entry unless its job asks for group_reporting and the clone
/// before it was of the same group, even one of a job that did not ask (then it joins that entry). A
/// run's part is a clone, or with group_reporting all its clones ([`parts::parts`]).
pub(super) fn entry_units<'r>(runs: &'r [FioRun<'r>]) -> Vec<Vec<(&'r FioRun<'r>, Part)>> {
    let mut out: Vec<Vec<(&FioRun, Part)>> = Vec::new();
    let mut last: Option<u32> = None;
    for run in runs {
        let how = run.reporting;
        for part in parts::parts(run.result, how.group_reporting) {
            let joins = how.group_reporting && how.merge && last == Some(how.groupid);
            match out.last_mut() {
                Some(entry) if joins => entry.push((run, part)),
                _ => out.push(vec![(run, part)]),
            }
            last = Some(how.groupid);
        }
    }
    out
}
