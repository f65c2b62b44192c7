//! The main job (`iolab`, `iolab survey`): every method writing 4 B and 4 KiB blocks to /dev/null, to a
//! fresh file in a new temporary directory, and into a pipe read by a peer thread, ranked per target (epoll
//! takes streams only, so it appears in the pipe table; methods that cannot write to a pipe are listed
//! there with the reason). Touches no existing file: the directory is
//! new, each run creates its own file and removes it, and the JSON goes to a new file in ./iolab-results/.

use crate::error::{Error, Result};
use crate::measure::clock::ClockInfo;
use crate::method::Fit;
use crate::result::{Host, RunResult, SCHEMA_VERSION};
use crate::runner;
use crate::spec::{MethodKind, RawSpec};
use crate::target::TargetKind;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Block sizes the survey compares: the seed thesis's 4-byte and 4 KiB writes.
pub const SURVEY_BS: [u64; 2] = [4, 4096];
/// Ops per run, and the time bound that stops a slow method early (the whole survey stays under 40 s).
pub const SURVEY_OPS: u64 = 200_000;
pub const SURVEY_MAX_S: f64 = 1.0;
/// The file each file-target run creates (writes wrap around it).
pub const SURVEY_FILE_SIZE: u64 = 64 << 20;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SurveyRun {
    /// "/dev/null", "file" or "pipe".
    pub target: String,
    pub method: MethodKind,
    pub bs: u64,
    /// Present when the run happened.
    pub result: Option<RunResult>,
    /// Why the method could not run on this target (the refusal iolab or the kernel gave).
    pub unavailable: Option<String>,
}

/// The survey's JSON document.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SurveyResult {
    pub schema_version: u32,
    pub host: Host,
    pub clock: ClockInfo,
    /// Where the file runs happened and on which filesystem.
    pub file_dir: String,
    pub file_fs: String,
    pub ops_per_run: u64,
    pub max_s_per_run: f64,
    pub runs: Vec<SurveyRun>,
    /// Findings comparing the runs of each target and block size, then each run's own
    /// (`findings_compare.rs`), checked against `memory`.
    #[serde(default)]
    pub findings: Vec<crate::findings_compare::Compared>,
    /// What this machine's memory can copy, measured once after the runs.
    #[serde(default)]
    pub memory: Option<crate::measure::memcopy::MemCopy>,
}

/// The comparing findings over the survey's runs: one table per target, each run a row.
pub fn compare_runs(
    runs: &[SurveyRun],
    mem: &crate::measure::memcopy::MemCopy,
) -> Vec<crate::findings_compare::Compared> {
    let mut rows: Vec<crate::findings_compare::Row> = runs
        .iter()
        .filter_map(|run| {
            let r = run.result.as_ref()?;
            let mut row = crate::findings_compare::Row::of(&run.target, &run.target, r);
            // Each file run has a file of its own: the runs on "file" are one workload.
            row.place = run.target.clone();
            Some(row)
        })
        .collect();
    crate::findings_compare::compare(&mut rows, mem)
}

/// Progress callback: (runs done, runs in all, the run just finished).
pub type OnRun = Box<dyn Fn(usize, usize, &SurveyRun)>;

pub struct SurveyOptions {
    /// Where to create the temporary directory (default: $TMPDIR or /tmp).
    pub tmp_parent: PathBuf,
    pub ops: u64,
    pub max_s: f64,
    /// Called after every run (progress).
    pub on_run: Option<OnRun>,
}

impl Default for SurveyOptions {
    fn default() -> Self {
        SurveyOptions {
            tmp_parent: std::env::temp_dir(),
            ops: SURVEY_OPS,
            max_s: SURVEY_MAX_S,
            on_run: None,
        }
    }
}

