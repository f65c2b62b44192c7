//! `iolab fleet INVENTORY -- ARGS...`: one iolab command on every host of an Ansible inventory. The
//! playbook and role of the repository's `ansible/` (built into iolab) run it through `ansible-playbook`:
//! each host gets the static binary for its architecture in a directory of its own, runs the command,
//! and its record files come back to `DIR/HOST/files/`; then the hosts' outcomes and the merged view
//! (`fleet_view.rs`).

use crate::fleet_child::{
    end_sentinel, group_of, group_sentinel, output_within, Ended, ANSIBLE_MEMORY_MAX,
};
use crate::fleet_view::{say, show};
use iolab_engine::cleanup::Created;
use iolab_engine::error::{Error, Result};
use iolab_lab::fleet::{self, Outcome};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The clean-up playbook (self-contained: no role, no variables file).
const CLEAN_UP_BOOK: &str = include_str!("../../../ansible/fleet-clean.yml");

/// The playbook files, as in the repository's `ansible/` (path inside the staging directory, text).
const PLAYBOOK: &[(&str, &str)] = &[
    ("fleet.yml", include_str!("../../../ansible/fleet.yml")),
    ("fleet-clean.yml", CLEAN_UP_BOOK),
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

#[derive(clap::Args)]
pub struct FleetArgs {
    /// An Ansible inventory (INI or YAML; a file or a directory of them, at most 1 MiB a file, whose files
    /// ending in .ini, .cfg and the other endings Ansible skips in a directory are skipped, as Ansible
    /// does; not a script or an inventory plugin's configuration): the hosts to run on. Host names must be plain names (letters, digits, '.', '_', '-'): they name each host's
    /// directory; put an address in ansible_host
    #[arg(value_name = "INVENTORY")]
    pub inventory: PathBuf,
    /// Where each host's files come back, as DIR/HOST/ [default: a new iolab-results/fleet-<UTC time>]. An
    /// existing DIR must be an empty directory no other user can write to
    #[arg(long, value_name = "DIR")]
    pub results: Option<PathBuf>,
    /// The iolab for hosts of architecture ARCH as Ansible names it (x86_64, aarch64, armv7l): a static
    /// one, as scripts/build-board makes (checked: a whole ELF executable of ARCH; of this machine's, one that says it is iolab); repeatable. Hosts of this machine's architecture get this iolab
    /// unless one is given (as cargo builds it, linked against this machine's glibc)
    #[arg(long = "binary", value_name = "ARCH=PATH")]
    pub binaries: Vec<String>,
    /// How many hosts run at a time: 0 all at once, 1 one after another (Ansible's --forks); at most 256
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=256))]
    pub serial: u32,
    /// Seconds the command may run on a host before it is stopped (SIGTERM, SIGKILL 10 s later); at most
    /// 365 days
    #[arg(long, value_name = "SECS", default_value_t = 3600, value_parser = clap::value_parser!(u64).range(1..=31_536_000))]
    pub timeout: u64,
    /// Only the hosts or groups this Ansible pattern matches
    #[arg(long, value_name = "PATTERN")]
    pub limit: Option<String>,
    /// Every workload with a row per host (without it: the ones whose hosts differ most)
    #[arg(short, long)]
    pub verbose: bool,
    /// The iolab command every host runs, after `--`: `iolab fleet hosts.ini -- survey --rounds 3`. Its
    /// output paths are relative (they come back from the run's directory)
    #[arg(last = true, required = true, value_name = "ARGS")]
    pub args: Vec<String>,
}

/// ansible and ansible-playbook, found on PATH.
struct Tools {
    ansible: PathBuf,
    playbook: PathBuf,
}

