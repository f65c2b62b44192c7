//! A fio job as an iolab workload: each fio option iolab honours becomes the option of its own meaning,
//! in fio's units (numbers as fio reads them, numbers.rs; the amounts as fio works them out, amounts.rs).
//! An option iolab does not honour refuses the job, naming it, unless the run is lenient; then it is
//! listed as ignored. Where iolab does something fio does differently, the job carries a note saying so.

pub use super::ctx::Mapped;
use super::ctx::{set, Ctx};
use super::numbers::fio_seconds;
use super::parse::Job;
use iolab_engine::method::{aio, psync, MethodInfo};
use iolab_engine::registry::METHODS;
use iolab_engine::spec::RawSpec;
use std::os::unix::fs::FileTypeExt;

/// Options that change nothing in a run of one job by one process: accepted and said nowhere.
const NO_EFFECT: &[&str] = &[
    "name",
    "description",
    "group_reporting",
    "thread",
    "stonewall",
    "new_group",
    "kb_base",
    "invalidate",
    "end_fsync",
    "buffered",
];

/// Why iolab cannot honour an option, said with its refusal.
const WHY_NOT: &[(&str, &str)] = &[(
    "iodepth_batch_complete_max",
    "iolab reaps as fio does for ioengine=libaio only; other engines reap up to their submit batch at a time",
)];

/// fio's randseed when none is given (its options.c default).
const FIO_RANDSEED: u64 = 0x89;

/// io_uring's largest ring (IORING_MAX_ENTRIES).
const MAX_DEPTH: u64 = 32768;

/// The methods fio has an engine for, by the registry (`MethodInfo::fio_engine`).
fn engines() -> impl Iterator<Item = (&'static str, &'static MethodInfo)> {
    METHODS
        .iter()
        .filter_map(|e| e.info.fio_engine.map(|f| (f, e.info)))
}

/// `job` as an iolab workload; `lenient`: options iolab does not honour are listed, not refused. A
/// refusal names the job.
pub fn map(job: &Job, lenient: bool) -> Result<Mapped, String> {
    map_job(job, lenient).map_err(|e| {
        if e.starts_with("job '") {
            e
        } else {
            format!("job '{}': {e}", job.name)
        }
    })
}

fn map_job(job: &Job, lenient: bool) -> Result<Mapped, String> {
    let mut m = Mapped {
        name: job.name.clone(),
        raw: RawSpec::new(),
        ignored: Vec::new(),
        notes: Vec::new(),
        logs: None,
    };
    let kb = match job.get("kb_base") {
        None | Some("1024") => 1024,
        Some("1000") => 1000,
        Some(v) => return Err(format!("kb_base={v}: fio accepts 1000 or 1024")),
    };
    let j = Ctx { job, kb };
    let method = engine(&j, &mut m)?;
    direction(&j, &mut m)?;
    let file = super::names::target(&j, &mut m)?;
    let bs = super::block_sizes::block_size(&j, &mut m)?;
    depth(&j, &mut m, method)?;
    super::amounts::amounts(&j, &mut m, bs, method.no_data)?;
    rest(&j, &mut m, method)?;
    zones(&j, &mut m)?;
    layout(&j, &mut m, method)?;
    super::block_sizes::drawn_with(&j, &m)?;
    m.logs = super::logs::plan(job, &file, &mut m.raw, &mut m.notes)?;
    unhonoured(job, &mut m, lenient)?;
    Ok(m)
}

/// The options no function here reads: refused by name (with why, where known), or listed if lenient.
fn unhonoured(job: &Job, m: &mut Mapped, lenient: bool) -> Result<(), String> {
    let mut seen: Vec<&str> = Vec::new();
    for (k, v) in &job.opts {
        if seen.contains(&k.as_str())
            || HANDLED.contains(&k.as_str())
            || super::logs::OPTIONS.contains(&k.as_str())
            || super::verify::OPTIONS.contains(&k.as_str())
            || NO_EFFECT.contains(&k.as_str())
            // Read by `depth` for libaio, which reaps as fio does (`--reap-at-most`).
            || (k == "iodepth_batch_complete_max" && m.raw.has("reap-at-most"))
        {
            continue;
        }
        seen.push(k);
        if lenient {
            m.ignored.push(format!("{k}={v}"));
        } else {
            let why = WHY_NOT
                .iter()
                .find(|(o, _)| o == k)
                .map_or(String::new(), |(_, w)| format!("{w}; "));
            return Err(format!(
                "job '{}': {k}={v} is not an option iolab honours ({why}--fio-lenient runs the job without it \
                 and lists it)",
                job.name
            ));
        }
    }
    Ok(())
}

