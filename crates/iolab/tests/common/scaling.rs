//! What `report` and `compare` cost on record files of a given number of points, shared by the test that
//! holds the counts (`tests/faults_scaling.rs`) and the benchmark that prints the ratios of CPU time
//! (`benches/scaling.rs`): the input, made from one real record of a sweep, and what the kernel counted
//! of the child (wait4's rusage, inotify's opens). The test reads counts and bytes only; the CPU time
//! in the rusage is the benchmark's to read.

use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Stdio};

/// The sweep whose records the template is (its `--out` follows): `--resume` of a generated file runs
/// the same.
pub const TEMPLATE_SWEEP: [&str; 10] = [
    "sweep",
    "--vary",
    "bs=4,8",
    "--ops",
    "100",
    "--target",
    "/dev/null",
    "--count",
    "none",
    "--out",
];

/// One real record of a short sweep to /dev/null, the template of every generated point.
pub fn template(dir: &Path) -> Value {
    let base = dir.join("base.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(TEMPLATE_SWEEP)
        .arg(&base)
        .output()
        .expect("iolab starts");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&base).unwrap();
    serde_json::from_str(text.lines().next().unwrap()).unwrap()
}

/// A record file of `n` records (bs x qd, the point naming bs, the key the template's sweep varies:
/// a point naming a key its settings do not vary is another sweep's, which `--resume` refuses). Every
/// line is the template's size: its `settings` (which only `--resume` reads) stay the template's, so the
/// input is linear in `n` and so must be the work.
/// Written a line at a time: a child's peak resident memory counts this process's when it was forked.
pub fn records(template: &Value, n: usize, path: &Path) -> u64 {
    use std::io::Write;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut bytes = 0;
    for i in 0..n {
        let (bs, qd) = ((i / 10 + 1) * 512, i % 10 + 1);
        let mut r = template.clone();
        r["point"] = json!({ "bs": bs.to_string() });
        r["result"]["spec"]["bs"] = json!(bs);
        r["result"]["spec"]["qd"] = json!(qd);
        let line = r.to_string() + "\n";
        f.write_all(line.as_bytes()).unwrap();
        bytes += line.len() as u64;
    }
    f.flush().unwrap();
    bytes
}

/// A document of `head`, then `runs` joined by commas, then `tail`, written a run at a time (a child's
/// peak counts this process's memory at the fork): its size in bytes.
#[allow(dead_code)]
pub fn document(
    path: &Path,
    head: &str,
    runs: &mut dyn Iterator<Item = String>,
    tail: &str,
) -> u64 {
    use std::io::Write;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    write!(f, "{head}").unwrap();
    for (i, r) in runs.enumerate() {
        write!(f, "{}{r}", if i == 0 { "" } else { "," }).unwrap();
    }
    write!(f, "{tail}").unwrap();
    f.flush().unwrap();
    std::fs::metadata(path).unwrap().len()
}

/// What one run of iolab cost, by the kernel's count (the test reads the counts, the benchmark the
/// rusage: each leaves the other's fields unread).
#[derive(Clone, Copy)]
#[allow(dead_code)]
pub struct Cost {
    /// Its peak resident memory, bytes.
    pub peak_rss: u64,
    /// How many times it opened the watched file it opened most.
    pub opens: u64,
    /// The child's whole rusage, as wait4 gave it.
    pub usage: libc::rusage,
}

/// Runs `iolab ARGS`, which must succeed, and counts its cost and its opens of `watched` (the most opens
/// of any one of them).
pub fn cost(args: &[String], watched: &[&Path]) -> Cost {
    let watches: Vec<Opens> = watched.iter().map(|p| Opens::watch(p)).collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value for the kernel to fill.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 of the child this process started, with pointers to live locals.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut ru) };
    assert_eq!(pid, child.id() as i32);
    // Reaped by wait4 already (this returns ECHILD): called so that no path leaves it unwaited.
    let _ = child.wait();
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "iolab {args:?} failed"
    );
    Cost {
        peak_rss: ru.ru_maxrss as u64 * 1024,
        opens: watches.iter().map(Opens::count).max().unwrap_or(0),
        usage: ru,
    }
}

/// An inotify watch counting the opens of one file.
struct Opens(std::os::fd::OwnedFd);

impl Opens {
    fn watch(path: &Path) -> Opens {
        use std::os::fd::FromRawFd;
        use std::os::unix::ffi::OsStrExt;
        // SAFETY: inotify_init1 takes flags only.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        assert!(
            fd >= 0,
            "inotify_init1: {}",
            std::io::Error::last_os_error()
        );
        // SAFETY: fd is a new descriptor this function owns from here on.
        let owned = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
        // SAFETY: a live inotify descriptor and a NUL-terminated path.
        let wd = unsafe { libc::inotify_add_watch(fd, c.as_ptr(), libc::IN_OPEN | libc::IN_CLOSE) };
        assert!(
            wd >= 0,
            "inotify_add_watch: {}",
            std::io::Error::last_os_error()
        );
        Opens(owned)
    }

    /// The IN_OPEN events queued so far. The closes are watched too: the kernel merges an event with the
    /// one queued just before it when they are the same, and a close stands between two opens of a file
    /// read once at a time. Two opens held at once would still count as one: this counts reading the
    /// file again after reading it, the way a second pass over records would.
    fn count(&self) -> u64 {
        use std::os::fd::AsRawFd;
        let header = std::mem::size_of::<libc::inotify_event>();
        let mut buf = vec![0u8; 64 << 10];
        let mut n = 0;
        loop {
            // SAFETY: reading into a live buffer of its own length.
            let got = unsafe { libc::read(self.0.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if got < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
            {
                continue;
            }
            if got <= 0 {
                return n;
            }
            let mut at = 0;
            while at + header <= got as usize {
                // SAFETY: the kernel wrote whole events; read_unaligned copes with the byte buffer.
                let e: libc::inotify_event =
                    unsafe { std::ptr::read_unaligned(buf[at..].as_ptr().cast()) };
                n += u64::from(e.mask & libc::IN_OPEN != 0);
                at += header + e.len as usize;
            }
        }
    }
}
