//! `iolab vm`: iolab commands run inside a guest kernel under QEMU, with the sink driver loaded, an NVMe disk
//! with poll queues (/dev/nvme0n1), a virtio disk with a filesystem on /var/tmp, and the host's current
//! directory shared, so that the files a command names relative to it come back.
//!
//! - `fetch.rs`, `kernel.rs`: Debian's kernel (`apt-cache depends linux-image-amd64`, or `--kernel`), its
//!   headers, qemu, seabios and busybox, downloaded once into a cache and extracted without installing;
//!   only the modules the guest loads are kept.
//! - `arch.rs`: the guest's architecture: amd64, arm64 (`--arch aarch64`: Debian's arm64 kernel under
//!   qemu-system-aarch64, running a static aarch64 iolab, its packages from apt lists kept in the cache) or
//!   armhf (`--arch armv7`: the armmp kernel under qemu-system-arm), and QEMU's machine (`--machine virt`,
//!   or `vexpress-a9`: a Cortex-A9 without PCI, its virtio devices on virtio-mmio and no NVMe disk).
//! - `elf.rs`: ELF32 and ELF64 read just enough (modules' `.modinfo`, binaries' machine and interpreter).
//! - `parts.rs`: the cache filled under a lock, and the sink driver built against the guest's headers.
//! - `initramfs.rs`, `init.sh`: the guest's root (a newc cpio written here) and its /init.
//! - `qemu.rs`: KVM only where the hardware offers it, else TCG; qemu's command line.
//! - `run.rs`: one boot, its temporary files, the output passed on, the timeout.
//! - `guest.rs`: inside the guest, iolab knows it runs emulated (`host.emulated`).
//! - `user_mode.rs`: under qemu-user (ARM code on an x86_64 kernel) iolab knows that too, and says which
//!   system calls the emulator lacks.
//! - `ivshmem.rs`: memory shared with the guest as an ivshmem-plain PCI device (`--offload-partition vm`).

pub mod arch;
pub mod elf;
pub mod fetch;
pub mod initramfs;
pub mod ivshmem;
pub mod kernel;
pub mod parts;
pub mod qemu;
pub mod releases;
pub mod request;
pub mod run;
pub mod ssh;

pub use request::{default_cache, unsupported, Report, VmRequest, CANNOT_BUILD};

use iolab_engine::error::{Error, Result};
use std::ffi::OsString;

/// Fetches what an x86_64 guest of kernel `asked` needs into `cache` (nothing when it holds it all) and
/// builds its driver, without booting it: the kernel's release, or why the guest cannot be had (before
/// anything runs on it: `suite --kernels`).
pub fn fetch_parts(
    cache: &std::path::Path,
    asked: &str,
    say: &mut dyn FnMut(&str),
) -> Result<String> {
    if let Some(why) = unsupported() {
        return Err(Error::Runtime(format!(
            "cannot build the guest here: {why}"
        )));
    }
    if !cfg!(target_arch = "x86_64") {
        return Err(Error::Runtime(
            "cannot build the guest here: iolab vm runs on x86_64 hosts".into(),
        ));
    }
    let parts = parts::prepare(cache, arch::Arch::Amd64, Some(asked), say)?;
    Ok(parts.kernel.release)
}

