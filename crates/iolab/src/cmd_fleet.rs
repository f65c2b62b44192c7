//! `iolab fleet INVENTORY -- ARGS...`: one iolab command on every host of an Ansible inventory. The
//! playbook and role of the repository's `ansible/` (built into iolab) run it through `ansible-playbook`:
//! each host gets the static binary for its architecture in a directory of its own, runs the command,
//! and its record files come back to `DIR/HOST/`; then the hosts' outcomes and the merged view.

use iolab_engine::cleanup::Created;
use iolab_engine::error::{Error, Result};
use iolab_engine::units::fmt_ns;
use iolab_lab::fleet::{self, Host, Merged, Outcome};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The playbook files, as in the repository's `ansible/` (path inside the staging directory, text).
const PLAYBOOK: &[(&str, &str)] = &[
    ("fleet.yml", include_str!("../../../ansible/fleet.yml")),
    (
        "fleet-clean.yml",
        include_str!("../../../ansible/fleet-clean.yml"),
    ),
    (
        "roles/iolab_run/tasks/main.yml",
        include_str!("../../../ansible/roles/iolab_run/tasks/main.yml"),
    ),
    (
        "roles/iolab_run/defaults/main.yml",
        include_str!("../../../ansible/roles/iolab_run/defaults/main.yml"),
    ),
    (
        "roles/iolab_run/meta/main.yml",
        include_str!("../../../ansible/roles/iolab_run/meta/main.yml"),
    ),
];

/// Workloads shown without -v: those whose hosts differ most.
const SHOWN: usize = 8;

#[derive(clap::Args)]
pub struct FleetArgs {
    /// An Ansible inventory (INI or YAML; a file or a directory of them): the hosts to run on
    #[arg(value_name = "INVENTORY")]
    pub inventory: PathBuf,
    /// Where each host's files come back, as DIR/HOST/ [default: a new iolab-results/fleet-<UTC time>]. An
    /// existing DIR is refused unless empty
    #[arg(long, value_name = "DIR")]
    pub results: Option<PathBuf>,
    /// The static iolab for hosts of architecture ARCH as Ansible names it (x86_64, aarch64, armv7l),
    /// such as scripts/build-board makes; repeatable. Hosts of this machine's architecture get this iolab
    /// unless one is given for it
    #[arg(long = "binary", value_name = "ARCH=PATH")]
    pub binaries: Vec<String>,
    /// How many hosts run at a time: 0 all at once, 1 one after another
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub serial: u32,
    /// Seconds the command may run on a host before it is stopped (and reported as such)
    #[arg(long, value_name = "SECS", default_value_t = 3600)]
    pub timeout: u64,
    /// Only the hosts or groups this Ansible pattern matches
    #[arg(long, value_name = "PATTERN")]
    pub limit: Option<String>,
    /// Every workload with a row per host (without it: the ones whose hosts differ most)
    #[arg(short, long)]
    pub verbose: bool,
    /// The iolab command every host runs, after `--`: `iolab fleet hosts.ini -- survey --rounds 3`
    #[arg(last = true, required = true, value_name = "ARGS")]
    pub args: Vec<String>,
}

