//! Where iolab writes its results, checked before any work is done: a new file's name must be free (a
//! dangling symbolic link is not free: iolab never writes through one), its directory must exist and be
//! one this process can create names in (not read-only, not deleted); a directory iolab makes must have a
//! writable ancestor. A failure is exit 2 naming the flag, or the current directory when that is where
//! the result would go.

use crate::error::{Error, Result};
use iolab_sys as sys;
use std::path::Path;

/// Where iolab's helper files go when the target gives no place for them (a splice source for
/// /dev/null, the offload sandbox's unrelated file): set by a command that was told (`survey --tmp-dir`),
/// else $TMPDIR, else /tmp.
static SCRATCH: std::sync::RwLock<Option<std::path::PathBuf>> = std::sync::RwLock::new(None);

pub fn scratch_dir() -> std::path::PathBuf {
    let set = SCRATCH.read().unwrap_or_else(|p| p.into_inner()).clone();
    set.unwrap_or_else(std::env::temp_dir)
}

/// Sends the helper files of the runs that follow to `dir` (see [`scratch_dir`]).
pub fn set_scratch_dir(dir: &Path) {
    *SCRATCH.write().unwrap_or_else(|p| p.into_inner()) = Some(dir.to_path_buf());
}

/// The longest path Linux takes (PATH_MAX less its NUL), and the longest name in it (NAME_MAX).
const PATH_MAX: usize = 4095;
const NAME_MAX: usize = 255;

/// A path `flag` gives is one Linux can take: at most 4,095 bytes, each name in it at most 255 (longer,
/// every system call on it fails with ENAMETOOLONG, which names no flag).
pub fn check_length(flag: &str, p: &Path) -> Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let bytes = p.as_os_str().as_bytes();
    let longest = bytes.split(|b| *b == b'/').map(<[u8]>::len).max();
    let what = match (bytes.len(), longest.unwrap_or(0)) {
        (n, _) if n > PATH_MAX => format!("the path is {n} bytes long, longer than the {PATH_MAX}"),
        (_, n) if n > NAME_MAX => {
            format!("a name in the path is {n} bytes long, longer than the {NAME_MAX}")
        }
        _ => return Ok(()),
    };
    let start: String = String::from_utf8_lossy(&bytes[..bytes.len().min(60)]).into();
    Err(Error::usage(
        flag,
        format!(
            "{what} Linux takes ({}...)",
            crate::units::show_path(Path::new(&start))
        ),
    ))
}

/// A new file `p` given by `flag` (`-`: stdout, always fine).
pub fn check_new_path(flag: &str, p: &Path) -> Result<()> {
    if p == Path::new("-") {
        return Ok(());
    }
    check_length(flag, p)?;
    match std::fs::symlink_metadata(p) {
        Ok(m) if m.file_type().is_symlink() => {
            let to = std::fs::read_link(p)
                .map(|t| t.display().to_string())
                .unwrap_or_default();
            return Err(Error::usage(
                flag,
                format!(
                    "{} is a symbolic link (to {to}); iolab never writes through one: choose a new name",
                    p.display()
                ),
            ));
        }
        Ok(_) => {
            return Err(Error::usage(
                flag,
                format!(
                    "{} exists; iolab does not replace files: choose a new name or remove it",
                    p.display()
                ),
            ))
        }
        Err(_) => {}
    }
    match p.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) => check_writable_dir(flag, d),
        None => check_writable_dir(flag, Path::new(".")),
    }
}

/// An existing directory `d` that iolab creates names in, for `flag`.
pub fn check_writable_dir(flag: &str, d: &Path) -> Result<()> {
    let here = d == Path::new(".");
    let what = if here {
        "the current directory".to_string()
    } else {
        d.display().to_string()
    };
    match std::fs::metadata(d) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(Error::usage(flag, format!("{what} is not a directory"))),
        Err(_) if here => {
            return Err(Error::usage(
                flag,
                "the current directory no longer exists (it was removed while the shell was in it): cd \
                 into an existing one, or give a path",
            ))
        }
        Err(_) => {
            return Err(Error::usage(
                flag,
                format!("the directory {what} does not exist"),
            ))
        }
    }
    if let Some(fs) = sys::fs_magic(d).ok().and_then(sys::pseudo_fs_name) {
        // Root may write there by the permission bits, but these files are the kernel's settings.
        return Err(Error::usage(
            flag,
            format!(
                "{what} is a directory of {fs}, a kernel-interface filesystem: iolab writes no results there; \
                 choose a directory on a disk filesystem or tmpfs"
            ),
        ));
    }
    sys::access_writable_dir(d).map_err(|e| {
        let why = if e.errno == libc::EROFS {
            "it is on a read-only filesystem".to_string()
        } else {
            format!(
                "this user cannot create files there ({})",
                sys::errno_name(e.errno)
            )
        };
        Error::usage(
            flag,
            format!("iolab cannot write in {what}: {why}; choose another place"),
        )
    })
}

/// A directory `dir` iolab makes if missing (`create_dir_all`) and writes new files into: `dir`, or the
/// nearest of its parents that exists, must be a directory iolab can write in.
pub fn check_dir_path(flag: &str, dir: &Path) -> Result<()> {
    check_length(flag, dir)?;
    let mut d = dir;
    loop {
        match std::fs::metadata(d) {
            Ok(m) if m.is_dir() => {
                // An existing `dir` needs names created in it; a missing one, in its nearest parent.
                return check_writable_dir(flag, d);
            }
            Ok(_) => {
                return Err(Error::usage(
                    flag,
                    format!(
                        "{} is not a directory{}: give a directory",
                        d.display(),
                        if d == dir {
                            String::new()
                        } else {
                            format!(" (a parent of {})", dir.display())
                        }
                    ),
                ))
            }
            // A symbolic link that leads nowhere (dangling, or a loop): mkdir would fail on it after the
            // work is done.
            Err(_) if std::fs::symlink_metadata(d).is_ok() => {
                let to = std::fs::read_link(d)
                    .map(|t| t.display().to_string())
                    .unwrap_or_default();
                return Err(Error::usage(
                    flag,
                    format!(
                        "{} is a symbolic link to {to}, which leads to no directory: iolab cannot make \
                         its directory there; remove the link or give another directory",
                        d.display()
                    ),
                ));
            }
            Err(_) => match d.parent() {
                Some(p) if !p.as_os_str().is_empty() => d = p,
                _ => return check_writable_dir(flag, Path::new(".")),
            },
        }
    }
}

/// The directory a path is in: "." for a bare name.
pub fn parent_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dangling_link_an_existing_file_and_a_missing_directory_are_named() {
        let d = tempfile::tempdir().unwrap();
        let link = d.path().join("out.json");
        std::os::unix::fs::symlink(d.path().join("nowhere"), &link).unwrap();
        let e = check_new_path("--json", &link).unwrap_err().to_string();
        assert!(
            e.starts_with("--json: ") && e.contains("symbolic link"),
            "{e}"
        );
        let f = d.path().join("f");
        std::fs::write(&f, b"x").unwrap();
        assert!(check_new_path("--md", &f)
            .unwrap_err()
            .to_string()
            .contains("exists"));
        let e = check_new_path("--csv", &d.path().join("no/such/file.csv")).unwrap_err();
        assert!(e.to_string().contains("does not exist"), "{e}");
        assert!(check_new_path("--csv", &d.path().join("new.csv")).is_ok());
        assert!(check_dir_path("--results-dir", &d.path().join("a/b/c")).is_ok());
        let e = check_dir_path("--svg", &f.join("x"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a directory"), "{e}");
    }
}
