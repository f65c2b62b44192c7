//! `--method offload` (issue: system-call offload): a client process under a seccomp filter does its I/O
//! through rings in shared memory, on three paths (kernel, broker, native). These tests check that data
//! lands (and reads back) exactly, that the sandbox refuses every forbidden request with nothing changed in
//! iolab's memory or files, and that a client that dies, or whose iolab dies, never leaves anything hanging.

mod common;
use common::*;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const PATHS: [&str; 3] = ["kernel", "broker", "native"];

fn offload(path: &str) -> Vec<String> {
    vec![
        "--method".into(),
        "offload".into(),
        "--offload-path".into(),
        path.into(),
    ]
}

fn run_offload(path: &str, extra: &[&str]) -> serde_json::Value {
    let mut a: Vec<String> = offload(path);
    a.extend(extra.iter().map(|s| s.to_string()));
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    run_json(&a)
}

#[test]
fn every_path_writes_and_reads_verified_data_on_tmpfs() {
    let dir = tmpfs_dir();
    for path in PATHS {
        // Writes: iolab's --verify, and the bytes checked here again block by block.
        let f = file(&dir, &format!("w-{path}.dat"));
        let fs = path_str(&f);
        let r = run_offload(
            path,
            &[
                "--target", &fs, "--ops", "600", "--bs", "4k", "--batch", "8", "--seed", "77",
                "--verify", "--keep",
            ],
        );
        assert_eq!(u64_of(&r, &["ops"]), 600, "{path}");
        assert_eq!(u64_of(&r, &["verify", "mismatches"]), 0, "{path}");
        assert_eq!(u64_of(&r, &["verify", "blocks_checked"]), 600, "{path}");
        assert_eq!(check_blocks(&f, 4096, 77, 0, 0..600), (600, 0), "{path}");
        let o = &r["offload"];
        assert_eq!(o["path"], path);
        // The client's own count of its system calls matches the kernel's (raw_syscalls:sys_exit on its
        // pid from its start read: that read, and the prctl and seccomp calls that sandboxed it, come on top).
        match o["client_syscalls_kernel"].as_u64() {
            Some(k) => assert_eq!(
                k,
                u64_of(o, &["client_syscalls_total"]) + if path == "native" { 1 } else { 3 },
                "{path}: {o}"
            ),
            None => skip(
                "tracepoints",
                &format!(
                    "the kernel's count of the client's syscalls: {}",
                    o["client_syscalls_kernel_note"]
                ),
            ),
        }
        // A sandboxed client makes no system call but its doorbells and its done signal.
        if path != "native" {
            assert!(
                u64_of(o, &["client_syscalls_timed"]) <= u64_of(o, &["doorbells"]) + 1,
                "{path}: {o}"
            );
            assert!(o["sandbox"].as_str().unwrap().contains("seccomp filter"));
        } else {
            // One io_uring_enter per batch of 8, plus the done signal.
            assert_eq!(u64_of(o, &["client_syscalls_timed"]), 600 / 8 + 1);
        }

        // Reads (random offsets): every block is compared by the client with the file's pattern.
        let g = file(&dir, &format!("r-{path}.dat"));
        let r = run_offload(
            path,
            &[
                "--target",
                &path_str(&g),
                "--op",
                "read",
                "--pattern",
                "rand",
                "--ops",
                "500",
                "--bs",
                "8k",
                "--batch",
                "4",
                "--file-size",
                "1m",
                "--verify",
            ],
        );
        assert_eq!(u64_of(&r, &["verify", "blocks_checked"]), 500, "{path}");
        assert_eq!(u64_of(&r, &["verify", "mismatches"]), 0, "{path}");
        assert_eq!(u64_of(&r, &["bytes"]), 500 * 8192, "{path}");

        // NOPs at batch 1 and 32: no data, and the round trip figures are there.
        for batch in ["1", "32"] {
            let r = run_offload(path, &["--nop-requests", "--ops", "20k", "--batch", batch]);
            assert_eq!(u64_of(&r, &["ops"]), 20_000);
            assert_eq!(u64_of(&r, &["bytes"]), 0);
            let o = &r["offload"];
            assert!(f64_of(o, &["ns_per_op"]) > 0.0);
            assert_eq!(o["seed_native_cycles"], 4170);
            assert_eq!(o["seed_offloaded_cycles"], 487894);
        }
    }
}

