//! What `iolab fleet` checks before Ansible or a host is given anything: the inventory (its kind and size:
//! Ansible waits for ever on a FIFO and reads /dev/zero until memory runs out), the output paths among the
//! hosts' command line (what is written outside the run's directory stays on the host) and each
//! `--binary` (an ELF executable of the architecture it is given for).

use crate::fleet_groups::{range_hosts, Groups, MAX_RANGE_HOSTS, MAX_VALUES};
use iolab_engine::error::{Error, Result};
use iolab_engine::units::fmt_size;
use std::ffi::OsString;
use std::fs::Metadata;
use std::os::unix::fs::FileTypeExt;
use std::path::{Component, Path, PathBuf};

/// The most of one inventory file (or variables file beside it) Ansible is given: a hand-written
/// inventory of thousands of hosts is far less.
pub const INVENTORY_FILE_MAX: u64 = 1 << 20;
/// The most of all the inventory's files and the variables files beside it.
pub const INVENTORY_TOTAL_MAX: u64 = 16 << 20;
/// The most files and directories an inventory directory (and the variables directories) may hold.
pub const INVENTORY_ENTRIES_MAX: usize = 1000;
/// How deep an inventory directory may nest (a symbolic link to a directory above it nests for ever).
const INVENTORY_DEPTH_MAX: usize = 8;
/// The most of a `--binary` read for its check: a static iolab is a few MiB.
const BINARY_MAX: u64 = 512 << 20;

/// The most hosts a fleet runs on (each is a directory of results, and Ansible holds each in memory).
pub const MAX_FLEET_HOSTS: usize = 10_000;
/// The most hosts that run at once (Ansible's --forks): each is an Ansible worker process and an ssh.
pub const MAX_FORKS: u32 = 256;
/// The largest Ansible configuration file iolab lets Ansible read (a real one is a few KiB).
const CONFIG_MAX: u64 = 1 << 20;

/// Refused where the inventory names more hosts than a fleet runs on.
pub fn check_host_count(inv: &Path, n: usize) -> Result<()> {
    if n <= MAX_FLEET_HOSTS {
        return Ok(());
    }
    Err(inventory_err(format!(
        "{}: names {} hosts; iolab runs a fleet of at most {}: give a smaller inventory or --limit",
        inv.display(),
        iolab_engine::units::thousands_u64(n as u64),
        iolab_engine::units::thousands_u64(MAX_FLEET_HOSTS as u64)
    )))
}

/// Refused where `--limit` holds more than [`MAX_LIMIT_PATTERNS`] patterns or [`MAX_LIMIT_BYTES`]
/// (Ansible matches each against every host: 15,000 wildcards on 10,000 hosts took 15 s), or a regular
/// expression (a pattern after `~`), which Python's backtracking matcher runs without a bound on its time
/// (`~(a+)+$` against one name of 41 letters ran for minutes).
pub fn check_limit(limit: &str) -> Result<()> {
    let patterns: Vec<&str> = limit.split([',', ':']).filter(|p| !p.is_empty()).collect();
    if patterns.len() > MAX_LIMIT_PATTERNS || limit.len() > MAX_LIMIT_BYTES {
        return Err(Error::usage(
            "--limit",
            format!(
                "{} patterns in {} bytes; iolab gives Ansible at most {MAX_LIMIT_PATTERNS} in {} bytes \
                 (it matches each against every host): name a group that holds the hosts",
                iolab_engine::units::thousands_u64(patterns.len() as u64),
                iolab_engine::units::thousands_u64(limit.len() as u64),
                iolab_engine::units::thousands_u64(MAX_LIMIT_BYTES as u64)
            ),
        ));
    }
    let regex = patterns
        .iter()
        .map(|p| p.trim_start_matches(['!', '&']))
        .find(|p| p.starts_with('~'));
    match regex {
        None => Ok(()),
        Some(p) => Err(Error::usage(
            "--limit",
            format!(
                "{p}: a regular expression, which Ansible matches without a bound on its time; name the \
                 hosts or groups, or use wildcards (web*, *.lab)"
            ),
        )),
    }
}

