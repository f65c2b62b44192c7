//! `iolab probe`: every method and option listed, available or with its reason, nothing left behind.

mod common;
use common::*;

#[test]
fn probe_lists_everything_with_reasons_and_leaves_nothing_behind() {
    let tmp = disk_dir();
    let out = std::process::Command::new(bin())
        .args(["probe", "--json", "-"])
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    let row = |name: &str| {
        rows.iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("no row {name}"))
            .clone()
    };
    let labels = file_methods()
        .into_iter()
        .map(|m| format!("method {m}"))
        .chain(["method epoll (on a pipe)".to_string()]);
    for label in labels {
        let r = row(&label);
        assert!(
            r["available"].is_boolean() && !r["detail"].as_str().unwrap().is_empty(),
            "{r}"
        );
    }
    for name in [
        "target pipe",
        "target socketpair (AF_UNIX), io_uring",
        "target tcp (127.0.0.1)",
        "io_uring --ring shared (2 threads)",
        "io_uring --ring shared-submitter (2 threads)",
        "io_uring --sqpoll",
        "io_uring --fixed-bufs",
        "io_uring --iopoll read (O_DIRECT)",
        "perf counter raw_syscalls:sys_enter",
        "perf counter cycles",
    ] {
        let r = row(name);
        if r["available"] == false {
            assert!(
                !r["detail"].as_str().unwrap().is_empty(),
                "an unavailable row gives its reason: {r}"
            );
        }
    }
    // What the probe refuses is what a run refuses, word for word.
    let r = row("method mmap on /dev/null");
    assert_eq!(r["available"], false);
    let run = iolab(&["run", "--method", "mmap", "--target", "/dev/null"]);
    assert_eq!(
        run.stderr.trim(),
        format!("iolab: {}", r["detail"].as_str().unwrap())
    );
    // The recent interfaces: each with the kernel that brought it; the vectored fixed-buffer try names the
    // opcode that ran (WRITEV on a kernel older than 6.15, said as asked for and missing).
    for name in [
        "pv2 --rw-flags dontcache (RWF_DONTCACHE, 6.14+)",
        "io_uring --rw-flags dontcache (6.14+)",
        "io_uring --min-wait (min_wait_usec, 6.12+)",
    ] {
        let r = row(name);
        assert!(!r["detail"].as_str().unwrap().is_empty(), "{r}");
    }
    let vf = row("io_uring --vectored --fixed-bufs (WRITEV_FIXED, 6.15+)");
    let detail = vf["detail"].as_str().unwrap();
    assert!(
        detail.contains("opcode WRITEV_FIXED") || detail.contains("WRITEV_FIXED asked for"),
        "{vf}"
    );
    let iopoll = row("io_uring --iopoll read (O_DIRECT)");
    if iopoll["available"] == false {
        assert!(
            iopoll["detail"]
                .as_str()
                .unwrap()
                .contains("IOPOLL unsupported"),
            "{iopoll}"
        );
    }
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "probe files removed"
    );
    // The registry's methods, every one `--method` takes, in the order its refusal lists them.
    let listed: Vec<&str> = v["methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    let r = iolab(&["run", "--method", "nosuch", "--ops", "1"]);
    let accepted = r.stderr.split("accepted: ").nth(1).unwrap_or_default();
    assert_eq!(listed.join(", "), accepted.trim(), "{}", r.stderr);
    for m in &v["methods"].as_array().unwrap()[..] {
        assert!(
            ["sync", "queued", "out_of_process"].contains(&m["exec"].as_str().unwrap()),
            "{m}"
        );
    }
}
