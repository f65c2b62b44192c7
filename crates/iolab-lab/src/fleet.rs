//! A fleet's results (`iolab fleet`): each host's record files under `DIR/HOST/`, read back per host with
//! what its run came to (`fleet-host.json`, written by the Ansible role), and merged per workload: a row
//! per host and the fleet's percentiles from the hosts' histograms merged into one, never averaged.

use crate::compare::{survey_runs_as_records, workload_key, workload_label};
use crate::series::{read_open, Keep, RecordFile};
use iolab_engine::error::{Error, Result};
use iolab_engine::measure::hist::{merge_ns, summarize_keeping, Summary};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The file the role writes beside a host's records: its exit status, output and what it ran on.
pub const HOST_FILE: &str = "fleet-host.json";

mod bounds;
mod host_file;
#[cfg(test)]
use bounds::TEXT_MAX;
use bounds::{short, Hosts, MAX_HOSTS};
use host_file::MAX_FILES;

/// What one host's run came to.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub enum Outcome {
    /// iolab exited 0 and its records came back.
    Ok,
    /// iolab exited with this status, or was stopped: why (the timeout, SIGKILL, or the last line it
    /// printed).
    Failed { rc: i64, why: String },
    /// The host's run never reached iolab (unreachable, no binary for its architecture, a task failed):
    /// Ansible's reason.
    NotRun { why: String },
    /// iolab ran on the host, but what came back cannot be used: its records did not all come back (a
    /// full results filesystem), or a file came back damaged or was replaced since ("record unreadable:
    /// ..."). Its records are not merged.
    Lost { why: String },
}

impl Outcome {
    /// The outcome with its reason cut to what iolab keeps of a host's text.
    fn shortened(self) -> Outcome {
        match self {
            Outcome::Ok => Outcome::Ok,
            Outcome::Failed { rc, why } => Outcome::Failed {
                rc,
                why: short(&why),
            },
            Outcome::NotRun { why } => Outcome::NotRun { why: short(&why) },
            Outcome::Lost { why } => Outcome::Lost { why: short(&why) },
        }
    }
}

/// One host of a fleet run.
#[derive(Debug, Clone, Serialize)]
pub struct Host {
    pub name: String,
    pub architecture: String,
    pub kernel: String,
    /// The accelerator of an emulated host (a guest under QEMU's TCG: `tcg`), from its results'
    /// `host.emulated`: its figures show behaviour, not speed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emulated: Option<String>,
    pub outcome: Outcome,
    /// The files that came back, relative to the host's `files/`.
    pub files: Vec<PathBuf>,
    /// Their runs, as `{"point", "result"}` records.
    #[serde(skip)]
    pub records: Vec<Value>,
}

/// What is known of a host besides its directory: from the fleet run (Ansible's output) or from the
/// `fleet.json` it wrote.
#[derive(Debug, Default, Clone)]
pub struct Known {
    /// Ansible's reason for a host whose run stopped before its outcome came back.
    pub why: BTreeMap<String, String>,
    /// The hosts on which iolab ran (the command ended, whatever came back after).
    pub ran: BTreeSet<String>,
    /// Outcomes `fleet.json` recorded (a later reading finds the same).
    pub recorded: BTreeMap<String, Outcome>,
}

/// The most of a host's outcome file read (it holds the command's stdout and stderr).
pub const HOST_FILE_MAX: u64 = 64 << 20;

/// Reads `dir/HOST/` for every host of the run (`names`, from the inventory), with what Ansible said of
/// the hosts whose outcome did not come back, each record cut down to what `keep` keeps (with what the
/// fleet's merge reads, [`KEPT`]). A host whose files are damaged is `Lost`, with why.
pub fn read_hosts(dir: &Path, names: &[String], known: &Known, keep: &[&[&str]]) -> Vec<Host> {
    let mut budget = Budget::new(keep, Default::default());
    names
        .iter()
        .map(|name| read_host(dir, name, known, &mut budget).0)
        .collect()
}

/// What the fleet's merge reads of a run's result: its workload (as `compare` matches runs), its IOPS,
/// its latency summary with the whole histogram (each field of it: a reader's longer path, such as the
/// figures' `latency.p99_ns`, would cut a whole `latency` down to itself; but the CDF and the plot's
/// buckets, which the merge makes again from the histograms), and the host it ran on.
pub const KEPT: &[&[&str]] = &[
    &["spec"],
    &["target", "kind"],
    &["workload"],
    &["iops"],
    &["latency", "count"],
    &["latency", "mean_ns"],
    &["latency", "stdev_ns"],
    &["latency", "min_ns"],
    &["latency", "p50_ns"],
    &["latency", "p90_ns"],
    &["latency", "p99_ns"],
    &["latency", "p999_ns"],
    &["latency", "max_ns"],
    &["latency", "hist_ns"],
    // The host's every field, each named: `["host"]` alone is cut to what longer paths of the record's
    // checks name (its CPUs), and a guest's `emulated` was lost.
    &["host", "iolab_version"],
    &["host", "kernel_release"],
    &["host", "kernel_preempt"],
    &["host", "cpu_model"],
    &["host", "cpus_online"],
    &["host", "cpus_pinned"],
    &["host", "started_unix_s"],
    &["host", "root"],
    &["host", "emulated"],
    &["host", "accelerator"],
];

/// What is left to read of a results directory: its record files are read at most
/// [`iolab_engine::input::RECORDS_INPUT`] bytes in all (across its hosts), each file once however many
/// names it has (a hard link is not another run), cut down to the paths a reader keeps.
/// With other inputs read before (`iolab report FILE DIR`), shared through [`read_dir_within`].
struct Budget<'a> {
    read: crate::series::Inputs,
    keep: Vec<&'a [&'a str]>,
}

impl<'a> Budget<'a> {
    fn new(keep: &[&'a [&'a str]], read: crate::series::Inputs) -> Budget<'a> {
        Budget {
            read,
            keep: keep.iter().chain(KEPT).copied().collect(),
        }
    }

    /// `dir/rel` (its metadata `m`) counted as read, or why not: `what` names what a file is.
    fn charge(
        &mut self,
        (dir, rel): (&Path, &Path),
        m: &std::fs::Metadata,
        what: &str,
    ) -> std::result::Result<(), String> {
        use crate::series::Refused;
        match self.read.charge(&dir.join(rel), m) {
            Ok(()) => Ok(()),
            Err(Refused::Again(first)) => Err(format!(
                "{} is the same file as {} (a link, or named twice): {what}, read once",
                rel.display(),
                first.display()
            )),
            Err(Refused::Over) => Err(format!(
                "{} would pass the {} a fleet's files are read in all",
                rel.display(),
                iolab_engine::units::fmt_size(iolab_engine::input::RECORDS_INPUT)
            )),
        }
    }
}

/// A host's outcome file counted against what is left to read of the directory, once: a hard link to
/// another host's is not another host's run (16 links to one 58 MB file took 2.8 GB).
fn charge_host_file(
    dir: &Path,
    name: &str,
    budget: &mut Budget,
) -> std::result::Result<(), String> {
    let rel = Path::new(name).join(HOST_FILE);
    let meta = std::fs::symlink_metadata(dir.join(&rel)).map_err(|e| io_why(&e))?;
    budget.charge((dir, &rel), &meta, "a file is one host's")
}