/// The most patterns, and bytes, a `--limit` may hold.
const MAX_LIMIT_PATTERNS: usize = 50;
const MAX_LIMIT_BYTES: usize = 4096;

/// How many hosts run at once: `serial`, or all (0), at most [`MAX_FORKS`].
pub fn forks(serial: u32, hosts: usize) -> u32 {
    match serial {
        0 => (hosts as u32).clamp(1, MAX_FORKS),
        n => n.min(MAX_FORKS),
    }
}

/// The Ansible configuration files Ansible reads before anything else (`$ANSIBLE_CONFIG`, then
/// `./ansible.cfg`, `~/.ansible.cfg`, `/etc/ansible/ansible.cfg`), each checked as an input: a regular file
/// of at most 1 MiB. A FIFO there held Ansible for 120 s, and the inventory was blamed.
pub fn check_ansible_config() -> Result<()> {
    let home = std::env::var_os("HOME").map(|h| Path::new(&h).join(".ansible.cfg"));
    let env = std::env::var_os("ANSIBLE_CONFIG").map(PathBuf::from);
    let places = [
        env,
        Some(PathBuf::from("ansible.cfg")),
        home,
        Some(PathBuf::from("/etc/ansible/ansible.cfg")),
    ];
    for p in places.into_iter().flatten() {
        let Ok(m) = std::fs::metadata(&p) else {
            continue;
        };
        let pseudo = iolab_sys::fs_magic(&p)
            .ok()
            .and_then(iolab_sys::pseudo_fs_name);
        let why = match odd_kind(&m) {
            Some(kind) => format!("is {kind}"),
            // Its size says nothing there (0 for /proc/kallsyms's 5 MB), and tracefs's pipes block.
            None if pseudo.is_some() => format!(
                "is on {}, a kernel-interface filesystem",
                pseudo.unwrap_or_default()
            ),
            None if m.is_dir() => "is a directory".to_string(),
            None if m.len() > CONFIG_MAX => format!(
                "holds {} bytes, more than an Ansible configuration ({} at most)",
                iolab_engine::units::thousands_u64(m.len()),
                iolab_engine::units::thousands_u64(CONFIG_MAX)
            ),
            None => continue,
        };
        return Err(Error::usage(
            "ANSIBLE_CONFIG",
            format!(
                "{}: Ansible reads it as its configuration, and it {why}: give a regular file (or move it away)",
                p.display()
            ),
        ));
    }
    Ok(())
}

fn inventory_err(msg: String) -> Error {
    Error::usage("INVENTORY", msg)
}

/// What a file type is, where it is not a regular file or a directory.
fn odd_kind(m: &Metadata) -> Option<&'static str> {
    let t = m.file_type();
    Some(if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_file() || t.is_dir() {
        return None;
    } else {
        "not a regular file"
    })
}

/// The inventory as it was checked: each file's path relative to the copy's root and its bytes. Ansible
/// is given [`Checked::stage`]'s copy, so that what it reads is what was checked (the files may change
/// after the check: a copy taken once cannot).
pub struct Checked {
    /// The inventory is a directory (else a file, beside which its variables directories are).
    dir: bool,
    /// The inventory file's name (for a file inventory): the copy keeps it, as Ansible's plugins choose
    /// by the name's ending.
    name: PathBuf,
    files: Vec<(PathBuf, Vec<u8>)>,
}

impl Checked {
    /// Writes the copy into `root` (a new directory iolab made), readable by this user only and
    /// executable by none; returns the path to give Ansible as the inventory.
    pub fn stage(&self, root: &Path) -> std::io::Result<PathBuf> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::create_dir_all(root)?;
        for (rel, bytes) in &self.files {
            let p = root.join(rel);
            if let Some(d) = p.parent() {
                std::fs::create_dir_all(d)?;
            }
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&p)?
                .write_all(bytes)?;
        }
        Ok(if self.dir {
            root.to_path_buf()
        } else {
            root.join(&self.name)
        })
    }
}

