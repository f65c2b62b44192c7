//! Stream targets (issue: every method worth comparing, item 4): `--target pipe|socketpair|tcp`, with
//! iolab's peer thread at the other end counting the bytes, compared across every method that can use a
//! stream (write(), writev, stdio, epoll, io_uring, splice, sendfile), in both directions; methods that
//! cannot use a stream are refused with the reason.

mod common;
use common::*;

const STREAMS: [&str; 3] = ["pipe", "socketpair", "tcp"];

fn peer_bytes(r: &serde_json::Value) -> u64 {
    u64_of(r, &["target", "peer", "bytes"])
}

#[test]
fn every_stream_method_delivers_every_byte_to_the_peer() {
    let methods: &[(&str, &[&str])] = &[
        ("sync", &[]),
        ("vectored", &["--iovecs", "3"]),
        ("stdio", &[]),
        ("epoll", &[]),
        ("io_uring", &[]),
        ("io_uring", &["--qd", "8", "--batch", "4"]),
        ("io_uring", &["--fixed-files", "--fixed-bufs", "--qd", "4"]),
        ("splice", &[]),
        ("sendfile", &[]),
    ];
    for t in STREAMS {
        for (m, extra) in methods {
            for bs in ["4k", "100000"] {
                let mut args = vec!["--method", m, "--target", t, "--ops", "3000", "--bs", bs];
                args.extend_from_slice(extra);
                let r = run_json(&args);
                let bytes = u64_of(&r, &["bytes"]);
                println!(
                    "{t:10} {m:9} {extra:?} bs {bs}: {:.0} ns/op, {} syscalls by the method, peer received {}",
                    f64_of(&r, &["ns_per_op"]),
                    r["syscalls"]["method_count"],
                    peer_bytes(&r)
                );
                assert_eq!(u64_of(&r, &["ops"]), 3000, "{t} {m} {extra:?}");
                assert_eq!(bytes, 3000 * u64_of(&r, &["spec", "bs"]));
                assert_eq!(
                    peer_bytes(&r),
                    bytes,
                    "{t} {m} {extra:?} bs {bs}: every byte arrived"
                );
            }
        }
    }
}

#[test]
fn reads_from_a_stream_get_whole_blocks() {
    for t in STREAMS {
        for (m, extra) in [
            ("sync", &[][..]),
            ("vectored", &[][..]),
            ("stdio", &[][..]),
            ("epoll", &[][..]),
            ("io_uring", &["--qd", "4"][..]),
        ] {
            // 100000-byte blocks do not fit a 64 KiB pipe: the reader must assemble them from parts.
            let mut args = vec![
                "--method", m, "--target", t, "--op", "read", "--ops", "2000", "--bs", "100000",
            ];
            args.extend_from_slice(extra);
            let r = run_json(&args);
            assert_eq!(u64_of(&r, &["ops"]), 2000, "{t} {m}");
            assert!(
                peer_bytes(&r) >= u64_of(&r, &["bytes"]),
                "{t} {m}: the peer sent at least what was read"
            );
        }
    }
}

#[test]
fn epoll_counts_its_waits_and_the_kernel_agrees() {
    // Writes of 1 MiB into a 64 KiB pipe cannot go in one call: the thread writes what fits, gets EAGAIN,
    // waits in epoll_wait, and goes on. The kernel's count of write calls is at most iolab's count of
    // calls (which adds the epoll_waits) and at least one per op.
    let r = run_json(&[
        "--method", "epoll", "--target", "pipe", "--ops", "300", "--bs", "1m",
    ]);
    let calls = u64_of(&r, &["syscalls", "method_count"]);
    let syscw = u64_of(&r, &["syscalls", "kernel_rw", "syscw"]);
    println!("epoll 1 MiB into a pipe: {calls} calls by iolab, kernel saw {syscw} writes, 300 ops");
    assert!(syscw > 300, "blocks took several writes each");
    assert!(calls > syscw, "the waits are counted too");
    assert_eq!(peer_bytes(&r), 300 << 20);
}

