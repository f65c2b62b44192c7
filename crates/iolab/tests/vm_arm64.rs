//! `iolab vm --arch aarch64` (issue 20, item 5): a full-system arm64 guest (Debian's arm64 kernel under
//! qemu-system-aarch64, a Cortex-A72 on the `virt` machine, TCG) runs the static aarch64 iolab on what
//! qemu-user lacks: io_uring, native AIO, perf counters and tracepoints, and the offload sandbox. One boot
//! runs a script: probe (all of them available), an io_uring write with --verify, an O_DIRECT aio write
//! with --verify on the guest's ext4 disk, a psync write whose syscalls per op the kernel's tracepoints count
//! (about 1), and the offload method with its counts; the clock is the ARM generic timer (CNTVCT_EL0) and
//! every figure is labelled emulated.
//!
//! Runs only where IOLAB_AARCH64_BIN names a built aarch64 binary (`scripts/build-board aarch64`; `.ci/boards`
//! sets it): otherwise "SKIPPED vm_arm64: <reason>", and a failure when IOLAB_REQUIRE_BOARDS is set. Where
//! the guest cannot be built (not x86_64, no apt, no network to the package registry) it skips too, with
//! iolab's reason. The default cache (~/.cache/iolab/vm) is filled on the first run.

mod common;

use common::{bin, f64_of, skip, u64_of};
use std::path::{Path, PathBuf};
use std::process::Command;

const OPS: u64 = 2000;

/// The aarch64 binary, or why the test cannot run (a failure under IOLAB_REQUIRE_BOARDS).
fn arm64_bin() -> Result<PathBuf, String> {
    common::board_bin("IOLAB_AARCH64_BIN", "aarch64")
}

fn json(p: &Path) -> serde_json::Value {
    common::json_file(p)
}

/// A run's result: every op done, labelled emulated (TCG), timed by the ARM generic timer.
fn check_run(r: &serde_json::Value, what: &str) {
    assert_eq!(u64_of(r, &["ops"]), OPS, "{what}");
    assert_eq!(r["host"]["emulated"], true, "{what}: {}", r["host"]);
    assert_eq!(r["host"]["accelerator"], "tcg", "{what}");
    assert!(
        r["clock"]["description"]
            .as_str()
            .unwrap_or("")
            .contains("CNTVCT_EL0"),
        "{what}: {}",
        r["clock"]
    );
}

/// A --verify write: every block read back and equal.
fn check_verified(r: &serde_json::Value, what: &str) {
    check_run(r, what);
    assert_eq!(u64_of(r, &["verify", "blocks_checked"]), OPS, "{what}");
    assert_eq!(u64_of(r, &["verify", "mismatches"]), 0, "{what}");
    assert_eq!(u64_of(r, &["bytes"]), OPS * 4096, "{what}");
}

