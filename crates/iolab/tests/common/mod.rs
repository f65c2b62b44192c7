//! Helpers for the integration tests: run the binary, parse its JSON, and an independent implementation of
//! the documented block pattern (docs/data-pattern.md), so content checks do not trust iolab's own code.
#![allow(dead_code)]

pub mod cites;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Every method of iolab's registry (`iolab probe --json`'s `methods`, in its order) that runs in this
/// process on a file or a stream: all but the driver's (uring_cmd) and the offload client's.
pub fn methods() -> Vec<&'static str> {
    probe()["methods"]
        .as_array()
        .expect("probe methods")
        .iter()
        .filter(|m| m["exec"] != "out_of_process" && (m["files"] == true || m["streams"] == true))
        .map(|m| m["name"].as_str().expect("method name"))
        .collect()
}

/// The methods that take files and devices (epoll takes streams only).
pub fn file_methods() -> Vec<&'static str> {
    probe()["methods"]
        .as_array()
        .expect("probe methods")
        .iter()
        .filter(|m| m["exec"] != "out_of_process" && m["files"] == true)
        .map(|m| m["name"].as_str().expect("method name"))
        .collect()
}

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_iolab")
}

pub struct Ran {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn iolab(args: &[&str]) -> Ran {
    // Unwrapped output (one line per item) whatever the caller's shell exports; tests of wrapping set
    // COLUMNS themselves.
    let out: Output = Command::new(bin())
        .args(args)
        .env_remove("COLUMNS")
        .output()
        .expect("iolab starts");
    Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `iolab report RECORDS -o HTML --svg SVGS`, which must succeed; the page's text.
pub fn report(records: &Path, html: &Path, svgs: &Path) -> String {
    let r = iolab(&[
        "report",
        &path_str(records),
        "-o",
        &path_str(html),
        "--svg",
        &path_str(svgs),
    ]);
    assert_eq!(r.code, 0, "report of {}: {}", records.display(), r.stderr);
    std::fs::read_to_string(html).unwrap()
}

/// Runs `iolab run ARGS --json -` and returns the parsed result (the table goes to stderr then). Adds
/// `--count none` unless ARGS choose a mode: tracepoint teardown costs up to a second per run on this VM,
/// and only the kernel tests look at tracepoints (they use `run_json_counted`).
pub fn run_json(args: &[&str]) -> serde_json::Value {
    let mut a: Vec<&str> = args.to_vec();
    if !a.contains(&"--count") {
        a.extend_from_slice(&["--count", "none"]);
    }
    run_json_counted(&a)
}

/// `iolab run ARGS --json -` with iolab's default counting (a separate tracepoint pass).
pub fn run_json_counted(args: &[&str]) -> serde_json::Value {
    let mut a = vec!["run"];
    a.extend_from_slice(args);
    a.extend_from_slice(&["--json", "-"]);
    let r = iolab(&a);
    assert_eq!(r.code, 0, "iolab {a:?} failed: {}", r.stderr);
    serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("bad JSON from {a:?}: {e}\n{}", r.stdout))
}

/// A fresh directory on tmpfs (/dev/shm), removed when dropped.
pub fn tmpfs_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("iolab-test-")
        .tempdir_in("/dev/shm")
        .expect("/dev/shm is writable")
}

/// A fresh directory on the disk filesystem (/var/tmp is not tmpfs here), removed when dropped.
pub fn disk_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("iolab-test-")
        .tempdir_in(std::env::temp_dir())
        .expect("temp dir")
}

pub fn path_str(p: &Path) -> String {
    p.display().to_string()
}

pub fn file(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    dir.path().join(name)
}

// ----- the documented pattern, written again from docs/data-pattern.md -----

fn mix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Expected bytes of block `b` of size `bs` for `seed`.
pub fn expected_block(bs: usize, seed: u64, b: u64) -> Vec<u8> {
    let mut v: Vec<u8> = (0..bs)
        .map(|i| mix64(seed.wrapping_add((i / 8) as u64)).to_le_bytes()[i % 8])
        .collect();
    let mut s = 0usize;
    while s * 512 < bs {
        let w = mix64(seed ^ ((b << 22) | s as u64)).to_le_bytes();
        let start = s * 512;
        let n = (bs - start).min(8);
        v[start..start + n].copy_from_slice(&w[..n]);
        s += 1;
    }
    v
}

