use super::jobs::memory_allows;
use super::*;
use crate::series::Work;
use iolab_engine::spec::RawSpec;

#[test]
fn every_builtin_suite_parses_and_expands() {
    let d = tempfile::tempdir().unwrap();
    let places = Places::make(d.path(), d.path(), false).unwrap();
    for (name, _) in BUILTIN {
        let s = load(name).unwrap();
        assert_eq!(&s.name, name);
        assert!(!s.reproduces.is_empty() && !s.about.is_empty());
        for quick in [false, true] {
            let jobs = jobs(&s, &places, quick).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!jobs.is_empty(), "{name}");
            // The check made before any directory exists gives the same points.
            let points = check(&s, quick).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(points.iter().eq(jobs.iter().map(|j| &j.point)), "{name}");
            for j in &jobs {
                if let Work::Run(r) = &j.work {
                    if let Err(e) = r.as_ref() {
                        panic!("{name} {:?}: {e}", j.point);
                    }
                }
            }
        }
    }
}

#[test]
fn quick_replaces_amounts_and_vary() {
    let d = tempfile::tempdir().unwrap();
    let places = Places::make(d.path(), d.path(), false).unwrap();
    let s = load("blocksize").unwrap();
    let full = jobs(&s, &places, false).unwrap();
    let quick = jobs(&s, &places, true).unwrap();
    assert!(quick.len() < full.len());
    for j in &quick {
        if let Work::Run(r) = &j.work {
            let Ok(spec) = r.as_ref() else { continue };
            assert!(spec.bs <= 1 << 20, "{:?}", j.point);
            assert!(spec.target.starts_with(d.path()), "{:?}", spec.target);
        }
    }
}

#[test]
fn a_key_set_on_every_point_wins_and_marks_the_point() {
    let d = tempfile::tempdir().unwrap();
    let places = Places::make(d.path(), d.path(), false).unwrap();
    let mut s = load("blocksize").unwrap();
    s.set_on_every_point("profile", "separate");
    for quick in [false, true] {
        let js = jobs(&s, &places, quick).unwrap();
        let runs: Vec<_> = js
            .iter()
            .filter_map(|j| match &j.work {
                Work::Run(r) => Some((j, r.as_ref().as_ref().unwrap())),
                _ => None,
            })
            .collect();
        assert!(!runs.is_empty());
        for (j, spec) in runs {
            assert_eq!(spec.profile, iolab_engine::spec::ProfileMode::Separate);
            assert!(j.point.contains(&("profile".into(), "separate".into())));
        }
    }
    // The writes suite profiles its io_uring and mmap steps itself, and `none` turns that off.
    let mut s = load("writes").unwrap();
    let profiled = |s: &SuiteFile| {
        jobs(s, &places, true)
            .unwrap()
            .iter()
            .filter_map(|j| match &j.work {
                Work::Run(r) => r.as_ref().as_ref().ok().map(|r| r.profile),
                _ => None,
            })
            .filter(|p| *p != iolab_engine::spec::ProfileMode::None)
            .count()
    };
    assert_eq!(profiled(&s), 10);
    s.set_on_every_point("profile", "none");
    assert_eq!(profiled(&s), 0);
}

#[test]
fn a_missing_need_is_reported_not_faked() {
    let d = tempfile::tempdir().unwrap();
    // No zram made: the blocksize suite's zram steps say so instead of running elsewhere.
    let places = Places::make(d.path(), d.path(), false).unwrap();
    let s = load("blocksize").unwrap();
    let js = jobs(&s, &places, true).unwrap();
    assert!(js
        .iter()
        .any(|j| matches!(&j.work, Work::Unavailable(w) if w.contains("on this machine"))));
    // The offload method is built in: every offload step runs, but for the guest partition's, which
    // say why where no guest can be built here (off x86_64, under qemu-user, without apt).
    let s = load("offload").unwrap();
    let js = jobs(&s, &places, true).unwrap();
    let guest_unmet = iolab_guest::vm::unsupported().is_some();
    for j in &js {
        if let Work::Unavailable(w) = &j.work {
            assert!(
                guest_unmet && w.contains(iolab_guest::vm::CANNOT_BUILD),
                "an offload step is unavailable: {w}"
            );
        }
    }
}

#[test]
fn repeat_runs_every_point_in_rounds_of_alternating_order() {
    let d = tempfile::tempdir().unwrap();
    let places = Places::make(d.path(), d.path(), false).unwrap();
    let mut s = load("nowait").unwrap();
    let once: Vec<_> = jobs(&s, &places, true)
        .unwrap()
        .into_iter()
        .map(|j| j.point)
        .collect();
    s.set_repeat(3);
    let js = jobs(&s, &places, true).unwrap();
    assert_eq!(js.len(), 3 * once.len());
    let without = |p: &[(String, String)]| -> Vec<(String, String)> {
        p.iter().filter(|(k, _)| k != "repeat").cloned().collect()
    };
    for (k, round) in js.chunks(once.len()).enumerate() {
        let mut points: Vec<_> = round.iter().map(|j| without(&j.point)).collect();
        assert!(round
            .iter()
            .all(|j| j.point.contains(&("repeat".into(), (k + 1).to_string()))));
        // The second round runs backwards.
        if k == 1 {
            points.reverse();
        }
        assert_eq!(points, once, "round {}", k + 1);
    }
    // The check made before anything exists gives the same points.
    let checked = check(&s, true).unwrap();
    assert!(checked.iter().eq(js.iter().map(|j| &j.point)));
}