/// `cli`: iolab's command line, against which the hosts' command is checked.
pub fn cmd_fleet(a: &FleetArgs, cli: clap::Command) -> Result<i32> {
    // From here a Ctrl-C is noted, not fatal: each wait below watches for it, stops what it started and
    // says so.
    let _ = iolab_sys::note_interrupts();
    let binaries = binaries(&a.binaries)?;
    let asked = check_args(&a.args, cli)?;
    if let Some(l) = &a.limit {
        crate::fleet_check::check_limit(l)?;
    }
    let checked = crate::fleet_check::check_inventory(&a.inventory)?;
    crate::fleet_check::check_ansible_config()?;
    let given = a.results.as_deref().map(check_results).transpose()?;
    if given.is_none() {
        iolab_engine::paths::check_dir_path("--results", Path::new("iolab-results"))?;
    }
    iolab_engine::paths::check_writable_dir("TMPDIR", &std::env::temp_dir())?;
    let tools = find_ansible()?;
    let stage = Created::temp_tree(&std::env::temp_dir(), "iolab-ansible-")?;
    // Again: making the staging directory installed the handler that removes it and exits at once.
    if let Err(e) = iolab_sys::note_interrupts() {
        eprintln!(
            "iolab fleet: warning: cannot catch Ctrl-C ({}): an interrupted run leaves its directory on the hosts",
            iolab_sys::errno_name(e.errno)
        );
    }
    // Both Ansible calls read the copy of what was checked, whatever becomes of the inventory meanwhile.
    let inventory = checked
        .stage(&stage.path().join("inventory"))
        .map_err(|e| write_err(stage.path(), e))?;
    let Some(hosts) = list_hosts(&tools, a, &inventory)? else {
        eprintln!(
            "iolab fleet: interrupted while Ansible read the inventory; nothing ran on any host"
        );
        return Ok(130);
    };
    crate::fleet_check::check_host_count(&a.inventory, hosts.len())?;
    let results = make_results(given, &hosts)?;
    let remote_dir = format!("/tmp/iolab-fleet-{}", unique());
    stage_playbook(stage.path(), a, &binaries, &results, &remote_dir)?;
    say(&format!(
        "iolab fleet: `iolab {}` on {} host(s) of {} ({}; stopped after {} s)",
        a.args.join(" "),
        hosts.len(),
        a.inventory.display(),
        match crate::fleet_check::forks(a.serial, hosts.len()) {
            n if n as usize >= hosts.len() => "all at once".to_string(),
            1 => "one at a time".to_string(),
            n => format!("{n} at a time"),
        },
        a.timeout
    ));
    say(&format!(
        "  on each host in {remote_dir}-HOST (removed at the end); files back to {}/HOST/",
        results.display()
    ));
    let log = results.join("ansible.log");
    let forks = crate::fleet_check::forks(a.serial, hosts.len());
    // Each batch of hosts runs at most --timeout (and the 10 s to SIGKILL) plus the copies and fetches.
    let batches = (hosts.len() as u64).div_ceil(u64::from(forks.max(1)));
    let run = |book: &str, forward: bool, limit: u64| {
        let book = stage.path().join(book);
        ansible_playbook(
            &tools.playbook,
            (&inventory, a.limit.as_deref()),
            (&book, forks, forward, limit),
            &stage.path().join("vars.yml"),
            &log,
        )
    };
    let run_limit = batches * (a.timeout + 10) + PLAYBOOK_MARGIN_SECS;
    let (code, mut known, ended) = run("fleet.yml", true, run_limit)?;
    let interrupted = iolab_sys::interrupted();
    let by_hand = || by_hand(&results, &log, &a.inventory, &remote_dir);
    if interrupted || ended == Stop::TimedOut {
        let why = if interrupted {
            "interrupted before its run finished".to_string()
        } else {
            format!("Ansible had not finished after {run_limit} s and was stopped")
        };
        for h in &hosts {
            known.why.entry(h.clone()).or_insert_with(|| why.clone());
        }
        if ended == Stop::Killed {
            by_hand();
        } else {
            say(&format!(
                "iolab fleet: {}; stopping iolab on the hosts and removing its directories (at most {} s; \
                 Ctrl-C again to stop at once)",
                if interrupted {
                    "interrupted".to_string()
                } else {
                    format!("Ansible had not finished after {run_limit} s (the hosts' --timeout and {PLAYBOOK_MARGIN_SECS} s) and was stopped")
                },
                batches * CLEAN_UP_SECS
            ));
            match run("fleet-clean.yml", false, batches * CLEAN_UP_SECS) {
                Ok((0, _, Stop::No)) => say(&format!(
                    "iolab fleet: removed {remote_dir}-HOST from every host it reached"
                )),
                _ => by_hand(),
            }
        }
    }
    let interrupted = iolab_sys::interrupted();
    if iolab_sys::interrupts() > 1 {
        // A second Ctrl-C: out at once; what came back stays as it is.
        return Ok(130);
    }
    // Each host's files under their final names where its outcome came back whole.
    for (h, why) in fleet::settle(&results, &hosts) {
        known.why.entry(h).or_insert(why);
    }
    let mut hosts = fleet::read_hosts(&results, &hosts, &known, &[]);
    crate::fleet_check::missing_asked(&mut hosts, &asked);
    if !interrupted
        && hosts
            .iter()
            .all(|h| matches!(h.outcome, Outcome::NotRun { .. }))
        && code != 0
    {
        eprintln!(
            "iolab fleet: ansible-playbook exited with {code}; its output: {}",
            log.display()
        );
    }
    let merged = fleet::merge(&hosts);
    show(&hosts, &merged, a.verbose);
    crate::fleet_view::save(&results, &hosts, &merged)?;
    if interrupted {
        return Ok(130);
    }
    if let Some(e) = crate::fleet_view::stdout_failure() {
        return Err(e);
    }
    Ok(if hosts.iter().all(|h| h.outcome == Outcome::Ok) {
        0
    } else {
        1
    })
}

