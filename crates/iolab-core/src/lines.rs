//! The kernel-vs-user note's workload: write the numbers 0..N-1 as decimal lines ("0\n1\n...") to a fresh
//! file, timed from open to close including fsync (as the note's kernel module did), by one of several
//! ways of talking to the kernel. Each run's file is read back and compared with the expected bytes.
//!
//! - `stdio`: glibc fwrite of each line into a fully buffered FILE (4 KiB, glibc's choice for a file), as
//!   the note's user program did with fputs.
//! - `write-per-line`: one write(2) per line, as the note's module did with vfs_write.
//! - `one-write`: the lines rendered into one buffer, then written with write(2) (a loop only if the kernel
//!   takes less than all).
//! - `io_uring`: the lines rendered into one buffer, then one IORING_OP_WRITE per line at its offset, 64 in
//!   flight, 32 submitted per io_uring_enter.
//! - `mmap`: ftruncate to the final size, the lines rendered straight into a MAP_SHARED mapping, msync.
//! - `sendfile`, `copy_file_range`: kernel-side copies of the rendered lines from a source prepared before
//!   the timer starts (a memfd for sendfile; a file in the same directory for copy_file_range, which does
//!   not cross filesystems on current kernels).

use crate::error::{Error, Result};
use crate::measure::cpu::{Rusage, RusageDelta};
use crate::sys;
use serde::Serialize;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

pub const METHODS: &[&str] = &[
    "stdio",
    "write-per-line",
    "one-write",
    "io_uring",
    "mmap",
    "sendfile",
    "copy_file_range",
];