#[test]
fn a_point_this_machines_memory_cannot_hold_is_said_not_run() {
    let total = iolab_engine::mem::meminfo("MemTotal").unwrap();
    let qd = total / (1 << 30) + 2;
    let huge = RawSpec::new()
        .with("method", "io_uring")
        .with("bs", "1g")
        .with("qd", qd)
        .with("ops", 10u64)
        .resolve();
    match memory_allows(huge) {
        Work::Unavailable(why) => {
            assert!(
                why.starts_with("on this machine:") && why.contains("MemTotal"),
                "{why}"
            )
        }
        _ => panic!("a run beyond MemTotal ran"),
    }
    let small = RawSpec::new().with("bs", "4k").resolve();
    assert!(matches!(memory_allows(small), Work::Run(r) if r.is_ok()));
    // The full blocksize suite has the paper's largest blocks, run or said not run.
    let d = tempfile::tempdir().unwrap();
    let places = Places::make(d.path(), d.path(), false).unwrap();
    let js = jobs(&load("blocksize").unwrap(), &places, false).unwrap();
    for bs in ["512m", "768m"] {
        assert!(
            js.iter()
                .any(|j| j.point.contains(&("bs".into(), bs.into()))),
            "{bs}"
        );
    }
}

#[test]
fn unknown_suite_and_bad_keys_are_usage_errors() {
    let e = load("nope").unwrap_err().to_string();
    assert!(e.starts_with("suite:") && e.contains("writes"), "{e}");
    let e = parse(
        "name='x'\nabout='a'\nreproduces='r'\ntable='cpu'\n[[step]]\nlabel='s'\nspec={bz='4k'}\n",
        "x.toml",
    )
    .map(|s| {
        let d = tempfile::tempdir().unwrap();
        let p = Places::make(d.path(), d.path(), false).unwrap();
        jobs(&s, &p, false).err().map(|e| e.to_string())
    })
    .unwrap()
    .unwrap();
    assert!(e.contains("bz"), "{e}");
}

#[test]
fn a_tied_vary_key_sets_its_keys_together() {
    let base = "name='x'\nabout='a'\nreproduces='r'\ntable='latency'\n[defaults]\nmethod='io_uring'\nops='10'\n";
    let suite =
        |step: &str| parse(&format!("{base}[[step]]\nlabel='s'\n{step}"), "x.toml").unwrap();
    let s = suite("vary=['qd+batch=1,8,16']\n");
    let d = tempfile::tempdir().unwrap();
    let places = Places::make(d.path(), d.path(), false).unwrap();
    let js = jobs(&s, &places, false).unwrap();
    let specs: Vec<(u32, u32)> = js
        .iter()
        .map(|j| match &j.work {
            Work::Run(r) => {
                let r = r.as_ref().as_ref().unwrap();
                (r.qd, r.batch)
            }
            _ => panic!("{:?}", j.point),
        })
        .collect();
    assert_eq!(specs, [(1, 1), (8, 8), (16, 16)], "three points, not nine");
    let kv = |k: &str, v: &str| (k.to_string(), v.to_string());
    assert_eq!(
        js[1].point,
        [kv("step", "s"), kv("qd", "8"), kv("batch", "8")]
    );
    assert!(check(&s, false)
        .unwrap()
        .iter()
        .eq(js.iter().map(|j| &j.point)));
    // A key tied and varied on its own, or an empty key, is refused before anything runs.
    let e = check(&suite("vary=['qd+batch=1,8', 'batch=1,2']\n"), false).unwrap_err();
    assert!(
        e.to_string().contains("batch is set by two vary lists"),
        "{e}"
    );
    let e = check(&suite("vary=['qd+=1,8']\n"), false).unwrap_err();
    assert!(e.to_string().contains("names an empty key"), "{e}");
    let e = check(&suite("vary=['qd+qd=1,8']\n"), false).unwrap_err();
    assert!(e.to_string().contains("'qd+qd' ties qd to itself"), "{e}");
    let e = check(&suite("vary=['qd+batch=8,8']\n"), false).unwrap_err();
    assert!(e.to_string().contains('8'), "a value listed twice: {e}");
    // A value no point can use is still told apart from a typo (batch 8 above qd 4 is refused).
    let e = check(&suite("spec={qd=4}\nvary=['batch+ops=8']\n"), false).unwrap_err();
    assert!(e.to_string().contains("--batch"), "{e}");
    // The uring suite's QD sweep runs at batch = QD on every point, full and quick.
    let u = load("uring").unwrap();
    for quick in [false, true] {
        let js = jobs(&u, &places, quick).unwrap();
        let sweep: Vec<_> = js
            .iter()
            .filter(|j| {
                j.point
                    .iter()
                    .any(|(k, v)| k == "step" && v.contains("QD sweep"))
            })
            .collect();
        assert!(sweep.len() >= 2, "{quick}");
        for j in sweep {
            let Work::Run(r) = &j.work else { panic!() };
            let r = r.as_ref().as_ref().unwrap();
            assert_eq!(r.batch, r.qd, "{:?}", j.point);
        }
    }
}

#[test]
fn a_point_failed_only_when_it_failed_at_run_time() {
    let rec = |e: &str, code: i64| serde_json::json!({"point": {}, "error": e, "exit_code": code});
    assert!(point_failed(&rec(
        "write failed: ENOSPC (No space left on device) on /x; hint: ...",
        1
    )));
    assert!(point_failed(&rec("verify: block 3 differs", 1)));
    for (e, code) in [
        (
            "not available on this machine: the iolab_sink driver is not loaded",
            1,
        ),
        (
            "pwritev2 failed: EOPNOTSUPP (Operation not supported) on /x",
            1,
        ),
        ("--qd: does not apply to psync", 2),
    ] {
        assert!(!point_failed(&rec(e, code)), "{e}");
    }
    assert!(!point_failed(
        &serde_json::json!({"point": {}, "result": {}})
    ));
}
