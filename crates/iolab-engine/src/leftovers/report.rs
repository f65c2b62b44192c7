//! What `iolab clean` did with each path it found: removed, refused (and why), or not removable.

use std::path::PathBuf;

/// What `clean` did with one recorded path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// It was iolab's, and is removed.
    Removed,
    /// Nothing is at the path any more (someone removed it): nothing to do.
    Gone,
    /// Something is there that is not what iolab created (the reason): left as it is.
    Refused(String),
    /// It is iolab's, but removing it failed (the reason): kept in the journal for another try.
    Failed(String),
}

/// One recorded path and what became of it.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub path: PathBuf,
    pub is_dir: bool,
    /// A zram device (reset and removed through zram-control), not a path in a directory.
    pub zram: bool,
    /// The iolab process that created it.
    pub pid: i32,
    pub verdict: Verdict,
}

/// Everything `clean` did and left alone.
#[derive(Debug, Default)]
pub struct CleanReport {
    /// Where the journals are.
    pub journal_dir: PathBuf,
    /// The recorded paths of iolab processes that are gone (under DIR when given), newest first per process.
    pub outcomes: Vec<Outcome>,
    /// iolab processes still running: their journals were left alone.
    pub running: Vec<i32>,
    /// Recorded paths of gone processes outside DIR, left for another `clean`.
    pub outside: usize,
    /// Journals that could not be read, and lines of journals that were cut short.
    pub notes: Vec<String>,
}

impl CleanReport {
    /// Did a removal of something iolab's fail (exit 1)?
    pub fn failed(&self) -> bool {
        self.outcomes
            .iter()
            .any(|o| matches!(o.verdict, Verdict::Failed(_)))
    }
}