/// Checks that blocks [0, nblocks) of `path` (from `offset`) hold the pattern; returns how many matched.
pub fn check_blocks(
    path: &Path,
    bs: usize,
    seed: u64,
    offset: u64,
    blocks: impl Iterator<Item = u64>,
) -> (u64, u64) {
    let data = std::fs::read(path).expect("file readable");
    let (mut ok, mut bad) = (0, 0);
    for b in blocks {
        let at = (offset + b * bs as u64) as usize;
        let got = data.get(at..at + bs);
        if got == Some(expected_block(bs, seed, b).as_slice()) {
            ok += 1;
        } else {
            bad += 1;
        }
    }
    (ok, bad)
}

pub fn f64_of(v: &serde_json::Value, path: &[&str]) -> f64 {
    let mut x = v;
    for k in path {
        x = &x[*k];
    }
    x.as_f64()
        .unwrap_or_else(|| panic!("{path:?} is not a number: {x}"))
}

pub fn u64_of(v: &serde_json::Value, path: &[&str]) -> u64 {
    let mut x = v;
    for k in path {
        x = &x[*k];
    }
    x.as_u64()
        .unwrap_or_else(|| panic!("{path:?} is not an integer: {x}"))
}

/// The rule names of a result's findings.
pub fn rules(r: &serde_json::Value) -> Vec<String> {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect()
}

/// A file in `dir` whose first `ops` 4 KiB blocks were written with O_DIRECT (so its blocks are allocated
/// and not in the page cache): O_DIRECT overwrites of it can be issued without blocking.
pub fn direct_allocated_file(dir: &tempfile::TempDir, name: &str, ops: &str) -> PathBuf {
    let f = file(dir, name);
    run_json(&[
        "--method",
        "psync",
        "--direct",
        "--target",
        f.to_str().unwrap(),
        "--ops",
        ops,
        "--keep",
    ]);
    f
}

/// Runs iolab as user nobody (uid/gid 65534), from a copy of the binary in a directory anyone may enter,
/// with that directory as the working directory. `None` (with the reason printed) when this process is not
/// root and so cannot switch users.
pub fn iolab_as_nobody(args: &[&str]) -> Option<(Output, tempfile::TempDir)> {
    // SAFETY: geteuid takes no arguments and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        skip("root", "not root, cannot run a child as another user");
        return None;
    }
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let dir = tmpfs_dir();
    let copy = dir.path().join("iolab");
    // Copied by cp(1), so that no descriptor open for writing the copy exists in this process: a child
    // forked meanwhile by another test's thread would hold it until its exec, and running the copy
    // would fail with ETXTBSY.
    assert!(Command::new("cp")
        .arg(bin())
        .arg(&copy)
        .status()
        .unwrap()
        .success());
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = Command::new(&copy)
        .args(args)
        .current_dir(dir.path())
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    Some((out, dir))
}

/// A board binary named by the environment variable `var` (`IOLAB_AARCH64_BIN`, `IOLAB_ARMV7_BIN`), or
/// why a test cannot run (a failure when IOLAB_REQUIRE_BOARDS is set, as `.ci/boards` does). `family`
/// names the `scripts/build-board` argument that builds one.
pub fn board_bin(var: &str, family: &str) -> Result<PathBuf, String> {
    let found = match std::env::var_os(var) {
        None => Err(format!(
            "{var} is not set (scripts/build-board {family} builds one)"
        )),
        Some(p) if !Path::new(&p).is_file() => {
            Err(format!("{var}={} is not a file", Path::new(&p).display()))
        }
        Some(p) => Ok(PathBuf::from(p)),
    };
    if let Err(why) = &found {
        assert!(
            std::env::var_os("IOLAB_REQUIRE_BOARDS").is_none(),
            "IOLAB_REQUIRE_BOARDS is set, but {why}"
        );
    }
    found
}

/// `iolab probe --json -` (each feature tried on this machine, and the registry's methods), run once per
/// test binary.
fn probe() -> &'static serde_json::Value {
    static PROBE: std::sync::OnceLock<serde_json::Value> = std::sync::OnceLock::new();
    PROBE.get_or_init(|| {
        let r = iolab(&["probe", "--json", "-"]);
        assert_eq!(r.code, 0, "iolab probe: {}", r.stderr);
        serde_json::from_str(&r.stdout).expect("probe JSON")
    })
}

