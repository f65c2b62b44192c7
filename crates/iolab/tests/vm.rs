//! `iolab vm`: a guest kernel under QEMU (TCG here, about half a minute a boot), in two boots. The first
//! runs a script of commands and checks, in the guest: the sink driver loads (/dev/iolab_sink); a run's
//! --json file comes back to the host's directory marked emulated (or not) as the accelerator was; IOPOLL
//! reads on /dev/nvme0n1 complete with no interrupt on the device's queues and iolab says they were
//! polled; a command that would overwrite an existing host file is refused and its non-zero exit status
//! comes back. The second boots a guest whose command outlives a short --timeout: killed, exit 1, with
//! the console's last lines, and its temporary files removed. A third checks NVMe passthrough (uring_cmd
//! on /dev/ng0n1): its reads return what the block path wrote, polled or not, and what it must refuse.
//!
//! Where the guest cannot be built (not x86_64, no apt, no network to the package registry) each test
//! prints "SKIPPED <name>: <reason>". The default cache (~/.cache/iolab/vm) is filled on the first run.

mod common;

use common::{bin, skip};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// The boots run one at a time (the host has few CPUs, and each guest takes one or two).
static BOOTS: Mutex<()> = Mutex::new(());

struct Vm {
    code: i32,
    stdout: String,
    stderr: String,
}