#[test]
fn fsync_goes_through_the_sandbox_too() {
    let dir = tmpfs_dir();
    for path in ["kernel", "broker"] {
        let f = file(&dir, &format!("{path}.dat"));
        let r = run_offload(
            path,
            &[
                "--target",
                &path_str(&f),
                "--ops",
                "64",
                "--fsync",
                "every:16",
                "--verify",
            ],
        );
        assert_eq!(u64_of(&r, &["flushes", "calls"]), 4, "{path}");
        assert_eq!(u64_of(&r, &["verify", "mismatches"]), 0);
    }
}

#[test]
fn broker_doorbell_modes_all_work_and_count_their_bells() {
    let dir = tmpfs_dir();
    for mode in ["spin", "spin-then-sleep", "eventfd"] {
        let f = file(&dir, &format!("{mode}.dat"));
        let r = run_offload(
            "broker",
            &[
                "--doorbell",
                mode,
                "--target",
                &path_str(&f),
                "--ops",
                "400",
                "--batch",
                "4",
                "--verify",
            ],
        );
        assert_eq!(u64_of(&r, &["verify", "mismatches"]), 0, "{mode}");
        let o = &r["offload"];
        assert_eq!(o["doorbell"], mode);
        let bells = u64_of(o, &["doorbells"]);
        match mode {
            "spin" => assert_eq!(bells, 0, "a spinning broker is never rung"),
            // One bell per batch.
            "eventfd" => assert_eq!(bells, 100),
            _ => {}
        }
        assert_eq!(u64_of(o, &["broker_executed"]), 400);
    }
}

/// The forbidden requests, the errno each must complete with, and the check that removing the protection
/// would trip (the canary page or the unrelated file).
const ATTACKS: [(&str, i64); 5] = [
    ("opcode", -libc::EACCES as i64),
    ("raw-fd", -libc::EACCES as i64),
    ("slot", -libc::EBADF as i64),
    ("buf-addr", -libc::EFAULT as i64),
    ("buf-len", -libc::EFAULT as i64),
];

#[test]
fn the_sandbox_refuses_every_forbidden_request_and_nothing_else_happens() {
    let dir = tmpfs_dir();
    for path in ["kernel", "broker"] {
        let f = file(&dir, &format!("{path}.dat"));
        let mut list: Vec<&str> = ATTACKS.iter().map(|a| a.0).collect();
        if path == "broker" {
            list.push("rewrite");
        }
        let list = list.join(",");
        let r = run_offload(
            path,
            &[
                "--target",
                &path_str(&f),
                "--ops",
                "256",
                "--offload-attack",
                &list,
                "--verify",
            ],
        );
        let o = &r["offload"];
        let outcomes = o["attacks"].as_array().unwrap();
        for (name, errno) in ATTACKS {
            let a = outcomes
                .iter()
                .find(|a| a["attack"] == name)
                .unwrap_or_else(|| panic!("{path}: no outcome for {name}: {o}"));
            assert_eq!(a["result"].as_i64().unwrap(), errno, "{path} {name}: {a}");
            assert_eq!(a["refused"], true, "{path} {name}");
            assert!(!a["refused_by"].as_str().unwrap().is_empty());
        }
        assert_eq!(o["canary_intact"], true, "{path}");
        assert_eq!(o["unrelated_file_intact"], true, "{path}");
        // The workload after the attacks still wrote exactly what it should.
        assert_eq!(u64_of(&r, &["verify", "mismatches"]), 0);
        if path == "broker" {
            let rw = outcomes.iter().find(|a| a["attack"] == "rewrite").unwrap();
            let tries = u64_of(rw, &["tries"]);
            let refused = u64_of(rw, &["refused_tries"]);
            let orig = u64_of(rw, &["original_ran"]);
            assert_eq!(tries, 200);
            let other = u64_of(rw, &["other_allowed_ran"]);
            // Each try ran the NOP as published, was refused as rewritten, or ran a torn copy the policy
            // allows; the raw-fd write never ran (the unrelated file is intact, checked above).
            assert_eq!(refused + orig + other, tries, "{rw}");
            assert!(
                refused > 0,
                "the broker never saw a rewritten request: {rw}"
            );
            // The policy counted each refusal: the 5 attacks and every refused rewrite.
            assert_eq!(u64_of(o, &["refusals"]), 5 + refused);
        } else {
            assert_eq!(u64_of(o, &["refusals"]), 5);
        }
    }
}