/// The line that says how to clean up by hand, when iolab's own clean-up did not finish. The staging
/// directory goes with this process: the clean-up playbook is left beside the results, where the line can
/// name it.
fn by_hand(results: &Path, log: &Path, inventory: &Path, remote_dir: &str) {
    let book = results.join("fleet-clean.yml");
    let left = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&book)
        .and_then(|mut f| std::io::Write::write_all(&mut f, CLEAN_UP_BOOK.as_bytes()));
    let book = match left {
        Ok(()) => book.display().to_string(),
        Err(_) => "ansible/fleet-clean.yml (of iolab's source)".into(),
    };
    eprintln!(
        "iolab fleet: the clean-up did not finish ({}): by hand, ansible-playbook -i {} {book} -e iolab_remote_dir={remote_dir}",
        log.display(),
        inventory.display()
    )
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
            let what = if path.exists() {
                "not a regular file"
            } else {
                "no such file"
            };
            return Err(Error::usage(
                "--binary",
                format!(
                    "{}: {what} (build one with scripts/build-board {arch})",
                    path.display()
                ),
            ));
        }
        crate::fleet_check::check_binary(arch, &path)?;
        if arch == own_arch() {
            check_is_iolab(&path)?;
        }
        m.insert(arch.to_string(), path.canonicalize().unwrap_or(path));
    }
    let own = own_arch();
    if !m.contains_key(own) {
        if let Ok(exe) = std::env::current_exe() {
            m.insert(own.to_string(), exe);
        }
    }
    Ok(m)
}

/// This machine's architecture as Ansible names it.
fn own_arch() -> &'static str {
    match std::env::consts::ARCH {
        "arm" => "armv7l",
        a => a,
    }
}

/// A `--binary` of this machine's architecture says it is iolab (`BINARY --version`, run here within
/// 10 s, bounded and killed as Ansible is): an executable of the right kind that is another program, or
/// one that cannot start, is refused before a host is given it.
fn check_is_iolab(path: &Path) -> Result<()> {
    let mut cmd = Command::new(path);
    cmd.arg("--version");
    let said = match output_within(cmd, std::time::Duration::from_secs(10)) {
        Ok(Ended::Exited(out)) if out.status.success() => {
            String::from_utf8_lossy(&out.stdout).into_owned()
        }
        Ok(Ended::Interrupted) => {
            return Err(Error::Runtime("interrupted while checking --binary".into()))
        }
        _ => String::new(),
    };
    if said.starts_with("iolab ") {
        return Ok(());
    }
    Err(Error::usage(
        "--binary",
        format!(
            "{}: `{0} --version` does not say iolab (another program, or one that cannot start): give \
             an iolab, as scripts/build-board makes",
            path.display()
        ),
    ))
}

/// The command each host runs parses as an iolab command line, and asks for what a host would accept
/// (a run's or a sweep's spec; what only the host can check, such as a target's path there, it checks
/// there).
/// Returns the files it is asked to write.
fn check_args(args: &[String], cli: clap::Command) -> Result<Vec<crate::fleet_check::Asked>> {
    let refused = [(
        "fleet",
        "a host cannot run `iolab fleet` itself: give the command each host runs",
    )];
    let side = crate::command_line::OtherSide::FleetHost;
    match crate::command_line::check(
        "ARGS",
        args,
        cli.clone(),
        &refused,
        false,
        side,
        &mut crate::command_line::Points::new(),
    )? {
        Some(m) => crate::fleet_check::check_outputs(&cli, &m),
        None => Ok(Vec::new()),
    }
}