/// Options the functions below read (logs.rs and verify.rs read their own, their `OPTIONS`).
const HANDLED: &[&str] = &[
    "ioengine",
    "rw",
    "rwmixread",
    "bs",
    "bsrange",
    "bssplit",
    "randrepeat",
    "runtime",
    "time_based",
    "size",
    "io_size",
    "filesize",
    "numjobs",
    "nrfiles",
    "loops",
    "iodepth",
    "iodepth_batch_submit",
    "direct",
    "fsync",
    "filename",
    "filename_format",
    "directory",
    "ramp_time",
    "rate",
    "rate_iops",
    "random_distribution",
    "random_generator",
    "norandommap",
    "clat_percentiles",
    "randseed",
    "offset",
    "fallocate",
    "zonemode",
    "zonesize",
    "zonerange",
    "zoneskip",
    "zonecapacity",
];

/// zonemode=strided: `--zone-size`, `--zone-range`, `--zone-skip`. zonemode=none, fio's default, ignores
/// the zone options, but zonesize with it is refused, as fio does (init.c; its examples'
/// disk-zone-profile.fio too); zonecapacity is fio's zbd mode's, which iolab does not have.
fn zones(j: &Ctx, m: &mut Mapped) -> Result<(), String> {
    let size = j.size("zonesize")?;
    match (j.get("zonemode"), size) {
        (Some("zbd"), _) => Err("zonemode=zbd: iolab has no zoned block device mode (zone write pointers \
                                 and resets); it runs zonemode=strided"
            .into()),
        (None | Some("none"), Some(_)) => Err(
            "zonesize with zonemode=none (fio's default): fio refuses the pair; give zonemode=strided".into(),
        ),
        (Some("strided"), None) => Err("zonemode=strided needs zonesize, as in fio".into()),
        (Some(mode), _) if !["none", "strided"].contains(&mode) => Err(format!(
            "zonemode={mode}: fio takes none, strided or zbd"
        )),
        (_, None) => Ok(()),
        (_, Some(z)) => {
            set(m, "zone-size", format!("{z}"));
            for (fio, ours) in [("zonerange", "zone-range"), ("zoneskip", "zone-skip")] {
                if let Some(v) = j.size(fio)? {
                    set(m, ours, format!("{v}"));
                }
            }
            Ok(())
        }
    }
}

/// The method of the job's ioengine (fio's default engine, psync, when it names none).
fn engine(j: &Ctx, m: &mut Mapped) -> Result<&'static MethodInfo, String> {
    let method = match j.get("ioengine") {
        None => &psync::INFO,
        Some(e) => engines()
            .find(|(f, _)| *f == e)
            .map(|(_, i)| i)
            .ok_or_else(|| {
                let known: Vec<&str> = engines().map(|(f, _)| f).collect();
                format!(
                    "ioengine={e} has no iolab method (iolab runs {})",
                    known.join(", ")
                )
            })?,
    };
    set(m, "method", method.name);
    Ok(method)
}

