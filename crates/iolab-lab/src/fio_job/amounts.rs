//! How much a fio job does and over what, as fio 3.33 works it out (filesetup.c `setup_files`,
//! backend.c `io_bytes_exceeded`), mapped to iolab's totals over its threads:
//!
//! - the region each job works: `filesize` (less `offset`), else `size`, else the existing file's or block
//!   device's size from `offset` (none of them: fio refuses, "you need to specify size="; the null engine
//!   never takes a size from a file); `size=N%` is that share of the file (offset included), whole blocks;
//! - the amount of each pass: `io_size` (a percentage of the region, at most `size`), else `size` (at most
//!   the region), else the region; `loops` passes; a `time_based` job runs for `runtime` instead;
//! - `numjobs` clones, each doing all of that: without a filename each clone has a file of its own (iolab:
//!   a file per thread, the target holding `{thread}`); with a filename they share its one region (iolab:
//!   `share-region`).

use super::ctx::{set, Ctx, Mapped, MAX_JOBS};
use super::numbers::{fio_seconds, Num};
use std::os::unix::fs::{FileTypeExt, MetadataExt};

/// numjobs, nrfiles, size, filesize, io_size, offset, loops, runtime and time_based: the job's file size,
/// amount and duration over its threads. `bs` is the job's block size; `null`: fio's null engine.
pub(super) fn amounts(j: &Ctx, m: &mut Mapped, bs: u64, null: bool) -> Result<(), String> {
    let jobs = clones(j, m)?;
    let target = m.raw.get("target").map(|t| t.text()).unwrap_or_default();
    // Lengths drawn per op over fio's random map: the job ends when the map is full (a pass), so a size
    // of part of a block is no question of layout.
    let by_map = m.raw.get("bs-split").is_some()
        && m.raw
            .get("distribution")
            .is_some_and(|d| d.text() == "once");
    let (region, file) = region(j, (bs, by_map), null, &target)?;
    // size=N% is the region itself: only a size in bytes can pass the map's end.
    let asked = match j.number("size")? {
        Some(Num::Bytes(n)) => n,
        _ => 0,
    };
    if by_map && region < asked {
        m.notes.push(format!(
            "lengths drawn per op over fio's random map: fio's job ends when every {bs}-byte block has been \
             covered once, after {region} bytes, as iolab's does"
        ));
    }
    let pass = skipped(m, pass(j, region, bs)?, (region, file), bs);
    let loops = super::verify::loops(j, m)?;
    let runtime = match j.get("runtime") {
        None => None,
        Some(r) => Some(fio_seconds(r).map_err(|e| format!("runtime={r}: {e}"))?),
    }
    // fio's runtime=0: no time limit.
    .filter(|&s| s > 0.0);
    let timed = j.flag("time_based")?;
    if timed && runtime.is_none() {
        m.notes.push(
            "time_based without a runtime: fio warns (\"time_based requires a runtime/timeout setting\") and \
             runs the job by its size, as iolab does"
                .into(),
        );
    }
    let too_big = |what: &str| format!("{what} is more bytes than iolab counts");
    // Clones on one filename share its region; without one each has a file of its own (the target
    // names one per thread): either way a file is the region.
    if jobs > 1 && !target.contains("{thread}") {
        set(m, "share-region", true);
    }
    set(m, "file-size", format!("{region}"));
    if let Some(s) = runtime {
        set(m, "duration", format!("{s}"));
    }
    if !(timed && runtime.is_some()) {
        let total = pass
            .checked_mul(loops)
            .and_then(|b| b.checked_mul(jobs))
            .ok_or_else(|| too_big("the amount x loops x numjobs"))?;
        set(m, "size", format!("{total}"));
    }
    Ok(())
}

/// With rw=read:N (`--skip`) fio's job by size ends at the file's end, which may come before its
/// amount: the bytes of the ops fio makes, said where fewer.
fn skipped(m: &mut Mapped, pass: u64, (region, file): (u64, u64), bs: u64) -> u64 {
    let Some(add) = m.raw.get("skip").and_then(|v| v.text().parse::<i64>().ok()) else {
        return pass;
    };
    let ops = iolab_engine::seq_skip::fio_ops(region / bs * bs, file, bs, add, pass / bs);
    if ops < pass / bs {
        m.notes.push(format!(
            "rw with an offset modifier: fio's walk ends after {ops} ops of the {} its size holds (at the \
             file's end, past the region, or back before its start), and fio ends the job there; so does iolab",
            pass / bs
        ));
    }
    ops * bs
}

