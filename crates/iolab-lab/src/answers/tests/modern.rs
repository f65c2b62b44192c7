//! The modern suite's answers from made-up rows: the figures they quote, the verdicts those figures
//! allow, and what they say they need.

use super::*;

/// An io_uring row of `opcode` on one file, `ns` per op, `cpu_ns` of CPU per op.
fn uring(opcode: &str, ns: f64, cpu_ns: f64) -> Row {
    let mut r = on_file(row("io_uring (qd 32 batch 32)", MethodKind::IoUring, ns));
    r.facts.opcode = Some(opcode.into());
    r.facts.qd = 32;
    r.batch = 32;
    r.cpu_s = cpu_ns * r.ops as f64 / 1e9;
    r
}

#[test]
fn fixed_and_min_wait() {
    let a = uring("READV", 20_000.0, 5_000.0);
    let b = uring("READV_FIXED", 15_000.0, 4_000.0);
    let mut p = uring("READ", 15_000.0, 4_700.0);
    p.calls_per_op = Some(0.09);
    p.facts.ctx_switches_per_op = Some(0.06);
    let mut w = uring("READ", 15_100.0, 4_600.0);
    w.facts.min_wait_us = 200;
    w.calls_per_op = Some(0.03);
    w.facts.ctx_switches_per_op = Some(0.031);
    let mut g = w.clone();
    g.facts.wait_region = true;
    g.cpu_s *= 0.9;
    let rows = [a, b, p.clone(), w.clone(), g];
    let r = answer("fixed_and_min_wait", &[], &rows, &[], &[]);
    assert_eq!(r.status, Status::Answered, "{}", r.text);
    let region = "the registered wait region took 15.1 µs per op against 15.1 µs with the copied wait arguments";
    assert!(r.text.contains(region), "{}", r.text);
    assert!(
        r.text
            .contains("READV_FIXED took 15.0 µs per op against 20.0 µs with READV (0.75x)"),
        "{}",
        r.text
    );
    assert!(
        r.text
            .contains("4.0 µs of CPU per op against 5.0 µs (0.80x): READV_FIXED was faster"),
        "{}",
        r.text
    );
    assert!(
        r.text
            .contains("io_uring_enter calls per op went from 0.09 to 0.03"),
        "{}",
        r.text
    );
    assert!(
        r.text.contains("from 0.06 to 0.03") && r.text.contains("fewer wake-ups"),
        "{}",
        r.text
    );
    // As many context switches either way: the text says the saving is in calls, not wake-ups.
    w.facts.ctx_switches_per_op = Some(0.06);
    let r = answer("fixed_and_min_wait", &[], &[p, w], &[], &[]);
    assert!(
        r.text.contains("as many context switches either way"),
        "{}",
        r.text
    );
    assert!(!r.text.contains("fewer wake-ups"), "{}", r.text);
    // A kernel without the vectored fixed opcodes: said, and the answer is partial.
    let old = uring(
        "READV (READV_FIXED asked for, not in this kernel's opcode probe (Linux 6.15+))",
        20_000.0,
        5_000.0,
    );
    let r = answer(
        "fixed_and_min_wait",
        &[],
        &[uring("READ", 1.0, 1.0), uring("READ_FIXED", 1.0, 1.0), old],
        &[],
        &[],
    );
    assert_eq!(r.status, Status::Partly);
    assert!(r.needs.unwrap().contains("6.15"));
    assert_eq!(empty("fixed_and_min_wait").status, Status::NotHere);
}