/// Fetches what is missing, boots the guest, runs the commands and returns their exit statuses.
pub fn run(req: &VmRequest, report: &mut dyn Report) -> Result<Vec<i32>> {
    // Off x86_64 nothing below can run: tested as the constant it is, so that the compiler leaves the
    // guest's machinery out of the boards' binaries (their 3 MiB budget).
    if !cfg!(target_arch = "x86_64") {
        let why = unsupported().unwrap_or_default();
        return Err(Error::Runtime(format!(
            "cannot build the guest here: {why}"
        )));
    }
    if let Some(why) = unsupported() {
        return Err(Error::Runtime(format!(
            "cannot build the guest here: {why}"
        )));
    }
    let t0 = std::time::Instant::now();
    let parts = parts::prepare(&req.cache, req.arch, req.kernel.as_deref(), &mut |l| {
        report.say(l)
    })?;
    let f = &parts.fetched;
    if f.packages.is_empty() {
        report.say(&format!(
            "cache {}: nothing to download (kernel {})",
            req.cache.display(),
            parts.kernel.release
        ));
    } else {
        report.say(&format!(
            "cache {}: downloaded {} packages, {:.1} MB, in {:.1} s; the cache now holds {:.0} MB",
            req.cache.display(),
            f.packages.len(),
            f.bytes as f64 / 1e6,
            f.seconds,
            parts::disk_use(&req.cache) as f64 / 1e6
        ));
    }
    match &parts.driver {
        // A guest that only serves ssh runs no command of its own.
        _ if req.commands.is_empty() => {}
        Ok(ko) => report.say(&format!(
            "driver: iolab_sink built against {} ({})",
            parts.kernel.release,
            ko.display()
        )),
        Err(why) if req.arch.foreign() => report.say(&format!(
            "the sink driver is not built for {} guests: {why}",
            req.arch.machine()
        )),
        Err(why) => report.say(&format!(
            "driver: not built ({why}); the command runs without it"
        )),
    }
    let ssh_tree = match req.ssh {
        Some(_) => Some(ssh::prepare(&req.cache, req.arch, &mut |l| report.say(l))?),
        None => None,
    };
    report.say(&format!(
        "parts ready in {:.1} s; booting {}",
        t0.elapsed().as_secs_f64(),
        parts.kernel.release
    ));
    run::boot(&parts, ssh_tree.as_deref(), req, report)
}

/// The commands of a `--script` file: one iolab command per line (an optional leading `iolab` word), words
/// split as a shell would (single and double quotes, backslash); blank lines and `#` comments skipped.
/// Err: the line number and what is wrong.
pub fn parse_script(text: &str) -> std::result::Result<Vec<Vec<OsString>>, String> {
    let mut cmds = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let mut words = split_words(t).map_err(|e| format!("line {}: {e}", n + 1))?;
        if words.first().is_some_and(|w| w == "iolab") {
            words.remove(0);
        }
        if words.is_empty() {
            return Err(format!("line {}: `iolab` without arguments", n + 1));
        }
        cmds.push(words.into_iter().map(OsString::from).collect());
    }
    if cmds.is_empty() {
        return Err("no command in it".into());
    }
    Ok(cmds)
}

fn split_words(line: &str) -> std::result::Result<Vec<String>, String> {
    let (mut words, mut cur, mut quote, mut any) = (Vec::new(), String::new(), None, false);
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, c) if c.is_whitespace() => {
                if any {
                    words.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (Some(q), c) if c == q => quote = None,
            (None | Some('"'), '\\') => {
                cur.push(chars.next().ok_or("a backslash at the end of the line")?);
                any = true;
            }
            (_, c) => {
                cur.push(c);
                any = true;
            }
        }
    }
    if let Some(q) = quote {
        return Err(format!("an unclosed {q} quote"));
    }
    if any {
        words.push(cur);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_lines_split_like_a_shell() {
        let c =
            parse_script("# a comment\n\niolab run --json 'a b.json' --target \"x\\\"y\"\nprobe\n")
                .unwrap();
        assert_eq!(
            c,
            vec![
                vec!["run", "--json", "a b.json", "--target", "x\"y"]
                    .into_iter()
                    .map(OsString::from)
                    .collect::<Vec<_>>(),
                vec![OsString::from("probe")],
            ]
        );
        assert!(parse_script("run 'open")
            .unwrap_err()
            .contains("line 1: an unclosed ' quote"));
        assert!(parse_script("# nothing\n")
            .unwrap_err()
            .contains("no command"));
        assert_eq!(parse_script("run ''").unwrap()[0][1], OsString::from(""));
    }
}
