//! A directory iolab makes to put results in (`./iolab-results`, `--out DIR/...`): made if missing, and
//! if nothing was put in it after all (the run failed, a full disk refused the file), removed again, so a
//! failure leaves no empty directory behind. Only what iolab itself made is removed, only while the
//! name is still that directory, and only while it is empty (rmdir: the kernel refuses a directory that
//! holds anything, so another iolab's result that landed in it meanwhile keeps it).

use crate::error::{Error, Result};
use crate::names::open_parent;
use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

/// The directories [`MadeDirs::make`] created, outermost first.
#[derive(Debug, Default)]
pub struct MadeDirs {
    made: Vec<Made>,
}

#[derive(Debug)]
struct Made {
    parent: OwnedFd,
    name: OsString,
    id: (u64, u64),
}

impl MadeDirs {
    /// Makes `dir` and the parents it lacks (as `mkdir -p`, mode 0777 less the umask).
    pub fn make(dir: &Path) -> Result<MadeDirs> {
        let mut missing: Vec<PathBuf> = Vec::new();
        let mut d = dir;
        while !d.as_os_str().is_empty() && std::fs::symlink_metadata(d).is_err() {
            missing.push(d.to_path_buf());
            d = d.parent().unwrap_or(Path::new(""));
        }
        let mut out = MadeDirs::default();
        for p in missing.iter().rev() {
            let (parent, name) = open_parent(p)?;
            match iolab_sys::mkdirat(parent.as_raw_fd(), &name, 0o777) {
                Ok(()) => {}
                // Made by someone else meanwhile: theirs, not to be removed.
                Err(e) if e.errno == libc::EEXIST => continue,
                Err(e) => {
                    return Err(Error::Runtime(format!(
                        "cannot create {}: {}",
                        p.display(),
                        iolab_sys::errno_name(e.errno)
                    )))
                }
            }
            let st = iolab_sys::fstatat_nofollow(parent.as_raw_fd(), &name)
                .map_err(|e| Error::sys_on(e, p.display().to_string()))?;
            let id = iolab_sys::identity(&st);
            out.made.push(Made { parent, name, id });
        }
        if !dir.is_dir() {
            return Err(Error::Runtime(format!(
                "cannot create {}: a file of that name is in the way",
                dir.display()
            )));
        }
        Ok(out)
    }

    /// Something was put in: the directories stay.
    pub fn keep(mut self) {
        self.made.clear();
    }
}

impl Drop for MadeDirs {
    fn drop(&mut self) {
        for m in self.made.iter().rev() {
            let dir = m.parent.as_raw_fd();
            let same = iolab_sys::fstatat_nofollow(dir, &m.name)
                .is_ok_and(|st| iolab_sys::identity(&st) == m.id);
            if same {
                // Fails (ENOTEMPTY) when anything is in it: then it is left as it is.
                let _ = iolab_sys::unlinkat(dir, &m.name, true);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_iolab_made_is_removed_unless_kept_or_in_use() {
        let d = tempfile::tempdir().unwrap();
        let deep = d.path().join("a/b/c");
        drop(MadeDirs::make(&deep).unwrap());
        assert!(!d.path().join("a").exists(), "unused: all three removed");

        let m = MadeDirs::make(&deep).unwrap();
        std::fs::write(deep.join("result.json"), b"{}").unwrap();
        drop(m);
        assert!(
            deep.join("result.json").exists(),
            "a directory holding a file stays"
        );

        std::fs::remove_file(deep.join("result.json")).unwrap();
        MadeDirs::make(&deep).unwrap().keep();
        assert!(deep.is_dir(), "kept");

        // A directory that existed before is never iolab's to remove.
        drop(MadeDirs::make(&deep).unwrap());
        assert!(deep.is_dir());
    }

    #[test]
    fn a_file_in_the_way_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("f"), b"x").unwrap();
        let e = MadeDirs::make(&d.path().join("f")).unwrap_err().to_string();
        assert!(e.contains("a file of that name is in the way"), "{e}");
        let e = MadeDirs::make(&d.path().join("f/g"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot create") || e.contains("f"), "{e}");
    }
}
