//! Every raw system call, ioctl and libc stdio call iolab makes, one function each.
//!
//! Each wrapper returns [`SysResult`], whose error names the call and keeps the errno, so that the caller
//! can turn it into a message for people (see `crate::error`). Kernel resources are owned by RAII types
//! ([`OwnedFd`](std::os::fd::OwnedFd), [`Mapping`], [`CFile`], [`AioContext`]); nothing outside this
//! module calls `libc` for a syscall.
//!
//! The wrappers live in one submodule per concern and are all re-exported here, so callers name them
//! `sys::NAME`:
//! - `errno`: [`SysErr`], [`SysResult`], [`errno_name`] and the one check of a raw return value every
//!   wrapper uses (`errno::result`, in the manner of nix's `Errno::result`: the failure value of the
//!   call's return type, then errno). Calls that report failure otherwise (stdio's short counts, setvbuf)
//!   say so where they are checked.
//! - `files`: files and block devices (open, read/write/pread/pwrite and vectored forms, fsync, stat,
//!   ioctls, statfs) and the kernel-side copies (copy_file_range, sendfile, splice).
//! - `lfs`: the C library's file calls with 64-bit offsets on every target (glibc's `*64` calls on
//!   32-bit ARM); the other modules take `open`, `pread`, `stat`, `mmap`... from here.
//! - `at`: names relative to a directory descriptor (openat, unlinkat), statx birth time, xattrs.
//! - `memory`: mappings, memfd, the locked-memory limit.
//! - `cache`: a file's page cache: dropping its clean pages (posix_fadvise) and counting them (mincore).
//! - `cpu_timer`: the ARM generic timer (CNTVCT, CNTFRQ, the probe of whether 32-bit ARM may read it),
//!   clock_gettime as a plain system call, the vDSO's presence.
//! - `process`: rusage, clocks, ids, affinity, signals, fork/wait/kill, exits.
//! - `seccomp`: the offload client's seccomp filter (an allow list of system calls) and exit_group.
//! - `extents`: where a file's bytes lie on its device (FIEMAP).
//! - `perf_events`: perf_event_open and friends, private tracefs instances (`perf` is `perf_abi`: the
//!   perf_event ABI structures and constants, defined here for every architecture).
//! - `uring`: io_uring_setup/enter/register and the structures for rings in user memory.
//! - `aio`: Linux native AIO.
//! - `ipc`: pipes, sockets, epoll/poll, eventfd, futexes, readv/writev.
//! - `stdio`: glibc `FILE` streams.
//! - `term`: the size of a terminal (TIOCGWINSZ).
//! - `nvme`: NVMe passthrough: the command a uring_cmd carries to /dev/ngXnY, and NVME_IOCTL_ID.
//! - `sink`: iolab's sink driver (`kmod/`): its ioctls, mirrored from `kmod/iolab_sink.h`, and
//!   finit_module/delete_module.

mod abi_layout;
mod aio;
mod at;
mod cache;
mod cpu_timer;
mod errno;
mod extents;
mod files;
mod ipc;
mod lfs;
mod memory;
mod nvme;
pub mod perf_abi;
mod perf_events;
mod process;
mod raw;
mod seccomp;
mod sink;
mod stdio;
mod term;
mod tty;
mod uring;

pub use aio::*;
pub use at::*;
pub use cache::*;
pub use cpu_timer::*;
pub use errno::{errno_name, SysErr, SysResult};
pub use extents::{file_extents, Extent};
pub use files::*;
pub use ipc::*;
pub use lfs::{identity, Stat};
pub use memory::*;
pub use nvme::*;
pub use perf_events::*;
pub use process::*;
pub use seccomp::*;
pub use sink::*;
pub use stdio::*;
pub use term::*;
pub use tty::*;
pub use uring::*;
