//! `--profile`: where the CPU time goes (issue: a kernel profile of any run). A buffered 1 MiB write to a
//! file on the disk filesystem is bound by the copy from user memory into the page cache; the same writes
//! with O_DIRECT copy nothing; io_uring's buffered writes run in io-wq workers.

mod common;
use common::*;

/// The run's profile, or `None` (with the reason printed) where sampling is not possible here.
fn profile(r: &serde_json::Value) -> Option<&serde_json::Value> {
    let p = &r["profile"];
    assert!(p.is_object(), "a profiled run has a profile: {r}");
    if p["event"] == "none" {
        skip("sampling", &format!("unavailable here: {}", p["notes"]));
        return None;
    }
    Some(p)
}

fn group_share(p: &serde_json::Value, name: &str) -> f64 {
    p["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == name)
        .map_or(0.0, |g| g["share"].as_f64().unwrap())
}

/// The first `n` kernel functions by self share.
fn top_kernel(p: &serde_json::Value, n: usize) -> Vec<String> {
    p["top_self"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kernel"] == true)
        .take(n)
        .map(|f| f["name"].as_str().unwrap().to_string())
        .collect()
}

fn is_copy(name: &str) -> bool {
    ["copy", "rep_movs", "memcpy", "memmove"]
        .iter()
        .any(|c| name.contains(c))
}

/// A directory on the disk filesystem (ext4 here), as the issue asks.
fn var_tmp() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("iolab-profile-")
        .tempdir_in("/var/tmp")
        .expect("/var/tmp is writable")
}

fn write_1m(dir: &tempfile::TempDir, extra: &[&str]) -> serde_json::Value {
    let f = path_str(&file(dir, "w.dat"));
    let mut a = vec![
        "--method",
        "psync",
        "--bs",
        "1m",
        "--size",
        "512m",
        "--target",
        &f,
        "--profile",
    ];
    a.extend_from_slice(extra);
    run_json(&a)
}

#[test]
fn buffered_1m_writes_copy_from_user_and_direct_ones_do_not() {
    let dir = var_tmp();
    let buffered = write_1m(&dir, &[]);
    let Some(p) = profile(&buffered) else { return };
    assert_eq!(p["pass"], "separate");
    assert!(p["samples"].as_u64().unwrap() >= 50, "{p}");
    if top_kernel(p, 1).is_empty() {
        skip(
            "sampling",
            &format!("no kernel samples here: {}", p["notes"]),
        );
        return;
    }
    let top = top_kernel(p, 5);
    assert!(
        top.iter().any(|f| is_copy(f)),
        "a copy-from-user function among the top kernel functions: {top:?}"
    );
    let copy = group_share(p, "copy to/from user");
    // About 100 samples of a pass whose ext4 delayed allocation work varies: the copy share of one run
    // alone ranged 17-45% on the development VM, so the test asks for a tenth (O_DIRECT's is nothing).
    assert!(copy > 0.1, "copy share of a buffered 1 MiB write: {copy}");
    // The finding says "copy-bound" where copying is 30% or more of the kernel's samples: the test holds
    // the finding to the figures the record gives, whichever side of the line they fall.
    let kernel: f64 = p["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["kernel"] == true)
        .map(|g| g["share"].as_f64().unwrap())
        .sum();
    let bound = copy / kernel >= 0.3;
    assert_eq!(
        rules(&buffered).contains(&"profile_copy_bound".to_string()),
        bound,
        "copy {copy:.3} of kernel {kernel:.3}: {}",
        buffered["findings"]
    );
    if !bound {
        println!(
            "copy {copy:.3} of kernel {kernel:.3}: below the finding's 30%, no finding (checked)"
        );
    }
    let folded = p["folded"].as_array().unwrap();
    assert!(folded
        .iter()
        .any(|l| l.as_str().unwrap().contains("generic_perform_write")));

    let direct = write_1m(&dir, &["--direct"]);
    let d = profile(&direct).unwrap();
    let dcopy = group_share(d, "copy to/from user");
    assert!(
        dcopy < copy / 2.0 && dcopy < 0.1,
        "O_DIRECT copies much less: {dcopy} against {copy} buffered"
    );
    assert!(group_share(d, "block layer and driver") > 0.0, "{d}");
    println!("copy share: buffered {copy:.3}, O_DIRECT {dcopy:.3}");
}

#[test]
fn inline_profile_says_it_sampled_the_timed_pass() {
    let r = run_json(&[
        "--method",
        "psync",
        "--target",
        "/dev/null",
        "--bs",
        "4k",
        "--ops",
        "300k",
        "--profile",
        "inline",
        "--profile-hz",
        "499",
    ]);
    let Some(p) = profile(&r) else { return };
    assert_eq!(p["pass"], "inline");
    assert_eq!(p["frequency_hz"], 499);
    assert!(p["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains("--profile inline")));
    assert!(rules(&r).contains(&"profile_inline_perturbs".to_string()));
}

#[test]
fn io_uring_buffered_writes_are_sampled_in_io_wq_workers() {
    let dir = var_tmp();
    let f = path_str(&file(&dir, "u.dat"));
    let r = run_json(&[
        "--method",
        "io_uring",
        "--bs",
        "1m",
        "--size",
        "256m",
        "--target",
        &f,
        "--profile",
    ]);
    let Some(p) = profile(&r) else { return };
    let folded = p["folded"].as_array().unwrap();
    let wq: u64 = folded
        .iter()
        .filter_map(|l| l.as_str().unwrap().strip_prefix("iou-wrk;"))
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum();
    assert!(
        wq > 0,
        "io-wq workers (iou-wrk) appear in the folded stacks: {:?}",
        &folded[..folded.len().min(5)]
    );
    println!(
        "io-wq samples {wq} of {}; findings {:?}",
        p["samples"],
        rules(&r)
    );
}

#[test]
fn bad_profile_values_name_the_flag() {
    let null = ["run", "--target", "/dev/null", "--ops", "10"];
    let offload = [
        "run",
        "--method",
        "offload",
        "--target",
        "/dev/shm/iolab-prof-x.dat",
        "--ops",
        "10",
    ];
    for (base, args, flag) in [
        (&null[..], &["--profile", "sometimes"][..], "--profile"),
        (&null, &["--profile-hz", "0"][..], "--profile-hz"),
        (&null, &["--profile-hz", "20000"][..], "--profile-hz"),
        (&offload[..], &["--profile"][..], "--profile"),
    ] {
        let mut a = base.to_vec();
        a.extend_from_slice(args);
        let r = iolab(&a);
        assert_eq!(r.code, 2, "{a:?}: {}", r.stderr);
        assert!(
            r.stderr.starts_with(&format!("iolab: {flag}:")),
            "{a:?}: {}",
            r.stderr
        );
    }
}

#[test]
fn without_privilege_the_profile_says_what_is_missing() {
    let Some((out, _dir)) = iolab_as_nobody(&[
        "run",
        "--method",
        "psync",
        "--target",
        "/dev/null",
        "--ops",
        "200k",
        "--count",
        "none",
        "--profile",
        "--json",
        "-",
    ]) else {
        return;
    };
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let p = &r["profile"];
    let said = |v: &serde_json::Value| {
        v.as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let notes = said(&p["notes"]);
    let unsym = said(&p["unsymbolized"]);
    let kernel_named = top_kernel(p, 1).iter().any(|f| !f.starts_with('['));
    assert!(
        kernel_named
            || notes
                .iter()
                .any(|n| n.contains("kernel not sampled") || n.contains("sampling unavailable"))
            || unsym.iter().any(|n| n.contains("kernel symbols")),
        "either kernel frames are named or the profile says why not: {notes:?} {unsym:?}"
    );
    println!("as nobody: {notes:?} {unsym:?}");
}
