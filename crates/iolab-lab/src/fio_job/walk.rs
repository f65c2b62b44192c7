//! How a fio job walks its file beyond rw's direction: rw's offset modifier (`rw=read:512k`, iolab's
//! `--skip`) and the set of zones a zoned random_distribution gives the job's direction.

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

/// fio's zoned distributions take a set of zones per direction, split by commas (reads, then writes;
/// one set for both): the set of the direction the job moves, None where that set is empty (fio then
/// draws uniformly). Other distributions as they are.
pub(super) fn zone_set(d: &str, op: &str) -> Result<Option<String>, String> {
    let Some((kind, sets)) = d
        .split_once(':')
        .filter(|(k, s)| k.starts_with("zoned") && s.contains(','))
    else {
        return Ok(Some(d.to_string()));
    };
    let sets: Vec<&str> = sets.split(',').collect();
    let (read, write) = (sets[0], sets[1]);
    let set = match op {
        "read" => read,
        "write" => write,
        _ if read == write => read,
        _ => {
            return Err(format!(
                "random_distribution={d}: fio draws reads and writes from different zones; iolab draws \
                 a mixed job's reads and writes from one law"
            ))
        }
    };
    Ok((!set.is_empty()).then(|| format!("{kind}:{set}")))
}

#[cfg(test)]
mod tests {
    use super::super::map::tests::{maps_to, refused};

    #[test]
    fn zone_sets_are_the_directions() {
        // zoned takes a set of zones per direction: reads, then writes (an empty set: uniform).
        let zoned = "zoned:60/10:40/90,50/50:50/50";
        for (rw, dist) in [
            ("randread", "zoned:60/10:40/90"),
            ("randwrite", "zoned:50/50:50/50"),
        ] {
            let opts = [("rw", rw), ("size", "1m"), ("random_distribution", zoned)];
            maps_to(&opts, &[("distribution", dist)]);
        }
        let no_write_set = [
            ("rw", "randwrite"),
            ("size", "1m"),
            ("random_distribution", "zoned:60/10:40/90,"),
        ];
        maps_to(&no_write_set, &[("distribution", "-")]);
        refused(
            &[
                ("rw", "randrw"),
                ("size", "1m"),
                ("random_distribution", zoned),
            ],
            &["random_distribution", "different zones"],
        );
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
            ("read:4q", None, "rw=read:4q"),
        ] {
            let mut opts = vec![("rw", rw), ("size", "1m")];
            opts.extend(more);
            refused(&opts, &[says]);
        }
    }
}
