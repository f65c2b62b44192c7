//! A run that shares its CPU with a busy thread of another process's making is recorded as disturbed,
//! with the share of its span it waited, and its time is not called the cost of a system call.

mod common;
use common::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The CPUs this process may run on.
fn allowed() -> Vec<usize> {
    // SAFETY: an all-zero cpu_set_t is a valid empty set; sched_getaffinity fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid out-buffer of the size passed; pid 0 is the calling thread.
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    assert_eq!(r, 0, "sched_getaffinity");
    // SAFETY: CPU_ISSET only reads `set`.
    (0..libc::CPU_SETSIZE as usize)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect()
}

/// A thread busy on `cpu` until the flag drops.
fn busy_on(cpu: usize, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        // SAFETY: an all-zero cpu_set_t is a valid empty set; CPU_SET writes one bit of it.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `cpu` is one of the CPUs sched_getaffinity listed, below CPU_SETSIZE.
        unsafe { libc::CPU_SET(cpu, &mut set) };
        // SAFETY: `set` is a valid cpu_set_t of the size passed; pid 0 is this thread.
        let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
        assert_eq!(r, 0, "sched_setaffinity");
        let mut x = 0u64;
        while !stop.load(Ordering::Relaxed) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
    })
}

#[test]
fn a_run_sharing_its_cpu_with_a_busy_thread_is_disturbed() {
    let cpus = allowed();
    if cpus.len() < 2 {
        skip(
            "two-cpus",
            &format!(
                "one CPU ({cpus:?}): the test process's own threads would share it with the busy \
             thread too"
            ),
        );
        return;
    }
    let cpu = cpus[cpus.len() - 1];
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let stop = Arc::new(AtomicBool::new(false));
    let busy = busy_on(cpu, stop.clone());
    // The busy thread has the CPU before iolab starts there.
    std::thread::sleep(std::time::Duration::from_millis(200));
    let list = cpu.to_string();
    let r = iolab(&[
        "--cpus",
        &list,
        "run",
        "--method",
        "psync",
        "--target",
        "/dev/null",
        "--bs",
        "4",
        "--ops",
        "300k",
        "--json",
        &path_str(&json),
    ]);
    stop.store(true, Ordering::Relaxed);
    busy.join().unwrap();
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let d = &v["disturbance"];
    assert_eq!(
        v["host"]["cpus_pinned"],
        serde_json::json!([cpu]),
        "{}",
        v["host"]
    );
    let Some(wait) = d["runqueue_share"].as_f64() else {
        skip(
            "sched-info",
            &format!("the kernel keeps no run delay per task (no CONFIG_SCHED_INFO): {d}"),
        );
        return;
    };
    // The scheduler shares one CPU between two busy tasks about evenly: iolab waited about half the time.
    assert!(wait > 0.2, "{d}");
    assert!(d["others_cpus"].as_f64().unwrap() >= 0.25, "{d}");
    assert_eq!(d["verdict"], "disturbed", "{d}");
    assert!(
        d["why"].as_str().unwrap().contains("waited for a CPU"),
        "{d}"
    );
    assert!(r.stdout.contains("pinned"), "{}", r.stdout);
    assert!(
        r.stdout.contains("disturbed: its threads waited for a CPU"),
        "{}",
        r.stdout
    );
    assert!(
        !r.stdout.contains("the cost of one system call"),
        "{}",
        r.stdout
    );
}

#[test]
fn cpus_outside_the_allowed_set_are_refused_by_flag() {
    let cpus = allowed();
    let beyond = (cpus.iter().max().unwrap() + 1).to_string();
    let r = iolab(&["--cpus", &beyond, "run", "--method", "nop", "--ops", "10"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("--cpus") && r.stderr.contains(&format!("CPU {beyond}")),
        "{}",
        r.stderr
    );
    let r = iolab(&["--cpus", "2-1", "run", "--method", "nop", "--ops", "10"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("ends before it starts"), "{}", r.stderr);
}
