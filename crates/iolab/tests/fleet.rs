//! `iolab fleet`: one iolab command over an Ansible inventory, each host's records fetched to DIR/HOST/,
//! what was copied removed from the hosts, and the hosts' histograms merged. The hosts here are this
//! machine under two inventory names (Ansible's local connection) and one that refuses ssh.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;

fn ansible_missing() -> bool {
    let found = std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .any(|d| d.join("ansible-playbook").is_file());
    if !found {
        skip(
            "ansible",
            "ansible-playbook is not installed (apt-get install ansible-core)",
        );
    }
    !found
}

/// The command each fleet of these tests runs: a short survey.
const SHORT_SURVEY: &[&str] = &[
    "--",
    "survey",
    "--rounds",
    "1",
    "--max-seconds",
    "0.05",
    "--max-time",
    "0",
];

/// The fleet runs of this file, one at a time: each checks that it left nothing in /tmp.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The /tmp entries a fleet run makes on a host.
fn fleet_dirs() -> Vec<String> {
    std::fs::read_dir("/tmp")
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("iolab-fleet-"))
        .collect()
}

/// No /tmp entry of a fleet run's made since `before` is left (`place`: which host, for the message).
fn nothing_left_since(before: &[String], place: &str) {
    let left: Vec<String> = fleet_dirs()
        .into_iter()
        .filter(|d| !before.contains(d))
        .collect();
    assert!(left.is_empty(), "{place}: {left:?}");
}

fn inventory(dir: &Path, hosts: &[&str]) -> String {
    let mut text = String::from("[lab]\n");
    for h in hosts {
        text += &if *h == "gone" {
            "gone ansible_host=127.0.0.1 ansible_port=1 ansible_connection=ssh\n".to_string()
        } else {
            format!("{h} ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n")
        };
    }
    let p = dir.join("hosts.ini");
    std::fs::write(&p, text).unwrap();
    path_str(&p)
}

