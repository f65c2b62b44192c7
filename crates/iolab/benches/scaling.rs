//! `cargo bench -p iolab --bench scaling`: whether `report` and `compare` are linear in the records they
//! read, by CPU time (user and system, from wait4's rusage: another process on the machine slows a run's
//! wall time more than its CPU time, but not never). Each side is the least of `ROUNDS` runs, the sizes
//! alternating; the ratio of 2,000 records to 1,000 is printed against linear (2x) and quadratic (4x).
//! The counts that hold on any machine (opens, memory per byte of input) are a test:
//! `tests/faults_scaling.rs`.

#[path = "../tests/common/scaling.rs"]
mod scaling;

const ROUNDS: usize = 3;

/// User and system CPU seconds of a child's rusage.
fn cpu_s(ru: &libc::rusage) -> f64 {
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(ru.ru_utime) + secs(ru.ru_stime)
}
/// Above this, twice the records cost more than linear work plus a fixed cost can explain (what a user
/// may expect of twice the records: at most 2.2 times the cost).
const TARGET: f64 = 2.2;

fn main() {
    let d = tempfile::tempdir().unwrap();
    let t = scaling::template(d.path());
    let sizes = [1000usize, 2000];
    let files: Vec<_> = sizes
        .iter()
        .map(|n| {
            let (a, b) = (
                d.path().join(format!("r{n}.jsonl")),
                d.path().join(format!("o{n}.jsonl")),
            );
            scaling::records(&t, *n, &a);
            std::fs::copy(&a, &b).unwrap();
            (a, b)
        })
        .collect();
    let mut best = [[f64::INFINITY; 2]; 2]; // [size][report, compare]
    for round in 0..ROUNDS {
        for (i, (a, b)) in files.iter().enumerate() {
            let html = d.path().join(format!("r{i}-{round}.html"));
            let text = |p: &std::path::Path| p.display().to_string();
            let report = scaling::cost(&["report".into(), text(a), "-o".into(), text(&html)], &[a]);
            let compare = scaling::cost(&["compare".into(), text(a), text(b)], &[a, b]);
            best[i][0] = best[i][0].min(cpu_s(&report.usage));
            best[i][1] = best[i][1].min(cpu_s(&compare.usage));
        }
    }
    println!("CPU time of 2,000 records against 1,000 (least of {ROUNDS} runs each; linear 2x, quadratic 4x)");
    for (j, what) in ["report", "compare"].iter().enumerate() {
        let ratio = best[1][j] / best[0][j];
        let verdict = if ratio <= TARGET { "met" } else { "MISSED" };
        println!(
            "  {what:<8} {:.3} s / {:.3} s = {ratio:.2}x (target at most {TARGET}x: {verdict})",
            best[1][j], best[0][j]
        );
    }
}