#[test]
fn dontcache_when() {
    let file = |mib_s: f64, direct: bool, rwf: u32| {
        let mut r = on_file(row("pv2", MethodKind::Pv2, 1000.0));
        r.facts.bs = 1 << 20;
        r.facts.direct = direct;
        r.facts.rw_flags = rwf;
        r.mib_s = mib_s;
        r.facts.wall_s = 1.0;
        r.ops = mib_s as u64;
        r
    };
    let dc = libc::RWF_DONTCACHE as u32;
    let rows = [
        file(2700.0, false, dc),
        file(1900.0, false, 0),
        file(1000.0, true, 0),
    ];
    let r = answer("dontcache_when", &[], &rows, &[], &[]);
    assert_eq!(r.status, Status::Partly, "{}", r.text);
    assert!(r.text.contains("uncached buffered 2.6 GiB/s"), "{}", r.text);
    assert!(
        r.text
            .contains("buffered 1.9 GiB/s (0.70x the uncached rate: uncached faster)"),
        "{}",
        r.text
    );
    assert!(
        r.text
            .contains("O_DIRECT 1000 MiB/s (0.37x the uncached rate: uncached faster)"),
        "{}",
        r.text
    );
    assert!(r.needs.unwrap().contains("memory cgroup"));
    // Under a memory limit: the cgroup's figures beside each rate, and no "fit in the page cache".
    let limited = |mib_s: f64, direct: bool, rwf: u32, cache: u64, hits: u64| {
        let mut r = file(mib_s, direct, rwf);
        r.place = "/var/tmp/s/l.dat".into();
        r.memory = Some(iolab_engine::memlimit::MemoryLimit {
            limit: 128 << 20,
            page_cache_end: cache,
            limit_hits: hits,
            refaults: Some(hits / 100),
            ..Default::default()
        });
        r
    };
    let rows = [
        limited(2400.0, false, dc, 132 << 10, 0),
        limited(1500.0, false, 0, 123 << 20, 901),
        limited(1600.0, true, 0, 24 << 10, 0),
    ];
    let r = answer("dontcache_when", &[], &rows, &[], &[]);
    assert!(
        r.text
            .contains("under a 128 MiB memory limit: uncached buffered 2.3 GiB/s"),
        "{}",
        r.text
    );
    assert!(
        r.text
            .contains("(page cache 123 MiB at the end, the limit hit 901 times, 9 refaults)"),
        "{}",
        r.text
    );
    // Where the cgroup does not count refaults (v1, kernels before 5.9), the answer names none.
    let mut uncounted = rows.clone();
    for r in uncounted.iter_mut() {
        r.memory.as_mut().unwrap().refaults = None;
    }
    let u = answer("dontcache_when", &[], &uncounted, &[], &[]);
    assert!(
        u.text
            .contains("(page cache 123 MiB at the end, the limit hit 901 times)"),
        "{}",
        u.text
    );
    assert!(!r.text.contains("fit in the page cache"), "{}", r.text);
    assert_eq!(
        r.status,
        Status::Partly,
        "no readings over time: {}",
        r.text
    );
    assert!(r.needs.unwrap().contains("read every 100 ms"));
    // With the cgroup's readings every 100 ms, the buffered row says where it met reclaim.
    let point = |t_s: f64, mib: u64, hits: u64, pages: u64| iolab_engine::memwatch::MemPoint {
        t_s,
        page_cache: mib << 20,
        limit_hits: hits,
        reclaimed_pages: pages,
    };
    let mut rows = rows;
    if let Some(m) = rows[1].memory.as_mut() {
        m.over_time = vec![
            point(0.1, 60, 0, 0),
            point(0.2, 118, 3, 100),
            point(0.3, 123, 400, 20_100),
            point(0.7, 122, 901, 60_100),
        ];
        m.reclaim_scope = "the cgroup's (memory.stat pgsteal)".into();
    }
    let r = answer("dontcache_when", &[], &rows, &[], &[]);
    assert_eq!(r.status, Status::Answered, "{}", r.text);
    assert!(
        r.text.contains(
            "its page cache reached 90% of the limit 0.20 s into the 1.00 s pass, and from then on reclaim took \
             60,000 pages (counted by the cgroup's (memory.stat pgsteal)) while the limit was hit 898 times"
        ),
        "{}",
        r.text
    );
    let tied = [file(2000.0, false, dc), file(2050.0, false, 0)];
    let r = answer("dontcache_when", &[], &tied, &[], &[]);
    assert!(r.text.contains("a tie (rates within 5%"), "{}", r.text);
    assert_eq!(empty("dontcache_when").status, Status::NotHere);
}

/// A 4 KiB random read row on the NVMe namespace: io_uring's block path or uring_cmd's passthrough.
fn nvme_row(passthrough: bool, iopoll: bool, ns: f64, cpu_ns: f64) -> Row {
    let (way, kind, target) = if passthrough {
        (
            "uring_cmd (qd 1 batch 1)",
            MethodKind::UringCmd,
            "/dev/ng0n1",
        )
    } else {
        (
            "io_uring (qd 1 batch 1)",
            MethodKind::IoUring,
            "/dev/nvme0n1",
        )
    };
    let mut r = row(way, kind, ns);
    r.target = target.into();
    r.place = target.into();
    r.iopoll = iopoll;
    r.facts.iopoll = iopoll.then(|| (Some(true), "no interrupt rose".into()));
    r.cpu_s = cpu_ns * r.ops as f64 / 1e9;
    r
}

