//! `--bs-split` (see [`crate::bs_split`]): read with `--bs`, its `--size` in bytes, and refused beside what
//! sizes, logs or replays ops of one length.

use crate::bs_split::BsSplit;
use crate::error::{Error, Result};
use crate::spec::*;

const FLAG: &str = "--bs-split";

impl RawSpec {
    /// The split, its largest size at most `most` (as --bs); `--bs`, where given too, its smallest.
    pub(super) fn bs_split(&self, most: u64) -> Result<Option<BsSplit>> {
        let Some(text) = self.text("bs-split")? else {
            return Ok(None);
        };
        let b = BsSplit::parse(&text)?;
        if b.max() > most {
            return Err(Error::usage(
                FLAG,
                format!("'{text}': at most {most} bytes per op"),
            ));
        }
        if let Some(bs) = self.size("bs")?.filter(|&bs| bs != b.min()) {
            return Err(Error::usage(
                FLAG,
                format!(
                    "its smallest size, {} bytes, is the run's block size, not --bs {bs}: drop --bs",
                    b.min()
                ),
            ));
        }
        if self.has("rate") {
            return Err(Error::usage(
                FLAG,
                "--rate paces bytes by ops of one length: give --rate-iops",
            ));
        }
        Ok(Some(b))
    }
}

/// `--size` with `--bs-split`: bytes, at least one op of the smallest length per thread.
pub(super) fn size(size: u64, bs: u64, threads: u64) -> Result<u64> {
    if size < bs.saturating_mul(threads) {
        return Err(Error::usage(
            "--size",
            format!(
                "{size} bytes do not give each of {threads} thread(s) one op of --bs-split's smallest size, \
                 {bs} bytes"
            ),
        ));
    }
    Ok(size)
}

/// What a run of drawn lengths cannot be run with, refused by name.
pub(super) fn check(s: &Spec) -> Result<()> {
    if s.bs_split.is_none() {
        return Ok(());
    }
    let refuse = |why: String| Err(Error::usage(FLAG, why));
    if !s.method.info().drawn_lengths {
        let can: Vec<&str> = crate::registry::METHODS
            .iter()
            .filter(|e| e.info.drawn_lengths)
            .map(|e| e.info.name)
            .collect();
        return refuse(format!(
            "--method {} sizes its requests once per run; use {}",
            s.method.name(),
            can.join(", ")
        ));
    }
    let with = [
        (s.ring.vectored, "--vectored", "splits each op into buffers of one size"),
        (s.ring.send_zc, "--send-zc", "sends buffers of one size"),
        (s.ring.nop_requests, "--nop-requests", "moves no data"),
        (s.zones.is_some(), "--zone-size", "counts a zone in ops of one length"),
        (s.skip != 0, "--skip", "spaces ops of one length"),
        (
            s.verify,
            "--verify",
            "replays blocks of one length, each with its own stamps (ops of drawn lengths overlap them)",
        ),
        (s.op_log_ms.is_some(), "--op-log", "records ops of one length"),
        (s.layers, "--layers", "traces ops of one length"),
        (
            !matches!(s.distribution, Distribution::Uniform | Distribution::Once),
            "--distribution",
            "draws blocks of one length: uniform or once only",
        ),
    ];
    match with.iter().find(|w| w.0) {
        Some((_, flag, why)) => refuse(format!("not with {flag}: it {why}")),
        None => Ok(()),
    }
}