/// numjobs (fio's clones, iolab's threads) with the note on how they differ; nrfiles, one file each.
fn clones(j: &Ctx, m: &mut Mapped) -> Result<u64, String> {
    match j.count("nrfiles")? {
        None | Some(1) => {}
        Some(n) => {
            return Err(format!(
                "nrfiles={n}: iolab runs one file per job (fio would split the job over {n} files)"
            ))
        }
    }
    let jobs = match j.count("numjobs")? {
        None => 1,
        Some(0) => {
            return Err(
                "numjobs=0: fio cannot run it (it makes clones until its job limit and stops with \"maximum \
                 number of jobs reached\"); give 1 or more"
                    .into(),
            )
        }
        Some(n) if n > MAX_JOBS => {
            return Err(format!(
                "numjobs={n}: iolab runs at most {MAX_JOBS} threads"
            ))
        }
        Some(n) => n,
    };
    if jobs > 1 {
        set(m, "threads", jobs as i64);
        let procs = if j.flag("thread")? {
            "threads (thread=1)"
        } else {
            "processes"
        };
        let target = m.raw.get("target").map(|t| t.text()).unwrap_or_default();
        let name = target.rsplit('/').next().unwrap_or_default();
        let note = match target.contains("{thread}") {
            false => format!(
                "numjobs={jobs} sharing {name}: {jobs} threads of one process, each doing the job's whole \
                 amount over all of the file's one region (--share-region), as fio's {jobs} clones ({procs}) do"
            ),
            true => format!(
                "numjobs={jobs}: {jobs} threads of one process, each with a file of its own ({}, {}, ...) as \
                 fio's {jobs} clones ({procs}) have",
                name.replace("{thread}", "0"),
                name.replace("{thread}", "1"),
            ),
        };
        m.notes.push(note);
    }
    Ok(jobs)
}

/// The bytes of the region one job works, from `offset`, as fio's setup_files works it out; and the file's
/// bytes, more where an existing file is larger.
fn region(
    j: &Ctx,
    (bs, by_map): (u64, bool),
    null: bool,
    target: &str,
) -> Result<(u64, u64), String> {
    let offset = match j.number("offset")? {
        None => 0,
        Some(Num::Bytes(n)) => n,
        Some(Num::Percent(_)) => {
            return Err(format!(
                "offset={}: a percentage of the file iolab does not work out; give it in bytes",
                j.get("offset").unwrap_or_default()
            ))
        }
    };
    let filesize = filesize(j)?;
    let size = j.number("size")?;
    // The null engine opens no file: fio takes no size from one.
    // A file per clone: the first clone's file stands for them all (fio sizes each alike).
    let first = iolab_engine::target::per_thread::template(std::path::Path::new(target)).map(|t| {
        iolab_engine::target::per_thread::path_of(t, 0)
            .display()
            .to_string()
    });
    let real = if null {
        None
    } else {
        existing_size(first.as_deref().unwrap_or(target))
    };
    // The region before size=N% and whether it is a size the job gave (else the file's own).
    let (base, given) = match (filesize, size, real) {
        (Some(f), _, _) => (
            f.checked_sub(offset).ok_or_else(|| {
                format!(
                    "offset={offset} is beyond filesize={f}: fio refuses it (\"you need to specify valid \
                     offset=\")"
                )
            })?,
            Some("filesize"),
        ),
        (None, Some(Num::Bytes(s)), _) => (s, Some("size")),
        (None, _, Some(r)) => (
            r.checked_sub(offset).ok_or_else(|| {
                format!(
                    "offset={offset} is beyond the end of {target} ({r} bytes): fio refuses it (\"you need \
                     to specify valid offset=\")"
                )
            })?,
            None,
        ),
        (None, _, None) => return Err(no_size(j, null, target)),
    };
    let region = match (size, given) {
        // fio: that share of the file, offset included, at most what lies past the offset, whole blocks.
        (Some(Num::Percent(p)), _) => {
            let whole = base.saturating_add(offset);
            (whole / 100 * p + whole % 100 * p / 100).min(base) / bs * bs
        }
        (_, Some(_)) if by_map => base / bs * bs,
        (_, Some(what)) => {
            if base >= bs {
                whole_blocks(base, bs, what)?;
            }
            base
        }
        // An existing file's or device's size: its whole blocks, as fio reads them.
        (_, None) => base / bs * bs,
    };
    if region < bs {
        return Err(format!(
            "the job's region ({region} bytes) is smaller than bs={bs}: fio refuses it (\"blocksize is larger \
             than data set range\")"
        ));
    }
    Ok((region, real.map_or(region, |r| r.max(region))))
}

