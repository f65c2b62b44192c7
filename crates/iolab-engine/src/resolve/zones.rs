//! `--zone-size`, `--zone-range` and `--zone-skip`: the ops walk the region zone by zone, as fio's
//! zonemode=strided (see [`crate::pattern::Zones`]), checked as [`RawSpec::resolve`] reads them.

use crate::error::{Error, Result};
use crate::method::info::Exec;
use crate::spec::*;

impl RawSpec {
    /// The zones, when `--zone-size` is given: each of the three a multiple of `bs` (a zone starts on a
    /// block, as iolab's ops do), the range and skip only with a size, and not where the offsets are
    /// drawn from a distribution or by another process.
    pub(super) fn zones(
        &self,
        bs: u64,
        distribution: &Distribution,
        method: MethodKind,
    ) -> Result<Option<Zones>> {
        let (size, range, skip) = (
            self.size("zone-size")?,
            self.size("zone-range")?,
            self.size("zone-skip")?,
        );
        let Some(size) = size else {
            if let Some(other) = ["zone-range", "zone-skip"]
                .into_iter()
                .find(|k| self.has(k))
            {
                return Err(Error::usage(
                    format!("--{other}"),
                    "shapes the zones --zone-size sets: give --zone-size too",
                ));
            }
            return Ok(None);
        };
        let z = Zones {
            size,
            range: range.unwrap_or(size),
            skip: skip.unwrap_or(0),
        };
        for (flag, v) in [
            ("zone-size", z.size),
            ("zone-range", z.range),
            ("zone-skip", z.skip),
        ] {
            if v > MAX_ZONE {
                return Err(Error::usage(
                    format!("--{flag}"),
                    format!(
                        "{v} bytes: at most {MAX_ZONE} (1 EiB), more than any device holds (the zones' sums stay \
                         within 64 bits)"
                    ),
                ));
            }
            if v % bs != 0 || (v == 0 && flag != "zone-skip") {
                return Err(Error::usage(
                    format!("--{flag}"),
                    format!(
                        "{v} bytes: give a multiple of --bs ({bs}), at least one block (iolab's ops, and so its \
                         zones, start on a block; fio's may not)"
                    ),
                ));
            }
        }
        if !distribution.is_uniform() {
            return Err(Error::usage(
                "--zone-size",
                "draws the random offsets of each zone uniformly: drop --distribution",
            ));
        }
        if method.info().exec == Exec::OutOfProcess {
            return Err(Error::usage(
                "--zone-size",
                format!("the {} client draws its own offsets", method.name()),
            ));
        }
        Ok(Some(z))
    }
}

/// The most bytes a zone value may be: 1 EiB, so that a range and a skip added stay within 64 bits.
const MAX_ZONE: u64 = 1 << 60;
