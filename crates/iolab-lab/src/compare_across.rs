//! `iolab compare --across KEY[=BASE]`: runs that differ only in one spec key (psync against sync on the
//! same workload), in one file or across two. A's runs whose KEY is BASE (default: the value of A's
//! first run) are matched with B's runs (A's own when B is not given) of the same workload but for KEY
//! and another value of it; each pair of values is a workload of the comparison, "B / A" as always.

use crate::compare::{rows_figs, Figs, Outcome, Side, COMPARED};
use iolab_engine::error::{Error, Result};
use std::collections::HashMap;

/// The workload without the key, B's value of it, the label, A's runs and B's runs.
type Group<'a> = (&'a str, &'a str, String, Vec<&'a Figs>, Vec<&'a Figs>);

/// A run of a side under `--across`: its workload without the key, its value of the key, and the run.
type Keyed<'a> = (&'a str, &'a str, &'a crate::compare_held::Held);

/// `--across KEY` or `--across KEY=BASE`.
pub fn parse(s: &str) -> Result<(String, Option<String>)> {
    let (k, base) = match s.split_once('=') {
        Some((k, b)) => (k.trim(), Some(b.trim().to_string())),
        None => (s.trim(), None),
    };
    if k.is_empty() || base.as_deref() == Some("") {
        return Err(Error::usage(
            "--across",
            format!("'{s}' is not KEY or KEY=VALUE (for example --across method or --across method=psync)"),
        ));
    }
    Ok((k.trim_start_matches("--").to_string(), base))
}

/// A and B compared across `key`, each side read with it ([`Side::of`]; see the module doc). An error
/// (exit 2) when no run of A has the key or none has BASE.
pub fn compare_across(
    a: &Side,
    b: &Side,
    key: &str,
    base: Option<&str>,
    limit_pct: Option<f64>,
) -> Result<Outcome> {
    let (ka, kb) = (keyed(a), keyed(b));
    let Some(first) = ka.first() else {
        return Err(Error::usage(
            "--across",
            format!("'{key}' is not a key of the runs in A (give a run flag without dashes: method, bs, qd, ring ...)"),
        ));
    };
    let base = base.unwrap_or(first.1).to_string();
    if !ka.iter().any(|(_, v, _)| *v == base) {
        let mut seen: Vec<&str> = ka.iter().map(|(_, v, _)| *v).collect();
        seen.dedup();
        return Err(Error::usage(
            "--across",
            format!("no run in A has {key}={base} (A has {})", seen.join(", ")),
        ));
    }
    let groups = groups(a, &ka, &kb, key, &base);
    let rows: Vec<_> = groups
        .iter()
        .flat_map(|(_, _, label, ga, gb)| rows_figs(label, ga, gb, COMPARED))
        .collect();
    let matched_keys: std::collections::HashSet<&str> = groups.iter().map(|g| g.0).collect();
    let only = |s: &Side, k: &[Keyed], side_base: bool| -> Vec<String> {
        let mut v: Vec<String> = k
            .iter()
            .filter(|(w, val, _)| (*val == base) == side_base && !matched_keys.contains(w))
            .map(|(_, _, r)| s.text(r.label).to_string())
            .collect();
        v.dedup();
        v
    };
    let regressions = limit_pct.map_or(0, |l| rows.iter().filter(|r| r.regresses(l)).count());
    Ok(Outcome {
        rows,
        only_a: only(a, &ka, true),
        only_b: only(b, &kb, false),
        limit_pct,
        regressions,
    })
}

/// The runs of a side that have the key.
fn keyed(s: &Side) -> Vec<Keyed<'_>> {
    s.runs
        .iter()
        .filter_map(|r| r.across.map(|(w, v)| (s.text(w), s.text(v), r)))
        .collect()
}

