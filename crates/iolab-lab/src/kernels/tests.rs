//! The kernels side by side from made-up rows: the nowait shares per kernel, the release that stops
//! punting (or none), emulated time columns labelled, and the probe's differences.

use super::*;
use crate::answers::Status;
use crate::findings_compare::test_row;
use iolab_engine::spec::MethodKind;
use iolab_engine::target::TargetKind;

fn k(label: &str, release: &str, emulated: bool) -> KernelRan {
    KernelRan {
        label: label.into(),
        release: release.into(),
        emulated,
        preempt: None,
        features: BTreeMap::new(),
    }
}

/// A 4 KiB buffered write to a file on `fs`, by pv2 (would block `wb`) or io_uring (punted `pu`).
fn on(fs: &str, method: MethodKind, wb: Option<f64>, pu: Option<f64>) -> Row {
    let mut r = test_row(method.name(), method, 1000.0);
    r.target = format!("the {fs} file w.dat");
    r.place = format!("{{{fs}}}/w.dat");
    r.fs = Some(fs.into());
    r.facts.target = Some(TargetKind::File);
    r.facts.bs = 4096;
    r.would_block = wb;
    r.facts.punted_fraction = pu;
    r
}

/// One kernel's rows: each run's files in a directory of their own (the path differs between kernels).
fn kernel_rows(punted_xfs: f64) -> Vec<Row> {
    let dir = format!("/var/tmp/iolab-suite-{}", punted_xfs * 100.0 + rand_part());
    let mut rows = vec![
        on("ext4", MethodKind::Pv2, Some(1.0), None),
        on("ext4", MethodKind::IoUring, None, Some(1.0)),
        on("xfs", MethodKind::Pv2, Some(punted_xfs), None),
        on("xfs", MethodKind::IoUring, None, Some(punted_xfs)),
    ];
    for r in &mut rows {
        r.place = format!("{dir}/{}", r.place);
        r.step = if r.facts.method == Some(MethodKind::Pv2) {
            "nowait"
        } else {
            "uring"
        }
        .into();
    }
    rows
}

/// A number that differs from call to call.
fn rand_part() -> f64 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    N.fetch_add(1, Ordering::Relaxed) as f64 * 1000.0
}

#[test]
fn the_nowait_table_has_a_row_per_workload_and_both_shares_per_kernel() {
    let ks = [k("6.1", "6.1.0-41-amd64", true), k("host", "6.18.0", false)];
    let rows = vec![kernel_rows(1.0), kernel_rows(0.0)];
    let s = side(&ks, &rows);
    assert_eq!(s.tables.len(), 1);
    let t = &s.tables[0];
    assert_eq!(t.figures, ["would block", "punted"]);
    assert_eq!(t.rows.len(), 2, "{t:?}");
    let xfs = t.rows.iter().find(|r| r.label.contains("xfs")).unwrap();
    assert_eq!(
        xfs.values,
        vec![vec![Some(1.0), Some(1.0)], vec![Some(0.0), Some(0.0)]]
    );
    // A kernel without the row has no figure, not a zero.
    let rows = vec![kernel_rows(1.0), kernel_rows(0.0)[..2].to_vec()];
    let t = &side(&ks, &rows).tables[0];
    let xfs = t.rows.iter().find(|r| r.label.contains("xfs")).unwrap();
    assert_eq!(xfs.values[1], vec![None, None]);
    // Two points that differ only in their block size are two rows, each kernel's own.
    let mut big = kernel_rows(0.5);
    for r in &mut big {
        r.facts.bs = 1 << 20;
    }
    let rows = vec![
        [kernel_rows(1.0), big.clone()].concat(),
        [kernel_rows(0.0), big].concat(),
    ];
    let t = &side(&ks, &rows).tables[0];
    assert_eq!(t.rows.len(), 4, "{t:?}");
    let xfs_4k = t
        .rows
        .iter()
        .find(|r| r.label == "4 KiB writes to w.dat (xfs)")
        .unwrap();
    assert_eq!(
        xfs_4k.values,
        vec![vec![Some(1.0), Some(1.0)], vec![Some(0.0), Some(0.0)]]
    );
}