/// What an exit status of `timeout -k 10 SECS iolab ...` means.
fn failure(rc: i64, timeout_s: u64, stderr: &str) -> String {
    match rc {
        124 => format!("stopped at the timeout ({timeout_s} s)"),
        137 => {
            "killed by SIGKILL (10 s after the timeout's SIGTERM, or by the kernel's OOM killer)"
                .into()
        }
        _ => format!(
            "exit {rc}: {}",
            short(
                stderr
                    .lines()
                    .last()
                    .unwrap_or("(it printed nothing on stderr)")
            )
        ),
    }
}

/// An I/O error in a user's words: "no space left (ENOSPC)", "permission denied (EACCES)" (the engine's
/// words for an errno, starting in lower case to follow a file's name).
pub fn io_why(e: &std::io::Error) -> String {
    let text = iolab_engine::error::os_words(&e.to_string()).into_owned();
    let mut c = text.chars();
    c.next()
        .map(|f| f.to_lowercase().chain(c).collect())
        .unwrap_or_default()
}

/// `path` (below `base`, `rel` its path from there) as a regular file iolab fetched: none of the
/// components from `base` down is a symbolic link, and it is a regular file of at most `limit` bytes
/// (opened O_NONBLOCK: a FIFO never blocks the read). Err: what is wrong, in a few words.
fn read_fetched(base: &Path, rel: &Path, limit: u64) -> std::result::Result<String, String> {
    let at = no_links(base, rel)?;
    let shown = rel.display();
    iolab_engine::input::read_text(&at, "", "fleet's file", limit).map_err(|e| match e {
        Error::Usage { msg, .. } => msg.replace(&at.display().to_string(), &shown.to_string()),
        e => e.to_string(),
    })
}

/// `base/rel` where none of the components from `base` down is a symbolic link. Err: what is wrong.
fn no_links(base: &Path, rel: &Path) -> std::result::Result<PathBuf, String> {
    let mut at = base.to_path_buf();
    let shown = rel.display();
    for c in rel.components() {
        at.push(c);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = at.strip_prefix(base).unwrap_or(&at);
                let whose = if link == rel {
                    String::new()
                } else {
                    format!(" (a directory above {shown})")
                };
                return Err(format!(
                    "{} is a symbolic link{whose}, not what iolab wrote there",
                    link.display()
                ));
            }
            Ok(_) => {}
            Err(e) => return Err(format!("{shown}: {}", io_why(&e))),
        }
    }
    Ok(at)
}

/// The record file `dir/rel` a host's outcome names, read as a stream within what is left of `budget`
/// and cut down to what it keeps. Ok(None): another command's document (a probe's), kept, not merged.
/// Err: what is wrong with it (a symbolic link on the way, not a regular file, over the budget, the same
/// file as one read already, not whole JSON lines or a document, cut short).
fn read_record(
    dir: &Path,
    rel: &Path,
    budget: &mut Budget,
) -> std::result::Result<Option<RecordFile>, String> {
    let shown = rel.display();
    let at = no_links(dir, rel)?;
    let word = |e: Error| match e {
        Error::Usage { msg, .. } | Error::Runtime(msg) => {
            msg.replace(&at.display().to_string(), &shown.to_string())
        }
        e => e.to_string(),
    };
    let what = format!(
        "fleet's records ({} in all across its hosts)",
        iolab_engine::units::fmt_size(iolab_engine::input::RECORDS_INPUT)
    );
    let f = iolab_engine::input::open_regular(&at, "", &what, budget.read.left()).map_err(word)?;
    let meta = f.get_ref().metadata().map_err(|e| io_why(&e))?;
    budget.charge((dir, rel), &meta, "a file is one host's run")?;
    let keep = Keep::Paths(&budget.keep);
    match read_open(f, &at, meta.len(), keep) {
        Ok(r) if r.cut > 0 && r.records.is_empty() => {
            Err(format!("{shown}: not whole JSON (it ends mid-value)"))
        }
        Ok(r) if r.cut > 0 => Err(format!("{shown}: its last line is cut short")),
        Ok(r) if r.records.is_empty() && r.summaries.is_empty() && meta.len() == 0 => {
            Err(format!("{shown} is empty"))
        }
        Ok(r) => Ok(Some(r)),
        Err(_) if other_document(&at) => Ok(None),
        Err(e) => {
            let what = word(e);
            let what = what.trim_start_matches(&format!("{shown}: ")).to_string();
            Err(format!(
                "{shown}: neither records nor a document iolab writes ({what})"
            ))
        }
    }
}

/// One host's directory read: the host, and whether something in it is damaged (as opposed to an
/// outcome Ansible or `fleet.json` gave).
fn read_host(dir: &Path, name: &str, known: &Known, budget: &mut Budget) -> (Host, bool) {
    let mut host = Host {
        name: name.to_string(),
        architecture: String::new(),
        kernel: String::new(),
        emulated: None,
        outcome: Outcome::Ok,
        files: Vec::new(),
        records: Vec::new(),
    };
    let lost = |why: String| Outcome::Lost {
        why: format!("record unreadable: {why}"),
    };
    let host_dir = dir.join(name);
    let here = std::fs::symlink_metadata(host_dir.join(HOST_FILE)).is_ok();
    if !here {
        host.outcome = match known.recorded.get(name) {
            Some(o @ (Outcome::NotRun { .. } | Outcome::Lost { .. })) => o.clone(),
            // fleet.json says it ran to an outcome, and the host's directory is gone (moved away).
            Some(_) => {
                host.outcome = lost(format!("{name}/{HOST_FILE} is gone since the run"));
                return (host, true);
            }
            None => {
                let why = known.why.get(name).cloned();
                if known.ran.contains(name) {
                    Outcome::Lost {
                        why: format!(
                            "iolab ran, but its records did not all come back ({name}/{PARTIAL_FILES}/ \
                             holds what did): {}",
                            why.unwrap_or_else(|| "ansible.log has why".into())
                        ),
                    }
                } else {
                    Outcome::NotRun {
                        why: why.unwrap_or_else(|| {
                            "Ansible did not reach it (the play stopped before it; ansible.log has why)"
                                .into()
                        }),
                    }
                }
            }
        };
        return (host, false);
    }
    if let Err(why) = charge_host_file(dir, name, budget) {
        host.outcome = lost(why);
        return (host, true);
    }
    let info = match read_fetched(dir, &Path::new(name).join(HOST_FILE), HOST_FILE_MAX)
        .map(|t| host_file::HostFile::parse(&t))
    {
        Ok(Ok(info)) => info,
        Ok(Err((true, _))) => {
            host.outcome = lost(format!("{name}/{HOST_FILE} is not a host's outcome"));
            return (host, true);
        }
        Ok(Err((false, e))) => {
            host.outcome = lost(format!("{name}/{HOST_FILE}: not whole JSON ({e})"));
            return (host, true);
        }
        Err(why) => {
            host.outcome = lost(why);
            return (host, true);
        }
    };
    // Texts as long as a host's are shown; a forged one is cut (a 58 MB kernel name was a 960 MB page).
    let s = |t: &host_file::Text| short(t.0.as_deref().unwrap_or_default());
    host.architecture = s(&info.architecture);
    host.kernel = s(&info.kernel);
    host.outcome = match info.rc.0 {
        Some(0) => Outcome::Ok,
        Some(rc) => Outcome::Failed {
            rc,
            why: failure(
                rc,
                info.timeout_s
                    .0
                    .and_then(|t| u64::try_from(t).ok())
                    .unwrap_or(0),
                &s(&info.stderr),
            ),
        },
        None => lost(format!("{name}/{HOST_FILE} holds no exit status")),
    };
    let damage = read_files(dir, name, &info, &mut host, budget);
    if let Some(why) = &damage {
        host.outcome = match std::mem::replace(&mut host.outcome, Outcome::Ok) {
            // A failed run's records are not merged: what is wrong is said beside why it failed.
            Outcome::Failed { rc, why: failed } => Outcome::Failed {
                rc,
                why: format!("{failed}; record unreadable: {why}"),
            },
            Outcome::Lost { why: w } => Outcome::Lost { why: w },
            _ => lost(why.clone()),
        };
    }
    let damaged = damage.is_some() || matches!(host.outcome, Outcome::Lost { .. });
    (host, damaged)
}

