//! One boot: the run's temporary files (initramfs, disk images, the serial ports' files, qemu's own log),
//! each journaled and removed at the end (also on Ctrl-C; `iolab clean` after a SIGKILL); qemu in a process
//! group of its own that dies with iolab; the console watched for the guest's reports, the commands' output
//! passed on as it comes, and the guest killed when it outlives the timeout.

use super::initramfs::{self, Archive};
use super::parts::Parts;
use super::qemu::{self, Accel, Machine};
use super::request::{Report, VmRequest};
use super::ssh::Access;
use iolab_engine::cleanup::Created;
use iolab_engine::error::{Error, Result};
use iolab_sys as sys;
use std::ffi::OsString;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Size of the NVMe disk (sparse): room for the uring suite's reads.
const NVME_BYTES: u64 = 2 << 30;
/// Size of the virtio disk (sparse), formatted in the guest and mounted on /var/tmp.
const DISK_BYTES: u64 = 8 << 30;
/// The guest's memory: 2 GiB, or half of this host's memory where that is less (at least 512 MiB).
fn guest_memory_mib() -> u64 {
    let total_kib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .unwrap_or(4 << 20);
    (total_kib / 1024 / 2).clamp(512, 2048)
}

/// Console lines shown when the guest fails.
const TAIL_LINES: usize = 25;

/// The run's temporary directory and files, removed (newest first) when dropped.
struct Scratch {
    dir: PathBuf,
    made: Vec<Created>,
}

impl Scratch {
    fn new(cache: &Path) -> Result<Scratch> {
        let base = cache.join("tmp");
        super::request::mkdir(&base)?;
        let made = vec![Created::temp_tree(&base, "run-")?];
        let dir = made[0].path().to_path_buf();
        Ok(Scratch { dir, made })
    }

    /// A new empty file of the run, journaled before anything is written into it.
    fn file(&mut self, name: &str) -> Result<PathBuf> {
        let p = self.dir.join(name);
        let (_, c) = Created::new_file(&p, libc::O_WRONLY, 0o600, false)?;
        self.made.push(c);
        Ok(p)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        while let Some(c) = self.made.pop() {
            drop(c);
        }
    }
}

/// A sparse file of `bytes`; whether it can be opened O_DIRECT (qemu's cache=none needs it).
fn sparse(p: &Path, bytes: u64) -> Result<bool> {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(p)
        .map_err(|e| Error::Runtime(format!("cannot open {}: {e}", p.display())))?;
    f.set_len(bytes)
        .map_err(|e| Error::Runtime(format!("cannot size {}: {e}", p.display())))?;
    Ok(sys::open(p, libc::O_RDWR | libc::O_DIRECT | libc::O_CLOEXEC, 0).is_ok())
}

/// A word for the shell, single-quoted (any byte but NUL stands for itself there).
fn quote(w: &[u8]) -> Vec<u8> {
    let mut q = b"'".to_vec();
    for &b in w {
        if b == b'\'' {
            q.extend_from_slice(b"'\\''");
        } else {
            q.push(b);
        }
    }
    q.push(b'\'');
    q
}

/// `/iolab/commands`: the host's directory and one shell function per command.
fn commands_file(share: &Path, commands: &[Vec<OsString>]) -> Vec<u8> {
    let mut s = b"HOSTDIR=".to_vec();
    s.extend(quote(share.as_os_str().as_bytes()));
    s.extend(format!("\nNCMD={}\n", commands.len()).into_bytes());
    for (i, c) in commands.iter().enumerate() {
        s.extend(format!("cmd{}() {{\n\tiolab", i + 1).into_bytes());
        for a in c {
            s.push(b' ');
            s.extend(quote(a.as_bytes()));
        }
        s.extend_from_slice(b"\n}\n");
    }
    s
}

/// Writes the initramfs (see `initramfs.rs`); with the ssh service's tree and keys for `--ssh` (after
/// iolab's own libraries, which win where a path is in both).
fn write_initrd(
    path: &Path,
    parts: &Parts,
    req: &VmRequest,
    ssh: Option<(&Path, &Access)>,
) -> Result<()> {
    let mut a = Archive::create(path)?;
    for d in ["proc", "sys", "dev", "bin"] {
        a.dir(d)?;
    }
    a.char_dev("/dev/console", 5, 1)?;
    a.file("/init", 0o755, include_bytes!("init.sh"))?;
    a.copy("/bin/busybox", 0o755, &parts.busybox)?;
    let mut order = String::new();
    for m in &parts.kernel.modules {
        let name = m
            .file_name()
            .expect("a file")
            .to_string_lossy()
            .into_owned();
        a.copy(&format!("/iolab/modules/{name}"), 0o644, m)?;
        order.push_str(&name);
        order.push('\n');
    }
    a.file("/iolab/modules/order", 0o644, order.as_bytes())?;
    if let Ok(ko) = &parts.driver {
        a.copy("/iolab/iolab_sink.ko", 0o644, ko)?;
    }
    if let Some(exe) = &req.exe {
        a.copy("/iolab/iolab", 0o755, exe)?;
        for lib in initramfs::libraries(exe)? {
            a.copy(&lib.to_string_lossy(), 0o755, &lib)?;
        }
    }
    if let Some((tree, access)) = ssh {
        access.add_to(&mut a, tree)?;
    }
    a.file(
        "/iolab/commands",
        0o644,
        &commands_file(&req.share, &req.commands),
    )?;
    a.finish()
}

