//! IOPOLL on this machine's own disk (no poll queues here): iolab must say what happened, not trust the
//! flag. Either the kernel refuses (exit 1, the message names the device's queue/io_poll) or it completes
//! the requests by interrupt, and the result says they were not polled, with the device's interrupts; on a
//! machine whose disk has poll queues, a polled run must show no interrupt per completion. Guests with
//! poll queues are tested in vm.rs.

mod common;

use common::{disk_dir, file, iolab};

#[test]
fn iopoll_on_a_disk_without_poll_queues_says_refused_or_not_polled() {
    let dir = disk_dir();
    for op in ["read", "write"] {
        let f = file(&dir, &format!("poll-{op}.dat"));
        let r = iolab(&[
            "run",
            "--method",
            "io_uring",
            "--iopoll",
            "--direct",
            "--op",
            op,
            "--target",
            f.to_str().unwrap(),
            "--file-size",
            "1m",
            "--ops",
            "500",
            "--count",
            "none",
            "--json",
            "-",
        ]);
        match r.code {
            1 => {
                assert!(
                    r.stderr.contains("IOPOLL unsupported"),
                    "{op}: {}",
                    r.stderr
                );
                assert!(
                    r.stderr.contains("queue/io_poll is"),
                    "{op}: names the device's flag: {}",
                    r.stderr
                );
                println!("IOPOLL {op}: refused: {}", r.stderr.trim());
            }
            0 => {
                let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
                let p = &v["iopoll"];
                let verdict = p["verdict"].as_str().unwrap_or_default();
                assert!(!p["device"].as_str().unwrap_or_default().is_empty(), "{p}");
                match p["polled"].as_bool() {
                    Some(false) => {
                        assert!(verdict.contains("NOT polled"), "{verdict}");
                        assert!(p["interrupts"].as_u64().unwrap() > 0, "{p}");
                    }
                    Some(true) => {
                        assert_eq!(p["io_poll"], true, "{p}");
                        assert!(p["interrupts"].as_u64().unwrap() * 10 < 500, "{p}");
                    }
                    None => assert!(verdict.contains("cannot be told"), "{verdict}"),
                }
                let finding = v["findings"][0]["text"].as_str().unwrap_or_default();
                assert!(
                    finding.starts_with("IOPOLL"),
                    "the verdict is the first finding: {finding}"
                );
                println!("IOPOLL {op}: {verdict}");
            }
            c => panic!("IOPOLL {op}: exit {c}: {}", r.stderr),
        }
    }
}