/// `iolab vm ARGS` run in `dir`.
fn vm(dir: &Path, args: &[&str]) -> Vm {
    let out = Command::new(bin())
        .arg("vm")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("iolab starts");
    Vm {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The reason to skip, when iolab says the guest cannot be built on this machine.
fn cannot_build(r: &Vm) -> Option<String> {
    r.stderr
        .lines()
        .find(|l| l.contains(iolab_engine_cannot_build()))
        .map(str::to_string)
}

/// The message prefix of `iolab_guest::vm::CANNOT_BUILD` (the tests do not link the library).
fn iolab_engine_cannot_build() -> &'static str {
    "cannot build the guest here"
}

fn json(p: &Path) -> serde_json::Value {
    serde_json::from_str(
        &std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
    )
    .unwrap()
}

/// The temporary directory `iolab vm` said it used.
fn scratch_dir(stderr: &str) -> Option<PathBuf> {
    let l = stderr.lines().find(|l| l.contains("temporary files"))?;
    let p = l.split(" in ").nth(1)?.split(", removed").next()?;
    Some(PathBuf::from(p))
}

#[test]
fn a_guest_runs_iolab_with_the_driver_and_polled_nvme() {
    let _one = BOOTS.lock().unwrap_or_else(|p| p.into_inner());
    let d = tempfile::tempdir().unwrap();
    let keep = d.path().join("existing.json");
    std::fs::write(&keep, b"mine\n").unwrap();
    let script = d.path().join("script");
    std::fs::write(
        &script,
        "run --method sync --target /dev/null --bs 4 --ops 2000 --json emu.json\n\
         run --method io_uring --iopoll --direct --op read --target /dev/nvme0n1 --ops 2000 --json poll.json\n\
         run --method sync --target /dev/null --ops 10 --json existing.json\n",
    )
    .unwrap();
    let mut r = vm(d.path(), &["--script", &script.to_string_lossy()]);
    if let Some(why) = cannot_build(&r) {
        skip("guest", &why);
        return;
    }
    // QEMU's emulated NVMe under TCG now and then loses a polled completion: iolab ends that run after
    // 30 s with the reason (it used to spin until the guest's --timeout). One more boot, said.
    if r.stderr.contains("no request completed for") {
        println!(
            "RETRIED a_guest_runs_iolab_with_the_driver_and_polled_nvme once: the emulated NVMe lost a polled \
             completion: {}",
            r.stderr.lines().find(|l| l.contains("no request completed")).unwrap_or("")
        );
        for f in ["emu.json", "poll.json"] {
            let _ = std::fs::remove_file(d.path().join(f));
        }
        r = vm(d.path(), &["--script", &script.to_string_lossy()]);
    }
    let all = format!("stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    // The driver was built against the guest's headers and loaded there.
    assert!(
        r.stderr
            .contains("driver: iolab_sink loaded in the guest: /dev/iolab_sink"),
        "{all}"
    );
    // The first command's result came back to the host's directory, labelled as the accelerator was.
    let tcg = r.stderr.contains("accelerator: TCG");
    let emu = json(&d.path().join("emu.json"));
    assert_eq!(emu["ops"], 2000, "{emu}");
    assert_eq!(emu["host"]["emulated"], tcg, "{}", emu["host"]);
    if tcg {
        assert_eq!(emu["host"]["accelerator"], "tcg");
        assert!(
            r.stdout
                .contains("figures from an emulated guest (QEMU TCG): behaviour, not speed"),
            "{all}"
        );
    }
    // IOPOLL on the NVMe disk's poll queues: every read completed, none by interrupt, and iolab says so.
    let poll = json(&d.path().join("poll.json"));
    assert_eq!(poll["ops"], 2000);
    let p = &poll["iopoll"];
    assert_eq!(p["device"], "nvme0n1", "{p}");
    assert_eq!(p["io_poll"], true, "{p}");
    assert_eq!(p["interrupts"], 0, "{p}");
    assert!(!p["lines"].as_array().unwrap().is_empty(), "{p}");
    assert_eq!(p["polled"], true, "{p}");
    assert!(
        r.stdout
            .lines()
            .any(|l| l.starts_with("iopoll") && l.contains("completions were polled")),
        "{all}"
    );
    // The third would have replaced a host file: refused in the guest, the file untouched, and its
    // status is the exit status of `iolab vm` (the first non-zero one).
    assert_eq!(std::fs::read(&keep).unwrap(), b"mine\n");
    assert!(
        r.stderr
            .contains("existing.json exists; iolab does not replace files"),
        "{all}"
    );
    assert!(r.stderr.contains("command 1 exited with status 0"), "{all}");
    assert!(r.stderr.contains("command 3 exited with status 2"), "{all}");
    assert_eq!(r.code, 2, "{all}");
    // Its temporary files are gone.
    let tmp = scratch_dir(&r.stderr).expect("iolab vm names its temporary directory");
    assert!(!tmp.exists(), "{} left behind", tmp.display());
    println!(
        "guest: {} | IOPOLL lines {}",
        r.stderr
            .lines()
            .filter(|l| l.contains("guest ready") || l.contains("powered off"))
            .collect::<Vec<_>>()
            .join(" | "),
        p["lines"]
    );
}

#[test]
fn a_guest_past_its_timeout_is_killed_and_reported() {
    let _one = BOOTS.lock().unwrap_or_else(|p| p.into_inner());
    let d = tempfile::tempdir().unwrap();
    let r = vm(
        d.path(),
        &[
            "--timeout",
            "20",
            "--",
            "run",
            "--method",
            "nop",
            "--duration",
            "600",
        ],
    );
    if let Some(why) = cannot_build(&r) {
        skip("guest", &why);
        return;
    }
    let all = format!("stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    assert_eq!(r.code, 1, "{all}");
    assert!(
        r.stderr
            .contains("the guest did not finish within --timeout 20 s"),
        "{all}"
    );
    // The console's last lines are shown.
    assert!(
        r.stderr.contains("the last lines of its console:\n  "),
        "{all}"
    );
    // qemu's process group is gone, and so are the temporary files.
    let pg: i32 = r
        .stderr
        .split("process group ")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .and_then(|s| s.parse().ok())
        .expect("the killed process group is named");
    assert!(
        !Path::new(&format!("/proc/{pg}")).exists(),
        "qemu {pg} still runs"
    );
    let tmp = scratch_dir(&r.stderr).expect("iolab vm names its temporary directory");
    assert!(!tmp.exists(), "{} left behind", tmp.display());
}

/// The guest's script of the passthrough test: the block path writes iolab's pattern (seed 7), the
/// passthrough path reads it back (interrupt-driven, then polled and random), passthrough writes are read
/// back by passthrough (seed 9); then what must be refused or caught: the wrong seed's pattern (exit 1),
/// a write without --allow-device-writes, another method on the generic device, a flush, a block larger
/// than one command moves, --layers, and a survey of the generic device, pointed to uring_cmd (exit 2).
const PASSTHROUGH: &str = "\
run --method sync --op write --direct --target /dev/nvme0n1 --allow-device-writes --bs 4k --ops 2048 --seed 7 --json w.json
run --method uring_cmd --op read --target /dev/ng0n1 --bs 4k --ops 2048 --file-size 8m --seed 7 --verify --json r.json
run --method uring_cmd --op read --target /dev/ng0n1 --bs 4k --ops 2048 --file-size 8m --pattern rand --seed 7 --verify --iopoll --qd 8 --batch 4 --json rp.json
run --method uring_cmd --op write --target /dev/ng0n1 --allow-device-writes --bs 4k --ops 1000 --seed 9 --qd 4 --json pw.json
run --method uring_cmd --op read --target /dev/ng0n1 --bs 4k --ops 1000 --seed 9 --verify --json r9.json
run --method uring_cmd --op read --target /dev/ng0n1 --bs 4k --ops 64 --seed 8 --verify --json bad.json
run --method uring_cmd --op write --target /dev/ng0n1 --ops 10
run --method io_uring --op read --target /dev/ng0n1 --ops 10
run --method uring_cmd --op write --target /dev/ng0n1 --allow-device-writes --fsync end --ops 10
run --method uring_cmd --op read --target /dev/ng0n1 --bs 64m --ops 10
run --method uring_cmd --op read --target /dev/ng0n1 --layers --ops 10
survey --target /dev/ng0n1
";

/// One boot of the passthrough script, in a directory of its own (a second boot must not find the first
/// one's outputs: iolab refuses to write over them, and the block path's write would not run).
fn passthrough_boot() -> (tempfile::TempDir, Vm) {
    let d = tempfile::tempdir().unwrap();
    let script = d.path().join("script");
    std::fs::write(&script, PASSTHROUGH).unwrap();
    // The script takes about 30 s under TCG; a guest stuck past 180 s is booted once more (below).
    let script = script.to_string_lossy().into_owned();
    let r = vm(d.path(), &["--timeout", "180", "--script", script.as_str()]);
    (d, r)
}

#[test]
fn nvme_passthrough_reads_what_the_block_path_wrote() {
    let _one = BOOTS.lock().unwrap_or_else(|p| p.into_inner());
    let (mut d, mut r) = passthrough_boot();
    if let Some(why) = cannot_build(&r) {
        skip("guest", &why);
        return;
    }
    if r.stderr.contains("no request completed for") {
        println!(
            "RETRIED nvme_passthrough_reads_what_the_block_path_wrote once: the emulated NVMe lost a polled \
             completion"
        );
        (d, r) = passthrough_boot();
    } else if r.stderr.contains("did not finish within --timeout") {
        // Seen under TCG beside a busy host: the guest's console showed RCU stalls ("rcu_preempt kthread
        // starved", "Possible timer handling issue") and one read never returned, where the same script on
        // the same kernel took 29 s at the next boot.
        println!(
            "RETRIED nvme_passthrough_reads_what_the_block_path_wrote once: the guest did not finish within \
             180 s under TCG:\n{}",
            r.stderr.lines().rev().take(5).collect::<Vec<_>>().join("\n")
        );
        (d, r) = passthrough_boot();
    }
    let all = format!("stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    for (file, blocks, seed) in [
        ("r.json", 2048, "7"),
        ("rp.json", 2048, "7"),
        ("r9.json", 1000, "9"),
    ] {
        let f = d.path().join(file);
        assert!(f.exists(), "the guest wrote no {file}:\n{all}");
        let v = json(&f);
        assert_eq!(
            v["target"]["kind"], "nvme_generic",
            "{file}: {}",
            v["target"]
        );
        assert_eq!(
            v["verify"]["blocks_checked"], blocks,
            "{file}: {}",
            v["verify"]
        );
        assert_eq!(v["verify"]["mismatches"], 0, "{file}: {}", v["verify"]);
        let setup = v["uring"]["setup"].to_string();
        assert!(
            setup.contains("NVME_URING_CMD_IO") && setup.contains("SQE128"),
            "{setup}"
        );
        assert!(
            r.stdout.contains(&format!(
                "read and checked against iolab's pattern for seed {seed}, 0 mismatches"
            )),
            "{all}"
        );
    }
    // Polled: the device's interrupts did not rise, and iolab says the completions were polled.
    let p = &json(&d.path().join("rp.json"))["iopoll"];
    assert_eq!(p["device"], "nvme0n1", "{p}");
    assert_eq!(
        (&p["polled"], &p["interrupts"]),
        (&true.into(), &0.into()),
        "{p}"
    );
    // The passthrough writes landed where the reads found them, and a wrong seed is caught.
    assert_eq!(json(&d.path().join("pw.json"))["ops"], 1000);
    let bad = json(&d.path().join("bad.json"));
    assert_eq!(bad["verify"]["mismatches"], 64, "{}", bad["verify"]);
    assert!(r.stderr.contains("command 6 exited with status 1"), "{all}");
    assert!(
        r.stderr.contains(
            "--allow-device-writes: /dev/ng0n1 writes the blocks of /dev/nvme0n1; writing destroys its contents"
        ),
        "{all}"
    );
    assert!(
        r.stderr.contains(
            "io_uring cannot use /dev/ng0n1, an NVMe generic device: it takes NVMe commands only"
        ),
        "{all}"
    );
    for refused in [
        "iolab: --fsync: uring_cmd sends /dev/ng0n1 NVMe Read and Write commands only, no Flush",
        "iolab: --bs: 67108864 is more than one NVMe command to /dev/ng0n1 can move",
        "iolab: --layers: splits an op's time by the block layer's bio and request events",
        "iolab: --target: /dev/ng0n1 is an NVMe generic character device, which takes NVMe commands only: run \
         them with `iolab run --method uring_cmd --target /dev/ng0n1`; the survey's ways reach the same disk \
         through its block device, --target /dev/nvme0n1",
    ] {
        assert!(r.stderr.contains(refused), "{refused}\n{all}");
    }
    assert_eq!(r.code, 1, "the first non-zero status: {all}");
}

/// 64 KiB sends from the guest to the host's discard peer (QEMU's user network, an e1000 whose offloads
/// QEMU emulates), plain and zero-copy, each profiled.
const ZERO_COPY: &str = "\
run --method io_uring --target tcp:10.0.2.100:9 --bs 64KiB --ops 2000 --profile --json send.json
run --method io_uring --send-zc --target tcp:10.0.2.100:9 --bs 64KiB --ops 2000 --profile --json zc.json
";

#[test]
fn a_zero_copy_send_to_a_remote_peer_saves_the_copy_the_profile_shows() {
    let _one = BOOTS.lock().unwrap_or_else(|p| p.into_inner());
    let d = tempfile::tempdir().unwrap();
    let script = d.path().join("script");
    std::fs::write(&script, ZERO_COPY).unwrap();
    let r = vm(d.path(), &["--script", &script.to_string_lossy()]);
    if let Some(why) = cannot_build(&r) {
        skip("guest", &why);
        return;
    }
    let all = format!("stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    assert_eq!(r.code, 0, "{all}");
    let (send, zc) = (
        json(&d.path().join("send.json")),
        json(&d.path().join("zc.json")),
    );
    // Every byte reached the peer on the host: its TCP acknowledged them all (the run checks it too).
    for v in [&send, &zc] {
        assert_eq!(
            v["target"]["peer"]["remote"], "10.0.2.100:9",
            "{}",
            v["target"]
        );
        assert_eq!(
            v["target"]["peer"]["bytes"],
            2000 * 65536,
            "{}",
            v["target"]
        );
    }
    assert_eq!(send["uring"]["opcode"], "SEND", "{}", send["uring"]);
    let u = &zc["uring"];
    assert_eq!(u["opcode"], "SEND_ZC", "{u}");
    // One notification per send, and the kernel copied none of them: the NIC took the user pages.
    assert_eq!(
        (&u["zc_notifs"], &u["zc_copied"]),
        (&2000.into(), &0.into()),
        "{u}"
    );
    let share = |v: &serde_json::Value| v["profile"]["shares"]["copy_share"].as_f64();
    match (share(&send), share(&zc)) {
        (Some(a), Some(b)) => {
            println!(
                "copy share of the samples: SEND {:.1}%, SEND_ZC {:.1}%",
                a * 100.0,
                b * 100.0
            );
            assert!(a > 0.10, "the plain send copied little: {a}\n{all}");
            assert!(
                b < a / 4.0,
                "the zero-copy send copied {b} against {a}\n{all}"
            );
        }
        _ => skip(
            "sampling",
            &format!("the profile half: no profile in the guest's results\n{all}"),
        ),
    }
}
