//! A fio job as an iolab workload: each fio option iolab honours becomes the option of its own meaning,
//! in fio's units (sizes with `kb_base`, times in seconds by default). An option iolab does not honour
//! refuses the job, naming it, unless the run is lenient; then it is listed as ignored. Where iolab
//! does something fio does differently by default, the job carries a note saying so.

use super::parse::Job;
use iolab_engine::spec::RawSpec;
use std::os::unix::fs::FileTypeExt;

/// A job mapped: its name, the workload, what was ignored (lenient) and the notes on differences.
#[derive(Debug, Clone)]
pub struct Mapped {
    pub name: String,
    pub raw: RawSpec,
    pub ignored: Vec<String>,
    pub notes: Vec<String>,
}

/// Options that change nothing in a run of one job by one process: accepted and said nowhere.
const NO_EFFECT: &[&str] = &[
    "name",
    "description",
    "group_reporting",
    "thread",
    "stonewall",
    "new_group",
    "randrepeat",
    "kb_base",
    "iodepth",
    "iodepth_batch_submit",
    "norandommap",
    "invalidate",
    "time_based",
    "size",
    "io_size",
    "filesize",
    "numjobs",
    "end_fsync",
    "buffered",
];

/// iolab's most threads, and io_uring's largest ring (IORING_MAX_ENTRIES).
const MAX_JOBS: u64 = 1024;
const MAX_DEPTH: u64 = 32768;

/// fio's engines and the iolab method of each.
const ENGINES: &[(&str, &str)] = &[
    ("psync", "psync"),
    ("sync", "sync"),
    ("pvsync", "vectored"),
    ("pvsync2", "pv2"),
    ("libaio", "aio"),
    ("io_uring", "io_uring"),
    ("mmap", "mmap"),
    ("splice", "splice"),
    ("null", "nop"),
];

/// `job` as an iolab workload; `lenient`: options iolab does not honour are listed, not refused.
pub fn map(job: &Job, lenient: bool) -> Result<Mapped, String> {
    let mut m = Mapped {
        name: job.name.clone(),
        raw: RawSpec::new(),
        ignored: Vec::new(),
        notes: Vec::new(),
    };
    let kb = match job.get("kb_base") {
        None | Some("1024") => 1024,
        Some("1000") => 1000,
        Some(v) => return Err(format!("kb_base={v}: fio accepts 1000 or 1024")),
    };
    let j = Ctx { job, kb };
    let method = engine(&j, &mut m)?;
    direction(&j, &mut m)?;
    amounts(&j, &mut m)?;
    depth(&j, &mut m, method)?;
    target(&j, &mut m)?;
    rest(&j, &mut m)?;
    let mut seen: Vec<&str> = Vec::new();
    for (k, v) in &job.opts {
        if seen.contains(&k.as_str())
            || HANDLED.contains(&k.as_str())
            || NO_EFFECT.contains(&k.as_str())
        {
            continue;
        }
        seen.push(k);
        if lenient {
            m.ignored.push(format!("{k}={v}"));
        } else {
            return Err(format!(
                "job '{}': {k}={v} is not an option iolab honours (--fio-lenient runs the job without it \
                 and lists it)",
                job.name
            ));
        }
    }
    Ok(m)
}

/// Options the functions below read.
const HANDLED: &[&str] = &[
    "ioengine",
    "rw",
    "rwmixread",
    "bs",
    "runtime",
    "direct",
    "fsync",
    "filename",
    "directory",
    "ramp_time",
    "rate",
    "rate_iops",
    "random_distribution",
    "verify",
    "randseed",
    "offset",
];

struct Ctx<'a> {
    job: &'a Job,
    kb: u64,
}

impl Ctx<'_> {
    fn get(&self, k: &str) -> Option<&str> {
        self.job.get(k)
    }

    fn size(&self, k: &str) -> Result<Option<u64>, String> {
        self.get(k)
            .map(|v| fio_size(v, self.kb).map_err(|e| format!("{k}={v}: {e}")))
            .transpose()
    }

    fn flag(&self, k: &str) -> Result<bool, String> {
        match self.get(k) {
            None | Some("0") | Some("false") => Ok(false),
            Some("1") | Some("true") => Ok(true),
            Some(v) => Err(format!("{k}={v}: expected 0 or 1")),
        }
    }

    fn count(&self, k: &str) -> Result<Option<u64>, String> {
        self.get(k)
            .map(|v| {
                v.parse::<u64>()
                    .map_err(|_| format!("{k}={v}: expected a whole number"))
            })
            .transpose()
    }
}

fn set(m: &mut Mapped, k: &str, v: impl Into<iolab_engine::spec::options::Val>) {
    m.raw
        .set(k, v)
        .unwrap_or_else(|e| panic!("internal: fio mapping sets {k}: {e}"));
}