#[test]
fn the_release_that_stops_punting_is_named_per_file_system_in_release_order() {
    // Given newest first: the answer still reads them oldest first.
    let ks = [k("host", "6.18.0", false), k("6.1", "6.1.0-41-amd64", true)];
    let rows = vec![kernel_rows(0.0), kernel_rows(1.0)];
    let a = punts_by_release(&ks, &rows).unwrap();
    assert!(
        a.text
            .starts_with("Releases: 6.1 is 6.1.0-41-amd64, host is 6.18.0. "),
        "{}",
        a.text
    );
    assert!(
        a.text.contains("io_uring 4 KiB writes to w.dat (xfs): host (6.18.0) stops punting them (punted: 6.1 100%, host 0%)"),
        "{}",
        a.text
    );
    assert!(
        a.text.contains(
            "(ext4): none of these releases stops punting them (punted: 6.1 100%, host 100%)"
        ),
        "{}",
        a.text
    );
    assert!(a.text.contains("emulation keeps"), "{}", a.text);
    assert_eq!((a.status, a.needs.as_deref()), (Status::Answered, None));
    // A share that goes down and up again is said so, not called a stop.
    let ks3 = [
        k("6.1", "6.1.0-41-amd64", true),
        k("6.12", "6.12.57+deb12-amd64", true),
        k("host", "6.18.0", false),
    ];
    let rows = vec![kernel_rows(1.0), kernel_rows(0.0), kernel_rows(1.0)];
    let a = punts_by_release(&ks3, &rows).unwrap();
    assert!(a.text.contains("down and up again"), "{}", a.text);
    // One kernel alone answers nothing.
    assert!(punts_by_release(&ks[..1], &rows[..1]).is_none());
}

#[test]
fn other_suites_show_the_kernels_own_counts_per_op() {
    let ks = [k("host", "6.18.0", false), k("6.12", "6.12.57", true)];
    let w = |calls, ctx| {
        let mut r = test_row("write()", MethodKind::Sync, 200.0);
        r.facts.syscalls_per_op = Some(calls);
        r.facts.ctx_switches_per_op = Some(ctx);
        r
    };
    let s = side(&ks, &[vec![w(1.0, 0.0)], vec![w(2.0, 0.5)]]);
    let t = &s.tables[0];
    assert_eq!(t.unit, Unit::PerOp);
    assert!(t.title.contains("emulation keeps"), "{}", t.title);
    assert_eq!(
        t.rows[0].values,
        vec![vec![Some(1.0), Some(0.0)], vec![Some(2.0), Some(0.5)]]
    );
}

#[test]
fn the_probe_differences_are_what_some_kernels_offer_and_others_do_not() {
    let mut a = k("6.1", "6.1.0", true);
    let mut b = k("6.12", "6.12.57", true);
    for (n, x, y) in [
        ("io_uring send_zc", false, true),
        ("method psync", true, true),
    ] {
        a.features.insert(n.into(), x);
        b.features.insert(n.into(), y);
    }
    b.features.insert("only on b".into(), true);
    // What tells the machine apart, not the kernel, is left out.
    a.features
        .insert("method uring_cmd (on /dev/iolab_sink)".into(), false);
    b.features
        .insert("method uring_cmd (on /dev/iolab_sink)".into(), true);
    a.features.insert("clock: invariant TSC".into(), true);
    b.features.insert("clock: invariant TSC".into(), false);
    let d = differ(&[a, b]);
    assert_eq!(
        d,
        vec![(
            "io_uring send_zc".to_string(),
            vec![Some(false), Some(true)]
        )]
    );
}

#[test]
fn releases_sort_by_their_numbers() {
    assert_eq!(release_key("6.1.0-41-amd64"), [6, 1, 0]);
    assert_eq!(release_key("6.12.57+deb12-rt-amd64"), [6, 12, 57]);
    assert!(release_key("6.1.0-41-amd64") < release_key("6.12.57+deb12-amd64"));
    assert!(release_key("6.12.57") < release_key("6.18.0"));
}

#[test]
fn a_kernel_is_read_from_its_records() {
    let recs = [
        serde_json::json!({"point": {"kernel": "6.1-rt"}, "result": {"host": {
        "kernel_release": "6.1.0-41-rt-amd64", "emulated": true, "kernel_preempt": "PREEMPT_RT"}}}),
    ];
    let kr = KernelRan::of_records("6.1-rt", &recs).unwrap();
    assert_eq!(kr.release, "6.1.0-41-rt-amd64");
    assert!(kr.emulated);
    assert_eq!(
        kr.describe(),
        "6.1-rt (6.1.0-41-rt-amd64, PREEMPT_RT, emulated: QEMU TCG)"
    );
    assert!(KernelRan::of_records("x", &[serde_json::json!({"point": {}})]).is_none());
}

/// A logged write to the sink driver whose gaps the driver saw: p99.9 `p999`, max `max`.
fn logged(p999: f64, max: f64) -> Row {
    let mut r = test_row("write()", MethodKind::Sync, 1000.0);
    r.target = "/dev/iolab_sink".into();
    r.facts.sink = Some(crate::findings::SinkFacts {
        log: true,
        driver_gaps: Some(iolab_engine::sink_device::DriverGaps {
            count: 10_000,
            p99_ns: p999 / 2.0,
            p999_ns: p999,
            max_ns: max,
            ..Default::default()
        }),
        ..Default::default()
    });
    r
}