fn assert_dies(args: &[&str], signal: &str) {
    let t = Instant::now();
    let r = iolab(args);
    assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
    assert!(
        r.stderr.contains(signal) && r.stderr.contains("mid-run"),
        "{args:?}: {}",
        r.stderr
    );
    assert!(
        t.elapsed() < Duration::from_secs(30),
        "took {:?}",
        t.elapsed()
    );
}

#[test]
fn a_client_that_breaks_the_rules_or_crashes_is_reported() {
    for path in ["kernel", "broker"] {
        for (attack, signal) in [
            ("syscall", "signal 31 (SIGSYS)"),
            ("crash", "signal 11 (SIGSEGV)"),
        ] {
            assert_dies(
                &[
                    "run",
                    "--method",
                    "offload",
                    "--offload-path",
                    path,
                    "--nop-requests",
                    "--ops",
                    "100k",
                    "--offload-attack",
                    attack,
                ],
                signal,
            );
        }
    }
}

/// The pids of `pid`'s children (the offload client), polled until there is one.
fn client_of(pid: u32) -> u32 {
    let t = Instant::now();
    loop {
        let p = format!("/proc/{pid}/task/{pid}/children");
        if let Some(c) = std::fs::read_to_string(&p)
            .ok()
            .and_then(|s| s.split_whitespace().next().and_then(|c| c.parse().ok()))
        {
            return c;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "no offload client appeared"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Running, sleeping ... anything but gone or a zombie.
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        Ok(s) => {
            let state = s.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        }
    }
}

fn spawn_long(path: &str) -> std::process::Child {
    Command::new(bin())
        .args([
            "run",
            "--method",
            "offload",
            "--offload-path",
            path,
            "--nop-requests",
            "--duration",
            "30s",
            "--ops",
            "100G",
            "--count",
            "none",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("iolab starts")
}

#[test]
fn a_client_killed_mid_run_is_reported_without_a_hang() {
    for path in ["kernel", "broker"] {
        let child = spawn_long(path);
        let client = client_of(child.id());
        std::thread::sleep(Duration::from_millis(300));
        let t = Instant::now();
        assert!(Command::new("kill")
            .args(["-KILL", &client.to_string()])
            .status()
            .unwrap()
            .success());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{path}: {err}");
        assert!(
            err.contains("killed by signal 9") && err.contains("mid-run"),
            "{path}: {err}"
        );
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    }
}

#[test]
fn the_client_exits_when_iolab_dies() {
    for path in ["kernel", "broker"] {
        let mut child = spawn_long(path);
        let client = client_of(child.id());
        std::thread::sleep(Duration::from_millis(300));
        assert!(alive(client), "the client runs while iolab does");
        child.kill().unwrap();
        child.wait().unwrap();
        let t = Instant::now();
        while alive(client) {
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "{path}: the client (pid {client}) still runs 30 s after iolab died"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn nops_without_user_data_run_on_the_native_and_kernel_paths_only() {
    for path in ["native", "kernel"] {
        let r = run_offload(
            path,
            &["--nop-requests", "--no-user-data", "--ops", "20000"],
        );
        assert_eq!(r["ops"], 20000, "{path}");
        assert_eq!(
            r["offload"]["no_user_data"], true,
            "{path}: {}",
            r["offload"]
        );
        assert_eq!(r["offload"]["batch"], 1, "{path}");
        let trips = &r["offload"]["client_cycles"]["round_trips"]["count"];
        assert_eq!(trips, 20000, "{path}: every NOP a round trip of its own");
    }
    for (extra, why) in [
        (
            &["--offload-path", "broker"][..],
            "the broker routes each completion",
        ),
        (&["--batch", "4"][..], "needs --nop-requests --batch 1"),
    ] {
        let mut a = vec![
            "run",
            "--method",
            "offload",
            "--nop-requests",
            "--no-user-data",
        ];
        a.extend_from_slice(extra);
        let r = iolab(&a);
        assert_eq!(r.code, 2, "{a:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("--no-user-data") && r.stderr.contains(why),
            "{a:?}: {}",
            r.stderr
        );
    }
    let r = iolab(&["run", "--method", "offload", "--no-user-data"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("needs --nop-requests --batch 1"),
        "{}",
        r.stderr
    );
}

#[test]
fn offload_options_are_checked() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--offload-path", "kernel", "--doorbell", "spin"],
            "--doorbell",
        ),
        (&["--offload-path", "warp"], "--offload-path"),
        (
            &["--offload-path", "kernel", "--offload-attack", "rewrite"],
            "--offload-attack",
        ),
        (
            &["--offload-path", "native", "--offload-attack", "opcode"],
            "--offload-attack",
        ),
        (&["--offload-attack", "opcode,teleport"], "--offload-attack"),
        (&["--offload-attack", "syscall,crash"], "--offload-attack"),
        (&["--qd", "4"], "--qd"),
        (&["--threads", "2"], "--threads"),
        (&["--offload-path", "broker", "--sq-cpu", "0"], "--sq-cpu"),
        (&["--target", "pipe"], "--target"),
        (
            &["--op", "read", "--target", "/dev/zero", "--verify"],
            "--verify",
        ),
    ];
    for (extra, flag) in cases {
        let mut a = vec!["run", "--method", "offload"];
        a.extend_from_slice(extra);
        let r = iolab(&a);
        assert_eq!(r.code, 2, "{a:?}: {}", r.stderr);
        assert!(r.stderr.contains(flag), "{a:?}: {}", r.stderr);
    }
    // Offload flags on another method.
    for (flag, v) in [
        ("--offload-path", "kernel"),
        ("--doorbell", "spin"),
        ("--offload-attack", "slot"),
    ] {
        let r = iolab(&["run", "--method", "io_uring", flag, v]);
        assert_eq!(r.code, 2);
        assert!(r.stderr.contains(flag), "{}", r.stderr);
    }
}

#[test]
fn the_kernel_path_falls_back_to_mapped_rings_where_no_mmap_is_missing() {
    // IOLAB_FORCE_RING_MMAP takes the path a kernel before 6.5 takes (it refuses IORING_SETUP_NO_MMAP).
    let dir = tmpfs_dir();
    for path in ["kernel", "native"] {
        let f = file(&dir, &format!("{path}.dat"));
        let fs = path_str(&f);
        let mut args = vec![
            "run",
            "--method",
            "offload",
            "--offload-path",
            path,
            "--target",
            &fs,
            "--ops",
            "1000",
            "--batch",
            "4",
            "--verify",
            "--count",
            "none",
            "--json",
            "-",
        ];
        if path == "kernel" {
            args.extend_from_slice(&["--offload-attack", "opcode,raw-fd,slot,buf-addr,buf-len"]);
        }
        let out = Command::new(bin())
            .args(&args)
            .env("IOLAB_FORCE_RING_MMAP", "1")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{path}: {err}");
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(u64_of(&r, &["verify", "mismatches"]), 0);
        assert_eq!(u64_of(&r, &["verify", "blocks_checked"]), 1000);
        let fb = r["fallbacks"].to_string();
        assert!(
            fb.contains("NO_MMAP"),
            "{path}: the fallback is stated: {fb}"
        );
        assert!(r["offload"]["service"]
            .as_str()
            .unwrap()
            .contains("mapped from the ring fd"));
        if path == "kernel" {
            assert_eq!(u64_of(&r["offload"], &["refusals"]), 5);
            assert_eq!(r["offload"]["canary_intact"], true);
        }
    }
}