fn direction(j: &Ctx, m: &mut Mapped) -> Result<(), String> {
    let rw = j.rw();
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
    if let Some(n) = j.rw_modifier() {
        super::walk::offset_modifier(j, m, (op, pattern), n)?;
    }
    if (op, pattern) == ("mixed", "seq") {
        // fio keeps the last position per direction: reads and writes each walk from the start.
        if j.get("zonemode").is_some_and(|z| z != "none") {
            return Err(format!(
                "rw={rw} with zonemode: fio walks reads and writes apart within its zones; iolab's zones \
                 walk both directions as one"
            ));
        }
        set(m, "walk-per-direction", true);
    }
    if op == "mixed" {
        let pct = j.count("rwmixread")?.unwrap_or(50);
        if pct > 100 {
            return Err(format!("rwmixread={pct}: a percentage, 0 to 100"));
        }
        set(m, "read-pct", pct as i64);
    }
    // fio's uniform draw ("random") visits every block once per pass (its random map) unless
    // norandommap; iolab's `once` covers the blocks alike (in another order). The other distributions
    // draw with replacement in fio too. fio's lfsr never gives a block twice in a pass, map or not (and
    // repeats its order each pass, where `once` draws a new one: a note says so).
    let uniform = matches!(j.get("random_distribution"), None | Some("random"));
    let lfsr = match j.get("random_generator") {
        None | Some("tausworthe") | Some("tausworthe64") => false,
        Some("lfsr") => true,
        Some(g) => {
            return Err(format!(
                "random_generator={g}: fio takes tausworthe, lfsr or tausworthe64"
            ))
        }
    };
    if pattern == "rand" && uniform && (lfsr || !j.flag("norandommap")?) {
        if j.get("zonemode") == Some("strided") {
            m.notes.push(
                "fio visits every block of a zone once per pass (its random map, or lfsr); in zones iolab \
                 draws blocks with replacement, as fio does with norandommap=1"
                    .into(),
            );
        } else {
            set(m, "distribution", "once");
            if lfsr {
                m.notes.push(
                    "random_generator=lfsr: fio repeats one order of the blocks every pass; iolab visits \
                     each block once a pass too, in an order drawn anew each pass"
                        .into(),
                );
            }
        }
    } else if let Some(d) = j.get("random_distribution").filter(|_| !uniform) {
        super::walk::one_zone_set(d)?;
        set(m, "distribution", d);
    }
    Ok(())
}

/// iodepth and iodepth_batch_submit: a queued engine's depth and submit batch (fio: 0, or more than the
/// depth, is the depth); a synchronous one has one op in flight per thread.
fn depth(j: &Ctx, m: &mut Mapped, method: &MethodInfo) -> Result<(), String> {
    let qd = j.count("iodepth")?.unwrap_or(1);
    if qd == 0 {
        return Err(
            "iodepth=0: fio refuses it (\"min value out of range: 0 (1 min)\"); give 1 or more"
                .into(),
        );
    }
    if qd > MAX_DEPTH {
        return Err(format!(
            "iodepth={qd}: iolab queues at most {MAX_DEPTH} requests per thread (io_uring's largest ring)"
        ));
    }
    let queued = method.takes(iolab_engine::spec::options::Applies::Depth);
    if !queued {
        if qd > 1 {
            m.notes.push(format!(
                "iodepth={qd} has no effect on a synchronous engine (as in fio): one op in flight per thread"
            ));
        }
        return Ok(());
    }
    set(m, "qd", qd as i64);
    let batch = match j.count("iodepth_batch_submit")? {
        None => 1,
        Some(0) => qd,
        Some(b) => b.min(qd),
    };
    set(m, "batch", batch as i64);
    if method.kind == aio::INFO.kind {
        // fio's libaio reaps only when its queue is full, at most iodepth_batch_complete_max (0 is
        // iodepth_batch_complete_min's 1; more than the depth is the depth, as iolab takes it too) a call:
        // then it submits as single slots free up, as iolab does.
        let max = j.count("iodepth_batch_complete_max")?.unwrap_or(1).max(1);
        set(m, "reap-at-most", max as i64);
    } else if batch > 1 {
        m.notes.push(format!(
            "iodepth_batch_submit={batch}: iolab reaps up to {batch} completions at a time and refills its queue \
             {batch} requests per submission (fewer when the queue is full or the run ends); fio also submits at \
             {batch} queued or when its queue is full, but reaps iodepth_batch_complete_max (default 1) at a \
             time, so once its queue is full it submits as single slots free up, mostly one request per call"
        ));
    }
    Ok(())
}

