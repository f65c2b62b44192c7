//! The guest's initramfs: an uncompressed cpio archive in the "newc" format (the kernel unpacks it into
//! its root tmpfs; see Documentation/driver-api/early-userspace/buffer-format.rst), written here rather than
//! by cpio(1), so nothing beyond apt and dpkg-deb is needed on the host. It holds busybox, the modules in
//! load order, the sink driver when it built, the host's own iolab binary with the shared libraries it
//! loads (at the paths its ELF interpreter looks for them, so the binary runs as itself and
//! /proc/self/exe is iolab), `/init` and the commands to run.

use iolab_engine::error::{Error, Result};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A newc archive being written.
pub struct Archive {
    out: std::io::BufWriter<std::fs::File>,
    path: PathBuf,
    ino: u32,
    dirs: BTreeSet<String>,
    /// Files, links and device nodes written (the first of a name wins: see [`Archive::tree`]).
    names: BTreeSet<String>,
}

fn pad4(n: usize) -> usize {
    (4 - n % 4) % 4
}

impl Archive {
    /// Writes into `path` (an existing, empty file of iolab's).
    pub fn create(path: &Path) -> Result<Archive> {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(path)
            .map_err(|e| Error::Runtime(format!("cannot write {}: {e}", path.display())))?;
        Ok(Archive {
            out: std::io::BufWriter::new(f),
            path: path.to_path_buf(),
            ino: 1,
            dirs: BTreeSet::new(),
            names: BTreeSet::new(),
        })
    }

    fn err(&self, e: std::io::Error) -> Error {
        Error::Runtime(format!("cannot write {}: {e}", self.path.display()))
    }

    fn header(&mut self, name: &str, mode: u32, size: usize, rdev: (u32, u32)) -> Result<()> {
        let name = name.trim_start_matches('/');
        if mode & libc::S_IFMT != libc::S_IFDIR {
            self.names.insert(name.to_string());
        }
        self.ino += 1;
        let h = format!(
            "070701{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}",
            self.ino,
            mode,
            0,
            0,
            1,
            0,
            size,
            0,
            0,
            rdev.0,
            rdev.1,
            name.len() + 1,
            0
        );
        let mut b = h.into_bytes();
        b.extend_from_slice(name.as_bytes());
        b.push(0);
        b.extend(std::iter::repeat_n(0, pad4(b.len())));
        self.out.write_all(&b).map_err(|e| self.err(e))
    }

    /// A directory, with its parents.
    pub fn dir(&mut self, path: &str) -> Result<()> {
        let path = path.trim_matches('/');
        if path.is_empty() || self.dirs.contains(path) {
            return Ok(());
        }
        if let Some((parent, _)) = path.rsplit_once('/') {
            self.dir(parent)?;
        }
        self.dirs.insert(path.to_string());
        self.header(path, libc::S_IFDIR | 0o755, 0, (0, 0))
    }

    fn parent_of(&mut self, path: &str) -> Result<()> {
        match path.trim_start_matches('/').rsplit_once('/') {
            Some((parent, _)) => self.dir(parent),
            None => Ok(()),
        }
    }

    /// A regular file holding `data`.
    pub fn file(&mut self, path: &str, mode: u32, data: &[u8]) -> Result<()> {
        self.parent_of(path)?;
        self.header(path, libc::S_IFREG | mode, data.len(), (0, 0))?;
        self.out.write_all(data).map_err(|e| self.err(e))?;
        let pad = vec![0u8; pad4(data.len())];
        self.out.write_all(&pad).map_err(|e| self.err(e))
    }

    /// A regular file with the contents of the host's `from` (symbolic links followed).
    pub fn copy(&mut self, path: &str, mode: u32, from: &Path) -> Result<()> {
        let data = std::fs::read(from)
            .map_err(|e| Error::Runtime(format!("cannot read {}: {e}", from.display())))?;
        self.file(path, mode, &data)
    }

