//! `iolab vm --arch armv7` (issue 20): a full-system 32-bit ARM guest (Debian's armmp kernel under
//! qemu-system-arm, TCG) runs the static armv7 iolab on both machines that matter for the boards, one boot
//! each:
//! - `virt` with a Cortex-A15: the ARM generic timer, which Linux lets user space read, so iolab's clock is
//!   CNTVCT read through CP15 (a path qemu-user never allows) and per-op latency is reported;
//! - `vexpress-a9`, a Cortex-A9 (the Zynq-7000's core): no generic timer, so the clock is clock_gettime,
//!   a system call on every read: iolab says so, reads it once every 64 ops, counts those reads apart from
//!   the method's system calls and reports latency as unavailable. No PCI there: no NVMe disk, virtio over
//!   virtio-mmio.
//!
//! Each boot runs: probe (io_uring, aio and perf available), psync on /dev/null (the clock; the kernel's
//! syscalls per op), an io_uring write with --verify, and a write 5 GiB into a file with --verify (64-bit
//! offsets from a 32-bit kernel and binary; the bytes checked on the host).
//!
//! Runs only where IOLAB_ARMV7_BIN names a built armv7 binary (`scripts/build-board armv7`; `.ci/boards`
//! sets it): otherwise "SKIPPED vm_armv7: <reason>", and a failure when IOLAB_REQUIRE_BOARDS is set. Where
//! the guest cannot be built (not x86_64, no apt, no network to the package registry) it skips too.

mod common;

use common::{f64_of, skip, u64_of};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::Command;

const NULL_OPS: u64 = 20_000;
const URING_OPS: u64 = 2000;
const BIG_OPS: u64 = 256;
const BIG_OFFSET: u64 = 5 << 30;

/// The armv7 binary, or why the test cannot run (a failure under IOLAB_REQUIRE_BOARDS).
fn armv7_bin() -> Result<PathBuf, String> {
    common::board_bin("IOLAB_ARMV7_BIN", "armv7")
}

fn json(p: &Path) -> serde_json::Value {
    common::json_file(p)
}

/// One boot's outcome: its directory (the JSON files), stdout, stderr, and how long it took.
struct Boot {
    dir: tempfile::TempDir,
    stdout: String,
    stderr: String,
    secs: f64,
}

impl Boot {
    fn json(&self, name: &str) -> serde_json::Value {
        json(&self.dir.path().join(name))
    }
}

/// Boots `machine` with the script; `None` (after SKIPPED) where the guest cannot be built here.
fn boot(exe: &Path, machine: &str) -> Option<Boot> {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script");
    std::fs::write(
        &script,
        format!(
            "probe --json probe.json\n\
             run -v --method psync --target /dev/null --ops {NULL_OPS} --count full --json null.json\n\
             run --method io_uring --target /var/tmp/u.dat --ops {URING_OPS} --bs 4k --verify --json uring.json\n\
             run --method psync --target big.dat --offset {BIG_OFFSET} --ops {BIG_OPS} --bs 4k --verify --keep \
             --json big.json\n"
        ),
    )
    .unwrap();
    let t0 = std::time::Instant::now();
    let out = Command::new(common::bin())
        .args(["vm", "--arch", "armv7", "--machine", machine, "--exe"])
        .arg(exe)
        .arg("--script")
        .arg(&script)
        .current_dir(dir.path())
        .output()
        .expect("iolab starts");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    if let Some(l) = stderr
        .lines()
        .find(|l| l.contains("cannot build the guest here"))
    {
        skip("guest", &format!("vm_armv7 {machine}: {l}"));
        return None;
    }
    let all = format!("stdout:\n{stdout}\nstderr:\n{stderr}");
    assert_eq!(out.status.code(), Some(0), "{machine}: {all}");
    for want in [
        "accelerator: TCG, emulated",
        "iolab vm: the sink driver is not built for armv7 guests: ",
        "-armmp up",
    ] {
        assert!(stderr.contains(want), "{machine}: no {want:?} in {all}");
    }
    for i in 1..=4 {
        let line = format!("command {i} exited with status 0");
        assert!(stderr.contains(&line), "{machine}: {all}");
    }
    Some(Boot {
        dir,
        stdout,
        stderr,
        secs: t0.elapsed().as_secs_f64(),
    })
}