/// The record files a host's outcome names, read into `host` (its results merged, the others listed);
/// the first that is damaged, if any.
fn read_files(
    dir: &Path,
    name: &str,
    info: &host_file::HostFile,
    host: &mut Host,
    budget: &mut Budget,
) -> Option<String> {
    let mut damage = None;
    let files = Path::new(name).join("files");
    let named = &info.records;
    if named.count > MAX_FILES {
        return Some(format!(
            "{HOST_FILE} names {} files, more than the {MAX_FILES} iolab reads of a host",
            named.count
        ));
    }
    // Each file once (a list naming one file a thousand times is not a thousand runs).
    let mut seen = BTreeSet::new();
    for rel in &named.kept {
        let rel = PathBuf::from(rel.as_deref().unwrap_or_default());
        if !seen.insert(rel.clone()) {
            damage.get_or_insert_with(|| format!("{HOST_FILE} names {} twice", rel.display()));
            continue;
        }
        // Only what the role fetched: a relative path below the host's files/.
        if rel.as_os_str().is_empty()
            || rel.is_absolute()
            || rel
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            damage.get_or_insert_with(|| format!("{HOST_FILE} names {}", rel.display()));
            continue;
        }
        host.files.push(rel.clone());
        // Files other than results (Markdown, CSV, HTML) come back too; only results are merged.
        if !matches!(
            rel.extension().and_then(|e| e.to_str()),
            Some("json" | "jsonl")
        ) {
            continue;
        }
        match read_record(dir, &files.join(&rel), budget) {
            Ok(Some(f)) => host.records.extend(survey_runs_as_records(f.records)),
            // Another command's document (a probe's) is kept, not merged.
            Ok(None) => {}
            Err(why) => {
                damage.get_or_insert(why);
            }
        }
    }
    host.emulated = host.records.iter().find_map(|r| {
        let h = r.pointer("/result/host")?;
        (h.get("emulated") == Some(&Value::Bool(true))).then(|| {
            h.get("accelerator")
                .and_then(Value::as_str)
                .unwrap_or("an emulator")
                .to_string()
        })
    });
    damage
}

/// Whether the file at `path` is a JSON document of an iolab command that writes no records (`probe
/// --json`): an object with the `host` it ran on, read as a stream (nothing of it held but the host's
/// keys).
fn other_document(path: &Path) -> bool {
    #[derive(Deserialize)]
    struct Other {
        #[allow(dead_code)]
        host: BTreeMap<String, serde::de::IgnoredAny>,
        // A run's result has a host too: a document with a spec or runs is a run's (refused for what
        // its reading found), never another command's.
        #[serde(default)]
        spec: Option<serde::de::IgnoredAny>,
        #[serde(default)]
        runs: Option<serde::de::IgnoredAny>,
    }
    let Ok(f) = iolab_engine::input::open_regular(path, "", "fleet's file", HOST_FILE_MAX) else {
        return false;
    };
    serde_json::from_reader::<_, Other>(std::io::BufReader::new(f))
        .is_ok_and(|o| o.spec.is_none() && o.runs.is_none())
}

/// Where the role fetches a host's files, renamed by [`settle`] once its outcome came back whole.
pub const PARTIAL_FILES: &str = "files.partial";
/// Where the role fetches a host's outcome (last, after its records).
pub const PARTIAL_HOST_FILE: &str = "fleet-host.json.partial";

/// Gives each host's fetched files their final names (`files/`, then `fleet-host.json`) where its
/// outcome came back whole: the role fetches to temporary names, so a fetch cut short (a full results
/// filesystem) leaves nothing under a final name. Returns, by host, why a host's files keep their
/// temporary names.
pub fn settle(dir: &Path, names: &[String]) -> BTreeMap<String, String> {
    let mut kept = BTreeMap::new();
    for name in names {
        let d = dir.join(name);
        let outcome = d.join(PARTIAL_HOST_FILE);
        if std::fs::symlink_metadata(&outcome).is_err() {
            continue;
        }
        let rel = Path::new(name).join(PARTIAL_HOST_FILE);
        let whole = read_fetched(dir, &rel, HOST_FILE_MAX).and_then(|t| {
            crate::series::value_of(&t)
                .map(|_| ())
                .map_err(|e| format!("{}: cut short or damaged ({e})", rel.display()))
        });
        let moved = whole.and_then(|_| {
            let files = d.join(PARTIAL_FILES);
            if std::fs::symlink_metadata(&files).is_ok() {
                std::fs::rename(&files, d.join("files"))
                    .map_err(|e| format!("cannot rename {name}/{PARTIAL_FILES}: {}", io_why(&e)))?;
            }
            std::fs::rename(&outcome, d.join(HOST_FILE))
                .map_err(|e| format!("cannot rename {}: {}", rel.display(), io_why(&e)))
        });
        if let Err(why) = moved {
            kept.insert(name.clone(), why);
        }
    }
    kept
}

/// Every host's records, each result's spec naming its host (`spec.host`), so that `compare --across
/// host` matches the runs that differ only in the host.
pub fn records_by_host(mut hosts: Vec<Host>) -> Vec<Value> {
    hosts.iter_mut().flat_map(take_records).collect()
}

/// A host's records taken out of it (it keeps its outcome and files), each result's spec naming the host.
pub fn take_records(h: &mut Host) -> Vec<Value> {
    let mut out = Vec::new();
    for mut rec in std::mem::take(&mut h.records) {
        if let Some(spec) = rec
            .pointer_mut("/result/spec")
            .and_then(Value::as_object_mut)
        {
            spec.insert("host".into(), Value::String(h.name.clone()));
            out.push(rec);
        }
    }
    out
}

/// The most of a fleet's `fleet.json` read.
const FLEET_FILE_MAX: u64 = 256 << 20;

/// The hosts of a fleet's results directory (`DIR/HOST/`, each with its outcome file), by name, with
/// the hosts `DIR/fleet.json` names (those that never ran, with Ansible's reason): refused when none is
/// there, and when a host's files are damaged or were replaced since the run (a FIFO, a symbolic link,
/// a file larger than any record, JSON cut short), naming the host and what is wrong.
pub fn read_dir(dir: &Path, keep: &[&[&str]]) -> Result<Vec<Host>> {
    read_dir_within(dir, keep, &mut Default::default())
}

