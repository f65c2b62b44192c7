//! `--method offload --offload-partition vm`: the offload client in a QEMU guest (booted by `iolab vm`'s
//! machinery), the shared region an ivshmem-plain device backed by a file in /dev/shm. One `iolab suite`
//! process runs every check, so one guest serves them all (one boot, about half a minute under TCG):
//! - NOP, write with --verify and read with --verify, through the kernel path and the broker path: every
//!   request counted, written blocks read back and checked on the host, read blocks checked in the guest
//!   against iolab's pattern;
//! - the attacks a guest can make (opcode, raw-fd, slot, buf-addr, buf-len; rewrite on the broker), each
//!   refused with an error completion, iolab's canary page and unrelated file unchanged;
//! - a client that crashes in the guest is reported with its signal, and the next run still works;
//! - the shared file is gone afterwards.
//!
//! Where the guest cannot be built here (not x86_64, no apt, no network to the package registry: "cannot
//! build the guest here") it prints "SKIPPED ...: <reason>". Nothing here looks at time (TCG emulates).

mod common;

use common::{bin, skip};
use serde_json::Value;
use std::process::Command;

const SUITE: &str = r#"name = "partition-checks"
about = "the offload client in a guest partition: requests, data and attacks"
reproduces = "issue 21's acceptance checks"
table = "nop"

[defaults]
method = "offload"
offload-partition = "vm"
target = "/dev/null"
ops = 2000
bs = "4k"

[[step]]
label = "nop kernel"
spec = { nop-requests = true, offload-path = "kernel" }

[[step]]
label = "nop broker"
spec = { nop-requests = true, offload-path = "broker" }

[[step]]
label = "write kernel"
spec = { op = "write", offload-path = "kernel", target = "wk.dat", verify = true, batch = 4, ops = 512 }

[[step]]
label = "write broker"
spec = { op = "write", offload-path = "broker", target = "wb.dat", verify = true, batch = 4, ops = 512 }

[[step]]
label = "read kernel"
spec = { op = "read", offload-path = "kernel", target = "rk.dat", verify = true, ops = 512 }

[[step]]
label = "read broker"
spec = { op = "read", offload-path = "broker", target = "rb.dat", verify = true, batch = 8, ops = 512 }

[[step]]
label = "attacks kernel"
spec = { nop-requests = true, offload-path = "kernel", offload-attack = "opcode,raw-fd,slot,buf-addr,buf-len", ops = 100 }

[[step]]
label = "attacks broker"
spec = { nop-requests = true, offload-path = "broker", offload-attack = "opcode,raw-fd,slot,buf-addr,buf-len,rewrite", ops = 100 }

[[step]]
label = "crash"
spec = { nop-requests = true, offload-path = "kernel", offload-attack = "crash", ops = 1000 }

[[step]]
label = "after the crash"
spec = { nop-requests = true, offload-path = "broker", ops = 500 }
"#;

fn records(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r.get("point").is_some())
        .collect()
}

fn record<'a>(recs: &'a [Value], label: &str) -> &'a Value {
    recs.iter()
        .find(|r| r["point"]["step"] == label)
        .unwrap_or_else(|| panic!("no record of step {label}"))
}

fn result<'a>(recs: &'a [Value], label: &str) -> &'a Value {
    let rec = record(recs, label);
    rec.get("result")
        .unwrap_or_else(|| panic!("step {label} did not run: {}", rec["error"]))
}

fn check_partition(r: &Value, label: &str, path: &str) {
    let o = &r["offload"];
    assert_eq!(o["path"], path, "{label}: {o}");
    let p = &o["partition"];
    assert!(p.is_object(), "{label}: no partition figures: {o}");
    let tcg = p["accelerator"] == "tcg";
    assert_eq!(p["emulated"], tcg, "{label}: {p}");
    assert_eq!(r["host"]["emulated"], tcg, "{label}: {}", r["host"]);
    assert!(
        o["sandbox"]
            .as_str()
            .unwrap()
            .contains("QEMU guest partition"),
        "{label}: {o}"
    );
    assert_eq!(o["canary_intact"], true, "{label}");
}