/// What the guest's probe said of `name`: (available, detail).
fn probe_row(p: &serde_json::Value, name: &str) -> (bool, String) {
    let row = p["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("the probe has no row {name}: {p}"));
    (
        row["available"].as_bool().unwrap(),
        row["detail"].as_str().unwrap().to_string(),
    )
}

#[test]
fn an_arm64_guest_runs_io_uring_aio_perf_and_offload() {
    let exe = match arm64_bin() {
        Ok(p) => p,
        Err(why) => return skip("boards", &why),
    };
    let d = tempfile::tempdir().unwrap();
    let script = d.path().join("script");
    let ops = OPS.to_string();
    let common = format!("--ops {ops} --bs 4k");
    std::fs::write(
        &script,
        format!(
            "probe --json probe.json\n\
             run --method io_uring --target /var/tmp/u.dat {common} --verify --count full --json uring.json\n\
             run --method aio --direct --target /var/tmp/a.dat {common} --verify --json aio.json\n\
             run --method psync --target /var/tmp/p.dat {common} --count full --json psync.json\n\
             run --method offload --offload-path kernel --target /var/tmp/o.dat {common} --batch 8 \
             --verify --json offload.json\n"
        ),
    )
    .unwrap();
    let t0 = std::time::Instant::now();
    let out = Command::new(bin())
        .args(["vm", "--arch", "aarch64", "--exe"])
        .arg(&exe)
        .arg("--script")
        .arg(&script)
        .current_dir(d.path())
        .output()
        .expect("iolab starts");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    let all = format!("stdout:\n{stdout}\nstderr:\n{stderr}");
    if let Some(l) = stderr
        .lines()
        .find(|l| l.contains("cannot build the guest here"))
    {
        return skip("guest", l);
    }
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(stderr.contains("accelerator: TCG, emulated"), "{all}");
    assert!(
        stderr.contains("iolab vm: the sink driver is not built for aarch64 guests: "),
        "{all}"
    );
    assert!(
        stderr.contains("guest kernel 6.") && stderr.contains("-arm64 up"),
        "{all}"
    );
    for i in 1..=5 {
        assert!(
            stderr.contains(&format!("command {i} exited with status 0")),
            "{all}"
        );
    }

    // What qemu-user cannot do, the guest's kernel does: io_uring, AIO, perf counters and tracepoints,
    // the offload sandbox.
    let p = json(&d.path().join("probe.json"));
    assert_eq!(p["host"]["emulated"], true, "{}", p["host"]);
    for name in [
        "method io_uring",
        "method aio",
        "method offload",
        "perf counter context-switches",
        "perf counter task-clock-ns",
        "perf counter raw_syscalls:sys_enter",
    ] {
        let (ok, detail) = probe_row(&p, name);
        assert!(ok, "{name}: {detail}");
    }

    let u = json(&d.path().join("uring.json"));
    check_verified(&u, "io_uring");
    // The guest's kernel (Debian 12's 6.1) names the submission tracepoint io_uring_submit_sqe: iolab
    // counts it by that name, one per request, and the kernel's requests per io_uring_enter follow.
    let tps = u["kernel"]["tracepoints"].as_array().unwrap();
    let submit = tps
        .iter()
        .find(|c| {
            c["name"] == "io_uring:io_uring_submit_sqe"
                || c["name"] == "io_uring:io_uring_submit_req"
        })
        .unwrap_or_else(|| panic!("no submission tracepoint counted: {tps:?}"));
    assert_eq!(submit["value"].as_u64(), Some(OPS), "{submit}");
    let per_enter = f64_of(&u, &["derived", "kernel_requests_per_enter"]);
    assert!(
        (per_enter - 1.0).abs() < 0.01,
        "requests per enter {per_enter}"
    );
    let a = json(&d.path().join("aio.json"));
    check_verified(&a, "aio");
    assert_eq!(a["spec"]["direct"], true);

    // One pwrite per op, counted by the kernel's raw_syscalls:sys_enter tracepoint over the whole workload,
    // and by the kernel's own syscw.
    let s = json(&d.path().join("psync.json"));
    check_run(&s, "psync");
    let per_op = f64_of(&s, &["derived", "syscalls_per_op"]);
    assert!(
        (per_op - 1.0).abs() < 0.02,
        "kernel's syscalls per op {per_op}"
    );
    assert_eq!(u64_of(&s, &["syscalls", "kernel_rw", "syscw"]), OPS);
    let timed = s["kernel"]["timed_pass"].as_array().unwrap();
    let task_clock = timed.iter().find(|c| c["name"] == "task-clock-ns").unwrap();
    assert!(task_clock["value"].as_u64().unwrap() > 0, "{task_clock}");

    // The offload client wrote through the sandbox: verified, and it made no system call but its
    // doorbells and its done signal.
    let o = json(&d.path().join("offload.json"));
    check_verified(&o, "offload");
    let oc = &o["offload"];
    assert_eq!(oc["path"], "kernel", "{oc}");
    assert!(
        oc["sandbox"].as_str().unwrap().contains("seccomp filter"),
        "{oc}"
    );
    assert!(
        u64_of(oc, &["client_syscalls_timed"]) <= u64_of(oc, &["doorbells"]) + 1,
        "{oc}"
    );
    // The kernel's count of the client's system calls (raw_syscalls:sys_exit on its pid) is the client's
    // own, plus the read of that counter and the prctl and seccomp calls that sandboxed it.
    assert_eq!(
        u64_of(oc, &["client_syscalls_kernel"]),
        u64_of(oc, &["client_syscalls_total"]) + 3,
        "{oc}"
    );
    assert_eq!(u64_of(oc, &["refusals"]), 0, "{oc}");
    assert_eq!(oc["canary_intact"], true, "{oc}");

    // The figures say they come from an emulated guest.
    assert!(
        stdout.contains("figures from an emulated guest (QEMU TCG): behaviour, not speed"),
        "{all}"
    );
    println!(
        "arm64 guest: {:.0} s in all | {} | psync {:.0} ops/s, io_uring {:.0} ops/s, aio {:.0} ops/s, \
         offload {:.0} ops/s (emulated)",
        t0.elapsed().as_secs_f64(),
        stderr
            .lines()
            .filter(|l| l.contains("guest ready") || l.contains("powered off"))
            .collect::<Vec<_>>()
            .join(" | "),
        f64_of(&s, &["iops"]),
        f64_of(&u, &["iops"]),
        f64_of(&a, &["iops"]),
        f64_of(&o, &["iops"]),
    );
}
