//! `iolab driver build|load|unload|status`: where the built module goes, and loading and unloading it with
//! finit_module(2)/delete_module(2), each failure said with its errno and what to do.

use super::build::{build_module, MODULE_FILE};
use iolab_engine::error::{Error, Result};
use iolab_engine::sink_device::{absent_reason, Sink, MODULE};
use iolab_sys as sys;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// The headers of the running kernel: /lib/modules/$(uname -r)/build.
pub fn default_headers() -> PathBuf {
    PathBuf::from(format!("/lib/modules/{}/build", sys::kernel_release()))
}

/// The kernel release a headers directory is for (its include/generated/utsrelease.h), if it says.
pub fn headers_release(headers: &Path) -> Option<String> {
    let t = std::fs::read_to_string(headers.join("include/generated/utsrelease.h")).ok()?;
    let line = t.lines().find(|l| l.contains("UTS_RELEASE"))?;
    let (_, rest) = line.split_once('"')?;
    Some(rest.split('"').next()?.to_string())
}

/// iolab's own directory for modules it built for kernel `release`: $XDG_CACHE_HOME/iolab/driver/RELEASE
/// (~/.cache/... without XDG_CACHE_HOME).
pub fn default_out(release: &str) -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from("/tmp"));
    base.join("iolab").join("driver").join(release)
}

/// The module `iolab driver load` loads when given none: the one `build` wrote for the running kernel.
pub fn default_ko() -> PathBuf {
    default_out(&sys::kernel_release()).join(MODULE_FILE)
}

/// What `build` did.
#[derive(Debug)]
pub struct Built {
    pub ko: PathBuf,
    pub release: Option<String>,
}

/// Builds the driver against `headers` in a fresh temporary directory and puts the module in `out`
/// (default: [`default_out`] of the headers' release). A module already in a `--out` directory the user
/// named is never replaced (exit 2); iolab's own cache directory is iolab's to update.
pub fn build(headers: &Path, out: Option<&Path>) -> Result<Built> {
    if !headers.join("Makefile").is_file() {
        return Err(Error::Runtime(format!(
            "no kernel headers at {}: {}; install the running kernel's headers (Debian: linux-headers-$(uname -r)) \
             or name a kernel's headers directory (the one holding its top Makefile) with --headers",
            headers.display(),
            if headers.exists() { "it has no Makefile" } else { "no such directory" }
        )));
    }
    let release = headers_release(headers);
    let (dir, own) = match out {
        Some(d) => (d.to_path_buf(), false),
        None => (
            default_out(release.as_deref().unwrap_or("unknown-release")),
            true,
        ),
    };
    let ko = dir.join(MODULE_FILE);
    if !own && ko.exists() {
        return Err(Error::usage(
            "--out",
            format!(
                "{} exists; iolab does not replace a file it was not asked to: remove it or name another \
                 directory",
                ko.display()
            ),
        ));
    }
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::Runtime(format!("cannot create {}: {e}", dir.display())))?;
    let work = tempfile::Builder::new()
        .prefix(".iolab-driver-build-")
        .tempdir_in(&dir)
        .map_err(|e| {
            Error::Runtime(format!(
                "cannot create a build directory in {}: {e}",
                dir.display()
            ))
        })?;
    let built = build_module(headers, work.path())?;
    std::fs::rename(&built, &ko).map_err(|e| {
        Error::Runtime(format!(
            "cannot move {} to {}: {e}",
            built.display(),
            ko.display()
        ))
    })?;
    Ok(Built { ko, release })
}

/// finit_module(2) of `ko` with `params` ("name=value" words). Every failure says what to do.
pub fn load(ko: &Path, params: &[String]) -> Result<()> {
    let shown = ko.display().to_string();
    let params = params
        .iter()
        .map(|p| check_param(p))
        .collect::<Result<Vec<_>>>()?;
    // Would this kernel load a module for this user at all? finit_module of no file loads nothing: EBADF
    // means yes, anything else (ENOSYS, EPERM) is why not, said before the module is looked for.
    match sys::finit_module(-1, "") {
        Err(e) if e.errno != libc::EBADF => return Err(load_error(e, &shown)),
        _ => {}
    }
    let f = match std::fs::File::open(ko) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::Runtime(format!(
                "no module at {shown}: build it first (iolab driver build), or name the .ko to load"
            )))
        }
        Err(e) => return Err(Error::Runtime(format!("cannot open {shown}: {e}"))),
    };
    sys::finit_module(f.as_raw_fd(), &params.join(" ")).map_err(|e| load_error(e, &shown))
}