#[test]
fn the_rt_kernel_of_a_release_is_set_against_its_twin_on_the_drivers_tail() {
    let mut rt = k("6.1-rt", "6.1.0-41-rt-amd64", true);
    rt.preempt = Some("PREEMPT_RT".into());
    let mut plain = k("6.1", "6.1.0-41-amd64", true);
    plain.preempt = Some("PREEMPT_DYNAMIC".into());
    let other = k("6.12", "6.12.57+deb12-amd64", true);
    let ks = [plain, rt, other];
    let rows = vec![
        vec![logged(50_000.0, 900_000.0)],
        vec![logged(20_000.0, 100_000.0)],
        vec![logged(1.0, 1.0)],
    ];
    let s = side(&ks, &rows);
    let t = s
        .tables
        .iter()
        .find(|t| t.figures == ["p99.9", "max"])
        .unwrap();
    assert_eq!(t.rows[0].values[1], vec![Some(20_000.0), Some(100_000.0)]);
    let all = answers(&ks, &rows, &[]);
    let a = all.iter().find(|a| a.id == "rt-tail").unwrap();
    // Emulated: indicative, saying why; the 6.12 kernel has no RT twin here and is not named.
    assert_eq!(a.status, Status::Indicative);
    assert!(a.needs.as_deref().unwrap().contains("emulated CPU"));
    assert!(
        a.text.contains("p99.9 20.0 µs on 6.1-rt against 50.0 µs on 6.1, max 100.0 µs against 900.0 µs (the RT kernel's tail is shorter)"),
        "{}",
        a.text
    );
    assert!(!a.text.contains("6.12"), "{}", a.text);
    // Without an RT kernel and its twin there is no such answer.
    assert!(rt_tail(&ks[..1], &rows[..1]).is_none());
}

#[test]
fn rows_are_matched_across_kernels_by_their_point_but_for_its_kernel() {
    let with_point = |kernel: &str, bs: &str, punted: f64| {
        let mut r = on("ext4", MethodKind::IoUring, None, Some(punted));
        r.place = format!("/var/tmp/iolab-suite-{kernel}/w.dat");
        r.record = Some(std::sync::Arc::new(serde_json::json!({"point": {
            "step": "uring", "target": "{disk}/w.dat", "bs": bs, "kernel": kernel}})));
        r
    };
    let ks = [k("6.1", "6.1.0", true), k("6.12", "6.12.57", true)];
    let mut median_of_two = with_point("6.12", "4k", 0.0);
    if let Some(rec) = median_of_two.record.as_mut() {
        // Its median run was the second repeat there (the first on 6.1): still the same point.
        std::sync::Arc::make_mut(rec)["point"]["repeat"] = "2".into();
    }
    let rows = vec![
        vec![with_point("6.1", "4", 1.0), with_point("6.1", "4k", 1.0)],
        vec![median_of_two, with_point("6.12", "4", 1.0)],
    ];
    let a = punts_by_release(&ks, &rows).unwrap();
    // Each point found on the other kernel by its point, whatever its place and order there.
    assert_eq!(
        a.text.matches("io_uring, 4 KiB writes").count(),
        2,
        "{}",
        a.text
    );
    assert!(
        a.text
            .contains("6.12 (6.12.57, emulated: QEMU TCG) stops punting"),
        "{}",
        a.text
    );
    assert!(
        a.text.contains("none of these releases stops"),
        "{}",
        a.text
    );
}

#[test]
fn points_that_ran_on_some_kernels_only_are_named_with_the_reason() {
    let ks = [k("6.1", "6.1.0", true), k("host", "6.18.0", false)];
    let rec = |kernel: &str, ran: bool| {
        let mut r = serde_json::json!({"point": {"step": "1 MiB writes: dontcache", "kernel": kernel, "quick": "true"}});
        match ran {
            true => r["result"] = serde_json::json!({"ops": 1}),
            false => r["error"] =
                "not available: RWF_DONTCACHE: EOPNOTSUPP; the kernel has no uncached buffered I/O"
                    .into(),
        }
        r
    };
    let both = |k: &str| {
        let mut r = rec(k, true);
        r["point"]["step"] = "1 MiB writes: buffered".into();
        r
    };
    let recs = [
        rec("6.1", false),
        rec("host", true),
        both("6.1"),
        both("host"),
    ];
    let a = not_everywhere(&ks, &recs).unwrap();
    assert_eq!(
        a.text,
        "1 MiB writes: dontcache: ran on host, not on 6.1 (not available: RWF_DONTCACHE: EOPNOTSUPP)."
    );
    // Everything ran everywhere: no such answer.
    assert!(not_everywhere(&ks, &recs[2..]).is_none());
}