/// What the guest said on its console (lines starting "IOLAB-VM ").
#[derive(Debug, Default)]
struct Heard {
    statuses: Vec<(usize, i32)>,
    error: Option<String>,
    done: bool,
    /// The guest's ssh server was started (`--ssh`).
    ssh_started: bool,
}

fn hear(line: &str, heard: &mut Heard, report: &mut dyn Report, req: &VmRequest) {
    let Some(m) = line.trim_end_matches('\r').strip_prefix("IOLAB-VM ") else {
        return;
    };
    if let Some(s) = m.strip_prefix("status ") {
        let mut w = s.split_whitespace().map(|x| x.parse::<i64>().unwrap_or(-1));
        if let (Some(i), Some(rc)) = (w.next(), w.next()) {
            heard.statuses.push((i as usize, rc as i32));
            if req.commands.len() > 1 {
                report.say(&format!("command {i} exited with status {rc}"));
            }
        }
    } else if let Some(s) = m.strip_prefix("start ") {
        if req.commands.len() > 1 {
            let i: usize = s
                .split_whitespace()
                .next()
                .and_then(|w| w.parse().ok())
                .unwrap_or(0);
            if let Some(c) = req.commands.get(i.wrapping_sub(1)) {
                let words: Vec<String> =
                    c.iter().map(|w| w.to_string_lossy().into_owned()).collect();
                report.say(&format!("command {i}: iolab {}", words.join(" ")));
            }
        }
    } else if let Some(e) = m.strip_prefix("error ") {
        heard.error = Some(e.to_string());
    } else if m.starts_with("done") {
        heard.done = true;
    } else if m == "ssh started" {
        heard.ssh_started = true;
    } else if let Some(b) = m.strip_prefix("booted ") {
        let (rel, up) = b.split_once(' ').unwrap_or((b, "?"));
        report.say(&format!("guest kernel {rel} up ({up} s after it started)"));
    } else if let Some(up) = m.strip_prefix("ready ") {
        let share = if req.shares() { " and share" } else { "" };
        report.say(&format!(
            "guest ready: modules, disks{share} set up ({up} s after the kernel started)"
        ));
    } else if m == "driver loaded" {
        report.say("driver: iolab_sink loaded in the guest: /dev/iolab_sink");
    } else if let Some(w) = m.strip_prefix("driver failed: ") {
        report.say(&format!(
            "driver: not loaded in the guest ({w}); the command runs without it"
        ));
    } else {
        report.say(&format!("guest: {m}"));
    }
}

/// A file qemu writes, read as it grows.
struct Tail {
    file: std::fs::File,
    pos: u64,
}

impl Tail {
    fn open(p: &Path) -> Result<Tail> {
        let file = std::fs::File::open(p)
            .map_err(|e| Error::Runtime(format!("cannot open {}: {e}", p.display())))?;
        Ok(Tail { file, pos: 0 })
    }

    /// What was appended since the last call (qemu truncates the file when it opens it: start over then).
    fn new_bytes(&mut self) -> Vec<u8> {
        let len = self.file.metadata().map(|m| m.len()).unwrap_or(0);
        if len < self.pos {
            self.pos = 0;
        }
        let mut b = Vec::new();
        if self.file.seek(SeekFrom::Start(self.pos)).is_ok()
            && self.file.read_to_end(&mut b).is_ok()
        {
            self.pos += b.len() as u64;
        }
        b
    }
}

/// The guest as a running qemu, and its outputs.
struct Guest {
    child: std::process::Child,
    tails: [Tail; 3],
    console: Vec<u8>,
    heard: Heard,
}

impl Guest {
    /// Passes new output on and listens to the console; whether qemu has exited.
    fn poll(&mut self, report: &mut dyn Report, req: &VmRequest) -> Result<bool> {
        let exited = self.child.try_wait().ok().flatten().is_some();
        let out = self.tails[1].new_bytes();
        if !out.is_empty() {
            report.out(&out)?;
        }
        let err = self.tails[2].new_bytes();
        if !err.is_empty() {
            report.err(&err);
        }
        let start = self
            .console
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        self.console.extend(self.tails[0].new_bytes());
        let end = self
            .console
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        if end > start {
            let text = String::from_utf8_lossy(&self.console[start..end]).into_owned();
            for l in text.lines() {
                hear(l, &mut self.heard, report, req);
            }
        }
        Ok(exited)
    }