#[test]
fn passthrough_saves() {
    let rows = [
        nvme_row(false, false, 200_000.0, 60_000.0),
        nvme_row(true, false, 150_000.0, 40_000.0),
        nvme_row(false, true, 100_000.0, 90_000.0),
        nvme_row(true, true, 99_000.0, 80_000.0),
    ];
    let r = answer("passthrough_saves", &[], &rows, &[], &[]);
    assert_eq!(r.status, Status::Answered, "{}", r.text);
    assert!(
        r.text.starts_with("With interrupts: ")
            && r.text.contains(
                "passthrough took 150.0 µs per op against 200.0 µs with the block path (0.75x)"
            ),
        "{}",
        r.text
    );
    assert!(
        r.text
            .contains("40.0 µs of CPU per op against 60.0 µs (0.67x): passthrough was faster"),
        "{}",
        r.text
    );
    // Polled, 1% apart: a tie, said as one.
    let polled = r
        .text
        .split("Polled (IOPOLL): ")
        .nth(1)
        .expect("the polled pair");
    assert!(
        polled.contains("99.0 µs per op against 100.0 µs"),
        "{polled}"
    );
    assert!(!polled.contains("was faster"), "{polled}");
    // IOPOLL asked but interrupts rose for one of them: not called polled.
    let mut unproven = rows.clone();
    unproven[3].facts.iopoll = Some((Some(false), "interrupts rose".into()));
    let r = answer("passthrough_saves", &[], &unproven, &[], &[]);
    assert!(
        r.text
            .contains("With IOPOLL set, but not shown polled for both: ")
            && !r.text.contains("Polled (IOPOLL)"),
        "{}",
        r.text
    );
    // Only the interrupt pair: a partial answer that names the polled pair's need.
    let r = answer("passthrough_saves", &[], &rows[..2], &[], &[]);
    assert_eq!(r.status, Status::Partly, "{}", r.text);
    assert!(r.needs.unwrap().contains("poll queues"));
    // No NVMe rows (a machine without the disk): not answered here, and the guest named.
    let r = empty("passthrough_saves");
    assert_eq!(r.status, Status::NotHere);
    assert!(r.needs.unwrap().contains("iolab suite modern --vm"));
}

// The kernel-vs-user note's answer (`answers/lines.rs`): its conclusions against the runs' own noise.
// (Its first test, `kernel_module_slower`, is in `tests/mod.rs` beside `lines_rec`.)

/// A decimal-lines record of `method`: `wall_ms` from the first write until fsync returned, `cpu_ms` on
/// the CPU, `fsync_ms` in the flush (none: a way without one), `invol` involuntary context switches.
fn lines_run(method: &str, wall_ms: f64, cpu_ms: f64, fsync_ms: Option<f64>, invol: u64) -> Value {
    let mut r = super::lines_rec(method, wall_ms, cpu_ms);
    r["result"]["fsync_s"] = fsync_ms.map_or(Value::Null, |f| (f / 1e3).into());
    r["result"]["cpu"]["process"]["involuntary_ctx_switches"] = invol.into();
    r
}

const NOTE: [(&str, f64); 4] = [
    ("kernel_median_ms", 128.0),
    ("user_median_ms", 13.98),
    ("kernel_min_ms", 15.5),
    ("kernel_max_ms", 901.9),
];

/// Three runs of write() per line, stdio and one write() whose time off the CPU is their flush.
fn quiet_runs() -> Vec<Value> {
    let mut recs = Vec::new();
    for i in 0..3 {
        let d = f64::from(i);
        recs.push(lines_run(
            "write-per-line",
            60.0 + d,
            50.0,
            Some(9.5 + d),
            0,
        ));
        recs.push(lines_run("stdio", 20.0 + d, 5.0, Some(14.8 + d), 0));
        recs.push(lines_run("one-write", 12.0 + d, 1.0, Some(10.5 + d), 0));
    }
    recs
}

#[test]
fn kernel_user_runs_off_the_cpu_beyond_their_flush_make_the_answer_indicative() {
    let r = answer("kernel_module_slower", &NOTE, &[], &quiet_runs(), &[]);
    assert_eq!(r.status, Status::Partly, "{}", r.text);
    assert!(!r.text.contains("indicative"), "{}", r.text);
    // The note's user program as published, which does not flush: 57 ms of wall time on 37 ms of CPU.
    let mut recs = quiet_runs();
    for (wall, invol) in [(57.0, 6), (58.0, 7), (56.0, 5)] {
        recs.push(lines_run(
            crate::lines::AS_PUBLISHED,
            wall,
            37.0,
            None,
            invol,
        ));
    }
    let r = answer("kernel_module_slower", &NOTE, &[], &recs, &[]);
    assert_eq!(r.status, Status::Indicative, "{}", r.text);
    let want = "These times are indicative: the median run of the note's user program as published by time off \
                the CPU spent 57.00 ms with no flush in its span, 37.00 ms of it on the CPU: the rest off the CPU, \
                waiting for nothing it asked for, and the kernel took its CPU from it 6 times (involuntary \
                context switches). These records carry no run-queue, steal or CPU-pressure figure";
    assert!(r.text.contains(want), "{want}\n{}", r.text);
    let needs = r.needs.unwrap();
    assert!(
        needs.contains("iolab suite kernel-user --vm") && needs.contains("; and a quieter machine"),
        "{needs}"
    );
    // A way that flushes: off the CPU beyond its fsync (60 ms, 50 ms on the CPU, 3 ms in fsync).
    let mut recs = quiet_runs();
    recs.retain(|r| r["result"]["spec"]["method"] != "write-per-line");
    for d in [0.0, 1.0, 2.0] {
        recs.push(lines_run("write-per-line", 60.0 + d, 50.0, Some(3.0), 0));
    }
    let r = answer("kernel_module_slower", &NOTE, &[], &recs, &[]);
    assert_eq!(r.status, Status::Indicative, "{}", r.text);
    assert!(
        r.text.contains("the median run of write() per line by time off the CPU spent 61.00 ms from the first write until fsync returned, 50.00 ms of it on the CPU and 3.00 ms in fsync: more time off the CPU than the flush explains."),
        "{}",
        r.text
    );
}

