//! How a fio job walks its file beyond rw's direction: rw's offset modifier (`rw=read:512k`, iolab's
//! `--skip`), and the one set of zones a zoned random_distribution takes.

use super::ctx::{set, Ctx, Mapped};

/// rw=read:N and write:N, fio's offset modifier: iolab's --skip (N bytes after each op's end, or back
/// where negative). A random job's N (ops from one random offset) and a mixed job's are refused.
pub(super) fn offset_modifier(
    j: &Ctx,
    m: &mut Mapped,
    dir: (&str, &str),
    n: &str,
) -> Result<(), String> {
    let rw = j.get("rw").unwrap_or_default();
    if dir.1 == "rand" {
        return Err(format!(
            "rw={rw}: fio makes {n} ops in a row from each random offset (rw_sequencer); iolab draws every \
             op's offset"
        ));
    }
    if dir.0 == "mixed" {
        return Err(format!(
            "rw={rw}: fio walks reads and writes each with holes of their own; iolab's --skip walks one \
             direction"
        ));
    }
    let (sign, digits) = n.strip_prefix('-').map_or(("", n), |d| ("-", d));
    let v = super::numbers::fio_size(digits, j.kb).map_err(|e| format!("rw={rw}: {e}"))?;
    let offset = j.size("offset").ok().flatten().unwrap_or(0);
    if offset > 0 && v > 0 {
        return Err(format!(
            "rw={rw} with offset={offset}: fio's walk then starts at the region's end going back, and wraps \
             to twice the offset going forward (its get_next_seq_offset); iolab's walk starts at the offset \
             and wraps to it: give offset=0, or rw without the modifier"
        ));
    }
    if j.count("loops")?.unwrap_or(1) > 1 && v > 0 {
        return Err(format!(
            "rw={rw} with loops: fio starts each loop's walk at the file's start, iolab's walk goes on; \
             give loops=1"
        ));
    }
    if v > 0 {
        set(m, "skip", format!("{sign}{v}"));
    }
    Ok(())
}

/// fio's HOWTO gives zoned distributions a set of zones per direction, split by commas; fio 3.33 fails to
/// parse such a value (its option parser cuts it at the comma), so it is refused as fio refuses the job.
pub(super) fn one_zone_set(d: &str) -> Result<(), String> {
    if d.starts_with("zoned") && d.contains(',') {
        return Err(format!(
            "random_distribution={d}: fio 3.33 fails to parse a set of zones per direction (\"failed \
             parsing random_distribution\") and drops the job; give one set, for both directions"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::map::tests::{maps_to, refused};

    #[test]
    fn zone_sets_per_direction_are_refused_as_fio_3_33_fails_to_parse_them() {
        let opts = |d| {
            [
                ("rw", "randread"),
                ("size", "1m"),
                ("random_distribution", d),
            ]
        };
        maps_to(
            &opts("zoned:60/10:40/90"),
            &[("distribution", "zoned:60/10:40/90")],
        );
        for d in ["zoned:60/10:40/90,50/50:50/50", "zoned:60/10:40/90,"] {
            refused(
                &opts(d),
                &["random_distribution", "fails to parse", "one set"],
            );
        }
    }

    /// rw=read:N is --skip N (negative too, in fio's units); a random job's N, a mixed job's and one with
    /// loops are refused by name.
    #[test]
    fn the_offset_modifier_is_skip() {
        for (rw, skip) in [
            ("read:512k", "524288"),
            ("write:-8k", "-8192"),
            ("read:0", "-"),
        ] {
            maps_to(&[("rw", rw), ("size", "1m")], &[("skip", skip)]);
        }
        maps_to(
            &[("rw", "read:1k"), ("size", "4096000"), ("kb_base", "1000")],
            &[("skip", "1000")],
        );
        for (rw, more, says) in [
            ("randread:8", None, "8 ops in a row"),
            ("rw:4k", None, "one direction"),
            ("read:4k", Some(("loops", "2")), "give loops=1"),
            ("read:-8k", Some(("offset", "64k")), "twice the offset"),
            ("read:4q", None, "rw=read:4q"),
        ] {
            let mut opts = vec![("rw", rw), ("size", "1m")];
            opts.extend(more);
            refused(&opts, &[says]);
        }
    }

    /// fio's rw=rw keeps a position per direction (its iolog: reads and writes each from block 0): iolab's
    /// --walk-per-direction; randrw draws both alike; with zones it is refused by name.
    #[test]
    fn a_sequential_mix_walks_each_direction_from_the_start() {
        for (rw, apart) in [
            ("rw", "true"),
            ("readwrite", "true"),
            ("randrw", "-"),
            ("write", "-"),
        ] {
            maps_to(
                &[("rw", rw), ("size", "1m")],
                &[("walk-per-direction", apart)],
            );
        }
        refused(
            &[
                ("rw", "rw"),
                ("size", "1m"),
                ("zonemode", "strided"),
                ("zonesize", "64k"),
            ],
            &["rw=rw with zonemode: fio walks reads and writes apart"],
        );
    }
}
