//! bs, bsrange and bssplit in fio's meaning: the block size of the directions the job moves, or a length
//! drawn for each op (iolab's `--bs-split`) where fio draws one.
//!
//! - `bs=R,W` reads R and writes W (one value: both).
//! - `bsrange=MIN-MAX` (or `MIN:MAX`, its ends in either order, as fio swaps them) overrides bs: equal ends
//!   are one size, others a length drawn per op as fio draws it.
//! - `bssplit=SIZE/PCT:...` (one set, or one per direction separated by commas) draws each op's length by
//!   its shares. Beside a bs or bsrange of other ends it is refused: fio's lengths then depend on which
//!   of the options the file gives last.
//!
//! A job that reads and writes takes one law for both: different ones are refused.

use super::ctx::{set, Ctx, Mapped};
use super::numbers::fio_size;

/// One direction's lengths.
#[derive(Debug, Clone, PartialEq)]
enum Sizes {
    One(u64),
    /// fio's bsrange draw, in bytes.
    Range(u64, u64),
    /// A bssplit in bytes (`4096/50:65536/50`), its smallest and largest size.
    Split(String, u64, u64),
}

impl Sizes {
    fn ends(&self) -> (u64, u64) {
        match self {
            Sizes::One(n) => (*n, *n),
            Sizes::Range(a, b) | Sizes::Split(_, a, b) => (*a, *b),
        }
    }
}

/// The job's block size (with drawn lengths, the smallest), set as `bs` or `bs-split`.
pub(super) fn block_size(j: &Ctx, m: &mut Mapped) -> Result<u64, String> {
    let fixed = match (j.get("bsrange"), j.get("bs")) {
        (Some(r), _) => Some(("bsrange", r, per_direction("bsrange", r, j.kb)?)),
        (None, Some(b)) => Some(("bs", b, per_direction("bs", b, j.kb)?)),
        (None, None) => None,
    };
    let split = match j.get("bssplit") {
        Some(v) => Some(("bssplit", v, splits(v, j.kb)?)),
        None => None,
    };
    let (key, v, sizes) = match (split, fixed) {
        (Some(s), Some(f)) => {
            let (sv, fv) = (one_law(&s, j)?, one_law(&f, j)?);
            if sv.ends() != fv.ends() {
                return Err(format!(
                    "bssplit={} with {}={}: fio's lengths then depend on which of the two the file gives \
                     last; give one of them",
                    s.1, f.0, f.1
                ));
            }
            s
        }
        (Some(s), None) => s,
        (None, Some(f)) => f,
        (None, None) => return Ok(4096),
    };
    let law = one_law(&(key, v, sizes), j)?;
    match &law {
        Sizes::One(n) => set(m, "bs", format!("{n}")),
        Sizes::Range(a, b) => set(m, "bs-split", format!("{a}-{b}")),
        Sizes::Split(t, _, _) => set(m, "bs-split", t.clone()),
    }
    Ok(law.ends().0)
}

/// Lengths drawn per op beside what takes one length: fio's logs (a block size per line, iolab's of the
/// job's one) and a verify (iolab's blocks of one length, each with its stamps), refused by name.
pub(super) fn drawn_with(j: &Ctx, m: &Mapped) -> Result<(), String> {
    if m.raw.get("bs-split").is_none() {
        return Ok(());
    }
    let verify = m.raw.get("verify").is_some_and(|v| v.text() == "true");
    let log = super::logs::OPTIONS.iter().find(|k| j.get(k).is_some());
    match (log, verify) {
        (Some(k), _) => Err(format!(
            "{k} with lengths drawn per op (bssplit, or bsrange of two ends): iolab's fio logs give the job's \
             one block size on every line; drop one of them"
        )),
        (None, true) => Err(
            "verify with lengths drawn per op (bssplit, or bsrange of two ends): iolab verifies blocks of one \
             length, each with its own stamps; drop one of them"
                .into(),
        ),
        (None, false) => Ok(()),
    }
}