/// What both machines must show: io_uring, aio and perf in the probe, one pwrite per op on /dev/null by
/// the kernel's count, a verified io_uring write, and a verified write 5 GiB into a file whose bytes are
/// there on the host.
fn check_common(b: &Boot, machine: &str) {
    let p = b.json("probe.json");
    assert_eq!(p["host"]["emulated"], true, "{}", p["host"]);
    for name in [
        "method io_uring",
        "method aio",
        "perf counter task-clock-ns",
        "perf counter raw_syscalls:sys_enter",
    ] {
        let row = p["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("{machine}: the probe has no row {name}"));
        assert_eq!(row["available"], true, "{machine}: {name}: {row}");
    }
    let n = b.json("null.json");
    assert_eq!(u64_of(&n, &["ops"]), NULL_OPS, "{machine}");
    assert_eq!(n["host"]["accelerator"], "tcg", "{machine}");
    assert_eq!(u64_of(&n, &["syscalls", "method_count"]), NULL_OPS);
    assert_eq!(u64_of(&n, &["syscalls", "kernel_rw", "syscw"]), NULL_OPS);
    let per_op = f64_of(&n, &["derived", "syscalls_per_op"]);
    assert!((per_op - 1.0).abs() < 0.02, "{machine}: {per_op}");
    let u = b.json("uring.json");
    assert_eq!(u64_of(&u, &["verify", "blocks_checked"]), URING_OPS);
    assert_eq!(u64_of(&u, &["verify", "mismatches"]), 0, "{machine}");
    let g = b.json("big.json");
    assert_eq!(u64_of(&g, &["spec", "offset"]), BIG_OFFSET, "{machine}");
    assert_eq!(u64_of(&g, &["verify", "blocks_checked"]), BIG_OPS);
    assert_eq!(u64_of(&g, &["verify", "mismatches"]), 0, "{machine}");
    // The file came back through the share: as long as the offset and the ops, its data past 5 GiB.
    let f = std::fs::File::open(b.dir.path().join("big.dat")).unwrap();
    let len = f.metadata().unwrap().len();
    assert_eq!(len, BIG_OFFSET + BIG_OPS * 4096, "{machine}");
    let mut block = vec![0u8; 4096];
    f.read_exact_at(&mut block, BIG_OFFSET).unwrap();
    assert!(block.iter().any(|&x| x != 0), "{machine}: zeros at 5 GiB");
}

/// The boot's figures, for the log.
fn summary(b: &Boot, machine: &str) {
    let n = b.json("null.json");
    println!(
        "armv7 {machine}: {:.0} s in all | {} | psync /dev/null {:.0} ops/s, {:.3} syscalls/op, {} clock \
         reads counted apart (emulated)\n  {}",
        b.secs,
        b.stderr
            .lines()
            .filter(|l| l.contains("up (") || l.contains("guest ready") || l.contains("powered off"))
            .collect::<Vec<_>>()
            .join(" | "),
        f64_of(&n, &["iops"]),
        f64_of(&n, &["derived", "syscalls_per_op"]),
        n["syscalls"]["clock_calls"],
        b.stdout
            .lines()
            .filter(|l| l.starts_with("clock ") || l.starts_with("latency "))
            .take(2)
            .collect::<Vec<_>>()
            .join("\n  ")
    );
}

#[test]
fn virt_cortex_a15_reads_the_generic_timer_from_user_space() {
    let exe = match armv7_bin() {
        Ok(p) => p,
        Err(why) => return skip("boards", &format!("vm_armv7 virt: {why}")),
    };
    let Some(b) = boot(&exe, "virt") else { return };
    check_common(&b, "virt");
    let n = b.json("null.json");
    let c = &n["clock"];
    assert_eq!(c["kind"], "cntvct", "{c}");
    assert!(
        c["description"]
            .as_str()
            .unwrap()
            .starts_with("CNTVCT, read with mrrc p15 (ARM generic timer"),
        "{c}"
    );
    assert!(c["read_is_syscall"].is_null(), "{c}");
    assert!(n["sparse_clock"].is_null(), "{}", n["sparse_clock"]);
    assert_eq!(u64_of(&n, &["latency", "count"]), NULL_OPS);
    assert!(f64_of(&n, &["latency", "p50_ns"]) > 0.0);
    assert!(b.stderr.contains("guest ready"), "{}", b.stderr);
    summary(&b, "virt");
}

#[test]
fn vexpress_a9_falls_back_to_clock_gettime_and_counts_its_calls_apart() {
    let exe = match armv7_bin() {
        Ok(p) => p,
        Err(why) => return skip("boards", &format!("vm_armv7 vexpress-a9: {why}")),
    };
    let Some(b) = boot(&exe, "vexpress-a9") else {
        return;
    };
    check_common(&b, "vexpress-a9");
    assert!(
        b.stderr
            .contains("iolab vm: guest: no NVMe disk on this board (no PCI)"),
        "{}",
        b.stderr
    );
    let n = b.json("null.json");
    let c = &n["clock"];
    assert_eq!(c["kind"], "monotonic", "{c}");
    let d = c["description"].as_str().unwrap();
    assert!(d.contains("a system call on every read"), "{c}");
    assert!(c["read_is_syscall"].is_string(), "{c}");
    assert!(
        c["fallback_reason"].as_str().unwrap().contains("CNTVCT"),
        "{c}"
    );
    // One read every 64 ops, counted apart from the method's 20,000 pwrites.
    let s = &n["sparse_clock"];
    assert_eq!(u64_of(s, &["every"]), 64, "{s}");
    let reads = u64_of(&n, &["syscalls", "clock_calls"]);
    assert!(
        (NULL_OPS / 64..=NULL_OPS / 64 + 8).contains(&reads),
        "{reads}"
    );
    assert!(n.get("latency").is_none(), "no per-op latency: {n}");
    assert_eq!(n["latency_unavailable"], s["latency_unavailable"], "{n}");
    assert!(
        s["latency_unavailable"]
            .as_str()
            .unwrap()
            .contains("per-op latency needs a read per op"),
        "{s}"
    );
    assert!(
        b.stdout.contains("latency     unavailable: "),
        "{}",
        b.stdout
    );
    assert!(
        b.stdout
            .contains("clock reads, each a clock_gettime system call"),
        "{}",
        b.stdout
    );
    summary(&b, "vexpress-a9");
}