    /// Kills qemu's process group and reaps qemu.
    fn kill(&mut self) -> i32 {
        let pg = self.child.id() as i32;
        let _ = sys::kill(-pg, libc::SIGKILL);
        let _ = self.child.wait();
        pg
    }

    /// The console's last lines.
    fn last_lines(&self) -> String {
        let text = String::from_utf8_lossy(&self.console);
        let lines: Vec<&str> = text.lines().map(|l| l.trim_end_matches('\r')).collect();
        if lines.iter().all(|l| l.trim().is_empty()) {
            return "  (the console is empty)".into();
        }
        let from = lines.len().saturating_sub(TAIL_LINES);
        lines[from..]
            .iter()
            .map(|l| format!("  | {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for Guest {
    /// A guest left behind by an error (stdout closed, a file that could not be read) is killed.
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.kill();
        }
    }
}

/// Boots the guest with `parts`, runs `req`'s commands in it, and returns their exit statuses. With
/// `--ssh` (`ssh_tree`: the service's packages) the guest then stays up, reachable by ssh, until the
/// timeout or an interrupt.
pub fn boot(
    parts: &Parts,
    ssh_tree: Option<&Path>,
    req: &VmRequest,
    report: &mut dyn Report,
) -> Result<Vec<i32>> {
    let mut s = Scratch::new(&req.cache)?;
    report.say(&format!(
        "temporary files (initramfs, disk images, serial ports{}) in {}, removed at the end",
        if ssh_tree.is_some() { ", ssh keys" } else { "" },
        s.dir.display()
    ));
    // `--ssh 0`: a free port, taken as late as can be (qemu binds it when it starts).
    let port = match req.ssh {
        Some(0) => Some(super::ssh::free_port()?),
        p => p,
    };
    let access = match (ssh_tree, port) {
        (Some(_), Some(port)) => {
            let dir = s.dir.clone();
            Some(Access::make(&dir, port, &mut |n| s.file(n))?)
        }
        _ => None,
    };
    let share = req.shares().then(|| req.share.clone());
    let initrd = s.file("initrd.cpio")?;
    write_initrd(&initrd, parts, req, ssh_tree.zip(access.as_ref()))?;
    let (nvme, disk) = (s.file("nvme.img")?, s.file("disk.img")?);
    let direct = sparse(&nvme, NVME_BYTES)? & sparse(&disk, DISK_BYTES)?;
    let serial = [
        s.file("console.log")?,
        s.file("stdout.log")?,
        s.file("stderr.log")?,
    ];
    let qemu_log = s.file("qemu.log")?;
    let accel = qemu::accel_for(parts.arch);
    let board = req.board;
    let mut cmdline = qemu::cmdline(&accel, parts.arch, board);
    if share.is_none() {
        cmdline.push_str(" iolab.share=none");
    }
    let m = Machine {
        cmdline,
        accel: accel.clone(),
        board,
        dtb: board.dtb().map(|t| parts.kernel.dir.join(t)),
        cpus: std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(2),
        memory_mib: guest_memory_mib().min(board.max_memory_mib()),
        vmlinuz: parts.kernel.vmlinuz.clone(),
        initrd,
        nvme,
        disk,
        direct,
        share,
        serial: serial.clone(),
        ssh_port: port,
        extra: req.devices.clone(),
    };
    match &accel {
        Accel::Kvm => report.say("accelerator: KVM (hardware virtualization)"),
        Accel::Tcg(why) => report.say(&format!(
            "accelerator: TCG, emulated ({why}); figures from the guest show behaviour, not speed"
        )),
    }
    let mut cmd = std::process::Command::new(parts.qemu.binary());
    cmd.args(parts.qemu.args(&m))
        .envs(parts.qemu.env())
        .stdin(std::process::Stdio::null())
        .stdout(open_log(&qemu_log)?)
        .stderr(open_log(&qemu_log)?);
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    sys::kill_with_parent(&mut cmd);
    let t0 = Instant::now();
    let child = cmd.spawn().map_err(|e| {
        Error::Runtime(format!(
            "cannot start {}: {e}",
            parts.qemu.binary().display()
        ))
    })?;
    let tails = [
        Tail::open(&serial[0])?,
        Tail::open(&serial[1])?,
        Tail::open(&serial[2])?,
    ];
    let mut g = Guest {
        child,
        tails,
        console: Vec::new(),
        heard: Heard::default(),
    };
    let served = watch(&mut g, req, access.as_ref(), report, t0)?;
    if access.is_some() && !served {
        return Err(Error::Runtime(format!(
            "{}; the last lines of its console:\n{}",
            qemu_stopped(&g, &qemu_log, "before the guest's ssh server answered"),
            g.last_lines()
        )));
    }
    if !served {
        report.say(&format!(
            "guest powered off after {:.1} s",
            t0.elapsed().as_secs_f64()
        ));
    }
    outcome(&g, req, &qemu_log)
}

/// Says how to reach the guest once its ssh server answers: the inventory line on stdout.
fn announce(a: &Access, req: &VmRequest, report: &mut dyn Report) -> Result<()> {
    if !a.answers(Duration::from_secs(60)) {
        return Err(Error::Runtime(format!(
            "the guest started its ssh server, but 127.0.0.1:{} gave no ssh banner within 60 s",
            a.port
        )));
    }
    report.say(&format!(
        "ssh: `ssh -p {} -i {} -o UserKnownHostsFile={} -o StrictHostKeyChecking=yes root@127.0.0.1`; \
         the guest stays up until --timeout ({} s after qemu started) or Ctrl-C; its Ansible inventory \
         line follows on stdout",
        a.port,
        a.key.display(),
        a.known_hosts.display(),
        req.timeout.as_secs()
    ));
    let line = a.inventory_line(&format!("guest-{}-{}", req.arch.machine(), a.port));
    report.out(format!("{line}\n").as_bytes())
}

fn open_log(p: &Path) -> Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .append(true)
        .open(p)
        .map_err(|e| Error::Runtime(format!("cannot open {}: {e}", p.display())))
}

