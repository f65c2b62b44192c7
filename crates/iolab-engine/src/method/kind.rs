//! The name of a method: how data moves between user space and the kernel. Everything else about a
//! method is in its `MethodInfo`, declared in the method's own file and listed in the registry
//! (`method/mod.rs`, whose `MethodKind::info()` is every layer's way to it).

use serde::{Deserialize, Serialize};

/// How data moves between user space and the kernel: the name of a method. Everything else about a
/// method is in its [`MethodInfo`], declared in the method's own file and listed in [`METHODS`].
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