fn engine(j: &Ctx, m: &mut Mapped) -> Result<&'static str, String> {
    let e = j.get("ioengine").unwrap_or("psync");
    let method = ENGINES
        .iter()
        .find(|(f, _)| *f == e)
        .map(|(_, i)| *i)
        .ok_or_else(|| {
            let known: Vec<&str> = ENGINES.iter().map(|(f, _)| *f).collect();
            format!(
                "ioengine={e} has no iolab method (iolab runs {})",
                known.join(", ")
            )
        })?;
    set(m, "method", method);
    Ok(method)
}

fn direction(j: &Ctx, m: &mut Mapped) -> Result<(), String> {
    let rw = j.get("rw").unwrap_or("read");
    let (op, pattern) = match rw {
        "read" => ("read", "seq"),
        "write" => ("write", "seq"),
        "randread" => ("read", "rand"),
        "randwrite" => ("write", "rand"),
        "rw" | "readwrite" => ("mixed", "seq"),
        "randrw" => ("mixed", "rand"),
        _ => {
            return Err(format!(
                "rw={rw}: iolab runs read, write, randread, randwrite, rw and randrw"
            ))
        }
    };
    set(m, "op", op);
    set(m, "pattern", pattern);
    if op == "mixed" {
        let pct = j.count("rwmixread")?.unwrap_or(50);
        if pct > 100 {
            return Err(format!("rwmixread={pct}: a percentage, 0 to 100"));
        }
        set(m, "read-pct", pct as i64);
    }
    if pattern == "rand" && !j.flag("norandommap")? && j.get("random_distribution").is_none() {
        m.notes.push(
            "fio visits every block once per pass (its random map) unless norandommap=1; iolab draws blocks \
             with replacement, as fio does with norandommap=1"
                .into(),
        );
    }
    if let Some(d) = j.get("random_distribution") {
        set(m, "distribution", d);
    }
    Ok(())
}

/// numjobs, size, io_size, filesize, runtime and time_based: fio's sizes are per job, iolab's totals are
/// over its threads.
fn amounts(j: &Ctx, m: &mut Mapped) -> Result<(), String> {
    let jobs = j.count("numjobs")?.unwrap_or(1).max(1);
    if jobs > MAX_JOBS {
        return Err(format!(
            "numjobs={jobs}: iolab runs at most {MAX_JOBS} threads"
        ));
    }
    if jobs > 1 {
        set(m, "threads", jobs as i64);
        m.notes.push(format!(
            "numjobs={jobs}: {jobs} threads of one process, each in its own region of one file (fio's jobs \
             are processes, each with its own file unless they share a filename)"
        ));
    }
    let per_job = j.size("size")?;
    let file = j.size("filesize")?.or(per_job);
    let times_jobs = |v: u64, what: &str| {
        v.checked_mul(jobs)
            .ok_or_else(|| format!("{what} x numjobs={jobs} is more bytes than iolab counts"))
    };
    if let Some(f) = file {
        set(m, "file-size", format!("{}", times_jobs(f, "size")?));
    }
    let io = j.size("io_size")?.or(per_job);
    let timed = j.flag("time_based")?;
    let runtime = j
        .get("runtime")
        .map(|r| fio_seconds(r).map_err(|e| format!("runtime={r}: {e}")))
        .transpose()?
        // fio's runtime=0: no time limit.
        .filter(|&s| s > 0.0);
    if let Some(s) = runtime {
        set(m, "duration", format!("{s}"));
    } else if timed {
        return Err("time_based needs runtime".into());
    }
    if let (Some(b), false) = (io, timed) {
        set(m, "size", format!("{}", times_jobs(b, "io_size")?));
    }
    if io.is_none() && runtime.is_none() {
        m.notes.push(
            "no size or runtime: iolab's default amount (100,000 ops, at most 10 s), where fio would refuse \
             a job on a file without a size"
                .into(),
        );
    }
    Ok(())
}

fn depth(j: &Ctx, m: &mut Mapped, method: &str) -> Result<(), String> {
    let qd = j.count("iodepth")?.unwrap_or(1);
    if qd > MAX_DEPTH {
        return Err(format!(
            "iodepth={qd}: at most {MAX_DEPTH} (io_uring's largest ring)"
        ));
    }
    let queued = matches!(method, "io_uring" | "aio");
    if queued {
        set(m, "qd", qd.max(1) as i64);
        let batch = j.count("iodepth_batch_submit")?.unwrap_or(1);
        set(m, "batch", batch.clamp(1, qd.max(1)) as i64);
    } else if qd > 1 {
        m.notes.push(format!(
            "iodepth={qd} has no effect on a synchronous engine (as in fio): one op in flight per thread"
        ));
    }
    if let Some(bs) = j.get("bs") {
        let one = bs.split(',').next().unwrap_or(bs);
        if bs.split(',').any(|b| !b.is_empty() && b != one) {
            return Err(format!(
                "bs={bs}: iolab runs one block size for reads and writes"
            ));
        }
        let n = fio_size(one, j.kb).map_err(|e| format!("bs={bs}: {e}"))?;
        set(m, "bs", format!("{n}"));
    }
    Ok(())
}

