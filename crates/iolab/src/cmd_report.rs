//! `iolab report`: one HTML file (and optionally each chart as SVG) from result files.

#[cfg(feature = "html")]
use crate::output::{check_apart, check_dir_path, check_new_path, outln, write_new};
use clap::Args;
#[cfg(feature = "html")]
use iolab_engine::error::Error;
#[cfg(feature = "html")]
use iolab_lab::series;
#[cfg(feature = "html")]
use std::path::Path;
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct ReportArgs {
    /// Result files: sweep or suite records (.jsonl), `run --json` or `run --repeat --json` documents; or
    /// a fleet's results directory (`iolab fleet --results DIR`): its hosts' runs and the merged view.
    #[arg(required = true, value_name = "RESULTS")]
    pub(crate) results: Vec<PathBuf>,
    /// The HTML file to write (an existing file is not replaced).
    #[arg(
        short = 'o',
        long = "out",
        value_name = "FILE",
        default_value = "report.html"
    )]
    pub(crate) out: PathBuf,
    /// Also write each chart alone as DIR/<name>.svg (DIR is created; existing files are not replaced).
    #[arg(long, value_name = "DIR")]
    pub(crate) svg: Option<PathBuf>,
}

/// What a reader of record files that ran out of memory is told to do (not a run's flags).
pub(crate) const READERS_REMEDY: &str =
    "give it fewer record files at once, or a shorter one (a sweep split in parts)";

#[cfg(feature = "html")]
/// `p` counted among the report's inputs (each file once, by device and inode, and all of them within one
/// bound: a file named 60 times was read 60 times, until memory ran out), or refused.
fn charge(p: &Path, inputs: &mut series::Inputs) -> Result<(), Error> {
    // Not there, or not a file: the read says so.
    let Ok(m) = std::fs::metadata(p) else {
        return Ok(());
    };
    let why = match inputs.charge(p, &m) {
        Ok(()) => return Ok(()),
        Err(series::Refused::Again(first)) => format!(
            "{} is the same file as {} (named twice, or a link): each file is read once",
            p.display(),
            first.display()
        ),
        Err(series::Refused::Over) => format!(
            "the files given hold more than the {} a report reads in all (at {}): give fewer",
            iolab_engine::units::fmt_size(iolab_engine::input::RECORDS_INPUT),
            p.display()
        ),
    };
    Err(Error::usage("report", why))
}

#[cfg(feature = "html")]
pub(crate) fn cmd_report(a: &ReportArgs) -> Result<i32, Error> {
    iolab_engine::fault::set_oom_remedy(READERS_REMEDY);
    check_new_path("--out", &a.out)?;
    let mut files = Vec::new();
    let mut sums = Vec::new();
    let mut survey_findings = Vec::new();
    let mut cut = Vec::new();
    #[cfg(feature = "fleet")]
    let mut fleets = Vec::new();
    // Each record keeps only what the report shows of it, read as the file is (its text never held).
    let paths = iolab_report::result_paths();
    let paths: Vec<&[&str]> = paths.iter().map(Vec::as_slice).collect();
    // Records of JSON lines are held as their texts, each parsed again where the page reads it: as values
    // a 200 MB file of records of a spec, a host and a few figures took 6 times its text.
    let keep = series::Keep::Texts(&paths);
    // The files named are counted before any is read: a sixth file past the bound was refused after
    // five of 200 MB were read (a fleet's directory is counted as it is read).
    let mut sizes = series::Inputs::default();
    for p in a.results.iter().filter(|p| !p.is_dir()) {
        charge(p, &mut sizes)?;
    }
    let mut seen = series::Inputs::default();
    for p in &a.results {
        // A fleet's results directory (the board binaries, built without `fleet`, read files only).
        #[cfg(feature = "fleet")]
        if p.is_dir() {
            fleets.push(fleet_files(p, (&mut files, &mut seen), &paths)?);
            continue;
        }
        charge(p, &mut seen)?;
        let f = series::read_record_file(p, "report", keep)?;
        cut.extend(series::cut_note(p, f.cut));
        // A suite's findings and answers: the latest summary of each file.
        sums.extend(
            f.summaries
                .into_iter()
                .rev()
                .find_map(|s| serde_json::from_value(s).ok()),
        );
        survey_findings.extend(survey_findings_in(f.document.as_ref()));
        files.push((p.display().to_string(), f.records));
    }
    // The records were parsed whole and cut down: the pages of what was let go are given back before the
    // page is made.
    iolab_sys::release_free_heap();
    let recs: usize = files.iter().map(|f| f.1.len()).sum();
    // Runs of different files are told apart by the file's name.
    let mut rep = iolab_report::html::build_files(files, a.svg.is_some());
    rep.html = iolab_report::answers::with_answers(rep.html, &sums);
    rep.html = iolab_report::findings_by_cause::with_survey_findings(rep.html, &survey_findings);
    #[cfg(feature = "fleet")]
    for (dir, hosts, merged) in &fleets {
        rep.html = iolab_report::fleet::with_fleet(rep.html, dir, hosts, merged);
    }
    if let Some(d) = &a.svg {
        let svgs: Vec<PathBuf> = rep
            .charts
            .iter()
            .map(|c| d.join(format!("{}.svg", c.name)))
            .collect();
        check_svg(d, &svgs, &a.out)?;
        std::fs::create_dir_all(d)
            .map_err(|e| Error::Runtime(format!("cannot create --svg {}: {e}", d.display())))?;
        for (p, c) in svgs.iter().zip(&rep.charts) {
            write_new("--svg", p, c.svg.as_bytes())?;
        }
    }
    write_new("--out", &a.out, rep.html.as_bytes())?;
    outln(&format!(
        "report: {} ({} charts from {} records{})",
        a.out.display(),
        rep.charts.len(),
        recs,
        a.svg
            .as_ref()
            .map(|d| format!("; each chart alone in {}", d.display()))
            .unwrap_or_default()
    ))?;
    for c in cut {
        eprintln!("{c}");
    }
    Ok(0)
}

