//! What `iolab vm` is asked for ([`VmArgs`]), made into a request checked before anything is fetched,
//! and run: for `iolab vm` (cmd_vm.rs, which checks the guest's commands first) and `suite --vm`.

use crate::output::{err_bytes, errln, out_bytes};
use clap::Args;
use iolab_engine::error::Error;
use iolab_guest::vm::{
    self,
    arch::{Arch, Board},
    Report, VmRequest,
};
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args)]
pub(crate) struct VmArgs {
    /// The guest's architecture: x86_64 (amd64), aarch64 (arm64: Debian's arm64 kernel under
    /// qemu-system-aarch64, a Cortex-A72 on the virt machine), or armv7 (armhf: Debian's armmp kernel
    /// under qemu-system-arm, see --machine); an ARM guest is always emulated and needs --exe.
    #[arg(long, value_name = "ARCH", default_value = "x86_64")]
    pub(crate) arch: String,
    /// QEMU's machine: virt (ARM; for armv7 a Cortex-A15, with the ARM generic timer user space may
    /// read), or vexpress-a9 (armv7 only: a Cortex-A9, the Zynq-7000's core, without a generic timer or
    /// PCI: no NVMe disk) [default: virt on ARM, pc on x86_64].
    #[arg(long, value_name = "MACHINE")]
    pub(crate) machine: Option<String>,
    /// The iolab binary the guest runs [default: this one]; for --arch aarch64 or armv7 a static build
    /// of it (`scripts/build-board aarch64|armv7`).
    #[arg(long, value_name = "PATH")]
    pub(crate) exe: Option<PathBuf>,
    /// The kernel the guest boots: a release, 6.1, 6.1-rt, 6.12 or 6.12-rt (PREEMPT_RT), as the newest
    /// image of it in apt's lists for the guest's architecture, or a Debian kernel image package (e.g.
    /// linux-image-6.1.0-NN-amd64; checked against apt's lists) [default: the one linux-image-amd64,
    /// linux-image-arm64 (--arch aarch64) or linux-image-armmp (--arch armv7) depends on now].
    #[arg(long, value_name = "RELEASE|PKG")]
    pub(crate) kernel: Option<String>,
    /// Where the kernel, headers, qemu and busybox are kept after the first run (about 170 MB) [default:
    /// ${XDG_CACHE_HOME:-$HOME/.cache}/iolab/vm].
    #[arg(long, value_name = "DIR")]
    pub(crate) cache: Option<PathBuf>,
    /// Kill the guest (exit 1, with the last lines of its console) when it runs longer than this; with
    /// --ssh, the end of the guest's life once it serves (exit 0); 1 s to 365 days.
    #[arg(long, value_name = "SECS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=31_536_000))]
    pub(crate) timeout: u64,
    /// Run each line of FILE (an iolab command's arguments, optionally after `iolab`) in one boot, one
    /// after the other; the exit status is the first non-zero one.
    #[arg(long, value_name = "FILE", conflicts_with = "args")]
    pub(crate) script: Option<PathBuf>,
    /// Keep the guest up after its commands (none needed), reachable by ssh as root on 127.0.0.1:PORT
    /// only (0: a free port), until --timeout or Ctrl-C: a host for `iolab fleet`. Its Ansible inventory
    /// line is printed on stdout; the keys are made for this boot and removed with it.
    #[arg(long, value_name = "PORT")]
    pub(crate) ssh: Option<u16>,
    /// The iolab arguments to run in the guest, after `--` (e.g. `-- run --method io_uring --iopoll
    /// --direct --op read --target /dev/nvme0n1`). Files named relative to the current directory come
    /// back to it.
    #[arg(last = true, value_name = "IOLAB ARGS")]
    pub(crate) args: Vec<OsString>,
}

/// Says what the machinery does on stderr and passes the guest's output on.
struct Terminal;

impl Report for Terminal {
    fn say(&mut self, line: &str) {
        errln(&format!("iolab vm: {line}"));
    }
    fn out(&mut self, bytes: &[u8]) -> Result<(), Error> {
        out_bytes(bytes)
    }
    fn err(&mut self, bytes: &[u8]) {
        err_bytes(bytes);
    }
}