/// [`read_dir`] after the inputs `read` (each file once, within one bound for them all), counted in it.
pub fn read_dir_within(
    dir: &Path,
    keep: &[&[&str]],
    read: &mut crate::series::Inputs,
) -> Result<Vec<Host>> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| Error::Runtime(format!("cannot read {}: {}", dir.display(), io_why(&e))))?;
    // A host's directory is one iolab made there: a symbolic link to elsewhere is not a host. Its
    // outcome file, whatever it has become, names it.
    let mut names = BTreeSet::new();
    for e in entries.flatten() {
        // A link that leads to what looks like a host's results was put there by someone else: refused,
        // not passed over without a word.
        if e.file_type().is_ok_and(|t| t.is_symlink()) && e.path().join(HOST_FILE).exists() {
            return Err(Error::Runtime(format!(
                "{}: a symbolic link to a host's results, not a host's directory iolab made: refused",
                e.path().display()
            )));
        }
        if !e.file_type().is_ok_and(|t| t.is_dir())
            || std::fs::symlink_metadata(e.path().join(HOST_FILE)).is_err()
        {
            continue;
        }
        // iolab names a host's directory by the host's name, which is text.
        let Some(name) = e.file_name().to_str().map(String::from) else {
            return Err(Error::Runtime(format!(
                "{}: {}: a host's directory whose name is not UTF-8 text, which no host iolab ran has",
                dir.display(),
                e.file_name().to_string_lossy()
            )));
        };
        names.insert(name);
    }
    if names.len() > MAX_HOSTS {
        return Err(Error::Runtime(format!(
            "{}: results of more than {MAX_HOSTS} hosts, more than iolab reads of a fleet",
            dir.display()
        )));
    }
    if names.is_empty() {
        return Err(Error::Runtime(format!(
            "{}: no host's results (a fleet's results directory holds HOST/{HOST_FILE} and the host's record files)",
            dir.display()
        )));
    }
    let recorded = recorded_in(dir).map_err(|why| {
        Error::Runtime(format!("{}: fleet.json unreadable: {why}", dir.display()))
    })?;
    names.extend(recorded.keys().cloned());
    let known = Known {
        recorded,
        ..Known::default()
    };
    let mut hosts = Vec::new();
    let mut budget = Budget::new(keep, std::mem::take(read));
    let hosts_read = read_hosts_of(dir, &names, &known, &mut budget, &mut hosts);
    *read = budget.read;
    hosts_read.map(|()| hosts)
}

/// Each of `names` read into `hosts`; refused at the first whose files are damaged.
fn read_hosts_of(
    dir: &Path,
    names: &BTreeSet<String>,
    known: &Known,
    budget: &mut Budget,
    hosts: &mut Vec<Host>,
) -> Result<()> {
    for name in names {
        let (host, damaged) = read_host(dir, name, known, budget);
        if damaged && known.recorded.get(name) != Some(&host.outcome) {
            let why = match &host.outcome {
                Outcome::Lost { why } | Outcome::Failed { why, .. } => why.clone(),
                _ => "damaged".into(),
            };
            return Err(Error::Runtime(format!(
                "{}: host {name}: {why}; a fleet's results are read as they came back (move that host's \
                 directory away to read the others)",
                dir.display()
            )));
        }
        hosts.push(host);
    }
    Ok(())
}

/// The hosts `DIR/fleet.json` (what `iolab fleet` wrote at the end) names, with their outcome; none
/// when there is no fleet.json. Err: why it cannot be read (it is read as a host's files are).
fn recorded_in(dir: &Path) -> std::result::Result<BTreeMap<String, Outcome>, String> {
    if std::fs::symlink_metadata(dir.join("fleet.json")).is_err() {
        return Ok(BTreeMap::new());
    }
    /// Of fleet.json only its hosts are made into values (its merged workloads are parsed past).
    #[derive(Deserialize)]
    struct Recorded {
        #[serde(default)]
        hosts: Hosts,
    }
    let text = read_fetched(dir, Path::new("fleet.json"), FLEET_FILE_MAX)?;
    let doc: Recorded =
        serde_json::from_str(&text).map_err(|e| format!("not a fleet.json iolab writes ({e})"))?;
    drop(text);
    let mut out = BTreeMap::new();
    for h in &doc.hosts.0 {
        let Some(name) = h.get("name").and_then(Value::as_str) else {
            continue;
        };
        // Only a plain name, a directory of DIR's own (as iolab fleet allows): "a/" or "a/." would
        // read host a twice, "../x" a directory elsewhere.
        let plain = !name.is_empty()
            && name.len() <= 255
            && !name.contains('/')
            && name != "."
            && name != "..";
        if !plain {
            return Err(format!(
                "it names a host {name:?}, which no host iolab ran is named (a name is a directory of \
                 the results')"
            ));
        }
        if let Some(o) = h
            .get("outcome")
            .and_then(|o| serde_json::from_value::<Outcome>(o.clone()).ok())
        {
            out.insert(name.to_string(), o.shortened());
        }
    }
    Ok(out)
}

/// The records of a fleet's results directory (`DIR/HOST/`), for `compare --across host`: refused when
/// no host's records are there.
pub fn read_dir_records(dir: &Path, keep: &[&[&str]]) -> Result<Vec<Value>> {
    let recs = records_by_host(read_dir(dir, keep)?);
    if recs.is_empty() {
        return Err(Error::Runtime(format!(
            "{}: no host sent back results (each host's HOST/{HOST_FILE} names its outcome)",
            dir.display()
        )));
    }
    Ok(recs)
}

/// One host's figures for a workload: all its runs of it (a survey's rounds, a suite's repeats).
#[derive(Debug, Clone, Serialize)]
pub struct HostRow {
    pub host: String,
    pub runs: usize,
    /// The median of its runs' IOPS, and their spread: (max - min) / median (null for one run: no spread
    /// is measured).
    pub iops: f64,
    pub iops_spread: Option<f64>,
    /// Its runs' latency histograms merged (the percentiles of all its ops; `hist_ns` holds every run's
    /// buckets, what the fleet's merge read); without `hist_ns`, its first run's summary.
    pub latency: Summary,
}

/// A workload the hosts ran: a row per host, and the fleet's distribution from their merged histograms.
#[derive(Debug, Clone, Serialize)]
pub struct Merged {
    pub workload: String,
    pub hosts: Vec<HostRow>,
    /// The hosts' latency histograms merged into one (`hist_ns` of each result): its percentiles are the
    /// fleet's (within the 0.1% of the histograms' precision), not an average of the hosts'. Absent
    /// where a result carries no histogram.
    pub fleet: Option<Summary>,
    /// The highest host p99 over the lowest (null where fewer than two hosts have a p99).
    pub p99_spread: Option<f64>,
    /// Hosts whose median IOPS lies beyond their own noise from the hosts' median (three hosts or more):
    /// (host, its IOPS over the hosts' median).
    pub outliers: Vec<(String, f64)>,
}

/// Noise assumed for a host with one run (no spread measured), as `compare` does.
const MIN_NOISE: f64 = crate::compare::MIN_NOISE_PCT / 100.0;