/// A given results directory: new, or an empty directory only its owner (and root) can write to.
fn check_results(dir: &Path) -> Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        // A new directory: made in a directory iolab can write in, not on procfs or sysfs.
        iolab_engine::paths::check_dir_path("--results", dir)?;
        return Ok(dir.to_path_buf());
    };
    let refuse = |why: &str| {
        Err(Error::usage(
            "--results",
            format!("{}: {why}", dir.display()),
        ))
    };
    if !meta.is_dir() {
        return refuse("exists and is not a directory: give a new directory");
    }
    if meta.permissions().mode() & 0o002 != 0 {
        return refuse(
            "any user can write to it, and so replace what comes back: give a directory of yours",
        );
    }
    if std::fs::read_dir(dir).map_or(true, |mut d| d.next().is_some()) {
        return refuse("is not empty: give a new directory (nothing in it is replaced)");
    }
    iolab_engine::paths::check_writable_dir("--results", dir)?;
    Ok(dir.to_path_buf())
}

/// `ansible` and `ansible-playbook` on PATH, or the error naming the package.
fn find_ansible() -> Result<Tools> {
    let find = |name: &str| {
        std::env::var_os("PATH")
            .iter()
            .flat_map(std::env::split_paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    };
    match (find("ansible"), find("ansible-playbook")) {
        (Some(ansible), Some(playbook)) => Ok(Tools { ansible, playbook }),
        _ => Err(Error::Runtime(
            "iolab fleet runs Ansible (ansible, ansible-playbook), which is not on PATH: install it \
             (Debian, Ubuntu: apt-get install ansible-core; elsewhere: pip install ansible-core)"
                .into(),
        )),
    }
}

/// What a playbook run may take beyond the hosts' --timeout (each batch of --serial hosts): facts, the
/// copy of the binary, the fetch of the files.
const PLAYBOOK_MARGIN_SECS: u64 = 600;
/// What the clean-up after an interrupted run may take (each batch of --serial hosts).
const CLEAN_UP_SECS: u64 = 60;
/// How long Ansible may take to read the inventory (`ansible --list-hosts`): it is stopped then.
const LIST_HOSTS_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);
/// The inventory plugins Ansible may use on iolab's inventory: the static ones only, whatever an
/// ansible.cfg says. `script` and `auto` (which hands a YAML file naming a `plugin:` to that plugin,
/// `generator` or a cloud's) would run code or read without a bound, however the file spells the key.
const INVENTORY_PLUGINS: &str = "ini,yaml,toml";

/// Has Ansible read the inventory as iolab checked it, whatever an ansible.cfg or the environment says:
/// the static plugins only, YAML in the files iolab counted as YAML (`yaml_valid_extensions` naming
/// `.txt` had Ansible read 15 MB of YAML variables iolab had not counted, for 25 s), and a directory's
/// files left out as iolab leaves them out.
fn reads_as_checked(cmd: &mut Command) -> &mut Command {
    cmd.env("ANSIBLE_INVENTORY_ENABLED", INVENTORY_PLUGINS)
        .env("ANSIBLE_YAML_FILENAME_EXT", ".yml,.yaml,.json")
        .env(
            "ANSIBLE_INVENTORY_IGNORE",
            crate::fleet_check::IGNORED_ENDINGS.join(","),
        )
        .env_remove("ANSIBLE_INVENTORY_IGNORE_REGEX")
}

