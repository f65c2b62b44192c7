//! `--method offload`: a sandboxed client process does I/O without making system calls, through rings in
//! memory it shares with iolab (after the seed hypervisor thesis, which offloaded an isolated partition's
//! syscalls through an io_uring in shared memory).
//!
//! iolab forks the client, which confines itself with a seccomp filter (read, write, exit and exit_group
//! only; any other system call kills it with SIGSYS), then performs the workload by writing requests into
//! shared memory and reading completions back. Three paths:
//! - `kernel`: an io_uring whose rings live in the shared memfd (IORING_SETUP_NO_MMAP), served by an SQPOLL
//!   kernel thread pinned away from the client. The ring is made R_DISABLED, the target is registered as
//!   fixed file 0 and the data area as fixed buffer 0, then IORING_REGISTER_RESTRICTIONS allows only NOP,
//!   READ_FIXED, WRITE_FIXED and FSYNC with IOSQE_FIXED_FILE, and no further registration. When the SQ
//!   thread sleeps the client writes an inherited eventfd (the doorbell) and an iolab thread wakes it.
//!   With `--sq-sleep` the client lets the SQ thread idle out before every round trip, so every request
//!   wakes it through the doorbell (the thesis's interrupt model).
//! - `broker`: iolab's own request format in a shared ring (`broker.rs`); a broker thread copies, checks
//!   and executes each request through its own io_uring.
//! - `native`: the same ring and requests from an unsandboxed client entering the kernel with
//!   io_uring_enter(2): the baseline.
//!
//! Timing, two ways: the client reads the cycle counter itself around each request and each round trip
//! (`cycles.rs`: histograms in the shared region, the figures the thesis's rdtsc gave), and from outside
//! iolab's thread sends "go", then samples the client's completion counter every few milliseconds
//! (CLOCK_MONOTONIC) until the client says "done" (wall time, ops/s).

pub mod broker;
pub mod client;
pub mod cycles;
pub mod figures;
pub mod ring;
pub mod sandbox;
pub mod server;
pub mod setup;
pub mod shm;
pub mod watch;

pub use server::check_requests;
pub use setup::{
    check_data_area_for, check_target, Cpus, Shape, Span, FORCE_RING_MMAP, SEED_NATIVE_CYCLES,
    SEED_OFFLOADED_CYCLES, SEED_RDTSC_APP_CYCLES, SEED_RDTSC_INMATE_CYCLES, STALL_S, WINDOW_MS,
};

use crate::error::{Error, Result};
use crate::measure::clock::ClockInfo;
use crate::result::*;
use crate::spec::{OpKind, Spec};
use crate::target::{self};
use std::os::fd::AsRawFd;

/// Runs one offload workload and measures it: the server side (`server.rs`) is set up, the client
/// (`sandbox.rs`) forked, attacked with and timed, the sandbox checked, and the figures (`figures.rs`)
/// assembled.
pub fn run(spec: &Spec, clock: &ClockInfo) -> Result<RunResult> {
    if spec.offload.partition == crate::spec::Partition::Vm {
        return Err(Error::Runtime(
            "internal: --offload-partition vm runs through the lab's run, which boots the guest"
                .into(),
        ));
    }
    let host = Host::current();
    let target = target::setup(spec)?;
    check_target(spec, &target)?;
    let file = target.open_for(spec, spec.op == OpKind::Write)?;
    let shape = Shape::of(spec, &target)?;
    // Declared before every ring and thread that uses it, so it is unmapped last.
    let region = shape.region(spec.seed)?;
    let ctl = region.ctl();
    let mut bait = sandbox::Bait::new(&spec.offload.attacks)?;
    let cpus = Cpus::choose(spec);
    let mut notes = target.notes.clone();
    notes.extend(cpus.notes(spec));
    let mut server = server::Server::setup(spec, &shape, &region, file.as_raw_fd(), &cpus)?;
    let mut client = sandbox::Client::start(spec, &shape, &region, &bait, &server, cpus.client)?;
    let span = server.serve(&region, &shape.layout, |shared, sq_ring| {
        client.drive(spec, shared, sq_ring)
    })?;
    let ended = client.end()?;
    server.close_ring();
    check_requests(&server, ctl, &target, shape.bs)?;
    let checks = bait.check(
        spec.offload.path,
        &spec.offload.attacks,
        ctl,
        &server.shared,
    )?;
    figures::result(figures::Parts {
        spec,
        clock,
        host,
        target: &target,
        shape: &shape,
        cpus: &cpus,
        ctl,
        cycles: region.cycles(),
        server: &server,
        span,
        client: ended,
        checks,
        notes,
    })
}
