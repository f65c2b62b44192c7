//! The course report's questions (He and Han): sync against io_uring, IOPOLL, Table 3's syscalls, the
//! shared ring; answered from made-up rows with the figures they used.

use super::*;

fn threads(mut r: Row, n: u32) -> Row {
    r.threads = n;
    r.facts.direct = true;
    r.facts.write = false;
    r.pattern = "rand".into();
    r.facts.bs = 4096;
    r.facts.wall_s = 1.0;
    r
}

#[test]
fn sync_won() {
    let mut s8 = threads(row("pread()", MethodKind::Psync, 40000.0), 8);
    s8.ops = 25_000;
    s8.lat_mean_ns = 320_000.0;
    let mut u8 = threads(
        row("io_uring (qd 128 batch 32)", MethodKind::IoUring, 16000.0),
        8,
    );
    u8.ops = 60_000;
    u8.facts.qd = 128;
    u8.mean_inflight = Some(74.0);
    u8.lat_mean_ns = 1_200_000.0;
    let mut s1 = threads(row("pread()", MethodKind::Psync, 119000.0), 1);
    s1.lat_mean_ns = 118_900.0;
    let seed = [("sync_8t_lat_us", 1.42), ("sync_1t_lat_us", 0.628)];
    let r = answer(
        "sync_won",
        &seed,
        &[s8.clone(), u8.clone(), s1.clone()],
        &[],
        &[],
    );
    for want in [
        "On the device (O_DIRECT), 4 KiB random reads from /dev/null (O_DIRECT), 8 threads: pread() made 25,000 IOPS at 320.0 µs mean latency, io_uring at QD 128 made 60,000 (2.4x pread()'s IOPS)",
        "by Little's law 74 / 60,000 IOPS = 1.23 ms per request in the kernel and the device, close to its measured latency",
        "In this run io_uring did not lose",
        "This machine's 4 KiB O_DIRECT read takes 118.9 µs on one thread",
        "189x less: they cannot have reached a device",
        "a read at or past the end of its file returns 0 bytes",
    ] {
        assert!(r.text.contains(want), "{want}\n{}", r.text);
    }
    // From the page cache sync wins: the report's Table 1.
    let cached = |mut r: Row, ops: u64, lat: f64| {
        r.facts.direct = false;
        r.ops = ops;
        r.lat_mean_ns = lat;
        r
    };
    let (cs, cu) = (
        cached(s8.clone(), 800_000, 1200.0),
        cached(u8.clone(), 270_000, 36_000.0),
    );
    let r = answer("sync_won", &seed, &[s8, u8, cs, cu, s1], &[], &[]);
    assert!(
        r.text
            .contains("So sync wins where every read is a page-cache hit (3.0x io_uring's IOPS"),
        "{}",
        r.text
    );
    assert!(
        r.text
            .contains("io_uring wins where reads reach the device (2.4x pread()'s IOPS)"),
        "{}",
        r.text
    );
    assert_eq!(empty("sync_won").status, Status::NotHere);
}

