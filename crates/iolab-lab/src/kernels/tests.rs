//! The kernels side by side from made-up rows: the nowait shares per kernel, the release that stops
//! punting (or none), emulated time columns labelled, and the probe's differences.

use super::*;
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
}

#[test]
fn the_release_that_stops_punting_is_named_per_file_system_in_release_order() {
    // Given newest first: the answer still reads them oldest first.
    let ks = [k("host", "6.18.0", false), k("6.1", "6.1.0-41-amd64", true)];
    let rows = vec![kernel_rows(0.0), kernel_rows(1.0)];
    let a = punts_by_release(&ks, &rows).unwrap();
    assert!(
        a.text.contains("xfs file w.dat: host (6.18.0) stops punting them on xfs (io_uring's requests punted: 6.1 100%, host 0%)"),
        "{}",
        a.text
    );
    assert!(
        a.text
            .contains("none of these releases stops punting them on ext4"),
        "{}",
        a.text
    );
    assert!(a.needs.as_deref().unwrap_or("").contains("emulated"));
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
fn other_suites_show_time_per_op_with_emulated_columns_labelled() {
    let ks = [k("host", "6.18.0", false), k("6.12", "6.12.57", true)];
    let w = |ns| test_row("write()", MethodKind::Sync, ns);
    let s = side(&ks, &[vec![w(200.0)], vec![w(3000.0)]]);
    let t = &s.tables[0];
    assert_eq!(t.unit, Unit::Ns);
    assert!(
        t.title.contains("never set against the host's"),
        "{}",
        t.title
    );
    assert_eq!(
        t.rows[0].values,
        vec![vec![Some(200.0)], vec![Some(3000.0)]]
    );
    let plain = side(&ks[..1], &[vec![w(200.0)]]);
    assert!(!plain.tables[0].title.contains("emulated"));
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
