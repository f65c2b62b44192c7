//! What `iolab fleet` checks before Ansible or a host is given anything: the inventory (its kind and size:
//! Ansible waits for ever on a FIFO and reads /dev/zero until memory runs out), the output paths among the
//! hosts' command line (what is written outside the run's directory stays on the host) and each
//! `--binary` (an ELF executable of the architecture it is given for).

use iolab_engine::error::{Error, Result};
use iolab_engine::units::fmt_size;
use std::ffi::OsString;
use std::fs::Metadata;
use std::os::unix::fs::FileTypeExt;
use std::path::{Component, Path, PathBuf};

/// The most of one inventory file (or variables file beside it) Ansible is given: a hand-written
/// inventory of thousands of hosts is far less.
pub const INVENTORY_FILE_MAX: u64 = 1 << 20;
/// The most of all the inventory's files and the variables files beside it.
pub const INVENTORY_TOTAL_MAX: u64 = 16 << 20;
/// The most files and directories an inventory directory (and the variables directories) may hold.
pub const INVENTORY_ENTRIES_MAX: usize = 1000;
/// How deep an inventory directory may nest (a symbolic link to a directory above it nests for ever).
const INVENTORY_DEPTH_MAX: usize = 8;
/// The most of a `--binary` read for its check: a static iolab is a few MiB.
const BINARY_MAX: u64 = 512 << 20;

fn inventory_err(msg: String) -> Error {
    Error::usage("INVENTORY", msg)
}

/// What a file type is, where it is not a regular file or a directory.
fn odd_kind(m: &Metadata) -> Option<&'static str> {
    let t = m.file_type();
    Some(if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_file() || t.is_dir() {
        return None;
    } else {
        "not a regular file"
    })
}

/// The inventory and every file Ansible reads with it: for a directory, every file in it that is not
/// hidden (Ansible reads its subdirectories too), and the `group_vars/` and `host_vars/` beside it (or in
/// it). Each must be a regular file of at most [`INVENTORY_FILE_MAX`] (following symbolic links, as
/// Ansible does), not on a kernel-interface filesystem, [`INVENTORY_TOTAL_MAX`] in all. Only metadata
/// is read: nothing here can block or fill memory.
pub fn check_inventory(inv: &Path) -> Result<()> {
    let meta = match std::fs::metadata(inv) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let dangling = std::fs::symlink_metadata(inv).is_ok();
            return Err(inventory_err(format!(
                "{}: {} (an Ansible inventory, INI or YAML)",
                inv.display(),
                if dangling {
                    "a symbolic link to nothing"
                } else {
                    "no such file or directory"
                }
            )));
        }
        Err(e) => {
            return Err(inventory_err(format!(
                "cannot read {}: {}",
                inv.display(),
                io_why(&e)
            )))
        }
    };
    let mut w = Walk {
        top: inv,
        entries: 0,
        bytes: 0,
    };
    w.entry(inv, &meta, 0)?;
    // The host and group variables Ansible reads beside a file inventory (a directory's are in it).
    if !meta.is_dir() {
        let base = match inv.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        for vars in ["group_vars", "host_vars"] {
            let p = base.join(vars);
            if let Ok(m) = std::fs::metadata(&p) {
                w.entry(&p, &m, 1)?;
            }
        }
    }
    Ok(())
}

/// The inventory's files and directories seen so far.
struct Walk<'a> {
    top: &'a Path,
    entries: usize,
    bytes: u64,
}

impl Walk<'_> {
    /// `p` as the place it is in the inventory.
    fn at(&self, p: &Path) -> String {
        if p == self.top {
            p.display().to_string()
        } else {
            format!(
                "{} (read with the inventory {})",
                p.display(),
                self.top.display()
            )
        }
    }

    fn entry(&mut self, p: &Path, m: &Metadata, depth: usize) -> Result<()> {
        self.entries += 1;
        if self.entries > INVENTORY_ENTRIES_MAX {
            return Err(inventory_err(format!(
                "{}: more than {INVENTORY_ENTRIES_MAX} files and directories to read with it; iolab gives \
                 Ansible an inventory directory of at most {INVENTORY_ENTRIES_MAX} (hidden ones, such as \
                 .git, are not read)",
                self.top.display()
            )));
        }
        if let Some(kind) = odd_kind(m) {
            return Err(inventory_err(format!(
                "{} is {kind}, not an inventory: give a regular file (INI or YAML) or a directory of them",
                self.at(p)
            )));
        }
        if let Some(fs) = iolab_sys::fs_magic(p)
            .ok()
            .and_then(iolab_sys::pseudo_fs_name)
        {
            return Err(inventory_err(format!(
                "{} is on {fs}, a kernel-interface filesystem: its files are the kernel's settings, not an \
                 inventory",
                self.at(p)
            )));
        }
        if m.is_file() {
            if m.len() > INVENTORY_FILE_MAX {
                return Err(inventory_err(format!(
                    "{} is {}; iolab gives Ansible inventory and variables files of at most {} each",
                    self.at(p),
                    fmt_size(m.len()),
                    fmt_size(INVENTORY_FILE_MAX)
                )));
            }
            self.bytes += m.len();
            if self.bytes > INVENTORY_TOTAL_MAX {
                return Err(inventory_err(format!(
                    "{}: its files hold more than {}; iolab gives Ansible at most that of an inventory and \
                     the variables beside it",
                    self.top.display(),
                    fmt_size(INVENTORY_TOTAL_MAX)
                )));
            }
            return Ok(());
        }
        if depth >= INVENTORY_DEPTH_MAX {
            return Err(inventory_err(format!(
                "{}: directories nested more than {INVENTORY_DEPTH_MAX} deep (a symbolic link to a \
                 directory above it?)",
                self.at(p)
            )));
        }
        let rd = std::fs::read_dir(p)
            .map_err(|e| inventory_err(format!("cannot read {}: {}", self.at(p), io_why(&e))))?;
        // Bounded: no more names are taken than the count allows.
        let mut names: Vec<PathBuf> = Vec::new();
        for e in rd.flatten() {
            // Hidden names are not read by Ansible (nor are .git's objects counted here).
            if e.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            names.push(e.path());
            if self.entries + names.len() > INVENTORY_ENTRIES_MAX {
                break;
            }
        }
        names.sort();
        for n in names {
            let m = std::fs::metadata(&n).map_err(|e| {
                inventory_err(format!("cannot read {}: {}", self.at(&n), io_why(&e)))
            })?;
            self.entry(&n, &m, depth + 1)?;
        }
        Ok(())
    }
}

