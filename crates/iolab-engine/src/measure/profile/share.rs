//! A profile as the result records it: the samples, the shares of the groups and functions they fell in.

use serde::{Deserialize, Serialize};

/// A sampled profile of a run: shares of samples by what the code does and by function, and the folded
/// stacks a flame graph is drawn from.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ProfileFigures {
    /// Which pass was sampled: "separate" (an untimed pass of its own, like the counting pass) or "inline"
    /// (the timed pass itself, which the sampling then slowed).
    pub pass: String,
    /// The perf event sampled: "cpu-clock" (software), or "cycles" where the hardware counts them.
    pub event: String,
    /// Samples per second per running task asked for.
    pub frequency_hz: u64,
    /// Samples taken (over the process's threads and its kernel helper threads), and samples the kernel
    /// had to drop because the buffer was full.
    pub samples: u64,
    pub lost: u64,
    /// Why kernel (or user) frames have no names, where they have none.
    pub unsymbolized: Vec<String>,
    /// Share of samples per group of what the code does, largest first: "syscall entry/exit", "copy to/from
    /// user", "page cache", "filesystem", "block layer and driver", "io_uring core", "io-wq", "scheduler and
    /// idle", "iolab", "other kernel", "other user".
    pub groups: Vec<ProfileShare>,
    /// Functions by self share (the leaf frame of the samples) and by inclusive share (anywhere on the
    /// stack), largest first, at most 30 each.
    pub top_self: Vec<ProfileShare>,
    pub top_inclusive: Vec<ProfileShare>,
    /// Folded stacks, "thread;outermost;...;leaf count" per line (the flame graph format), the thread
    /// named by its comm with digits dropped (iou-wrk, iolab-w).
    pub folded: Vec<String>,
    pub notes: Vec<String>,
    /// The shares the findings read, as they read them (`ProfileFacts`), so a sentence can cite each;
    /// absent in older results and in a profile without samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shares: Option<FindingShares>,
}

/// The shares of a profile that findings print: of all samples in kernel code, in the copy, scheduler
/// and syscall entry/exit groups, on io-wq worker threads, and the share of the io-wq workers' samples
/// that went through their busiest function.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct FindingShares {
    pub kernel_share: f64,
    pub copy_share: f64,
    pub sched_share: f64,
    pub syscall_share: f64,
    pub iowq_share: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iowq_focus_share: Option<f64>,
}

/// One group's or one function's share of the samples.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ProfileShare {
    pub name: String,
    /// In kernel code (else user space); for groups, whether the group is kernel code.
    pub kernel: bool,
    pub samples: u64,
    /// samples / all samples.
    pub share: f64,
}
