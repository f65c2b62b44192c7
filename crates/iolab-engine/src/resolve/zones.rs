//! `--zone-size`, `--zone-range` and `--zone-skip`: the ops walk the region zone by zone, as fio's
//! zonemode=strided (see [`crate::pattern::Zones`]); `--skip`: sequential ops with holes between them, or
//! backwards (`crate::seq_skip`); `--walk-per-direction`: a mixed run's reads and writes each walk from
//! the region's start. Checked as [`RawSpec::resolve`] reads them.

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

    /// `--skip`: a signed size, for sequential ops of one direction per run, without zones; not for a
    /// client that plans its own offsets, nor with --verify (ops with holes or going back may overlap).
    pub(super) fn skip(
        &self,
        pattern: Pattern,
        op: OpKind,
        zones: bool,
        method: MethodKind,
    ) -> Result<i64> {
        let text = match self.get("skip") {
            None => return Ok(0),
            Some(Val::Int(i)) => i.to_string(),
            Some(Val::Str(s)) => s.clone(),
            Some(v) => v.text(),
        };
        let (neg, digits) = match text.trim().strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text.trim()),
        };
        let bytes = crate::units::parse_size(digits).map_err(|e| Error::usage("--skip", e))?;
        if bytes > MAX_ZONE {
            return Err(Error::usage(
                "--skip",
                format!("'{text}': at most {MAX_ZONE} bytes (1 EiB) either way"),
            ));
        }
        let bytes = bytes as i64;
        let skip = if neg { -bytes } else { bytes };
        let refuse = |why: String| Err(Error::usage("--skip", why));
        if skip == 0 {
            return Ok(0);
        }
        if pattern != Pattern::Seq {
            return refuse("spaces sequential ops: it needs --pattern seq".into());
        }
        if op == OpKind::Mixed {
            return refuse("walks one direction's ops; a mixed run's reads and writes share one walk, or with --walk-per-direction have one each".into());
        }
        if zones {
            return refuse(
                "sets the walk over the region, as --zone-size does: give one of them".into(),
            );
        }
        if self.bool("verify")? {
            return refuse(
                "--verify checks blocks written one after another or drawn at random, not a walk with holes or \
                 backwards (whose ops may overlap): drop one"
                    .into(),
            );
        }
        if method.info().exec == Exec::OutOfProcess {
            return refuse(format!(
                "the {} client plans its own offsets",
                method.name()
            ));
        }
        Ok(skip)
    }

    /// `--walk-per-direction`: for a mixed sequential run without zones, whose offsets iolab plans.
    pub(super) fn walk_per_direction(
        &self,
        op: OpKind,
        pattern: Pattern,
        zones: bool,
        method: MethodKind,
    ) -> Result<bool> {
        if !self.bool("walk-per-direction")? {
            return Ok(false);
        }
        let refuse = |why: String| Err(Error::usage("--walk-per-direction", why));
        if op != OpKind::Mixed || pattern != Pattern::Seq {
            return refuse(
                "walks a mixed run's reads and writes apart: it needs --op mixed --pattern seq"
                    .into(),
            );
        }
        if zones {
            return refuse("not with --zone-size: the zones walk both directions as one".into());
        }
        if method.info().exec == Exec::OutOfProcess {
            return refuse(format!(
                "the {} client plans its own offsets",
                method.name()
            ));
        }
        Ok(true)
    }
}

/// The most bytes a zone value may be: 1 EiB, so that a range and a skip added stay within 64 bits.
const MAX_ZONE: u64 = 1 << 60;