pub fn survey(opts: &SurveyOptions, clock: &ClockInfo) -> Result<SurveyResult> {
    let dir = tempfile::Builder::new()
        .prefix("iolab-survey-")
        .tempdir_in(&opts.tmp_parent)
        .map_err(|e| {
            Error::Runtime(format!(
                "cannot create a temporary directory in {}: {e}",
                opts.tmp_parent.display()
            ))
        })?;
    // Removed on Ctrl-C too; TempDir removes it on a normal exit.
    let _guard = crate::cleanup::Created::register(dir.path(), false);
    let fs = crate::sys::fs_type_name(dir.path()).unwrap_or("unknown filesystem");
    // Each method on each target it is made for; a refusal by the kernel (psync on a pipe: ESPIPE) is
    // listed, a target the method is not for (epoll on a file) is left out.
    let methods_for = |target: &str| -> Vec<MethodKind> {
        let kind = match target {
            "pipe" => TargetKind::Pipe,
            "file" => TargetKind::File,
            _ => TargetKind::DevNull,
        };
        MethodKind::all()
            .filter(|m| {
                !matches!(
                    m.info().targets.fit(kind),
                    Fit::Never(_) | Fit::OtherTarget(_)
                )
            })
            .collect()
    };
    let targets = ["/dev/null", "file", "pipe"];
    let total: usize = targets
        .iter()
        .map(|t| SURVEY_BS.len() * methods_for(t).len())
        .sum();
    let mut runs = Vec::new();
    for target in targets {
        for bs in SURVEY_BS {
            for m in methods_for(target) {
                let path = match target {
                    "file" => dir.path().join(format!("{}-{bs}.dat", m.name())),
                    t => PathBuf::from(t),
                };
                let mut raw = RawSpec::new()
                    .with("target", path.display().to_string())
                    .with("method", m.name())
                    .with("bs", bs)
                    .with("ops", opts.ops)
                    .with("duration", opts.max_s)
                    // No tracepoints: releasing one waits for RCU grace periods (0.1-1 s each on this VM,
                    // measured), which would break the survey's time budget. Software counters stay on.
                    .with("count", "none");
                if target == "file" {
                    raw = raw.with("file-size", SURVEY_FILE_SIZE);
                }
                let spec = raw.resolve()?;
                let run = match runner::run(&spec, clock) {
                    Ok(r) => SurveyRun {
                        target: target.into(),
                        method: m,
                        bs,
                        result: Some(r),
                        unavailable: None,
                    },
                    Err(e @ Error::Usage { .. }) | Err(e @ Error::Sys(_)) => SurveyRun {
                        target: target.into(),
                        method: m,
                        bs,
                        result: None,
                        unavailable: Some(e.to_string()),
                    },
                    Err(e) => return Err(e),
                };
                runs.push(run);
                if let Some(f) = &opts.on_run {
                    f(runs.len(), total, runs.last().expect("just pushed"));
                }
            }
        }
    }
    // After every run, never inside one: what memory can copy, and the findings checked against it.
    let memory = crate::measure::memcopy::measured().clone();
    let findings = compare_runs(&runs, &memory);
    Ok(SurveyResult {
        findings,
        memory: Some(memory),
        schema_version: SCHEMA_VERSION,
        host: Host::current(),
        clock: clock.clone(),
        file_dir: opts.tmp_parent.display().to_string(),
        file_fs: fs.to_string(),
        ops_per_run: opts.ops,
        max_s_per_run: opts.max_s,
        runs,
    })
}

/// "20261122-013512" in UTC, from Unix seconds (civil-from-days, H. Hinnant's algorithm).
pub fn utc_stamp(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Writes `bytes` to a new file `<dir>/<stem>-<stamp>[-N].json`, never replacing an existing file.
pub fn write_new_file(dir: &Path, stem: &str, stamp: &str, bytes: &[u8]) -> Result<PathBuf> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::Runtime(format!("cannot create {}: {e}", dir.display())))?;
    for n in 0..1000 {
        let name = if n == 0 {
            format!("{stem}-{stamp}.json")
        } else {
            format!("{stem}-{stamp}-{n}.json")
        };
        let p = dir.join(name);
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&p)
        {
            Ok(mut f) => {
                f.write_all(bytes)
                    .map_err(|e| Error::Runtime(format!("cannot write {}: {e}", p.display())))?;
                return Ok(p);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(Error::Runtime(format!(
                    "cannot create {}: {e}",
                    p.display()
                )))
            }
        }
    }
    Err(Error::Runtime(format!(
        "too many result files named {stem}-{stamp}* in {}",
        dir.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_stamps() {
        assert_eq!(utc_stamp(0), "19700101-000000");
        assert_eq!(utc_stamp(1_795_311_312), "20261122-013512");
        assert_eq!(utc_stamp(951_782_400), "20000229-000000");
    }

    #[test]
    fn result_files_are_never_replaced() {
        let d = tempfile::tempdir().unwrap();
        let a = write_new_file(d.path(), "s", "x", b"one").unwrap();
        let b = write_new_file(d.path(), "s", "x", b"two").unwrap();
        assert_ne!(a, b);
        assert_eq!(std::fs::read(&a).unwrap(), b"one");
        assert_eq!(std::fs::read(&b).unwrap(), b"two");
    }
}