/// The request, checked before anything is fetched (bad input: exit 2).
pub(crate) fn request(a: &VmArgs, commands: Vec<Vec<OsString>>) -> Result<VmRequest, Error> {
    let share = std::env::current_dir()
        .and_then(std::fs::canonicalize)
        .map_err(|e| Error::Runtime(format!("cannot tell the current directory: {e}")))?;
    let arch = Arch::parse(&a.arch).ok_or_else(|| {
        Error::usage(
            "--arch",
            format!(
                "{}: iolab vm boots x86_64 (amd64), aarch64 (arm64) or armv7 (armhf) guests",
                a.arch
            ),
        )
    })?;
    let board = match &a.machine {
        None => Board::Standard,
        Some(m) => Board::parse(m, arch).map_err(|e| Error::usage("--machine", e))?,
    };
    // A guest that only serves ssh needs no iolab of its own where this one cannot run in it.
    let exe = match exe(a, arch) {
        Err(_) if a.exe.is_none() && commands.is_empty() => None,
        r => Some(r?),
    };
    let cache = match &a.cache {
        Some(c) => std::path::absolute(c)
            .map_err(|e| Error::usage("--cache", format!("{}: {e}", c.display())))?,
        None => vm::default_cache()?,
    };
    // Where the parts are kept must take them: checked before anything is fetched.
    crate::output::check_dir_path("--cache", &cache)?;
    // The keys' paths go into the inventory line and the ssh command as they are.
    if a.ssh.is_some() {
        let text = cache.to_string_lossy();
        if text
            .chars()
            .any(|c| c.is_whitespace() || "'\"\\".contains(c))
        {
            return Err(Error::usage(
                "--cache",
                format!(
                    "{text}: with --ssh the guest's keys are named in an inventory line, which takes \
                     no blanks or quotes in a path: name another cache directory"
                ),
            ));
        }
    }
    Ok(VmRequest {
        arch,
        board,
        kernel: a.kernel.clone(),
        cache,
        timeout: Duration::from_secs(a.timeout),
        commands,
        exe,
        ssh: a.ssh,
        share,
        devices: Vec::new(),
    })
}

/// The binary the guest runs: `--exe` (checked: of the guest's machine, static for a foreign one), or
/// this one for a guest of this host's architecture.
fn exe(a: &VmArgs, arch: Arch) -> Result<PathBuf, Error> {
    let Some(p) = &a.exe else {
        if arch.foreign() {
            return Err(Error::usage(
                "--exe",
                format!(
                    "an {m} guest cannot run this {host} iolab: name a static {m} iolab with --exe PATH \
                     (built by `scripts/build-board {m}`)",
                    m = arch.machine(),
                    host = std::env::consts::ARCH
                ),
            ));
        }
        return std::env::current_exe()
            .map_err(|e| Error::Runtime(format!("cannot find iolab's own binary: {e}")));
    };
    let p = std::path::absolute(p)
        .map_err(|e| Error::usage("--exe", format!("{}: {e}", p.display())))?;
    vm::initramfs::check_exe(&p, arch).map_err(|e| Error::usage("--exe", e))?;
    Ok(p)
}

/// Runs the request; the exit status is the (first failing) guest command's.
pub(crate) fn run_request(req: &VmRequest) -> Result<i32, Error> {
    iolab_engine::cleanup::install_signal_handler();
    let statuses = vm::run(req, &mut Terminal)?;
    Ok(statuses.iter().copied().find(|&s| s != 0).unwrap_or(0))
}

/// `iolab <args>` in a guest with the default cache and kernel, killed after `timeout_s` (`suite --vm`).
pub(crate) fn in_guest(args: Vec<OsString>, timeout_s: u64) -> Result<i32, Error> {
    let a = VmArgs {
        arch: "x86_64".into(),
        machine: None,
        exe: None,
        kernel: None,
        cache: None,
        timeout: timeout_s,
        script: None,
        ssh: None,
        args: Vec::new(),
    };
    run_request(&request(&a, vec![args])?)
}