/// The inventory and every file Ansible reads with it: for a directory, every file in it that is not
/// hidden (Ansible reads its subdirectories too), and the `group_vars/` and `host_vars/` beside it (or in
/// it). Each must be a regular file of at most [`INVENTORY_FILE_MAX`] (following symbolic links, as
/// Ansible does), not on a kernel-interface filesystem, [`INVENTORY_TOTAL_MAX`] in all; an inventory
/// source must not be a program (an executable file, an inventory plugin's configuration): Ansible
/// would run it, and its output has no bound. Each file is opened without blocking and read once, up to
/// its bound: what is checked is what [`Checked::stage`] copies.
pub fn check_inventory(inv: &Path) -> Result<Checked> {
    let meta = match std::fs::metadata(inv) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let dangling = std::fs::symlink_metadata(inv).is_ok();
            return Err(inventory_err(format!(
                "{}: {} (an Ansible inventory, INI or YAML)",
                inv.display(),
                if dangling {
                    "a symbolic link to nothing"
                } else {
                    "no such file or directory"
                }
            )));
        }
        Err(e) => {
            return Err(inventory_err(format!(
                "cannot read {}: {}",
                inv.display(),
                io_why(&e)
            )))
        }
    };
    let name = PathBuf::from(inv.file_name().unwrap_or(std::ffi::OsStr::new("inventory")));
    let mut w = Walk {
        top: inv,
        entries: 0,
        bytes: 0,
        ranged: 0,
        groups: Default::default(),
        hosts: Default::default(),
        files: Vec::new(),
    };
    let rel = if meta.is_dir() {
        PathBuf::new()
    } else {
        name.clone()
    };
    w.entry(inv, &rel, &meta, 0)?;
    // The host and group variables Ansible reads beside a file inventory (a directory's are in it).
    if !meta.is_dir() {
        let base = match inv.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        for vars in ["group_vars", "host_vars"] {
            let p = base.join(vars);
            if let Ok(m) = std::fs::metadata(&p) {
                w.entry(&p, Path::new(vars), &m, 1)?;
            }
        }
    }
    if meta.is_dir() && w.files.iter().all(|(rel, _)| is_vars(rel)) {
        return Err(inventory_err(format!(
            "{}: a directory with no file Ansible reads as an inventory (in a directory it leaves out \
             names ending in {}): rename hosts.ini to hosts, or give the file itself",
            inv.display(),
            IGNORED_ENDINGS.join(" ")
        )));
    }
    let hosts = (w.hosts.names.len() as u64).saturating_add(w.ranged);
    crate::fleet_groups::check(inv, &w.groups, (hosts, w.hosts.vars))?;
    Ok(Checked {
        dir: meta.is_dir(),
        name,
        files: w.files,
    })
}

/// The inventory's files and directories seen so far.
struct Walk<'a> {
    top: &'a Path,
    entries: usize,
    bytes: u64,
    /// The hosts its ranges make ([`range_hosts`]).
    ranged: u64,
    /// Its files' groups: hosts of their own, and their children groups.
    groups: Groups,
    /// The names of its hosts (but those its ranges make), and the variables it sets.
    hosts: crate::fleet_groups::Hosts,
    files: Vec<(PathBuf, Vec<u8>)>,
}

/// A variables file (in `group_vars/` or `host_vars/`): read as data, never run.
fn is_vars(rel: &Path) -> bool {
    rel.components()
        .any(|c| matches!(c.as_os_str().to_str(), Some("group_vars" | "host_vars")))
}

/// Whether YAML `text` has a root `plugin` key: Ansible's `auto` inventory plugin then loads the plugin
/// it names and runs it (a script, a cloud query, templates with lookups).
fn names_a_plugin(text: &str) -> bool {
    let flow = text.trim_start().starts_with('{') && text.contains("plugin");
    flow || text.lines().any(|l| {
        ["plugin:", "\"plugin\":", "'plugin':", "plugin :"]
            .iter()
            .any(|k| l.starts_with(k))
    })
}

