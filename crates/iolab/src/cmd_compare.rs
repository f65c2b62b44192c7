//! `iolab compare`: prints what `iolab_lab::compare` found (or, with `--across`,
//! `iolab_lab::compare_across`), and exits 3 on a regression beyond `--fail-on-regression` (and 2 when,
//! with that flag, no workload appears in both files, or across a fleet's hosts none ran on two).

use crate::output::errln;
use clap::Args;
use iolab_engine::error::Error;
use iolab_lab::compare::{self, Outcome};
use iolab_lab::series;
use iolab_report::export::{Document, Outputs};
use std::path::{Path, PathBuf};

#[derive(Args)]
pub(crate) struct CompareArgs {
    /// The baseline: a `run --json` file, a `run --repeat --json` file, a sweep's record file, or a fleet's
    /// results directory (`iolab fleet --results DIR`; with --across host).
    pub(crate) a: PathBuf,
    /// The candidate, in any of the same forms (with --across it may be left out: A against itself).
    #[arg(required_unless_present = "across")]
    pub(crate) b: Option<PathBuf>,
    /// Exit 3 when a matching workload is slower in B by more than PCT percent and beyond the noise; exit
    /// 2 when no workload appears in both files (nothing compared, nothing ruled out).
    #[arg(long, value_name = "PCT", allow_hyphen_values = true)]
    pub(crate) fail_on_regression: Option<String>,
    /// Compare runs that differ only in KEY (a run flag without dashes: method, bs, qd, ring ...): A's
    /// runs whose KEY is BASE (default: the value of A's first run) against B's runs of the same
    /// workload with another value (psync against sync: --across method).
    #[arg(long, value_name = "KEY[=BASE]")]
    pub(crate) across: Option<String>,
    /// Write the tables as Markdown to FILE. An existing FILE is not replaced.
    #[arg(long, value_name = "FILE")]
    pub(crate) md: Option<PathBuf>,
    /// Of two surveys, every row's figures after what changed in their orders.
    #[arg(short, long)]
    pub(crate) verbose: bool,
}