/// The law of the directions the job moves: reads' and writes' alike where it moves both.
fn one_law((key, v, sizes): &(&str, &str, Vec<Option<Sizes>>), j: &Ctx) -> Result<Sizes, String> {
    let get = |d: usize, what: &str| -> Result<Sizes, String> {
        let s = sizes.get(d).or(sizes.first()).cloned().flatten();
        s.ok_or_else(|| format!("{key}={v}: no size for {what}, which the job makes"))
    };
    match (j.reads(), j.writes()) {
        (true, true) => {
            let (r, w) = (get(0, "reads")?, get(1, "writes")?);
            if r != w {
                return Err(format!(
                    "{key}={v}: reads and writes of other lengths; iolab draws both from one"
                ));
            }
            Ok(r)
        }
        (false, true) => get(1, "writes"),
        _ => get(0, "reads"),
    }
}

/// bs or bsrange: a size (or range) for reads, writes and trims; none empty.
fn per_direction(key: &str, v: &str, kb: u64) -> Result<Vec<Option<Sizes>>, String> {
    let parts: Vec<&str> = v.split([',', '/']).map(str::trim).collect();
    if parts.len() > 3 || parts.iter().any(|p| p.is_empty()) {
        return Err(format!(
            "{key}={v}: give a size for reads, writes and trims, none empty (fio leaves an empty one as it was)"
        ));
    }
    parts
        .iter()
        .map(|p| one_direction(key, v, p, kb).map(Some))
        .collect()
}

/// One direction's size for bs, or range (`4k-8k`, `4k:8k`, its ends in either order) for bsrange.
fn one_direction(key: &str, v: &str, part: &str, kb: u64) -> Result<Sizes, String> {
    let ends: Vec<&str> = if key == "bsrange" {
        part.splitn(2, ['-', ':']).collect()
    } else {
        vec![part]
    };
    let mut sizes = ends
        .iter()
        .map(|e| fio_size(e, kb))
        .collect::<Result<Vec<u64>, String>>()
        .map_err(|e| format!("{key}={v}: {e}"))?;
    if sizes.contains(&0) {
        return Err(format!("{key}={v}: fio's least block size is 1 byte"));
    }
    sizes.sort_unstable();
    Ok(match sizes[..] {
        [a, b] if a != b => Sizes::Range(a, b),
        _ => Sizes::One(sizes[0]),
    })
}

/// bssplit: a set for reads, writes (and trims), separated by commas, or one for all; an empty one is
/// none (fio leaves that direction to bs).
fn splits(v: &str, kb: u64) -> Result<Vec<Option<Sizes>>, String> {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return Err(format!(
            "bssplit={v}: at most three sets (reads, writes, trims)"
        ));
    }
    parts
        .iter()
        .map(|p| (!p.is_empty()).then(|| one_split(v, p, kb)).transpose())
        .collect()
}

/// One direction's bssplit with its sizes in bytes as fio reads them, checked as iolab's `--bs-split`.
fn one_split(v: &str, part: &str, kb: u64) -> Result<Sizes, String> {
    let mut entries = Vec::new();
    for e in part.split(':').take_while(|e| !e.trim().is_empty()) {
        let (size, share) = e.split_once('/').unwrap_or((e, ""));
        let n = fio_size(size.trim(), kb).map_err(|e| format!("bssplit={v}: {e}"))?;
        entries.push(format!("{n}/{}", share.trim()));
    }
    let text = entries.join(":");
    let b = iolab_engine::bs_split::BsSplit::parse(&text)
        .map_err(|e| format!("bssplit={v}: {}", e.to_string().replace("--bs-split: ", "")))?;
    // One size (or all alike): fio's minbs == maxbs, one length.
    Ok(match (b.min(), b.max()) {
        (a, z) if a == z => Sizes::One(a),
        (a, z) => Sizes::Split(b.name(), a, z),
    })
}

