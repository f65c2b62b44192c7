//! `--verify` must fail when the data is wrong: write a file, damage one byte / one block / the tail,
//! and check that verification finds exactly that.

use iolab_engine::measure::clock::calibrate;
use iolab_engine::spec::{RawSpec, Spec, Val};
use std::os::unix::fs::FileExt;

fn spec(path: &str, extra: &[(&str, &str)]) -> Spec {
    let mut raw = RawSpec::new()
        .with("target", path)
        .with("method", "psync")
        .with("ops", Val::Int(64))
        .with("seed", Val::Int(42))
        .with("keep", true)
        .with("overwrite", true)
        // The region the first run wrote, named, so that setting the target up again after the file
        // was cut short (as verify_now does) still expects all 64 blocks: without it an existing file's
        // writes stay within the file as it is.
        .with("file-size", Val::Int(64 * 4096));
    for (k, v) in extra {
        assert!(matches!(*k, "pattern" | "bs" | "threads"));
        raw.set(k, *v).unwrap();
    }
    raw.resolve().unwrap()
}

fn verify_now(s: &Spec, ops: &[u64]) -> iolab_engine::result::VerifyFigures {
    let t = iolab_engine::target::setup(s).unwrap();
    iolab_engine::verify::verify(s, &t, ops).unwrap()
}

#[test]
fn verify_finds_a_flipped_byte_a_misplaced_block_and_a_short_file() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let p = dir.path().join("v.dat");
    let ps = p.to_str().unwrap();
    let s = spec(ps, &[]);
    let r = iolab_engine::run::run(&s, &calibrate(5)).unwrap();
    assert_eq!(r.ops, 64);
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&p)
        .unwrap();
    assert_eq!(verify_now(&s, &[64]).mismatches, 0, "intact data passes");

    // One byte in the middle of block 10 (body, not a stamp).
    let mut b = [0u8; 1];
    f.read_at(&mut b, 10 * 4096 + 1000).unwrap();
    f.write_at(&[b[0] ^ 0x40], 10 * 4096 + 1000).unwrap();
    let v = verify_now(&s, &[64]);
    assert_eq!((v.blocks_checked, v.mismatches), (64, 1));
    assert_eq!(v.first_mismatch_offsets, vec![10 * 4096]);
    f.write_at(&b, 10 * 4096 + 1000).unwrap();

    // Block 3's content copied over block 4 (a misdirected write): only stamps tell them apart.
    let mut blk = vec![0u8; 4096];
    f.read_at(&mut blk, 3 * 4096).unwrap();
    let mut orig = vec![0u8; 4096];
    f.read_at(&mut orig, 4 * 4096).unwrap();
    f.write_at(&blk, 4 * 4096).unwrap();
    assert_eq!(verify_now(&s, &[64]).first_mismatch_offsets, vec![4 * 4096]);
    f.write_at(&orig, 4 * 4096).unwrap();

    // A torn block: its second sector zeroed.
    f.write_at(&[0u8; 512], 20 * 4096 + 512).unwrap();
    assert_eq!(
        verify_now(&s, &[64]).first_mismatch_offsets,
        vec![20 * 4096]
    );

    // Truncated file: the missing blocks are mismatches.
    f.set_len(60 * 4096).unwrap();
    let v = verify_now(&s, &[64]);
    assert_eq!(v.mismatches, 5, "blocks 20 and 60..63");

    // A different seed does not match anything.
    let other = RawSpec::new().with("seed", Val::Int(43));
    let s2 = spec(ps, &[]);
    let s2 = Spec {
        seed: other.resolve().unwrap().seed,
        ..s2
    };
    assert_eq!(verify_now(&s2, &[60]).mismatches, 60);
}

#[test]
fn verify_only_judges_blocks_that_were_written() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let p = dir.path().join("r.dat");
    let s = spec(
        p.to_str().unwrap(),
        &[("pattern", "rand"), ("threads", "2")],
    );
    let r = iolab_engine::run::run(&s, &calibrate(5)).unwrap();
    let done: Vec<u64> = r.per_thread.iter().map(|t| t.ops).collect();
    let v = verify_now(&s, &done);
    assert_eq!(v.mismatches, 0);
    assert!(
        v.blocks_checked < 64,
        "random writes with replacement leave some blocks unwritten"
    );
    // Claiming more ops than were done makes never-written blocks count, and they fail.
    let v = verify_now(&s, &[done[0] * 4, done[1] * 4]);
    assert!(v.mismatches > 0);
}