impl Walk<'_> {
    /// `p` as the place it is in the inventory.
    fn at(&self, p: &Path) -> String {
        if p == self.top {
            p.display().to_string()
        } else {
            format!(
                "{} (read with the inventory {})",
                p.display(),
                self.top.display()
            )
        }
    }

    /// A regular file of the inventory (`rel`: its path in the copy), read once up to its bound.
    fn file(&mut self, p: &Path, rel: &Path) -> Result<()> {
        use std::io::Read;
        use std::os::unix::fs::PermissionsExt;
        let mut f = iolab_engine::input::open_regular(
            p,
            "INVENTORY",
            "inventory file",
            INVENTORY_FILE_MAX,
        )?;
        let mode = f
            .get_ref()
            .metadata()
            .map_err(|e| inventory_err(format!("cannot read {}: {}", self.at(p), io_why(&e))))?
            .permissions()
            .mode();
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes)
            .map_err(|e| inventory_err(format!("cannot read {}: {}", self.at(p), io_why(&e))))?;
        let len = bytes.len() as u64;
        if len > INVENTORY_FILE_MAX {
            return Err(inventory_err(format!(
                "{} is {}; iolab gives Ansible inventory and variables files of at most {} each",
                self.at(p),
                fmt_size(len),
                fmt_size(INVENTORY_FILE_MAX)
            )));
        }
        self.bytes += len;
        if self.bytes > INVENTORY_TOTAL_MAX {
            return Err(inventory_err(format!(
                "{}: its files hold more than {}; iolab gives Ansible at most that of an inventory and \
                 the variables beside it",
                self.top.display(),
                fmt_size(INVENTORY_TOTAL_MAX)
            )));
        }
        if !is_vars(rel) {
            if mode & 0o111 != 0 {
                return Err(inventory_err(format!(
                    "{} is executable: Ansible would run it as an inventory script, whose output iolab \
                     cannot bound; give a static inventory (ansible-inventory -i SCRIPT --list -y > \
                     hosts.yml) or chmod -x it",
                    self.at(p)
                )));
            }
            let yaml = rel.extension().is_some_and(|e| e == "yml" || e == "yaml");
            if yaml && names_a_plugin(&String::from_utf8_lossy(&bytes)) {
                return Err(inventory_err(format!(
                    "{} configures an inventory plugin (a root 'plugin' key): Ansible would run the \
                     plugin, whose output iolab cannot bound; give a static inventory (ansible-inventory \
                     -i FILE --list -y > hosts.yml)",
                    self.at(p)
                )));
            }
        }
        self.yaml(rel, &bytes)?;
        if !is_vars(rel) {
            self.groups(p, rel, &bytes)?;
            self.values_within()?;
        }
        if !is_vars(rel) {
            self.ranged = self
                .ranged
                .saturating_add(range_hosts(&String::from_utf8_lossy(&bytes)));
        }
        if self.ranged > MAX_RANGE_HOSTS {
            return Err(inventory_err(format!(
                "{}: its host ranges (name[A:B]) make more than {} hosts; iolab gives Ansible at most \
                 that many (more took Ansible past its memory bound while it read them)",
                self.top.display(),
                iolab_engine::units::thousands_u64(MAX_RANGE_HOSTS)
            )));
        }
        self.files.push((rel.to_path_buf(), bytes));
        Ok(())
    }

    /// Counts the YAML nodes of a file Ansible reads as YAML (an inventory's `.yml`, `.yaml` and `.json`,
    /// a variables file of those or no extension), with the values its INI and TOML files were counted
    /// for, against [`MAX_VALUES`] in all.
    fn yaml(&mut self, rel: &Path, bytes: &[u8]) -> Result<()> {
        use crate::fleet_groups::yaml_nodes;
        let ext = rel.extension().and_then(|e| e.to_str()).unwrap_or_default();
        let yaml = matches!(ext, "yml" | "yaml" | "json") || (ext.is_empty() && is_vars(rel));
        if yaml {
            let left = MAX_VALUES.saturating_sub(self.hosts.values);
            let n = yaml_nodes(&String::from_utf8_lossy(bytes), left);
            self.hosts.values = self.hosts.values.saturating_add(n);
        }
        self.values_within()
    }

    /// Refused once the inventory's values come to more than [`MAX_VALUES`].
    fn values_within(&self) -> Result<()> {
        if self.hosts.values <= MAX_VALUES {
            return Ok(());
        }
        Err(inventory_err(format!(
            "{}: its hosts and variables come to more than {} values as Ansible reads them (each node \
             of its YAML, three for a TOML value, each item of the Python literal an INI value is); iolab \
             gives Ansible at most that many (it takes 3 to 30 µs each: 7.5 million in 15 YAML files \
             took it 245 s and 1.8 GB): give large data as JSON, which it reads quickly, or keep it out \
             of the inventory",
            self.top.display(),
            iolab_engine::units::thousands_u64(MAX_VALUES)
        )))
    }

    /// Adds the groups of inventory file `p` to those counted, read as Ansible's plugin for its kind
    /// reads it (YAML or JSON, TOML, else INI).
    fn groups(&mut self, p: &Path, rel: &Path, bytes: &[u8]) -> Result<()> {
        use crate::fleet_groups as g;
        let text = String::from_utf8_lossy(bytes);
        let ext = rel.extension().and_then(|e| e.to_str()).unwrap_or_default();
        let read = match ext {
            "yml" | "yaml" | "json" => g::yaml_groups(&text, &mut self.groups, &mut self.hosts),
            "toml" => g::toml_groups(&text, &mut self.groups, &mut self.hosts),
            _ => {
                g::ini_groups(&text, &mut self.groups, &mut self.hosts);
                Ok(())
            }
        };
        read.map_err(|why| {
            inventory_err(format!(
                "{}: {why}; iolab counts an inventory's groups before Ansible reads it",
                self.at(p)
            ))
        })
    }

    fn entry(&mut self, p: &Path, rel: &Path, m: &Metadata, depth: usize) -> Result<()> {
        self.entries += 1;
        if self.entries > INVENTORY_ENTRIES_MAX {
            return Err(inventory_err(format!(
                "{}: more than {INVENTORY_ENTRIES_MAX} files and directories to read with it; iolab gives \
                 Ansible an inventory directory of at most {INVENTORY_ENTRIES_MAX} (hidden ones, such as \
                 .git, are not read)",
                self.top.display()
            )));
        }
        if let Some(kind) = odd_kind(m) {
            return Err(inventory_err(format!(
                "{} is {kind}, not an inventory: give a regular file (INI or YAML) or a directory of them",
                self.at(p)
            )));
        }
        if let Some(fs) = iolab_sys::fs_magic(p)
            .ok()
            .and_then(iolab_sys::pseudo_fs_name)
        {
            return Err(inventory_err(format!(
                "{} is on {fs}, a kernel-interface filesystem: its files are the kernel's settings, not an \
                 inventory",
                self.at(p)
            )));
        }
        if m.is_file() {
            if m.len() > INVENTORY_FILE_MAX {
                return Err(inventory_err(format!(
                    "{} is {}; iolab gives Ansible inventory and variables files of at most {} each",
                    self.at(p),
                    fmt_size(m.len()),
                    fmt_size(INVENTORY_FILE_MAX)
                )));
            }
            return self.file(p, rel);
        }
        if depth >= INVENTORY_DEPTH_MAX {
            return Err(inventory_err(format!(
                "{}: directories nested more than {INVENTORY_DEPTH_MAX} deep (a symbolic link to a \
                 directory above it?)",
                self.at(p)
            )));
        }
        let rd = std::fs::read_dir(p)
            .map_err(|e| inventory_err(format!("cannot read {}: {}", self.at(p), io_why(&e))))?;
        // Bounded: no more names are taken than the count allows.
        let mut names: Vec<std::ffi::OsString> = Vec::new();
        for e in rd.flatten() {
            // Hidden names are not read by Ansible (nor are .git's objects counted here), nor, outside
            // the variables' directories, names with the endings it ignores in an inventory directory.
            let name = e.file_name().to_string_lossy().into_owned();
            let ignored = !is_vars(rel) && IGNORED_ENDINGS.iter().any(|x| name.ends_with(x));
            if name.starts_with('.') || (ignored && e.file_type().is_ok_and(|t| !t.is_dir())) {
                continue;
            }
            names.push(e.file_name());
            if self.entries + names.len() > INVENTORY_ENTRIES_MAX {
                break;
            }
        }
        names.sort();
        for n in names {
            let path = p.join(&n);
            let m = std::fs::metadata(&path).map_err(|e| {
                inventory_err(format!("cannot read {}: {}", self.at(&path), io_why(&e)))
            })?;
            self.entry(&path, &rel.join(&n), &m, depth + 1)?;
        }
        Ok(())
    }
}