/// direct, fsync, ramp_time, rate, verify, randseed, randrepeat, invalidate, clat_percentiles.
fn rest(j: &Ctx, m: &mut Mapped, method: &MethodInfo) -> Result<(), String> {
    let direct = j.flag("direct")? || j.get("buffered") == Some("0");
    if direct {
        set(m, "direct", true);
    }
    let fsync = j.count("fsync")?.filter(|&n| n > 0);
    match (fsync, j.flag("end_fsync")?) {
        // fio syncs only a job that writes (should_fsync).
        (Some(_), _) | (_, true) if !j.writes() => m.notes.push(
            "fsync and end_fsync have no effect on a job that only reads: fio issues no sync, nor does iolab"
                .into(),
        ),
        (Some(_), true) => return Err("fsync and end_fsync: iolab flushes one way per run".into()),
        (Some(n), false) => {
            set(m, "fsync", format!("every:{n}"));
            m.notes.push(fsync_note(j, n, method)?);
        }
        (None, true) => set(m, "fsync", "end"),
        (None, false) => {}
    }
    if let Some(r) = j.get("ramp_time") {
        let s = fio_seconds(r).map_err(|e| format!("ramp_time={r}: {e}"))?;
        if s > 0.0 && !j.flag("time_based")? {
            return Err(format!(
                "ramp_time={r} on a job bounded by its size: fio counts the ramp's I/O against the size (what \
                 is timed is what is left), where iolab's warm-up comes before the whole amount; give \
                 time_based with a runtime, or run without ramp_time (--fio-lenient)"
            ));
        }
        set(m, "warmup", format!("{s}s"));
    }
    let mixed = matches!(j.get("rw"), Some("rw" | "readwrite" | "randrw"));
    for (fio, ours) in [("rate_iops", "rate-iops"), ("rate", "rate")] {
        if let Some(v) = j.get(fio) {
            if v.contains(',') {
                return Err(format!("{fio}={v}: iolab paces reads and writes alike"));
            }
            if mixed {
                return Err(format!(
                    "{fio}={v} on a mixed job: fio paces reads and writes apart, each at {v}, where iolab \
                     paces the ops together; run without it (--fio-lenient) or as two jobs"
                ));
            }
            let n = j.count(fio)?.unwrap_or(0);
            set(m, ours, format!("{n}"));
        }
    }
    super::verify::verify(j, m)?;
    // Percentiles are reported either way: the figures do not change.
    j.flag("clat_percentiles")?;
    // fio's randrepeat (on by default) seeds every job from randseed, 0x89 unless given: each run of the
    // job, and each job of the file, draws the same offsets and (here) writes the same pattern, so a
    // job verifying what an earlier one wrote finds it. randrepeat=0: a fresh seed each run.
    match j.count("randseed")? {
        Some(s) => set(m, "seed", format!("{s}")),
        None if j.get("randrepeat").is_none() || j.flag("randrepeat")? => {
            set(m, "seed", format!("{FIO_RANDSEED}"))
        }
        None => {}
    }
    if let Some(o) = j.size("offset")? {
        set(m, "offset", format!("{o}"));
    }
    let cached_kind = m
        .raw
        .get("target")
        .map(|t| std::fs::metadata(t.text()))
        .is_none_or(|md| md.map_or(true, |md| md.is_file() || md.file_type().is_block_device()));
    // fio's null engine touches no file, so it drops no cache.
    let null = method.no_data;
    if j.reads() && !direct && !null && cached_kind && j.get("invalidate") != Some("0") {
        set(m, "cold-cache", true);
        m.notes.push(
            "fio drops the file's cached pages before a job (invalidate=1, its default): --cold-cache".into(),
        );
    }
    Ok(())
}

/// How iolab's `--fsync every:N` differs from fio's fsync=N for the job.
fn fsync_note(j: &Ctx, n: u64, method: &MethodInfo) -> Result<String, String> {
    let qd = j.count("iodepth")?.unwrap_or(1);
    Ok(if j.reads() {
        format!(
            "fsync={n}: iolab flushes after every {n} ops, reads included; fio counts writes only"
        )
    } else if qd > 1 && method.takes(iolab_engine::spec::options::Applies::Depth) {
        format!(
            "fsync={n} at iodepth={qd}: iolab completes the ops in flight and flushes after every {n}; fio \
             queues its sync after every {n} writes it issues and keeps filling its queue meanwhile, so it \
             makes fewer (29 against 32 for 64 writes at fsync=2, iodepth=8)"
        )
    } else {
        format!(
            "fsync={n}: iolab flushes after every {n} writes, the last {n} too; fio decides on a sync as it \
             takes its next I/O, so where the writes end on a multiple of {n} it makes one fsync fewer"
        )
    })
}

