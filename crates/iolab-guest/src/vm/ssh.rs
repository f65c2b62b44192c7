//! `iolab vm --ssh PORT`: a guest that stays up, reachable by ssh on 127.0.0.1:PORT only, for Ansible
//! (`iolab fleet`) to run iolab on as on a board.
//!
//! - The guest's ssh server is Debian's dropbear, and Ansible's modules run on Debian's Python: both of
//!   the guest's architecture, with every library they load, from the guest architecture's apt lists,
//!   extracted into `CACHE/ssh-ARCH/` (stamps in `CACHE/done-ssh-ARCH/`) and copied into the initramfs.
//!   Unlike qemu's libraries nothing is skipped because the host has it: the guest has none of the host's.
//! - Two ed25519 keys made per boot by the host's `ssh-keygen` in the run's temporary directory: the
//!   client's (its public half in the guest's `/root/.ssh/authorized_keys`) and the guest's host key
//!   (converted by the guest's `dropbearconvert`; its public half is the run's `known_hosts`, so ssh checks
//!   it strictly). Both go with the run's directory at the end.
//! - QEMU's user network forwards 127.0.0.1:PORT to the guest's port 22 (`qemu.rs`); nothing else of the
//!   guest is reachable.
//! - Dropbear has no sftp server and the guest no scp: Ansible moves files through `dd`
//!   (`ansible_ssh_transfer_method=piped`), which the inventory line says.

use super::arch::{Apt, Arch};
use super::fetch::{self, Pkg, Resolution};
use super::initramfs::Archive;
use iolab_engine::error::{Error, Result};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The packages the guest's ssh service starts from; their libraries follow.
const START: &[&str] = &["dropbear-bin", "python3-minimal", "libpython3-stdlib"];

