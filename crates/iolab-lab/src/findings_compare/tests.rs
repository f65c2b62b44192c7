use super::test_row as row;
use super::*;
use iolab_engine::measure::memcopy::sample;
use iolab_engine::sink_device::Personality;
use iolab_engine::spec::{MethodKind, RingDesign};

fn fired(rows: &mut [Row]) -> Vec<Compared> {
    compare(rows, &sample())
}

fn has(out: &[Compared], rule: &str) -> bool {
    out.iter().any(|c| c.rule == rule)
}

fn text<'a>(out: &'a [Compared], rule: &str) -> &'a str {
    &out.iter().find(|c| c.rule == rule).unwrap().text
}

fn uring(ns: f64) -> Row {
    let mut u = row("io_uring (SQPOLL, qd 64 batch 1)", MethodKind::IoUring, ns);
    u.facts.punted_fraction = Some(1.0);
    u.facts.ctx_switches_per_op = Some(2.0);
    u.facts.syscalls_per_op = Some(0.05);
    u.mean_batch = Some(1.0);
    u.design = Some(RingDesign::PerThread);
    u
}

#[test]
fn the_reference_is_write_else_the_fastest_never_the_floor() {
    let mut rows = vec![
        uring(300.0),
        row("write()", MethodKind::Sync, 600.0),
        row("nop", MethodKind::Nop, 5.0),
    ];
    rows[2].floor = true;
    mark_references(&mut rows);
    assert_eq!(
        rows.iter().map(|r| r.reference).collect::<Vec<_>>(),
        [false, true, false]
    );
    let mut rows = vec![uring(900.0), uring(300.0)];
    mark_references(&mut rows);
    assert!(rows[1].reference && !rows[0].reference);
}

#[test]
fn slower_than_reference() {
    let mut rows = vec![row("write()", MethodKind::Sync, 600.0), uring(2040.0)];
    let out = fired(&mut rows);
    let t = text(&out, "slower_than_reference");
    assert!(
        t.starts_with("io_uring (SQPOLL, qd 64 batch 1) took 3.4x write()'s time per op (2.0 µs vs 600.0 ns per op): 100% of its requests were punted to io-wq worker threads; 2.00 context switches per op"),
        "{t}"
    );
    // Within the ratio: nothing said.
    let mut rows = vec![row("write()", MethodKind::Sync, 600.0), uring(700.0)];
    assert!(!has(&fired(&mut rows), "slower_than_reference"));
    // Another target is another workload.
    let mut other = uring(2040.0);
    other.place = "/tmp/f".into();
    let mut rows = vec![row("write()", MethodKind::Sync, 600.0), other];
    assert!(!has(&fired(&mut rows), "slower_than_reference"));
}

#[test]
fn faster_than_reference() {
    let mut mm = row("mmap", MethodKind::Mmap, 100.0);
    mm.facts.syscalls_per_op = Some(0.0);
    mm.facts.page_faults_per_mib = Some(256.0);
    let mut rows = vec![row("write()", MethodKind::Sync, 600.0), mm.clone()];
    let out = fired(&mut rows);
    let t = text(&out, "faster_than_reference");
    assert!(
        t.starts_with("mmap took 0.17x write()'s time per op (100.0 ns vs 600.0 ns per op): 0.000 system calls per op against 1.000; it copies into a mapping and pays page faults instead of calls (256 per MiB)"),
        "{t}"
    );
    // A driver's buffer, faulted in before the timer (the sink driver's mapping): no faults are paid.
    let mut sink = mm.clone();
    sink.facts.page_faults_per_mib = Some(0.0);
    let mut rows = vec![row("write()", MethodKind::Sync, 600.0), sink];
    let out = fired(&mut rows);
    let t = text(&out, "faster_than_reference");
    assert!(
        t.contains(
            "it copies into a mapping already faulted in: no calls and 0 page faults per MiB"
        ) && !t.contains("pays page faults"),
        "{t}"
    );
    assert!(t.contains("100.0 ns of CPU per op"), "{t}");
    // A record that withholds its CPU per op (more CPU time than the span could hold): none is said.
    let mut withheld = mm.clone();
    withheld.cpu_withheld = true;
    let mut rows = vec![row("write()", MethodKind::Sync, 600.0), withheld];
    let out = fired(&mut rows);
    let t = text(&out, "faster_than_reference");
    assert!(!t.contains("of CPU per op"), "{t}");
    mm.facts.ns_per_op = 550.0;
    let mut rows = vec![row("write()", MethodKind::Sync, 600.0), mm];
    assert!(!has(&fired(&mut rows), "faster_than_reference"));
}