/// The endings of the files Ansible leaves out of an inventory directory (its INVENTORY_IGNORE_EXTS: a
/// directory of `*.ini` files is no inventory to it).
pub(crate) const IGNORED_ENDINGS: [&str; 13] = [
    ".pyc", ".pyo", ".swp", ".bak", "~", ".rpm", ".md", ".txt", ".rst", ".orig", ".ini", ".cfg",
    ".retry",
];

/// An I/O error in a user's words: "no space left (ENOSPC)", "permission denied (EACCES)".
pub fn io_why(e: &std::io::Error) -> String {
    iolab_lab::fleet::io_why(e)
}

/// The path arguments of iolab's commands that name what a command reads (the host's own files, as it
/// names them) or a scratch place it clears after itself: any path, absolute included. Every other path
/// argument (a value hint of a path, or the value name FILE or DIR) names what the command writes, so a
/// new output flag is checked without being listed here. `COMMAND:ID` where an id means both.
const INPUT_ARGS: &[&str] = &[
    "compare:a",
    "compare:b",
    "clean:dir",
    "report:results",
    "cache",
    "disk_dir",
    "exe",
    "fio",
    "headers",
    "inventory",
    "script",
    "spec",
    "target",
    "tmp_dir",
    "tmpfs_dir",
];