#[test]
fn a_guest_partition_offloads_requests_and_its_attacks_are_refused() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("partition.toml"), SUITE).unwrap();
    let (stdout, stderr) = run_bounded(d.path());
    let all = format!("stdout:\n{stdout}\nstderr:\n{stderr}");
    let text = std::fs::read_to_string(d.path().join("partition.jsonl")).unwrap_or_default();
    let recs = records(&text);
    if let Some(why) = recs
        .iter()
        .filter_map(|r| r["error"].as_str())
        .chain(stderr.lines())
        .find(|l| l.contains("cannot build the guest here"))
    {
        skip("guest", why);
        return;
    }
    assert!(!recs.is_empty(), "no records came back:\n{all}");

    for (label, path) in [("nop kernel", "kernel"), ("nop broker", "broker")] {
        let r = result(&recs, label);
        assert_eq!(r["ops"], 2000, "{label}: {r}");
        check_partition(r, label, path);
        // The guest client timed itself (RDTSC in the guest) into the shared cycle area: every request and
        // every round trip, read by the host.
        let c = &r["offload"]["client_cycles"];
        if cfg!(target_arch = "x86_64") {
            assert_eq!(c["requests"]["count"], 2000, "{label}: {c}");
            let trips = 2000u64.div_ceil(r["offload"]["batch"].as_u64().unwrap());
            assert_eq!(c["round_trips"]["count"], trips, "{label}: {c}");
            assert!(
                c["round_trips"]["min_cycles"].as_u64().unwrap() > 0,
                "{label}: {c}"
            );
        }
    }
    // One guest served every session of the process.
    let sessions: Vec<u64> = ["nop kernel", "nop broker", "write kernel"]
        .iter()
        .map(|l| {
            result(&recs, l)["offload"]["partition"]["session"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(sessions, vec![1, 2, 3], "{all}");

    for (label, path) in [("write kernel", "kernel"), ("write broker", "broker")] {
        let r = result(&recs, label);
        assert_eq!(r["ops"], 512, "{label}");
        assert_eq!(r["bytes"], 512 * 4096, "{label}");
        check_partition(r, label, path);
        let v = &r["verify"];
        assert_eq!(v["mismatches"], 0, "{label}: {v}");
        // Every block the guest wrote was read back from the host's file and matched the pattern.
        assert_eq!(v["blocks_checked"], 512, "{label}: {v}");
    }
    for (label, path) in [("read kernel", "kernel"), ("read broker", "broker")] {
        let r = result(&recs, label);
        assert_eq!(r["ops"], 512, "{label}");
        check_partition(r, label, path);
        let v = &r["verify"];
        assert_eq!(v["blocks_checked"], 512, "{label}: {v}");
        assert_eq!(v["mismatches"], 0, "{label}: {v}");
    }

    for (label, path, attacks) in [
        ("attacks kernel", "kernel", 5),
        ("attacks broker", "broker", 6),
    ] {
        let r = result(&recs, label);
        check_partition(r, label, path);
        let o = &r["offload"];
        let a = o["attacks"].as_array().unwrap();
        assert_eq!(a.len(), attacks, "{label}: {o}");
        for x in a {
            assert_eq!(x["refused"], true, "{label}: {x}");
            assert!(x["result"].as_i64().unwrap() < 0, "{label}: {x}");
        }
        assert_eq!(o["unrelated_file_intact"], true, "{label}");
        assert_eq!(r["ops"], 100, "{label}");
    }

    // A client that crashes in the guest: reported with its signal; the next run is served.
    let crash = record(&recs, "crash");
    let e = crash["error"]
        .as_str()
        .unwrap_or_else(|| panic!("the crash row ran: {crash}"));
    assert!(
        e.contains("the offload client in the guest was killed by signal 11 (SIGSEGV)"),
        "{e}"
    );
    assert_eq!(result(&recs, "after the crash")["ops"], 500);

    // The shared file was removed at exit.
    let pid_files: Vec<String> = std::fs::read_dir("/dev/shm")
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(&format!("iolab-partition-{}-", out_pid(&text))))
                .collect()
        })
        .unwrap_or_default();
    assert!(pid_files.is_empty(), "left behind: {pid_files:?}");
    for label in ["nop kernel", "nop broker"] {
        let o = &result(&recs, label)["offload"];
        println!(
            "partition {label} (accelerator {}, emulated {}): round trip {} ns from outside; the guest \
             client's own cycles per NOP {} (round trip mean {}, p50 {}, batch {})",
            o["partition"]["accelerator"],
            o["partition"]["emulated"],
            o["round_trip_ns"],
            o["client_cycles"]["per_request_cycles"],
            o["client_cycles"]["round_trips"]["mean_cycles"],
            o["client_cycles"]["round_trips"]["p50_cycles"],
            o["batch"]
        );
    }
}

/// The suite's iolab can wait on a guest for at most BOOT_LIMIT_S (a first boot's download, 900 s) plus
/// its rows' bounded waits; past this the test fails (and kills it) instead of hanging.
const SUITE_LIMIT_S: u64 = 1800;

/// Runs the suite in `dir` with its output in files there; its (stdout, stderr). Panics with the output so
/// far if iolab has not finished within SUITE_LIMIT_S.
fn run_bounded(dir: &std::path::Path) -> (String, String) {
    let (out, err) = (dir.join("stdout.txt"), dir.join("stderr.txt"));
    let mut child = Command::new(bin())
        .args(["suite", "partition.toml", "--out", "partition.jsonl"])
        .current_dir(dir)
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("iolab starts");
    let t0 = std::time::Instant::now();
    let read = |p: &std::path::Path| std::fs::read_to_string(p).unwrap_or_default();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed().as_secs() > SUITE_LIMIT_S {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "the partition suite did not finish within {SUITE_LIMIT_S} s (killed); its records:\n{}\n\
                 stdout:\n{}\nstderr:\n{}",
                read(&dir.join("partition.jsonl")),
                read(&out),
                read(&err)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    (read(&out), read(&err))
}

/// The host pid of the iolab that ran the suite, from a record's shared file name.
fn out_pid(text: &str) -> String {
    records(text)
        .iter()
        .find_map(|r| {
            r["result"]["offload"]["partition"]["shared_file"]
                .as_str()
                .map(String::from)
        })
        .and_then(|f| {
            f.rsplit('/')
                .next()?
                .strip_prefix("iolab-partition-")?
                .split('-')
                .next()
                .map(String::from)
        })
        .unwrap_or_else(|| "none".into())
}