#[cfg(feature = "fleet")]
/// A fleet's results directory: each host that ran to the end adds its runs as a file named by the host
/// (`DIR/HOST`); the hosts and their merged workloads, for the fleet section.
fn fleet_files(
    dir: &Path,
    (files, read): (
        &mut Vec<(String, Vec<serde_json::Value>)>,
        &mut series::Inputs,
    ),
    keep: &[&[&str]],
) -> Result<FleetSection, Error> {
    use iolab_lab::fleet;
    let mut hosts = fleet::read_dir_within(dir, keep, read)
        .map_err(|e| Error::usage("report", e.to_string()))?;
    let merged = fleet::merge(&hosts);
    // The records move to the page's runs: the hosts keep their outcomes and files.
    for h in hosts.iter_mut().filter(|h| h.outcome == fleet::Outcome::Ok) {
        if !h.records.is_empty() {
            let name = dir.join(&h.name).display().to_string();
            files.push((name, fleet::take_records(h)));
        }
    }
    Ok((dir.display().to_string(), hosts, merged))
}

#[cfg(feature = "fleet")]
type FleetSection = (
    String,
    Vec<iolab_lab::fleet::Host>,
    Vec<iolab_lab::fleet::Merged>,
);

#[cfg(feature = "html")]
/// Everything `--svg DIR` would refuse, before any file or directory is made: DIR (or the nearest of its
/// parents that exists) must be a directory, and none of the chart files may exist or be the `--out` file.
fn check_svg(dir: &Path, svgs: &[PathBuf], out: &Path) -> Result<(), Error> {
    check_dir_path("--svg", dir)?;
    if let Some(p) = svgs.iter().find(|p| p.symlink_metadata().is_ok()) {
        return Err(Error::usage(
            "--svg",
            format!(
                "{} exists; iolab does not replace files: give another --svg directory, or remove the charts \
                 there",
                p.display()
            ),
        ));
    }
    let mut files = vec![("--out", Some(out))];
    files.extend(svgs.iter().map(|p| ("--svg", Some(p.as_path()))));
    check_apart(&files)
}

#[cfg(feature = "html")]
/// A survey document's findings (none for other files).
fn survey_findings_in(
    doc: Option<&serde_json::Value>,
) -> Vec<iolab_lab::findings_compare::Compared> {
    let Some(doc) = doc.filter(|d| d.get("ranking").is_some()) else {
        return Vec::new();
    };
    doc.get("findings")
        .and_then(|f| serde_json::from_value(f.clone()).ok())
        .unwrap_or_default()
}