    /// A symbolic link to `target`.
    pub fn symlink(&mut self, path: &str, target: &[u8]) -> Result<()> {
        self.parent_of(path)?;
        self.header(path, libc::S_IFLNK | 0o777, target.len(), (0, 0))?;
        self.out.write_all(target).map_err(|e| self.err(e))?;
        let pad = vec![0u8; pad4(target.len())];
        self.out.write_all(&pad).map_err(|e| self.err(e))
    }

    /// Whether a file, link or device node of this name was written.
    pub fn has(&self, path: &str) -> bool {
        self.names.contains(path.trim_start_matches('/'))
    }

    /// Everything under the host's directory `root` (packages extracted there) at the same paths from `/`:
    /// directories, regular files with their modes, symbolic links as links. A name already written is
    /// kept (what came first wins), and so are paths `skip` refuses (with what is below them).
    pub fn tree(&mut self, root: &Path, skip: &dyn Fn(&str) -> bool) -> Result<()> {
        self.tree_at(root, "", skip)
    }

    fn tree_at(&mut self, root: &Path, rel: &str, skip: &dyn Fn(&str) -> bool) -> Result<()> {
        use std::os::unix::ffi::OsStrExt;
        use std::os::unix::fs::PermissionsExt;
        let dir = root.join(rel.trim_start_matches('/'));
        let rd = std::fs::read_dir(&dir)
            .map_err(|e| Error::Runtime(format!("cannot read {}: {e}", dir.display())))?;
        let mut entries: Vec<std::fs::DirEntry> = rd.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = format!("{rel}/{}", e.file_name().to_string_lossy());
            let from = e.path();
            let meta = std::fs::symlink_metadata(&from)
                .map_err(|err| Error::Runtime(format!("cannot read {}: {err}", from.display())))?;
            if skip(&name) || self.has(&name) {
                continue;
            }
            if meta.is_dir() {
                self.dir(&name)?;
                self.tree_at(root, &name, skip)?;
            } else if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&from).map_err(|err| {
                    Error::Runtime(format!("cannot read {}: {err}", from.display()))
                })?;
                self.symlink(&name, target.as_os_str().as_bytes())?;
            } else if meta.is_file() {
                self.copy(&name, meta.permissions().mode() & 0o7777, &from)?;
            }
        }
        Ok(())
    }

    /// A character device node (the kernel makes it while unpacking; no privilege is needed here).
    pub fn char_dev(&mut self, path: &str, major: u32, minor: u32) -> Result<()> {
        self.parent_of(path)?;
        self.header(path, libc::S_IFCHR | 0o600, 0, (major, minor))
    }

    /// The trailer; flushes the file.
    pub fn finish(mut self) -> Result<()> {
        self.header("TRAILER!!!", 0, 0, (0, 0))?;
        self.out.flush().map_err(|e| self.err(e))
    }
}

/// The ELF interpreter a dynamically linked binary names (PT_INTERP), if any.
pub fn interpreter(elf: &[u8]) -> Option<String> {
    super::elf::Elf::parse(elf)?.interpreter()
}

/// Can the guest of `arch` run `exe`: an ELF binary of its machine and class, and static where the guest's
/// architecture is not the host's (its libraries are not on this host). Err: what is wrong with it.
pub fn check_exe(exe: &Path, arch: super::arch::Arch) -> std::result::Result<(), String> {
    let bytes = read_exe(exe)?;
    let machine = super::elf::Elf::parse(&bytes)
        .filter(|e| e.is_64() == arch.elf64())
        .and_then(|e| e.machine());
    let want = arch.elf_machine();
    match machine {
        None => Err(format!(
            "{} is not a {}-bit little-endian ELF binary: an {} guest runs an iolab built by \
             scripts/build-board {}",
            exe.display(),
            if arch.elf64() { 64 } else { 32 },
            arch.machine(),
            arch.machine()
        )),
        Some(m) if m != want => Err(format!(
            "{} is not an {} binary (ELF machine {m}, not {want}): give an iolab built for the guest, e.g. \
             by scripts/build-board {}",
            exe.display(),
            arch.machine(),
            arch.machine()
        )),
        Some(_) if arch.foreign() && interpreter(&bytes).is_some() => Err(format!(
            "{} is linked dynamically: an {} guest runs a static iolab (scripts/build-board {})",
            exe.display(),
            arch.machine(),
            arch.machine()
        )),
        Some(_) if !super::elf::whole(&bytes) => Err(format!(
            "{} is not a whole executable (its program headers or segments reach past its {} bytes): a \
             truncated copy? Give the iolab scripts/build-board {} makes",
            exe.display(),
            bytes.len(),
            arch.machine()
        )),
        Some(_) => Ok(()),
    }
}

