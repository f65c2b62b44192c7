//! What `iolab vm` is asked to do, where it tells what it does, and what this machine cannot do at all.

use super::arch;
use iolab_engine::error::{Error, Result};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How `iolab vm`'s message starts when this machine cannot build the guest at all (not x86_64, no apt, no
/// apt lists or no network to the package registry); tests skip on it.
pub const CANNOT_BUILD: &str = "cannot build the guest here";

/// What `iolab vm` was asked to do.
#[derive(Debug, Clone)]
pub struct VmRequest {
    /// The guest's architecture (`--arch`).
    pub arch: arch::Arch,
    /// QEMU's machine (`--machine`).
    pub board: arch::Board,
    /// `--kernel RELEASE|PKG`.
    pub kernel: Option<String>,
    pub cache: PathBuf,
    pub timeout: Duration,
    /// The iolab arguments of each command, run one after the other in one boot.
    pub commands: Vec<Vec<OsString>>,
    /// The iolab binary the guest runs (this one, or `--exe`: a static binary of the guest's architecture);
    /// none in a guest that only serves ssh (`--ssh` without commands, of another architecture).
    pub exe: Option<PathBuf>,
    /// `--ssh`: the port on 127.0.0.1 forwarded to the guest's ssh server; the guest stays up after the
    /// commands until the timeout or an interrupt.
    pub ssh: Option<u16>,
    /// The host directory shared with the guest (the current directory), absolute.
    pub share: PathBuf,
    /// More qemu options (devices: the ivshmem of `--offload-partition vm`).
    pub devices: Vec<OsString>,
}

impl VmRequest {
    /// The host's directory is shared with the guest: always, but for a guest that only serves ssh (what
    /// runs there over ssh cannot reach it).
    pub fn shares(&self) -> bool {
        self.ssh.is_none() || !self.commands.is_empty()
    }
}

/// Where `iolab vm` says what it does and passes on the guest's output.
pub trait Report {
    /// A line about the machinery ("iolab vm: ..." on stderr).
    fn say(&mut self, line: &str);
    /// The guest command's stdout.
    fn out(&mut self, bytes: &[u8]) -> Result<()>;
    /// The guest command's stderr.
    fn err(&mut self, bytes: &[u8]);
}

/// `${XDG_CACHE_HOME:-$HOME/.cache}/iolab/vm`.
pub fn default_cache() -> Result<PathBuf> {
    let base = match std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        Some(x) => PathBuf::from(x),
        None => match std::env::var_os("HOME").filter(|v| !v.is_empty()) {
            Some(h) => PathBuf::from(h).join(".cache"),
            None => {
                return Err(Error::usage(
                    "--cache",
                    "neither XDG_CACHE_HOME nor HOME is set: name the cache directory",
                ))
            }
        },
    };
    Ok(base.join("iolab").join("vm"))
}

/// Why this host cannot run the guest at all (before anything is fetched), if it cannot.
pub fn unsupported() -> Option<String> {
    if !cfg!(target_arch = "x86_64") {
        return Some(format!(
            "iolab vm runs Debian's amd64 kernel under qemu-system-x86_64: this is {}",
            std::env::consts::ARCH
        ));
    }
    for tool in ["apt-get", "apt-cache", "dpkg-deb"] {
        let found = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
            .unwrap_or(false);
        if !found {
            return Some(format!(
                "{tool} is missing: iolab vm fetches Debian's kernel and qemu with apt (Debian and its \
                 derivatives)"
            ));
        }
    }
    None
}

/// Makes a folder of the guest's cache (and its parents), or says which could not be made.
pub fn mkdir(d: &Path) -> Result<()> {
    std::fs::create_dir_all(d)
        .map_err(|e| Error::Runtime(format!("cannot create {}: {e}", d.display())))
}