/// The probe's rows.
fn probe_rows() -> &'static [serde_json::Value] {
    probe()["rows"].as_array().expect("probe rows")
}

/// Whether `iolab probe` found the feature of the row whose name starts with `row` available: Ok, or
/// the probe's reason why not. Panics where no row is so named (a test asking for what is not probed).
pub fn probed(row: &str) -> Result<(), String> {
    let found = probe_rows()
        .iter()
        .find(|r| r["name"].as_str().is_some_and(|n| n.starts_with(row)))
        .unwrap_or_else(|| panic!("iolab probe has no row named '{row}...'"));
    match found["available"].as_bool() {
        Some(true) => Ok(()),
        _ => Err(found["detail"]
            .as_str()
            .unwrap_or("unavailable")
            .to_string()),
    }
}

/// Whether `dir`'s filesystem reserves blocks with fallocate(2) (tried on a file of its own).
pub fn can_fallocate(dir: &Path) -> bool {
    let p = dir.join(".fallocate-probe");
    let Ok(f) = std::fs::File::create(&p) else {
        return false;
    };
    // SAFETY: fallocate on a descriptor this function owns.
    let can = unsafe { libc::fallocate(std::os::fd::AsRawFd::as_raw_fd(&f), 0, 0, 4096) } == 0;
    let _ = std::fs::remove_file(&p);
    can
}

/// Whether `dir`'s filesystem is on a block device (whose layer can be traced and counted).
pub fn on_block_device(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(dir).is_ok_and(|m| {
        let dev = m.dev();
        Path::new(&format!(
            "/sys/dev/block/{}:{}",
            libc::major(dev),
            libc::minor(dev)
        ))
        .exists()
    })
}

/// Why a survey of a target in `dir` did not trace the block layer, as a feature of [`FEATURES`]: not
/// root, no block device under `dir`, or else the tracepoints themselves.
pub fn trace_lack(dir: &Path) -> &'static str {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        "root"
    } else if !on_block_device(dir) {
        "block-device"
    } else {
        "tracepoints"
    }
}

/// What a test may lack on a machine, each the name `skip` takes and IOLAB_EXPECT lists (`.ci/run` says
/// how it finds which its machine has).
pub const FEATURES: &[(&str, &str)] = &[
    ("root", "running as root"),
    (
        "mount",
        "mounting a small filesystem (tmpfs, debugfs, tracefs)",
    ),
    ("mkfs", "mkfs.ext2 to make a filesystem"),
    (
        "loop-device",
        "attaching a loop device (root, /dev/loop-control, losetup)",
    ),
    ("unshare", "a private mount namespace (unshare, nsenter)"),
    (
        "strace",
        "strace, which injects signals at chosen system calls",
    ),
    ("setpriv", "setpriv, to run a child as another user"),
    ("fio", "fio, to run the same job"),
    (
        "fio-tools",
        "fio's own scripts (fio_jsonplus_clat2csv, fio2gnuplot)",
    ),
    ("fio-plot", "fio-plot from PyPI"),
    ("ansible", "Ansible's ansible-playbook"),
    ("guest", "a Debian guest booted under QEMU (iolab vm)"),
    (
        "boards",
        "the board binaries (scripts/build-board) and qemu-user",
    ),
    ("x86_64", "an x86_64 CPU (its RDTSC)"),
    ("two-cpus", "two CPUs or more"),
    (
        "sched-info",
        "the kernel's run delay per task (CONFIG_SCHED_INFO)",
    ),
    ("io_uring", "io_uring"),
    ("io_uring-opcode", "an io_uring opcode of a newer kernel"),
    ("min-wait", "io_uring's min-wait (6.12+)"),
    ("wait-region", "io_uring's registered wait region (6.13+)"),
    ("dontcache", "RWF_DONTCACHE (6.14+, a disk filesystem)"),
    ("memory-limit", "a memory cgroup of this process's"),
    ("memlock", "an RLIMIT_MEMLOCK low enough to go past"),
    ("memory-size", "less than 1 TiB of memory"),
    ("software-counters", "perf's software counters"),
    ("sampling", "perf sampling that takes samples"),
    ("tracepoints", "tracepoints counted through tracefs"),
    (
        "block-device",
        "a block device under the test directory's filesystem",
    ),
    (
        "root-device",
        "the root filesystem on a /dev block device node",
    ),
    ("ext4", "the test directory on ext4"),
    (
        "xattr",
        "user.* attributes on the test directory's filesystem",
    ),
    (
        "chattr",
        "chattr's immutable flag on the test directory's filesystem",
    ),
    (
        "fallocate",
        "fallocate(2) on the test directory's filesystem",
    ),
    ("sparse", "sparse files on the test directory's filesystem"),
    (
        "pseudo-fs",
        "sysfs, cgroupfs or tracefs files at their usual places",
    ),
    ("zram", "zram devices (root, zram-control)"),
    ("kernel-headers", "the running kernel's headers"),
    ("no-sink-driver", "the sink driver not loaded"),
    (
        "timing",
        "a race the test could not win this time (what it waits for came too early or late)",
    ),
    ("record-files", "record files named by IOLAB_CHECK_RECORDS"),
];