/// Whether `arg` of command `cmd` names a file or directory the command writes.
fn is_output(cmd: &clap::Command, arg: &clap::Arg) -> bool {
    use clap::ValueHint;
    let id = arg.get_id().as_str();
    let path = matches!(
        arg.get_value_hint(),
        ValueHint::AnyPath | ValueHint::FilePath | ValueHint::DirPath
    ) || arg
        .get_value_names()
        .is_some_and(|n| n.iter().any(|n| n == "FILE" || n == "DIR"));
    path && !INPUT_ARGS.contains(&id)
        && !INPUT_ARGS.contains(&format!("{}:{id}", cmd.get_name()).as_str())
}

/// A file the hosts' command was asked to write (`--json r.json`): the flag and the path, inside the
/// run's directory (as it comes back, relative to the host's `files/`).
pub struct Asked {
    pub flag: String,
    pub path: PathBuf,
}

/// The output paths among the hosts' command line (`m`, parsed by `cmd`): refused, naming the flag and
/// the path, where one is absolute or climbs out of the run's directory with `..` (what is written there
/// is neither fetched nor removed). Returns the files (value name FILE) the command was asked to write.
pub fn check_outputs(cmd: &clap::Command, m: &clap::ArgMatches) -> Result<Vec<Asked>> {
    let mut asked = Vec::new();
    for arg in cmd.get_arguments() {
        let id = arg.get_id().as_str();
        if !is_output(cmd, arg) {
            continue;
        }
        let Ok(Some(values)) = m.try_get_raw(id) else {
            continue;
        };
        let flag = arg
            .get_long()
            .map(|l| format!("--{l}"))
            .unwrap_or_else(|| id.to_uppercase());
        for v in values {
            let p = Path::new(v);
            if escapes(p) {
                return Err(Error::usage(
                    "ARGS",
                    format!(
                        "{flag} {}: a host's files come back from its run's own directory only (what is \
                         written elsewhere stays on the host): give a path inside it, such as {}",
                        p.display(),
                        inside(p).display()
                    ),
                ));
            }
            let file = arg
                .get_value_names()
                .is_some_and(|n| n.iter().any(|n| n == "FILE"));
            if file && v != "-" {
                asked.push(Asked {
                    flag: flag.clone(),
                    path: normal(p),
                });
            }
        }
    }
    if let Some((name, sub)) = m.subcommand() {
        if let Some(c) = cmd.find_subcommand(name) {
            asked.extend(check_outputs(c, sub)?);
        }
    }
    Ok(asked)
}