/// The inventory's hosts (matching --limit), as Ansible reads them: refused when there are none or a
/// name is not a plain file name, or when Ansible has not read the inventory within
/// [`LIST_HOSTS_TIMEOUT`]. None: interrupted.
fn list_hosts(tools: &Tools, a: &FleetArgs, inventory: &Path) -> Result<Option<Vec<String>>> {
    let mut cmd = Command::new(&tools.ansible);
    cmd.arg("-i")
        .arg(inventory)
        .arg("--list-hosts")
        .arg(a.limit.as_deref().unwrap_or("all"))
        .env("ANSIBLE_NOCOLOR", "1");
    reads_as_checked(&mut cmd);
    let ran = output_within(cmd, LIST_HOSTS_TIMEOUT)
        .map_err(|e| Error::Runtime(format!("cannot run {}: {e}", tools.ansible.display())))?;
    let out = match ran {
        Ended::Exited(out) => out,
        Ended::Interrupted => return Ok(None),
        Ended::TimedOut => {
            return Err(Error::usage(
                "INVENTORY",
                format!(
                "{}: Ansible had not read it after {} s and was stopped: only static inventories \
                     (ini, yaml, toml) are read, so it is too large or too nested to read (YAML aliases \
                     of aliases, a long chain of :children groups), or Ansible waits on a file its \
                     configuration names (a vault password file that is a FIFO)",
                a.inventory.display(),
                LIST_HOSTS_TIMEOUT.as_secs()
            ),
            ))
        }
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let hosts: Vec<String> = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("hosts ("))
        .skip(1)
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    if hosts.is_empty() {
        let why: Vec<String> = String::from_utf8_lossy(&out.stderr)
            .lines()
            .map(str::trim)
            .map(String::from)
            .collect();
        return Err(Error::usage(
            if a.limit.is_some() {
                "--limit"
            } else {
                "INVENTORY"
            },
            format!(
                "{}: no host to run on{}{}",
                a.inventory.display(),
                a.limit
                    .as_deref()
                    .map(|l| format!(" matches {}", limit_said(l)))
                    .unwrap_or_default(),
                if why.is_empty() {
                    String::new()
                } else {
                    format!(" (Ansible: {})", why.join(" "))
                }
            ),
        ));
    }
    let plain = |h: &str| {
        h.len() <= 200
            && h.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
            && h.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
    };
    // iolab's own files in the results directory.
    if let Some(taken) = hosts
        .iter()
        .find(|h| ["fleet.json", "ansible.log"].contains(&h.as_str()))
    {
        return Err(Error::usage(
            "INVENTORY",
            format!("host '{taken}': the name of a file iolab writes beside the hosts' directories: name the host otherwise"),
        ));
    }
    if let Some(bad) = hosts.iter().find(|h| !plain(h)) {
        return Err(Error::usage(
            "INVENTORY",
            format!("host '{bad}': its name names its results directory, so it must be a plain name (letters, digits, '.', '_', '-'; first a letter or digit): name it so and give its address as ansible_host"),
        ));
    }
    Ok(Some(hosts))
}

/// Makes the results directory (a new one in ./iolab-results/ unless given) and a directory per host in it.
fn make_results(given: Option<PathBuf>, hosts: &[String]) -> Result<PathBuf> {
    let dir = match given {
        Some(d) => {
            std::fs::create_dir_all(&d).map_err(|e| write_err(&d, e))?;
            d
        }
        None => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            let base = Path::new("iolab-results");
            std::fs::create_dir_all(base).map_err(|e| write_err(base, e))?;
            let stem = format!("fleet-{}", iolab_engine::units::utc_stamp(now));
            // Another fleet started in the same second takes the next name.
            (1..1000)
                .map(|n| {
                    base.join(if n == 1 {
                        stem.clone()
                    } else {
                        format!("{stem}-{n}")
                    })
                })
                .find(|d| std::fs::create_dir(d).is_ok())
                .ok_or_else(|| {
                    Error::Runtime(format!(
                        "cannot make a new directory {}/{stem}",
                        base.display()
                    ))
                })?
        }
    };
    for h in hosts {
        let d = dir.join(h);
        std::fs::create_dir(&d).map_err(|e| write_err(&d, e))?;
    }
    Ok(dir)
}

fn write_err(path: &Path, e: std::io::Error) -> Error {
    Error::Runtime(format!(
        "cannot write {}: {}",
        path.display(),
        fleet::io_why(&e)
    ))
}

/// A name no other run of this machine has: the process id and the time in ns.
fn unique() -> String {
    let ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{}-{:x}", std::process::id(), ns)
}

