//! The sink driver on the host (which, here, loads no modules): `iolab driver` says why it cannot, and
//! the sink's flags and target are refused clearly where the driver is absent. What the driver does is
//! checked in a guest kernel (kernel_lab_sink.rs).

mod common;
use common::*;
use std::process::Command;

/// `iolab ARGS` with XDG_CACHE_HOME in `cache`, so the default module path is one no earlier build made.
fn iolab_cache(args: &[&str], cache: &std::path::Path) -> Ran {
    let out = Command::new(bin())
        .args(args)
        .env("XDG_CACHE_HOME", cache)
        .output()
        .expect("iolab starts");
    Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn driver_loaded() -> bool {
    std::path::Path::new("/sys/module/iolab_sink").exists()
}

#[test]
fn load_says_why_it_cannot() {
    if driver_loaded() {
        skip(
            "no-sink-driver",
            "the sink driver is loaded on this machine",
        );
        return;
    }
    // No module was built into this cache: nothing can be loaded, whatever this kernel allows.
    let cache = tempfile::tempdir().unwrap();
    let r = iolab_cache(&["driver", "load"], cache.path());
    assert_eq!(r.code, 1, "{}", r.stderr);
    let e = r.stderr.trim();
    assert!(e.starts_with("iolab: "), "{e}");
    // Either the kernel's answer (ENOSYS without module support, EPERM without root) or, where modules
    // load, the missing module, named with what to do.
    assert!(
        e.contains("(finit_module: E")
            || e.contains("no module at") && e.contains("iolab driver build"),
        "{e}"
    );
    if !std::path::Path::new("/proc/modules").exists() {
        assert!(e.contains("ENOSYS") && e.contains("module support"), "{e}");
    }
    // A module file that does not exist is named.
    let r = iolab_cache(
        &["driver", "load", "/nonexistent/iolab_sink.ko"],
        cache.path(),
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    // A parameter that is no name=value is bad input.
    let r = iolab_cache(
        &["driver", "load", "/nonexistent/x.ko", "nonsense"],
        cache.path(),
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("'nonsense' is not a name=value"),
        "{}",
        r.stderr
    );
    // So is a parameter the driver does not declare, or a value it does not take, whatever the kernel
    // would have said about loading at all.
    for (p, why) in [
        ("colour=red", "names no parameter of the driver"),
        (
            "personality=bogus",
            "gives personality a value it does not take",
        ),
        ("log=2", "gives log a value it does not take"),
        (
            "buf_size=5000",
            "is 5000 bytes; the buffer is a multiple of",
        ),
        (
            "buf_size=2g",
            "is 2147483648 bytes; the buffer is a multiple of",
        ),
    ] {
        let r = iolab_cache(&["driver", "load", p], cache.path());
        assert_eq!(r.code, 2, "{p}: {}", r.stderr);
        assert!(
            r.stderr.starts_with(&format!("iolab: PARAM: '{p}' {why}")),
            "{p}: {}",
            r.stderr
        );
    }
    // A user who may not load modules is told so, not where the module would be.
    if let Some((o, _home)) = iolab_as_nobody(&["driver", "load"]) {
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{e}");
        assert!(
            (e.contains("CAP_SYS_MODULE") || e.contains("ENOSYS")) && !e.contains("no module at"),
            "{e}"
        );
    }
}

#[test]
fn unload_and_status_say_why() {
    if driver_loaded() {
        skip(
            "no-sink-driver",
            "the sink driver is loaded on this machine",
        );
        return;
    }
    let r = iolab(&["driver", "unload"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("(delete_module: E"), "{}", r.stderr);
    let r = iolab(&["driver", "status"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stdout.contains("not loaded"), "{}", r.stdout);
}

#[test]
fn build_names_missing_headers_and_never_replaces_a_module() {
    let r = iolab(&["driver", "build", "--headers", "/nonexistent"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("no kernel headers at /nonexistent") && r.stderr.contains("--headers"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    // Headers that look usable, and an --out that already holds a module: refused before make runs.
    let d = tempfile::tempdir().unwrap();
    let headers = d.path().join("headers");
    let out = d.path().join("out");
    std::fs::create_dir_all(&headers).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(headers.join("Makefile"), "").unwrap();
    std::fs::write(out.join("iolab_sink.ko"), b"keep me").unwrap();
    let r = iolab(&[
        "driver",
        "build",
        "--headers",
        &path_str(&headers),
        "--out",
        &path_str(&out),
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.starts_with("iolab: --out: "), "{}", r.stderr);
    assert_eq!(
        std::fs::read(out.join("iolab_sink.ko")).unwrap(),
        b"keep me"
    );
    assert_eq!(
        std::fs::read_dir(&out).unwrap().count(),
        1,
        "nothing else made"
    );
}

#[test]
fn build_against_the_running_kernels_headers_where_there_are_some() {
    let headers = format!(
        "/lib/modules/{}/build",
        std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap()
            .trim()
    );
    if !std::path::Path::new(&headers).join("Makefile").is_file() {
        skip("kernel-headers", &format!("no headers at {headers}"));
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    let r = iolab(&["driver", "build", "--out", &path_str(&out)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ko = out.join("iolab_sink.ko");
    assert!(r.stdout.contains(&path_str(&ko)), "{}", r.stdout);
    assert!(std::fs::metadata(&ko).unwrap().len() > 0);
}

#[test]
fn the_sink_target_and_flags_are_refused_clearly_without_the_driver() {
    if driver_loaded() {
        skip("no-sink-driver", "it is loaded");
        return;
    }
    let r = iolab(&["run", "--target", "/dev/iolab_sink", "--ops", "10"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .starts_with("iolab: --target: /dev/iolab_sink does not exist")
            && r.stderr.contains("iolab driver load"),
        "{}",
        r.stderr
    );
    // Never made as a file in its place.
    assert!(!std::path::Path::new("/dev/iolab_sink").exists());
    let r = iolab(&[
        "run",
        "--target",
        "/dev/iolab_sink",
        "--method",
        "uring_cmd",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

#[test]
fn sink_flags_on_another_target_are_bad_input() {
    for (args, flag) in [
        (vec!["--sink", "legacy"], "--sink"),
        (vec!["--sink", "nowait"], "--sink"),
        (vec!["--sink-log"], "--sink-log"),
    ] {
        let mut a = vec!["run", "--target", "/dev/null", "--ops", "10"];
        a.extend(&args);
        let r = iolab(&a);
        assert_eq!(r.code, 2, "{a:?}: {}", r.stderr);
        assert!(
            r.stderr
                .starts_with(&format!("iolab: {flag}: applies to iolab's sink driver")),
            "{a:?}: {}",
            r.stderr
        );
    }
    // On a new file: refused before the file is made.
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("x.dat");
    let r = iolab(&[
        "run",
        "--target",
        &path_str(&f),
        "--sink",
        "legacy",
        "--ops",
        "10",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(!f.exists(), "nothing created on a refusal");
    // A word the option does not know.
    let r = iolab(&["run", "--sink", "fast"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("--sink") && r.stderr.contains("legacy"),
        "{}",
        r.stderr
    );
}

#[test]
fn uring_cmd_needs_the_sink() {
    let r = iolab(&[
        "run",
        "--method",
        "uring_cmd",
        "--target",
        "/dev/null",
        "--ops",
        "10",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .starts_with("iolab: --target: uring_cmd sends commands only iolab's sink driver"),
        "{}",
        r.stderr
    );
    let r = iolab(&[
        "run",
        "--method",
        "uring_cmd",
        "--op",
        "read",
        "--ops",
        "10",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

#[test]
fn sink_points_of_a_suite_are_not_available_with_the_reason() {
    if driver_loaded() {
        skip("no-sink-driver", "it is loaded");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let suite = d.path().join("s.toml");
    std::fs::write(
        &suite,
        r#"name = "s"
about = "sink points without the driver"
reproduces = "nothing"
table = "cpu"
[[step]]
label = "sink write"
spec = { method = "sync", target = "/dev/iolab_sink", ops = 10 }
needs = "sink"
[[step]]
label = "kernel module"
workload = "lines"
spec = { method = "kernel-module", lines = 10, target = "{disk}/l.txt" }
"#,
    )
    .unwrap();
    let rec = d.path().join("r.jsonl");
    let r = iolab(&[
        "suite",
        &path_str(&suite),
        "--out",
        &path_str(&rec),
        "--disk-dir",
        &path_str(d.path()),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(&rec).unwrap();
    let recs: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r.get("point").is_some())
        .collect();
    assert_eq!(recs.len(), 2);
    for rec in &recs {
        assert!(rec.get("result").is_none(), "never faked: {rec}");
        let e = rec["error"].as_str().unwrap();
        assert!(
            e.starts_with("not available on this machine: ") && e.contains("iolab_sink"),
            "{e}"
        );
    }
}