/// An I/O error in a user's words: "no space left (ENOSPC)", "permission denied (EACCES)".
pub fn io_why(e: &std::io::Error) -> String {
    iolab_lab::fleet::io_why(e)
}

/// The flags of iolab's commands that name a file or directory the command writes.
const OUTPUT_ARGS: &[&str] = &[
    "json",
    "csv",
    "md",
    "csv_intervals",
    "out",
    "svg",
    "fio_json",
    "results_dir",
    "ko",
];

/// An output path among the hosts' command line (`m`, parsed by `cmd`) that is absolute or climbs out of
/// the run's directory with `..`: what is written there is neither fetched nor removed. Refused, naming
/// the flag and the path.
pub fn check_outputs(cmd: &clap::Command, m: &clap::ArgMatches) -> Result<()> {
    for arg in cmd.get_arguments() {
        let id = arg.get_id().as_str();
        if !OUTPUT_ARGS.contains(&id) {
            continue;
        }
        let Ok(Some(values)) = m.try_get_raw(id) else {
            continue;
        };
        for v in values {
            if escapes(Path::new(v)) {
                let flag = arg
                    .get_long()
                    .map(|l| format!("--{l}"))
                    .unwrap_or_else(|| id.to_string());
                return Err(Error::usage(
                    "ARGS",
                    format!(
                        "{flag} {}: a host's files come back from its run's own directory only (what is \
                         written elsewhere stays on the host): give a path inside it, such as {}",
                        Path::new(v).display(),
                        inside(Path::new(v)).display()
                    ),
                ));
            }
        }
    }
    if let Some((name, sub)) = m.subcommand() {
        if let Some(c) = cmd.find_subcommand(name) {
            return check_outputs(c, sub);
        }
    }
    Ok(())
}

/// Absolute, or climbing above its start with `..`.
fn escapes(p: &Path) -> bool {
    let mut depth = 0i64;
    for c in p.components() {
        match c {
            Component::RootDir | Component::Prefix(_) => return true,
            Component::ParentDir => depth -= 1,
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
        }
        if depth < 0 {
            return true;
        }
    }
    false
}

/// `p`'s file name alone, as a path inside the run's directory.
fn inside(p: &Path) -> PathBuf {
    p.file_name()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(OsString::from("results")))
}

/// `--binary ARCH=PATH`: PATH is an ELF executable of ARCH, as `vm --exe` is checked (static where ARCH
/// is not this machine's), read only up to [`BINARY_MAX`]. Ansible's names of the architectures iolab
/// builds for: x86_64, aarch64, armv7l.
pub fn check_binary(arch: &str, path: &Path) -> Result<()> {
    use iolab_lab::vm::arch::Arch;
    let refuse = |msg: String| Err(Error::usage("--binary", msg));
    let Some(a) = Arch::parse(if arch == "armv7l" { "armv7" } else { arch }) else {
        return refuse(format!(
            "{arch}={}: iolab builds for x86_64, aarch64 and armv7l (the architectures as Ansible names \
             them)",
            path.display()
        ));
    };
    match std::fs::metadata(path) {
        Ok(m) if m.len() > BINARY_MAX => {
            return refuse(format!(
                "{} is {}: not an iolab (a static one is a few MiB)",
                path.display(),
                fmt_size(m.len())
            ))
        }
        _ => {}
    }
    // `vm --exe`'s check, said of a fleet's host rather than a guest.
    iolab_lab::vm::initramfs::check_exe(path, a)
        .or_else(|e| refuse(format!("{arch}: {}", e.replace("guest", "host"))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_paths_that_leave_the_run_directory_are_named() {
        for p in ["/abs/x.json", "../x.json", "a/../../x", "/"] {
            assert!(escapes(Path::new(p)), "{p}");
        }
        for p in ["x.json", "a/b/../c.json", "./r/x.csv", "{{ 6*7 }}.json"] {
            assert!(!escapes(Path::new(p)), "{p}");
        }
        assert_eq!(inside(Path::new("/abs/x.json")), PathBuf::from("x.json"));
    }
}