/// filename and directory as fio joins them (directory/filename; the job's name.0.0 without a filename);
/// a path is always a file to iolab, never its stream words (tcp, pipe, socketpair).
fn target(j: &Ctx, m: &mut Mapped) -> Result<(), String> {
    let dir = match j.get("directory") {
        Some("") => return Err("directory= is empty: give a directory, or leave it out".into()),
        d => d.map(|d| d.trim_end_matches('/').to_string()),
    };
    let name = match j.get("filename") {
        Some(f) if f.contains(':') => {
            return Err(format!("filename={f}: iolab runs one file per job"))
        }
        Some("") => return Err("filename= is empty: give a file, or leave it out".into()),
        Some(f) => f.to_string(),
        None => format!("{}.0.0", j.job.name),
    };
    let path = match dir {
        Some(d) if !name.starts_with('/') => {
            format!("{}/{name}", if d.is_empty() { "" } else { &d })
        }
        _ if !name.contains('/') => format!("./{name}"),
        _ => name,
    };
    set(m, "target", path);
    Ok(())
}

/// direct, fsync, ramp_time, rate, verify, randseed, offset, invalidate.
fn rest(j: &Ctx, m: &mut Mapped) -> Result<(), String> {
    let direct = j.flag("direct")? || j.get("buffered") == Some("0");
    if direct {
        set(m, "direct", true);
    }
    match (j.count("fsync")?.filter(|&n| n > 0), j.flag("end_fsync")?) {
        (Some(_), true) => return Err("fsync and end_fsync: iolab flushes one way per run".into()),
        (Some(n), false) => {
            set(m, "fsync", format!("every:{n}"));
            if matches!(j.get("rw"), Some("rw" | "randrw")) {
                m.notes.push(format!(
                    "fsync={n}: iolab flushes after every {n} ops, reads included; fio counts writes only"
                ));
            }
        }
        (None, true) => set(m, "fsync", "end"),
        (None, false) => {}
    }
    if let Some(r) = j.get("ramp_time") {
        let s = fio_seconds(r).map_err(|e| format!("ramp_time={r}: {e}"))?;
        set(m, "warmup", format!("{s}s"));
    }
    for (fio, ours) in [("rate_iops", "rate-iops"), ("rate", "rate")] {
        if let Some(v) = j.get(fio) {
            if v.contains(',') {
                return Err(format!("{fio}={v}: iolab paces reads and writes alike"));
            }
            let n = if fio == "rate" {
                fio_size(v, j.kb)?
            } else {
                j.count(fio)?.unwrap_or(0)
            };
            set(m, ours, format!("{n}"));
        }
    }
    if let Some(v) = j.get("verify").filter(|v| *v != "0" && *v != "null") {
        set(m, "verify", true);
        m.notes.push(format!(
            "verify={v}: iolab checks its own pattern (stamps per block and sector) after the run"
        ));
    }
    if let Some(s) = j.count("randseed")? {
        set(m, "seed", format!("{s}"));
    }
    if let Some(o) = j.size("offset")? {
        set(m, "offset", format!("{o}"));
    }
    let reads = !matches!(j.get("rw"), Some("write" | "randwrite"));
    let cached_kind = m
        .raw
        .get("target")
        .map(|t| std::fs::metadata(t.text()))
        .is_none_or(|md| md.map_or(true, |md| md.is_file() || md.file_type().is_block_device()));
    if reads && !direct && cached_kind && j.get("invalidate") != Some("0") {
        set(m, "cold-cache", true);
        m.notes.push(
            "fio drops the file's cached pages before a job (invalidate=1, its default): --cold-cache".into(),
        );
    }
    Ok(())
}

