//! The kernel-vs-user note's workload: write the numbers 0..N-1 as decimal lines ("0\n1\n...") to a fresh
//! file and fsync it, by one of several ways of talking to the kernel. Each way is a method of the
//! registry (`registry::METHODS`) and a way of cutting the text into ops; the runner writes the text through
//! that method's own code and times it with its clock (`runner::write_content`). Each run's file is read
//! back and compared with the expected bytes.
//!
//! - `stdio`: glibc fwrite of each line into a fully buffered FILE (4 KiB, glibc's choice for a file), as
//!   the note's user program did with fputs.
//! - `stdio-as-published`: the same writes as the note's user program ran them: no fsync, so the timed
//!   span ends when the final fflush returned; the figure to set beside the note's is the CPU time
//!   (user + sys), what its clock() counted.
//! - `write-per-line`: one write(2) per line, as the note's module did with vfs_write.
//! - `one-write`: the whole text in one write(2) (more only if the kernel takes less; the runner goes on
//!   from where it stopped).
//! - `io_uring`: one IORING_OP_WRITE per line at its offset, 64 in flight, 32 submitted per io_uring_enter.
//! - `mmap`: each line copied into a MAP_SHARED mapping of the file, sized first, then msync.
//! - `sendfile`, `copy_file_range`: kernel-side copies of the whole text from a source file beside the
//!   target, prepared before the timer starts.
//!
//! The lines are rendered before the timer starts (the CPU time that takes is recorded beside the run:
//! the note's user program rendered each line with sprintf inside its clock()), and the file is created
//! (and, but for mmap, left empty) before it too: the timed span is the method's writes, msync and fsync,
//! the writes and the flush timed apart; close comes after. The kernel's count of write-family calls over
//! the span (/proc/self/io syscw) is recorded with each run.

use iolab_engine::error::{Error, Result};
use iolab_engine::measure::clock::ClockInfo;
use iolab_engine::measure::cpu::RusageDelta;
use iolab_engine::method::{io_uring, kcopy, mmap, stdio, sync, MethodInfo, MethodKind};
use iolab_engine::registry::Run;
use iolab_engine::runner::{Content, ContentTiming};
use iolab_engine::spec::RawSpec;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// One way of writing the lines: a method of the registry and how the text is cut into ops.
struct Way {
    name: &'static str,
    /// The `--method` word of the method that writes it (the registry's name).
    by: &'static MethodInfo,
    /// The whole text as one op (else one op per line).
    whole: bool,
}

impl Way {
    /// The method that writes it, from the registry.
    fn method(&self) -> MethodKind {
        self.by.kind
    }
}

const WAYS: &[Way] = &[
    Way {
        name: stdio::INFO.name,
        by: &stdio::INFO,
        whole: false,
    },
    Way {
        name: AS_PUBLISHED,
        by: &stdio::INFO,
        whole: false,
    },
    Way {
        name: "write-per-line",
        by: &sync::INFO,
        whole: false,
    },
    Way {
        name: "one-write",
        by: &sync::INFO,
        whole: true,
    },
    Way {
        name: io_uring::INFO.name,
        by: &io_uring::INFO,
        whole: false,
    },
    Way {
        name: mmap::INFO.name,
        by: &mmap::INFO,
        whole: false,
    },
    Way {
        name: kcopy::SENDFILE_INFO.name,
        by: &kcopy::SENDFILE_INFO,
        whole: true,
    },
    Way {
        name: kcopy::COPY_FILE_RANGE_INFO.name,
        by: &kcopy::COPY_FILE_RANGE_INFO,
        whole: true,
    },
];

/// The note's user program as published: stdio, no fsync, its CPU time the figure.
pub const AS_PUBLISHED: &str = "stdio-as-published";

/// Whether a way flushes to the device inside its timed span (all but the note's user program).
fn fsyncs(way: &str) -> bool {
    way != AS_PUBLISHED
}

/// The ways' names, for messages and suites.
pub const METHODS: &[&str] = &[
    stdio::INFO.name,
    AS_PUBLISHED,
    "write-per-line",
    "one-write",
    io_uring::INFO.name,
    mmap::INFO.name,
    kcopy::SENDFILE_INFO.name,
    kcopy::COPY_FILE_RANGE_INFO.name,
];