/// The most of a program iolab reads to check it: a static iolab is a few MiB.
const EXE_MAX: u64 = 512 << 20;

/// The program at `exe`, read only when it is a regular file of at most [`EXE_MAX`] (a FIFO held the
/// read for ever, /dev/zero filled memory).
fn read_exe(exe: &Path) -> std::result::Result<Vec<u8>, String> {
    use std::io::Read;
    let said = |e: Error| match e {
        Error::Usage { msg, .. } => msg,
        e => e.to_string(),
    };
    let mut f =
        iolab_engine::input::open_regular(exe, "--exe", "program", EXE_MAX).map_err(said)?;
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {}: {e}", exe.display()))?;
    if bytes.len() as u64 > EXE_MAX {
        return Err(format!(
            "{} grew past {EXE_MAX} bytes while it was read",
            exe.display()
        ));
    }
    Ok(bytes)
}

/// The shared libraries `exe` loads, as its interpreter resolves them on this host (`ld.so --list`):
/// (path, interpreter first). Empty for a static binary.
pub fn libraries(exe: &Path) -> Result<Vec<PathBuf>> {
    let bytes = std::fs::read(exe)
        .map_err(|e| Error::Runtime(format!("cannot read {}: {e}", exe.display())))?;
    let Some(interp) = interpreter(&bytes) else {
        return Ok(Vec::new());
    };
    let out = std::process::Command::new(&interp)
        .arg("--list")
        .arg(exe)
        .output()
        .map_err(|e| Error::Runtime(format!("cannot run {interp} --list: {e}")))?;
    if !out.status.success() {
        return Err(Error::Runtime(format!(
            "{interp} --list {} failed: {}",
            exe.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let mut libs = vec![PathBuf::from(&interp)];
    for l in String::from_utf8_lossy(&out.stdout).lines() {
        // "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)"
        if let Some((_, rest)) = l.split_once("=> ") {
            if let Some(p) = rest.split(" (").next().filter(|p| p.starts_with('/')) {
                libs.push(PathBuf::from(p));
            }
        }
    }
    Ok(libs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newc_entries_are_aligned_and_end_with_the_trailer() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.cpio");
        std::fs::write(&p, b"").unwrap();
        let mut a = Archive::create(&p).unwrap();
        a.file("/x/y/init", 0o755, b"hello").unwrap();
        a.char_dev("/dev/console", 5, 1).unwrap();
        a.finish().unwrap();
        let b = std::fs::read(&p).unwrap();
        assert_eq!(b.len() % 4, 0);
        let text = String::from_utf8_lossy(&b);
        // Parents first: x, x/y, then the file; every header starts on a 4-byte boundary.
        let names: Vec<usize> = text.match_indices("070701").map(|(i, _)| i).collect();
        assert_eq!(
            names.len(),
            6,
            "x, x/y, init, dev, console, trailer: {text:?}"
        );
        assert!(names.iter().all(|i| i % 4 == 0));
        assert!(text.contains("x/y/init\0"));
        assert!(text.contains("hello"));
        assert!(text.contains("TRAILER!!!\0"));
    }

    #[test]
    fn a_tree_keeps_links_and_modes_and_what_came_first() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("root");
        std::fs::create_dir_all(root.join("usr/bin")).unwrap();
        std::fs::create_dir_all(root.join("usr/share/doc/x")).unwrap();
        std::fs::write(root.join("usr/bin/tool"), b"TOOL").unwrap();
        std::fs::write(root.join("usr/share/doc/x/README"), b"DOC").unwrap();
        std::fs::write(root.join("init"), b"THEIRS").unwrap();
        std::os::unix::fs::symlink("tool", root.join("usr/bin/alias")).unwrap();
        let p = d.path().join("a.cpio");
        std::fs::write(&p, b"").unwrap();
        let mut a = Archive::create(&p).unwrap();
        a.file("/init", 0o755, b"OURS").unwrap();
        a.tree(&root, &|n| n.starts_with("/usr/share/doc")).unwrap();
        assert!(a.has("/usr/bin/tool") && a.has("usr/bin/alias"));
        assert!(!a.has("/usr/share/doc/x/README"));
        a.finish().unwrap();
        let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
        assert!(
            text.contains("OURS") && !text.contains("THEIRS"),
            "{text:?}"
        );
        assert!(text.contains("TOOL") && !text.contains("DOC"));
        // The link: mode 0120777 (hex a1ff) and its target as the data.
        let at = text.find("usr/bin/alias\0").unwrap();
        let header = &text[at - 110..at];
        assert_eq!(&header[14..22], "0000a1ff", "{header}");
        assert!(
            text[at..].starts_with("usr/bin/alias\0tool"),
            "{:?}",
            &text[at..at + 24]
        );
    }

    #[test]
    fn a_binary_of_another_machine_is_refused() {
        use crate::vm::arch::Arch;
        let exe = std::env::current_exe().unwrap();
        let native = Arch::parse(std::env::consts::ARCH);
        if let Some(a) = native {
            assert_eq!(check_exe(&exe, a), Ok(()));
        }
        let other = if native == Some(Arch::Arm64) {
            Arch::Amd64
        } else {
            Arch::Arm64
        };
        // Another machine, or (a 32-bit test binary for an arm64 guest) another ELF class.
        let e = check_exe(&exe, other).unwrap_err();
        assert!(
            e.contains("is not an") || e.contains("is not a 64-bit little-endian ELF"),
            "{e}"
        );
        let d = tempfile::tempdir().unwrap();
        let text = d.path().join("t");
        std::fs::write(&text, b"#!/bin/sh\n").unwrap();
        assert!(check_exe(&text, other)
            .unwrap_err()
            .contains("not a 64-bit"));
        // What is not a regular file is refused before it is read (a FIFO held the read for ever,
        // /dev/zero filled memory), and so is a truncated copy.
        let fifo = d.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        for (p, says) in [
            (&fifo, "is a FIFO"),
            (&PathBuf::from("/dev/zero"), "is a character device"),
        ] {
            let e = check_exe(p, other).unwrap_err();
            assert!(e.contains(says), "{e}");
        }
        if let Some(a) = native {
            let cut = d.path().join("cut");
            let bytes = std::fs::read(&exe).unwrap();
            std::fs::write(&cut, &bytes[..4096]).unwrap();
            let e = check_exe(&cut, a).unwrap_err();
            assert!(e.contains("is not a whole executable"), "{e}");
        }
        if cfg!(target_pointer_width = "64") {
            // An armv7 guest runs ELF32 binaries only.
            let e = check_exe(&exe, Arch::Armhf).unwrap_err();
            assert!(e.contains("not a 32-bit little-endian ELF"), "{e}");
        }
    }

    #[test]
    fn this_test_binary_names_its_interpreter_and_libc() {
        let exe = std::env::current_exe().unwrap();
        let libs = libraries(&exe).unwrap();
        if libs.is_empty() {
            eprintln!("SKIPPED this_test_binary_names_its_interpreter_and_libc: a static binary");
            return;
        }
        assert!(libs[0].to_string_lossy().contains("ld-linux"), "{libs:?}");
        assert!(
            libs.iter().any(|l| l.to_string_lossy().contains("libc.so")),
            "{libs:?}"
        );
    }
}