#[test]
fn batched_vs_single() {
    let mut b = uring(200.0);
    b.way = "io_uring (qd 64 batch 32)".into();
    b.mean_batch = Some(32.0);
    b.facts.syscalls_per_op = Some(0.03);
    let mut rows = vec![uring(2000.0), b.clone()];
    let t = text(&fired(&mut rows), "batched_vs_single").to_string();
    assert!(
        t.starts_with("io_uring (qd 64 batch 32) (32.0 requests per submission) took 0.10x the time of io_uring (SQPOLL, qd 64 batch 1) (1.0 per submission): batching paid"),
        "{t}"
    );
    // Without the kernel's counts no syscall figure is printed (it was "NaN syscalls per op").
    let mut uncounted = b.clone();
    uncounted.facts.syscalls_per_op = None;
    let mut rows = vec![uring(2000.0), uncounted];
    let t = text(&fired(&mut rows), "batched_vs_single").to_string();
    assert!(
        !t.contains("NaN")
            && t.contains("batching paid (the kernel's syscall counts were not taken)"),
        "{t}"
    );
    // At another queue depth the difference is the depth's: no batching verdict.
    let mut deeper = b.clone();
    deeper.facts.qd *= 128;
    let mut rows = vec![uring(2000.0), deeper];
    assert!(!has(&fired(&mut rows), "batched_vs_single"));
    b.mean_batch = Some(2.0);
    let mut rows = vec![uring(2000.0), b];
    assert!(!has(&fired(&mut rows), "batched_vs_single"));
}

#[test]
fn sink_personalities() {
    let on_sink = |p: Personality, ns: f64, share: f64| {
        let mut r = uring(ns);
        r.way = "io_uring (qd 64 batch 32)".into();
        r.place = format!("/dev/iolab_sink ({})", p.name());
        r.facts.sink = Some(findings::SinkFacts {
            log: false,
            personality: Some(p),
            worker_share: Some(share),
            disagree: vec![],
            ..Default::default()
        });
        r
    };
    let mut rows = vec![
        on_sink(Personality::Legacy, 40000.0, 1.0),
        on_sink(Personality::Nowait, 7000.0, 0.0),
    ];
    let t = text(&fired(&mut rows), "sink_personalities").to_string();
    assert!(
        t.starts_with("io_uring (qd 64 batch 32) on the legacy sink took 5.71x its time on the nowait sink (40000 vs 7000 ns/op): 100% of the legacy driver's calls came from io-wq workers against 0%"),
        "{t}"
    );
    // Two runs that behave alike (write() on both) say nothing.
    let mut rows = vec![
        on_sink(Personality::Legacy, 2000.0, 0.0),
        on_sink(Personality::Nowait, 2100.0, 0.0),
    ];
    assert!(!has(&fired(&mut rows), "sink_personalities"));
}

#[test]
fn logged_rows_are_set_only_beside_logged_rows() {
    let on_sink = |p: Personality, log: bool, mut r: Row| {
        r.target = format!("/dev/iolab_sink ({})", p.name());
        r.place = r.target.clone();
        r.facts.sink = Some(findings::SinkFacts {
            log,
            personality: Some(p),
            worker_share: Some(0.0),
            ..Default::default()
        });
        r
    };
    let write = |ns: f64| row("write()", MethodKind::Sync, ns);
    // Issue 52's rows: the logged legacy write() against the unlogged nowait one made "2.07x"; unlogged
    // against unlogged it is 1.19x, which says nothing.
    let mut rows = vec![
        on_sink(Personality::Legacy, false, write(3460.0)),
        on_sink(Personality::Legacy, true, write(6025.0)),
        on_sink(Personality::Nowait, false, write(2910.0)),
    ];
    assert!(!has(&fired(&mut rows), "sink_personalities"));
    // Logged on both sides, the personality is the one difference, and the cause is not put on io-wq.
    rows.push(on_sink(Personality::Nowait, true, write(2910.0)));
    let out = fired(&mut rows);
    assert_eq!(
        out.iter()
            .filter(|c| c.rule == "sink_personalities")
            .count(),
        1
    );
    let t = text(&out, "sink_personalities");
    assert!(
        t.starts_with("write(), logged on both, on the legacy sink took 2.07x its time on the nowait sink (6025 vs 2910 ns/op): 0% of the legacy driver's calls came from io-wq workers against 0% (no io-wq hand-off tells them apart"),
        "{t}"
    );
    // A logged io_uring row's reference is the logged write(), never the unlogged one.
    let mut rows = vec![
        on_sink(Personality::Legacy, false, write(700.0)),
        on_sink(Personality::Legacy, true, write(2700.0)),
        on_sink(Personality::Legacy, true, uring(9000.0)),
    ];
    let out = fired(&mut rows);
    let slower: Vec<&Compared> = out
        .iter()
        .filter(|c| c.rule == "slower_than_reference")
        .collect();
    assert_eq!(slower.len(), 1, "{out:?}");
    assert!(
        slower[0]
            .text
            .contains("took 3.3x write()'s time per op (9.0 µs vs 2.7 µs per op)")
            && slower[0].about == "4 B logged writes to /dev/iolab_sink (legacy)",
        "{:?}",
        slower[0]
    );
}

