//! The storage paper's questions (Joyce and Audsley, §3.4 and §5): where buffered and direct I/O cross and
//! why, whether the CPU is the bottleneck, and how much of its time goes to copying (Figure 4).

use super::reply::{ns, pct, Ctx, Reply};
use crate::findings_compare::Fig;
use crate::findings_compare::{crossover, Row};
use iolab_engine::units::fmt_size;

/// The families of rows (same step, direction, method, threads), in first-seen order.
fn families<'a>(c: &'a Ctx) -> Vec<Vec<&'a Row>> {
    let mut keys: Vec<(String, bool, String, u32)> = Vec::new();
    let key = |r: &Row| (r.step.clone(), r.facts.write, r.way.clone(), r.threads);
    for r in &c.rows {
        if !keys.contains(&key(r)) {
            keys.push(key(r));
        }
    }
    keys.iter()
        .map(|k| c.rows.iter().copied().filter(|r| &key(r) == k).collect())
        .collect()
}

/// Runs shorter than this have no CPU share worth printing: getrusage counts whole scheduler ticks (4 ms
/// at HZ=250).
const MIN_WALL_S: f64 = 0.05;

/// System time over wall time, when the run was long enough to tell.
fn kernel_share(r: &Row) -> Option<f64> {
    (r.cited(Fig::WallS) >= MIN_WALL_S).then(|| r.cited(Fig::SysS) / r.cited(Fig::WallS))
}

/// " (copying to/from user: 52% of its samples)" when the row was profiled.
fn copy_clause(r: &Row) -> String {
    r.facts
        .profile
        .as_ref()
        .filter(|p| p.samples >= 50)
        .map(|p| {
            format!(
                " (copying to/from user: {} of its samples)",
                pct(p.copy_share)
            )
        })
        .unwrap_or_default()
}

/// The busiest CPU's kernel share system-wide, when its run counted enough ticks of /proc/stat.
fn core_share(r: &Row) -> Option<f64> {
    r.busiest_core
        .filter(|(_, ticks)| *ticks as f64 >= crate::suite_rows::FEW_TICKS)
        .map(|_| r.cited(Fig::BusiestCore))
}

/// " (the busiest core 97% system-wide)" when it was measured well enough.
fn core_clause(r: &Row) -> String {
    core_share(r)
        .map(|s| format!(" (the busiest core {} system-wide)", pct(s)))
        .unwrap_or_default()
}

fn tmpfs(r: &Row) -> bool {
    r.fs.as_deref() == Some("tmpfs")
}

/// A row's block size, cited.
fn bs(r: &Row) -> String {
    fmt_size(r.cited(Fig::Bs) as u64)
}

/// The share of a buffered read's bytes the device gave (the device's own count; where no disk counted
/// them, the process's storage reads), with the figure's name; none where nothing counted them.
fn from_device(r: &Row) -> Option<f64> {
    let fig = if r.device_counted {
        Fig::DeviceReadBytes
    } else {
        Fig::ProcReadBytes
    };
    let dev = r.cited_opt(fig)?;
    let read = r.cited(Fig::Bytes);
    (read > 0.0).then(|| dev / read)
}

/// "the device gave 64 KiB of the 1 MiB read" (or what the process fetched, where no disk counted).
fn gave(r: &Row) -> String {
    match r.device_counted {
        true => format!(
            "the device gave {} of the {} read",
            fmt_size(r.cited(Fig::DeviceReadBytes) as u64),
            fmt_size(r.cited(Fig::Bytes) as u64)
        ),
        false => format!(
            "the process's storage reads were {} of the {} read, by its /proc/self/io",
            fmt_size(r.cited(Fig::ProcReadBytes) as u64),
            fmt_size(r.cited(Fig::Bytes) as u64)
        ),
    }
}

/// A buffered read that took less than this share of its bytes from the device is no device figure (the
/// run's verdict: page-cache below half, partly cached below this).
const FROM_DEVICE: f64 = crate::verdict::FROM_DEVICE;

fn buffered_reads<'a>(fam: &[&'a Row]) -> Vec<&'a Row> {
    fam.iter()
        .copied()
        .filter(|r| !r.facts.direct && !tmpfs(r) && !r.facts.write)
        .collect()
}