fn fleet(work: &Path, args: &[&str]) -> std::process::Output {
    let out = std::process::Command::new(bin())
        .arg("fleet")
        .args(args)
        .current_dir(work)
        .env("ANSIBLE_HOST_KEY_CHECKING", "False")
        // A new connection: the fleet run's master connection (ControlPersist) is still up.
        .env(
            "ANSIBLE_SSH_ARGS",
            "-o ControlMaster=no -o ControlPath=none",
        )
        .output()
        .unwrap();
    println!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A result's `latency.hist_ns`: "VALUE:COUNT" pairs apart by spaces.
fn pairs(text: &str) -> Vec<(f64, u64)> {
    text.split(' ')
        .map(|p| {
            let (v, n) = p.split_once(':').unwrap();
            (v.parse().unwrap(), n.parse().unwrap())
        })
        .collect()
}

/// The p99 of the hosts' histograms merged, by rank, computed here from their `hist_ns`.
fn merged_p99(hists: &[Vec<(f64, u64)>]) -> f64 {
    let mut all: Vec<(f64, u64)> = hists.iter().flatten().copied().collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: u64 = all.iter().map(|b| b.1).sum();
    let rank = (0.99 * total as f64).ceil() as u64;
    let mut seen = 0;
    all.iter()
        .find(|b| {
            seen += b.1;
            seen >= rank
        })
        .unwrap()
        .0
}

#[test]
fn a_fleet_keeps_each_hosts_survey_reports_the_unreachable_one_and_merges_the_histograms() {
    if ansible_missing() {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let work = disk_dir();
    let before = fleet_dirs();
    let inv = inventory(work.path(), &["alpha", "beta", "gone"]);
    let out = fleet(
        work.path(),
        &[&[&inv, "--results", "res"], SHORT_SURVEY].concat(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    // One host did not run: the run says so and exits 1, with the others' results kept.
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout.contains("gone") && stdout.contains("unreachable"),
        "{stdout}"
    );
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    for h in ["alpha", "beta"] {
        let info = json_file(&work.path().join("res").join(h).join("fleet-host.json"));
        assert_eq!(info["rc"], 0, "{h}: {info}");
        assert_eq!(info["kernel"].as_str(), Some(kernel.trim()), "{h}");
        assert_eq!(
            info["architecture"].as_str(),
            Some(std::env::consts::ARCH),
            "{h}"
        );
        let files: Vec<&str> = info["records"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(files.iter().any(|f| f.ends_with(".json")), "{h}: {files:?}");
        for f in &files {
            assert!(
                work.path()
                    .join("res")
                    .join(h)
                    .join("files")
                    .join(f)
                    .is_file(),
                "{h}: {f} fetched"
            );
        }
    }
    assert!(!work.path().join("res/gone/fleet-host.json").exists());
    assert!(
        stdout.contains("Hosts:") && stdout.contains("fleet p50"),
        "{stdout}"
    );
    // Nothing of the run is left on the hosts.
    nothing_left_since(&before, "left on the host");
    // Each workload both hosts ran: the fleet's p99 is the p99 of their histograms merged.
    let doc = json_file(&work.path().join("res/fleet.json"));
    let fleet_rows = fleet_p99s_are_the_merged_histograms(&doc, 2);
    let checked = fleet_rows.len();
    assert!(checked >= 10, "only {checked} workloads ran on both hosts");
    report_shows_the_fleet(work.path(), &fleet_rows);
    // compare reads the results directory across its hosts (and only so).
    let res = path_str(&work.path().join("res"));
    let c = iolab(&["compare", "--across", "host", &res]);
    assert_eq!(c.code, 0, "{}", c.stderr);
    assert!(
        c.stdout.contains("host alpha (A) vs beta (B)"),
        "{}",
        c.stdout
    );
    refused_by(
        &["compare", &res, &res],
        &[],
        "--across",
        "across its hosts",
    );
}

/// For each workload at least `hosts_min` hosts ran, the fleet's p99 in fleet.json against the p99 of
/// their histograms merged here; the rows checked, with that p99.
fn fleet_p99s_are_the_merged_histograms(doc: &Value, hosts_min: usize) -> Vec<(String, f64)> {
    let mut fleet_rows = Vec::new();
    for w in doc["workloads"].as_array().unwrap() {
        let hosts = w["hosts"].as_array().unwrap();
        if hosts.len() < hosts_min {
            continue;
        }
        if w["fleet"].is_null() {
            // Only where a host's run recorded no per-op latency (sparse clock reads).
            let counts: Vec<u64> = hosts
                .iter()
                .map(|h| h["latency"]["count"].as_u64().unwrap_or(0))
                .collect();
            assert!(
                counts.contains(&0),
                "{}: no fleet figures though every host has latencies {counts:?}",
                w["workload"]
            );
            continue;
        }
        let hists: Vec<Vec<(f64, u64)>> = hosts
            .iter()
            .map(|h| pairs(h["latency"]["hist_ns"].as_str().unwrap()))
            .collect();
        let want = merged_p99(&hists);
        let got = w["fleet"]["p99_ns"].as_f64().unwrap();
        assert!(
            (got - want).abs() <= want * 0.001 + 0.1,
            "{}: fleet p99 {got}, merged {want}",
            w["workload"]
        );
        let averaged = hosts
            .iter()
            .map(|h| h["latency"]["p99_ns"].as_f64().unwrap())
            .sum::<f64>()
            / hosts.len() as f64;
        println!(
            "{}: fleet p99 {got:.1} ns, merged here {want:.1}, hosts' average {averaged:.1}",
            w["workload"]
        );
        fleet_rows.push((w["workload"].as_str().unwrap().to_string(), got));
    }
    fleet_rows
}

/// `iolab report DIR` of the fleet's results: every host with its outcome (the unreachable one too), and
/// for each workload the fleet's p99 that fleet.json holds, in the workload's fleet row.
fn report_shows_the_fleet(work: &Path, rows: &[(String, f64)]) {
    let out = path_str(&work.join("fleet.html"));
    let r = iolab(&["report", &path_str(&work.join("res")), "-o", &out]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("<h2>Fleet: "), "no fleet section");
    assert!(
        html.contains("<tr><td>gone</td><td></td><td></td><td>not run: unreachable"),
        "the unreachable host is not in the report"
    );
    for h in ["alpha", "beta"] {
        assert!(html.contains(&format!(
            "<tr><td>{h}</td><td>{}</td>",
            std::env::consts::ARCH
        )));
    }
    for (workload, p99) in rows {
        let esc = workload
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;");
        let at = html
            .find(&format!("\">{esc}</td>"))
            .unwrap_or_else(|| panic!("{workload}: no row in the report"));
        let row = &html[at..];
        let row = &row[row.find("<tr class=\"fleet\">").unwrap()..];
        let row = &row[..row.find("</tr>").unwrap()];
        let want = format!("<td>{}</td>", iolab_engine::units::fmt_ns(*p99));
        assert!(
            row.contains(&want),
            "{workload}: fleet row {row}, wanted p99 {want}"
        );
    }
}

#[test]
fn a_failing_command_is_reported_for_its_host_and_nothing_is_left() {
    if ansible_missing() {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let work = disk_dir();
    let before = fleet_dirs();
    let inv = inventory(work.path(), &["alpha"]);
    // What only the host can check (a target that is a directory there; a spec every host would refuse,
    // such as --method nosuch, is refused before Ansible starts).
    let out = fleet(
        work.path(),
        &[
            &inv,
            "--results",
            "res",
            "--",
            "run",
            "--target",
            "/var/tmp",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout.contains("failed, exit 2") && stdout.contains("is a directory"),
        "{stdout}"
    );
    let info = json_file(&work.path().join("res/alpha/fleet-host.json"));
    assert_eq!(info["rc"], 2);
    // Stopped at the timeout: said so, and nothing left either.
    let out = fleet(
        work.path(),
        &[
            &inv,
            "--results",
            "res2",
            "--timeout",
            "1",
            "--",
            "run",
            "--method",
            "psync",
            "--target",
            "/dev/null",
            "--duration",
            "20s",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout.contains("stopped at the timeout (1 s)"), "{stdout}");
    nothing_left_since(&before, "left on the host");
}

#[test]
fn fleet_refuses_bad_input_before_anything_runs() {
    let work = disk_dir();
    let inv = inventory(work.path(), &["alpha"]);
    // No Ansible on PATH: the error names the package.
    let out = std::process::Command::new(bin())
        .args(["fleet", &inv, "--", "survey"])
        .env("PATH", work.path())
        .current_dir(work.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("ansible-core"), "{err}");
    refused_by(
        &["fleet", &inv],
        &["--binary", "aarch64", "--", "survey"],
        "--binary",
        "ARCH=PATH",
    );
    refused_by(
        &["fleet", "/nonexistent/hosts.ini"],
        &["--", "survey"],
        "INVENTORY",
        "no such file",
    );
    // A results directory with something in it is not written into.
    std::fs::create_dir(work.path().join("full")).unwrap();
    std::fs::write(work.path().join("full/keep"), "mine").unwrap();
    let full = path_str(&work.path().join("full"));
    refused_by(
        &["fleet", &inv],
        &["--results", &full, "--", "survey"],
        "--results",
        "not empty",
    );
    assert_eq!(
        std::fs::read_to_string(work.path().join("full/keep")).unwrap(),
        "mine"
    );
    refused_by(
        &["fleet", &inv],
        &["--", "run", "--no-such-flag"],
        "ARGS",
        "not an iolab command line",
    );
    refused_by(
        &["fleet", &inv],
        &["--timeout", "0", "--", "survey"],
        "--timeout",
        "0",
    );
    // A regular expression in --limit: Ansible's matching of `~(a+)+$` has no bound on its time.
    for limit in ["~(a+)+$", "web:!~db.*", "all,&~x"] {
        refused_by(
            &["fleet", &inv],
            &["--limit", limit, "--", "survey"],
            "--limit",
            "a regular expression",
        );
    }
}

#[test]
fn host_names_and_arguments_stay_what_they_are() {
    if ansible_missing() {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let work = disk_dir();
    // A host name is a directory name: '..' or a path would put files outside the results directory.
    let results = work.path().join("r");
    for bad in ["..", "a/b", "fleet.json"] {
        let inv = work.path().join("bad.ini");
        std::fs::write(&inv, format!("[lab]\n{bad} ansible_connection=local\n")).unwrap();
        refused_by(
            &["fleet", &path_str(&inv)],
            &["--results", &path_str(&results), "--", "survey"],
            "INVENTORY",
            "host",
        );
        assert!(!results.exists(), "{bad}: nothing made");
    }
    // An empty inventory: nothing to run on, nothing made.
    let inv = work.path().join("empty.ini");
    std::fs::write(&inv, "[lab]\n").unwrap();
    refused_by(
        &["fleet", &path_str(&inv)],
        &["--results", &path_str(&results), "--", "survey"],
        "INVENTORY",
        "no host",
    );
    assert!(!results.exists());
    // The command line is not templated by Ansible: '{{ 6*7 }}' is a file name, not 42.
    let inv = inventory(work.path(), &["alpha"]);
    let name = "{{ 6*7 }}.json";
    let out = fleet(
        work.path(),
        &[
            &inv,
            "--results",
            "res",
            "--",
            "run",
            "--method",
            "psync",
            "--target",
            "/dev/null",
            "--ops",
            "100",
            "--json",
            name,
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(work.path().join("res/alpha/files").join(name).is_file());
    assert!(!work.path().join("res/alpha/files/42.json").exists());
}

/// A guest of `iolab vm --ssh 0`, up until dropped (SIGTERM: iolab stops qemu and removes the run's
/// files, its keys among them).
struct Guest {
    child: std::process::Child,
    /// Its Ansible inventory line, as `iolab vm` printed it.
    line: String,
    stderr: std::path::PathBuf,
}

impl Guest {
    /// Starts `iolab vm --arch ARCH --ssh 0` (with `--exe` where given) writing its stderr to `log`.
    fn start(arch: &str, exe: Option<&Path>, log: &Path) -> std::process::Child {
        let mut c = std::process::Command::new(bin());
        c.args(["vm", "--arch", arch, "--ssh", "0", "--timeout", "1800"]);
        if let Some(e) = exe {
            c.arg("--exe").arg(e);
        }
        c.stdout(std::process::Stdio::piped())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .unwrap()
    }

    /// Waits for the inventory line; Err: what `iolab vm` said instead. A guest that has not answered
    /// within ten minutes (booting takes about a minute; TCG's emulation has broken a guest's kernel
    /// without a panic) is stopped with SIGTERM rather than waited for until its --timeout.
    fn ready(mut child: std::process::Child, log: &Path) -> Result<Guest, String> {
        use std::io::BufRead;
        use std::sync::atomic::{AtomicBool, Ordering};
        let out = child.stdout.take().unwrap();
        let answered = std::sync::Arc::new(AtomicBool::new(false));
        let (seen, pid) = (answered.clone(), child.id() as i32);
        std::thread::spawn(move || {
            let t0 = std::time::Instant::now();
            while !seen.load(Ordering::Relaxed) {
                if t0.elapsed() > std::time::Duration::from_secs(600) {
                    // SAFETY: kill(2) reads no memory; the child is not reaped before `answered` is set.
                    unsafe { libc::kill(pid, libc::SIGTERM) };
                    return;
                }
                std::thread::sleep(std::time::Duration::from_secs(1));
            }
        });
        let line = std::io::BufReader::new(out)
            .lines()
            .map_while(Result::ok)
            .find(|l| l.contains(" ansible_host=127.0.0.1 "));
        answered.store(true, Ordering::Relaxed);
        let g = Guest {
            child,
            line: line.unwrap_or_default(),
            stderr: log.to_path_buf(),
        };
        if g.line.is_empty() {
            return Err(std::fs::read_to_string(log).unwrap_or_default());
        }
        Ok(g)
    }

    /// Its name in the inventory (the line's first word).
    fn name(&self) -> &str {
        self.line.split(' ').next().unwrap()
    }

    fn word(&self, key: &str) -> String {
        let at = self
            .line
            .find(key)
            .unwrap_or_else(|| panic!("{key}: {}", self.line))
            + key.len();
        self.line[at..]
            .split([' ', '\''])
            .next()
            .unwrap()
            .to_string()
    }

    /// A shell command's stdout in the guest, over the guest's ssh (host key checked).
    fn ssh(&self, command: &str) -> String {
        let out = std::process::Command::new("ssh")
            .args(["-p", &self.word("ansible_port=")])
            .args(["-i", &self.word("ansible_ssh_private_key_file=")])
            .arg(format!(
                "-oUserKnownHostsFile={}",
                self.word("UserKnownHostsFile=")
            ))
            .args(["-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes"])
            .args(["root@127.0.0.1", command])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "ssh {command}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Stops it as a user would (SIGTERM) and returns what it printed on stderr.
    fn stop(&mut self) -> String {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }
}

impl Drop for Guest {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.stop();
        }
    }
}

/// What `iolab vm --ssh` needs and this machine may not have: the feature missing and why, if any.
fn guests_missing() -> Option<(&'static str, String)> {
    if ansible_missing() {
        return Some(("ansible", "ansible-playbook is not installed".into()));
    }
    let have = |tool: &str| {
        std::env::var_os("PATH")
            .iter()
            .flat_map(std::env::split_paths)
            .any(|d| d.join(tool).is_file())
    };
    if !have("ssh-keygen") || !have("ssh") {
        return Some((
            "guest",
            "OpenSSH's ssh and ssh-keygen are missing (apt-get install openssh-client)".into(),
        ));
    }
    board_bin("IOLAB_AARCH64_BIN", "aarch64")
        .err()
        .map(|why| ("boards", why))
}

#[test]
fn a_fleet_of_this_machine_and_two_guests_of_other_architectures_merges_their_histograms() {
    if let Some((feature, why)) = guests_missing() {
        skip(feature, &why);
        return;
    }
    let arm = board_bin("IOLAB_AARCH64_BIN", "aarch64").unwrap();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let work = disk_dir();
    // Both guests boot at once; each prints its inventory line once its ssh server answers.
    let (lx, la) = (
        work.path().join("vm-x86_64.log"),
        work.path().join("vm-aarch64.log"),
    );
    let (cx, ca) = (
        Guest::start("x86_64", None, &lx),
        Guest::start("aarch64", Some(&arm), &la),
    );
    let (x86, aarch64) = match (Guest::ready(cx, &lx), Guest::ready(ca, &la)) {
        (Ok(x), Ok(a)) => (x, a),
        (Err(e), _) | (_, Err(e)) if e.contains("cannot build the guest here") => {
            skip("guest", &e);
            return;
        }
        (Err(e), _) | (_, Err(e)) => panic!("a guest did not come up: {e}"),
    };
    let inv = work.path().join("hosts.ini");
    std::fs::write(
        &inv,
        format!(
            "[lab]\nlocal ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n{}\n{}\n",
            x86.line, aarch64.line
        ),
    )
    .unwrap();
    let before = fleet_dirs();
    let (inv, binary) = (path_str(&inv), format!("aarch64={}", arm.display()));
    let head = [inv.as_str(), "--binary", &binary, "--results", "res"];
    let out = fleet(work.path(), &[&head[..], SHORT_SURVEY].concat());
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    // One result set per host, with that host's kernel and architecture in it.
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    for (h, arch, kernel_has) in [
        ("local", std::env::consts::ARCH, kernel.trim()),
        (x86.name(), "x86_64", "-amd64"),
        (aarch64.name(), "aarch64", "-arm64"),
    ] {
        let info = json_file(&work.path().join("res").join(h).join("fleet-host.json"));
        assert_eq!(info["rc"], 0, "{h}: {info}");
        assert_eq!(info["architecture"].as_str(), Some(arch), "{h}");
        let k = info["kernel"].as_str().unwrap();
        assert!(k.contains(kernel_has), "{h}: kernel {k}");
        let records = info["records"].as_array().unwrap();
        assert_eq!(records.len(), 1, "{h}: one survey: {records:?}");
        let file = work.path().join("res").join(h).join("files");
        let survey = json_file(&file.join(records[0].as_str().unwrap()));
        assert_eq!(survey["host"]["kernel_release"].as_str(), Some(k), "{h}");
        let emulated = survey["host"]["emulated"] == true;
        assert_eq!(emulated, h != "local", "{h}: emulated is {emulated}");
    }
    assert!(
        stdout.contains(aarch64.name()) && stdout.contains("emulated, tcg"),
        "{stdout}"
    );
    // Said once, above the workloads: which hosts' figures are an emulator's.
    let said = stdout
        .lines()
        .find(|l| l.contains("emulated (behaviour, not speed"))
        .unwrap_or_else(|| panic!("no line naming the emulated hosts: {stdout}"));
    assert!(said.contains(x86.name()) && said.contains(aarch64.name()) && !said.contains("local"));
    // A guest that only serves ssh has no share of this machine's directory.
    assert!(
        !x86.ssh("cat /proc/mounts").contains(" 9p "),
        "the share is mounted"
    );
    // Nothing left on the hosts: this machine's /tmp, the guests' /tmp and Ansible's remote tmp.
    nothing_left_since(&before, "left on this machine");
    for g in [&x86, &aarch64] {
        let there = g.ssh("ls -A /tmp /root/.ansible/tmp");
        assert!(
            !there.contains("iolab-fleet-") && !there.contains("ansible-tmp-"),
            "left on {}: {there}",
            g.name()
        );
    }
    // The guest's host key is checked even where Ansible's own checking is turned off: a known_hosts
    // holding another key refuses the connection.
    let wrong = work.path().join("wrong_known_hosts");
    let other =
        std::fs::read_to_string(format!("{}.pub", x86.word("ansible_ssh_private_key_file=")))
            .unwrap();
    std::fs::write(
        &wrong,
        format!("[127.0.0.1]:{} {other}", x86.word("ansible_port=")),
    )
    .unwrap();
    let bad = work.path().join("wrong.ini");
    std::fs::write(
        &bad,
        format!(
            "[lab]\n{}\n",
            x86.line
                .replace(&x86.word("UserKnownHostsFile="), &path_str(&wrong))
        ),
    )
    .unwrap();
    let ping = std::process::Command::new("ansible")
        .args(["-i", &path_str(&bad), "all", "-m", "ping"])
        .env("ANSIBLE_HOST_KEY_CHECKING", "False")
        // A new connection: the fleet run's master connection (ControlPersist) is still up.
        .env(
            "ANSIBLE_SSH_ARGS",
            "-o ControlMaster=no -o ControlPath=none",
        )
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&ping.stdout);
    assert!(
        !ping.status.success() && said.contains("UNREACHABLE"),
        "{said}"
    );
    // The fleet's p99 of each workload the three hosts ran is the p99 of their merged histograms.
    let doc = json_file(&work.path().join("res/fleet.json"));
    let rows = fleet_p99s_are_the_merged_histograms(&doc, 3);
    assert!(
        rows.len() >= 10,
        "only {} workloads ran on all three hosts",
        rows.len()
    );
    // Stopped, each guest takes its keys and files with it.
    for mut g in [x86, aarch64] {
        let run_dir = Path::new(&g.word("ansible_ssh_private_key_file="))
            .parent()
            .unwrap()
            .to_path_buf();
        let said = g.stop();
        assert!(
            !run_dir.exists(),
            "{} left after SIGTERM: {said}",
            run_dir.display()
        );
    }
}

#[test]
fn a_guest_to_serve_ssh_refuses_a_cache_path_its_inventory_line_cannot_hold() {
    let work = disk_dir();
    let cache = path_str(&work.path().join("my cache"));
    refused_by(
        &["vm", "--ssh", "0", "--cache", &cache],
        &[],
        "--cache",
        "no blanks or quotes",
    );
    assert!(!work.path().join("my cache").exists(), "nothing made");
}

/// `iolab ARGS` (in `work`, with `path` as PATH where given), stopped and failed if it has not ended
/// within a minute (what this guards against is a read that blocks for ever).
fn ended(work: &Path, args: &[&str], path: Option<&str>) -> std::process::Output {
    let mut c = std::process::Command::new(bin());
    c.args(args).current_dir(work);
    if let Some(p) = path {
        c.env("PATH", p);
    }
    let child = c
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    finished(child, &format!("iolab {args:?}"))
}

/// `child`'s output once it ends; it is killed, and the test fails, if that takes more than a minute.
fn finished(child: std::process::Child, what: &str) -> std::process::Output {
    let guard = Guard::new(child.id(), 60);
    let out = child.wait_with_output().unwrap();
    assert!(!guard.fired(), "{what} still ran after 60 s");
    out
}

/// Kills process `pid` unless [`Guard::fired`] is called within `secs` seconds.
struct Guard {
    done: std::sync::mpsc::Sender<()>,
    thread: std::thread::JoinHandle<bool>,
}

impl Guard {
    fn new(pid: u32, secs: u64) -> Guard {
        let (done, wait) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let late = wait
                .recv_timeout(std::time::Duration::from_secs(secs))
                .is_err();
            if late {
                let _ = std::process::Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
            }
            late
        });
        Guard { done, thread }
    }

    /// Whether the time ran out (and the process was killed).
    fn fired(self) -> bool {
        let _ = self.done.send(());
        self.thread.join().unwrap()
    }
}

/// Exit 2 with one line on stderr naming `flag`, `word` in it.
fn refused_in_one_line(out: &std::process::Output, flag: &str, word: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(flag) && err.contains(word), "{err}");
}

fn mkfifo(p: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .unwrap();
    assert!(made.success());
}

#[test]
fn an_inventory_ansible_would_hang_on_or_read_without_end_is_refused_before_it_runs() {
    let work = disk_dir();
    let w = work.path();
    mkfifo(&w.join("fifo"));
    std::os::unix::fs::symlink(w.join("fifo"), w.join("to-fifo")).unwrap();
    std::fs::write(w.join("big.ini"), vec![b'#'; (1 << 20) + 1]).unwrap();
    std::fs::create_dir_all(w.join("dir/sub")).unwrap();
    std::fs::write(w.join("dir/hosts"), "[lab]\nalpha\n").unwrap();
    mkfifo(&w.join("dir/sub/more"));
    // Variables beside a file inventory are read with it.
    std::fs::create_dir_all(w.join("vars/group_vars")).unwrap();
    std::fs::write(w.join("vars/hosts.ini"), "[lab]\nalpha\n").unwrap();
    mkfifo(&w.join("vars/group_vars/all.yml"));
    {
        use std::os::unix::fs::PermissionsExt;
        let script = "#!/bin/sh\nexec cat /dev/zero\n";
        std::fs::write(w.join("zero.ini"), script).unwrap();
        std::fs::create_dir(w.join("scripts")).unwrap();
        std::fs::write(w.join("scripts/hosts"), "[lab]\nalpha\n").unwrap();
        std::fs::write(w.join("scripts/z"), script).unwrap();
        for p in ["zero.ini", "scripts/z"] {
            std::fs::set_permissions(w.join(p), std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        std::fs::write(w.join("plugin.yml"), "plugin: ansible.builtin.script\n").unwrap();
    }
    // 3,000 groups that each hold a group of 10,000 hosts: 62 KB that kept Ansible reading for minutes.
    let mut groups = String::from("[web]\nweb[0:9999]\n");
    for i in 0..3000 {
        groups.push_str(&format!("[g{i}:children]\nweb\n"));
    }
    std::fs::write(w.join("groups.ini"), groups).unwrap();
    // The same in YAML (119 KB, minutes too) and TOML, and a chain of children 2,000 deep.
    let mut yaml =
        String::from("all:\n  children:\n    web:\n      hosts:\n        web[0:9999]:\n");
    let mut toml = String::from("[web.hosts]\n\"web[0:9999]\" = {}\n");
    let mut chain = String::from("all:\n  children:\n    c0:\n      hosts:\n        h:\n");
    for i in 0..3000 {
        yaml.push_str(&format!("    g{i}:\n      children:\n        web:\n"));
        toml.push_str(&format!("[g{i}]\nchildren = [\"web\"]\n"));
        if i < 2000 {
            chain.push_str(&format!(
                "    c{}:\n      children:\n        c{i}:\n",
                i + 1
            ));
        }
    }
    std::fs::write(w.join("groups.yml"), yaml).unwrap();
    std::fs::write(w.join("groups.toml"), toml).unwrap();
    std::fs::write(w.join("chain.yaml"), chain).unwrap();
    // The same groups by merge keys (`<<: *c`), and an inventory of 30,000 hosts (Ansible: 2 s more).
    let mut merged =
        String::from("all:\n  children:\n    web:\n      hosts:\n        web[0:9999]:\n");
    merged.push_str("    g0: &c\n      children:\n        web:\n");
    let mut many = String::from("[lab]\n");
    for i in 1..3000 {
        merged.push_str(&format!("    g{i}: {{<<: *c}}\n"));
    }
    for i in 0..30_000 {
        many.push_str(&format!("h{i}.lab\n"));
    }
    std::fs::write(w.join("merged.yml"), merged).unwrap();
    // A directory of `*.ini` files, which Ansible leaves out of an inventory directory: no host at all.
    std::fs::create_dir(w.join("inis")).unwrap();
    std::fs::write(w.join("inis/hosts.ini"), "[lab]\nalpha\n").unwrap();
    std::fs::write(w.join("many.ini"), many).unwrap();
    // 300,000 values of YAML in an inventory and the variables beside it (Ansible's YAML reader takes 5
    // to 10 µs each).
    std::fs::create_dir_all(w.join("values/group_vars")).unwrap();
    let zeros = vec!["0"; 150_000].join(",");
    let inv = format!("all:\n  hosts:\n    alpha:\n  vars:\n    v: [{zeros}]\n");
    std::fs::write(w.join("values/hosts.yml"), inv).unwrap();
    std::fs::write(w.join("values/group_vars/all"), format!("w: [{zeros}]\n")).unwrap();
    // A YAML list split by NEL (a line break to Ansible), a TOML list and an INI one (a Python literal
    // to Ansible): 260,000, 90,000 (three each) and 260,000 values.
    std::fs::create_dir_all(w.join("nel/group_vars")).unwrap();
    std::fs::write(w.join("nel/hosts.ini"), "[lab]\nalpha\n").unwrap();
    let nel = "-\u{85}".repeat(260_000);
    std::fs::write(w.join("nel/group_vars/all.yml"), format!("x:\n{nel}")).unwrap();
    let zeros = |n: usize| vec!["0"; n].join(",");
    let toml = format!("[lab.hosts.alpha]\n[lab.vars]\nx = [{}]\n", zeros(90_000));
    std::fs::write(w.join("values.toml"), toml).unwrap();
    let ini = format!("[lab]\nalpha\n[lab:vars]\nx=[{}]\n", zeros(260_000));
    std::fs::write(w.join("literal.ini"), ini).unwrap();
    std::fs::write(w.join("loop.yml"), "all:\n  children:\n    a:\n      children:\n        b:\n          children:\n            a:\n").unwrap();
    for (inv, word) in [
        ("fifo", "is a FIFO"),
        ("to-fifo", "is a FIFO"),
        ("/dev/zero", "is a character device"),
        ("big.ini", "at most 1 MiB"),
        (
            "dir",
            "dir/sub/more (read with the inventory dir) is a FIFO",
        ),
        (
            "vars/hosts.ini",
            "group_vars/all.yml (read with the inventory",
        ),
        ("/proc/self/environ", "kernel-interface filesystem"),
        // Ansible would run these, and read what they print without end.
        ("zero.ini", "zero.ini is executable"),
        (
            "scripts",
            "scripts/z (read with the inventory scripts) is executable",
        ),
        ("plugin.yml", "configures an inventory plugin"),
        ("groups.ini", "more than 1,000,000 hosts counted per group"),
        ("groups.yml", "more than 1,000,000 hosts counted per group"),
        ("groups.toml", "more than 1,000,000 hosts counted per group"),
        ("chain.yaml", "children 2,002 deep"),
        ("merged.yml", "more than 1,000,000 hosts counted per group"),
        (
            "inis",
            "inis: a directory with no file Ansible reads as an inventory",
        ),
        (
            "many.ini",
            "names 30,000 hosts; iolab gives Ansible inventories of at most 25,000",
        ),
        ("loop.yml", "group 'a' is among its own children"),
        ("values/hosts.yml", "come to more than 250,000 values"),
        ("nel/hosts.ini", "come to more than 250,000 values"),
        ("values.toml", "come to more than 250,000 values"),
        ("literal.ini", "come to more than 250,000 values"),
    ] {
        let out = ended(w, &["fleet", inv, "--results", "res", "--", "survey"], None);
        refused_in_one_line(&out, "INVENTORY", word);
        assert!(!w.join("res").exists(), "{inv}: nothing made");
    }
    // A directory of inventory files is still one.
    std::fs::remove_file(w.join("dir/sub/more")).unwrap();
    let out = ended(w, &["fleet", "dir", "--", "survey"], Some(""));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ansible-core"), "past the checks: {err}");
}

/// An Ansible configuration Ansible would hang on is refused as the input it is (a FIFO `./ansible.cfg`
/// held Ansible for 120 s, and the inventory was blamed); so are more hosts than a fleet runs on, and
/// more at once than Ansible's workers and ssh should be.
#[test]
fn an_ansible_config_it_would_hang_on_and_too_many_hosts_are_refused_before_anything_runs() {
    let work = disk_dir();
    let w = work.path();
    let inv = inventory(w, &["alpha"]);
    mkfifo(&w.join("ansible.cfg"));
    let out = ended(
        w,
        &["fleet", &inv, "--results", "res", "--", "survey"],
        None,
    );
    refused_in_one_line(
        &out,
        "ANSIBLE_CONFIG",
        "ansible.cfg: Ansible reads it as its configuration, and it is a FIFO",
    );
    assert!(!w.join("res").exists(), "nothing made");
    std::fs::remove_file(w.join("ansible.cfg")).unwrap();
    // Nor one on procfs, whose size says nothing (0 for /proc/kallsyms's 5 MB).
    std::os::unix::fs::symlink("/proc/self/status", w.join("ansible.cfg")).unwrap();
    let out = ended(w, &["fleet", &inv, "--", "survey"], None);
    refused_in_one_line(
        &out,
        "ANSIBLE_CONFIG",
        "is on procfs, a kernel-interface filesystem",
    );
    std::fs::remove_file(w.join("ansible.cfg")).unwrap();
    let out = ended(w, &["fleet", &inv, "--serial", "257", "--", "survey"], None);
    refused_in_one_line(&out, "--serial", "257 is not in 0..=256");
    // The survey's own flags are checked as the hosts would check them, before anything is made.
    for (flag, arg, says) in [
        (
            "--ops",
            "31600000000000000",
            "beyond the longest run iolab times",
        ),
        ("--rounds", "0", "expected 1 to 100 rounds"),
    ] {
        let out = ended(w, &["fleet", &inv, "--", "survey", flag, arg], None);
        refused_in_one_line(&out, flag, says);
        assert!(!w.join("iolab-results").exists(), "nothing made");
    }
    if ansible_missing() {
        return;
    }
    let many: String = (0..=10_000)
        .map(|i| format!("h{i} ansible_connection=local\n"))
        .collect();
    std::fs::write(w.join("many.ini"), format!("[lab]\n{many}")).unwrap();
    let out = ended(
        w,
        &["fleet", "many.ini", "--results", "res", "--", "survey"],
        None,
    );
    refused_in_one_line(
        &out,
        "INVENTORY",
        "names 10,001 hosts; iolab runs a fleet of at most 10,000",
    );
    assert!(!w.join("res").exists(), "nothing made");
}

#[test]
fn what_a_host_would_write_or_run_out_of_reach_is_refused_before_it_runs() {
    let work = disk_dir();
    let w = work.path();
    let inv = inventory(w, &["alpha"]);
    // A results directory on procfs cannot be made: refused before Ansible runs.
    let out = ended(
        w,
        &["fleet", &inv, "--results", "/proc/self/x", "--", "survey"],
        None,
    );
    refused_in_one_line(&out, "--results", "kernel-interface filesystem");
    // A record file outside the run's directory would stay on the host.
    for (flag, path) in [("--json", "/tmp/x.json"), ("--md", "../x.md")] {
        let out = ended(
            w,
            &["fleet", &inv, "--", "run", "--ops", "1", flag, path],
            None,
        );
        refused_in_one_line(&out, "ARGS", &format!("{flag} {path}"));
    }
    // A --binary that is no iolab of its architecture is never copied to a host.
    let out = ended(
        w,
        &[
            "fleet",
            &inv,
            "--binary",
            "x86_64=/etc/passwd",
            "--",
            "survey",
        ],
        None,
    );
    refused_in_one_line(&out, "--binary", "not a 64-bit little-endian ELF");
    let other = if std::env::consts::ARCH == "aarch64" {
        "x86_64"
    } else {
        "aarch64"
    };
    let out = ended(
        w,
        &[
            "fleet",
            &inv,
            "--binary",
            &format!("{other}={}", bin()),
            "--",
            "survey",
        ],
        None,
    );
    refused_in_one_line(&out, "--binary", &format!("not an {other} binary"));
    let out = ended(
        w,
        &[
            "fleet",
            &inv,
            "--binary",
            &format!("riscv64={}", bin()),
            "--",
            "survey",
        ],
        None,
    );
    refused_in_one_line(&out, "--binary", "x86_64, aarch64 and armv7l");
    // An ELF of this machine's that is another program, or a copy of iolab cut short.
    let own = match std::env::consts::ARCH {
        "arm" => "armv7l",
        a => a,
    };
    let cut = w.join("cut");
    std::fs::write(&cut, &std::fs::read(bin()).unwrap()[..4096]).unwrap();
    for (exe, word) in [
        ("/bin/true".to_string(), "does not say iolab"),
        (path_str(&cut), "not a whole executable"),
    ] {
        let out = ended(
            w,
            &[
                "fleet",
                &inv,
                "--binary",
                &format!("{own}={exe}"),
                "--",
                "survey",
            ],
            None,
        );
        refused_in_one_line(&out, "--binary", word);
    }
    // Every flag that names a file or directory a command writes is checked, not a list of them.
    let out = ended(w, &["fleet", &inv, "--", "man", "--dir", "/abs"], None);
    refused_in_one_line(&out, "ARGS", "--dir /abs");
    assert!(!w.join("iolab-results").exists(), "nothing made");
}

#[test]
fn a_ctrl_c_while_ansible_reads_the_inventory_stops_it_and_says_so() {
    let work = disk_dir();
    let w = work.path();
    let inv = inventory(w, &["alpha"]);
    // An ansible that never ends, writing its pid first.
    let fake = w.join("bin");
    std::fs::create_dir(&fake).unwrap();
    let mark = w.join("started");
    for tool in ["ansible", "ansible-playbook"] {
        let p = fake.join(tool);
        std::fs::write(
            &p,
            format!(
                "#!/bin/sh\necho $$ > {}.tmp\nmv {0}.tmp {0}\nexec sleep 600\n",
                mark.display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!("{}:/usr/bin:/bin", fake.display());
    let child = std::process::Command::new(bin())
        .args(["fleet", &inv, "--results", "res", "--", "survey"])
        .current_dir(w)
        .env("PATH", &path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut waited = 0;
    while !mark.exists() {
        assert!(waited < 6000, "the fake ansible never started");
        std::thread::sleep(std::time::Duration::from_millis(10));
        waited += 1;
    }
    let ansible = std::fs::read_to_string(&mark).unwrap().trim().to_string();
    std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let out = finished(child, "iolab fleet after a Ctrl-C");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("interrupted") && err.contains("nothing ran"),
        "{err}"
    );
    // Ansible was stopped with it, and nothing was made.
    assert!(
        !Path::new("/proc").join(&ansible).exists(),
        "ansible ({ansible}) still runs"
    );
    assert!(!w.join("res").exists());
}

/// A fleet's results directory as `iolab fleet` leaves it, made here: hosts a and b each ran `run
/// --json r.json` and exited 0.
fn results_of_two_hosts(w: &Path) -> std::path::PathBuf {
    let res = w.join("res");
    for h in ["a", "b"] {
        let files = res.join(h).join("files");
        std::fs::create_dir_all(&files).unwrap();
        let rec = path_str(&files.join("r.json"));
        let r = iolab(&[
            "run",
            "--method",
            "psync",
            "--target",
            "/dev/null",
            "--ops",
            "100",
            "--json",
            &rec,
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let info = serde_json::json!({"host": h, "rc": 0, "architecture": "x86_64", "kernel": "6.1",
            "timeout_s": 60, "stdout": "", "stderr": "", "records": ["r.json"]});
        std::fs::write(res.join(h).join("fleet-host.json"), info.to_string()).unwrap();
    }
    res
}

/// `compare --across host` answers across two hosts; with one host (or none that ran a workload another
/// ran) there is nothing to set against it, and it says so with exit 2, not a report of nothing.
#[test]
fn compare_across_the_hosts_of_a_fleet_of_one_host_is_refused() {
    let work = disk_dir();
    let w = work.path();
    let res = results_of_two_hosts(w);
    let rd = path_str(&res);
    let out = ended(w, &["compare", "--across", "host", &rd], None);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    std::fs::remove_dir_all(res.join("b")).unwrap();
    let out = ended(w, &["compare", "--across", "host", &rd], None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--across") && err.contains("no workload ran on two of the fleet's hosts"),
        "{err}"
    );
}

#[test]
fn a_tampered_results_directory_is_refused_naming_the_host_and_never_blocks() {
    let work = disk_dir();
    let w = work.path();
    let res = results_of_two_hosts(w);
    let rd = path_str(&res);
    let rec = res.join("b/files/r.json");
    let whole = std::fs::read(&rec).unwrap();
    let report = |n: usize| {
        let out = path_str(&w.join(format!("r{n}.html")));
        ended(w, &["report", &rd, "-o", &out], None)
    };
    let out = report(0);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tampered: [(&str, &dyn Fn()); 5] = [
        ("is a FIFO", &|| mkfifo(&rec)),
        ("is a symbolic link", &|| {
            std::os::unix::fs::symlink("/etc/shadow", &rec).unwrap()
        }),
        ("2 GiB or more", &|| {
            std::fs::File::create(&rec)
                .unwrap()
                .set_len(2 << 30)
                .unwrap()
        }),
        ("not whole JSON", &|| {
            std::fs::write(&rec, &whole[..whole.len() / 2]).unwrap()
        }),
        ("is empty", &|| std::fs::write(&rec, b"").unwrap()),
    ];
    for (n, (word, tamper)) in tampered.iter().enumerate() {
        std::fs::remove_file(&rec).unwrap();
        tamper();
        for out in [
            report(n + 1),
            ended(w, &["compare", "--across", "host", &rd], None),
        ] {
            refused_in_one_line(&out, "host b: record unreadable", word);
        }
        assert!(!w.join(format!("r{}.html", n + 1)).exists());
    }
    // The host's outcome file replaced by a FIFO: the host is named, not left out.
    std::fs::remove_file(&rec).unwrap();
    std::fs::write(&rec, &whole).unwrap();
    let info = res.join("b/fleet-host.json");
    std::fs::remove_file(&info).unwrap();
    mkfifo(&info);
    refused_in_one_line(
        &report(9),
        "host b: record unreadable",
        "fleet-host.json is a FIFO",
    );
    // A host's directory replaced by a symbolic link to a copy of it: refused, not passed over.
    std::fs::remove_file(&info).unwrap();
    let copy = w.join("b-copy");
    std::fs::rename(res.join("b"), &copy).unwrap();
    std::fs::write(copy.join("fleet-host.json"), b"{}").unwrap();
    std::os::unix::fs::symlink(&copy, res.join("b")).unwrap();
    refused_in_one_line(
        &report(10),
        "b: a symbolic link to a host's results",
        "not a host's directory iolab made",
    );
}

#[test]
fn a_full_results_filesystem_is_named_and_leaves_no_record_under_a_final_name() {
    if ansible_missing() {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let work = disk_dir();
    let w = work.path();
    // 128 KiB: room for the hosts' directories and Ansible's log, not for a record of 300 KB.
    let small = w.join("small");
    std::fs::create_dir(&small).unwrap();
    let m = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=128k", "tmpfs"])
        .arg(&small)
        .status();
    if !matches!(m, Ok(s) if s.success()) {
        skip("mount", "cannot mount a small tmpfs (needs root)");
        return;
    }
    let before = fleet_dirs();
    let inv = inventory(w, &["alpha"]);
    let res = small.join("res");
    let out = fleet(
        w,
        &[
            &inv,
            "--results",
            &path_str(&res),
            "--",
            "run",
            "--method",
            "psync",
            "--target",
            "/dev/null",
            "--ops",
            "100",
            "--repeat",
            "20",
            "--json",
            "r.json",
        ],
    );
    let names: Vec<String> = walk(&res);
    let _ = std::process::Command::new("umount").arg(&small).status();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    // The host ran: it is lost, not "not run", and why is said in a user's words.
    let line = stdout
        .lines()
        .skip_while(|l| *l != "Hosts:")
        .find(|l| l.trim_start().starts_with("alpha"))
        .unwrap_or_else(|| panic!("no line for the host: {stdout}"));
    assert!(
        line.contains("lost, iolab ran") && line.contains("no space left (ENOSPC)"),
        "{line}"
    );
    assert!(
        stderr.contains("fleet.json: no space left (ENOSPC)"),
        "{stderr}"
    );
    // What came back cut short keeps its temporary name; nothing is under a final one.
    for n in &names {
        assert!(
            !n.ends_with("/fleet-host.json")
                && !n.contains("/files/")
                && !n.ends_with("fleet.json")
                && !n.ends_with(".tmp"),
            "{n} in {names:?}"
        );
    }
    assert!(
        names.iter().any(|n| n.contains("files.partial/")),
        "{names:?}"
    );
    nothing_left_since(&before, "left on the host");
}

/// Every path below `dir`, relative to it.
fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            out.push(p.strip_prefix(dir).unwrap().display().to_string());
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                todo.push(p);
            }
        }
    }
    out
}

#[test]
fn a_ctrl_c_during_the_hosts_run_stops_it_says_so_and_leaves_nothing() {
    if ansible_missing() {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let work = disk_dir();
    let w = work.path();
    let before = fleet_dirs();
    let inv = inventory(w, &["alpha"]);
    let mut child = std::process::Command::new(bin())
        .args([
            "fleet",
            &inv,
            "--results",
            "res",
            "--",
            "run",
            "--method",
            "psync",
            "--target",
            "/dev/null",
            "--duration",
            "300s",
        ])
        .current_dir(w)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once the host runs iolab, a Ctrl-C; then all it says until it ends.
    let guard = Guard::new(child.id(), 180);
    let stdout = child.stdout.take().unwrap();
    let mut rest = String::new();
    for l in std::io::BufRead::lines(std::io::BufReader::new(stdout)).map_while(Result::ok) {
        if l.contains("iolab copied, running") && !rest.contains("iolab copied, running") {
            // The run starts right after the copy.
            std::thread::sleep(std::time::Duration::from_secs(2));
            std::process::Command::new("kill")
                .args(["-INT", &child.id().to_string()])
                .status()
                .unwrap();
        }
        rest += &l;
        rest.push('\n');
    }
    let status = child.wait().unwrap();
    assert!(
        !guard.fired(),
        "iolab fleet still ran 180 s after a Ctrl-C: {rest}"
    );
    assert!(rest.contains("iolab copied, running"), "{rest}");
    assert_eq!(status.code(), Some(130), "{rest}");
    let said: Vec<&str> = rest.lines().filter(|l| l.contains("interrupted")).collect();
    assert!(!said.is_empty(), "{rest}");
    nothing_left_since(&before, "left on the host");
}

/// A directory of stand-ins for `ansible` (it lists host alpha) and `ansible-playbook` (`playbook`, a sh
/// script's body), and the PATH that finds them first.
fn stand_in_ansible(w: &Path, playbook: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let fake = w.join("bin");
    std::fs::create_dir(&fake).unwrap();
    let list = format!(
        "#!/bin/sh\n{{ echo \"$2\"; ulimit -v; }} > {0}.tmp\nmv {0}.tmp {0}\nprintf '  hosts (1):\\n    alpha\\n'\n",
        w.join("listed").display()
    );
    for (tool, body) in [
        ("ansible", list),
        ("ansible-playbook", format!("#!/bin/sh\n{playbook}")),
    ] {
        let p = fake.join(tool);
        std::fs::write(&p, body).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    format!("{}:/usr/bin:/bin", fake.display())
}

/// The text of `p` once it exists (a stand-in writes it whole, by rename); fails after a minute.
fn appeared(p: &Path) -> String {
    for _ in 0..6000 {
        if let Ok(t) = std::fs::read_to_string(p) {
            return t;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("{} never appeared", p.display());
}

/// Whether process `pid` is gone (or a zombie no one has reaped yet), within 10 s.
fn gone(pid: &str) -> bool {
    for _ in 0..1000 {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(s) if s.rsplit(") ").next().is_some_and(|r| r.starts_with('Z')) => return true,
            _ => std::thread::sleep(std::time::Duration::from_millis(10)),
        }
    }
    false
}

#[test]
fn ansible_reads_a_copy_of_the_checked_inventory_within_a_memory_bound_and_dies_with_iolab() {
    let work = disk_dir();
    let w = work.path();
    let inv = inventory(w, &["alpha"]);
    let play = w.join("played");
    let path = stand_in_ansible(
        w,
        &format!(
            "sleep 600 &\n{{ echo \"$2\"; ulimit -v; echo $$; echo $!; }} > {0}.tmp\nmv {0}.tmp {0}\nexec sleep 600\n",
            play.display()
        ),
    );
    // Its staging directory in a temporary directory of the test's own, for `iolab clean` to look in.
    let tmp = w.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let child = std::process::Command::new(bin())
        .args(["fleet", &inv, "--results", "res", "--", "survey"])
        .current_dir(w)
        .env("PATH", &path)
        .env("TMPDIR", &tmp)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let played = appeared(&play);
    let listed = std::fs::read_to_string(w.join("listed")).unwrap();
    let (listed, played): (Vec<&str>, Vec<&str>) =
        (listed.lines().collect(), played.lines().collect());
    // Both read the same copy, taken when it was checked, and not the file named (which may change).
    assert_eq!(listed[0], played[0]);
    assert_ne!(listed[0], inv);
    let copy = Path::new(played[0]);
    assert_eq!(
        std::fs::read(copy).unwrap(),
        std::fs::read(&inv).unwrap(),
        "{}",
        copy.display()
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(copy).unwrap().permissions().mode();
    assert_eq!(mode & 0o111, 0, "the copy is not executable: {mode:o}");
    // 4 GiB of address space each (ulimit -v counts KiB).
    assert_eq!(listed[1], "4194304");
    assert_eq!(played[1], "4194304");
    // A SIGKILLed iolab takes ansible-playbook, in a process group of its own, with it, and what it
    // started (as Ansible's forked workers and their ssh).
    std::process::Command::new("kill")
        .args(["-KILL", &child.id().to_string()])
        .status()
        .unwrap();
    let _ = finished(child, "iolab fleet after SIGKILL");
    assert!(
        gone(played[2]),
        "ansible-playbook ({}) outlived iolab",
        played[2]
    );
    assert!(gone(played[3]), "its worker ({}) outlived iolab", played[3]);
    // A SIGKILLed iolab leaves its staging directory, which `iolab clean` finds in its journal.
    let stage = copy.ancestors().nth(2).unwrap();
    assert!(stage
        .file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with("iolab-ansible-"));
    assert!(
        stage.starts_with(&tmp) && stage.exists(),
        "{}",
        stage.display()
    );
    let clean = iolab(&["clean", tmp.to_str().unwrap()]);
    assert_eq!(clean.code, 0, "{}", clean.stderr);
    assert!(!stage.exists(), "{}\n{}", clean.stdout, clean.stderr);
}

#[test]
fn a_second_signal_during_the_clean_up_stops_it_at_once_and_says_how_to_clean_up() {
    let work = disk_dir();
    let w = work.path();
    let inv = inventory(w, &["alpha"]);
    let (run, clean) = (w.join("run"), w.join("clean"));
    // The run ends at the Ctrl-C passed on to it; the clean-up ignores SIGINT and SIGTERM (as one that
    // waits on a host that never answers).
    let path = stand_in_ansible(
        w,
        &format!(
            "case \"$3\" in\n\
             *fleet-clean.yml) trap '' INT TERM; echo $$ > {c}.tmp; mv {c}.tmp {c}; sleep 600;;\n\
             *) echo $$ > {r}.tmp; mv {r}.tmp {r}; exec sleep 600;;\n\
             esac\n",
            c = clean.display(),
            r = run.display()
        ),
    );
    let child = std::process::Command::new(bin())
        .args(["fleet", &inv, "--results", "res", "--", "survey"])
        .current_dir(w)
        .env("PATH", &path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id().to_string();
    appeared(&run);
    std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap();
    let cleaner = appeared(&clean).trim().to_string();
    std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    // Ended well before the clean-up's own bound (60 s) would have stopped it.
    let guard = Guard::new(child.id(), 30);
    let out = child.wait_with_output().unwrap();
    assert!(
        !guard.fired(),
        "iolab fleet still ran 30 s after a second signal"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(
        err.contains("the clean-up did not finish") && err.contains("by hand, ansible-playbook"),
        "{err}"
    );
    // The playbook the line names is there to run (the staging directory is gone with iolab).
    let book = w.join("res/fleet-clean.yml");
    assert!(
        err.contains("res/fleet-clean.yml -e iolab_remote_dir="),
        "{err}"
    );
    let text = std::fs::read_to_string(&book).unwrap();
    assert!(text.contains("name: Remove the run's directory"), "{text}");
    assert!(gone(&cleaner), "the clean-up ({cleaner}) still runs");
}

#[test]
fn a_host_without_the_record_file_it_was_asked_for_did_not_do_what_was_asked() {
    if ansible_missing() {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let work = disk_dir();
    let w = work.path();
    let inv = inventory(w, &["alpha"]);
    // iolab writes r.txt and exits 0; only record files (.json, .csv, ...) come back.
    let out = fleet(
        w,
        &[
            &inv,
            "--results",
            "res",
            "--",
            "run",
            "--method",
            "psync",
            "--target",
            "/dev/null",
            "--ops",
            "10",
            "--json",
            "r.txt",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("--json r.txt was asked for and did not come back"),
        "{stdout}"
    );
}

/// A closed stdout (`iolab fleet ... | head -1`) does not stop the hosts' run or its clean-up, and the
/// command ends with exit 1 saying so (it exited 0, its lines lost without a word).
#[test]
fn a_closed_stdout_ends_the_fleet_with_exit_1_after_its_work() {
    if ansible_missing() {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let work = disk_dir();
    let before = fleet_dirs();
    let inv = inventory(work.path(), &["alpha"]);
    let args = [
        "fleet",
        &inv,
        "--results",
        "res",
        "--",
        "run",
        "--target",
        "/dev/null",
    ];
    let mut child = std::process::Command::new(bin())
        .args(args)
        .args(["--ops", "1000", "--json", "r.json"])
        .current_dir(work.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The reader leaves before the first line.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot write to stdout"), "{err}");
    // The run ended and its results came back all the same.
    let fleet_json = std::fs::read_to_string(work.path().join("res/fleet.json")).unwrap();
    assert!(fleet_json.contains("alpha"), "{fleet_json}");
    assert!(work.path().join("res/alpha/files/r.json").is_file());
    nothing_left_since(&before, "alpha");
}

/// Ansible reads the inventory as iolab checked it, whatever its configuration says: an ansible.cfg
/// naming `.txt` among YAML's endings had it read variables files iolab had not counted (15 MB of them
/// kept it busy 25 s); here one that is not YAML stopped the play before the host.
#[test]
fn ansible_reads_the_inventory_as_it_was_checked_whatever_its_configuration_says() {
    if ansible_missing() {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let work = disk_dir();
    let w = work.path();
    let inv = inventory(w, &["alpha"]);
    std::fs::create_dir_all(w.join("group_vars/all")).unwrap();
    std::fs::write(w.join("group_vars/all/v.txt"), "x: [0, 0\n").unwrap();
    let cfg = "[defaults]\nyaml_valid_extensions = .yml, .yaml, .json, .txt\n";
    std::fs::write(w.join("ansible.cfg"), cfg).unwrap();
    let args = [
        "--results",
        "res",
        "--",
        "run",
        "--method",
        "nop",
        "--ops",
        "1",
    ];
    let out = fleet(w, &[&[inv.as_str()][..], &args].concat());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        !stdout.contains("not run"),
        "the play stopped before the host: {stdout}"
    );
}