#[test]
fn shared_vs_own_ring() {
    let mut own = uring(1000.0);
    own.mean_batch = Some(2.0);
    own.mean_inflight = Some(60.0);
    let mut shared = own.clone();
    shared.way = "io_uring (shared ring, qd 64 batch 8)".into();
    shared.design = Some(RingDesign::Shared);
    shared.facts.ns_per_op = 2200.0;
    shared.lock_contended = Some(500);
    shared.mean_batch = Some(1.0);
    let mut rows = vec![own.clone(), shared.clone()];
    let t = text(&fired(&mut rows), "shared_vs_own_ring").to_string();
    assert!(
        t.starts_with("io_uring (shared ring, qd 64 batch 8) took 2.20x the time of per-thread rings (2.2 µs vs 1.0 µs per op): threads found its mutex taken 500 times (0.50 per op); 1.0 requests per submission against 2.0"),
        "{t}"
    );
    // Another queue depth or batch is another workload for this rule.
    let mut other = shared.clone();
    other.facts.qd = own.facts.qd * 64;
    let mut rows = vec![own.clone(), other];
    assert!(!has(&fired(&mut rows), "shared_vs_own_ring"));
    let mut other = shared.clone();
    other.batch = 64;
    let mut rows = vec![own.clone(), other];
    assert!(!has(&fired(&mut rows), "shared_vs_own_ring"));
    shared.facts.ns_per_op = 1050.0;
    let mut rows = vec![own, shared];
    assert!(!has(&fired(&mut rows), "shared_vs_own_ring"));
}

#[test]
fn repeated_rows_say_whether_a_difference_is_within_the_noise() {
    let spread = |low_ns: f64, high_ns: f64| {
        Some(Spread {
            runs: 5,
            low_ns,
            high_ns,
        })
    };
    let mut own = uring(1000.0);
    own.mean_batch = Some(2.0);
    let mut shared = own.clone();
    shared.way = "io_uring (shared ring, qd 64 batch 8)".into();
    shared.design = Some(RingDesign::Shared);
    shared.facts.ns_per_op = 1300.0;
    // One run each: nothing said about noise.
    let mut rows = vec![own.clone(), shared.clone()];
    let t = text(&fired(&mut rows), "shared_vs_own_ring").to_string();
    assert!(!t.contains("noise"), "{t}");
    // Middle runs that overlap: within the noise.
    own.spread = spread(900.0, 1250.0);
    shared.spread = spread(1200.0, 1400.0);
    let mut rows = vec![own.clone(), shared.clone()];
    let t = text(&fired(&mut rows), "shared_vs_own_ring").to_string();
    assert!(
        t.ends_with("(within the noise: over 5 and 5 runs the middle runs took 1.2-1.4 µs and 900.0 ns-1.2 µs per op, ranges that overlap: this difference is not measured by these runs)"),
        "{t}"
    );
    // Apart: beyond it.
    own.spread = spread(950.0, 1050.0);
    let mut rows = vec![own, shared];
    let t = text(&fired(&mut rows), "shared_vs_own_ring").to_string();
    assert!(t.contains("(beyond the noise: over 5 and 5 runs"), "{t}");
    assert!(t.ends_with("ranges apart)"), "{t}");
}

fn bs_row(bs: u64, direct: bool, mib_s: f64) -> Row {
    let mut r = row("pwrite()", MethodKind::Psync, 1000.0);
    r.target = "{disk}/b.dat".into();
    r.place = "/var/tmp/x/b.dat".into();
    r.facts.bs = bs;
    r.facts.direct = direct;
    r.mib_s = mib_s;
    r
}