/// What the buffered rows of a family did not do that the paper's did (tmpfs, the paper's RAM disk, has
/// no device behind its pages).
fn caveats(fam: &[&Row]) -> Vec<String> {
    let mut out = Vec::new();
    if fam
        .iter()
        .any(|r| !r.facts.direct && !tmpfs(r) && r.facts.write && !r.flushes)
    {
        out.push(
            "its buffered writes never reached the device inside the timed span (no fsync: the bytes stayed in \
             the page cache)"
                .to_string(),
        );
    }
    let reads = buffered_reads(fam);
    // A read nothing counted is cached if its pages were not dropped, else not judged.
    let cached: Vec<&Row> = reads
        .iter()
        .copied()
        .filter(|r| from_device(r).map_or(!r.cold_cache, |s| s < FROM_DEVICE))
        .collect();
    if let Some(r) = cached.first() {
        let counted = match r.device_read_bytes {
            Some(_) => format!("at {} {}", bs(r), gave(r)),
            None => "the kernel did not count its device reads".into(),
        };
        out.push(format!(
            "{} of its {} buffered reads took less than {:.0}% of their bytes from the device ({counted}{}): \
             they are page-cache rows, not device figures",
            cached.len(),
            reads.len(),
            FROM_DEVICE * 100.0,
            if r.cold_cache {
                ", though the pages were dropped first"
            } else {
                ": the pages were not dropped first"
            }
        ));
    }
    if let Some(w) = short_writes(fam) {
        out.push(w);
    }
    out
}

/// Flushed buffered writes whose bytes the device did not take in full inside the span (its own count).
fn short_writes(fam: &[&Row]) -> Option<String> {
    let writes: Vec<&Row> = fam
        .iter()
        .copied()
        .filter(|r| {
            r.facts.write && r.flushes && !r.facts.direct && r.device_written_bytes.is_some()
        })
        .collect();
    let short: Vec<&Row> = writes
        .iter()
        .copied()
        .filter(|r| r.cited(Fig::DeviceWrittenBytes) < FROM_DEVICE * r.cited(Fig::Bytes))
        .collect();
    let r = short.first()?;
    Some(format!(
        "{} of its {} buffered writes put less than {:.0}% of their bytes on the device inside the span (at {} \
         the device wrote {} of the {} written)",
        short.len(),
        writes.len(),
        FROM_DEVICE * 100.0,
        bs(r),
        fmt_size(r.cited(Fig::DeviceWrittenBytes) as u64),
        fmt_size(r.cited(Fig::Bytes) as u64)
    ))
}

/// tmpfs accepts O_DIRECT (since Linux 6.6) without bypassing its pages: both columns are one path
/// through the page cache, so their differences are the run's noise, not a crossover (the paper ran no
/// O_DIRECT on its RAM disk).
fn tmpfs_direct(fam: &[&Row]) -> Option<String> {
    let ratios: Vec<f64> = fam
        .iter()
        .filter(|b| !b.facts.direct)
        .filter_map(|b| {
            let d = fam
                .iter()
                .find(|d| d.facts.direct && d.facts.bs == b.facts.bs)?;
            let (mb, md) = (b.cited(Fig::MibS), d.cited(Fig::MibS));
            Some((md / mb.max(1e-9)).max(mb / md.max(1e-9)))
        })
        .collect();
    let most = ratios.iter().copied().reduce(f64::max)?;
    Some(format!(
        "{}: on tmpfs O_DIRECT goes through the same page cache as buffered I/O (tmpfs accepts the flag \
         without bypassing its pages), so the two columns measure one path, and their differences, up to {} \
         apart at one block size, are this run's noise, not a crossover; the paper ran no O_DIRECT on its RAM \
         disk.",
        fam[0].step,
        super::reply::x(most)
    ))
}