/// The dependencies followed: libraries, Python's own packages and dropbear's. Others (dpkg, media-types,
/// readline-common, tzdata) are data or tools the service does not run.
fn followed(name: &str) -> bool {
    ["lib", "zlib", "python3", "dropbear"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// Paths of the extracted packages the guest does without (documentation, manuals, translations).
fn skipped(path: &str) -> bool {
    [
        "/usr/share/doc",
        "/usr/share/man",
        "/usr/share/locale",
        "/usr/share/lintian",
        "/usr/share/info",
        "/etc/init.d",
    ]
    .iter()
    .any(|p| path.starts_with(p))
}

/// The closure of [`START`] in `apt`'s lists, level by level.
fn resolve(apt: &Apt) -> Result<Vec<Pkg>> {
    let mut pkgs: Vec<Pkg> = Vec::new();
    let mut want: Vec<String> = START.iter().map(|s| s.to_string()).collect();
    while !want.is_empty() {
        let level = fetch::show(apt, &want)?;
        if let Some(n) = want
            .iter()
            .find(|n| !level.iter().any(|r| &&r.pkg.name == n))
        {
            return Err(Error::Runtime(format!(
                "apt's lists have no candidate for {n}, which the guest's ssh service needs"
            )));
        }
        let mut next = BTreeSet::new();
        for r in level {
            next.extend(r.depends.iter().filter(|d| followed(d)).cloned());
            pkgs.push(r.pkg);
        }
        want = next
            .into_iter()
            .filter(|n| !pkgs.iter().any(|p| &p.name == n))
            .collect();
    }
    pkgs.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(pkgs)
}

/// Fills `CACHE/ssh-ARCH/` where it lacks a package (under the cache's lock; the guest's own apt lists
/// are there already: `parts::prepare` made sure of them) and returns it.
pub fn prepare(cache: &Path, arch: Arch, say: &mut dyn FnMut(&str)) -> Result<PathBuf> {
    let _lock = super::parts::lock(cache, say)?;
    let asked = Some("ssh-service");
    let key = fetch::lists_key(arch, cache, asked);
    let pkgs = match fetch::saved_resolution(cache, arch, asked, &key) {
        Some(r) => r.pkgs,
        None => {
            let pkgs = resolve(&Apt::guest(cache, arch))?;
            let r = Resolution {
                image: String::new(),
                release: String::new(),
                pkgs,
            };
            fetch::save_resolution(cache, arch, asked, &key, &r);
            r.pkgs
        }
    };
    let tree = cache.join(format!("ssh-{}", arch.debian()));
    let done = cache.join(format!("done-ssh-{}", arch.debian()));
    let todo = fetch::not_cached(&done, &pkgs);
    if !todo.is_empty() {
        say(&format!(
            "downloading the guest's ssh service ({} packages, {:.1} MB: dropbear, Python and their \
             libraries) into {}",
            todo.len(),
            todo.iter().map(|p| p.size).sum::<u64>() as f64 / 1e6,
            tree.display()
        ));
        fetch::download_and_extract(cache, arch, &todo, &done, &|_| tree.clone())?;
    }
    for need in [
        "usr/sbin/dropbear",
        "usr/bin/dropbearconvert",
        "usr/bin/python3",
    ] {
        if std::fs::symlink_metadata(tree.join(need)).is_err() {
            return Err(Error::Runtime(format!(
                "the cache has no {need} in {} (remove {} and run again)",
                tree.display(),
                done.display()
            )));
        }
    }
    Ok(tree)
}

/// The keys of one boot, in a directory of the run's.
#[derive(Debug, Clone)]
pub struct Access {
    pub port: u16,
    /// The client's private key (OpenSSH's format).
    pub key: PathBuf,
    /// `[127.0.0.1]:PORT` and the guest's host key.
    pub known_hosts: PathBuf,
    /// The guest's host key (OpenSSH's format: the guest converts it for dropbear).
    host_key: PathBuf,
}

/// A new ed25519 key pair from `ssh-keygen`, written by it as `tmp` and `tmp.pub`, read and removed at
/// once: (private, public).
fn keygen(tmp: &Path) -> Result<(Vec<u8>, Vec<u8>)> {
    let out = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "iolab-vm", "-f"])
        .arg(tmp)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| {
            Error::Runtime(format!(
                "cannot run ssh-keygen ({e}): iolab vm --ssh makes the guest's keys with OpenSSH's \
                 ssh-keygen (Debian's openssh-client package)"
            ))
        })?;
    let public = tmp.with_extension("pub");
    let pair = (std::fs::read(tmp), std::fs::read(&public));
    let _ = std::fs::remove_file(tmp);
    let _ = std::fs::remove_file(&public);
    if !out.status.success() {
        return Err(Error::Runtime(format!(
            "ssh-keygen -f {} failed: {}",
            tmp.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    match pair {
        (Ok(k), Ok(p)) => Ok((k, p)),
        (Err(e), _) | (_, Err(e)) => Err(Error::Runtime(format!(
            "ssh-keygen left no key at {}: {e}",
            tmp.display()
        ))),
    }
}

impl Access {
    /// Makes the two keys and the known_hosts file for `port`: `ssh-keygen` writes each pair under `dir`
    /// (the run's) and it is moved at once into files `new_file` makes (new, journaled, removed with the
    /// run, also on an interrupt).
    pub fn make(
        dir: &Path,
        port: u16,
        new_file: &mut dyn FnMut(&str) -> Result<PathBuf>,
    ) -> Result<Access> {
        let mut put = |name: &str, data: &[u8]| -> Result<PathBuf> {
            let p = new_file(name)?;
            std::fs::write(&p, data)
                .map_err(|e| Error::Runtime(format!("cannot write {}: {e}", p.display())))?;
            Ok(p)
        };
        let (k, k_pub) = keygen(&dir.join(".keygen-client"))?;
        let (h, h_pub) = keygen(&dir.join(".keygen-host"))?;
        let key = put("id_ed25519", &k)?;
        put("id_ed25519.pub", &k_pub)?;
        let host_key = put("host_ed25519", &h)?;
        let line = format!(
            "[127.0.0.1]:{port} {}\n",
            String::from_utf8_lossy(&h_pub).trim()
        );
        let known_hosts = put("known_hosts", line.as_bytes())?;
        Ok(Access {
            port,
            key,
            known_hosts,
            host_key,
        })
    }

    /// The guest's side in the initramfs: the service's packages, the root account with the client's key,
    /// and the host key for /init to start dropbear with.
    pub fn add_to(&self, a: &mut Archive, tree: &Path) -> Result<()> {
        a.tree(tree, &skipped)?;
        a.file("/etc/passwd", 0o644, b"root:x:0:0:root:/root:/bin/sh\n")?;
        a.file("/etc/group", 0o644, b"root:x:0:\n")?;
        a.file("/etc/shells", 0o644, b"/bin/sh\n")?;
        a.dir("/root/.ssh")?;
        let public = read(&self.key.with_extension("pub"))?;
        a.file("/root/.ssh/authorized_keys", 0o600, public.as_bytes())?;
        a.copy("/iolab/ssh/host_key", 0o600, &self.host_key)
    }

    /// The guest as a line of an Ansible inventory (INI), named `name`.
    pub fn inventory_line(&self, name: &str) -> String {
        format!(
            "{name} ansible_host=127.0.0.1 ansible_port={} ansible_user=root \
             ansible_ssh_private_key_file={} ansible_ssh_common_args='-o UserKnownHostsFile={} -o \
             StrictHostKeyChecking=yes' ansible_host_key_checking=true ansible_ssh_transfer_method=piped \
             ansible_python_interpreter=/usr/bin/python3",
            self.port,
            self.key.display(),
            self.known_hosts.display()
        )
    }

    /// Whether the guest's ssh server answers on the port within `wait`: its banner read.
    pub fn answers(&self, wait: std::time::Duration) -> bool {
        use std::io::Read;
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], self.port));
        let t0 = std::time::Instant::now();
        while t0.elapsed() < wait {
            if let Ok(mut s) =
                std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_secs(2))
            {
                let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(5)));
                let mut b = [0u8; 4];
                if s.read_exact(&mut b).is_ok() && &b == b"SSH-" {
                    return true;
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
        false
    }
}