/// A size in fio's meaning: with kb_base 1024 (its default) k/m/g/t/p, with or without B, are powers of
/// 1024 and KiB/MiB... powers of 1000; kb_base 1000 swaps them.
pub fn fio_size(v: &str, kb: u64) -> Result<u64, String> {
    let t = v.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{v}' is not a size (a whole number with k, m, g, t or p)"))?;
    let u = unit.to_ascii_lowercase();
    let (letter, iec) = match u.as_str() {
        "" | "b" => return Ok(n),
        s if s.ends_with("ib") && s.len() == 3 => (&s[..1], true),
        s if s.ends_with('b') && s.len() == 2 => (&s[..1], false),
        s if s.len() == 1 => (s, false),
        _ => return Err(format!("'{v}': unit '{unit}' is not k, m, g, t or p")),
    };
    let pow = match letter {
        "k" => 1,
        "m" => 2,
        "g" => 3,
        "t" => 4,
        "p" => 5,
        _ => return Err(format!("'{v}': unit '{unit}' is not k, m, g, t or p")),
    };
    let base = match (kb, iec) {
        (1024, false) | (1000, true) => 1024u64,
        _ => 1000,
    };
    n.checked_mul(base.pow(pow))
        .ok_or_else(|| format!("'{v}' is too large"))
}

/// A time in fio's meaning: seconds unless a unit says otherwise (us, ms, s, m, h, d).
pub fn fio_seconds(v: &str) -> Result<f64, String> {
    let t = v.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("'{v}' is not a time (seconds, or with us, ms, s, m, h or d)"))?;
    let scale = match unit.to_ascii_lowercase().as_str() {
        "" | "s" => 1.0,
        "us" => 1e-6,
        "ms" => 1e-3,
        "m" => 60.0,
        "h" => 3600.0,
        "d" => 86400.0,
        _ => return Err(format!("'{v}': unit '{unit}' is not us, ms, s, m, h or d")),
    };
    Ok(n * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(opts: &[(&str, &str)]) -> Job {
        Job {
            name: "j".into(),
            opts: opts
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    fn val(m: &Mapped, k: &str) -> String {
        match m.raw.get(k) {
            Some(v) => v.text(),
            None => "-".into(),
        }
    }

    #[test]
    fn sizes_and_times_in_fios_meaning() {
        assert_eq!(fio_size("4k", 1024), Ok(4096));
        assert_eq!(fio_size("4KB", 1024), Ok(4096));
        assert_eq!(fio_size("4KiB", 1024), Ok(4000));
        assert_eq!(fio_size("4KiB", 1000), Ok(4096));
        assert_eq!(fio_size("1g", 1024), Ok(1 << 30));
        assert!(fio_size("4x", 1024).is_err());
        assert_eq!(fio_seconds("30"), Ok(30.0));
        assert_eq!(fio_seconds("500ms"), Ok(0.5));
        assert_eq!(fio_seconds("2m"), Ok(120.0));
    }

    #[test]
    fn a_randrw_job_maps_option_by_option() {
        let m = map(
            &job(&[
                ("ioengine", "io_uring"),
                ("rw", "randrw"),
                ("rwmixread", "70"),
                ("bs", "4k"),
                ("iodepth", "32"),
                ("iodepth_batch_submit", "8"),
                ("numjobs", "2"),
                ("size", "64m"),
                ("direct", "1"),
                ("runtime", "10"),
                ("time_based", "1"),
                ("random_distribution", "zipf:1.2"),
                ("filename", "/var/tmp/x"),
                ("rate_iops", "500"),
            ]),
            false,
        )
        .unwrap();
        for (k, want) in [
            ("method", "io_uring"),
            ("op", "mixed"),
            ("read-pct", "70"),
            ("pattern", "rand"),
            ("bs", "4096"),
            ("qd", "32"),
            ("batch", "8"),
            ("threads", "2"),
            ("file-size", "134217728"),
            ("size", "-"),
            ("duration", "10"),
            ("direct", "true"),
            ("distribution", "zipf:1.2"),
            ("target", "/var/tmp/x"),
            ("rate-iops", "500"),
            ("cold-cache", "-"),
        ] {
            assert_eq!(val(&m, k), want, "{k}");
        }
    }

    #[test]
    fn options_iolab_does_not_honour_are_refused_or_listed() {
        let j = job(&[("rw", "read"), ("ioscheduler", "none"), ("size", "1m")]);
        let e = map(&j, false).unwrap_err();
        assert!(
            e.contains("ioscheduler=none") && e.contains("--fio-lenient"),
            "{e}"
        );
        let m = map(&j, true).unwrap();
        assert_eq!(m.ignored, ["ioscheduler=none"]);
        // A buffered read job drops the cache first, as fio's invalidate=1 does.
        assert_eq!(val(&m, "cold-cache"), "true");
        for (o, says) in [
            (("ioengine", "posixaio"), "no iolab method"),
            (("rw", "trim"), "rw=trim"),
            (("bs", "4k,8k"), "one block size"),
            (("filename", "a:b"), "one file"),
        ] {
            let e = map(&job(&[o]), false).unwrap_err();
            assert!(e.contains(says), "{o:?}: {e}");
        }
    }
}