/// What the family's rows did that the paper's did: writes flushed inside the span, reads from the
/// device (every buffered read: the least of their shares named).
fn reached_device(fam: &[&Row]) -> Option<String> {
    // The largest buffered write: its flush is the writeback the paper's dd left to the kernel.
    let w = fam
        .iter()
        .filter(|r| r.facts.write && r.flushes && !tmpfs(r) && !r.facts.direct)
        .max_by_key(|r| r.facts.bs);
    let reads = buffered_reads(fam);
    let least = reads
        .iter()
        .filter_map(|r| Some((*r, from_device(r)?)))
        .min_by(|a, b| a.1.total_cmp(&b.1));
    match (w, least) {
        (Some(w), _) => Some(format!(
            "The paper's 20 GiB could not stay in its board's 1 GiB of memory, so its writes reached the \
             device; here every write run ended with fsync inside its timed span so that they did (buffered \
             at {}, {:.0}% of the {} run{})",
            bs(w),
            w.cited(Fig::FlushS) / w.cited(Fig::WallS).max(1e-9) * 100.0,
            ms(w.cited(Fig::WallS)),
            match w.device_written_bytes {
                Some(_) => format!(
                    "; the device wrote {} of its {}",
                    fmt_size(w.cited(Fig::DeviceWrittenBytes) as u64),
                    fmt_size(w.cited(Fig::Bytes) as u64)
                ),
                None => String::new(),
            }
        )),
        (None, Some((r, share))) if share >= FROM_DEVICE => Some(format!(
            "As in the paper, the buffered reads came from the device (the pages dropped first; {} of the \
             bytes each read came \
             from it, the least at {}: {})",
            if share >= 0.995 {
                "all".to_string()
            } else {
                format!("at least {:.0}%", share * 100.0)
            },
            bs(r),
            gave(r)
        )),
        _ => None,
    }
}

fn ms(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.2} s")
    } else {
        format!("{:.0} ms", s * 1e3)
    }
}

/// Where do buffered and direct I/O cross, and why?
pub fn direct_crossover(c: &Ctx) -> Reply {
    let mut parts = Vec::new();
    let mut caveat = false;
    for fam in families(c) {
        if tmpfs(fam[0]) {
            parts.extend(tmpfs_direct(&fam));
            continue;
        }
        let refs: Vec<&&Row> = fam.iter().collect();
        let Some(cross) = crossover(&refs) else {
            continue;
        };
        let mut s = format!("{}: {cross}", fam[0].step);
        let pair = |bs: u64| {
            let b = fam.iter().find(|r| r.facts.bs == bs && !r.facts.direct)?;
            let d = fam.iter().find(|r| r.facts.bs == bs && r.facts.direct)?;
            Some((*b, *d))
        };
        let mut sizes: Vec<u64> = fam.iter().map(|r| r.facts.bs).collect();
        sizes.sort_unstable();
        sizes.dedup();
        let both: Vec<u64> = sizes.into_iter().filter(|bs| pair(*bs).is_some()).collect();
        if let Some((b, d)) = both.first().and_then(|bs| pair(*bs)) {
            if d.ns() > 2.0 * b.ns() {
                let why = match (b.facts.write, from_device(b)) {
                    (true, _) => "each goes to the device, where a buffered one copies into the page cache, \
                                  written back in large requests",
                    (false, Some(sh)) if sh >= FROM_DEVICE => {
                        "each is a request of its own to the device, where buffered reads reach it through \
                         readahead's larger requests and then copy out of the page cache"
                    }
                    _ => "each goes to the device, where a buffered one only copies out of the page cache",
                };
                s += &format!(
                    ". At {} an O_DIRECT op took {} against {} buffered: {why}",
                    bs(b),
                    ns(d.ns()),
                    ns(b.ns())
                );
            }
        }
        let last = both
            .last()
            .filter(|_| both.len() > 1)
            .and_then(|bs| pair(*bs));
        if let Some((b, d)) = last {
            if let (Some(kb), Some(kd)) = (kernel_share(b), kernel_share(d)) {
                s += &format!(
                    "; at {} the process was in the kernel {}{}{} of the time for buffered I/O, {}{}{} for \
                     O_DIRECT{}",
                    bs(b),
                    pct(kb),
                    core_clause(b),
                    copy_clause(b),
                    pct(kd),
                    core_clause(d),
                    copy_clause(d),
                    if kb >= 0.8 && kd <= 0.5 * kb {
                        ": the copy through the page cache keeps a CPU busy, O_DIRECT's transfer does not"
                    } else {
                        ""
                    }
                );
            }
        }
        let cav = caveats(&fam);
        if !cav.is_empty() {
            caveat = true;
            s += &format!(". Unlike the paper's, {}", cav.join(", and "));
        } else if let Some(d) = reached_device(&fam) {
            s += &format!(". {d}");
        }
        parts.push(s + ".");
    }
    if parts.is_empty() {
        return Reply::not_here(
            "This run has no block size measured both buffered and with O_DIRECT.".into(),
            "the blocksize suite's steps with direct=false,true",
        );
    }
    if caveat {
        Reply::partly(
            parts.join(" "),
            "buffered writes that reach the device (fsync inside the timed span, or a file larger than the page \
             cache) and buffered reads from a cold cache, as the paper's 20 GiB files had",
        )
    } else {
        Reply::answered(parts.join(" "))
    }
}