/// Every workload at least one host ran, in the order first seen, with a row per host that ran it. Only
/// hosts whose command exited 0: a failed or stopped run's records are kept in its files, not merged. A
/// workload is a result's spec (as `compare` matches runs) and the point of the sweep or suite that ran it
/// (points may differ only in an amount or a directory), so a host's repeats of one point merge.
pub fn merge(hosts: &[Host]) -> Vec<Merged> {
    let mut order: Vec<String> = Vec::new();
    // Each run by reference: a result is not copied to be merged.
    type Runs<'h> = Vec<(String, Vec<&'h Value>)>;
    let mut by: BTreeMap<String, (String, Runs)> = BTreeMap::new();
    for h in hosts.iter().filter(|h| h.outcome == Outcome::Ok) {
        for rec in &h.records {
            let Some(r) = rec.get("result").filter(|r| r.is_object()) else {
                continue;
            };
            let point = crate::series::point_object(rec)
                .map(|p| Value::Object(p).to_string())
                .unwrap_or_default();
            let key = workload_key(r) + &point;
            let e = by.entry(key.clone()).or_insert_with(|| {
                order.push(key.clone());
                (workload_label(r), Vec::new())
            });
            // A host's records come together: its entry, if any, is the last (a search through every
            // host's was quadratic in the hosts).
            match e.1.last_mut().filter(|(name, _)| name == &h.name) {
                Some((_, runs)) => runs.push(r),
                None => e.1.push((h.name.clone(), vec![r])),
            }
        }
    }
    order
        .iter()
        .filter_map(|k| by.remove(k))
        .map(|(label, runs)| merged_workload(label, &runs))
        .collect()
}

fn latency(r: &Value) -> Summary {
    r.get("latency")
        .and_then(|l| {
            // Its quantiles as a reader that shows them holds them (packed).
            let mut l = l.clone();
            crate::series::unpack_all(&mut l);
            serde_json::from_value(l).ok()
        })
        .unwrap_or_default()
}

/// The merged summary of `parts` (histograms in ns), without the histogram itself.
fn merged_summary<'a>(parts: impl IntoIterator<Item = &'a [(f64, u64)]>) -> Summary {
    let mut s = summarize_keeping(&merge_ns(parts), 0.1, false);
    s.hist_ns.clear();
    s
}

fn host_row(host: &str, runs: &[&Value]) -> HostRow {
    let mut iops: Vec<f64> = runs
        .iter()
        .map(|r| r.get("iops").and_then(Value::as_f64).unwrap_or(0.0))
        .collect();
    iops.sort_by(f64::total_cmp);
    let mid = median(iops.clone());
    let spread = (mid > 0.0 && iops.len() > 1).then(|| (iops[iops.len() - 1] - iops[0]) / mid);
    let lats: Vec<Summary> = runs.iter().map(|r| latency(r)).collect();
    let latency = if lats.iter().all(|l| !l.hist_ns.is_empty()) {
        let mut s = merged_summary(lats.iter().map(|l| l.hist_ns.as_slice()));
        s.hist_ns = lats
            .iter()
            .flat_map(|l| l.hist_ns.iter().copied())
            .collect();
        s
    } else {
        lats[0].clone()
    };
    HostRow {
        host: host.to_string(),
        runs: runs.len(),
        iops: mid,
        iops_spread: spread,
        latency,
    }
}

fn merged_workload(workload: String, runs: &[(String, Vec<&Value>)]) -> Merged {
    let hosts: Vec<HostRow> = runs.iter().map(|(h, rs)| host_row(h, rs)).collect();
    let complete = hosts.iter().all(|h| !h.latency.hist_ns.is_empty());
    let fleet =
        complete.then(|| merged_summary(hosts.iter().map(|h| h.latency.hist_ns.as_slice())));
    let p99s: Vec<f64> = hosts
        .iter()
        .map(|h| h.latency.p99_ns)
        .filter(|v| *v > 0.0)
        .collect();
    let (lo, hi) = p99s
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(l, h), &v| (l.min(v), h.max(v)));
    let outliers = outliers(&hosts);
    Merged {
        workload,
        hosts,
        fleet,
        p99_spread: (p99s.len() > 1).then(|| hi / lo),
        outliers,
    }
}

/// Hosts (of three or more) whose median IOPS is off the hosts' median by more than its own rounds'
/// spread (at least [`MIN_NOISE`]).
fn outliers(hosts: &[HostRow]) -> Vec<(String, f64)> {
    if hosts.len() < 3 {
        return Vec::new();
    }
    let m = median(hosts.iter().map(|h| h.iops).collect());
    if m <= 0.0 {
        return Vec::new();
    }
    hosts
        .iter()
        .map(|h| (h, h.iops / m))
        .filter(|(h, ratio)| (ratio - 1.0).abs() > h.iops_spread.unwrap_or(0.0).max(MIN_NOISE))
        .map(|(h, ratio)| (h.host.clone(), ratio))
        .collect()
}

