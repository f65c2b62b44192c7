//! The Ansible processes `iolab fleet` starts: each in a process group that a sentinel, started first,
//! kills when iolab dies (SIGKILL included), within a memory bound, and `ansible --list-hosts`'s output
//! read within a time and a size.

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

/// The address space each Ansible process iolab starts may take (RLIMIT_AS): Ansible needs a few hundred
/// MiB; an inventory or a template that reads without end fails there instead of filling memory.
pub const ANSIBLE_MEMORY_MAX: u64 = 4 << 30;

/// The most of its output kept (a line per host).
const LIST_HOSTS_OUTPUT_MAX: u64 = 4 << 20;

/// A process leading a process group of its own, which the Ansible child `cmd` will join, that kills the
/// whole group when iolab dies, SIGKILL included: Ansible's forked workers and their ssh outlive the one
/// process a parent's death signal reaches. It starts first, so that no moment lets iolab die with the
/// child started and nothing watching. It ignores the SIGINT passed on to the group; [`end_sentinel`]
/// ends it. None (the child then leads a group of its own): it could not start.
pub(crate) fn group_sentinel(cmd: &mut Command) -> Option<std::process::Child> {
    let mut sh = Command::new("/bin/sh");
    sh.args([
        "-c",
        "trap '' INT HUP; trap 'kill -KILL 0' TERM; while :; do sleep 3600 & wait $!; done",
    ])
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .process_group(0);
    // SIGTERM is 15 on every Linux architecture.
    iolab_sys::signal_at_parent_death(&mut sh, 15);
    let s = sh.spawn().ok();
    cmd.process_group(s.as_ref().map_or(0, |s| s.id() as i32));
    s
}

/// The process group of `child`, started after [`group_sentinel`] gave `sentinel`.
pub(crate) fn group_of(child: &std::process::Child, sentinel: &Option<std::process::Child>) -> u32 {
    sentinel
        .as_ref()
        .map_or(child.id(), std::process::Child::id)
}

/// Ends a [`group_sentinel`] of group `pgid` once the Ansible child in it has ended: SIGKILL to the group
/// (the sentinel, its sleep and whatever of Ansible's is still in it).
pub(crate) fn end_sentinel(pgid: u32, s: Option<std::process::Child>) {
    // Only while the sentinel holds the group: its id is not another's then. SIGKILL is 9 on every
    // Linux architecture.
    if let Some(mut s) = s {
        let _ = iolab_sys::kill(-(pgid as i32), 9);
        let _ = s.wait();
    }
}

/// How a command given a time to run ended.
pub(crate) enum Ended {
    /// By itself: its status and output.
    Exited(std::process::Output),
    /// Stopped at the end of its time.
    TimedOut,
    /// Stopped at a Ctrl-C.
    Interrupted,
}

/// `cmd`'s stdout and stderr (at most [`LIST_HOSTS_OUTPUT_MAX`] each kept), in a process group of its
/// own, stopped (SIGKILL to the group) after `timeout` or at a Ctrl-C.
pub(crate) fn output_within(
    mut cmd: Command,
    timeout: std::time::Duration,
) -> std::io::Result<Ended> {
    use std::io::Read;
    iolab_sys::bound_child(&mut cmd, ANSIBLE_MEMORY_MAX);
    let sentinel = group_sentinel(&mut cmd);
    let spawned = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            let pgid = sentinel.as_ref().map_or(0, std::process::Child::id);
            end_sentinel(pgid, sentinel);
            return Err(e);
        }
    };
    let pgid = group_of(&child, &sentinel);
    let keep = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            if let Some(mut r) = r {
                let _ = (&mut r).take(LIST_HOSTS_OUTPUT_MAX).read_to_end(&mut kept);
                let _ = std::io::copy(&mut r, &mut std::io::sink());
            }
            kept
        })
    };
    let out = keep(
        child
            .stdout
            .take()
            .map(|o| Box::new(o) as Box<dyn Read + Send>),
    );
    let err = keep(
        child
            .stderr
            .take()
            .map(|e| Box::new(e) as Box<dyn Read + Send>),
    );
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            // What of it is left (a process holding its output) goes with the sentinel.
            end_sentinel(pgid, sentinel);
            return Ok(Ended::Exited(std::process::Output {
                status,
                stdout: out.join().unwrap_or_default(),
                stderr: err.join().unwrap_or_default(),
            }));
        }
        let stop = iolab_sys::interrupted();
        if stop || start.elapsed() > timeout {
            // SIGKILL is 9 on every Linux architecture (libc is not a dependency of this crate).
            let _ = iolab_sys::kill(-(pgid as i32), 9);
            let _ = child.wait();
            end_sentinel(pgid, sentinel);
            // The readers end with the group; one a stray process still holds is left to itself.
            return Ok(if stop {
                Ended::Interrupted
            } else {
                Ended::TimedOut
            });
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