#[test]
fn kernel_user_runs_their_records_call_disturbed_make_the_answer_indicative() {
    let mut recs = quiet_runs();
    for r in recs.iter_mut() {
        r["result"]["disturbance"] = serde_json::json!({"verdict": "quiet", "steal_share": 0.0});
    }
    recs[0]["result"]["disturbance"] = serde_json::json!({"verdict": "disturbed", "runqueue_share": 0.38,
        "steal_share": 0.0, "others_cpus": 0.9,
        "why": "its threads waited for a CPU 38% of the time while other work ran 0.90 CPUs"});
    let r = answer("kernel_module_slower", &NOTE, &[], &recs, &[]);
    assert_eq!(r.status, Status::Indicative, "{}", r.text);
    assert!(
        r.text.contains("1 of the 3 runs of write() per line were disturbed (its threads waited for a CPU 38% of the time while other work ran 0.90 CPUs)"),
        "{}",
        r.text
    );
}

#[test]
fn kernel_user_cpu_per_line_within_the_runs_noise_is_not_explained_as_a_difference() {
    // write() per line and stdio whose middle runs overlap in CPU per line: no cause is given for a
    // difference the runs do not measure.
    let mut recs = Vec::new();
    for (w, s) in [(50.0, 45.0), (52.0, 49.0), (54.0, 51.0)] {
        recs.push(lines_run("write-per-line", w + 10.0, w, Some(9.9), 0));
        recs.push(lines_run("stdio", s + 10.0, s, Some(9.9), 0));
    }
    let r = answer("kernel_module_slower", &NOTE, &[], &recs, &[]);
    let want = "On the CPU, a write() per line cost 1.1x stdio's time (520.0 ns against 490.0 ns per line); within \
                noise (their middle runs took 500.0 ns-540.0 ns and 450.0 ns-510.0 ns of CPU per line, ranges \
                that overlap), so neither is shown the dearer.";
    assert!(r.text.contains(want), "{want}\n{}", r.text);
    assert!(
        !r.text.contains("a system call per line, which"),
        "{}",
        r.text
    );
}

/// Fixed buffers faster with one opcode and slower with another on one path: single runs that disagree
/// make the answer indicative, with the spread of the rows that differ only in the opcode.
#[test]
fn fixed_buffers_that_disagree_in_direction_are_indicative() {
    let rows = [
        uring("READV", 15_000.0, 4_000.0),
        uring("READV_FIXED", 17_000.0, 4_000.0),
        uring("READ", 17_200.0, 4_000.0),
        uring("READ_FIXED", 14_800.0, 4_000.0),
    ];
    let r = answer("fixed_and_min_wait", &[], &rows, &[], &[]);
    assert_eq!(r.status, Status::Indicative, "{}", r.text);
    assert!(
        r.text
            .contains("Fixed buffers made one opcode faster and another slower on the same path"),
        "{}",
        r.text
    );
    assert!(r.needs.unwrap().contains("--repeat 5"));
}

/// Reads into buffers the kernel picks are set against plain and fixed READ on the same workload, with
/// the figures of the rows; without the step the answer says nothing of them.
#[test]
fn provided_buffers_against_named_ones() {
    let p = uring("READ", 15_000.0, 4_700.0);
    let f = uring("READ_FIXED", 14_000.0, 4_200.0);
    let k = uring("READ, buffer select", 16_000.0, 5_000.0);
    let r = answer(
        "fixed_and_min_wait",
        &[],
        &[p.clone(), f.clone(), k],
        &[],
        &[],
    );
    for want in [
        "READ into provided buffers took 16.0 µs per op against 15.0 µs with READ (1.1x)",
        "READ into provided buffers took 16.0 µs per op against 14.0 µs with READ_FIXED (1.1x)",
    ] {
        assert!(r.text.contains(want), "{want}: {}", r.text);
    }
    let r = answer("fixed_and_min_wait", &[], &[p, f], &[], &[]);
    assert!(!r.text.contains("provided"), "{}", r.text);
}
