//! The guest kernel in the cache: `vmlinuz` and only the modules the guest loads, in load order.
//!
//! Debian's kernel package has no `modules.dep` (its postinst runs depmod), so the dependencies are read
//! where depmod's come from: each module's `.modinfo` ELF section (`depends=a,b`, written by modpost from
//! the symbols the module uses). The closure of `Arch::roots` is copied out of the package's 400 MB tree into
//! `CACHE/kernel/RELEASE/modules/`, with `order` listing the files in load order (dependencies first), and
//! the tree is removed.

use super::request::mkdir;
use iolab_engine::error::{Error, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The kernel of one release as the guest needs it.
#[derive(Debug, Clone)]
pub struct Kernel {
    pub release: String,
    pub vmlinuz: PathBuf,
    /// Module files in load order.
    pub modules: Vec<PathBuf>,
    /// Where the kernel is kept, with the device trees of `Arch::dtbs` (vexpress-a9's).
    pub dir: PathBuf,
}

/// A module file's name without `.ko` and a compression's extension (`nvme-core.ko.xz` -> `nvme-core`).
fn module_file_stem(file: &Path) -> String {
    let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.split(".ko").next().unwrap_or(name).to_string()
}

/// A module's name as the kernel knows it (`nvme-core.ko` -> `nvme_core`).
pub fn module_name(file: &Path) -> String {
    let stem = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let stem = stem.split(".ko").next().unwrap_or(stem);
    stem.replace('-', "_")
}

/// The key=value strings of an ELF object's `.modinfo` section (ELF64, or ELF32 for armhf).
pub fn modinfo(elf: &[u8]) -> Option<Vec<String>> {
    let data = super::elf::Elf::parse(elf)?.section(".modinfo")?;
    Some(
        data.split(|&b| b == 0)
            .filter(|s| !s.is_empty())
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .collect(),
    )
}

/// The decompressors of the compressed modules a kernel package may hold (6.12's are `.ko.xz`), run as
/// dpkg-deb runs them (xz-utils comes with dpkg; zstd where installed).
const COMPRESSED: [(&str, &str); 2] = [(".ko.xz", "xz"), (".ko.zst", "zstd")];

/// A module file's ELF object: as it is, or decompressed (`xz -dc`).
fn module_bytes(path: &Path) -> Result<Vec<u8>> {
    let name = path.to_string_lossy();
    let Some((_, tool)) = COMPRESSED.iter().find(|(ext, _)| name.ends_with(ext)) else {
        return std::fs::read(path)
            .map_err(|e| Error::Runtime(format!("cannot read {}: {e}", path.display())));
    };
    let out = std::process::Command::new(tool)
        .arg("-dc")
        .arg(path)
        .output()
        .map_err(|e| Error::Runtime(format!("cannot run {tool} to decompress {name}: {e}")))?;
    if !out.status.success() {
        return Err(Error::Runtime(format!(
            "{tool} -dc {name} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(out.stdout)
}

/// Whether `path` names a kernel module, compressed or not.
fn is_module(path: &Path) -> bool {
    let name = path.to_string_lossy();
    name.ends_with(".ko") || COMPRESSED.iter().any(|(ext, _)| name.ends_with(ext))
}

/// The modules a module depends on (`depends=` of its `.modinfo`), as kernel names.
fn depends_of(path: &Path) -> Result<Vec<String>> {
    let bytes = module_bytes(path)?;
    let info = modinfo(&bytes).ok_or_else(|| {
        Error::Runtime(format!(
            "{} has no .modinfo section: not a kernel module",
            path.display()
        ))
    })?;
    Ok(info
        .iter()
        .filter_map(|kv| kv.strip_prefix("depends="))
        .flat_map(|d| d.split(','))
        .filter(|d| !d.is_empty())
        .map(|d| d.replace('-', "_"))
        .collect())
}

/// Every module under `dir` (`.ko`, `.ko.xz`, `.ko.zst`), by kernel name.
fn index(dir: &Path, into: &mut BTreeMap<String, PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => index(&p, into),
            Ok(t) if t.is_file() && is_module(&p) => {
                into.insert(module_name(&p), p);
            }
            _ => {}
        }
    }
}

/// The modules a release has built in (its `modules.builtin`, beside `dir`: `lib/modules/R/kernel`), by
/// kernel name; none where the file is missing.
fn built_in(dir: &Path) -> std::collections::BTreeSet<String> {
    let list = dir
        .parent()
        .map(|r| r.join("modules.builtin"))
        .and_then(|f| std::fs::read_to_string(f).ok())
        .unwrap_or_default();
    list.lines().map(|l| module_name(Path::new(l))).collect()
}

/// The closure of `roots` in load order (each module after its dependencies), from the modules under
/// `dir` (a release's `lib/modules/R/kernel`); one the kernel has built in (6.12's virtio_pci) needs no
/// loading. A root or dependency that is neither is an error naming it.
pub fn load_order(dir: &Path, roots: &[&str]) -> Result<Vec<PathBuf>> {
    let mut idx = BTreeMap::new();
    index(dir, &mut idx);
    let mut order = Vec::new();
    // Built in: already there, as if loaded.
    let mut seen = built_in(dir);
    fn visit(
        name: &str,
        idx: &BTreeMap<String, PathBuf>,
        seen: &mut std::collections::BTreeSet<String>,
        order: &mut Vec<PathBuf>,
    ) -> Result<()> {
        if !seen.insert(name.to_string()) {
            return Ok(());
        }
        let p = idx.get(name).ok_or_else(|| {
            Error::Runtime(format!(
                "the kernel package has no module {name} (the guest needs it as a module; is it built in?)"
            ))
        })?;
        for d in depends_of(p)? {
            visit(&d, idx, seen, order)?;
        }
        order.push(p.clone());
        Ok(())
    }
    for r in roots {
        visit(r, &idx, &mut seen, &mut order)?;
    }
    Ok(order)
}

/// The directory of `release` in the cache.
pub fn dir(cache: &Path, release: &str) -> PathBuf {
    cache.join("kernel").join(release)
}

/// The cached kernel of `release`, if complete (its `order` lists the modules of today's `roots`, and the
/// device trees `dtbs` are there).
pub fn cached(cache: &Path, release: &str, roots: &[&str], dtbs: &[&str]) -> Option<Kernel> {
    let d = dir(cache, release);
    let order = std::fs::read_to_string(d.join("order")).ok()?;
    let mut lines = order.lines();
    if lines.next()? != format!("roots {}", roots.join(" ")) {
        return None;
    }
    let modules: Vec<PathBuf> = lines.map(|l| d.join("modules").join(l)).collect();
    let vmlinuz = d.join("vmlinuz");
    let complete = vmlinuz.is_file()
        && modules.iter().all(|m| m.is_file())
        && dtbs.iter().all(|t| d.join(t).is_file());
    complete.then(|| Kernel {
        release: release.to_string(),
        vmlinuz,
        modules,
        dir: d,
    })
}

/// The file named `name` under `dir`, at any depth.
fn find(dir: &Path, name: &str) -> Option<PathBuf> {
    let mut sub = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_file() && e.file_name() == name => return Some(p),
            Ok(t) if t.is_dir() => sub.push(p),
            _ => {}
        }
    }
    sub.iter().find_map(|d| find(d, name))
}

/// Keeps what the guest needs of an extracted kernel package (`staging`: its tree) in the cache, then
/// removes the tree: the kernel, the closure of `roots` and the device trees `dtbs` (from
/// `usr/lib/linux-image-RELEASE/`).
pub fn keep_from(
    cache: &Path,
    release: &str,
    staging: &Path,
    roots: &[&str],
    dtbs: &[&str],
) -> Result<Kernel> {
    let d = dir(cache, release);
    let _ = std::fs::remove_dir_all(&d);
    mkdir(&d.join("modules"))?;
    let copy = |from: &Path, to: &Path| {
        std::fs::copy(from, to).map(|_| ()).map_err(|e| {
            Error::Runtime(format!(
                "cannot copy {} to {}: {e}",
                from.display(),
                to.display()
            ))
        })
    };
    let vmlinuz = staging.join("boot").join(format!("vmlinuz-{release}"));
    copy(&vmlinuz, &d.join("vmlinuz"))?;
    let dtb_dir = staging
        .join("usr/lib")
        .join(format!("linux-image-{release}"));
    for t in dtbs {
        let from = find(&dtb_dir, t).ok_or_else(|| {
            Error::Runtime(format!(
                "the kernel package has no device tree {t} under {}",
                dtb_dir.display()
            ))
        })?;
        copy(&from, &d.join(t))?;
    }
    let mods = staging.join("lib/modules").join(release).join("kernel");
    let order = load_order(&mods, roots)?;
    let mut text = format!("roots {}\n", roots.join(" "));
    for m in &order {
        // Kept as plain `.ko` (decompressed here): the guest loads each as it is.
        let name = format!("{}.ko", module_file_stem(m));
        let to = d.join("modules").join(&name);
        std::fs::write(&to, module_bytes(m)?)
            .map_err(|e| Error::Runtime(format!("cannot write {}: {e}", to.display())))?;
        text.push_str(&format!("{name}\n"));
    }
    std::fs::write(d.join("order"), text)
        .map_err(|e| Error::Runtime(format!("cannot write in {}: {e}", d.display())))?;
    let _ = std::fs::remove_dir_all(staging);
    cached(cache, release, roots, dtbs)
        .ok_or_else(|| Error::Runtime(format!("the kernel in {} is incomplete", d.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_module_the_kernel_has_built_in_needs_no_loading() {
        let d = tempfile::tempdir().unwrap();
        let kernel = d.path().join("6.12.118+deb12-amd64/kernel");
        std::fs::create_dir_all(&kernel).unwrap();
        std::fs::write(
            kernel.parent().unwrap().join("modules.builtin"),
            "kernel/drivers/virtio/virtio_pci.ko\nkernel/fs/ext4/ext4.ko\n",
        )
        .unwrap();
        assert_eq!(
            load_order(&kernel, &["virtio_pci", "ext4"]).unwrap(),
            Vec::<PathBuf>::new()
        );
        let e = load_order(&kernel, &["virtio_pci", "nvme"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("no module nvme"), "{e}");
    }

    #[test]
    fn module_names_as_the_kernel_spells_them() {
        assert_eq!(module_name(Path::new("/x/nvme-core.ko")), "nvme_core");
        assert_eq!(module_name(Path::new("virtio_pci.ko.xz")), "virtio_pci");
    }

    #[test]
    fn modinfo_of_a_built_object() {
        // A minimal ELF64 with a section name table and a .modinfo section, laid out by hand.
        let mut elf = vec![0u8; 64];
        elf[..6].copy_from_slice(b"\x7fELF\x02\x01");
        let strtab = b"\0.shstrtab\0.modinfo\0";
        let info = b"name=nvme\0depends=nvme-core,t10-pi\0";
        let str_off = elf.len();
        elf.extend_from_slice(strtab);
        let info_off = elf.len();
        elf.extend_from_slice(info);
        let shoff = elf.len();
        let sh = |name: u32, off: usize, size: usize| {
            let mut s = vec![0u8; 64];
            s[..4].copy_from_slice(&name.to_le_bytes());
            s[0x18..0x20].copy_from_slice(&(off as u64).to_le_bytes());
            s[0x20..0x28].copy_from_slice(&(size as u64).to_le_bytes());
            s
        };
        let (a, b, c) = (
            sh(0, 0, 0),
            sh(1, str_off, strtab.len()),
            sh(11, info_off, info.len()),
        );
        elf.extend(a.into_iter().chain(b).chain(c));
        elf[0x28..0x30].copy_from_slice(&(shoff as u64).to_le_bytes());
        elf[0x3A..0x3C].copy_from_slice(&64u16.to_le_bytes());
        elf[0x3C..0x3E].copy_from_slice(&3u16.to_le_bytes());
        elf[0x3E..0x40].copy_from_slice(&1u16.to_le_bytes());
        assert_eq!(
            modinfo(&elf).unwrap(),
            vec![
                "name=nvme".to_string(),
                "depends=nvme-core,t10-pi".to_string()
            ]
        );
        assert!(modinfo(b"not an elf").is_none());
    }
}