/// Is the CPU the bottleneck (the kernel busy a whole core at large blocks)? Judged, as the paper did, by
/// the busier core's kernel share system-wide (/proc/stat), with the process's own share beside it.
pub fn cpu_bottleneck(c: &Ctx) -> Reply {
    let mut parts = Vec::new();
    let mut judged = 0;
    // The judged rows by what set their pace: the CPU, the kernel's share of each op, the device.
    let mut by_cat: [Vec<String>; 3] = Default::default();
    for fam in families(c) {
        for direct in [false, true] {
            // O_DIRECT on tmpfs is its buffered path again (see `tmpfs_direct`).
            if direct && tmpfs(fam[0]) {
                continue;
            }
            let Some(big) = fam
                .iter()
                .filter(|r| r.facts.direct == direct)
                .max_by_key(|r| r.facts.bs)
            else {
                continue;
            };
            let head = format!(
                "{} {} {}{} at {}: {:.0} MiB/s",
                big.step,
                if direct { "O_DIRECT" } else { "buffered" },
                if big.facts.write { "writes" } else { "reads" },
                if big.threads > 1 {
                    format!(", {} threads", big.threads)
                } else {
                    String::new()
                },
                bs(big),
                big.cited(Fig::MibS),
            );
            let (Some(k), Some(core)) = (kernel_share(big), core_share(big)) else {
                parts.push(format!(
                    "{head}, a {:.0} ms run: too short for a CPU share (getrusage and /proc/stat count whole \
                     10 ms ticks).",
                    big.cited(Fig::WallS) * 1e3
                ));
                continue;
            };
            judged += 1;
            let cat = match core.max(k) {
                v if v >= 0.8 => 0,
                v if v >= 0.4 => 1,
                _ => 2,
            };
            by_cat[cat].push(format!(
                "{} {}",
                big.step,
                if direct { "O_DIRECT" } else { "buffered" }
            ));
            parts.push(format!(
                "{head}, the busiest core {} in the kernel system-wide (kworkers and interrupts included), the \
                 process itself {} of the wall time{} ({}).",
                pct(core),
                pct(k),
                copy_clause(big),
                // A thread that moves between CPUs splits its core's share: the process's own share is
                // a core's worth too.
                if core.max(k) >= 0.8 {
                    "a core busy in the kernel: the CPU, not the device, sets the pace"
                } else if core.max(k) >= 0.4 {
                    "the kernel's work is a large part of each op"
                } else {
                    "the CPU mostly waits: the device or the hypervisor sets the pace"
                }
            ));
        }
    }
    if parts.is_empty() {
        return Reply::not_here(
            "This run has no rows.".into(),
            "the blocksize suite's points",
        );
    }
    if judged == 0 {
        return Reply::partly(
            parts.join(" "),
            "runs of 0.1 s or more (the suite without --quick): /proc/stat and getrusage count 10 ms ticks",
        );
    }
    parts.push(bottleneck_summary(&by_cat));
    Reply::answered(parts.join(" "))
}

/// "So the CPU set the pace at the largest blocks for ...; the device (or the hypervisor) for ...": the
/// paper's question answered per step, yes where it is yes and no where it is no.
fn bottleneck_summary(by_cat: &[Vec<String>; 3]) -> String {
    let said = [
        "a core busy in the kernel set the pace",
        "the kernel's work was a large part of each op",
        "the CPU mostly waited",
    ];
    let each: Vec<String> = by_cat
        .iter()
        .zip(said)
        .filter(|(v, _)| !v.is_empty())
        .map(|(v, s)| format!("{s} for {}", v.join(", ")))
        .collect();
    let holds = match (
        by_cat[0].is_empty(),
        by_cat[1].is_empty() && by_cat[2].is_empty(),
    ) {
        (true, _) => "for none of them",
        (false, true) => "for all of them",
        (false, false) => "only for the first",
    };
    format!(
        "So, at the largest block size of each: {}; the paper's CPU bottleneck holds {holds}.",
        each.join("; ")
    )
}

/// Rows with a profile of at least this many samples carry a copy share worth printing.
const MIN_SAMPLES: u64 = 50;

