//! Workloads in fio's terms: access distributions for random offsets (`--distribution`), paced runs
//! (`--rate-iops`, `--rate`) and mixed reads and writes (`--op mixed --read-pct`). Each test checks what
//! landed or what the kernel counted, not what iolab says of itself.

mod common;
use common::*;

/// A usage error: exit 2, the flag named with the reason.
fn refused(args: &[&str], flag: &str, word: &str) {
    let mut a = vec!["run", "--ops", "10"];
    a.extend_from_slice(args);
    let r = iolab(&a);
    assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
    assert!(
        r.stderr.contains(flag) && r.stderr.contains(word),
        "{args:?}: {}",
        r.stderr
    );
}

/// 20,000 random 4 KiB writes over a 64 MiB file (16,384 blocks), verified: the distinct blocks the
/// read-back found.
fn distinct_blocks(
    dir: &tempfile::TempDir,
    name: &str,
    dist: &str,
    seed: &str,
) -> (u64, serde_json::Value) {
    let t = path_str(&file(dir, name));
    let v = run_json(&[
        "--target",
        &t,
        "--pattern",
        "rand",
        "--distribution",
        dist,
        "--ops",
        "20000",
        "--file-size",
        "64m",
        "--seed",
        seed,
        "--verify",
        "--count",
        "none",
    ]);
    assert_eq!(u64_of(&v, &["verify", "mismatches"]), 0, "{dist}: {v}");
    (u64_of(&v, &["verify", "blocks_checked"]), v)
}

/// zipf:1.2 sends most writes to a few blocks: the verified read-back finds far fewer distinct blocks
/// than a uniform plan's (which touches about 1 - e^-1.22 = 70% of them), every one with the bytes the
/// plan put there; the same seed replays the same blocks; the spec records the distribution.
#[test]
fn zipf_writes_land_on_few_blocks_and_replay_from_the_seed() {
    let dir = disk_dir();
    let (uniform, _) = distinct_blocks(&dir, "u.dat", "uniform", "7");
    let (zipf, v) = distinct_blocks(&dir, "z.dat", "zipf:1.2", "7");
    let (again, _) = distinct_blocks(&dir, "z2.dat", "zipf:1.2", "7");
    assert!(
        uniform > 10_000,
        "uniform touched {uniform} of 16,384 blocks"
    );
    assert!(
        zipf * 3 < uniform,
        "zipf:1.2 touched {zipf} blocks, uniform {uniform}"
    );
    assert_eq!(zipf, again, "the same seed replays the same blocks");
    assert_eq!(v["spec"]["distribution"]["kind"], "zipf", "{}", v["spec"]);
    assert_eq!(f64_of(&v, &["spec", "distribution", "theta"]), 1.2);
}

#[test]
fn distribution_refusals_name_the_flag() {
    refused(
        &["--distribution", "zipf:1.2"],
        "--distribution",
        "--pattern rand",
    );
    refused(
        &["--pattern", "rand", "--distribution", "zipf:1"],
        "--distribution",
        "not 1",
    );
    refused(
        &["--pattern", "rand", "--distribution", "pareto"],
        "--distribution",
        "needs its parameter",
    );
    refused(
        &[
            "--pattern",
            "rand",
            "--distribution",
            "zipf:1.2",
            "--method",
            "offload",
        ],
        "--distribution",
        "uniformly",
    );
}
