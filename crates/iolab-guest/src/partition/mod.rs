//! `--offload-partition vm`: the offload client in a QEMU guest, after the seed thesis's Jailhouse inmate.
//!
//! The shared region is a file in /dev/shm that QEMU gives the guest as an ivshmem-plain PCI device
//! (`vm/ivshmem.rs`). The file is [`Header`] (one page: magic, version, the session's plan, the control
//! words) followed by the region of `shm.rs` at [`REGION_OFF`], laid out as for a forked client. The host
//! serves it as for a forked client (the kernel path's restricted NO_MMAP SQPOLL io_uring with its rings
//! and SQEs in the file; the broker thread); the guest runs `iolab offload-guest` (`guest.rs`), which maps
//! the device's BAR 2, checks the magic and version, and for each session forks a client that runs
//! `client::run` with the guest's channel (words of the header instead of pipes).
//!
//! One guest serves every partition run of one iolab process (`host.rs`: booted at the first, powered off
//! at exit), so a suite's partition rows cost one boot.
//!
//! Wake-ups: the guest cannot write the host's eventfd. Kernel path: when the SQPOLL thread has gone idle
//! (IORING_SQ_NEED_WAKEUP in the shared ring) the guest client sets [`Header::wake`]; a host thread
//! checks that word every [`WAKE_POLL_US`] µs and calls io_uring_enter(IORING_ENTER_SQ_WAKEUP). Broker
//! path: the broker spins for the whole run (`--doorbell spin`).

pub mod guest;
mod host;
pub mod layout;

pub use host::run;
pub use host::shutdown;