/// The result document of one run (the record's "result").
#[derive(Debug, Clone, Serialize)]
pub struct LinesResult {
    /// Always "decimal-lines": tells report and tables apart from iolab runs.
    pub workload: String,
    pub spec: LinesSpec,
    /// Open to close, including fsync, in seconds.
    pub wall_s: f64,
    pub bytes: u64,
    pub ns_per_line: f64,
    pub cpu: LinesCpu,
    pub timed: String,
    pub excluded: String,
    /// The file read back equals the expected lines.
    pub verified: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct LinesSpec {
    pub method: String,
    pub lines: u64,
    pub target: PathBuf,
}

#[derive(Debug, Clone, Serialize)]
pub struct LinesCpu {
    pub process: RusageDelta,
}

/// Appends the decimal digits of `v` and a newline.
fn push_line(out: &mut Vec<u8>, v: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut x = v;
    loop {
        i -= 1;
        digits[i] = b'0' + (x % 10) as u8;
        x /= 10;
        if x == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
    out.push(b'\n');
}

/// "0\n1\n...(n-1)\n".
pub fn render(n: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity((n as usize).saturating_mul(7));
    for v in 0..n {
        push_line(&mut out, v);
    }
    out
}

fn sys_err(e: sys::SysErr, path: &Path) -> Error {
    Error::sys_on(e, path.display().to_string())
}

/// Writes `all` with write(2), looping over partial writes.
fn write_all(fd: i32, mut all: &[u8], path: &Path) -> Result<()> {
    while !all.is_empty() {
        let n = sys::write(fd, all).map_err(|e| sys_err(e, path))?;
        if n == 0 {
            return Err(Error::Runtime(format!(
                "write to {} took 0 bytes",
                path.display()
            )));
        }
        all = &all[n..];
    }
    Ok(())
}

/// The source a kernel-side copy reads, prepared before the timer starts.
enum Source {
    None,
    Memfd(OwnedFd),
    File(OwnedFd, PathBuf),
}

impl Drop for Source {
    fn drop(&mut self) {
        if let Source::File(_, p) = self {
            let _ = std::fs::remove_file(p);
        }
    }
}

fn prepare_source(method: &str, path: &Path, expected: &[u8]) -> Result<Source> {
    match method {
        "sendfile" => {
            let fd = sys::memfd_create(c"iolab-lines").map_err(Error::from)?;
            write_all(fd.as_raw_fd(), expected, Path::new("memfd"))?;
            Ok(Source::Memfd(fd))
        }
        "copy_file_range" => {
            let src = path.with_extension("source");
            let fd = sys::open(&src, libc::O_RDWR | libc::O_CREAT | libc::O_EXCL, 0o600)
                .map_err(|e| sys_err(e, &src))?;
            let s = Source::File(fd, src.clone());
            if let Source::File(fd, _) = &s {
                write_all(fd.as_raw_fd(), expected, &src)?;
            }
            Ok(s)
        }
        _ => Ok(Source::None),
    }
}

/// One run: creates `path` (it must not exist), writes the lines by `method`, fsyncs, closes, reads the
/// file back, compares and removes it.
pub fn run(method: &str, n: u64, path: &Path) -> Result<LinesResult> {
    if !METHODS.contains(&method) {
        return Err(Error::usage(
            "method",
            format!(
                "'{method}' is not a lines method; accepted: {}",
                METHODS.join(", ")
            ),
        ));
    }
    let expected = render(n);
    let source = prepare_source(method, path, &expected)?;
    let ru0 = Rusage::process();
    let t0 = sys::monotonic_ns();
    // A writable shared mapping needs the file open for reading too.
    let access = if method == "mmap" {
        libc::O_RDWR
    } else {
        libc::O_WRONLY
    };
    let fd = sys::open(path, access | libc::O_CREAT | libc::O_EXCL, 0o644)
        .map_err(|e| sys_err(e, path))?;
    // Registered only once iolab made the file (O_EXCL), so a file that was there is never removed; this
    // costs a few microseconds inside the timed span.
    let created = crate::cleanup::Created::register(path, false);
    write_lines(method, fd, n, path, &expected, &source)?;
    let t1 = sys::monotonic_ns();
    let ru1 = Rusage::process();
    drop(source);
    let got = std::fs::read(path)
        .map_err(|e| Error::Runtime(format!("cannot read back {}: {e}", path.display())))?;
    drop(created);
    if got != expected {
        let first = got
            .iter()
            .zip(&expected)
            .position(|(a, b)| a != b)
            .unwrap_or(got.len().min(expected.len()));
        return Err(Error::Verify(format!(
            "{method}: {} holds {} bytes, expected {}; first difference at byte {first}",
            path.display(),
            got.len(),
            expected.len()
        )));
    }
    let wall_s = (t1 - t0) as f64 / 1e9;
    Ok(LinesResult {
        workload: "decimal-lines".into(),
        spec: LinesSpec {
            method: method.into(),
            lines: n,
            target: path.to_path_buf(),
        },
        wall_s,
        bytes: expected.len() as u64,
        ns_per_line: if n > 0 { (t1 - t0) as f64 / n as f64 } else { 0.0 },
        cpu: LinesCpu {
            process: RusageDelta::between(&ru0, &ru1),
        },
        timed: "CLOCK_MONOTONIC from before open(2) to after close, including rendering the lines, the \
                writes, msync (mmap) and fsync"
            .into(),
        excluded: match method {
            "sendfile" | "copy_file_range" => {
                "preparing the copy's source (the rendered lines written to it before the timer starts); \
                 reading the file back to check it"
            }
            _ => "reading the file back to check it",
        }
        .into(),
        verified: true,
    })
}

/// Writes the lines by `method` into the new file `fd` and fsyncs it; the file is closed on return.
fn write_lines(
    method: &str,
    fd: OwnedFd,
    n: u64,
    path: &Path,
    expected: &[u8],
    source: &Source,
) -> Result<()> {
    let raw = fd.as_raw_fd();
    match method {
        "stdio" => return stdio_lines(fd, n, path),
        "write-per-line" => {
            let mut line = Vec::with_capacity(24);
            for v in 0..n {
                line.clear();
                push_line(&mut line, v);
                write_all(raw, &line, path)?;
            }
        }
        "one-write" => write_all(raw, &render(n), path)?,
        "io_uring" => uring_lines(raw, &render(n), path)?,
        "mmap" => mmap_lines(raw, n, expected.len(), path)?,
        "sendfile" | "copy_file_range" => copy_lines(method, raw, source, expected.len(), path)?,
        _ => unreachable!("checked by run"),
    }
    sys::fsync(raw).map_err(|e| sys_err(e, path))?;
    drop(fd);
    Ok(())
}

/// glibc fwrite of each line into a fully buffered 4 KiB FILE, fflush, fsync; fclose in Drop.
fn stdio_lines(fd: OwnedFd, n: u64, path: &Path) -> Result<()> {
    let mut f = sys::CFile::fdopen(fd, true, 4096).map_err(|e| sys_err(e, path))?;
    let mut line = Vec::with_capacity(24);
    for v in 0..n {
        line.clear();
        push_line(&mut line, v);
        f.write_all(&line).map_err(|e| sys_err(e, path))?;
    }
    f.flush().map_err(|e| sys_err(e, path))?;
    sys::fsync(f.fd()).map_err(|e| sys_err(e, path))?;
    Ok(())
}

/// ftruncate to the final size, the lines rendered straight into a shared mapping, msync.
fn mmap_lines(raw: i32, n: u64, len: usize, path: &Path) -> Result<()> {
    sys::ftruncate(raw, len as u64).map_err(|e| sys_err(e, path))?;
    if len == 0 {
        return Ok(());
    }
    let map = sys::Mapping::shared(raw, len, 0, true).map_err(|e| sys_err(e, path))?;
    // SAFETY: the mapping is `len` writable bytes owned by `map`, alive for this block, and nothing else
    // refers to it.
    let dst = unsafe { std::slice::from_raw_parts_mut(map.as_ptr(), len) };
    let mut line = Vec::with_capacity(24);
    let mut at = 0;
    for v in 0..n {
        line.clear();
        push_line(&mut line, v);
        dst[at..at + line.len()].copy_from_slice(&line);
        at += line.len();
    }
    map.msync().map_err(|e| sys_err(e, path))
}

/// sendfile / copy_file_range of the prepared source into the file, 1 GiB at most per call.
fn copy_lines(method: &str, raw: i32, source: &Source, len: usize, path: &Path) -> Result<()> {
    let src = match source {
        Source::Memfd(f) | Source::File(f, _) => f.as_raw_fd(),
        Source::None => unreachable!("prepared by run"),
    };
    let len = len as u64;
    let mut off = 0u64;
    while off < len {
        let want = (len - off).min(1 << 30) as usize;
        let r = if method == "sendfile" {
            sys::sendfile(raw, src, off, want)
        } else {
            sys::copy_file_range(src, off, raw, off, want)
        }
        .map_err(|e| sys_err(e, path))?;
        if r == 0 {
            return Err(Error::Runtime(format!(
                "{method} to {} moved 0 bytes at offset {off}",
                path.display()
            )));
        }
        off += r as u64;
    }
    Ok(())
}

/// One IORING_OP_WRITE per line at its offset into `all`, 64 in flight, 32 per submission.
fn uring_lines(fd: i32, all: &[u8], path: &Path) -> Result<()> {
    use io_uring::{opcode, types, IoUring};
    const QD: u32 = 64;
    const BATCH: usize = 32;
    let mut ring = IoUring::new(QD).map_err(|e| {
        Error::from(sys::SysErr::new(
            "io_uring_setup",
            e.raw_os_error().unwrap_or(libc::EIO),
        ))
    })?;
    // Line boundaries: every newline ends one.
    let mut lines = Vec::new();
    let mut start = 0usize;
    for (i, b) in all.iter().enumerate() {
        if *b == b'\n' {
            lines.push((start, i + 1 - start));
            start = i + 1;
        }
    }
    let (mut next, mut inflight, mut done) = (0usize, 0u32, 0usize);
    while done < lines.len() {
        let mut queued = 0;
        {
            let mut sq = ring.submission();
            while next < lines.len() && inflight < QD && queued < BATCH {
                let (off, len) = lines[next];
                let e = opcode::Write::new(
                    types::Fd(fd),
                    // The buffer `all` outlives the ring's use of it: every request completes before
                    // this function returns.
                    all[off..].as_ptr(),
                    len as u32,
                )
                .offset(off as u64)
                .build()
                .user_data(next as u64);
                // SAFETY: the SQE points into `all`, which lives until every completion is reaped below.
                if unsafe { sq.push(&e) }.is_err() {
                    break;
                }
                next += 1;
                inflight += 1;
                queued += 1;
            }
        }
        let want = if queued == 0 || inflight == QD { 1 } else { 0 };
        ring.submit_and_wait(want).map_err(|e| {
            Error::from(sys::SysErr::new(
                "io_uring_enter",
                e.raw_os_error().unwrap_or(libc::EIO),
            ))
        })?;
        for c in ring.completion() {
            let i = c.user_data() as usize;
            let want_len = lines[i].1 as i32;
            if c.result() != want_len {
                return Err(if c.result() < 0 {
                    sys_err(sys::SysErr::new("io_uring write", -c.result()), path)
                } else {
                    Error::Runtime(format!(
                        "io_uring wrote {} of {want_len} bytes of line {i} to {}",
                        c.result(),
                        path.display()
                    ))
                });
            }
            inflight -= 1;
            done += 1;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_the_notes_lines() {
        assert_eq!(render(3), b"0\n1\n2\n");
        assert_eq!(render(0), b"");
        // 10 one-digit, 90 two-digit, 900 three-, 9000 four-, 90000 five-digit numbers plus newlines.
        assert_eq!(
            render(100_000).len(),
            10 * 2 + 90 * 3 + 900 * 4 + 9000 * 5 + 90000 * 6
        );
    }

    #[test]
    fn every_method_lands_the_lines() {
        let d = tempfile::tempdir().unwrap();
        for m in METHODS {
            let p = d.path().join(format!("{m}.txt"));
            let r = run(m, 12_345, &p).unwrap_or_else(|e| panic!("{m}: {e}"));
            assert!(r.verified);
            assert_eq!(r.bytes, render(12_345).len() as u64);
            assert!(!p.exists(), "{m}: the run's file is removed");
        }
    }

    #[test]
    fn an_existing_file_is_not_overwritten() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.txt");
        std::fs::write(&p, b"keep me").unwrap();
        let e = run("stdio", 10, &p).unwrap_err().to_string();
        assert!(e.contains("EEXIST"), "{e}");
        assert_eq!(std::fs::read(&p).unwrap(), b"keep me");
    }
}