pub(crate) fn cmd_compare(a: &CompareArgs) -> Result<i32, Error> {
    iolab_engine::fault::set_oom_remedy(crate::cmd_report::READERS_REMEDY);
    let limit = match &a.fail_on_regression {
        None => None,
        Some(s) => Some(parse_pct(s)?),
    };
    let outputs = Outputs::from_flags(None, a.md.as_deref(), None, None, &[])?;
    let b_path = a.b.as_deref().unwrap_or(&a.a);
    // Each record keeps only what compare reads of it, read as the file is (its text never held).
    let read = |p: &Path| {
        series::read_record_file(p, "compare", series::Keep::Texts(compare::KEPT)).map_err(|e| {
            match e {
                Error::Usage { .. } => e,
                e => Error::usage("compare", e.to_string()),
            }
        })
    };
    let fleet = [&a.a, b_path].iter().any(|p| p.is_dir());
    if let Some(d) = [&a.a, b_path]
        .into_iter()
        .find(|p| p.is_dir() && !is_fleet_dir(p))
    {
        return Err(Error::usage(
            "compare",
            format!(
                "{}: a directory that is not a fleet's results directory (one holds HOST/{} for each host \
                 and their record files): give a record file (run --json, a sweep's or suite's .jsonl)",
                d.display(),
                iolab_lab::fleet::HOST_FILE
            ),
        ));
    }
    if fleet
        && !a
            .across
            .as_deref()
            .is_some_and(|k| k.trim_start_matches("--").starts_with("host"))
    {
        return Err(Error::usage(
            "--across",
            "a fleet's results directory (iolab fleet --results DIR) is compared across its hosts: give --across host \
             (or --across host=NAME for the host the others are set against)",
        ));
    }
    let across = match &a.across {
        Some(s) => Some(iolab_lab::compare_across::parse(s)?),
        None => None,
    };
    let across_key = across.as_ref().map(|(k, _)| k.as_str());
    // Each file's runs as compare holds them, and its document where it is one (a survey's ranking).
    type Read = (compare::Side, Option<serde_json::Value>);
    let records = |p: &Path| -> Result<Read, Error> {
        if p.is_dir() {
            #[cfg(feature = "fleet")]
            return iolab_lab::fleet::read_dir_records(p, compare::KEPT)
                .map(|r| (compare::Side::of(r, across_key), None))
                .map_err(|e| Error::usage("compare", e.to_string()));
            // A board is a fleet's host, not its controller: its build leaves the fleet out.
            #[cfg(not(feature = "fleet"))]
            return Err(Error::usage(
                "compare",
                format!(
                    "{}: a fleet's results directory is compared by a host build of iolab (a board's \
                     leaves the fleet out)",
                    p.display()
                ),
            ));
        }
        let f = read(p)?;
        if let Some(c) = series::cut_note(p, f.cut) {
            eprintln!("{c}");
        }
        Ok((compare::Side::of(f.records, across_key), f.document))
    };
    let (ra, doc_a) = records(&a.a)?;
    // One file or directory (compare --across within it) is read once.
    let rb = match &a.b {
        Some(b) => Some(records(b)?),
        None => None,
    };
    let (rb, doc_b) = match &rb {
        Some((r, d)) => (r, d.as_ref()),
        None => (&ra, doc_a.as_ref()),
    };
    // Two surveys (without --across): what changed in their orders first.
    let surveys = match (&a.across, doc_a.as_ref(), doc_b) {
        (None, Some(x), Some(y)) => iolab_lab::compare_surveys::compare(x, y),
        _ => None,
    };
    let (sa, sb) = (a.a.display().to_string(), b_path.display().to_string());
    let o = match &across {
        None => compare::compare_records(&ra, rb, limit),
        Some((key, base)) => {
            iolab_lab::compare_across::compare_across(&ra, rb, key, base.as_deref(), limit)?
        }
    };
    outputs.write(&Document::Compare {
        lead: &lead(a, b_path),
        warning: single_run_warning(&o),
        outcome: &o,
        surveys: surveys.as_ref().map(|s| (sa.as_str(), sb.as_str(), s)),
        verbose: a.verbose,
    })?;
    if fleet && o.rows.is_empty() {
        // Across a fleet's hosts with none to set against another: the question has no answer.
        return Err(Error::usage(
            "--across",
            "no workload ran on two of the fleet's hosts (see the 'only in' lines; a fleet of one host has \
             no other): nothing was compared across hosts",
        ));
    }
    if limit.is_some() && o.rows.is_empty() {
        // A gate that compared nothing must not pass: the files were not runs of the same workloads.
        return Err(Error::usage(
            "--fail-on-regression",
            format!(
                "no workload of {} appears in {} (see the 'only in' lines), so nothing was compared and no \
                 regression can be ruled out: compare results of the same workloads",
                a.a.display(),
                b_path.display()
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

/// Whether directory `p` looks like a fleet's results directory: its fleet.json, or a host's outcome file
/// in one of its first 10,000 entries (the reader then checks it whole).
fn is_fleet_dir(p: &Path) -> bool {
    if p.join("fleet.json").exists() {
        return true;
    }
    std::fs::read_dir(p).is_ok_and(|entries| {
        entries
            .flatten()
            .take(10_000)
            .any(|e| e.path().join(iolab_lab::fleet::HOST_FILE).exists())
    })
}

/// `--fail-on-regression PCT` (a trailing % allowed).
fn parse_pct(s: &str) -> Result<f64, Error> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(v) if v >= 0.0 && v.is_finite() => Ok(v),
        _ => Err(Error::usage(
            "--fail-on-regression",
            format!("'{s}' is not accepted; expected a percentage of 0 or more, such as 5"),
        )),
    }
}

/// What the comparison is: the files, what the ratio and the noise are, and `--across`.
fn lead(a: &CompareArgs, b: &Path) -> String {
    format!(
        "iolab compare: A = {}, B = {}{}; ratio = B / A (medians); noise = the wider of the two sides' \
         spreads (max - min over the median of its runs), at least {}%: a ratio within 1 +/- noise is within noise",
        a.a.display(),
        b.display(),
        a.across
            .as_deref()
            .map(|k| format!(", across {k} (runs that differ only in it)"))
            .unwrap_or_default(),
        compare::MIN_NOISE_PCT
    )
}

/// When either side has a single run of a workload, its spread is unknown: the verdicts then rest on the
/// 2% floor alone, and the output says so once.
fn single_run_warning(o: &Outcome) -> Option<String> {
    let one = |n: fn(&compare::CompareRow) -> usize| o.rows.iter().filter(|r| n(r) < 2).count();
    let (a1, b1) = (one(|r| r.a.n), one(|r| r.b.n));
    (a1 + b1 > 0).then(|| {
        format!(
            "warning: {} of {} rows have a single run in A, {} in B: their noise is not measured, so a \
             difference beyond the {}% floor is called faster or slower on one run each; repeat both sides \
             (`run --repeat 5`, or a sweep with `--vary seed=1,2,3,4,5`) for a verdict that knows the noise",
            a1,
            o.rows.len(),
            b1,
            compare::MIN_NOISE_PCT
        )
    })
}
