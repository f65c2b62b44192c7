//! What the mapping of a fio job works with: the job as mapped so far ([`Mapped`]) and its options read in
//! fio's meaning ([`Ctx`]), apart from map.rs so that the files doing parts of the mapping (amounts.rs)
//! need not import the file that calls them.

use super::numbers::{fio_number, fio_size, Num};
use super::parse::Job;
use iolab_engine::spec::RawSpec;

/// A job mapped: its name, the workload, what was ignored (lenient) and the notes on differences.
#[derive(Debug, Clone)]
pub struct Mapped {
    pub name: String,
    pub raw: RawSpec,
    pub ignored: Vec<String>,
    pub notes: Vec<String>,
    /// fio's log files the job asks for (write_bw_log ..., see logs.rs).
    pub logs: Option<super::logs::LogPlan>,
}

/// iolab's most threads.
pub(super) const MAX_JOBS: u64 = 1024;

/// A job's options read in fio's meaning (`kb` its kb_base).
pub(super) struct Ctx<'a> {
    pub(super) job: &'a Job,
    pub(super) kb: u64,
}

impl Ctx<'_> {
    pub(super) fn get(&self, k: &str) -> Option<&str> {
        self.job.get(k)
    }

    /// A size, or a percentage where fio takes one.
    pub(super) fn number(&self, k: &str) -> Result<Option<Num>, String> {
        self.get(k)
            .map(|v| fio_number(v, self.kb).map_err(|e| format!("{k}={v}: {e}")))
            .transpose()
    }

    /// A size in bytes.
    pub(super) fn size(&self, k: &str) -> Result<Option<u64>, String> {
        self.get(k)
            .map(|v| fio_size(v, self.kb).map_err(|e| format!("{k}={v}: {e}")))
            .transpose()
    }

    pub(super) fn flag(&self, k: &str) -> Result<bool, String> {
        match self.get(k) {
            None | Some("0") | Some("false") => Ok(false),
            Some("1") | Some("true") => Ok(true),
            Some(v) => Err(format!("{k}={v}: expected 0 or 1")),
        }
    }

    /// A whole number, read as fio reads its integer options (with units and 0x, as sizes).
    pub(super) fn count(&self, k: &str) -> Result<Option<u64>, String> {
        self.size(k)
    }

    /// rw's direction, without what follows a colon.
    pub(super) fn rw(&self) -> &str {
        let rw = self.get("rw").unwrap_or("read");
        rw.split_once(':').map_or(rw, |(d, _)| d)
    }

    /// What follows rw's colon (fio's offset modifier, or a random job's ops per offset), if anything.
    pub(super) fn rw_modifier(&self) -> Option<&str> {
        self.get("rw")
            .and_then(|rw| rw.split_once(':'))
            .map(|(_, n)| n)
    }

    /// Whether the job reads (read, randread, rw, randrw).
    pub(super) fn reads(&self) -> bool {
        !matches!(self.rw(), "write" | "randwrite")
    }

    /// Whether the job writes (write, randwrite, rw, randrw).
    pub(super) fn writes(&self) -> bool {
        !matches!(self.rw(), "read" | "randread")
    }
}

pub(super) fn set(m: &mut Mapped, k: &str, v: impl Into<iolab_engine::spec::options::Val>) {
    m.raw
        .set(k, v)
        .unwrap_or_else(|e| panic!("internal: fio mapping sets {k}: {e}"));
}