pub fn cmd_fleet(a: &FleetArgs) -> Result<i32> {
    let binaries = binaries(&a.binaries)?;
    check_input(a)?;
    let results = results_dir(a.results.as_deref())?;
    let playbook = find_ansible()?;
    std::fs::create_dir_all(&results).map_err(|e| write_err(&results, e))?;
    let stage = Created::temp_tree(&std::env::temp_dir(), "iolab-ansible-")?;
    for (rel, text) in PLAYBOOK {
        let path = stage.path().join(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| write_err(dir, e))?;
        }
        std::fs::write(&path, text).map_err(|e| write_err(&path, e))?;
    }
    let remote_dir = format!("/tmp/iolab-fleet-{}", unique());
    // Each host's directory is this, a dash and its name (see the role).
    let vars = serde_json::json!({
        "iolab_binaries": binaries,
        "iolab_args": a.args,
        "iolab_results": results.canonicalize().unwrap_or_else(|_| results.clone()),
        "iolab_remote_dir": remote_dir,
        "iolab_timeout": a.timeout,
        "iolab_serial": a.serial,
    });
    let vars_file = stage.path().join("vars.json");
    std::fs::write(&vars_file, vars.to_string()).map_err(|e| write_err(&vars_file, e))?;
    println!(
        "iolab fleet: `iolab {}` on the hosts of {} ({}; at most {} s each); each host's files in {}/HOST/",
        a.args.join(" "),
        a.inventory.display(),
        match a.serial {
            0 => "all at once".to_string(),
            1 => "one at a time".to_string(),
            n => format!("{n} at a time"),
        },
        a.timeout,
        results.display()
    );
    // Ctrl-C reaches ansible-playbook too (the same process group); iolab waits for it, then removes
    // what the interrupted run left on the hosts.
    if let Err(e) = iolab_sys::note_interrupts() {
        eprintln!(
            "iolab fleet: warning: cannot catch Ctrl-C ({}): an interrupted run leaves its directory on the hosts",
            iolab_sys::errno_name(e.errno)
        );
    }
    let log = results.join("ansible.log");
    let run = |book: &str| ansible(&playbook, a, &stage.path().join(book), &vars_file, &log);
    let (code, not_run) = run("fleet.yml")?;
    if iolab_sys::interrupted() {
        let _ = run("fleet-clean.yml");
        eprintln!("iolab fleet: interrupted; removed {remote_dir}-HOST from the hosts it reached");
        return Ok(130);
    }
    let hosts = fleet::read_hosts(&results, &not_run)?;
    if hosts.is_empty() {
        return Err(Error::Runtime(format!(
            "ansible-playbook exited with {code} and no host ran (its output: {})",
            log.display()
        )));
    }
    let merged = fleet::merge(&hosts);
    show(&hosts, &merged, a.verbose);
    save(&results, &hosts, &merged)?;
    let failed = hosts.iter().filter(|h| h.outcome != Outcome::Ok).count();
    Ok(if failed > 0 { 1 } else { 0 })
}

/// `--binary ARCH=PATH` each, and this iolab for this machine's architecture unless one is given.
fn binaries(given: &[String]) -> Result<BTreeMap<String, PathBuf>> {
    let mut m = BTreeMap::new();
    for b in given {
        let Some((arch, path)) = b
            .split_once('=')
            .filter(|(a, p)| !a.is_empty() && !p.is_empty())
        else {
            return Err(Error::usage(
                "--binary",
                format!("'{b}' is not ARCH=PATH (for example --binary aarch64=target/aarch64-unknown-linux-musl/board/iolab)"),
            ));
        };
        let path = PathBuf::from(path);
        if !path.is_file() {
            return Err(Error::usage(
                "--binary",
                format!(
                    "{}: no such file (build one with scripts/build-board {arch})",
                    path.display()
                ),
            ));
        }
        let path = path.canonicalize().unwrap_or(path);
        m.insert(arch.to_string(), path);
    }
    let own = match std::env::consts::ARCH {
        "arm" => "armv7l",
        a => a,
    };
    if !m.contains_key(own) {
        if let Ok(exe) = std::env::current_exe() {
            m.insert(own.to_string(), exe);
        }
    }
    Ok(m)
}

fn check_input(a: &FleetArgs) -> Result<()> {
    if !a.inventory.exists() {
        return Err(Error::usage(
            "INVENTORY",
            format!(
                "{}: no such file or directory (an Ansible inventory, INI or YAML)",
                a.inventory.display()
            ),
        ));
    }
    if a.args.first().is_some_and(|c| c == "fleet") {
        return Err(Error::usage(
            "ARGS",
            "a host cannot run `iolab fleet` itself: give the command each host runs",
        ));
    }
    Ok(())
}

/// `ansible-playbook` on PATH, or the error naming the package.
fn find_ansible() -> Result<PathBuf> {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join("ansible-playbook"))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            Error::Runtime(
                "iolab fleet runs Ansible's ansible-playbook, which is not on PATH: install Ansible \
                 (Debian, Ubuntu: apt-get install ansible-core; elsewhere: pip install ansible-core)"
                    .into(),
            )
        })
}