/// The result document of one run (the record's "result").
#[derive(Debug, Clone, Serialize)]
pub struct LinesResult {
    /// Always "decimal-lines": tells report and tables apart from iolab runs.
    pub workload: String,
    pub spec: LinesSpec,
    /// The timed span, in seconds: from just before the first write until fsync returned (until the last
    /// write and stdio's fflush returned for a way without fsync).
    pub wall_s: f64,
    /// From just before the first write until the last write (and stdio's fflush) returned; `None` where
    /// the writes and the flush were timed as one span (the sink driver's in-kernel writer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_s: Option<f64>,
    /// msync and fsync; `None` for a way that does not flush (`stdio-as-published`).
    pub fsync_s: Option<f64>,
    pub bytes: u64,
    pub ns_per_line: f64,
    /// The process's CPU (user + system) per line, ns.
    pub cpu_ns_per_line: f64,
    pub cpu: LinesCpu,
    /// Write-family system calls the kernel counted over the span (/proc/self/io syscw: write, pwrite,
    /// sendfile ...; io_uring's requests and mmap's stores are none).
    pub write_calls: Option<u64>,
    /// The calls the method counted itself (io_uring: io_uring_enter; None where it cannot know: stdio).
    pub method_calls: Option<u64>,
    /// CPU seconds (user + sys) rendering the lines, before the timer started (the note's program
    /// rendered each line with sprintf inside its clock()); `None` where it is not apart (the sink
    /// driver renders inside its ioctl, whose CPU figure includes it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub render_cpu_s: Option<f64>,
    /// What the machine did to the span (other work's CPU, waits for a CPU, steal), taken just around it;
    /// absent in older records and for the sink driver's in-kernel writer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disturbance: Option<iolab_engine::disturbance::Disturbance>,
    pub timed: String,
    pub excluded: String,
    /// The file read back equals the expected lines.
    pub verified: bool,
    /// The machine that ran it (and whether its CPU was emulated: answers read that).
    pub host: iolab_engine::result::Host,
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

/// (offset, length) of every line of `text`, or of the whole text.
fn cut(text: &[u8], whole: bool) -> Vec<(u64, u32)> {
    if whole {
        return vec![(0, text.len() as u32)];
    }
    let mut ops = Vec::new();
    let mut start = 0usize;
    for (i, b) in text.iter().enumerate() {
        if *b == b'\n' {
            ops.push((start as u64, (i + 1 - start) as u32));
            start = i + 1;
        }
    }
    ops
}

/// The spec the runner writes the lines with: one thread, the file sized to the text.
fn spec_for(way: &Way, path: &Path, len: usize, ops: usize) -> Result<iolab_engine::spec::Spec> {
    let mut raw = RawSpec::new()
        .with("target", path.display().to_string())
        .with("method", way.method().name())
        .with("bs", 1u64)
        .with("file-size", len as u64)
        .with("ops", ops as u64)
        .with("count", "none");
    if way.method().info().exec == iolab_engine::method::Exec::Queued {
        raw = raw.with("qd", 64u64).with("batch", 32u64);
    }
    raw.resolve()
}

/// One run: creates `path` (it must not exist), writes the lines by `method` through the runner, reads
/// the file back, compares and removes it.
pub fn run(method: &str, n: u64, path: &Path, clock: &ClockInfo) -> Result<LinesResult> {
    let way = WAYS.iter().find(|w| w.name == method).ok_or_else(|| {
        Error::usage(
            "method",
            format!(
                "'{method}' is not a lines method; accepted: {}",
                METHODS.join(", ")
            ),
        )
    })?;
    if n == 0 {
        return Err(Error::usage("lines", "expected 1 or more lines"));
    }
    let ru0 = iolab_engine::measure::cpu::Rusage::process();
    let expected = render(n);
    let rendered = RusageDelta::between(&ru0, &iolab_engine::measure::cpu::Rusage::process());
    let ops = cut(&expected, way.whole);
    let spec = spec_for(way, path, expected.len(), ops.len())?;
    let target = iolab_engine::target::setup(&spec)?;
    if !way.method().info().maps {
        // A fresh, empty file, as the note's programs wrote (a mapping needs the final size); emptied
        // through the file iolab made, never through whatever has its name now.
        std::fs::File::from(target.reopen(libc::O_WRONLY)?)
            .set_len(0)
            .map_err(|e| Error::Runtime(format!("cannot empty {}: {e}", path.display())))?;
    }
    let Run::Threads { content, .. } = way.method().run() else {
        return Err(Error::Runtime(format!(
            "{} cannot write given bytes",
            way.name
        )));
    };
    let before = iolab_engine::disturbance::Snapshot::take();
    let timing = content(
        &spec,
        &target,
        clock,
        &Content {
            bytes: &expected,
            ops: &ops,
            fsync: fsyncs(way.name),
        },
    )?;
    let disturbance = before.until(&iolab_engine::disturbance::Snapshot::take(), timing.wall_s);
    let got = read_back(&target, path, expected.len())?;
    drop(target);
    check(method, path, &got, &expected)?;
    let mut r = result(way, n, path, expected.len() as u64, &timing);
    r.render_cpu_s = Some(rendered.user_s + rendered.sys_s);
    r.disturbance = Some(disturbance);
    Ok(r)
}

/// What the file iolab made holds, read through it (never through a name put in its place), at most one
/// byte more than `expected` (enough to tell it is longer).
fn read_back(
    target: &iolab_engine::target::PreparedTarget,
    path: &Path,
    expected: usize,
) -> Result<Vec<u8>> {
    use std::io::Read;
    let f = std::fs::File::from(target.reopen(libc::O_RDONLY)?);
    let mut got = Vec::with_capacity(expected + 1);
    f.take(expected as u64 + 1)
        .read_to_end(&mut got)
        .map_err(|e| Error::Runtime(format!("cannot read back {}: {e}", path.display())))?;
    Ok(got)
}

/// The file read back must hold exactly the lines.
pub(crate) fn check(method: &str, path: &Path, got: &[u8], expected: &[u8]) -> Result<()> {
    if got == expected {
        return Ok(());
    }
    let first = got
        .iter()
        .zip(expected)
        .position(|(a, b)| a != b)
        .unwrap_or(got.len().min(expected.len()));
    Err(Error::Verify(format!(
        "{method}: {} holds {} bytes, expected {}; first difference at byte {first}",
        path.display(),
        got.len(),
        expected.len()
    )))
}

fn result(way: &Way, n: u64, path: &Path, bytes: u64, t: &ContentTiming) -> LinesResult {
    LinesResult {
        workload: "decimal-lines".into(),
        spec: LinesSpec {
            method: way.name.into(),
            lines: n,
            target: path.to_path_buf(),
        },
        wall_s: t.wall_s,
        write_s: Some(t.write_s),
        fsync_s: t.fsync_s,
        bytes,
        ns_per_line: t.wall_s * 1e9 / n as f64,
        cpu_ns_per_line: (t.cpu.user_s + t.cpu.sys_s) * 1e9 / n.max(1) as f64,
        cpu: LinesCpu { process: t.cpu },
        write_calls: t.write_calls,
        method_calls: t.syscalls,
        render_cpu_s: None,
        disturbance: None,
        timed: if fsyncs(way.name) {
            format!(
                "the runner's clock from just before the first write until fsync returned: --method {}'s \
                 writes ({}), {}fsync (the writes and the flush also timed apart)",
                way.method().name(),
                if way.whole { "the whole text in one op" } else { "one op per line" },
                if way.method().info().maps { "msync, " } else { "" }
            )
        } else {
            "the runner's clock from just before the first write until the final fflush returned, no fsync, as \
             the note's user program ran: --method stdio's writes (one op per line); its figure is the CPU time \
             over the span (user + sys), what the note's clock() counted"
                .into()
        },
        excluded: "rendering the lines, creating the file, setting the method up (open, mapping, ring, a kernel \
                   copy's source), tearing it down (close, munmap, removing the source) and reading the file \
                   back to check it"
            .into(),
        verified: true,
        host: iolab_engine::result::Host::current(),
    }
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
        // A real clock: the mock one drives only the engine's own unit tests.
        let clock = iolab_engine::measure::clock::calibrate(5);
        for m in METHODS {
            let p = d.path().join(format!("{m}.txt"));
            let r = run(m, 12_345, &p, &clock).unwrap_or_else(|e| panic!("{m}: {e}"));
            assert!(r.verified);
            assert_eq!(r.bytes, render(12_345).len() as u64);
            assert!(!p.exists(), "{m}: the run's file is removed");
            // The record says which machine ran it, and whether emulated: an answer over records from a
            // TCG guest is indicative only if it can tell.
            let v = serde_json::to_value(&r).unwrap();
            assert!(
                v["host"]["kernel_release"].is_string(),
                "{m}: {}",
                v["host"]
            );
            assert!(v["host"].get("accelerator").is_some(), "{m}: {}", v["host"]);
        }
    }

    #[test]
    fn an_existing_file_is_not_overwritten() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.txt");
        std::fs::write(&p, b"keep me").unwrap();
        let e = run("stdio", 10, &p, &ClockInfo::mock())
            .unwrap_err()
            .to_string();
        assert!(e.contains("exists and was not made by this run"), "{e}");
        assert_eq!(std::fs::read(&p).unwrap(), b"keep me");
    }
}
