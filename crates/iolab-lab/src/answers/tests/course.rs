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
            .contains("They are 148x and 144x below this machine's O_DIRECT read latency (118.9 µs). An IOPOLL ring takes only O_DIRECT reads"),
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

/// The course report's seed figures of Tables 4-6.
const RING_SEED: [(&str, f64); 17] = [
    ("shared_8t_ops", 400000.0),
    ("shared_calls_early", 510000.0),
    ("shared_reqs_early", 1011349.0),
    ("shared_big_batches_early", 8069.0),
    ("shared_calls", 530000.0),
    ("shared_reqs", 1031349.0),
    ("shared_big_batches", 8069.0),
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

/// A ring of design `d` on 8 threads, QD 64 at batch 8, 400,000 ops at `ns` per op.
fn ring(d: RingDesign, ns: f64, waits: Option<u64>, inflight: f64) -> Row {
    let mut r = threads(row("io_uring", MethodKind::IoUring, ns), 8);
    r.design = Some(d);
    r.ops = 400_000;
    r.facts.wall_s = ns * 1e-9 * 400_000.0;
    r.facts.qd = 64;
    r.batch = 8;
    r.lock_contended = waits;
    r.mean_batch = Some(2.0);
    r.mean_inflight = Some(inflight);
    r.facts.uring_enters = Some(200_000);
    r.facts.uring_requests = Some(400_000);
    r
}

/// The shared submitter, its doorbells and worker sleeps in its record.
fn submitter(ns: f64, doorbells: u64, sleeps: u64) -> Row {
    let mut r = ring(RingDesign::SharedSubmitter, ns, None, 50.0);
    r.record = Some(std::sync::Arc::new(serde_json::json!({"result": {
        "uring": {"doorbells": doorbells, "worker_sleeps": sleeps}
    }})));
    r
}

/// The rows of the shared-ring suite: Table 5's three designs, one request in flight per thread, NOPs.
fn ring_rows() -> Vec<Row> {
    // One request in flight per thread, on the same device.
    let qd1 = |d: RingDesign, ns: f64, lat_ns: f64, waits: Option<u64>| {
        let mut r = ring(d, ns, waits, 1.0);
        r.step = "qd 1".into();
        r.facts.qd = 1;
        r.batch = 1;
        r.mean_batch = Some(1.0);
        r.lat_mean_ns = lat_ns;
        r
    };
    let one_thread = |mut r: Row| {
        r.threads = 1;
        r
    };
    let mut per = ring(RingDesign::PerThread, 1000.0, None, 60.0);
    per.lat_mean_ns = 500_000.0;
    let mut shared = ring(RingDesign::Shared, 2200.0, Some(200_000), 20.0);
    shared.mean_batch = Some(1.95);
    let mut nop_per = ring(RingDesign::PerThread, 100.0, None, 60.0);
    nop_per.nop_requests = true;
    nop_per.step = "nop".into();
    let mut nop_shared = ring(RingDesign::Shared, 300.0, Some(100_000), 50.0);
    nop_shared.nop_requests = true;
    nop_shared.step = "nop".into();
    nop_shared.mean_batch = Some(1.0);
    vec![
        per,
        shared,
        submitter(1100.0, 40_000, 80_000),
        qd1(RingDesign::PerThread, 4000.0, 30_000.0, None),
        qd1(RingDesign::Shared, 16000.0, 120_000.0, Some(300_000)),
        one_thread(qd1(RingDesign::PerThread, 20000.0, 20_000.0, None)),
        one_thread(qd1(RingDesign::Shared, 25000.0, 25_000.0, Some(0))),
        nop_per,
        nop_shared,
    ]
}

#[test]
fn shared_ring_lost() {
    let rows = ring_rows();
    let r = answer("shared_ring_lost", &RING_SEED, &rows, &[], &[]);
    for want in [
        "s, batch 8: per-thread rings 1,000,000 IOPS (2.0 requests per submission, 60.0 in flight); the shared ring 0.45x that (454,545 IOPS; 1.9 requests per submission, 0.50 mutex waits per op, 20.0 in flight); the shared submitter 0.91x that (909,091 IOPS; 2.0 requests per submission, 0.10 doorbells and 0.20 worker sleeps per op, 50.0 in flight).",
        "nop, batch 8: per-thread rings 10,000,000 IOPS",
        // Threads are named where the step runs several thread counts.
        "qd 1, 1 thread, batch 1: per-thread rings 50,000 IOPS",
        "The shared ring lost most on qd 1, 8 threads, batch 1: 0.25x: its threads queued on the mutex (0.75 waits per op)",
        "The shared submitter (one thread owns the ring; workers hand it requests through lock-free queues) made more IOPS than the mutex-shared ring in 1 of 1 comparisons.",
        "the report's shared ring kept 1.0 request in flight at 1 thread and 7.7 at 8, its per-thread rings 64 and 484",
        "In this run, 8 threads with one request in flight each: 1.0 in flight, 250,000 IOPS at 30.0 µs mean latency, against 60 in flight, 1,000,000 IOPS at 500.0 µs with QD 64: 0.25x the IOPS at 0.060x the latency, the report's shape",
        // Table 6 from the rows: each run's own counts, batch 1 apart (one request per call by construction).
        "the shared ring of s, batch 8 made 200,000 io_uring_enter calls, those that only waited for completions included, carrying 400,000 requests for its 400,000 ops): requests per submission, the shared ring against per-thread rings: s, batch 8: 1.9 against 2.0; nop, batch 8: 1.0 against 2.0.",
        "The shared ring's batches were one request per call on nop, batch 8, not on s, batch 8.",
        // The report's counters are cumulative: no per-run figure but the difference of two lines.
        "its late shared-ring line counts 1,031,349 requests where its eight-thread run made 400,000 ops",
        "(1,031,349 / 530,000 = 1.95 printed as 1 for the shared ring, 1,083,424 / 540,000 = 2.01 printed as 2 for per-thread rings), so neither is a figure of one run",
        "from 510,000 to 530,000 calls the requests grew by 20,000 for 20,000 calls, 1.00 per call, big batches unchanged at 8,069",
        "over that window its batches were one request per call",
    ] {
        assert!(r.text.contains(want), "{want}\n{}", r.text);
    }
    for gone in ["over the whole run", "as the report says"] {
        assert!(!r.text.contains(gone), "{gone}\n{}", r.text);
    }
    assert_eq!(r.status, Status::Answered, "{r:?}");
    // Every shared batch one per call: a collapse, said as the report says; none: said too.
    let mut ones = rows.clone();
    ones[1].mean_batch = Some(1.0);
    let r = answer("shared_ring_lost", &RING_SEED, &ones, &[], &[]);
    assert!(
        r.text.contains("one request per call in every comparison: they collapsed to one here, as the report says"),
        "{}",
        r.text
    );
    let mut none = rows.clone();
    none[8].mean_batch = Some(2.0);
    let r = answer("shared_ring_lost", &RING_SEED, &none, &[], &[]);
    assert!(
        r.text.contains(
            "collapsed to one in none of them, nor were they smaller than per-thread rings'"
        ),
        "{}",
        r.text
    );
    // With repeated runs, each comparison says whether it is beyond the noise.
    let mut noisy = rows.clone();
    for (r, (lo, hi)) in noisy.iter_mut().zip([(900.0, 1100.0), (2000.0, 2400.0)]) {
        r.spread = Some(crate::findings_compare::Spread {
            runs: 3,
            low_ns: lo,
            high_ns: hi,
        });
    }
    let r = answer("shared_ring_lost", &RING_SEED, &noisy, &[], &[]);
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
    let r = answer("shared_ring_lost", &RING_SEED, &noisy, &[], &[]);
    assert!(
        r.text.contains(
            "no shared design made less than 0.83x per-thread rings' IOPS beyond the noise"
        ),
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
    assert!(
        r.text.contains("never made less than 0.83x")
            || r.text.contains("no shared design made less than 0.83x"),
        "{}",
        r.text
    );
    assert!(r.needs.unwrap().contains("CPU-bound target"));
    assert_eq!(empty("shared_ring_lost").status, Status::NotHere);
}

#[test]
fn the_shared_submitter_losing_most_is_said_with_its_wakeups() {
    let rows = [
        ring(RingDesign::PerThread, 1000.0, None, 60.0),
        ring(RingDesign::Shared, 1100.0, Some(1000), 55.0),
        submitter(3000.0, 200_000, 300_000),
    ];
    let r = answer("shared_ring_lost", &RING_SEED, &rows, &[], &[]);
    for want in [
        "The shared submitter lost most on s, batch 8: 0.33x: its workers slept 0.75 times per op waiting for their completions and rang the submitter's doorbell 0.50 times per op",
        "made more IOPS than the mutex-shared ring in 0 of 1 comparisons; not on s, batch 8 (0.37x the mutex's IOPS)",
    ] {
        assert!(r.text.contains(want), "{want}\n{}", r.text);
    }
}

/// A row of the uring suite's future-work steps: `iops` over one second, `lat_us` mean latency.
fn future_row(step: &str, kind: MethodKind, n: u32, qd: u32, iops: u64, lat_us: f64) -> Row {
    let mut r = threads(row("w", kind, 1.0), n);
    r.step = step.into();
    r.facts.qd = qd;
    r.batch = qd;
    r.ops = iops;
    r.lat_mean_ns = lat_us * 1e3;
    r.cpu_s = 0.5;
    r
}

const SWEEP: &str = "QD sweep: io_uring, 8 threads, batch = QD";

/// A point of the QD sweep at batch = QD: IOPS, mean latency, io_uring_enter per op, requests in flight.
fn sweep(qd: u32, iops: u64, lat: f64, enters: f64, inflight: f64) -> Row {
    let mut r = future_row(SWEEP, MethodKind::IoUring, 8, qd, iops, lat);
    r.calls_per_op = Some(enters);
    r.mean_inflight = Some(inflight);
    r.cpus = 2;
    r
}

#[test]
fn future_work() {
    let equal = "Equal requests in flight: sync threads against one io_uring's depth";
    let mut rows = vec![
        sweep(1, 40_000, 190.0, 1.0, 8.0),
        sweep(8, 70_000, 900.0, 0.2, 60.0),
        sweep(16, 71_000, 1_800.0, 0.1, 120.0),
        sweep(128, 70_500, 14_500.0, 0.02, 1000.0),
        future_row(equal, MethodKind::Psync, 8, 1, 65_000, 120.0),
        future_row(equal, MethodKind::IoUring, 1, 8, 54_000, 140.0),
        future_row(equal, MethodKind::Psync, 32, 1, 66_000, 480.0),
        future_row(equal, MethodKind::IoUring, 1, 32, 67_000, 470.0),
    ];
    for r in rows.iter_mut().filter(|r| r.step.starts_with("Equal")) {
        r.batch = 1;
    }
    let r = answer("future_work", &[], &rows, &[], &[]);
    assert_eq!(r.status, Status::Answered, "{}", r.text);
    for want in [
        "The QD sweep (4 KiB random reads from /dev/null (O_DIRECT), 8 threads on 2 CPUs, io_uring at batch = QD on every point, the report's setting: up to the whole depth per io_uring_enter): QD 1: 40,000 IOPS at 190.0 µs, 1.00 io_uring_enter per op, 8.0 in flight; QD 8: 70,000 IOPS",
        "IOPS rose from QD 1 to QD 8 (1.8x), with more requests in flight (8.0 to 60.0); then held from QD 8 to QD 128 (1.0x), while requests in flight went from 60.0 to 1000.0 and the mean latency from 900.0 µs to 14.50 ms: at one rate, more in flight is a longer wait (Little's law).",
        "8 in flight: 8 pread() threads made 65,000 IOPS (7.7 µs CPU per op), one io_uring thread at QD 8 made 54,000 (0.83x pread()'s, 9.3 µs CPU per op)",
        "32 in flight: 32 pread() threads made 66,000 IOPS",
        "made 67,000 (1.0x pread()'s, 7.5 µs CPU per op), a tie",
        "Of 2 totals, io_uring made more IOPS at 0, fewer at 1 and tied at 1; it used less CPU per op at 1: one thread",
    ] {
        assert!(r.text.contains(want), "{want}\n{}", r.text);
    }
    // A sweep still rising at its deepest point says so; one half alone is partly answered.
    let rising = vec![
        sweep(1, 10_000, 100.0, 1.0, 8.0),
        sweep(8, 60_000, 130.0, 0.2, 60.0),
    ];
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

#[test]
fn a_sweep_whose_iops_fell_says_so_and_why_from_its_counters() {
    // The run: QD 128 made 0.40x QD 16's IOPS; here the punts and the CPU per op rose with it.
    let mut deep = sweep(128, 35_500, 28_000.0, 0.02, 1000.0);
    deep.facts.punted_fraction = Some(0.45);
    deep.facts.iowq_cpu_s = 0.4;
    deep.cpu_s = 0.9;
    let mut mid = sweep(16, 88_000, 1_400.0, 0.1, 120.0);
    mid.facts.punted_fraction = Some(0.0);
    let mut one = sweep(1, 40_000, 190.0, 1.0, 8.0);
    one.facts.punted_fraction = Some(0.0);
    let rows = vec![one.clone(), mid.clone(), deep.clone()];
    let r = answer("future_work", &[], &rows, &[], &[]);
    for want in [
        "IOPS rose from QD 1 to QD 16 (2.2x)",
        "then fell from QD 16 to QD 128 (0.40x): the kernel punted more of its requests to io-wq workers (0% to 45%): a punted read waits for a worker thread to issue it; io-wq workers used more CPU per op (0.0 ns to 11.3 µs); each op cost more CPU (CPU per op 5.7 µs to 25.4 µs); requests in flight went from 120.0 to 1000.0 and the mean latency from 1.40 ms to 28.00 ms",
    ] {
        assert!(r.text.contains(want), "{want}\n{}", r.text);
    }
    assert!(!r.text.contains("Little's law"), "{}", r.text);
    assert!(!r.text.contains("still grew"), "{}", r.text);
    // No counter rose with the fall: the rows do not say why, and the ones that did not are named.
    let mut flat = deep.clone();
    flat.facts.punted_fraction = Some(0.0);
    flat.facts.iowq_cpu_s = 0.0;
    flat.cpu_s = 0.5 * 35_500.0 / 88_000.0;
    flat.mean_inflight = Some(118.0);
    let r = answer(
        "future_work",
        &[],
        &[one.clone(), mid.clone(), flat],
        &[],
        &[],
    );
    assert!(
        r.text.contains("fell from QD 16 to QD 128 (0.40x): no counter these rows carry rose with the fall (io_uring_enter per op 0.10 to 0.02, punted to io-wq 0% to 0%, CPU per op 5.7 µs to 5.7 µs): the rows do not say why; the deeper queue put no more requests in flight (120.0 to 118.0)"),
        "{}",
        r.text
    );
    // The batch-1 line beside it, and Table 1's row at the same depth.
    let b1 = |qd: u32, iops: u64, enters: f64| {
        let mut r = sweep(qd, iops, 1000.0, enters, 100.0);
        r.step =
            "Queue depths at batch 1: io_uring, 8 threads, one request per io_uring_enter".into();
        r.batch = 1;
        r
    };
    let mut t1 = sweep(128, 93_300, 10_000.0, 0.05, 900.0);
    t1.step = "Table 1: io_uring, 8 threads, QD128".into();
    t1.batch = 32;
    let rows = vec![
        one,
        mid,
        deep,
        b1(16, 60_000, 1.0),
        b1(128, 35_000, 1.0),
        t1,
    ];
    let r = answer("future_work", &[], &rows, &[], &[]);
    for want in [
        "At batch 1 (one request per io_uring_enter), the second line: QD 16: 60,000 IOPS, 1.00 io_uring_enter per op, 100.0 in flight (0.68x batch = QD's); QD 128: 35,000 IOPS",
        "Batch = QD made more IOPS at 1 of 2 depths, fewer at 0 and tied at 1.",
        "Table 1's io_uring row, at the same depth with batch 32, made 93,300 IOPS, 2.6x the sweep's: the two differ in the batch (32 against 128) and in when they ran.",
    ] {
        assert!(r.text.contains(want), "{want}\n{}", r.text);
    }
}
