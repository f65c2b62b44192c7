//! The clock: `--clock-every N` (one clock read every N ops: throughput from the span, no per-op latency,
//! the method's syscall count untouched), its bad values, and the ARM clocks of the board binaries under
//! qemu-user when they have been built.

mod common;
use common::*;
use std::path::PathBuf;
use std::process::Command;

#[test]
fn clock_every_gives_throughput_but_no_per_op_latency() {
    let args = [
        "run",
        "--method",
        "psync",
        "--target",
        "/dev/null",
        "--ops",
        "100k",
        "--clock-every",
        "64",
        "--count",
        "none",
    ];
    let text = iolab(&args);
    assert_eq!(text.code, 0, "{}", text.stderr);
    let latency = text
        .stdout
        .lines()
        .find(|l| l.starts_with("latency "))
        .unwrap_or_else(|| panic!("no latency line:\n{}", text.stdout));
    assert!(
        latency.contains("unavailable: one clock read every 64 ops (--clock-every 64)")
            && latency.contains("per-op latency needs a read per op"),
        "{latency}"
    );
    assert!(
        !text.stdout.lines().any(|l| l.starts_with("gap ")),
        "no gap line without per-op reads:\n{}",
        text.stdout
    );
    let throughput = text
        .stdout
        .lines()
        .find(|l| l.starts_with("throughput"))
        .unwrap();
    assert!(
        throughput.contains("100,000 ops") && throughput.contains("ops/s"),
        "{throughput}"
    );

    let r = run_json(&args[1..]);
    assert_eq!(u64_of(&r, &["ops"]), 100_000);
    assert!(f64_of(&r, &["iops"]) > 0.0 && f64_of(&r, &["wall_s"]) > 0.0);
    assert_eq!(u64_of(&r, &["sparse_clock", "every"]), 64);
    assert_eq!(r["sparse_clock"]["chosen"], "--clock-every 64");
    // No per-op latency: absent, with the reason in its place (not a distribution of zeros).
    assert!(r.get("latency").is_none() && r.get("gap").is_none(), "{r}");
    assert_eq!(
        r["latency_unavailable"], r["sparse_clock"]["latency_unavailable"],
        "{r}"
    );
    assert_eq!(f64_of(&r, &["syscalls", "method_per_op"]), 1.0);
    assert_eq!(u64_of(&r, &["syscalls", "kernel_rw", "syscw"]), 100_000);
    assert_eq!(r["spec"]["clock_every"], 64);
}

#[test]
fn clock_every_keeps_the_kernel_syscall_count_the_methods() {
    // With the tracepoints counting (where this kernel and user allow them): one write per op, and the
    // clock (RDTSC, CNTVCT or a vDSO read here; counted apart where it is a system call) adds nothing.
    let r = run_json_counted(&[
        "--method",
        "psync",
        "--target",
        "/dev/null",
        "--ops",
        "20k",
        "--clock-every",
        "64",
    ]);
    assert_eq!(f64_of(&r, &["syscalls", "method_per_op"]), 1.0);
    match r["derived"]["syscalls_per_op"].as_f64() {
        Some(v) => assert!((v - 1.0).abs() < 0.02, "kernel's syscalls per op {v}"),
        None => skip(
            "tracepoints",
            &format!(
                "the kernel's syscall count: not counted here ({})",
                r["kernel"]["notes"]
            ),
        ),
    }
}

#[test]
fn clock_every_one_times_every_op() {
    let r = run_json(&[
        "--method",
        "psync",
        "--target",
        "/dev/null",
        "--ops",
        "10k",
        "--clock-every",
        "1",
    ]);
    assert_eq!(u64_of(&r, &["latency", "count"]), 10_000);
    assert!(r.get("sparse_clock").is_none(), "{}", r["sparse_clock"]);
}