#[test]
fn iopoll_gain() {
    let mut s1 = threads(row("pread()", MethodKind::Psync, 119000.0), 1);
    s1.lat_mean_ns = 118_900.0;
    let refused = serde_json::json!({"point": {"step": "Table 2: io_uring IOPOLL, 1 thread, QD1"}, "error": "IOPOLL unsupported by this device/file (x): completions fail with EOPNOTSUPP (no poll queues); run without --iopoll"});
    let r = answer(
        "iopoll_gain",
        &[("interrupt_lat_us", 0.805), ("iopoll_lat_us", 0.823)],
        &[s1],
        &[refused],
        &[],
    );
    assert_eq!(r.status, Status::NotHere);
    assert!(
        r.text
            .contains("interrupt 0.805 µs, IOPOLL 0.823 µs per read (+2%)"),
        "{}",
        r.text
    );
    assert!(
        r.text
            .contains("148x below this machine's O_DIRECT read latency"),
        "{}",
        r.text
    );
    assert!(
        r.text
            .contains("In this run IOPOLL could not run: IOPOLL unsupported"),
        "{}",
        r.text
    );
    assert!(r.needs.unwrap().contains("no poll queues"));
    // Where it ran, the two are compared.
    let i = threads(
        row("io_uring (qd 1 batch 1)", MethodKind::IoUring, 100.0),
        1,
    );
    let mut p = i.clone();
    p.iopoll = true;
    let r = answer("iopoll_gain", &[], &[i.clone(), p.clone()], &[], &[]);
    assert_eq!(r.status, Status::Partly, "not proven polled: {r:?}");
    // A row proven polled (an NVMe disk with poll queues) is taken before one that fell back to
    // interrupts, beside the interrupt row on its own device.
    let mut fell_back = p.clone();
    fell_back.facts.iopoll = Some((Some(false), "NOT polled: vda".into()));
    let mut nvme_int = i.clone();
    nvme_int.place = "/dev/nvme0n1".into();
    nvme_int.lat_mean_ns = 200.0;
    let mut nvme_poll = nvme_int.clone();
    nvme_poll.iopoll = true;
    nvme_poll.lat_mean_ns = 150.0;
    nvme_poll.facts.iopoll = Some((Some(true), "completions were polled: nvme0n1".into()));
    let r = answer(
        "iopoll_gain",
        &[],
        &[i, fell_back, nvme_int, nvme_poll],
        &[],
        &[],
    );
    assert_eq!(r.status, Status::Answered, "{r:?}");
    assert!(
        r.text
            .contains("Polled for real: completions were polled: nvme0n1"),
        "{}",
        r.text
    );
    assert!(
        r.text
            .contains("interrupt 200.0 ns per read, IOPOLL 150.0 ns"),
        "{}",
        r.text
    );
    // The row the kernel accepted and completed by interrupt is said, not left out.
    assert!(
        r.text.contains("the kernel accepted IORING_SETUP_IOPOLL and completed the reads by interrupt, without an error (NOT polled: vda)"),
        "{}",
        r.text
    );
}

#[test]
fn syscall_reduction() {
    let mut s8 = threads(row("pread()", MethodKind::Psync, 40000.0), 8);
    s8.facts.syscalls_per_op = Some(1.03);
    let mut u8 = threads(row("io_uring", MethodKind::IoUring, 16000.0), 8);
    u8.facts.syscalls_per_op = Some(0.085);
    let seed = [
        ("sync_syscalls", 200165.0),
        ("uring_syscalls", 2741.0),
        ("sync_s", 9.326),
        ("uring_s", 0.197),
    ];
    let r = answer("syscall_reduction", &seed, &[s8, u8], &[], &[]);
    assert!(
        r.text
            .contains("pread() 1.030 system calls per op, io_uring 0.085 (92% fewer)"),
        "{}",
        r.text
    );
    assert!(
        r.text
            .contains("200,165 against 2,741 (99% fewer) under strace"),
        "{}",
        r.text
    );
    assert!(
        r.text.contains("sync take 47x io_uring's time"),
        "{}",
        r.text
    );
    assert_eq!(empty("syscall_reduction").status, Status::NotHere);
    // Table 3 as its own step: the kernel's totals over the same ops.
    let t3 = |mut r: Row, total: u64, calls: &[(&str, u64)], enters: Option<u64>| {
        r.step = "Table 3: counted".into();
        r.kernel_syscalls = Some(total);
        r.kernel_calls = calls.iter().map(|(n, c)| (n.to_string(), *c)).collect();
        r.counted_ops = Some(200_000);
        r.counted_enters = enters;
        r
    };
    let s3 = t3(
        threads(row("pread()", MethodKind::Psync, 40000.0), 8),
        200_072,
        &[("pread64", 200_000), ("futex", 56), ("other", 16)],
        None,
    );
    let u3 = t3(
        threads(row("io_uring", MethodKind::IoUring, 16000.0), 8),
        4_100,
        &[("io_uring_enter", 4_000), ("futex", 84)],
        Some(4_000),
    );
    let r = answer("syscall_reduction", &seed, &[s3, u3], &[], &[]);
    for want in [
        "Table 3 in this run, 200,000 ops on 8 threads, every system call counted by the kernel",
        "pread() 200,072 system calls (pread64 200,000, futex 56), io_uring 4,100 (io_uring_enter 4,000, futex 84), 98% fewer",
        "The kernel's io_uring_enter count (4,000) is iolab's own count of the calls it made (4,000), 50.0 requests per call",
        "200,165 against 2,741 (99% fewer) under strace",
    ] {
        assert!(r.text.contains(want), "{want}\n{}", r.text);
    }
}