#[cfg(test)]
mod tests {
    use super::super::map::tests::{maps_to, refused};

    /// fio 3.33's reading of each (its job options and the lengths of its I/O log): one size, or the
    /// law iolab's --bs-split draws from; a job that only reads takes the read set of a bssplit.
    #[test]
    fn block_sizes_ranges_and_splits_in_fios_meaning() {
        let r = ("rw", "randread");
        for (opts, bs, split) in [
            (&[("bs", "8k"), r][..], "8192", "-"),
            (&[("bsrange", "4k-4k"), r][..], "4096", "-"),
            (&[("bs", "8k"), ("bsrange", "4k:4k"), r][..], "4096", "-"),
            (&[("bsrange", "1k-4k"), r][..], "-", "1024-4096"),
            (&[("bsrange", "4k:1k"), r][..], "-", "1024-4096"),
            (&[("bssplit", "4k/50:64k/50"), r][..], "-", "4k/50:64k/50"),
            (
                &[("bssplit", "512/25:1k/:2k/:4k/"), r][..],
                "-",
                "512/25:1k/25:2k/25:4k/25",
            ),
            (
                &[("bssplit", "512/50:1M/50"), ("bsrange", "512:1M"), r][..],
                "-",
                "512/50:1m/50",
            ),
            (
                &[("bssplit", "64k/40:1024k/60,1024k/100"), r][..],
                "-",
                "64k/40:1m/60",
            ),
            (
                &[
                    ("bssplit", "64k/40:1024k/60,1024k/100"),
                    ("rw", "randwrite"),
                ][..],
                "1048576",
                "-",
            ),
        ] {
            maps_to(
                &[&[("size", "1m")][..], opts].concat(),
                &[("bs", bs), ("bs-split", split)],
            );
        }
    }

    /// size=N% of an existing file with lengths drawn over fio's random map: the share is the region and
    /// the amount, as fio 3.33 takes it (no note of a map ending before the size).
    #[test]
    fn a_share_of_a_file_with_drawn_lengths_is_its_region() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("F");
        std::fs::write(&f, vec![0u8; 1 << 20]).unwrap();
        let f = f.display().to_string();
        let m = maps_to(
            &[
                ("filename", &f),
                ("size", "50%"),
                ("bsrange", "1k-4k"),
                ("rw", "randwrite"),
            ],
            &[
                ("size", "524288"),
                ("file-size", "524288"),
                ("bs-split", "1024-4096"),
                ("distribution", "once"),
            ],
        );
        assert!(
            !m.notes.iter().any(|n| n.contains("random map")),
            "{:?}",
            m.notes
        );
    }

    #[test]
    fn lengths_fio_would_draw_otherwise_are_refused_by_name() {
        for (opts, says) in [
            (
                &[("bssplit", "4k/50:8k/50"), ("bs", "4k")][..],
                "bssplit=4k/50:8k/50 with bs=4k: fio's lengths then depend on which",
            ),
            (
                &[("bssplit", "4k/100,8k/100"), ("rw", "randrw")][..],
                "reads and writes of other lengths",
            ),
            (
                &[("bssplit", ",8k/100"), ("rw", "randread")][..],
                "no size for reads",
            ),
            (
                &[("bssplit", "3k/50:2k/50")][..],
                "3k is not a multiple of the smallest size, 2k",
            ),
            (&[("bssplit", "4k/70:8k/70")][..], "add up to 140%"),
            (&[("bsrange", "0-4k")][..], "least block size is 1 byte"),
            (
                &[("bsrange", "1k-4k"), ("write_bw_log", "x")][..],
                "write_bw_log with lengths drawn per op",
            ),
            (
                &[
                    ("bssplit", "4k/50:8k/50"),
                    ("rw", "write"),
                    ("verify", "md5"),
                ][..],
                "verify with lengths drawn per op",
            ),
        ] {
            refused(&[&[("size", "1m")][..], opts].concat(), &[says]);
        }
    }
}
