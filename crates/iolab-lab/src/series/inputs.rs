//! What a reader of several inputs has read so far (`iolab report A B DIR`, a fleet's results): each file
//! once, by its device and inode (named twice, a symbolic or hard link to one read before: the same
//! runs), and all of them within [`iolab_engine::input::RECORDS_INPUT`] bytes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct Inputs {
    seen: HashMap<(u64, u64), PathBuf>,
    left: u64,
}

/// Why an input is not read.
#[derive(Debug, PartialEq)]
pub enum Refused {
    /// It is the file read before as this path.
    Again(PathBuf),
    /// It would pass the bound on what is read in all.
    Over,
}

impl Default for Inputs {
    fn default() -> Inputs {
        Inputs {
            seen: HashMap::new(),
            left: iolab_engine::input::RECORDS_INPUT,
        }
    }
}

impl Inputs {
    /// The bytes left to read.
    pub fn left(&self) -> u64 {
        self.left
    }

    /// The file `path` (its metadata `m`) counted as read, or why it is not to be.
    pub fn charge(&mut self, path: &Path, m: &std::fs::Metadata) -> Result<(), Refused> {
        use std::os::unix::fs::MetadataExt;
        if let Some(first) = self.seen.get(&(m.dev(), m.ino())) {
            return Err(Refused::Again(first.clone()));
        }
        if m.len() > self.left {
            return Err(Refused::Over);
        }
        self.seen.insert((m.dev(), m.ino()), path.to_path_buf());
        self.left -= m.len();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_read_once_whatever_its_name() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        std::fs::write(&a, b"12345").unwrap();
        std::fs::hard_link(&a, d.path().join("b")).unwrap();
        let mut i = Inputs::default();
        let m = |p: &str| std::fs::metadata(d.path().join(p)).unwrap();
        assert_eq!(i.charge(&a, &m("a")), Ok(()));
        assert_eq!(i.left(), iolab_engine::input::RECORDS_INPUT - 5);
        assert_eq!(
            i.charge(Path::new("b"), &m("b")),
            Err(Refused::Again(a.clone()))
        );
        i.left = 4;
        std::fs::write(d.path().join("c"), b"12345").unwrap();
        assert_eq!(i.charge(Path::new("c"), &m("c")), Err(Refused::Over));
    }
}