/// The playbook's files and its variables in `stage`: every string as YAML's `!unsafe`, so that nothing
/// of the command line, the paths or the directory is templated by Ansible (`{{ ... }}` stays text).
fn stage_playbook(
    stage: &Path,
    a: &FleetArgs,
    binaries: &BTreeMap<String, PathBuf>,
    results: &Path,
    remote_dir: &str,
) -> Result<()> {
    for (rel, text) in PLAYBOOK {
        let path = stage.join(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| write_err(dir, e))?;
        }
        std::fs::write(&path, text).map_err(|e| write_err(&path, e))?;
    }
    let results = results
        .canonicalize()
        .unwrap_or_else(|_| results.to_path_buf());
    let vars = json!({
        "iolab_binaries": binaries,
        "iolab_args": a.args,
        "iolab_results": results,
        "iolab_remote_dir": remote_dir,
        "iolab_timeout": a.timeout,
    });
    let path = stage.join("vars.yml");
    std::fs::write(&path, unsafe_yaml(&vars)).map_err(|e| write_err(&path, e))
}

/// `v` as YAML (flow style) with every string tagged `!unsafe`; a JSON string is a valid YAML
/// double-quoted scalar.
fn unsafe_yaml(v: &Value) -> String {
    let text = |s: &str| Value::String(s.to_string()).to_string();
    match v {
        Value::String(s) => format!("!unsafe {}", text(s)),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(unsafe_yaml).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{}: {}", text(k), unsafe_yaml(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

/// How a playbook run was stopped, if it was.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stop {
    No,
    /// Its time ran out: SIGKILL to its group.
    TimedOut,
    /// A Ctrl-C (or SIGTERM) more than it was to be given: SIGKILL to its group.
    Killed,
}

/// Runs `book` over `inventory` (`--limit`) in a process group of its own, each process bounded to
/// [`ANSIBLE_MEMORY_MAX`] and killed with iolab, its output to `log` (appended) and each host's progress
/// to the terminal. With `forward`, the first Ctrl-C (or SIGTERM, SIGHUP) iolab receives is passed on to
/// it as SIGINT; one more (any, without `forward`) or `limit` seconds kill it. Returns its exit status,
/// the hosts on which iolab ran, for the hosts whose run stopped before their outcome came back
/// Ansible's reason, and whether it was stopped.
fn ansible_playbook(
    exe: &Path,
    (inventory, limit_hosts): (&Path, Option<&str>),
    (book, forks, forward, limit): (&Path, u32, bool, u64),
    vars: &Path,
    log: &Path,
) -> Result<(i32, fleet::Known, Stop)> {
    let mut cmd = Command::new(exe);
    cmd.arg("-i")
        .arg(inventory)
        .arg(book)
        .arg("-e")
        .arg(format!("@{}", vars.display()));
    cmd.arg("--forks").arg(forks.max(1).to_string());
    if let Some(l) = limit_hosts {
        cmd.arg("--limit").arg(l);
    }
    // Ansible's own output as iolab reads it, whatever an ansible.cfg says.
    reads_as_checked(&mut cmd)
        .env("ANSIBLE_NOCOLOR", "1")
        .env("ANSIBLE_FORCE_COLOR", "0")
        .env("ANSIBLE_STDOUT_CALLBACK", "default")
        .env("ANSIBLE_CALLBACK_RESULT_FORMAT", "json")
        .env("ANSIBLE_RETRY_FILES_ENABLED", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    iolab_sys::bound_child(&mut cmd, ANSIBLE_MEMORY_MAX);
    let mut logf = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| write_err(log, e))?;
    cmd.stderr(logf.try_clone().map_err(|e| write_err(log, e))?);
    // Counted before the child starts: a Ctrl-C between its start and the watcher's is not lost. The
    // run passed on to is the first: any Ctrl-C at all is passed on, a second one kills it.
    let seen = if forward { 0 } else { iolab_sys::interrupts() };
    let sentinel = group_sentinel(&mut cmd);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            let pgid = sentinel.as_ref().map_or(0, std::process::Child::id);
            end_sentinel(pgid, sentinel);
            return Err(Error::Runtime(format!("cannot run {}: {e}", exe.display())));
        }
    };
    let group = group_of(&child, &sentinel);
    let done = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (done, pgid) = (done.clone(), group as i32);
        let kill_at = seen + if forward { 2 } else { 1 };
        let start = std::time::Instant::now();
        std::thread::spawn(move || {
            let mut forwarded = false;
            while !done.load(Ordering::SeqCst) {
                let n = iolab_sys::interrupts();
                let stop = if n >= kill_at {
                    Stop::Killed
                } else if start.elapsed().as_secs() >= limit {
                    Stop::TimedOut
                } else {
                    Stop::No
                };
                if stop != Stop::No {
                    // SIGKILL is 9 on every Linux architecture.
                    let _ = iolab_sys::kill(-pgid, 9);
                    return stop;
                }
                if forward && n > seen && !forwarded {
                    let _ = iolab_sys::interrupt_group(pgid);
                    forwarded = true;
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            Stop::No
        })
    };
    let mut progress = Progress::default();
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines().map_while(|l| l.ok()) {
            let _ = writeln!(logf, "{line}");
            if let Some(s) = progress.line(&line) {
                say(&format!("  {s}"));
            }
        }
    }
    let status = child.wait();
    end_sentinel(group, sentinel);
    done.store(true, Ordering::SeqCst);
    let stopped = watcher.join().unwrap_or(Stop::No);
    let status = status.map_err(|e| Error::Runtime(format!("ansible-playbook: {e}")))?;
    let known = fleet::Known {
        why: progress.not_run,
        ran: progress.ran,
        ..fleet::Known::default()
    };
    Ok((status.code().unwrap_or(130), known, stopped))
}

