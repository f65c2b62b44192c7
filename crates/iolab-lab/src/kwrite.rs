//! The kernel-vs-user note's kernel module, for real: the sink driver writes the decimal lines from inside
//! the kernel (IOLAB_SINK_IOC_KWRITE: one kernel_write per line, then vfs_fsync, timed with ktime_get_ns),
//! and iolab reads the file back and compares it byte for byte with the lines, like every user-space way
//! of the kernel-user suite (`crate::lines`). Where the driver is absent the suite records the way as not
//! available, with the reason ([`unavailable`]).

use crate::lines::{LinesCpu, LinesResult, LinesSpec};
use iolab_engine::error::{Error, Result};
use iolab_engine::measure::cpu::{Rusage, RusageDelta};
use iolab_engine::sink_device::{absent_reason, Sink};
use iolab_sys as sys;
use std::path::Path;

/// The way's name in the kernel-user suite (`method = "kernel-module"`).
pub const KERNEL_MODULE: &str = "kernel-module";

/// Why the kernel-module way cannot run here, if it cannot: no driver, or not root (the driver asks for
/// CAP_SYS_ADMIN before it writes a file).
pub fn unavailable() -> Option<String> {
    if let Some(why) = absent_reason() {
        return Some(why);
    }
    (sys::geteuid() != 0).then(|| {
        "the sink driver writes files from the kernel only for CAP_SYS_ADMIN (run iolab as root)".into()
    })
}

/// One run: the driver creates `path` (it must not exist: the driver opens it O_CREAT|O_EXCL|O_NOFOLLOW)
/// and writes `n` lines; iolab reads it back, compares and removes it.
pub fn run(n: u64, path: &Path) -> Result<LinesResult> {
    if n == 0 || n > sys::IOLAB_SINK_KWRITE_MAX_LINES {
        return Err(Error::usage(
            "lines",
            format!(
                "the sink driver writes 1 to {} lines",
                sys::IOLAB_SINK_KWRITE_MAX_LINES
            ),
        ));
    }
    let abs = absolute(path)?;
    let shown = abs.display().to_string();
    let sink = Sink::open_default()?;
    let ru0 = Rusage::process();
    let r = sys::sink_kwrite(sink.fd(), &abs, n);
    let cpu = RusageDelta::between(&ru0, &Rusage::process());
    // A file the driver created (even one it failed to finish) is iolab's to remove.
    let created = std::fs::symlink_metadata(&abs)
        .is_ok()
        .then(|| iolab_engine::cleanup::Created::adopt(&abs, false).ok())
        .flatten();
    let kw = r.map_err(|e| match e.errno {
        libc::EEXIST => Error::usage(
            "target",
            format!("{shown} exists: the sink driver never writes over a file; choose a new path"),
        ),
        libc::EPERM => Error::Runtime(
            "the sink driver refused to write a file from the kernel (EPERM): it needs CAP_SYS_ADMIN".into(),
        ),
        _ => Error::sys_on(e, &shown),
    })?;
    let got = std::fs::read(&abs)
        .map_err(|e| Error::Runtime(format!("cannot read back {shown}: {e}")))?;
    drop(created);
    let expected = crate::lines::render(n);
    crate::lines::check(KERNEL_MODULE, &abs, &got, &expected)?;
    Ok(result(n, &abs, &kw, cpu))
}

/// The path the kernel is given: absolute (the driver refuses relative paths), its directory resolved.
fn absolute(path: &Path) -> Result<std::path::PathBuf> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| Error::usage("target", format!("{} names no file", path.display())))?;
    let dir = std::fs::canonicalize(dir).map_err(|e| {
        Error::usage(
            "target",
            format!("the directory {} cannot be resolved: {e}", dir.display()),
        )
    })?;
    Ok(dir.join(name))
}

fn result(n: u64, path: &Path, kw: &sys::SinkKwrite, cpu: RusageDelta) -> LinesResult {
    let wall_s = kw.ns as f64 * 1e-9;
    LinesResult {
        workload: "decimal-lines".into(),
        spec: LinesSpec {
            method: KERNEL_MODULE.into(),
            lines: n,
            target: path.to_path_buf(),
        },
        wall_s,
        // The driver times its writes and vfs_fsync as one span.
        write_s: None,
        fsync_s: None,
        bytes: kw.bytes,
        ns_per_line: kw.ns as f64 / n as f64,
        cpu_ns_per_line: (cpu.user_s + cpu.sys_s) * 1e9 / n.max(1) as f64,
        cpu: LinesCpu { process: cpu },
        // Its kernel_write calls are no system calls; the ioctl is the one call made.
        write_calls: None,
        method_calls: None,
        render_cpu_s: None,
        disturbance: None,
        timed: format!(
            "the sink driver's ktime_get_ns() from just before its first kernel_write until vfs_fsync returned: \
             {} kernel_write calls (one per line) from inside the kernel, then vfs_fsync",
            kw.calls
        ),
        excluded: "rendering the lines (done by the driver before its clock starts), creating and opening the file \
                   (filp_open, before), closing it (after), and reading the file back to check it; the CPU figure \
                   is the whole ioctl's"
            .into(),
        verified: true,
        host: iolab_engine::result::Host::current(),
    }
}