#[test]
fn bad_clock_every_is_refused_naming_the_flag() {
    for (args, why) in [
        (vec!["--clock-every", "0"], "give 1"),
        (vec!["--clock-every", "1000001"], "to 1,000,000"),
        (
            vec!["--clock-every", "18446744073709551615"],
            "to 1,000,000",
        ),
        (
            vec!["--method", "io_uring", "--clock-every", "8"],
            "once per submission round",
        ),
        (vec!["--clock-every", "often"], "--clock-every"),
    ] {
        let mut a = vec!["run", "--target", "/dev/null", "--ops", "1000"];
        a.extend(args.iter());
        let r = iolab(&a);
        assert_eq!(r.code, 2, "{a:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("--clock-every") && r.stderr.contains(why),
            "{a:?}: {}",
            r.stderr
        );
    }
}

/// A board binary (`IOLAB_<TARGET>_BIN`, else what `scripts/build-board` leaves for the target) and its
/// qemu-user, or why the test cannot run. With IOLAB_REQUIRE_BOARDS set (`.ci/boards`, after building them)
/// a missing binary or emulator is a failure, not a skip.
fn board(target: &str, env: &str, qemu: &str) -> Result<(PathBuf, PathBuf), String> {
    let found = find_board(target, env, qemu);
    if let Err(why) = &found {
        assert!(
            std::env::var_os("IOLAB_REQUIRE_BOARDS").is_none(),
            "IOLAB_REQUIRE_BOARDS is set, but {why}"
        );
    }
    found
}

fn find_board(target: &str, env: &str, qemu: &str) -> Result<(PathBuf, PathBuf), String> {
    let bin = std::env::var_os(env).map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../target")
            .join(target)
            .join("board/iolab")
    });
    if !bin.is_file() {
        return Err(format!(
            "no {target} binary at {} (scripts/build-board builds it, or set {env})",
            bin.display()
        ));
    }
    let q = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join(qemu))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
        .into_iter()
        .find(|p| p.is_file())
        .ok_or_else(|| format!("{qemu} is not installed"))?;
    Ok((bin, q))
}

/// `iolab run --method psync --target /dev/null --ops 100k` under qemu-user: its exit code and clock line.
fn clock_line_under(qemu: &PathBuf, cpu: Option<&str>, bin: &PathBuf) -> (i32, String, String) {
    let mut c = Command::new(qemu);
    if let Some(cpu) = cpu {
        c.args(["-cpu", cpu]);
    }
    let out = c
        .arg(bin)
        .args([
            "run",
            "-v",
            "--method",
            "psync",
            "--target",
            "/dev/null",
            "--ops",
            "100k",
            "--count",
            "none",
        ])
        .output()
        .expect("qemu starts");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = stdout
        .lines()
        .find(|l| l.starts_with("clock "))
        .unwrap_or("")
        .to_string();
    (
        out.status.code().unwrap_or(-1),
        line,
        format!("{stdout}{}", String::from_utf8_lossy(&out.stderr)),
    )
}

#[test]
fn aarch64_binary_under_qemu_names_the_arm_timer() {
    let (bin, qemu) = match board(
        "aarch64-unknown-linux-musl",
        "IOLAB_AARCH64_BIN",
        "qemu-aarch64-static",
    ) {
        Ok(x) => x,
        Err(why) => return skip("boards", &why),
    };
    let (code, line, all) = clock_line_under(&qemu, None, &bin);
    assert_eq!(code, 0, "{all}");
    assert!(
        line.contains("CNTVCT_EL0 (ARM generic timer at") && line.contains("CNTFRQ_EL0 says"),
        "{line}"
    );
}

#[test]
fn armv7_binary_under_qemu_falls_back_without_a_readable_timer() {
    let (bin, qemu) = match board(
        "thumbv7neon-unknown-linux-gnueabihf",
        "IOLAB_ARMV7_BIN",
        "qemu-arm-static",
    ) {
        Ok(x) => x,
        Err(why) => return skip("boards", &why),
    };
    // A Cortex-A9 has no generic timer: the probe's read traps in a child, iolab goes on with
    // clock_gettime, which is a system call under qemu-user (no vDSO), and reads it every 64 ops.
    let (code, line, all) = clock_line_under(&qemu, Some("cortex-a9"), &bin);
    assert_eq!(code, 0, "{all}");
    assert!(
        line.contains("clock_gettime(CLOCK_MONOTONIC), a system call on every read"),
        "{line}"
    );
    assert!(
        all.contains("unavailable: one clock read every 64 ops (iolab's choice"),
        "{all}"
    );
}