/// Reads ansible-playbook's default output line by line: what to show of each host's progress.
#[derive(Default)]
struct Progress {
    task: String,
    not_run: BTreeMap<String, String>,
    /// The hosts whose "Run iolab" task ended.
    ran: BTreeSet<String>,
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
                .and_then(|(_, j)| serde_json::from_str::<Value>(j).ok())
                .and_then(|v| v.get("msg").and_then(|m| m.as_str()).map(plain_errno))
                .unwrap_or_else(|| "(no reason given: see ansible.log)".into())
        };
        match (status, self.task.as_str()) {
            ("fatal", task) => {
                let why = if rest.contains("UNREACHABLE!") {
                    // Past the making of its directory, the clean-up could not reach it either.
                    let left = !matches!(task, "Gathering Facts" | "Make the run's directory (refused if it exists)"
                        | "Pick the binary for this host's architecture, and the host's directory");
                    format!(
                        "unreachable ({task}): {}{}",
                        msg(),
                        if left {
                            "; its directory may be left on it"
                        } else {
                            ""
                        }
                    )
                } else {
                    format!("{task}: {}", msg())
                };
                self.not_run.entry(host.to_string()).or_insert(why.clone());
                Some(format!("{host}: {why}"))
            }
            ("changed", "Copy the binary") => Some(format!("{host}: iolab copied, running")),
            ("changed", "Run iolab") => {
                self.ran.insert(host.to_string());
                Some(format!("{host}: iolab ended"))
            }
            ("changed", "Fetch the record files") => {
                let item = rest.split("(item=").nth(1)?.trim_end_matches(')');
                Some(format!("{host}: fetched {item}"))
            }
            _ => None,
        }
    }
}

/// Ansible's message with a Python OSError in it ("... to /r/h/x.json: [Errno 28] No space left on
/// device: b'...' -> b'...'") ending in the errno in a user's words ("... to /r/h/x.json: no space left
/// (ENOSPC)").
fn plain_errno(msg: &str) -> String {
    let Some(at) = msg.find("[Errno ") else {
        return msg.to_string();
    };
    match msg[at + 7..].split(']').next().and_then(|n| n.parse().ok()) {
        Some(n) => format!(
            "{}{}",
            &msg[..at],
            fleet::io_why(&std::io::Error::from_raw_os_error(n))
        ),
        None => msg.to_string(),
    }
}

/// `--limit` as an error line repeats it: whole when short, else its first 100 characters and its count
/// of patterns (a limit may hold 4 KiB: on one line it hid the rest of the message).
fn limit_said(l: &str) -> String {
    if l.chars().count() <= 120 {
        return l.to_string();
    }
    let head: String = l.chars().take(100).collect();
    format!("{head}... ({} patterns)", l.split(':').count())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_long_limit_is_said_by_its_start_and_count() {
        assert_eq!(super::limit_said("web*:db1"), "web*:db1");
        let long: Vec<String> = (0..500).map(|i| format!("*{i}*x")).collect();
        let said = super::limit_said(&long.join(":"));
        assert!(
            said.starts_with("*0*x:*1*x:") && said.ends_with("... (500 patterns)"),
            "{said}"
        );
        assert!(said.len() < 130, "{said}");
    }
}