#[test]
fn shared_ring_lost() {
    let ring = |d: RingDesign, ns: f64, waits: Option<u64>, inflight: f64| {
        let mut r = threads(row("io_uring", MethodKind::IoUring, ns), 8);
        r.design = Some(d);
        r.ops = 400_000;
        r.facts.wall_s = ns * 1e-9 * 400_000.0;
        r.facts.qd = 64;
        r.batch = 8;
        r.lock_contended = waits;
        r.mean_batch = Some(2.0);
        r.mean_inflight = Some(inflight);
        r
    };
    // One request in flight per thread, on the same device.
    let qd1 = |d: RingDesign, ns: f64, lat_ns: f64, waits: Option<u64>| {
        let mut r = ring(d, ns, waits, 1.0);
        r.step = "qd 1".into();
        r.facts.qd = 1;
        r.batch = 1;
        r.lat_mean_ns = lat_ns;
        r
    };
    let seed = [
        ("shared_calls_early", 510000.0),
        ("shared_reqs_early", 1011349.0),
        ("shared_calls", 530000.0),
        ("shared_reqs", 1031349.0),
        ("per_thread_calls", 540000.0),
        ("per_thread_reqs", 1083424.0),
        ("shared_1t_iops", 2815.39),
        ("shared_1t_lat_us", 354.79),
        ("shared_8t_iops", 11281.54),
        ("shared_8t_lat_us", 683.40),
        ("per_thread_1t_iops", 6125.20),
        ("per_thread_1t_lat_us", 10433.67),
        ("per_thread_8t_iops", 24970.39),
        ("per_thread_8t_lat_us", 19380.64),
    ];
    let mut per = ring(RingDesign::PerThread, 1000.0, None, 60.0);
    per.lat_mean_ns = 500_000.0;
    let mut nop_per = ring(RingDesign::PerThread, 100.0, None, 60.0);
    nop_per.nop_requests = true;
    nop_per.step = "nop".into();
    let mut nop_shared = ring(RingDesign::Shared, 300.0, Some(100_000), 50.0);
    nop_shared.nop_requests = true;
    nop_shared.step = "nop".into();
    let rows = [
        per,
        ring(RingDesign::Shared, 2200.0, Some(200_000), 20.0),
        qd1(RingDesign::PerThread, 4000.0, 30_000.0, None),
        qd1(RingDesign::Shared, 16000.0, 120_000.0, Some(300_000)),
        nop_per,
        nop_shared,
    ];
    let r = answer("shared_ring_lost", &seed, &rows, &[], &[]);
    for want in [
        "s, batch 8: the shared ring made 0.45x per-thread rings' IOPS (454,545 against 1,000,000; 0.50 mutex waits per op; 20.0 requests in flight against 60.0)",
        "nop, batch 8: the shared ring made 0.33x per-thread rings' IOPS",
        "The shared ring lost most on qd 1 (8 threads, batch 1): 0.25x: its threads queued on the mutex (0.75 waits per op)",
        "the report's shared ring kept 1.0 request in flight at 1 thread and 7.7 at 8, its per-thread rings 64 and 484",
        "In this run, 8 threads with one request in flight each: 1.0 in flight, 250,000 IOPS at 30.0 µs mean latency, against 60 in flight, 1,000,000 IOPS at 500.0 µs with QD 64: 0.25x the IOPS at 0.060x the latency",
        "1,031,349 / 530,000 = 1.95 requests per call for the shared ring over the whole run, against 1,083,424 / 540,000 = 2.01",
        // The report's late snapshots: 20,000 requests for 20,000 calls.
        "Between its snapshots at 510,000 and 530,000 calls the requests grew by 20,000 for 20,000 calls, 1.00 per call: late in the run its batches had collapsed to one",
    ] {
        assert!(r.text.contains(want), "{want}\n{}", r.text);
    }
    assert_eq!(r.status, Status::Answered, "{r:?}");
    // With repeated runs, each comparison says whether it is beyond the noise.
    let mut noisy = rows.clone();
    for (r, (lo, hi)) in noisy.iter_mut().zip([(900.0, 1100.0), (2000.0, 2400.0)]) {
        r.spread = Some(crate::findings_compare::Spread {
            runs: 3,
            low_ns: lo,
            high_ns: hi,
        });
    }
    let r = answer("shared_ring_lost", &seed, &noisy, &[], &[]);
    assert!(
        r.text.contains("(beyond the noise: over 3 and 3 runs the middle runs took 2.0-2.4 µs and 900.0 ns-1.1 µs per op, ranges apart)"),
        "{}",
        r.text
    );
    // Losses whose runs overlap are within the noise: none is called the largest.
    for r in noisy.iter_mut() {
        r.spread = Some(crate::findings_compare::Spread {
            runs: 3,
            low_ns: 10.0,
            high_ns: 1e9,
        });
    }
    let r = answer("shared_ring_lost", &seed, &noisy, &[], &[]);
    assert!(
        r.text
            .contains("never made less than 0.83x per-thread rings' IOPS beyond the noise"),
        "{}",
        r.text
    );
    // Where it did not lose on the device alone, the answer says what would show it.
    let even = [
        ring(RingDesign::PerThread, 1000.0, None, 60.0),
        ring(RingDesign::Shared, 1000.0, Some(0), 60.0),
    ];
    let r = answer("shared_ring_lost", &[], &even, &[], &[]);
    assert_eq!(r.status, Status::Partly);
    assert!(r.text.contains("never made less than 0.83x"), "{}", r.text);
    assert!(r.needs.unwrap().contains("CPU-bound target"));
    assert_eq!(empty("shared_ring_lost").status, Status::NotHere);
}