/// The profiled rows of one direction and kind (buffered or O_DIRECT), by block size.
fn profiled<'a>(c: &'a Ctx, write: bool, direct: bool) -> Vec<&'a Row> {
    let mut rows = c.rows_where(|r| {
        r.facts.write == write
            && r.facts.direct == direct
            && r.facts
                .profile
                .as_ref()
                .is_some_and(|p| p.samples >= MIN_SAMPLES)
    });
    rows.sort_by_key(|r| r.facts.bs);
    rows
}

/// "4 KiB 31%, 1 MiB 27%": each block size's share of samples copying to or from user memory.
fn shares(rows: &[&Row]) -> String {
    rows.iter()
        .filter_map(|r| {
            let p = r.facts.profile.as_ref()?;
            r.cite_paths(&["profile.shares.copy_share", "spec.bs"]);
            Some(format!("{} {}", fmt_size(r.facts.bs), pct(p.copy_share)))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The copy function with the most samples among `rows` ("rep_movs_alternative").
fn top_copy(rows: &[&Row]) -> Option<String> {
    rows.iter()
        .filter_map(|r| r.facts.profile.as_ref()?.top_copy.clone())
        .next()
}

/// How much of the CPU's time goes to copying between user and kernel memory, per block size, buffered
/// against O_DIRECT (the paper's Figure 4, from perf samples of a separate untimed pass of each point).
pub fn copy_share(c: &Ctx) -> Reply {
    let mut parts = Vec::new();
    let mut both = 0;
    for (write, dir, func) in [
        (true, "writes", "__copy_from_user"),
        (false, "reads", "__copy_to_user"),
    ] {
        let (b, d) = (profiled(c, write, false), profiled(c, write, true));
        if b.is_empty() && d.is_empty() {
            continue;
        }
        let mut s = format!(
            "{}: of each profiled pass's samples,",
            b.first()
                .or(d.first())
                .map_or(String::new(), |r| r.step.clone())
        );
        if !b.is_empty() {
            s += &format!(
                " buffered {dir} spent {} copying (the paper's {func}",
                shares(&b)
            );
            if let Some(f) = top_copy(&b) {
                s += &format!("; on this kernel mostly {f}");
            }
            s += ")";
        }
        if !d.is_empty() {
            s += &format!(
                "{} O_DIRECT {dir} {}",
                if b.is_empty() { "" } else { ";" },
                shares(&d)
            );
        }
        if let (Some(hb), Some(hd)) = (
            b.iter()
                .filter_map(|r| r.facts.profile.as_ref())
                .map(|p| p.copy_share)
                .reduce(f64::min),
            d.iter()
                .filter_map(|r| r.facts.profile.as_ref())
                .map(|p| p.copy_share)
                .reduce(f64::max),
        ) {
            both += 1;
            s += &if hd < 0.5 * hb {
                format!(
                    ": as in the paper, the copy is the page cache's cost: O_DIRECT moved its bytes with at \
                     most {} of its samples copying, buffered with at least {}",
                    pct(hd),
                    pct(hb)
                )
            } else {
                format!(
                    ": unlike the paper, O_DIRECT copied about as much (up to {} against at least {} buffered)",
                    pct(hd),
                    pct(hb)
                )
            };
        }
        parts.push(s + ".");
    }
    if parts.is_empty() {
        let most = c
            .rows
            .iter()
            .filter(|r| r.facts.profile.is_some())
            .max_by_key(|r| r.facts.profile.as_ref().map_or(0, |p| p.samples));
        if let Some(r) = most {
            r.cite_paths(&["profile.samples"]);
        }
        let short = most
            .and_then(|r| r.facts.profile.as_ref())
            .map(|p| p.samples);
        return match short {
            Some(n) => Reply::not_here(
                format!(
                    "This run's profiled points took at most {n} samples each, too few for a share (at least \
                     {MIN_SAMPLES})."
                ),
                "longer profiled passes: the suite without --quick, or a higher --profile-hz",
            ),
            None => Reply::not_here(
                "This run has no profiled point.".into(),
                "the blocksize suite's profiled Figure 4 steps, and perf events (perf_event_open: root, or \
                 perf_event_paranoid at most 1)",
            ),
        };
    }
    let text = format!(
        "{} Shares are of samples of the whole process in a separate, untimed pass of the same workload (the \
         paper: of total execution time, under OProfile).",
        parts.join(" ")
    );
    if both == 2 {
        Reply::answered(text)
    } else {
        Reply::partly(
            text,
            "profiled buffered and O_DIRECT points of both writes and reads",
        )
    }
}