fn read(p: &Path) -> Result<String> {
    std::fs::read_to_string(p)
        .map_err(|e| Error::Runtime(format!("cannot read {}: {e}", p.display())))
}

/// A free port on 127.0.0.1 (`--ssh 0`): one the kernel gives a listener, closed again for qemu to take.
pub fn free_port() -> Result<u16> {
    // Only x86_64 hosts run guests: elsewhere the listener's code stays out of the boards' binaries.
    if !cfg!(target_arch = "x86_64") {
        return Err(Error::Runtime(format!(
            "{}: {}",
            super::request::CANNOT_BUILD,
            super::request::unsupported().unwrap_or_default()
        )));
    }
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| Error::Runtime(format!("cannot find a free port on 127.0.0.1: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_closure_follows_and_the_guest_leaves_out() {
        assert!(followed("libpython3.11-stdlib") && followed("zlib1g"));
        assert!(followed("python3.11-minimal") && followed("dropbear-bin"));
        assert!(!followed("dpkg") && !followed("media-types") && !followed("readline-common"));
        assert!(skipped("/usr/share/doc/libc6/copyright"));
        assert!(!skipped("/usr/lib/python3.11/json/__init__.py"));
    }

    #[test]
    fn the_inventory_line_checks_the_host_key_and_moves_files_with_dd() {
        let a = Access {
            port: 40022,
            key: PathBuf::from("/c/run-1/ssh/id_ed25519"),
            known_hosts: PathBuf::from("/c/run-1/ssh/known_hosts"),
            host_key: PathBuf::from("/c/run-1/ssh/host_ed25519"),
        };
        let l = a.inventory_line("guest-aarch64");
        assert!(l.starts_with("guest-aarch64 ansible_host=127.0.0.1 ansible_port=40022 "));
        assert!(
            l.contains("UserKnownHostsFile=/c/run-1/ssh/known_hosts -o StrictHostKeyChecking=yes'")
        );
        assert!(l.contains("ansible_ssh_transfer_method=piped"));
        // A host variable: it wins over ANSIBLE_HOST_KEY_CHECKING=False in the environment, which would
        // put StrictHostKeyChecking=no before the line's own.
        assert!(l.contains(" ansible_host_key_checking=true "));
        assert!(l.contains("ansible_ssh_private_key_file=/c/run-1/ssh/id_ed25519 "));
    }
}