/// Groups: (workload without key, B's value) -> the A runs (key = base) and the B runs; B's runs found
/// by their workload, each group by its key (lookups, so that this stays linear in the runs).
fn groups<'a>(
    a: &'a Side,
    ka: &[Keyed<'a>],
    kb: &[Keyed<'a>],
    key: &str,
    base: &str,
) -> Vec<Group<'a>> {
    let mut b_of: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, (wb, vb, _)) in kb.iter().enumerate() {
        if *vb != base {
            b_of.entry(wb).or_default().push(i);
        }
    }
    // A's runs at BASE, by workload; each workload's groups are made at its first such run (in A's
    // order), one per value B's runs of it have (in B's order). Each run is held once: a pair of loops
    // over A's and B's runs of one workload took 15 s for 6,000 runs a side, 4 times that for twice.
    let mut a_of: HashMap<&str, Vec<&crate::compare_held::Held>> = HashMap::new();
    let mut order: Vec<&str> = Vec::new();
    for (w, _, r) in ka.iter().filter(|(_, v, _)| *v == base) {
        let runs = a_of.entry(w).or_default();
        if runs.is_empty() {
            order.push(w);
        }
        runs.push(*r);
    }
    let mut groups: Vec<Group> = Vec::new();
    for w in order {
        let ra = &a_of[w];
        let figs_a: Vec<&Figs> = ra.iter().map(|r| &r.figs).collect();
        let mut at: HashMap<&str, usize> = HashMap::new();
        for &ib in b_of.get(w).into_iter().flatten() {
            let (wb, vb, rb) = kb[ib];
            let g = *at.entry(vb).or_insert_with(|| {
                let label = format!("{key} {base} (A) vs {vb} (B): {}", a.text(ra[0].label));
                groups.push((wb, vb, label, figs_a.clone(), Vec::new()));
                groups.len() - 1
            });
            groups[g].4.push(&rb.figs);
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn rec(method: &str, bs: u64, iops: f64) -> Value {
        serde_json::json!({"point": {}, "result": {
            "spec": {"method": method, "op": "write", "bs": bs, "pattern": "seq", "threads": 1,
                     "qd": 1, "batch": 1, "seed": 7, "target": "/tmp/x", "ring": {"design": "per-thread"}},
            "target": {"kind": "file"},
            "iops": iops, "ns_per_op": 1e9 / iops,
        }})
    }

    /// [`super::compare_across`] of records.
    fn compare_across(
        a: &[Value],
        b: &[Value],
        key: &str,
        base: Option<&str>,
        limit: Option<f64>,
    ) -> Result<Outcome> {
        let side = |r: &[Value]| Side::of(r.to_vec(), Some(key));
        super::compare_across(&side(a), &side(b), key, base, limit)
    }

    #[test]
    fn methods_on_the_same_workload_are_compared_in_one_file() {
        let f = vec![
            rec("psync", 4096, 100.0),
            rec("sync", 4096, 50.0),
            rec("psync", 8192, 80.0),
        ];
        let o = compare_across(&f, &f, "method", None, Some(10.0)).unwrap();
        // psync (the first run's method) is A; sync on 4 KiB is its only match.
        assert_eq!(o.rows.len(), 2, "{o:?}");
        assert!(o.rows.iter().all(|r| r
            .workload
            .starts_with("method psync (A) vs sync (B): psync write bs=4 KiB")));
        let iops = o.rows.iter().find(|r| r.figure == "iops").unwrap();
        assert_eq!(iops.ratio, 0.5);
        assert_eq!(o.regressions, 2);
        // The 8 KiB psync run has no sync run to meet.
        assert_eq!(o.only_a.len(), 1, "{o:?}");
        assert!(o.only_a[0].contains("bs=8 KiB"));
        // Runs that differ in another key too are not matched.
        assert!(o.rows.iter().all(|r| !r.workload.contains("8192")));
    }

    /// A run on kernel `release` (emulated or not), writing to a file on `fs`.
    fn on_kernel(release: &str, emulated: bool, fs: &str, iops: f64) -> Value {
        let mut r = rec("io_uring", 4096, iops);
        r["result"]["host"] = serde_json::json!({"kernel_release": release, "emulated": emulated});
        r["result"]["target"]["fs"] = fs.into();
        r
    }

    #[test]
    fn kernels_are_compared_by_release_and_an_emulated_side_is_never_ranked() {
        let f = vec![
            on_kernel("6.1.0-41-amd64", true, "ext4", 100.0),
            on_kernel("6.1.0-41-amd64", true, "tmpfs", 300.0),
            on_kernel("6.12.57+deb12-amd64", true, "ext4", 50.0),
            on_kernel("6.12.57+deb12-amd64", true, "tmpfs", 600.0),
            on_kernel("6.18.0", false, "ext4", 1000.0),
        ];
        let o = compare_across(&f, &f, "kernel", None, Some(10.0)).unwrap();
        // A file on tmpfs and one on ext4 are two workloads, never one of two runs.
        let iops: Vec<_> = o.rows.iter().filter(|r| r.figure == "iops").collect();
        assert_eq!(iops.len(), 3, "{o:?}");
        let ext4_612 = iops
            .iter()
            .find(|r| r.workload.contains("vs 6.12") && r.workload.ends_with("file on ext4"))
            .unwrap();
        assert_eq!((ext4_612.a.n, ext4_612.ratio), (1, 0.5));
        assert_eq!(ext4_612.verdict, crate::compare::Verdict::Slower);
        let tmpfs = iops
            .iter()
            .find(|r| r.workload.ends_with("on tmpfs"))
            .unwrap();
        assert_eq!(tmpfs.ratio, 2.0);
        // The host against an emulated guest: a ratio, but no verdict (and so no regression).
        let host = iops
            .iter()
            .find(|r| r.workload.contains("vs 6.18.0"))
            .unwrap();
        assert_eq!(host.verdict, crate::compare::Verdict::Emulated);
        assert_eq!(
            o.regressions, 2,
            "the 6.12 ext4 row's iops and time/op only: {o:?}"
        );
        // Without --across a guest's run is no repeat of the host's: the two are set against nothing.
        let host = vec![on_kernel("6.18.0", false, "ext4", 1000.0)];
        let both = vec![f[0].clone(), f[4].clone()];
        let side = |r: Vec<Value>| Side::of(r, None);
        let o = crate::compare::compare_records(&side(host), &side(both), Some(10.0));
        let iops = o.rows.iter().find(|r| r.figure == "iops").unwrap();
        assert_eq!((iops.a.n, iops.b.n, iops.ratio), (1, 1, 1.0), "{o:?}");
        assert_eq!(o.regressions, 0);
        assert_eq!(o.only_b.len(), 1, "the guest's run: {o:?}");
    }

    #[test]
    fn a_base_value_and_nested_keys() {
        let a = vec![rec("psync", 4096, 100.0)];
        let b = vec![rec("sync", 4096, 200.0)];
        let o = compare_across(&b, &a, "method", Some("sync"), None).unwrap();
        assert_eq!(o.rows[0].ratio, 0.5);
        let e = compare_across(&a, &b, "method", Some("aio"), None)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--across:") && e.contains("psync"), "{e}");
        let e = compare_across(&a, &b, "colour", None, None)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--across:"), "{e}");
        let mut shared = rec("io_uring", 4096, 300.0);
        shared["result"]["spec"]["ring"]["design"] = "shared".into();
        let per = rec("io_uring", 4096, 100.0);
        let o = compare_across(&[per], &[shared], "ring", None, None).unwrap();
        assert!(
            o.rows[0]
                .workload
                .starts_with("ring per-thread (A) vs shared (B)"),
            "{o:?}"
        );
        assert_eq!(
            parse("method=psync").unwrap(),
            ("method".into(), Some("psync".into()))
        );
        assert!(parse("=x").is_err() && parse("method=").is_err());
    }
}