#[test]
fn what_cannot_use_a_stream_is_refused_with_the_reason() {
    for (args, flag, words) in [
        (
            &["--method", "psync", "--target", "pipe"][..],
            "--method",
            "ESPIPE",
        ),
        (
            &["--method", "aio", "--target", "tcp"][..],
            "--method",
            "ESPIPE",
        ),
        (
            &["--method", "mmap", "--target", "socketpair"][..],
            "--method",
            "mapped",
        ),
        (
            &["--method", "copy_file_range", "--target", "pipe"][..],
            "--method",
            "regular files",
        ),
        (
            &["--method", "sync", "--target", "pipe", "--verify"][..],
            "--verify",
            "peer counts",
        ),
        (
            &["--method", "sync", "--target", "pipe", "--direct"][..],
            "--direct",
            "O_DIRECT",
        ),
        (
            &["--method", "sync", "--target", "tcp", "--fsync", "end"][..],
            "--fsync",
            "nothing to sync",
        ),
        (
            &["--method", "epoll", "--target", "/dev/null"][..],
            "--method",
            "pipe",
        ),
    ] {
        let mut a = vec!["run"];
        a.extend_from_slice(args);
        let r = iolab(&a);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains(flag) && r.stderr.contains(words),
            "{args:?}: {}",
            r.stderr
        );
    }
}

#[test]
fn the_kernel_counts_the_same_writes_on_a_stream() {
    // The counting pass (here of the whole workload) builds its own streams and peers. In a write run only
    // the method writes (the peer reads), so the kernel's count of write(2) calls is the method's.
    let r = run_json_counted(&[
        "--method",
        "sync",
        "--target",
        "socketpair",
        "--ops",
        "5000",
        "--count",
        "full",
    ]);
    assert_eq!(peer_bytes(&r), 5000 * 4096);
    let by_name = r["kernel"]["syscalls_by_name"].as_array().cloned();
    let Some(by_name) = by_name else {
        return skip(
            "tracepoints",
            &format!("no per-syscall breakdown here: {}", r["kernel"]["notes"]),
        );
    };
    let writes = by_name
        .iter()
        .find(|p| p[0] == "write")
        .map(|p| p[1].as_u64().unwrap())
        .unwrap_or(0);
    println!("kernel: {writes} write(2) calls for 5000 ops");
    assert!(
        (5000..5100).contains(&writes),
        "{writes} writes for 5000 ops"
    );
}

/// `--target tcp:ADDR:PORT`: a peer iolab does not run (here a listener of the test's own, on loopback):
/// the bytes its TCP acknowledged are the run's peer bytes, and they are what the listener read.
#[test]
fn a_remote_tcp_peer_acknowledges_every_byte_written() {
    use std::io::Read;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // Each thread of the run connects once; each connection is read at once (a writer blocks otherwise).
    let drained = std::thread::spawn(move || {
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let (mut c, _) = listener.accept().unwrap();
                std::thread::spawn(move || {
                    let (mut buf, mut total) = (vec![0u8; 1 << 20], 0u64);
                    while let Ok(n @ 1..) = c.read(&mut buf) {
                        total += n as u64;
                    }
                    total
                })
            })
            .collect();
        readers.into_iter().map(|r| r.join().unwrap()).sum::<u64>()
    });
    let target = format!("tcp:127.0.0.1:{port}");
    let r = run_json(&[
        "--method",
        "sync",
        "--target",
        &target,
        "--ops",
        "3000",
        "--bs",
        "64k",
        "--threads",
        "2",
    ]);
    let written = u64_of(&r, &["bytes"]);
    assert_eq!(written, 3000 * 65536, "{}", r["spec"]);
    assert_eq!(peer_bytes(&r), written, "{}", r["target"]);
    assert_eq!(r["target"]["peer"]["remote"], format!("127.0.0.1:{port}"));
    assert_eq!(
        drained.join().unwrap(),
        3000 * 65536,
        "what the listener read"
    );
    // What a remote peer cannot be asked for, and a peer that is not there.
    refused_by(
        &["run", "--method", "sync", "--target", &target],
        &["--op", "read"],
        "--op",
        "cannot know what it sends",
    );
    refused_by(
        &["run", "--method", "sync", "--target", &target],
        &["--verify"],
        "--verify",
        "acknowledged are counted instead",
    );
    refused_by(
        &["run", "--method", "sync", "--target", "tcp:10.0.2"],
        &[],
        "--target",
        "tcp:ADDR:PORT",
    );
    refused_by(
        &["run", "--method", "sync", "--target", &target],
        &[],
        "--target",
        "ECONNREFUSED",
    );
}
