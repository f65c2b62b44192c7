//! fio job files (`iolab run --fio FILE`): read as fio reads them (parse.rs, numbers.rs) and mapped option
//! by option to iolab's workload (map.rs; the amounts, amounts.rs); `--across-methods` runs a job once per
//! method that can do it, at the same number of requests in flight.

mod amounts;
mod block_sizes;
mod ctx;
pub mod logs;
pub mod map;
mod names;
pub mod numbers;
pub mod parse;
mod verify;
mod walk;

pub use map::Mapped;
pub use parse::Job;

use iolab_engine::method::kind::MethodKind;
use iolab_engine::spec::RawSpec;
use std::path::Path;

/// The jobs of `path` mapped (every job, or the one named `section`), `${VAR}` from the environment.
pub fn load(path: &Path, section: Option<&str>, lenient: bool) -> Result<Vec<Mapped>, String> {
    let env = |v: &str| std::env::var(v).ok();
    let jobs = parse::parse_file(path, &env)?;
    let mut mapped = chosen(&jobs, path, section)?
        .into_iter()
        .map(|j| map::map(j, lenient))
        .collect::<Result<Vec<Mapped>, String>>()?;
    // A per-job log's name carries fio's number of the job over the file.
    let clones = number(&mut mapped);
    let most = parse::FIO_MAX_JOBS as u64;
    if clones > most {
        return Err(format!(
            "{}: its jobs come to {} with their clones (numjobs), more than fio runs (\"maximum number \
             of jobs ({most}) reached\"), and so does iolab",
            path.display(),
            iolab_engine::units::thousands_u64(clones)
        ));
    }
    Ok(mapped)
}

/// What [`load`] refuses of the file's text alone, for a machine that runs it elsewhere (a guest): its
/// syntax, its includes and their bounds, and `section` where it has no such job. Variables are left
/// unread (the other machine's environment sets them).
pub fn check_file(path: &Path, section: Option<&str>) -> Result<(), String> {
    let env = |v: &str| Some(format!("${{{v}}}"));
    let jobs = parse::parse_file(path, &env)?;
    chosen(&jobs, path, section).map(|_| ())
}

/// The jobs `section` names (all without it).
fn chosen<'a>(jobs: &'a [Job], path: &Path, section: Option<&str>) -> Result<Vec<&'a Job>, String> {
    Ok(match section {
        Some(s) => {
            let j = jobs.iter().find(|j| j.name == s).ok_or_else(|| {
                // The first names, each cut: a file of 4,096 long names made a 1 MB line.
                let shown = 10;
                let mut names: Vec<String> = jobs
                    .iter()
                    .take(shown)
                    .map(|j| iolab_engine::units::clip_middle(&j.name, 40))
                    .collect();
                if jobs.len() > shown {
                    names.push(format!("and {} more", jobs.len() - shown));
                }
                format!(
                    "no job '{}' in {} (its jobs: {})",
                    iolab_engine::units::clip_middle(s, 40),
                    path.display(),
                    names.join(", ")
                )
            })?;
            vec![j]
        }
        None => jobs.iter().collect(),
    })
}

/// `--across-methods`: the job once per method of the registry, every one at the job's requests in
/// flight (`--inflight`, threads x depth: a synchronous method with that many threads, a queued one that
/// depth on one thread); the floor (nop) and the offload client are left out.
pub fn across_methods(m: &Mapped) -> Vec<(MethodKind, RawSpec)> {
    let text = |k: &str| m.raw.get(k).map(|v| v.text());
    let n = |k: &str| text(k).and_then(|v| v.parse::<i64>().ok()).unwrap_or(1);
    let inflight = n("threads") * n("qd");
    MethodKind::all()
        .filter(|k| {
            !k.info().no_data && k.info().exec != iolab_engine::method::info::Exec::OutOfProcess
        })
        .map(|k| {
            let mut raw = RawSpec::new()
                .with("method", k.name())
                .with("inflight", inflight);
            for o in m.raw.given() {
                // The depth is the inflight above; an option the method does not take goes
                // (libaio's --reap-at-most).
                if !matches!(o.key, "method" | "threads" | "qd" | "batch") && o.applies_to(k) {
                    raw.set(o.key, m.raw.get(o.key).cloned().expect("given"))
                        .expect("a known key");
                }
            }
            (k, raw)
        })
        .collect()
}

/// Numbers the jobs' clones as fio does over a file (from 1, in the order of the jobs, numjobs each),
/// which is what a per-job log's file name carries.
/// Returns how many clones the jobs make in all (each one counts against fio's limit of jobs).
pub(crate) fn number(jobs: &mut [Mapped]) -> u64 {
    let mut next = 1u32;
    let mut all = 0u64;
    for j in jobs {
        let clones = j
            .raw
            .get("threads")
            .and_then(|v| v.text().parse::<u32>().ok())
            .unwrap_or(1);
        if let Some(p) = j.logs.as_mut() {
            p.first = next;
        }
        next = next.saturating_add(clones);
        all += u64::from(clones);
    }
    all
}

#[cfg(test)]
mod tests {
    /// fio counts each clone of a job against its limit: 5 jobs of numjobs=1024 are refused before any
    /// runs (they ran, 1,024 threads at a time, 1.7 GB); 4 of them, 4,096 clones, are read.
    #[test]
    fn clones_past_fios_limit_of_jobs_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("clones.fio");
        let file = |n: usize| {
            let jobs: String = (0..n).map(|i| format!("[j{i}]\n")).collect();
            let g = "[global]\nfilename=/dev/null\nrw=write\nnumjobs=1024\nsize=4k\n";
            std::fs::write(&p, format!("{g}{jobs}")).unwrap();
        };
        file(4);
        assert_eq!(super::load(&p, None, false).unwrap().len(), 4);
        file(5);
        let e = super::load(&p, None, false).unwrap_err();
        assert!(
            e.contains("come to 5,120 with their clones (numjobs)") && e.contains("(4096)"),
            "{e}"
        );
    }

    /// A file of more jobs than fio takes is refused before any runs (each job runs tens of ms at the
    /// least: 100,000 of them an hour); as many as fio takes are read.
    #[test]
    fn a_file_of_more_jobs_than_fio_takes_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("many.fio");
        let file = |n: usize| {
            let jobs: String = (0..n).map(|i| format!("[j{i}]\n")).collect();
            std::fs::write(
                &p,
                format!("[global]\nfilename=/dev/null\nrw=write\n{jobs}"),
            )
            .unwrap();
        };
        let most = super::parse::FIO_MAX_JOBS;
        file(most);
        assert!(super::check_file(&p, None).is_ok());
        // Refused at the first job too many, before the rest of the file is read into jobs: 100,000
        // sections in a moment.
        file(100_000);
        let t = std::time::Instant::now();
        let e = super::check_file(&p, Some("j0")).unwrap_err();
        assert!(
            e.contains("job 4097 of the file: fio takes at most 4096"),
            "{e}"
        );
        println!("100,000 sections refused in {:?}", t.elapsed());
        // A section it lacks is named with the file's first ten jobs, each cut, not all of them.
        let long = "n".repeat(200);
        let jobs: String = (0..most).map(|i| format!("[{long}{i}]\n")).collect();
        std::fs::write(
            &p,
            format!("[global]\nfilename=/dev/null\nrw=write\n{jobs}"),
        )
        .unwrap();
        let e = super::check_file(&p, Some("nope")).unwrap_err();
        assert!(e.len() < 1000, "{} bytes: {e}", e.len());
        assert!(e.contains(&format!("and {} more)", most - 10)), "{e}");
    }
}