/// The results directory: given (new, or empty) or a new one in ./iolab-results/ (made later, when the
/// run can start).
fn results_dir(given: Option<&Path>) -> Result<PathBuf> {
    let dir = match given {
        Some(d) => d.to_path_buf(),
        None => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            Path::new("iolab-results")
                .join(format!("fleet-{}", iolab_engine::units::utc_stamp(now)))
        }
    };
    if dir.exists() && std::fs::read_dir(&dir).map_or(true, |mut d| d.next().is_some()) {
        return Err(Error::usage(
            "--results",
            format!(
                "{} exists and is not empty: give a new directory (nothing in it is replaced)",
                dir.display()
            ),
        ));
    }
    Ok(dir)
}

fn write_err(path: &Path, e: std::io::Error) -> Error {
    Error::Runtime(format!("cannot write {}: {e}", path.display()))
}

/// A name no other run of this machine has: the process id and the time in ns.
fn unique() -> String {
    let ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{}-{:x}", std::process::id(), ns)
}

/// Runs `book` over the inventory, its output to `log` (appended) and each host's progress to the
/// terminal: ansible-playbook's exit status, and the hosts that never ran iolab with Ansible's reason.
fn ansible(
    exe: &Path,
    a: &FleetArgs,
    book: &Path,
    vars: &Path,
    log: &Path,
) -> Result<(i32, BTreeMap<String, String>)> {
    let mut cmd = Command::new(exe);
    cmd.arg("-i")
        .arg(&a.inventory)
        .arg(book)
        .arg("-e")
        .arg(format!("@{}", vars.display()));
    if let Some(l) = &a.limit {
        cmd.arg("--limit").arg(l);
    }
    cmd.env("ANSIBLE_NOCOLOR", "1")
        .env("ANSIBLE_FORCE_COLOR", "0")
        .env("ANSIBLE_RETRY_FILES_ENABLED", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    let mut logf = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| write_err(log, e))?;
    cmd.stderr(logf.try_clone().map_err(|e| write_err(log, e))?);
    let mut child = cmd
        .spawn()
        .map_err(|e| Error::Runtime(format!("cannot run {}: {e}", exe.display())))?;
    let mut progress = Progress::default();
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines().map_while(|l| l.ok()) {
            let _ = writeln!(logf, "{line}");
            if let Some(say) = progress.line(&line) {
                println!("  {say}");
            }
        }
    }
    let status = child
        .wait()
        .map_err(|e| Error::Runtime(format!("ansible-playbook: {e}")))?;
    Ok((status.code().unwrap_or(130), progress.not_run))
}

/// Reads ansible-playbook's default output line by line: what to show of each host's progress.
#[derive(Default)]
struct Progress {
    task: String,
    not_run: BTreeMap<String, String>,
}

impl Progress {
    fn line(&mut self, line: &str) -> Option<String> {
        if let Some(t) = line.strip_prefix("TASK [") {
            self.task = t
                .split(']')
                .next()
                .unwrap_or_default()
                .rsplit(" : ")
                .next()?
                .to_string();
            return None;
        }
        let (status, rest) = line.split_once(": [")?;
        let (host, rest) = rest.split_once(']')?;
        let msg = || {
            rest.split_once("=> ")
                .and_then(|(_, j)| serde_json::from_str::<serde_json::Value>(j).ok())
                .and_then(|v| v.get("msg").and_then(|m| m.as_str()).map(str::to_string))
                .unwrap_or_default()
        };
        match (status, self.task.as_str()) {
            ("fatal", "Fail the host when iolab did") => Some(format!("{host}: {}", msg())),
            ("fatal", _) => {
                let why = if rest.contains("UNREACHABLE!") {
                    format!("unreachable: {}", msg())
                } else {
                    format!("{}: {}", self.task, msg())
                };
                self.not_run.insert(host.to_string(), why.clone());
                Some(format!("{host}: not run: {why}"))
            }
            ("changed", "Copy the binary") => Some(format!("{host}: iolab copied")),
            ("changed", "Run iolab") => Some(format!("{host}: iolab finished")),
            ("changed", "Fetch the record files") => {
                let item = rest.split("(item=").nth(1)?.trim_end_matches(')');
                Some(format!("{host}: fetched {item}"))
            }
            _ => None,
        }
    }
}