/// One `name=value` parameter of the sink driver checked against what `kmod/iolab_sink.c` declares,
/// as the kernel will be given it (a size such as `8m` in bytes): bad input names it, before any load.
fn check_param(p: &str) -> Result<String> {
    const KNOWN: &str =
        "personality=legacy|nowait, buf_size=BYTES (a page multiple, at most 1 GiB), log=0|1";
    let bad = |why: String| Error::usage("PARAM", format!("'{p}' {why}; the driver takes {KNOWN}"));
    let Some((name, value)) = p.split_once('=').filter(|(n, _)| !n.is_empty()) else {
        return Err(bad("is not a name=value module parameter".into()));
    };
    match name {
        "personality" if matches!(value, "legacy" | "nowait") => Ok(p.to_string()),
        "log" if matches!(value, "0" | "1" | "y" | "n" | "Y" | "N") => Ok(p.to_string()),
        "buf_size" => {
            let page = sys::page_size() as u64;
            match iolab_engine::units::parse_size(value) {
                Ok(b) if b >= page && b <= 1 << 30 && b % page == 0 => Ok(format!("buf_size={b}")),
                Ok(b) => Err(bad(format!(
                    "is {b} bytes; the buffer is a multiple of {page} bytes from {page} to 1 GiB"
                ))),
                Err(e) => Err(bad(format!("is refused: {e}"))),
            }
        }
        "personality" | "log" => Err(bad(format!("gives {name} a value it does not take"))),
        _ => Err(bad(format!("names no parameter of the driver ('{name}')"))),
    }
}

/// What finit_module's errno means for the user.
fn load_error(e: sys::SysErr, shown: &str) -> Error {
    let what = match e.errno {
        libc::ENOSYS => {
            "this kernel cannot load modules (built without module support, CONFIG_MODULES): load the driver in a \
             guest kernel instead (iolab vm)"
                .into()
        }
        libc::EPERM => {
            "loading modules is not permitted: it needs CAP_SYS_MODULE (root), and kernel.modules_disabled or \
             lockdown may forbid it for everyone"
                .into()
        }
        libc::EEXIST => format!("{MODULE} is already loaded: `iolab driver unload` first"),
        libc::ENOEXEC => format!(
            "{shown} is not a module this kernel accepts (built against another kernel's headers? build it \
             against /lib/modules/$(uname -r)/build)"
        ),
        libc::EINVAL => {
            "the module refused its parameters or this kernel refused the module (dmesg says why)".into()
        }
        libc::EKEYREJECTED | libc::EBADMSG => {
            "this kernel accepts only signed modules (module.sig_enforce): the sink driver is unsigned".into()
        }
        _ => format!("finit_module of {shown} failed"),
    };
    Error::Runtime(format!(
        "{what} (finit_module: {})",
        sys::errno_name(e.errno)
    ))
}

/// delete_module(2) of the sink driver, refused (never waited for) while a file of it is open.
pub fn unload() -> Result<()> {
    sys::delete_module(MODULE).map_err(|e| {
        let what = match e.errno {
            libc::ENOENT => format!("{MODULE} is not loaded"),
            libc::EWOULDBLOCK => {
                format!("{MODULE} is in use (a process has /dev/iolab_sink open or mapped)")
            }
            libc::EPERM => "unloading modules needs CAP_SYS_MODULE (root)".into(),
            libc::ENOSYS => "this kernel has no module support (CONFIG_MODULES)".into(),
            _ => format!("delete_module of {MODULE} failed"),
        };
        Error::Runtime(format!(
            "{what} (delete_module: {})",
            sys::errno_name(e.errno)
        ))
    })
}

/// `iolab driver status`: loaded or not (and why not usable), and the driver's counters.
pub fn status() -> (bool, Vec<String>) {
    if let Some(why) = absent_reason() {
        return (false, vec![why]);
    }
    let mut lines = Vec::new();
    match Sink::open_default() {
        Ok(s) => {
            lines.push(format!(
                "{MODULE} is loaded: {} (ABI {}), buffer {}, default personality {}",
                iolab_engine::sink_device::DEVICE,
                s.info.abi,
                iolab_engine::units::fmt_size(s.info.buf_size),
                s.default_personality().name()
            ));
            match s.counters() {
                Ok(c) => lines.push(format!(
                    "since it was loaded: write {} calls {} B, read {} calls {} B, uring_cmd {} calls {} B, \
                     in-kernel writes {} ({} B); {} calls with IOCB_NOWAIT, {} from io-wq workers; {} log lines; \
                     {} mmaps",
                    c.write_calls,
                    c.write_bytes,
                    c.read_calls,
                    c.read_bytes,
                    c.cmd_calls,
                    c.cmd_bytes,
                    c.kernel_writes,
                    c.kernel_bytes,
                    c.nowait_calls,
                    c.worker_calls,
                    c.log_lines,
                    c.mmaps
                )),
                Err(e) => lines.push(format!("counters unreadable: {e}")),
            }
            (true, lines)
        }
        Err(e) => (false, vec![e.to_string()]),
    }
}
