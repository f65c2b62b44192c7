//! Files and directories iolab created, removed at exit unless `--keep`, also on Ctrl-C and SIGTERM.
//!
//! Normal exits remove them through [`Created`]'s Drop. A signal runs a handler on the `ctrlc` crate's own
//! thread (not in signal context, so it may lock and allocate), which removes every registered path and
//! exits with status 130.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};

static REGISTRY: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static HANDLER: Once = Once::new();

fn remove(p: &Path) {
    if p.is_dir() {
        let _ = std::fs::remove_dir_all(p);
    } else {
        let _ = std::fs::remove_file(p);
    }
}

/// Installs the Ctrl-C/SIGTERM handler once per process.
pub fn install_signal_handler() {
    HANDLER.call_once(|| {
        let r = ctrlc::set_handler(|| {
            let paths: Vec<PathBuf> = match REGISTRY.lock() {
                Ok(mut g) => std::mem::take(&mut *g),
                Err(p) => std::mem::take(&mut *p.into_inner()),
            };
            for p in &paths {
                remove(p);
            }
            if paths.is_empty() {
                eprintln!("iolab: interrupted");
            } else {
                let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
                eprintln!("iolab: interrupted; removed what iolab created: {}", names.join(", "));
            }
            std::process::exit(130);
        });
        if let Err(e) = r {
            eprintln!("iolab: warning: cannot install the Ctrl-C handler ({e}); files iolab creates may stay behind if interrupted");
        }
    });
}

/// A path iolab created: removed when dropped, unless kept.
#[derive(Debug)]
pub struct Created {
    path: PathBuf,
    keep: bool,
}

impl Created {
    /// Registers `path` for removal at exit (and on Ctrl-C) unless `keep`.
    pub fn register(path: &Path, keep: bool) -> Created {
        if !keep {
            install_signal_handler();
            REGISTRY
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(path.to_path_buf());
        }
        Created {
            path: path.to_path_buf(),
            keep,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn kept(&self) -> bool {
        self.keep
    }
}

impl Drop for Created {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        let mut g = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
        g.retain(|p| p != &self.path);
        drop(g);
        remove(&self.path);
    }
}