/// A test (or its part) that cannot run here, for lack of `feature` (one of [`FEATURES`]): says so, with
/// `why` and the test's name, and adds a line to the file IOLAB_SKIP_LOG names (`.ci/run` lists them
/// after the tests). Where IOLAB_EXPECT (a comma list, which `.ci/run` sets to what its machine has)
/// names `feature`, that is a failure instead: a regression that makes the feature look missing must
/// not pass as a skip.
pub fn skip(feature: &str, why: &str) {
    assert!(
        FEATURES.iter().any(|f| f.0 == feature),
        "skip({feature:?}): not one of tests/common's FEATURES"
    );
    let expected = std::env::var("IOLAB_EXPECT").unwrap_or_default();
    assert!(
        !expected.split(',').any(|f| f.trim() == feature),
        "IOLAB_EXPECT names {feature}, but it cannot run: {why}"
    );
    let test = std::thread::current().name().unwrap_or("main").to_string();
    println!("SKIPPED {feature} ({test}): {why}");
    if let Some(log) = std::env::var_os("IOLAB_SKIP_LOG") {
        use std::io::Write;
        let line = format!("{feature}\t{test}\t{}\n", why.replace(['\n', '\t'], " "));
        let f = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&log);
        // One write of one line, appended: the test binaries running at once do not mix their lines.
        f.and_then(|mut f| f.write_all(line.as_bytes()))
            .unwrap_or_else(|e| panic!("IOLAB_SKIP_LOG={}: {e}", Path::new(&log).display()));
    }
}

/// A JSON file, parsed (panics naming the file).
pub fn json_file(p: &Path) -> serde_json::Value {
    serde_json::from_str(
        &std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
    )
    .unwrap()
}

/// The runs of a survey document `v` that ran (those with a result).
pub fn ran_runs(v: &serde_json::Value) -> Vec<&serde_json::Value> {
    v["runs"]
        .as_array()
        .expect("the survey's runs")
        .iter()
        .filter(|r| !r["result"].is_null())
        .collect()
}

/// The JSON file a command wrote into `dir`, the only file there (panics naming the directory).
pub fn only_json_in(dir: &Path) -> serde_json::Value {
    let files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .collect();
    assert_eq!(files.len(), 1, "one file in {}", dir.display());
    json_file(&files[0].path())
}

/// `iolab BASE ARGS` is a usage error: exit 2, naming `flag`, with `word` in its reason.
pub fn refused_by(base: &[&str], args: &[&str], flag: &str, word: &str) {
    let mut a = base.to_vec();
    a.extend_from_slice(args);
    let r = iolab(&a);
    assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
    assert!(
        r.stderr.contains(flag) && r.stderr.contains(word),
        "{args:?}: {}",
        r.stderr
    );
}

/// "12345.6" as "12,345.6" (a number as iolab prints it with thousands separators).
pub fn thousands_str(plain: &str) -> String {
    let (sign, rest) = plain.strip_prefix('-').map_or(("", plain), |r| ("-", r));
    let (int, frac) = rest
        .split_once('.')
        .map_or((rest, None), |(i, f)| (i, Some(f)));
    let mut out = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    match frac {
        Some(f) => format!("{sign}{out}.{f}"),
        None => format!("{sign}{out}"),
    }
}
