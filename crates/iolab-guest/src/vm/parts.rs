//! The guest's parts in the cache, filled once under a lock: the kernel and its modules, the headers, qemu
//! and busybox (`fetch.rs`, `kernel.rs`), and the sink driver built against the kernel's headers (kept per
//! kernel release and driver source, so it is built once too).

use super::arch::Arch;
use super::fetch::{self, Fetched, Pkg};
use super::kernel::{self, Kernel};
use super::qemu::Qemu;
use iolab_engine::error::{Error, Result};
use iolab_sys as sys;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

/// Everything the guest is made of, in the cache.
#[derive(Debug)]
pub struct Parts {
    pub arch: Arch,
    pub kernel: Kernel,
    /// The kernel's headers (the host's architecture only: the sink driver is built against them).
    pub headers: Option<PathBuf>,
    pub qemu: Qemu,
    pub busybox: PathBuf,
    /// The sink driver's module, or why it could not be built.
    pub driver: std::result::Result<PathBuf, String>,
    /// What this fill downloaded (nothing when the cache had it all).
    pub fetched: Fetched,
}

/// The cache's lock, held while it is filled: a second `iolab vm` waits for the first.
pub(crate) struct CacheLock(#[allow(dead_code)] OwnedFd);

pub(crate) fn lock(cache: &Path, say: &mut dyn FnMut(&str)) -> Result<CacheLock> {
    super::request::mkdir(cache)?;
    let p = cache.join("lock");
    let fd = sys::open(&p, libc::O_RDWR | libc::O_CREAT | libc::O_CLOEXEC, 0o644)
        .map_err(|e| Error::sys_on(e, p.display().to_string()))?;
    let mut said = false;
    loop {
        if sys::flock_exclusive_nb(fd.as_raw_fd())
            .map_err(|e| Error::sys_on(e, p.display().to_string()))?
        {
            return Ok(CacheLock(fd));
        }
        if !said {
            say(&format!(
                "waiting for another iolab vm that holds {} (it is filling the cache)",
                p.display()
            ));
            said = true;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// Why the sink driver is not built for a foreign architecture's guest.
pub const NO_FOREIGN_DRIVER: &str = "building it needs a cross compiler for the guest's architecture \
     (e.g. Debian's gcc-aarch64-linux-gnu or gcc-arm-linux-gnueabihf) and kbuild's tools built for this \
     host, which iolab vm does not set up; the command runs without /dev/iolab_sink";

/// Fills the cache where it lacks something and returns the parts of an `arch` guest. `asked`:
/// `--kernel PKG`.
pub fn prepare(
    cache: &Path,
    arch: Arch,
    asked: Option<&str>,
    say: &mut dyn FnMut(&str),
) -> Result<Parts> {
    let _lock = lock(cache, say)?;
    let key = fetch::lists_key(arch, cache, asked);
    let res = match fetch::saved_resolution(cache, arch, asked, &key) {
        Some(r) => r,
        None => {
            let r = fetch::resolve(arch, cache, asked, say).map_err(cannot_build)?;
            // Updating the lists changed them: the key of the lists as they are now.
            let key = fetch::lists_key(arch, cache, asked);
            fetch::save_resolution(cache, arch, asked, &key, &r);
            r
        }
    };
    let (image, release, pkgs) = (&res.image, &res.release, &res.pkgs);
    let roots = arch.roots();
    let mut todo = fetch::not_cached(&cache.join("done"), pkgs);
    if kernel::cached(cache, release, roots, arch.dtbs()).is_none()
        && !todo.iter().any(|p| &p.name == image)
    {
        todo.extend(pkgs.iter().filter(|p| &p.name == image).cloned());
    }
    let root = cache.join("root");
    let guest_root = arch.guest_root(cache);
    let staging = cache.join("staging");
    let fetched = if todo.is_empty() {
        Fetched::default()
    } else {
        let mb: u64 = todo.iter().map(|p| p.size).sum();
        say(&format!(
            "downloading {} packages ({:.1} MB) into {}: {}",
            todo.len(),
            mb as f64 / 1e6,
            cache.display(),
            todo.iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        ));
        let _ = std::fs::remove_dir_all(&staging);
        let into = |p: &Pkg| {
            if &p.name == image {
                staging.clone()
            } else if p.arch == arch.debian() {
                guest_root.clone()
            } else {
                root.clone()
            }
        };
        fetch::download_and_extract(cache, arch, &todo, &cache.join("done"), &into)
            .map_err(cannot_build)?
    };
    let kernel = match kernel::cached(cache, release, roots, arch.dtbs()) {
        Some(k) => k,
        None => kernel::keep_from(cache, release, &staging, roots, arch.dtbs())?,
    };
    let (headers, driver) = if arch.foreign() {
        (None, Err(NO_FOREIGN_DRIVER.to_string()))
    } else {
        let h = fetch::fix_headers(&root, release)?;
        let d = build_driver(cache, &h, release);
        (Some(h), d)
    };
    let busybox = guest_root.join("bin/busybox");
    let qemu = Qemu { root, arch };
    for (what, p) in [("qemu", qemu.binary()), ("busybox", busybox.clone())] {
        if !p.is_file() {
            return Err(Error::Runtime(format!(
                "the cache has no {what} at {} (remove {} and run again)",
                p.display(),
                cache.join("done").display()
            )));
        }
    }
    Ok(Parts {
        arch,
        kernel,
        headers,
        qemu,
        busybox,
        driver,
        fetched,
    })
}

/// A failure to get the parts from the registry (no network to it, apt's lists missing, not Debian): the
/// guest cannot be built on this machine. Tests skip on this prefix; bad input (`--kernel`) stays exit 2.
fn cannot_build(e: Error) -> Error {
    match e {
        Error::Runtime(m) => Error::Runtime(format!("{}: {m}", super::request::CANNOT_BUILD)),
        other => other,
    }
}

/// FNV-1a of the driver's embedded sources: a new source is built anew.
fn sources_digest() -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (name, text) in crate::driver::SOURCES {
        for b in name.bytes().chain([0]).chain(text.bytes()).chain([0]) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// The sink driver built against the guest kernel's headers, once per release and source.
fn build_driver(
    cache: &Path,
    headers: &Path,
    release: &str,
) -> std::result::Result<PathBuf, String> {
    let work = cache
        .join("driver")
        .join(format!("{release}-{:016x}", sources_digest()));
    let ko = work.join(crate::driver::MODULE_FILE);
    if ko.is_file() {
        return Ok(ko);
    }
    crate::driver::build_module(headers, &work).map_err(|e| e.to_string())
}

/// Bytes under `dir` (files only, symbolic links not followed): the cache's disk use.
pub fn disk_use(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0;
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        match e.metadata() {
            Ok(m) if m.is_dir() => total += disk_use(&e.path()),
            Ok(m) if m.is_file() => total += m.blocks() * 512,
            _ => {}
        }
    }
    total
}
