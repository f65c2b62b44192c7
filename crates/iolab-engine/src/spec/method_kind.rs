//! The name of a method (how data moves between user space and the kernel) and the words its registry
//! entry uses for how it runs ([`Exec`]) and which targets it takes ([`Fit`]): plain values a spec holds.
//! Everything else about a method is in its `MethodInfo`, declared in the method's own file and listed in
//! the registry (`crate::registry`, whose `MethodKind::info()` is every layer's way to it).

use serde::{Deserialize, Serialize};

/// How data moves between user space and the kernel: the name of a method. Everything else about a
/// method is in its [`MethodInfo`](crate::method::MethodInfo), declared in the method's own file and listed in
/// [`METHODS`](crate::registry::METHODS).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum MethodKind {
    Nop,
    Sync,
    Psync,
    Pv2,
    Vectored,
    Stdio,
    Mmap,
    IoUring,
    Aio,
    Splice,
    Sendfile,
    CopyFileRange,
    Epoll,
    Offload,
    UringCmd,
}

/// How a method's operations are carried out, which decides the runner's loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exec {
    /// Every operation completes inside `submit` (a system call, a copy, or nothing).
    Sync,
    /// Operations are queued and completed later (`--qd`, `--batch`): `commit` and `reap`.
    Queued,
    /// A client process of its own does the operations, timed from outside (offload).
    OutOfProcess,
}

/// Whether a method takes a kind of target; `No` carries the reason, which names the kernel's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    Yes,
    /// Refused: the kernel cannot do it (`{t}` in the text stands for the target's name).
    No(&'static str),
    /// Not what this method is for (epoll on a file): refused too, and left out of the survey.
    Never(&'static str),
    /// As `Never`, but the remedy is another target: the refusal names `--target`.
    OtherTarget(&'static str),
}

impl Fit {
    pub fn ok(self) -> bool {
        self == Fit::Yes
    }
}