/// A row of the uring suite's future-work steps: `iops` over one second, `lat_us` mean latency.
fn future_row(step: &str, kind: MethodKind, n: u32, qd: u32, iops: u64, lat_us: f64) -> Row {
    let mut r = threads(row("w", kind, 1.0), n);
    r.step = step.into();
    r.facts.qd = qd;
    r.ops = iops;
    r.lat_mean_ns = lat_us * 1e3;
    r.cpu_s = 0.5;
    r
}

#[test]
fn future_work() {
    let sweep = |qd, iops, lat| {
        future_row(
            "QD sweep: io_uring, 8 threads",
            MethodKind::IoUring,
            8,
            qd,
            iops,
            lat,
        )
    };
    let equal = "Equal requests in flight: sync threads against one io_uring's depth";
    let rows = vec![
        sweep(1, 40_000, 190.0),
        sweep(8, 70_000, 900.0),
        sweep(16, 71_000, 1_800.0),
        sweep(128, 70_500, 14_500.0),
        future_row(equal, MethodKind::Psync, 8, 1, 65_000, 120.0),
        future_row(equal, MethodKind::IoUring, 1, 8, 54_000, 140.0),
        future_row(equal, MethodKind::Psync, 32, 1, 66_000, 480.0),
        future_row(equal, MethodKind::IoUring, 1, 32, 67_000, 470.0),
    ];
    let r = answer("future_work", &[], &rows, &[], &[]);
    assert_eq!(r.status, Status::Answered, "{}", r.text);
    for want in [
        "QD 1 40,000 IOPS at 190.0 µs, QD 8 70,000 IOPS at 900.0 µs, QD 16 71,000 IOPS",
        // QD 8 is within 5% of the best (71,000): the knee, not QD 16.
        "IOPS stopped growing at QD 8 (70,000 IOPS, within 5% of the most any depth made)",
        "from there to QD 128 the mean latency went from 900.0 µs to 14.50 ms (16x) for 1.0x the IOPS",
        "8 in flight: 8 pread() threads made 65,000 IOPS (7.7 µs CPU per op), one io_uring thread at QD 8 made 54,000 (0.83x pread()'s, 9.3 µs CPU per op)",
        "32 in flight: 32 pread() threads made 66,000 IOPS",
        "made 67,000 (1.0x pread()'s, 7.5 µs CPU per op), a tie",
        "Of 2 totals, io_uring made more IOPS at 0, fewer at 1 and tied at 1; it used less CPU per op at 1: one thread",
    ] {
        assert!(r.text.contains(want), "{want}\n{}", r.text);
    }
    // A sweep still rising at its deepest point says so; one half alone is partly answered.
    let rising = vec![sweep(1, 10_000, 100.0), sweep(8, 60_000, 130.0)];
    let r = answer("future_work", &[], &rising, &[], &[]);
    assert_eq!(r.status, Status::Partly);
    assert!(
        r.text
            .contains("IOPS still grew up to the deepest queue measured (QD 8)"),
        "{}",
        r.text
    );
    assert_eq!(empty("future_work").status, Status::NotHere);
}