/// Follows the guest until qemu exits; past the timeout, kills it and says so with its console. A guest
/// that serves ssh (`ssh`) is announced once its server answers and is stopped at the timeout: that is
/// its end (true: it was served).
fn watch(
    g: &mut Guest,
    req: &VmRequest,
    ssh: Option<&Access>,
    report: &mut dyn Report,
    t0: Instant,
) -> Result<bool> {
    let mut announced = false;
    loop {
        if g.poll(report, req)? {
            // A last read: what qemu wrote before it exited.
            g.poll(report, req)?;
            return Ok(announced);
        }
        if let Some(a) = ssh.filter(|_| g.heard.ssh_started && !announced) {
            announce(a, req, report)?;
            announced = true;
        }
        if announced && t0.elapsed() > req.timeout {
            g.kill();
            report.say(&format!(
                "stopped the guest at --timeout ({} s after qemu started)",
                req.timeout.as_secs()
            ));
            return Ok(true);
        }
        if t0.elapsed() > req.timeout {
            let pg = g.kill();
            g.poll(report, req)?;
            return Err(Error::Runtime(format!(
                "the guest did not finish within --timeout {} s: killed qemu (process group {pg}); the last \
                 lines of its console:\n{}",
                req.timeout.as_secs(),
                g.last_lines()
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The commands' exit statuses, or why the guest did not report them.
fn outcome(g: &Guest, req: &VmRequest, qemu_log: &Path) -> Result<Vec<i32>> {
    let h = &g.heard;
    if let Some(e) = &h.error {
        return Err(Error::Runtime(format!(
            "the guest could not run the command: {e}; the last lines of its console:\n{}",
            g.last_lines()
        )));
    }
    if h.statuses.len() == req.commands.len() {
        return Ok(h.statuses.iter().map(|s| s.1).collect());
    }
    Err(Error::Runtime(format!(
        "{}; the last lines of its console:\n{}",
        qemu_stopped(
            g,
            qemu_log,
            "before the guest reported the command's exit status"
        ),
        g.last_lines()
    )))
}

/// Why qemu stopped `when`: a kernel panic on the console, or qemu's own last lines.
fn qemu_stopped(g: &Guest, qemu_log: &Path, when: &str) -> String {
    let console = String::from_utf8_lossy(&g.console);
    if console.contains("Kernel panic") {
        return format!("the guest's kernel panicked {when}");
    }
    let log = std::fs::read_to_string(qemu_log).unwrap_or_default();
    let log: Vec<&str> = log.lines().rev().take(5).collect();
    let log: Vec<&str> = log.into_iter().rev().collect();
    if log.is_empty() {
        format!("qemu stopped {when}")
    } else {
        format!("qemu stopped {when}: {}", log.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_survive_the_shell_quoting() {
        assert_eq!(quote(b"it's"), b"'it'\\''s'".to_vec());
        let f = commands_file(
            Path::new("/tmp/a b"),
            &[vec!["run".into(), "--json".into(), "x y.json".into()]],
        );
        let text = String::from_utf8(f).unwrap();
        assert!(text.starts_with("HOSTDIR='/tmp/a b'\nNCMD=1\n"), "{text}");
        assert!(
            text.contains("cmd1() {\n\tiolab 'run' '--json' 'x y.json'\n}"),
            "{text}"
        );
    }
}
