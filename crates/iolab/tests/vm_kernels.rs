//! `suite nowait --quick --kernels 6.1,6.12`: one suite on two Debian kernels under QEMU (TCG here, about
//! 15 s a boot once their parts are cached). Checks the records carry the kernel each point ran on, the
//! probe tables differ where the kernels do (io_uring's min_wait_usec is 6.12's, not 6.1's), the side-by-
//! side table and answer are printed with every cited figure found in its record, the kernels' own
//! files are gone, and `compare --across kernel` sets the two side by side.
//!
//! Where the guest cannot be built (not x86_64, no apt), or Debian's archive cannot be reached for a
//! kernel, the test prints "SKIPPED <name>: <reason>".

mod common;

use common::bin;
use serde_json::Value;
use std::process::Command;

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

/// Why the guests could not be had here, if iolab said so.
fn cannot_boot(stderr: &str) -> Option<&str> {
    stderr.lines().find(|l| {
        l.contains("cannot build the guest here") || (l.contains("apt-get") && l.contains("failed"))
    })
}

#[test]
fn a_suite_on_two_kernels_records_each_release_and_sets_them_side_by_side() {
    let name = "a_suite_on_two_kernels_records_each_release_and_sets_them_side_by_side";
    let d = tempfile::tempdir().unwrap();
    let args = [
        "suite",
        "nowait",
        "--quick",
        "--kernels",
        "6.1,6.12",
        "--out",
        "k.jsonl",
    ];
    let (code, stdout, stderr) = iolab(d.path(), &args);
    if let Some(why) = cannot_boot(&stderr) {
        println!("SKIPPED {name}: {why}");
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
    // What the probe found differs where the kernels do: min_wait_usec came with 6.12.
    let differ = side["differ"].as_array().unwrap();
    let min_wait = differ
        .iter()
        .find(|d| {
            d[0].as_str()
                .is_some_and(|n| n.starts_with("io_uring --min-wait ("))
        })
        .unwrap_or_else(|| panic!("{differ:?}"));
    assert_eq!(min_wait[1], serde_json::json!([false, true]), "{min_wait}");
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
    assert!(
        answer["text"].as_str().unwrap().contains("6.1 "),
        "{answer}"
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
    // The kernels' own files were removed; the one record file stays.
    let left: Vec<_> = std::fs::read_dir(d.path().join("iolab-results"))
        .map(|r| r.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
    let (code, cmp, err) = iolab(d.path(), &["compare", "--across", "kernel", "k.jsonl"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        cmp.contains("kernel 6.1.") && cmp.contains("vs 6.12."),
        "{cmp}"
    );
}
