//! verify, do_verify and experimental_verify in fio's meaning: a writing job's blocks read back and
//! checked after its writes; a reading job's blocks checked too (iolab reads them again after the run). fio verifies after every one of a job's `loops`; iolab's `--verify` reads
//! back once after the run, so a writing job of more loops with verify is refused rather than run with
//! fewer reads than fio makes.

use super::ctx::{set, Ctx, Mapped};

/// The options read here.
pub const OPTIONS: [&str; 3] = ["verify", "do_verify", "experimental_verify"];

/// The job's verify as iolab's `--verify`, with what differs from fio in its notes.
pub(super) fn verify(j: &Ctx, m: &mut Mapped) -> Result<(), String> {
    // do_verify=0: no verify phase after the writes (fio's default is 1).
    let do_verify = j.get("do_verify").is_none() || j.flag("do_verify")?;
    let experimental = j.flag("experimental_verify")?;
    let Some(v) = j.get("verify").filter(|v| *v != "0" && *v != "null") else {
        return Ok(());
    };
    if do_verify {
        let loops = j.count("loops")?.unwrap_or(1);
        if loops > 1 && j.writes() {
            return Err(format!(
                "loops={loops} with verify={v}: fio reads the job's blocks back after each of its {loops} \
                 loops, iolab's --verify once after the run; give loops=1, or do_verify=0"
            ));
        }
        set(m, "verify", true);
        m.notes.push(if j.writes() {
            format!(
                "verify={v}: iolab checks its own pattern (stamps per block and sector) after the run, \
                 untimed; fio times its verify pass; both count its reads in the job's reads (--fio-json)"
            )
        } else {
            format!(
                "verify={v} on a job that only reads: fio checks each block as it reads it, in the job's \
                 time; iolab reads the job's blocks again after the run, untimed, in none of its figures, and \
                 checks them against its own pattern, which an iolab write job with the same randseed, bs and \
                 offset wrote (a file fio wrote fails it)"
            )
        });
        if experimental {
            m.notes.push(
                "experimental_verify=1: fio replays the job's offsets to read its writes back, as iolab's \
                 --verify does in any case"
                    .into(),
            );
        }
    }
    // fio saves a writing job's verify state whatever do_verify (verify_state_save, on by default).
    if j.writes() && j.get("verify_state_save").is_none() {
        m.notes.push(
            "fio also saves its verify state (verify_state_save, on by default) to \
             local-JOB-N-verify.state, its own record for a later verify_state_load; iolab writes no \
             such file"
                .into(),
        );
    }
    Ok(())
}

/// The job's `loops` as fio makes them: a job that only reads, with a verify set (whatever do_verify),
/// reads its file once whatever its loops (fio 3.33, strace: loops=2 and 3 each made one pass of
/// pread64), said in a note.
pub(super) fn loops(j: &Ctx, m: &mut Mapped) -> Result<u64, String> {
    let loops = j.count("loops")?.unwrap_or(1).max(1);
    let verify = j.get("verify").filter(|v| *v != "0" && *v != "null");
    match verify {
        Some(v) if loops > 1 && !j.writes() => {
            m.notes.push(format!(
                "loops={loops} with verify={v} on a job that only reads: fio reads the file once, as \
                 iolab does"
            ));
            Ok(1)
        }
        _ => Ok(loops),
    }
}

#[cfg(test)]
mod tests {
    use super::super::map::tests::{maps_to, refused};

    #[test]
    fn verify_follows_do_verify_and_percentiles_change_nothing() {
        let w = [("size", "1m"), ("rw", "write"), ("verify", "crc32c")];
        maps_to(&w, &[("verify", "true")]);
        maps_to(
            &[&w[..], &[("do_verify", "1")]].concat(),
            &[("verify", "true")],
        );
        maps_to(
            &[&w[..], &[("do_verify", "0")]].concat(),
            &[("verify", "-")],
        );
        maps_to(
            &[&w[..], &[("clat_percentiles", "0")]].concat(),
            &[("verify", "true")],
        );
        refused(
            &[&w[..], &[("clat_percentiles", "2")]].concat(),
            &["clat_percentiles=2"],
        );
    }

    /// fio 3.33, `size=1m rw=randwrite verify=md5`: loops=8 writes 8 MiB and reads 8 MiB back (a
    /// verify pass after each loop); with experimental_verify=1 it writes 7 MiB and reads 1 MiB; loops=1
    /// with experimental_verify=1 writes 1 MiB and reads 1 MiB, as iolab does.
    #[test]
    fn loops_with_verify_are_refused_and_experimental_verify_is_iolabs_replay() {
        let w = [("size", "1m"), ("rw", "randwrite"), ("verify", "md5")];
        for more in [&[][..], &[("experimental_verify", "1")][..]] {
            let opts = [&w[..], &[("loops", "8")], more].concat();
            refused(&opts, &["loops=8 with verify=md5", "each of its 8 loops"]);
        }
        let m = maps_to(
            &[&w[..], &[("experimental_verify", "1"), ("loops", "1")]].concat(),
            &[("verify", "true")],
        );
        assert!(m.notes.iter().any(|n| n.contains("experimental_verify=1")));
        // Without a verify pass, loops are passes as ever; reads have nothing to verify.
        maps_to(
            &[&w[..], &[("loops", "2"), ("do_verify", "0")]].concat(),
            &[("verify", "-")],
        );
        refused(
            &[&w[..], &[("experimental_verify", "2")]].concat(),
            &["experimental_verify=2: expected 0 or 1"],
        );
    }

    /// fio's t0029: a job that only reads, with verify and loops=2, checks each block it reads, and reads
    /// its file once (verify set, even with do_verify=0); iolab checks the blocks after the run.
    #[test]
    fn a_reading_job_verifies_whatever_its_loops() {
        let r = [("size", "4k"), ("rw", "read"), ("verify", "md5")];
        let m = maps_to(
            &[&r[..], &[("loops", "2"), ("do_verify", "1")]].concat(),
            &[("verify", "true"), ("op", "read"), ("size", "4096")],
        );
        assert!(m
            .notes
            .iter()
            .any(|n| n.contains("loops=2 with verify=md5")));
        maps_to(
            &[&r[..], &[("loops", "2"), ("do_verify", "0")]].concat(),
            &[("verify", "-"), ("size", "4096")],
        );
        maps_to(
            &[("size", "4k"), ("rw", "read"), ("loops", "2")],
            &[("size", "8192")],
        );
        assert!(
            m.notes
                .iter()
                .any(|n| n.contains("only reads") && n.contains("a file fio wrote fails it")),
            "{:?}",
            m.notes
        );
        maps_to(
            &[&r[..], &[("do_verify", "0")]].concat(),
            &[("verify", "-")],
        );
    }
}
