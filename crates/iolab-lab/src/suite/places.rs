//! Where a suite's files go: fresh directories iolab makes and removes, and a zram device when one can be
//! made (journaled, so that `iolab clean` removes it after a kill).

use super::file::SuiteFile;
use iolab_engine::cleanup::Created;
use iolab_engine::error::{Error, Result};
use std::path::{Path, PathBuf};

/// Where a suite's files go: fresh directories iolab makes and removes, and a zram device when one can be
/// made.
pub struct Places {
    disk: Created,
    tmpfs: Created,
    zram: std::result::Result<Zram, String>,
}

impl Places {
    /// New directories under `disk_parent` and `tmpfs_parent`; a zram device only if `want_zram`.
    pub fn make(disk_parent: &Path, tmpfs_parent: &Path, want_zram: bool) -> Result<Places> {
        // Removed at exit and on Ctrl-C, only while each is still the directory iolab made.
        let mk = |parent: &Path, flag: &str| {
            Created::temp_dir(parent, "iolab-suite-").map_err(|e| {
                Error::usage(
                    flag,
                    format!("cannot create a directory in {}: {e}", parent.display()),
                )
            })
        };
        let disk = mk(disk_parent, "--disk-dir")?;
        let tmpfs = mk(tmpfs_parent, "--tmpfs-dir")?;
        let zram = if want_zram {
            Zram::make(2 << 30)
        } else {
            Err("not needed".into())
        };
        Ok(Places { disk, tmpfs, zram })
    }

    pub fn disk(&self) -> &Path {
        self.disk.path()
    }

    pub fn tmpfs(&self) -> &Path {
        self.tmpfs.path()
    }

    /// "{disk}" and "{tmpfs}" and "{zram}" in a target, replaced.
    /// Why this suite has no zram device, when it has none.
    pub(super) fn zram_missing(&self) -> Option<&String> {
        self.zram.as_ref().err()
    }

    pub(super) fn place(&self, s: &str) -> String {
        let mut s = s
            .replace("{disk}", &self.disk.path().display().to_string())
            .replace("{tmpfs}", &self.tmpfs.path().display().to_string());
        if let Ok(z) = &self.zram {
            s = s.replace("{zram}", &z.dev.display().to_string());
        }
        s
    }

    /// One line per place with its filesystem type, so a reader knows what "disk" was.
    pub fn describe(&self) -> String {
        let fs = |p: &Path| iolab_sys::fs_type_name(p).unwrap_or("unknown filesystem");
        let mut o = format!(
            "disk dir {} ({}), tmpfs dir {} ({})",
            self.disk().display(),
            fs(self.disk()),
            self.tmpfs().display(),
            fs(self.tmpfs())
        );
        if let Ok(z) = &self.zram {
            o.push_str(&format!(", zram {}", z.dev.display()));
        }
        o
    }
}

/// A zram block device iolab made (hot_add), reset and removed (hot_remove) when dropped, on Ctrl-C
/// (`cleanup::register_zram`) and, after a kill, by `iolab clean` (journaled).
struct Zram {
    id: u32,
    dev: PathBuf,
    journal: Option<u64>,
}

impl Zram {
    fn make(size: u64) -> std::result::Result<Zram, String> {
        let ctl = Path::new("/sys/class/zram-control");
        if !ctl.is_dir() {
            return Err(
                "no zram device can be made: /sys/class/zram-control is missing (the zram module is not \
                 loaded; this kernel has it neither built in nor loaded)"
                    .into(),
            );
        }
        let id: u32 = std::fs::read_to_string(ctl.join("hot_add"))
            .map_err(|e| format!("zram hot_add: {e}"))?
            .trim()
            .parse()
            .map_err(|e| format!("zram hot_add gave no device number: {e}"))?;
        iolab_engine::cleanup::register_zram(id);
        let mut z = Zram {
            id,
            dev: PathBuf::from(format!("/dev/zram{id}")),
            journal: None,
        };
        std::fs::write(format!("/sys/block/zram{id}/disksize"), size.to_string())
            .map_err(|e| format!("zram{id} disksize: {e}"))?;
        z.journal = iolab_engine::leftovers::record_zram(id, size);
        if !z.dev.exists() {
            return Err(format!("{} did not appear", z.dev.display()));
        }
        Ok(z)
    }
}

impl Drop for Zram {
    fn drop(&mut self) {
        // Unregistered first: a signal from now on must not reset a number that hot_remove may have
        // handed to another device (the journal still covers a kill in between).
        iolab_engine::cleanup::unregister_zram();
        let reset = std::fs::write(format!("/sys/block/zram{}/reset", self.id), "1");
        let removed = reset.as_ref().map_err(|e| e.to_string()).and_then(|()| {
            std::fs::write("/sys/class/zram-control/hot_remove", self.id.to_string())
                .map_err(|e| e.to_string())
        });
        match (&reset, removed, self.journal) {
            (Ok(()), Ok(()), Some(j)) => iolab_engine::leftovers::forget(j),
            (Err(e), _, _) => eprintln!(
                "iolab: warning: {} could not be reset ({e}); `iolab clean` tries again",
                self.dev.display()
            ),
            (Ok(()), Err(e), _) => eprintln!(
                "iolab: warning: {} was reset (its memory freed) but not removed (hot_remove: {e})",
                self.dev.display()
            ),
            _ => {}
        }
    }
}

/// Whether any step needs a zram device.
pub fn wants_zram(s: &SuiteFile) -> bool {
    s.steps.iter().any(|st| st.needs.as_deref() == Some("zram"))
}