/// The endings of the files that come back from a host (the role's "Find the record files").
const FETCHED: &[&str] = &["json", "jsonl", "csv", "md", "html"];

/// A host whose iolab exited 0 without a file it was asked to write (`asked`) did not do what was asked:
/// lost, naming the flag and the file.
pub fn missing_asked(hosts: &mut [iolab_lab::fleet::Host], asked: &[Asked]) {
    use iolab_lab::fleet::Outcome;
    for h in hosts.iter_mut().filter(|h| h.outcome == Outcome::Ok) {
        if let Some(miss) = asked.iter().find(|f| !h.files.contains(&f.path)) {
            h.outcome = Outcome::Lost {
                why: format!(
                    "{} {} was asked for and did not come back{}",
                    miss.flag,
                    miss.path.display(),
                    if FETCHED
                        .iter()
                        .any(|e| miss.path.extension().is_some_and(|x| x == *e))
                    {
                        ""
                    } else {
                        " (only .json, .jsonl, .csv, .md and .html files come back)"
                    }
                ),
            };
        }
    }
}

/// `p` (one that does not climb out of its start) without `.` and `..`.
fn normal(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::ParentDir => {
                out.pop();
            }
            _ => {}
        }
    }
    out
}

/// Absolute, or climbing above its start with `..`.
fn escapes(p: &Path) -> bool {
    let mut depth = 0i64;
    for c in p.components() {
        match c {
            Component::RootDir | Component::Prefix(_) => return true,
            Component::ParentDir => depth -= 1,
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
        }
        if depth < 0 {
            return true;
        }
    }
    false
}

/// `p`'s file name alone, as a path inside the run's directory.
fn inside(p: &Path) -> PathBuf {
    p.file_name()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(OsString::from("results")))
}

/// `--binary ARCH=PATH`: PATH is an ELF executable of ARCH, as `vm --exe` is checked (static where ARCH
/// is not this machine's), read only up to [`BINARY_MAX`]. Ansible's names of the architectures iolab
/// builds for: x86_64, aarch64, armv7l.
pub fn check_binary(arch: &str, path: &Path) -> Result<()> {
    use iolab_guest::vm::arch::Arch;
    let refuse = |msg: String| Err(Error::usage("--binary", msg));
    let Some(a) = Arch::parse(if arch == "armv7l" { "armv7" } else { arch }) else {
        return refuse(format!(
            "{arch}={}: iolab builds for x86_64, aarch64 and armv7l (the architectures as Ansible names \
             them)",
            path.display()
        ));
    };
    match std::fs::metadata(path) {
        Ok(m) if m.len() > BINARY_MAX => {
            return refuse(format!(
                "{} is {}: not an iolab (a static one is a few MiB)",
                path.display(),
                fmt_size(m.len())
            ))
        }
        _ => {}
    }
    // `vm --exe`'s check (kind, size, machine, a whole program), said of a fleet's host rather than a
    // guest.
    iolab_guest::vm::initramfs::check_exe(path, a)
        .or_else(|e| refuse(format!("{arch}: {}", e.replace("guest", "host"))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_paths_that_leave_the_run_directory_are_named() {
        for p in ["/abs/x.json", "../x.json", "a/../../x", "/"] {
            assert!(escapes(Path::new(p)), "{p}");
        }
        for p in ["x.json", "a/b/../c.json", "./r/x.csv", "{{ 6*7 }}.json"] {
            assert!(!escapes(Path::new(p)), "{p}");
        }
        assert_eq!(inside(Path::new("/abs/x.json")), PathBuf::from("x.json"));
        assert_eq!(normal(Path::new("./a/../r.json")), PathBuf::from("r.json"));
    }
}
