//! `iolab compare`: prints what `iolab_core::compare` found, and exits 3 on a regression beyond
//! `--fail-on-regression` (and 2 when, with that flag, no workload appears in both files).

use crate::output::{errln, out};
use clap::Args;
use iolab_core::compare::{self, Outcome};
use iolab_core::error::Error;
use iolab_core::series;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub(crate) struct CompareArgs {
    /// The baseline: a `run --json` file, a `run --repeat --json` file or a sweep's record file.
    pub(crate) a: PathBuf,
    /// The candidate, in any of the same forms.
    pub(crate) b: PathBuf,
    /// Exit 3 when a matching workload is slower in B by more than PCT percent and beyond the noise; exit
    /// 2 when no workload appears in both files (nothing compared, nothing ruled out).
    #[arg(long, value_name = "PCT")]
    pub(crate) fail_on_regression: Option<String>,
}

pub(crate) fn cmd_compare(a: &CompareArgs) -> Result<i32, Error> {
    let limit = match &a.fail_on_regression {
        None => None,
        Some(s) => Some(parse_pct(s)?),
    };
    let read =
        |p: &Path| series::read_records(p).map_err(|e| Error::usage("compare", e.to_string()));
    let (ra, _) = read(&a.a)?;
    let (rb, _) = read(&a.b)?;
    let o = compare::compare_records(&ra, &rb, limit);
    out(&render_outcome(a, &o))?;
    if limit.is_some() && o.rows.is_empty() {
        // A gate that compared nothing must not pass: the files were not runs of the same workloads.
        return Err(Error::usage(
            "--fail-on-regression",
            format!(
                "no workload of {} appears in {} (see the 'only in' lines), so nothing was compared and no \
                 regression can be ruled out: compare results of the same workloads",
                a.a.display(),
                a.b.display()
            ),
        ));
    }
    if o.regressions > 0 {
        errln(&format!(
            "iolab: compare: {} figure(s) slower in B by more than {}% and beyond the noise",
            o.regressions,
            o.limit_pct.unwrap_or(0.0)
        ));
        return Ok(3);
    }
    Ok(0)
}

/// `--fail-on-regression PCT` (a trailing % allowed).
fn parse_pct(s: &str) -> Result<f64, Error> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(v) if v >= 0.0 && v.is_finite() => Ok(v),
        _ => Err(Error::usage(
            "--fail-on-regression",
            format!("'{s}' is not a percentage; expected a number such as 5"),
        )),
    }
}

/// What compare found, as the lines it prints.
fn render_outcome(a: &CompareArgs, o: &Outcome) -> String {
    use std::fmt::Write;
    let mut t = String::new();
    let _ = writeln!(
        t,
        "iolab compare: A = {}, B = {}; ratio = B / A (medians); noise = the wider measured spread of the two sides, at least {}%",
        a.a.display(),
        a.b.display(),
        compare::MIN_NOISE_PCT
    );
    for r in &o.rows {
        let ratio = if r.ratio.is_finite() {
            format!("{:>6.3}", r.ratio)
        } else {
            "     -".to_string()
        };
        let _ = writeln!(
        t,
            "{:<58} {:<10} A {:>14.1} (n={})  B {:>14.1} (n={})  ratio {ratio}  noise ±{:>4.1}%  {}",
            r.workload,
            r.figure,
            r.a.median,
            r.a.n,
            r.b.median,
            r.b.n,
            r.noise_pct,
            r.verdict.word()
        );
    }
    for w in &o.only_a {
        let _ = writeln!(t, "only in A: {w}");
    }
    for w in &o.only_b {
        let _ = writeln!(t, "only in B: {w}");
    }
    if o.rows.is_empty() {
        let _ = writeln!(t, "no workload appears in both files");
    }
    t
}