/// filesize: one size (a range of two equal ends is one size); fio's random sizes in a range are refused.
fn filesize(j: &Ctx) -> Result<Option<u64>, String> {
    let Some(v) = j.get("filesize") else {
        return Ok(None);
    };
    let ends: Vec<&str> = v.splitn(2, ['-', ':']).collect();
    let sizes = ends
        .iter()
        .map(|e| super::numbers::fio_size(e, j.kb))
        .collect::<Result<Vec<u64>, String>>()
        .map_err(|e| format!("filesize={v}: {e}"))?;
    if sizes.iter().any(|&s| s != sizes[0]) {
        return Err(format!(
            "filesize={v}: fio picks each file's size at random in the range; iolab runs one file of one size"
        ));
    }
    Ok(Some(sizes[0]))
}

/// The amount of one pass of one job: io_size, else size, at most the region; whole blocks.
fn pass(j: &Ctx, region: u64, bs: u64) -> Result<u64, String> {
    let size = match j.number("size")? {
        Some(Num::Bytes(s)) => Some(s),
        _ => None,
    };
    match j.number("io_size")? {
        Some(Num::Bytes(n)) => whole_blocks(n, bs, "io_size").map(|_| n),
        Some(Num::Percent(q)) => {
            let share = region / 100 * q + region % 100 * q / 100;
            let n = size.map_or(share, |s| s.min(share));
            whole_blocks(n, bs, "io_size").map(|_| n)
        }
        None => Ok(size.map_or(region, |s| s.min(region))),
    }
}

/// A size fio would not divide into whole blocks is refused: what fio then does (one op less, or one
/// more) depends on the layout.
fn whole_blocks(n: u64, bs: u64, what: &str) -> Result<(), String> {
    if n.is_multiple_of(bs) {
        return Ok(());
    }
    Err(format!(
        "{what} gives {n} bytes, not a whole number of bs={bs} blocks: fio's count of ops then depends on \
         the layout (one less or one more); give a multiple of bs"
    ))
}

/// fio's refusal of a job with nothing to take its size from.
fn no_size(j: &Ctx, null: bool, target: &str) -> String {
    let why = if null {
        "ioengine=null takes no size from a file".to_string()
    } else if j.get("size").is_some() {
        format!(
            "size={} is a share of {target}, which is not an existing file or block device",
            j.get("size").unwrap_or_default()
        )
    } else {
        format!("{target} is not an existing file or block device to take the size from")
    };
    format!(
        "no size= or filesize=, and {why}: fio refuses the job (\"you need to specify size=\"); give size="
    )
}

/// The size of an existing regular file or block device at `path` (following links, as fio's stat does);
/// anything else (missing, a character device, a directory) has none fio takes.
pub(super) fn existing_size(path: &str) -> Option<u64> {
    let md = std::fs::metadata(path).ok()?;
    if md.is_file() {
        return Some(md.len());
    }
    if !md.file_type().is_block_device() {
        return None;
    }
    let rdev = md.rdev();
    let (ma, mi) = (libc::major(rdev), libc::minor(rdev));
    let sectors = std::fs::read_to_string(format!("/sys/dev/block/{ma}:{mi}/size")).ok()?;
    sectors.trim().parse::<u64>().ok()?.checked_mul(512)
}

#[cfg(test)]
mod tests {
    use super::super::map::tests::{maps_to, refused, MIB};