#[test]
fn direct_crossover() {
    let mut rows = vec![
        bs_row(512, false, 40.0),
        bs_row(512, true, 3.0),
        bs_row(65536, false, 900.0),
        bs_row(65536, true, 300.0),
        bs_row(1 << 20, false, 1000.0),
        bs_row(1 << 20, true, 1500.0),
    ];
    let out = fired(&mut rows);
    let t = text(&out, "direct_crossover");
    assert_eq!(
        t,
        "s: writes to {disk}/b.dat pwrite(): buffered and O_DIRECT cross between 64 KiB and 1 MiB (64 KiB: buffered 900.0 MiB/s, O_DIRECT 300.0; 1 MiB: buffered 1000.0 MiB/s, O_DIRECT 1500.0)"
    );
    // Buffered only: nothing to cross.
    let mut rows = vec![bs_row(512, false, 40.0), bs_row(65536, false, 900.0)];
    assert!(!has(&fired(&mut rows), "direct_crossover"));
    // Back and forth is told run by run.
    let mut rows = vec![
        bs_row(512, false, 300.0),
        bs_row(512, true, 400.0),
        bs_row(65536, false, 900.0),
        bs_row(65536, true, 300.0),
    ];
    assert!(
        text(&fired(&mut rows), "direct_crossover")
            .starts_with("s: writes to {disk}/b.dat pwrite(): O_DIRECT faster at 512 B, then buffered faster at 64 KiB (512 B: buffered 300.0"),
        "{:?}",
        fired(&mut rows)
    );
    // Never crossing is said so.
    let mut rows = vec![
        bs_row(512, false, 40.0),
        bs_row(512, true, 3.0),
        bs_row(4096, false, 80.0),
        bs_row(4096, true, 20.0),
    ];
    let t = text(&fired(&mut rows), "direct_crossover").to_string();
    assert!(t.contains("O_DIRECT never caught up"), "{t}");
    // One block size (the shared-ring suite runs 4 KiB only) is no crossover over the block sizes, nor is
    // one size measured both ways beside another measured one way.
    let mut rows = vec![bs_row(4096, false, 80.0), bs_row(4096, true, 20.0)];
    assert!(!has(&fired(&mut rows), "direct_crossover"));
    let mut rows = vec![
        bs_row(512, false, 40.0),
        bs_row(512, true, 3.0),
        bs_row(4096, false, 80.0),
    ];
    assert!(!has(&fired(&mut rows), "direct_crossover"));
    // The storage answer's helper still names one size measured both ways once, not as both ends.
    let rows = [bs_row(512, false, 40.0), bs_row(512, true, 3.0)];
    let refs: Vec<&Row> = rows.iter().collect();
    let t = crate::findings_compare::crossover(&refs.iter().collect::<Vec<_>>()).unwrap();
    assert_eq!(t.matches("512 B: buffered 40.0 MiB/s").count(), 1, "{t}");
}

#[test]
fn beyond_memory_copy() {
    let m = sample();
    // The Pi thesis's "dma 4kb": 1M writes of 4 KiB in 0.010 s, one CPU, data span unknown.
    let t = plausibility(4096e6, 0.010, None, 1, &m).unwrap();
    assert!(
        t.starts_with("impossible: 409.6 GB/s is 8.2x what one CPU can copy even within the L1 cache (50.0 GB/s)"),
        "{t}"
    );
    // Its "dma 4b" (4 MB in 9 ms) is possible.
    assert_eq!(plausibility(4e6, 0.009, None, 1, &m), None);
    // Beyond the caches the memory rate is the ceiling: 40 GB/s over a 1 GiB span is impossible,
    // within a small span it is not.
    assert!(plausibility(40e9, 1.0, Some(1 << 30), 1, &m).is_some());
    assert!(plausibility(40e9, 1.0, Some(1 << 20), 1, &m).is_none());
    // A row that copies is checked; a row on /dev/null (no copy) is not.
    let mut fast = bs_row(4096, false, 1.0);
    fast.copies = true;
    fast.bytes = 400_000_000_000;
    fast.facts.wall_s = 1.0;
    let mut rows = vec![fast.clone()];
    assert!(has(&fired(&mut rows), "beyond_memory_copy"));
    // Memory rates measured on an emulated CPU bound nothing: no verdict.
    let emulated = MemCopy {
        emulated: Some("tcg".into()),
        ..sample()
    };
    assert!(!has(&compare(&mut rows, &emulated), "beyond_memory_copy"));
    fast.copies = false;
    let mut rows = vec![fast];
    assert!(!has(&fired(&mut rows), "beyond_memory_copy"));
}

#[test]
fn rows_own_findings_come_along_with_the_fix_for_sqpoll() {
    let mut u = uring(2000.0);
    u.facts.sqpoll = true;
    u.facts.syscalls_per_op = Some(0.0);
    u.facts.kernel_requests_per_enter = Some(1e6);
    u.facts.uring_requests = Some(1_000_000);
    u.facts.uring_enters = Some(1);
    u.facts.submissions_without_syscall = Some(999_999);
    let out = fired(&mut [u]);
    assert!(
        has(&out, "sqpoll_submitted") && !has(&out, "batching_worked"),
        "{out:?}"
    );
}

#[test]
fn every_rule_is_tested() {
    let src = include_str!("tests.rs");
    let names = PAIR_RULES
        .iter()
        .map(|(n, _)| *n)
        .chain(SET_RULES.iter().map(|(n, ..)| *n))
        .chain(["beyond_memory_copy"]);
    for name in names {
        assert!(
            src.matches(&format!("fn {name}()")).count() == 1,
            "rule {name} has no test named after it"
        );
    }
}