/// The hosts' outcomes, then the merged view.
fn show(hosts: &[Host], merged: &[Merged], verbose: bool) {
    println!("\nHosts:");
    for h in hosts {
        let what = match &h.outcome {
            Outcome::Ok => format!("ok, {} file(s)", h.files.len()),
            Outcome::Failed {
                rc,
                timed_out: true,
                ..
            } => format!(
                "stopped at the timeout (exit {rc}), {} file(s) kept",
                h.files.len()
            ),
            Outcome::Failed { rc, why, .. } => {
                format!("failed (exit {rc}): {why}; {} file(s) kept", h.files.len())
            }
            Outcome::NotRun { why } => format!("not run: {why}"),
        };
        let arch = if h.architecture.is_empty() {
            "-"
        } else {
            &h.architecture
        };
        let kernel = if h.kernel.is_empty() { "-" } else { &h.kernel };
        println!("  {:<14} {:<8} {:<22} {what}", h.name, arch, kernel);
    }
    if merged.is_empty() {
        return;
    }
    println!("\nLatency per workload: the fleet's percentiles from the hosts' histograms merged into one (never averaged):");
    let mut order: Vec<&Merged> = merged.iter().collect();
    order.sort_by(|a, b| b.p99_spread.total_cmp(&a.p99_spread));
    let shown = if verbose {
        order.len()
    } else {
        SHOWN.min(order.len())
    };
    for m in &order[..shown] {
        println!("  {}", m.workload);
        println!("    {}", fleet_line(m));
        if verbose {
            for h in &m.hosts {
                println!(
                    "      {:<14} {:>12} ops/s  p50 {:>9}  p99 {:>9}  ({} values)",
                    h.host,
                    format!("{:.0}", h.iops),
                    fmt_ns(h.latency.p50_ns),
                    fmt_ns(h.latency.p99_ns),
                    h.latency.count
                );
            }
        }
    }
    if shown < order.len() {
        println!(
            "  ... {} more workload(s) with -v, and every figure in fleet.json",
            order.len() - shown
        );
    }
}

/// One workload's fleet percentiles and its hosts' spread.
fn fleet_line(m: &Merged) -> String {
    let (lo, hi) = m
        .hosts
        .iter()
        .fold((&m.hosts[0], &m.hosts[0]), |(l, h), x| {
            (
                if x.latency.p99_ns < l.latency.p99_ns {
                    x
                } else {
                    l
                },
                if x.latency.p99_ns > h.latency.p99_ns {
                    x
                } else {
                    h
                },
            )
        });
    let fleet = match &m.fleet {
        Some(f) => format!(
            "fleet p50 {} p99 {} over {} values",
            fmt_ns(f.p50_ns),
            fmt_ns(f.p99_ns),
            f.count
        ),
        None => {
            "no fleet percentiles: a host's result carries no histogram (written by an older iolab)"
                .into()
        }
    };
    if m.hosts.len() == 1 {
        return format!("{fleet}; only {} ran it", lo.host);
    }
    format!(
        "{fleet}; hosts' p99 from {} ({}) to {} ({}), {:.1}x apart",
        fmt_ns(lo.latency.p99_ns),
        lo.host,
        fmt_ns(hi.latency.p99_ns),
        hi.host,
        m.p99_spread
    )
}

/// `DIR/fleet.json`: the hosts and the merged workloads.
fn save(dir: &Path, hosts: &[Host], merged: &[Merged]) -> Result<()> {
    let path = dir.join("fleet.json");
    let doc = serde_json::json!({ "hosts": hosts, "workloads": merged });
    let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    std::fs::write(&path, text).map_err(|e| write_err(&path, e))?;
    println!("\nresult: {}", path.display());
    Ok(())
}