/// fallocate: fio reserves the blocks of a file it lays out for a job that writes (native, its default on
/// Linux; posix, keep and the old 1); none and truncate do not. iolab's --preallocate does so for a file it
/// creates; a job that reads has its new file filled before the run in both.
fn layout(j: &Ctx, m: &mut Mapped, method: &MethodInfo) -> Result<(), String> {
    let v = j.get("fallocate").unwrap_or("native");
    let on = match v {
        "native" | "posix" | "1" | "keep" => true,
        "none" | "0" | "truncate" => false,
        _ => {
            return Err(format!(
                "fallocate={v}: fio accepts none, native, posix, keep, truncate, 0 or 1"
            ))
        }
    };
    if method.no_data || !j.writes() {
        return Ok(());
    }
    if on {
        set(m, "preallocate", true);
    }
    if j.reads() {
        return Ok(());
    }
    match v {
        "keep" => m.notes.push(
            "fallocate=keep: fio reserves a new file's blocks but leaves its size 0 (FALLOC_FL_KEEP_SIZE), so \
             its writes extend the file; iolab reserves them in a file sized before the run"
                .into(),
        ),
        "none" | "0" => m.notes.push(format!(
            "fallocate={v}: fio lays a new file out empty and its writes extend it; iolab sizes it before the \
             run (ftruncate, fio's fallocate=truncate), so no write extends it"
        )),
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(crate) fn job(opts: &[(&str, &str)]) -> Job {
        Job {
            name: "j".into(),
            opts: opts
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    pub(crate) fn val(m: &Mapped, k: &str) -> String {
        match m.raw.get(k) {
            Some(v) => v.text(),
            None => "-".into(),
        }
    }

    /// `opts` mapped (which must succeed), then each (key, value) of `want` checked ("-": not set).
    pub(crate) fn maps_to(opts: &[(&str, &str)], want: &[(&str, &str)]) -> Mapped {
        let m = map(&job(opts), false).unwrap_or_else(|e| panic!("{opts:?}: {e}"));
        for (k, v) in want {
            assert_eq!(val(&m, k), *v, "{opts:?}: {k}");
        }
        m
    }

    pub(crate) fn refused(opts: &[(&str, &str)], says: &[&str]) {
        let e = map(&job(opts), false).unwrap_err();
        for s in says {
            assert!(e.contains(s), "{opts:?}: {e}");
        }
    }

    pub(crate) const MIB: u64 = 1 << 20;

    #[test]
    fn a_randrw_job_maps_option_by_option() {
        let m = maps_to(
            &[
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
                ("filename", "/nonexistent-iolab-test/x"),
            ],
            &[
                ("method", "io_uring"),
                ("op", "mixed"),
                ("read-pct", "70"),
                ("pattern", "rand"),
                ("bs", "4096"),
                ("qd", "32"),
                ("batch", "8"),
                ("threads", "2"),
                // Two clones of one filename share its one region of 64 MiB.
                ("share-region", "true"),
                ("file-size", "67108864"),
                ("size", "-"),
                ("duration", "10"),
                ("direct", "true"),
                ("distribution", "zipf:1.2"),
                ("target", "/nonexistent-iolab-test/x"),
                ("cold-cache", "-"),
                ("preallocate", "true"),
            ],
        );
        let notes = m.notes.join("\n");
        assert!(notes.contains("iodepth_batch_submit=8"), "{notes}");
    }

    /// fio's uniform random I/O visits each block once a pass (its random map): iolab's `once`; with
    /// norandommap it draws with replacement (iolab's default, uniform); other laws are passed on.
    #[test]
    fn random_offsets_keep_fios_random_map() {
        for (extra, dist) in [
            (None, "once"),
            (Some(("random_distribution", "random")), "once"),
            (Some(("norandommap", "1")), "-"),
            (Some(("random_distribution", "pareto:0.2")), "pareto:0.2"),
            (Some(("random_generator", "tausworthe64")), "once"),
        ] {
            let mut opts = vec![("rw", "randwrite"), ("size", "1m")];
            opts.extend(extra);
            maps_to(&opts, &[("distribution", dist)]);
        }
        maps_to(&[("rw", "write"), ("size", "1m")], &[("distribution", "-")]);
        let lfsr = [
            ("rw", "randread"),
            ("size", "1m"),
            ("random_generator", "lfsr"),
        ];
        maps_to(&lfsr, &[("distribution", "once")]);
        maps_to(
            &[&lfsr[..], &[("norandommap", "1")]].concat(),
            &[("distribution", "once")],
        );
        refused(
            &[
                ("rw", "randread"),
                ("size", "1m"),
                ("random_generator", "mt"),
            ],
            &["random_generator=mt", "lfsr"],
        );
    }

    #[test]
    fn options_iolab_does_not_honour_are_refused_or_listed() {
        let j = job(&[("rw", "read"), ("ioscheduler", "none"), ("size", "1m")]);
        let e = map(&j, false).unwrap_err();
        assert!(
            e.contains("job 'j'") && e.contains("ioscheduler=none") && e.contains("--fio-lenient"),
            "{e}"
        );
        let m = map(&j, true).unwrap();
        assert_eq!(m.ignored, ["ioscheduler=none"]);
        // A buffered read job drops the cache first, as fio's invalidate=1 does.
        assert_eq!(val(&m, "cold-cache"), "true");
        for (o, says) in [
            (("ioengine", "posixaio"), "no iolab method"),
            (("rw", "trim"), "rw=trim"),
            (("bs", "4k,8k"), "reads and writes of other lengths"),
            (("bs", "8k,"), "none empty"),
            (("filename", "a:b"), "one file"),
            (("directory", "a:b"), "one directory"),
            (("fallocate", "yes"), "fallocate=yes"),
            (("rate_iops", "100"), "paces reads and writes apart"),
            (("ramp_time", "2"), "counts the ramp's I/O against the size"),
        ] {
            refused(&[("rw", "randrw"), ("size", "1m"), o], &[says, "job 'j'"]);
        }
        // fio puts an absolute filename under the directory too.
        let m = map(
            &job(&[
                ("rw", "write"),
                ("size", "1m"),
                ("directory", "/nonexistent-iolab-test/d"),
                ("filename", "/dev/loop0"),
            ]),
            false,
        )
        .unwrap();
        assert_eq!(val(&m, "target"), "/nonexistent-iolab-test/d/dev/loop0");
    }

    /// fallocate: native (the default), posix, 1 and keep reserve a written file's blocks; none, 0 and
    /// truncate do not; a read job's file is filled anyway.
    #[test]
    fn fallocate_maps_to_preallocate() {
        for (v, on, note) in [
            (None, "true", false),
            (Some("native"), "true", false),
            (Some("posix"), "true", false),
            (Some("1"), "true", false),
            (Some("keep"), "true", true),
            (Some("none"), "-", true),
            (Some("0"), "-", true),
            (Some("truncate"), "-", false),
        ] {
            let mut o = vec![("size", "1m"), ("rw", "write")];
            o.extend(v.map(|v| ("fallocate", v)));
            let m = maps_to(&o, &[("preallocate", on)]);
            assert_eq!(
                m.notes.iter().any(|n| n.contains("fallocate=")),
                note,
                "{v:?}: {:?}",
                m.notes
            );
        }
        maps_to(&[("size", "1m"), ("rw", "read")], &[("preallocate", "-")]);
        maps_to(
            &[("size", "1m"), ("rw", "randrw")],
            &[("preallocate", "true")],
        );
    }

    #[test]
    fn numbers_block_sizes_and_flags_in_fios_meaning() {
        for (opts, bs) in [
            (&[("bs", "1Ki")][..], "1024"),
            (&[("bs", "0x1000")][..], "4096"),
            (
                &[("bs", "4KiB"), ("kb_base", "1000"), ("size", "1024KiB")][..],
                "4096",
            ),
            (&[("bsrange", "4k-4k")][..], "4096"),
            (&[("bs", "8k"), ("bsrange", "4k:4k")][..], "4096"),
            (&[("bs", "8k,16k")][..], "8192"),
            (&[("bs", "8k,16k"), ("rw", "write")][..], "16384"),
            (
                &[("bsrange", "8k-8k,16k-16k"), ("rw", "write")][..],
                "16384",
            ),
        ] {
            let mut o = vec![("size", "1m")];
            o.extend_from_slice(opts);
            maps_to(&o, &[("bs", bs)]);
        }
        refused(
            &[("size", "1m"), ("bs", "8k,16k"), ("rw", "rw")],
            &["reads and writes of other lengths"],
        );
        maps_to(
            &[
                ("size", "1m"),
                ("ioengine", "libaio"),
                ("iodepth", "0x10"),
                ("iodepth_batch_submit", "0"),
            ],
            &[("qd", "16"), ("batch", "16")],
        );
        // libaio reaps as fio's: at most iodepth_batch_complete_max a call (1 by default; aio takes at most
        // the depth).
        maps_to(
            &[
                ("size", "1m"),
                ("ioengine", "libaio"),
                ("iodepth", "4"),
                ("iodepth_batch_submit", "64"),
            ],
            &[("qd", "4"), ("batch", "4"), ("reap-at-most", "1")],
        );
        maps_to(
            &[
                ("size", "1m"),
                ("ioengine", "libaio"),
                ("iodepth", "4"),
                ("iodepth_batch_complete_max", "8"),
            ],
            &[("qd", "4"), ("reap-at-most", "8")],
        );
        let m = maps_to(
            &[
                ("size", "1m"),
                ("ioengine", "io_uring"),
                ("iodepth", "4"),
                ("iodepth_batch_submit", "4"),
            ],
            &[("qd", "4"), ("batch", "4")],
        );
        assert!(
            m.notes
                .iter()
                .any(|n| n.contains("iodepth_batch_complete_max (default 1)")),
            "{:?}",
            m.notes
        );
        maps_to(
            &[("size", "1m"), ("runtime", "500ms")],
            &[("duration", "0.5")],
        );
        refused(&[("size", "1m"), ("runtime", "0.5")], &["whole numbers"]);
        refused(&[("size", "1m"), ("bs", "1.5k")], &["whole numbers"]);
        // time_based without a runtime: fio warns and runs by size.
        let m = maps_to(
            &[("size", "1m"), ("time_based", "1")],
            &[("size", &MIB.to_string())],
        );
        assert!(
            m.notes.iter().any(|n| n.contains("time_based without")),
            "{:?}",
            m.notes
        );
    }

    #[test]
    fn strided_zones_map_to_the_zone_flags_and_zbd_is_refused() {
        let size = [("size", "1m")];
        let with = |more: &[(&'static str, &'static str)]| [&size[..], more].concat();
        let m = maps_to(
            &with(&[
                ("zonemode", "strided"),
                ("zonesize", "64k"),
                ("zoneskip", "1m"),
            ]),
            &[("zone-size", "65536"), ("zone-skip", "1048576")],
        );
        assert!(m.raw.get("zone-range").is_none());
        maps_to(
            &with(&[
                ("zonemode", "strided"),
                ("zonesize", "8k"),
                ("zonerange", "4k"),
            ]),
            &[("zone-size", "8192"), ("zone-range", "4096")],
        );
        // zonemode=none: the zone options are ignored, as fio does.
        let m = maps_to(&with(&[("zonemode", "none"), ("zoneskip", "4k")]), &[]);
        assert!(m.raw.get("zone-skip").is_none());
        refused(
            &with(&[("zonemode", "zbd"), ("zonesize", "256m")]),
            &["zonemode=zbd", "strided"],
        );
        refused(
            &with(&[("zonemode", "none"), ("zonesize", "8k")]),
            &["zonemode=none", "strided"],
        );
        refused(
            &with(&[("zonesize", "8k")]),
            &["zonemode=none (fio's default)"],
        );
        refused(&with(&[("zonemode", "strided")]), &["needs zonesize"]);
        refused(
            &with(&[("zonemode", "zig"), ("zonesize", "8k")]),
            &["zonemode=zig"],
        );
    }
}
