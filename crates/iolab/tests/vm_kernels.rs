//! `suite nowait --quick --kernels 6.1,6.12`: one suite on two Debian kernels under QEMU (TCG here, about
//! 15 s a boot once their parts are cached). Checks the records carry the kernel each point ran on, the
//! probe tables differ where the kernels do (O_DIRECT on tmpfs is 6.12's, not 6.1's), the side-by-
//! side table and answer are printed with every cited figure found in its record, the kernels' own
//! files are gone, and `compare --across kernel` sets the two side by side.
//!
//! Where the guest cannot be built (not x86_64, no apt), or Debian's archive cannot be reached for a
//! kernel, the test prints "SKIPPED <name>: <reason>". A guest whose kernel TCG's emulation broke (a
//! panic, or a run past ten minutes) is booted once more, printing "RETRIED <name>: <why>".

mod common;

use common::{bin, skip};
use serde_json::Value;
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The boots run one at a time (the host has few CPUs, and each guest takes one or two).
static BOOTS: Mutex<()> = Mutex::new(());

fn iolab(dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .output()
        .expect("iolab starts");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// What a guest run may take here before it is taken to have hung: the guests these tests boot finish
/// in about a minute (two boots under TCG), a few beside the tests' load. `--kernels` gives each guest
/// hours, so the test bounds it itself.
const HUNG_AFTER: Duration = Duration::from_secs(600);

/// `iolab ARGS` in a fresh directory, killed (and its qemu with it: PR_SET_PDEATHSIG) past HUNG_AFTER;
/// the directory, exit code (-1 when killed), stdout and stderr.
fn iolab_bounded(args: &[&str]) -> (tempfile::TempDir, i32, String, String) {
    let d = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let (o, e) = (out.path().join("out"), out.path().join("err"));
    let mut child = Command::new(bin())
        .args(args)
        .current_dir(d.path())
        .stdout(std::fs::File::create(&o).unwrap())
        .stderr(std::fs::File::create(&e).unwrap())
        .spawn()
        .expect("iolab starts");
    let t0 = Instant::now();
    let code = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st.code().unwrap_or(-1);
        }
        if t0.elapsed() > HUNG_AFTER {
            let _ = child.kill();
            let _ = child.wait();
            break -1;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let read =
        |p: &std::path::Path| String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned();
    (d, code, read(&o), read(&e))
}

/// `iolab ARGS` as `iolab_bounded`, once more where QEMU's emulation (TCG) beside the tests' load broke
/// the guest's kernel: it has panicked while booting (in the scheduler, before any command), and a run
/// that outlived HUNG_AFTER is taken for the same.
fn iolab_guest(name: &str, args: &[&str]) -> (tempfile::TempDir, i32, String, String) {
    let first = iolab_bounded(args);
    let (_, code, _, stderr) = &first;
    let why = if *code == -1 {
        format!("killed after {} s", HUNG_AFTER.as_secs())
    } else if *code != 0 && stderr.contains("the guest's kernel panicked") {
        "the guest's kernel panicked under emulation".to_string()
    } else {
        return first;
    };
    println!("RETRIED {name}: {why}:\n{stderr}");
    let again = iolab_bounded(args);
    assert_ne!(
        again.1,
        -1,
        "{name}: killed after {} s twice",
        HUNG_AFTER.as_secs()
    );
    again
}

/// Why the guests could not be had here, if iolab said so.
fn cannot_boot(stderr: &str) -> Option<&str> {
    stderr.lines().find(|l| {
        l.contains("cannot build the guest here") || (l.contains("apt-get") && l.contains("failed"))
    })
}

#[test]
fn a_suite_on_two_kernels_records_each_release_and_sets_them_side_by_side() {
    let _one = BOOTS.lock().unwrap_or_else(|p| p.into_inner());
    let name = "a_suite_on_two_kernels_records_each_release_and_sets_them_side_by_side";
    let args = [
        "suite",
        "nowait",
        "--quick",
        "--kernels",
        "6.1,6.12",
        "--out",
        "k.jsonl",
    ];
    let (d, code, stdout, stderr) = iolab_guest(name, &args);
    if let Some(why) = cannot_boot(&stderr) {
        skip("guest", &format!("{name}: {why}"));
        return;
    }
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let text = std::fs::read_to_string(d.path().join("k.jsonl")).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (points, summary) = lines.split_at(lines.len() - 1);
    for (k, prefix) in [("6.1", "6.1."), ("6.12", "6.12.")] {
        let mine: Vec<&Value> = points
            .iter()
            .filter(|r| r["point"]["kernel"] == k)
            .collect();
        assert_eq!(mine.len(), 14, "{k}: every point of the suite");
        for r in &mine {
            let rel = r["result"]["host"]["kernel_release"].as_str().unwrap();
            assert!(rel.starts_with(prefix), "{k}: ran on {rel}");
            assert_eq!(r["result"]["host"]["emulated"], true, "{k}: {rel}");
        }
    }
    let side = &summary[0]["summary"]["kernels"];
    assert_eq!(side["kernels"].as_array().unwrap().len(), 2, "{side}");
    // What the probe found differs where the kernels do: O_DIRECT on tmpfs came with 6.6 (tried, with no
    // timing in it).
    let differ = side["differ"].as_array().unwrap();
    let tmpfs_direct = differ
        .iter()
        .find(|d| {
            d[0].as_str()
                .is_some_and(|n| n.starts_with("O_DIRECT on tmpfs"))
        })
        .unwrap_or_else(|| panic!("{differ:?}"));
    assert_eq!(
        tmpfs_direct[1],
        serde_json::json!([false, true]),
        "{tmpfs_direct}"
    );
    // The table: a column per kernel, both marked emulated, and the answer naming the releases.
    assert!(
        stdout.contains("6.1*") && stdout.contains("* emulated (QEMU TCG)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Which kernel release stops punting buffered writes"),
        "{stdout}"
    );
    let answer = &summary[0]["summary"]["answers"][0];
    // The answer names the releases it compares.
    let text = answer["text"].as_str().unwrap();
    assert!(
        text.contains("6.1 is 6.1.") && text.contains("6.12 is 6.12."),
        "{text}"
    );
    // Every figure the answer cites is the field of the line it names.
    let cites = answer["cites"].as_array().unwrap();
    assert!(!cites.is_empty(), "{answer}");
    for c in cites {
        let line = c["line"].as_u64().unwrap() as usize;
        let mut v = &lines[line - 1];
        for k in c["field"].as_str().unwrap().split('.') {
            v = &v[k];
        }
        assert_eq!(v.as_f64(), c["value"].as_f64(), "{c}");
    }
    // The kernels' own files were removed, and ./iolab-results made for them; the one file stays.
    assert!(!d.path().join("iolab-results").exists());
    let (code, cmp, err) = iolab(d.path(), &["compare", "--across", "kernel", "k.jsonl"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        cmp.contains("kernel 6.1.") && cmp.contains("vs 6.12."),
        "{cmp}"
    );
}

#[test]
fn a_sweep_on_the_host_and_a_guest_keeps_its_points_and_leaves_out_its_outputs_in_the_guest() {
    let _one = BOOTS.lock().unwrap_or_else(|p| p.into_inner());
    let name =
        "a_sweep_on_the_host_and_a_guest_keeps_its_points_and_leaves_out_its_outputs_in_the_guest";
    let args = [
        "sweep",
        "--kernels",
        "host,6.12",
        "--vary",
        "bs=4k,8k",
        "--target",
        "/dev/null",
        "--ops",
        "2000",
        "--out",
        "s.jsonl",
        "--md",
        "s.md",
    ];
    let (d, code, stdout, stderr) = iolab_guest(name, &args);
    if let Some(why) = cannot_boot(&stderr) {
        skip("guest", &format!("{name}: {why}"));
        return;
    }
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let text = std::fs::read_to_string(d.path().join("s.jsonl")).unwrap();
    let recs: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let points: Vec<(String, String)> = recs
        .iter()
        .filter(|r| r.get("point").is_some())
        .map(|r| {
            let p = &r["point"];
            (
                p["kernel"].as_str().unwrap().into(),
                p["bs"].as_str().unwrap().into(),
            )
        })
        .collect();
    let want: Vec<(String, String)> = [
        ("host", "4k"),
        ("host", "8k"),
        ("6.12", "4k"),
        ("6.12", "8k"),
    ]
    .iter()
    .map(|(k, b)| (k.to_string(), b.to_string()))
    .collect();
    assert_eq!(points, want);
    let on_612 = recs
        .iter()
        .find(|r| r["point"]["kernel"] == "6.12")
        .unwrap();
    assert_eq!(on_612["result"]["host"]["emulated"], true);
    // The side-by-side tables went to --md here; each kernel's own run wrote no --md of its own.
    let md = std::fs::read_to_string(d.path().join("s.md")).unwrap();
    assert!(
        md.contains("6.12*") && md.contains("System calls / context switches per op"),
        "{md}"
    );
    let names: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        names.len(),
        2,
        "s.jsonl and s.md, no iolab-results made for nothing: {names:?}"
    );
}