    /// fio's amount is size, else filesize, else the existing file's size; none of them, it refuses.
    #[test]
    fn filesize_alone_sets_the_amount_and_no_size_is_refused_as_fio_does() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("F").display().to_string();
        maps_to(
            &[
                ("filename", &f),
                ("filesize", "16m"),
                ("rw", "write"),
                ("bs", "128k"),
            ],
            &[
                ("file-size", &(16 * MIB).to_string()),
                ("size", &(16 * MIB).to_string()),
            ],
        );
        // size at most the region; a range of equal ends is one size.
        for (opts, file, size) in [
            (&[("filesize", "2m"), ("size", "4m")][..], 2 * MIB, 2 * MIB),
            (
                &[("filesize", "2m-2m"), ("size", "1m"), ("loops", "2")][..],
                2 * MIB,
                2 * MIB,
            ),
            (&[("size", "4m"), ("io_size", "50%")][..], 4 * MIB, 2 * MIB),
            (&[("size", "1m"), ("io_size", "3m")][..], MIB, 3 * MIB),
            (&[("size", "1m"), ("loops", "3")][..], MIB, 3 * MIB),
            (&[("size", "1m"), ("loops", "0")][..], MIB, MIB),
        ] {
            let mut o = vec![("filename", f.as_str()), ("bs", "64k")];
            o.extend_from_slice(opts);
            maps_to(
                &o,
                &[
                    ("file-size", &file.to_string()),
                    ("size", &size.to_string()),
                ],
            );
        }
        for extra in [
            &[][..],
            &[("runtime", "2"), ("time_based", "1")][..],
            &[("ioengine", "null"), ("runtime", "1")][..],
            &[("size", "10%")][..],
            &[("io_size", "1m")][..],
        ] {
            let mut o = vec![("filename", f.as_str()), ("rw", "write")];
            o.extend_from_slice(extra);
            refused(&o, &["you need to specify size=", "give size="]);
        }
        for (opts, says) in [
            (&[("filesize", "1m-4m")][..], "at random"),
            (
                &[("size", "100k"), ("bs", "64k")][..],
                "whole number of bs=65536",
            ),
            (
                &[("size", "1m"), ("io_size", "100k"), ("bs", "64k")][..],
                "io_size gives",
            ),
            (&[("filesize", "1m"), ("offset", "2m")][..], "valid offset"),
            (&[("size", "1m"), ("offset", "10%")][..], "in bytes"),
            (&[("size", "4k"), ("bs", "8k")][..], "blocksize is larger"),
            (&[("size", "1m"), ("nrfiles", "2")][..], "one file per job"),
        ] {
            let mut o = vec![("filename", f.as_str())];
            o.extend_from_slice(opts);
            refused(&o, &[says]);
        }
        maps_to(&[("filename", &f), ("size", "1m"), ("nrfiles", "1")], &[]);
    }

    /// An existing file's size from offset, size=N% of it (offset included, whole blocks), as fio 3.33
    /// read a 4 MiB file: no size 4 MiB, offset=1m 3 MiB, size=50% 2 MiB, with offset=1m too; a file of
    /// 4 MiB + 100 bytes at bs=64k 4 MiB.
    #[test]
    fn an_existing_file_gives_the_size_as_in_fio() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("E4");
        std::fs::write(&f, vec![0u8; 4 << 20]).unwrap();
        let odd = d.path().join("odd");
        std::fs::write(&odd, vec![0u8; (4 << 20) + 100]).unwrap();
        let (f, odd) = (f.display().to_string(), odd.display().to_string());
        for (opts, size) in [
            (vec![("filename", f.as_str())], 4 * MIB),
            (vec![("filename", &f), ("offset", "1m")], 3 * MIB),
            (vec![("filename", &f), ("size", "50%")], 2 * MIB),
            (
                vec![("filename", &f), ("size", "50%"), ("offset", "1m")],
                2 * MIB,
            ),
            (vec![("filename", &odd), ("bs", "64k")], 4 * MIB),
        ] {
            maps_to(
                &opts,
                &[
                    ("size", &size.to_string()),
                    ("file-size", &size.to_string()),
                ],
            );
        }
        // fio's null engine takes no size from the file.
        refused(
            &[("filename", &f), ("ioengine", "null")],
            &["ioengine=null takes no size"],
        );
        refused(&[("filename", &f), ("offset", "5m")], &["beyond the end"]);
    }

    /// numjobs: clones of one filename share its region (fio: one file of size, each clone its size over
    /// it); without a filename each has its own (iolab: one file, a region each); 0 refused as fio fails.
    #[test]
    fn clones_share_a_filename_or_have_their_own_regions() {
        let shared = maps_to(
            &[
                ("filename", "/nonexistent-iolab-test/G"),
                ("size", "8m"),
                ("numjobs", "3"),
                ("rw", "randwrite"),
            ],
            &[
                ("threads", "3"),
                ("share-region", "true"),
                ("file-size", &(8 * MIB).to_string()),
                ("size", &(24 * MIB).to_string()),
            ],
        );
        assert!(
            shared.notes.iter().any(|n| n.contains("sharing G:")),
            "{:?}",
            shared.notes
        );
        let own = maps_to(
            &[("size", "2m"), ("numjobs", "3"), ("rw", "write")],
            &[
                ("threads", "3"),
                ("share-region", "-"),
                ("file-size", &(2 * MIB).to_string()),
                ("size", &(6 * MIB).to_string()),
                ("target", "./j.{thread}.0"),
            ],
        );
        let n = own.notes.join("\n");
        assert!(n.contains("j.0.0, j.1.0") && !n.contains("unless"), "{n}");
        // filename_format as fio's make_filename fills it: keywords in any case; one job's file may
        // have no $jobnum.
        for (format, jobs, target, shared) in [
            ("shared.$filenum", "1", "./shared.0", "-"),
            (
                "$JOBNAME-$jobnum.dat$clientuid",
                "2",
                "./j-{thread}.dat",
                "-",
            ),
            ("$jobname.$jobnum.$filenum", "1", "./j.0.0", "-"),
        ] {
            maps_to(
                &[
                    ("size", "1m"),
                    ("numjobs", jobs),
                    ("rw", "write"),
                    ("filename_format", format),
                ],
                &[("target", target), ("share-region", shared)],
            );
        }
        maps_to(
            &[
                ("size", "1m"),
                ("directory", "/nonexistent-iolab-test"),
                ("filename_format", "x.$jobnum"),
            ],
            &[("target", "/nonexistent-iolab-test/x.0")],
        );
        // A filename wins over the format, as in fio.
        maps_to(
            &[
                ("size", "1m"),
                ("filename", "/nonexistent-iolab-test/F"),
                ("filename_format", "x.$jobnum"),
            ],
            &[("target", "/nonexistent-iolab-test/F")],
        );
        refused(
            &[
                ("size", "1m"),
                ("numjobs", "3"),
                ("filename_format", "shared.$filenum"),
            ],
            &[
                "filename_format=shared.$filenum with numjobs",
                "add $jobnum",
            ],
        );
        // Clones on one name that is not a regular file share it, as in fio.
        maps_to(
            &[
                ("size", "1m"),
                ("numjobs", "2"),
                ("filename_format", "/dev/null"),
            ],
            &[("target", "/dev/null"), ("share-region", "true")],
        );
        refused(
            &[("size", "1m"), ("filename_format", "")],
            &["filename_format= is empty"],
        );
        refused(
            &[("size", "1m"), ("filename_format", "d/$clientuid")],
            &["filename_format=d/$clientuid names no file"],
        );
        refused(
            &[("size", "1m"), ("numjobs", "0")],
            &["numjobs=0", "maximum number of jobs"],
        );
        refused(
            &[("size", "1m"), ("iodepth", "0")],
            &["iodepth=0", "min value out of range"],
        );
    }

    /// fio's null engine: no file, no cache to drop, no preallocation; its size bounds it with a runtime.
    #[test]
    fn the_null_engine_touches_no_file() {
        maps_to(
            &[
                ("ioengine", "null"),
                ("size", "2g"),
                ("runtime", "1"),
                ("rw", "read"),
            ],
            &[
                ("method", "nop"),
                ("size", &(2u64 << 30).to_string()),
                ("duration", "1"),
                ("cold-cache", "-"),
            ],
        );
        maps_to(
            &[
                ("ioengine", "null"),
                ("filesize", "1T"),
                ("runtime", "2s"),
                ("time_based", "1"),
            ],
            &[
                ("size", "-"),
                ("duration", "2"),
                ("file-size", &(1u64 << 40).to_string()),
            ],
        );
        maps_to(
            &[("ioengine", "null"), ("size", "1m"), ("rw", "write")],
            &[("preallocate", "-")],
        );
        refused(
            &[("ioengine", "null"), ("runtime", "1")],
            &["you need to specify size="],
        );
    }
}