/// The median (the mean of the middle two for an even count).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_engine::measure::hist::new_hist;

    fn result(values: &[u64], ns_per_tick: f64) -> Value {
        let mut h = new_hist();
        for &v in values {
            h.record(v).unwrap();
        }
        serde_json::json!({
            "spec": {"method": "psync", "bs": 4096},
            "target": {"kind": "null"},
            "iops": 1000.0,
            "latency": summarize_keeping(&h, ns_per_tick, true),
        })
    }

    #[test]
    fn the_fleet_p99_is_the_merged_histograms_not_the_hosts_average() {
        // Host a: 99 fast values and one slow; host b: all slow. Averaged p99s would be (a's p99 + b's)/2.
        let a: Vec<u64> = (0..990)
            .map(|i| 1000 + i % 10)
            .chain([50_000; 10])
            .collect();
        let b: Vec<u64> = vec![20_000; 1000];
        let host = |name: &str, r: Value| Host {
            name: name.into(),
            architecture: "x86_64".into(),
            kernel: "6.1".into(),
            emulated: None,
            outcome: Outcome::Ok,
            files: Vec::new(),
            records: vec![serde_json::json!({"point": {}, "result": r})],
        };
        // Host b's clock ticks twice as fast: its values are half as many ns.
        let m = merge(&[host("a", result(&a, 1.0)), host("b", result(&b, 0.5))]);
        assert_eq!(m.len(), 1);
        let fleet = m[0].fleet.as_ref().expect("both carry histograms");
        // Merged in ns: 990 near 1 µs, 1000 at 10 µs, 10 at 50 µs; the 99th percentile of 2000 is 10 µs.
        assert_eq!(fleet.count, 2000);
        assert!(
            (fleet.p99_ns / 10_000.0 - 1.0).abs() < 0.002,
            "{}",
            fleet.p99_ns
        );
        assert!(
            (fleet.p50_ns / 10_000.0 - 1.0).abs() < 0.002,
            "{}",
            fleet.p50_ns
        );
        let avg = (m[0].hosts[0].latency.p99_ns + m[0].hosts[1].latency.p99_ns) / 2.0;
        assert!(
            (avg - fleet.p99_ns).abs() > 1000.0,
            "the average {avg} is not the fleet's"
        );
        // The spread is b's p99 (10 µs) over a's (about 1 µs).
        let (pa, pb) = (m[0].hosts[0].latency.p99_ns, m[0].hosts[1].latency.p99_ns);
        assert!(
            (pa / 1009.0 - 1.0).abs() < 0.002 && (pb / 10_000.0 - 1.0).abs() < 0.002,
            "{pa} {pb}"
        );
        assert!(
            (m[0].p99_spread.unwrap() - pb / pa).abs() < 1e-9,
            "{:?}",
            m[0].p99_spread
        );
    }

    #[test]
    fn a_hosts_rounds_merge_into_its_row_and_an_outlier_is_beyond_its_own_noise() {
        let run = |iops: f64, v: u64| {
            let mut r = result(&[v; 100], 1.0);
            r["iops"] = iops.into();
            serde_json::json!({"point": {}, "result": r})
        };
        let host = |name: &str, recs: Vec<Value>| Host {
            name: name.into(),
            architecture: String::new(),
            kernel: String::new(),
            emulated: None,
            outcome: Outcome::Ok,
            files: Vec::new(),
            records: recs,
        };
        let m = merge(&[
            // a: three rounds within 10% of each other; its p99 is over all 300 values.
            host(
                "a",
                vec![run(1000.0, 100), run(1050.0, 100), run(1100.0, 5000)],
            ),
            host("b", vec![run(1000.0, 100), run(1010.0, 100)]),
            // c: half the others' rate, its rounds within 1%: beyond its noise.
            host("c", vec![run(500.0, 100), run(505.0, 100)]),
        ]);
        let rows = &m[0].hosts;
        assert_eq!(
            (rows[0].runs, rows[0].iops, rows[0].latency.count),
            (3, 1050.0, 300)
        );
        assert!((rows[0].iops_spread.unwrap() - 100.0 / 1050.0).abs() < 1e-9);
        // One run measures no spread, and one host no spread of p99s: null, not 0 or 1x.
        let lone = merge(&[host("d", vec![run(900.0, 100)])]);
        assert_eq!(lone[0].hosts[0].iops_spread, None);
        assert_eq!(lone[0].p99_spread, None);
        assert!((rows[0].latency.p99_ns / 5000.0 - 1.0).abs() < 0.002);
        assert_eq!(m[0].fleet.as_ref().unwrap().count, 700);
        assert_eq!(m[0].outliers.len(), 1, "{:?}", m[0].outliers);
        assert_eq!(m[0].outliers[0].0, "c");
        // The hosts' median is b's 1005: c's 502.5 is 0.5 of it.
        assert!(
            (m[0].outliers[0].1 - 0.5).abs() < 1e-9,
            "{:?}",
            m[0].outliers
        );
    }

    #[test]
    fn a_host_without_a_histogram_gives_no_fleet_percentiles() {
        let mut r = result(&[1000, 2000], 1.0);
        r["latency"]["hist_ns"] = Value::Array(Vec::new());
        let host = Host {
            name: "old".into(),
            architecture: String::new(),
            kernel: String::new(),
            emulated: None,
            outcome: Outcome::Ok,
            files: Vec::new(),
            records: vec![serde_json::json!({"point": {}, "result": r})],
        };
        assert!(merge(&[host])[0].fleet.is_none());
    }

    #[test]
    fn a_results_directory_names_each_host_once_and_only_its_own_directories() {
        let d = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        let host = |p: &Path| {
            std::fs::create_dir_all(p).unwrap();
            std::fs::write(
                p.join(HOST_FILE),
                r#"{"rc": 0, "kernel": "k", "records": []}"#,
            )
            .unwrap();
        };
        host(&d.path().join("ok1"));
        host(&out.path().join("ext"));
        let not_run = |n: &str| serde_json::json!({"name": n, "outcome": {"NotRun": {"why": "x"}}});
        // A name that is not a directory of the results' own is damage, never read elsewhere.
        for bad in ["ok1/", "ok1/.", "../x", "/abs", ".."] {
            let doc = serde_json::json!({"hosts": [not_run(bad), not_run("gone")]});
            std::fs::write(d.path().join("fleet.json"), doc.to_string()).unwrap();
            let e = read_dir(d.path(), &[]).unwrap_err().to_string();
            assert!(
                e.contains(&format!("fleet.json unreadable: it names a host {bad:?}")),
                "{e}"
            );
        }
        let doc = serde_json::json!({"hosts": [not_run("gone")]});
        std::fs::write(d.path().join("fleet.json"), doc.to_string()).unwrap();
        let names: Vec<String> = read_dir(d.path(), &[])
            .unwrap()
            .into_iter()
            .map(|h| h.name)
            .collect();
        assert_eq!(names, ["gone", "ok1"]);
        // A link to a host's results elsewhere is not the results' own: refused, naming it.
        std::os::unix::fs::symlink(out.path().join("ext"), d.path().join("symhost")).unwrap();
        let e = read_dir(d.path(), &[]).unwrap_err().to_string();
        assert!(
            e.contains("symhost: a symbolic link to a host's results"),
            "{e}"
        );
        std::fs::remove_file(d.path().join("symhost")).unwrap();
        // A FIFO in fleet.json's place is refused without a read (the read would block).
        std::fs::remove_file(d.path().join("fleet.json")).unwrap();
        mkfifo(&d.path().join("fleet.json"));
        let e = read_dir(d.path(), &[]).unwrap_err().to_string();
        assert!(
            e.contains("fleet.json unreadable: fleet.json is a FIFO"),
            "{e}"
        );
    }

    /// A forged results directory is read within bounds: a hard link to another host's outcome file is
    /// damage, a host's long texts are cut, and a fleet.json of more hosts than iolab reads is refused as
    /// it is parsed.
    #[test]
    fn forged_host_files_are_read_once_and_their_texts_cut() {
        let d = tempfile::tempdir().unwrap();
        let h0 = d.path().join("h0");
        std::fs::create_dir_all(&h0).unwrap();
        let long = "k".repeat(3 * TEXT_MAX);
        let info = serde_json::json!({"rc": 1, "kernel": long, "stderr": long, "records": []});
        std::fs::write(h0.join(HOST_FILE), info.to_string()).unwrap();
        let hosts = read_dir(d.path(), &[]).unwrap();
        assert_eq!(hosts[0].kernel.len(), TEXT_MAX + '…'.len_utf8());
        let Outcome::Failed { why, .. } = &hosts[0].outcome else {
            panic!("{:?}", hosts[0].outcome)
        };
        assert!(why.len() < TEXT_MAX + 20, "{}", why.len());
        std::fs::create_dir_all(d.path().join("h1")).unwrap();
        std::fs::hard_link(h0.join(HOST_FILE), d.path().join("h1").join(HOST_FILE)).unwrap();
        let e = read_dir(d.path(), &[]).unwrap_err().to_string();
        assert!(
            e.contains("h1/fleet-host.json is the same file as ")
                && e.contains("/h0/fleet-host.json (a link, or named twice)"),
            "{e}"
        );
        std::fs::remove_dir_all(d.path().join("h1")).unwrap();
        let many: Vec<Value> = (0..=MAX_HOSTS)
            .map(|i| serde_json::json!({"name": format!("n{i}"), "outcome": "Ok"}))
            .collect();
        let doc = serde_json::json!({ "hosts": many });
        std::fs::write(d.path().join("fleet.json"), doc.to_string()).unwrap();
        let e = read_dir(d.path(), &[]).unwrap_err().to_string();
        assert!(
            e.contains(&format!("more than the {MAX_HOSTS} hosts iolab reads")),
            "{e}"
        );
    }

    fn mkfifo(p: &Path) {
        let made = std::process::Command::new("mkfifo")
            .arg(p)
            .status()
            .unwrap();
        assert!(made.success());
    }

    /// A results directory as `iolab fleet` leaves it: host `name` ran `run --json r.json` (exit 0).
    fn ran_host(dir: &Path, name: &str) {
        let files = dir.join(name).join("files");
        std::fs::create_dir_all(&files).unwrap();
        let rec = serde_json::json!({"spec": {"method": "psync", "bs": 4096}, "iops": 10.0});
        std::fs::write(files.join("r.json"), rec.to_string()).unwrap();
        let info = serde_json::json!({"rc": 0, "architecture": "x86_64", "kernel": "6.1",
            "records": ["r.json"]});
        std::fs::write(dir.join(name).join(HOST_FILE), info.to_string()).unwrap();
    }

    /// A host's survey document keeps its runs' host as the host wrote it: an emulated guest is said so.
    #[test]
    fn a_hosts_survey_keeps_its_runs_host_whole() {
        let names = crate::series::field_names::<iolab_engine::host::Host>();
        for f in names {
            assert!(KEPT.contains(&&["host", *f][..]), "host.{f} not kept");
        }
        let d = tempfile::tempdir().unwrap();
        ran_host(d.path(), "g");
        let mut run = result(&[1000; 10], 1.0);
        run["host"] = serde_json::json!({"emulated": true, "accelerator": "tcg", "cpus_online": 2});
        let survey = serde_json::json!({"ranking": [], "runs": [
            {"target": "/dev/null", "method": "psync", "bs": 4, "result": run}]});
        let text = serde_json::to_string_pretty(&survey).unwrap();
        std::fs::write(d.path().join("g/files/r.json"), text).unwrap();
        let hosts = read_hosts(d.path(), &["g".into()], &Known::default(), &[]);
        assert_eq!(hosts[0].emulated.as_deref(), Some("tcg"));
    }

    #[test]
    fn the_merge_reads_each_hosts_histogram_through_the_readers_cut() {
        // A latency summary's every field is kept (the whole summary deserializes), whatever the reader.
        let names = crate::series::field_names::<Summary>();
        // The CDF and the plot's buckets default to none; the merge makes them from the histograms.
        for f in names.iter().filter(|f| !["cdf", "buckets"].contains(f)) {
            assert!(KEPT.contains(&&["latency", *f][..]), "latency.{f} not kept");
        }
        let d = tempfile::tempdir().unwrap();
        for (h, v) in [("a", 1000), ("b", 20_000)] {
            ran_host(d.path(), h);
            let rec = result(&vec![v; 100], 1.0);
            std::fs::write(d.path().join(h).join("files/r.json"), rec.to_string()).unwrap();
        }
        let keep = crate::compare::KEPT;
        let hosts = read_hosts(d.path(), &["a".into(), "b".into()], &Known::default(), keep);
        let m = merge(&hosts);
        assert_eq!(m.len(), 1);
        let lat = m[0].fleet.as_ref().expect("the fleet percentiles");
        assert_eq!(lat.count, 200);
        assert!(lat.p99_ns > 19_000.0, "{}", lat.p99_ns);
        assert!(m[0].hosts.iter().all(|h| h.latency.count == 100));
    }

    fn outcome_of(dir: &Path, name: &str, known: &Known) -> Outcome {
        read_hosts(dir, &[name.to_string()], known, &[])
            .remove(0)
            .outcome
    }

    #[test]
    fn a_damaged_or_replaced_host_file_is_named_never_dropped_and_never_blocks() {
        let d = tempfile::tempdir().unwrap();
        let k = Known::default();
        ran_host(d.path(), "h");
        let h = &read_hosts(d.path(), &["h".into()], &k, &[])[0];
        assert_eq!((&h.outcome, h.records.len()), (&Outcome::Ok, 1));
        let rec = d.path().join("h/files/r.json");
        let lost = |o: Outcome| match o {
            Outcome::Lost { why } => why,
            o => panic!("not lost: {o:?}"),
        };
        // A FIFO: refused without a read that would block.
        std::fs::remove_file(&rec).unwrap();
        mkfifo(&rec);
        let why = lost(outcome_of(d.path(), "h", &k));
        assert!(
            why.starts_with("record unreadable: h/files/r.json is a FIFO"),
            "{why}"
        );
        // A symbolic link to a file iolab never wrote.
        std::fs::remove_file(&rec).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", &rec).unwrap();
        let why = lost(outcome_of(d.path(), "h", &k));
        assert!(why.contains("h/files/r.json is a symbolic link"), "{why}");
        // Larger than any record (sparse: nothing is written or read).
        std::fs::remove_file(&rec).unwrap();
        let f = std::fs::File::create(&rec).unwrap();
        f.set_len(2 << 30).unwrap();
        let why = lost(outcome_of(d.path(), "h", &k));
        assert!(why.contains("2 GiB or more"), "{why}");
        // Cut short, and empty.
        std::fs::write(&rec, br#"{"spec": {"method": "ps"#).unwrap();
        let why = lost(outcome_of(d.path(), "h", &k));
        assert!(why.contains("h/files/r.json: not whole JSON"), "{why}");
        std::fs::write(&rec, b"").unwrap();
        let why = lost(outcome_of(d.path(), "h", &k));
        assert!(why.contains("h/files/r.json is empty"), "{why}");
        // A run's result (it has a host, as another command's document has) with a figure no run has.
        let forged = serde_json::json!({"spec": {"method": "psync"}, "host": {"kernel": "6.1"},
            "ops": 10, "wall_s": 1.0, "iops": 1e15});
        std::fs::write(&rec, forged.to_string()).unwrap();
        let why = lost(outcome_of(d.path(), "h", &k));
        assert!(why.contains("iops is 1.000e15"), "{why}");
        // JSON lines whose last line is cut short.
        std::fs::write(&rec, b"{\"point\": {}, \"error\": \"x\"}\n{\"point\"").unwrap();
        let why = lost(outcome_of(d.path(), "h", &k));
        assert!(why.contains("cut short"), "{why}");
        // The outcome file itself, cut short.
        std::fs::write(d.path().join("h").join(HOST_FILE), b"{\"rc\": 0, \"rec").unwrap();
        let why = lost(outcome_of(d.path(), "h", &k));
        assert!(why.contains("h/fleet-host.json: not whole JSON"), "{why}");
        // Read back as a results directory: refused, naming the host and what is wrong.
        let e = read_dir(d.path(), &[]).unwrap_err().to_string();
        assert!(
            e.contains("host h: record unreadable: h/fleet-host.json"),
            "{e}"
        );
    }

    #[test]
    fn foreign_json_repeated_names_and_hosts_gone_are_damage_not_dropped() {
        let d = tempfile::tempdir().unwrap();
        let k = Known::default();
        ran_host(d.path(), "h");
        let rec = d.path().join("h/files/r.json");
        let lost = |o: Outcome| match o {
            Outcome::Lost { why } => why,
            o => panic!("not lost: {o:?}"),
        };
        // JSON that is no record and no document iolab writes.
        for foreign in ["{}", "[]", "1", "null", "\"x\""] {
            std::fs::write(&rec, foreign).unwrap();
            let why = lost(outcome_of(d.path(), "h", &k));
            assert!(
                why.contains("neither records nor a document iolab writes"),
                "{foreign}: {why}"
            );
        }
        // A probe's document is kept, not merged, and is no damage.
        std::fs::write(&rec, r#"{"host": {"kernel": "6.1"}, "rows": []}"#).unwrap();
        assert_eq!(outcome_of(d.path(), "h", &k), Outcome::Ok);
        // One file named many times: damage, read once.
        ran_host(d.path(), "h");
        let names = vec!["r.json"; 3000];
        let info = serde_json::json!({"rc": 0, "records": names});
        std::fs::write(d.path().join("h").join(HOST_FILE), info.to_string()).unwrap();
        let h = read_hosts(d.path(), &["h".into()], &k, &[]).remove(0);
        assert_eq!(h.records.len(), 1);
        assert!(lost(h.outcome).contains("names r.json twice"));
        let info = serde_json::json!({"rc": 0, "records": vec!["x.json"; MAX_FILES + 1]});
        std::fs::write(d.path().join("h").join(HOST_FILE), info.to_string()).unwrap();
        assert!(lost(outcome_of(d.path(), "h", &k)).contains("more than the 10000"));
        // A host fleet.json names as run, whose directory is gone: refused when read back.
        ran_host(d.path(), "h");
        ran_host(d.path(), "g");
        let hosts = read_hosts(d.path(), &["g".into(), "h".into()], &k, &[]);
        let doc = serde_json::json!({ "hosts": hosts });
        std::fs::write(d.path().join("fleet.json"), doc.to_string()).unwrap();
        std::fs::remove_dir_all(d.path().join("g")).unwrap();
        let e = read_dir(d.path(), &[]).unwrap_err().to_string();
        assert!(
            e.contains("host g: record unreadable: g/fleet-host.json is gone"),
            "{e}"
        );
        // A host directory whose name is not text.
        use std::os::unix::ffi::OsStrExt;
        let odd = d.path().join(std::ffi::OsStr::from_bytes(b"h\xff"));
        std::fs::create_dir(&odd).unwrap();
        std::fs::write(odd.join(HOST_FILE), "{}").unwrap();
        let e = read_dir(d.path(), &[]).unwrap_err().to_string();
        assert!(e.contains("not UTF-8"), "{e}");
    }

    #[test]
    fn what_the_fleet_run_recorded_as_lost_is_shown_again_and_only_new_damage_refused() {
        let d = tempfile::tempdir().unwrap();
        ran_host(d.path(), "a");
        ran_host(d.path(), "b");
        std::fs::write(d.path().join("b/files/r.json"), b"").unwrap();
        let k = Known::default();
        let hosts = read_hosts(d.path(), &["a".into(), "b".into()], &k, &[]);
        let doc = serde_json::json!({ "hosts": hosts });
        std::fs::write(d.path().join("fleet.json"), doc.to_string()).unwrap();
        // b was lost at the run, and fleet.json says so: read again, it is shown as it was.
        let again = read_dir(d.path(), &[]).unwrap();
        assert_eq!(again[0].outcome, Outcome::Ok);
        assert_eq!(again[1].outcome, hosts[1].outcome);
        // a's record damaged since: refused, naming a.
        std::fs::write(d.path().join("a/files/r.json"), b"{").unwrap();
        let e = read_dir(d.path(), &[]).unwrap_err().to_string();
        assert!(e.contains("host a: record unreadable"), "{e}");
    }

    #[test]
    fn a_host_that_ran_but_whose_files_did_not_come_back_is_lost_not_not_run() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("a")).unwrap();
        std::fs::create_dir_all(d.path().join("b")).unwrap();
        let mut k = Known::default();
        k.ran.insert("a".into());
        k.why.insert(
            "a".into(),
            "Fetch the record files: no space left (ENOSPC)".into(),
        );
        k.why.insert("b".into(), "unreachable".into());
        let hosts = read_hosts(d.path(), &["a".into(), "b".into()], &k, &[]);
        match &hosts[0].outcome {
            Outcome::Lost { why } => assert!(
                why.starts_with("iolab ran, but its records did not all come back")
                    && why.ends_with("no space left (ENOSPC)"),
                "{why}"
            ),
            o => panic!("{o:?}"),
        }
        assert_eq!(
            hosts[1].outcome,
            Outcome::NotRun {
                why: "unreachable".into()
            }
        );
    }

    #[test]
    fn fetched_files_take_their_final_names_only_when_the_outcome_came_back_whole() {
        let d = tempfile::tempdir().unwrap();
        for h in ["whole", "cut"] {
            let p = d.path().join(h).join(PARTIAL_FILES);
            std::fs::create_dir_all(&p).unwrap();
            std::fs::write(p.join("r.json"), "{}").unwrap();
        }
        std::fs::write(
            d.path().join("whole").join(PARTIAL_HOST_FILE),
            "{\"rc\": 0}",
        )
        .unwrap();
        std::fs::write(d.path().join("cut").join(PARTIAL_HOST_FILE), "{\"rc\"").unwrap();
        let kept = settle(d.path(), &["whole".into(), "cut".into(), "none".into()]);
        assert!(d.path().join("whole/files/r.json").is_file());
        assert!(d.path().join("whole").join(HOST_FILE).is_file());
        assert!(!d.path().join("whole").join(PARTIAL_FILES).exists());
        // Cut short: nothing under a final name.
        assert!(!d.path().join("cut/files").exists());
        assert!(!d.path().join("cut").join(HOST_FILE).exists());
        assert_eq!(kept.keys().collect::<Vec<_>>(), ["cut"]);
        assert!(kept["cut"].contains("cut short"), "{kept:?}");
    }

    #[test]
    fn an_io_error_is_said_in_a_users_words() {
        let full = std::io::Error::from_raw_os_error(libc::ENOSPC);
        assert_eq!(io_why(&full), "no space left (ENOSPC)");
    }

    #[test]
    fn a_results_directory_is_read_once_per_file_and_within_one_bound_in_all() {
        let d = tempfile::tempdir().unwrap();
        let k = Known::default();
        // Host b's record is a hard link to host a's: one run, not two.
        for h in ["a", "b"] {
            ran_host(d.path(), h);
        }
        std::fs::remove_file(d.path().join("b/files/r.json")).unwrap();
        std::fs::hard_link(
            d.path().join("a/files/r.json"),
            d.path().join("b/files/r.json"),
        )
        .unwrap();
        let hosts = read_hosts(d.path(), &["a".into(), "b".into()], &k, &[]);
        assert_eq!(
            (&hosts[0].outcome, hosts[0].records.len()),
            (&Outcome::Ok, 1)
        );
        match &hosts[1].outcome {
            Outcome::Lost { why } => assert!(
                why.contains("b/files/r.json is the same file as ")
                    && why.contains("/a/files/r.json (a link, or named twice)"),
                "{why}"
            ),
            o => panic!("{o:?}"),
        }
        // Two hosts of 600 MiB each (sparse: nothing is written): the second is over what is left of
        // the directory's bound, refused before it is read.
        for h in ["a", "b"] {
            ran_host(d.path(), h);
            let f = std::fs::File::create(d.path().join(h).join("files/r.json")).unwrap();
            f.set_len(600 << 20).unwrap();
        }
        let hosts = read_hosts(d.path(), &["a".into(), "b".into()], &k, &[]);
        let why = |h: &Host| match &h.outcome {
            Outcome::Lost { why } => why.clone(),
            o => panic!("{o:?}"),
        };
        assert!(
            why(&hosts[0]).contains("byte 0 is 0x00"),
            "{}",
            why(&hosts[0])
        );
        assert!(
            // What is left: 1 GiB less a's 600 MiB and the hosts' outcome files.
            why(&hosts[1]).contains("at most 424")
                && why(&hosts[1])
                    .contains("MiB of a fleet's records (1 GiB in all across its hosts)"),
            "{}",
            why(&hosts[1])
        );
    }
}
