//! Getting the guest's parts from Debian's package registry without installing anything: `apt-get download`
//! of the candidate version of each package into the cache, `dpkg-deb -x` into the cache's tree, a stamp
//! per extracted package (name, version, architecture) so that a second run downloads nothing, and the
//! downloaded `.deb` removed once extracted. Never `apt-get install`: installing qemu-system-x86 would
//! remove this machine's qemu-utils, and a kernel package runs mkinitramfs.
//!
//! Cache layout (`CACHE`):
//! - `lock`: flock'd while the cache is being filled (a second `iolab vm` waits);
//! - `debs/`: downloads in progress; `done/NAME_VERSION_ARCH`: extracted packages;
//! - `root/`: qemu, seabios, busybox, qemu's missing libraries, the kernel headers and kbuild;
//! - `kernel/RELEASE/`: `vmlinuz` and only the modules the guest loads (see `kernel.rs`);
//! - for a foreign architecture (arm64, see `arch.rs`): `apt-arm64/` (its apt lists), `guest-arm64/` (its
//!   busybox), `resolution-arm64`; its qemu goes to `root/` with the x86 one.

use super::arch::{Apt, Arch};
use super::request::mkdir;
use iolab_engine::error::{Error, Result};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// One package's candidate version in apt's lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pkg {
    pub name: String,
    pub version: String,
    pub arch: String,
    /// The .deb's size in bytes (apt's `Size:`).
    pub size: u64,
}

impl Pkg {
    /// The stamp's file name: which version of the package the cache holds.
    fn stamp(&self) -> String {
        format!("{}_{}_{}", self.name, self.version, self.arch).replace('/', "%2f")
    }
}

/// What one fill of the cache downloaded.
#[derive(Debug, Clone, Default)]
pub struct Fetched {
    pub packages: Vec<String>,
    pub bytes: u64,
    pub seconds: f64,
}

/// Runs an apt tool; its stdout, or an error with the command and the last lines of its stderr.
pub(crate) fn tool(cmd: &str, args: &[&str], dir: Option<&Path>) -> Result<String> {
    let mut c = Command::new(cmd);
    c.args(args).env("LC_ALL", "C");
    if let Some(d) = dir {
        c.current_dir(d);
    }
    let out = c.output().map_err(|e| {
        Error::Runtime(format!(
            "cannot run {cmd} ({e}): iolab vm fetches the guest's parts with apt-get and dpkg-deb \
             (Debian and its derivatives)"
        ))
    })?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().filter(|l| !l.starts_with("W: ")).collect();
        let tail = tail[tail.len().saturating_sub(6)..].join("\n");
        return Err(Error::Runtime(format!(
            "{cmd} {} failed ({}): {tail}",
            args.join(" "),
            out.status
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// One package's record in apt's lists: its candidate version and what it depends on.
#[derive(Debug, Clone)]
pub(crate) struct Record {
    pub(crate) pkg: Pkg,
    /// Names of its `Pre-Depends` and `Depends` (alternatives included, version constraints dropped).
    pub(crate) depends: Vec<String>,
}

/// Parses `apt-cache show` output: one record per package (its first paragraph: the candidate).
fn parse_show(text: &str) -> Vec<Record> {
    let mut found: Vec<Record> = Vec::new();
    for para in text.split("\n\n") {
        let field = |k: &str| {
            para.lines()
                .find_map(|l| l.strip_prefix(k).map(|v| v.trim().to_string()))
        };
        let (Some(name), Some(version), Some(arch)) =
            (field("Package:"), field("Version:"), field("Architecture:"))
        else {
            continue;
        };
        if found.iter().any(|r| r.pkg.name == name) {
            continue;
        }
        let depends = [field("Pre-Depends:"), field("Depends:")]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(",")
            .split([',', '|'])
            .filter_map(|d| d.split_whitespace().next())
            .map(|d| d.split(':').next().unwrap_or(d).to_string())
            .collect();
        let size = field("Size:").and_then(|s| s.parse().ok()).unwrap_or(0);
        found.push(Record {
            pkg: Pkg {
                name,
                version,
                arch,
                size,
            },
            depends,
        });
    }
    found
}

/// The candidate records of `names` (`apt-cache show --no-all-versions`, one call); a name apt does not
/// know is missing from the answer.
pub(crate) fn show(apt: &Apt, names: &[String]) -> Result<Vec<Record>> {
    let mut args = vec!["show", "--no-all-versions"];
    args.extend(names.iter().map(String::as_str));
    // apt-cache show answers the names it knows even when another is unknown; one unknown name alone
    // is an error (exit 100): nothing found.
    match tool("apt-cache", &apt.args(&args), None) {
        Ok(t) => Ok(parse_show(&t)),
        Err(_) if names.len() == 1 => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// Installed packages among `names` (`dpkg-query`, status "install ok installed").
fn installed(names: &[String]) -> BTreeSet<String> {
    let mut c = Command::new("dpkg-query");
    c.args(["-W", "-f", "${Package} ${Status}\\n"]).args(names);
    let Ok(out) = c.output() else {
        return BTreeSet::new();
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.ends_with(" install ok installed"))
        .filter_map(|l| l.split_whitespace().next())
        .map(|n| n.split(':').next().unwrap_or(n).to_string())
        .collect()
}

/// Private lists older than this are updated before they are used.
const PRIVATE_LISTS_MAX_AGE: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// Makes sure apt's package lists (the host's, or the cache's own of a foreign architecture) are there:
/// `apt-get update` when they are missing (as root for the host's), and for the cache's own lists also
/// when they are older than a day.
fn ensure_lists(apt: &Apt, arch: Arch, say: &mut dyn FnMut(&str)) -> Result<()> {
    let meta = arch.kernel_meta();
    let probe = || show(apt, std::slice::from_ref(&meta)).map(|r| !r.is_empty());
    let old = apt.private
        && std::fs::metadata(&apt.lists)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > PRIVATE_LISTS_MAX_AGE);
    if !old && probe()? {
        return Ok(());
    }
    if !apt.private && iolab_sys::geteuid() != 0 {
        return Err(Error::Runtime(format!(
            "apt's package lists have no {meta} (missing lists, or not Debian): run `apt-get update` as \
             root (iolab vm runs it itself as root)"
        )));
    }
    apt.make_dirs()?;
    say(&if apt.private {
        format!(
            "apt-get update of the cache's own {} lists ({})",
            arch.debian(),
            apt.lists.display()
        )
    } else {
        "apt's package lists are missing: apt-get update".to_string()
    });
    // A mirror in the middle of its sync answers "File has unexpected size" for a while: two more tries.
    let mut updated = tool("apt-get", &apt.args(&["update", "-qq"]), None);
    for wait_s in [15, 45] {
        let Err(e) = &updated else { break };
        say(&format!(
            "apt-get update failed ({e}); trying again in {wait_s} s (a mirror mid-sync fails for a while)"
        ));
        std::thread::sleep(std::time::Duration::from_secs(wait_s));
        updated = tool("apt-get", &apt.args(&["update", "-qq"]), None);
    }
    match updated {
        // The directory's time says when the lists were last updated (an update that found nothing new
        // writes nothing into it).
        Ok(_) => {
            let _ = std::fs::File::open(&apt.lists)
                .and_then(|d| d.set_modified(std::time::SystemTime::now()));
        }
        Err(e) if old => say(&format!(
            "the update failed ({e}); the lists of before are used"
        )),
        // One index failing (a mirror's security suite mid-sync) leaves the others fetched: enough where
        // they hold the kernel.
        Err(e) if probe()? => say(&format!(
            "the update failed for part of the lists ({}); the lists it fetched are used",
            e.to_string()
                .lines()
                .find(|l| l.contains("E: "))
                .unwrap_or("see above")
                .trim()
        )),
        Err(e) => return Err(e),
    }
    if !probe()? {
        return Err(Error::Runtime(format!(
            "apt knows no {meta} even after apt-get update: iolab vm needs Debian's {} kernel packages \
             (a Debian system with deb.debian.org in its sources)",
            arch.debian()
        )));
    }
    Ok(())
}

/// What the guest needs, as apt's lists say today.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolution {
    /// The kernel image package and its release.
    pub image: String,
    pub release: String,
    /// Every package to have in the cache (the image first).
    pub pkgs: Vec<Pkg>,
}

/// A kernel image package proper (`linux-image-6.1...`), not a metapackage (`linux-image-amd64`).
fn is_image(name: &str) -> bool {
    name.strip_prefix("linux-image-")
        .and_then(|r| r.chars().next())
        .is_some_and(|c| c.is_ascii_digit())
}

/// What one apt closure looks for: the kernel image asked for (a metapackage followed to its image), with
/// its headers (`-common` tree and kbuild) when the sink driver is built, and the `lib*` packages qemu
/// needs, directly or through another missing library, that are not installed.
struct Closure<'a> {
    apt: &'a Apt,
    /// The kernel package asked for, when this closure holds the kernel.
    first: Option<&'a str>,
    headers: bool,
    qemu: &'a str,
}

impl Closure<'_> {
    /// The records of `want` and what they lead to, level by level (one `apt-cache show` per level), and
    /// the kernel image found.
    fn walk(&self, mut want: Vec<String>) -> Result<(Vec<Record>, Option<String>)> {
        let (mut records, mut image): (Vec<Record>, Option<String>) = (Vec::new(), None);
        while !want.is_empty() {
            let level = show(self.apt, &want)?;
            if let Some(first) = self.first.filter(|_| records.is_empty()) {
                if !level.iter().any(|r| r.pkg.name == first) {
                    return Err(Error::usage(
                        "--kernel",
                        format!(
                            "apt's lists have no package {first} (apt-cache show found none): `apt-cache \
                             search linux-image-` lists the kernels this registry has"
                        ),
                    ));
                }
            }
            if let Some(n) = want
                .iter()
                .find(|n| !level.iter().any(|r| &&r.pkg.name == n))
            {
                return Err(Error::Runtime(format!(
                    "apt's lists have no candidate for {n}, which the guest needs"
                )));
            }
            let mut next = BTreeSet::new();
            let mut libs = BTreeSet::new();
            for r in &level {
                let n = r.pkg.name.as_str();
                if n.starts_with("linux-image-") && !is_image(n) {
                    next.extend(r.depends.iter().filter(|d| is_image(d)).take(1).cloned());
                    continue;
                }
                if is_image(n) {
                    image = Some(n.to_string());
                    if self.headers {
                        next.insert(format!("linux-headers-{}", release_of(n)));
                    }
                } else if n.starts_with("linux-headers-") {
                    next.extend(
                        r.depends
                            .iter()
                            .filter(|d| {
                                d.starts_with("linux-headers-") || d.starts_with("linux-kbuild-")
                            })
                            .cloned(),
                    );
                } else if n == self.qemu || n.starts_with("lib") {
                    libs.extend(r.depends.iter().filter(|d| d.starts_with("lib")).cloned());
                }
                records.push(r.clone());
            }
            let libs: Vec<String> = libs.into_iter().collect();
            let have = installed(&libs);
            next.extend(libs.into_iter().filter(|l| !have.contains(l)));
            want = next
                .into_iter()
                .filter(|n| !records.iter().any(|r| &r.pkg.name == n))
                .collect();
        }
        Ok((records, image))
    }
}

/// Resolves the packages of an `arch` guest: the kernel image asked for (default: the one
/// `linux-image-ARCH` depends on), busybox and qemu with the libraries it lacks here. For the host's own
/// architecture, one closure in the host's lists, with the kernel's headers for the sink driver; for a
/// foreign one the kernel and busybox from the cache's own lists of that architecture (no headers: the
/// driver is not built for it) and qemu from the host's.
pub fn resolve(
    arch: Arch,
    cache: &Path,
    asked: Option<&str>,
    say: &mut dyn FnMut(&str),
) -> Result<Resolution> {
    let first = asked.map_or_else(|| arch.kernel_meta(), str::to_string);
    super::releases::check_form(&first, arch)?;
    let (host, guest) = (Apt::host(), Apt::guest(cache, arch));
    ensure_lists(&guest, arch, say)?;
    // A release by its short name: the newest image of it in the lists.
    let first = super::releases::package(&first, arch, || {
        let listed = tool(
            "apt-cache",
            &guest.args(&["pkgnames", "linux-image-6."]),
            None,
        )?;
        Ok(listed.lines().map(str::to_string).collect())
    })?;
    let (qemu, tools) = (arch.qemu().0, arch.qemu_tools());
    let mut qemu_want: Vec<String> = std::iter::once(qemu)
        .chain(tools.iter().copied())
        .map(str::to_string)
        .collect();
    let mut kernel_want = vec![first.clone(), "busybox-static".to_string()];
    let foreign = arch.foreign();
    if !foreign {
        kernel_want.append(&mut qemu_want);
    }
    let kc = Closure {
        apt: &guest,
        first: Some(&first),
        headers: !foreign,
        qemu,
    };
    let (mut records, image) = kc.walk(kernel_want)?;
    if foreign {
        let qc = Closure {
            apt: &host,
            first: None,
            headers: false,
            qemu,
        };
        records.extend(qc.walk(qemu_want)?.0);
    }
    let image = image.ok_or_else(|| {
        Error::Runtime(format!(
            "{first} leads to no kernel image package in apt's lists"
        ))
    })?;
    let mut pkgs: Vec<Pkg> = records.into_iter().map(|r| r.pkg).collect();
    pkgs.sort_by_key(|p| {
        (
            p.name != image,
            !p.name.starts_with("linux-"),
            p.name.clone(),
        )
    });
    Ok(Resolution {
        release: release_of(&image),
        image,
        pkgs,
    })
}

/// What identifies apt's lists and dpkg's database as they are now (sizes and times of their files) and
/// the question asked: a resolution made under the same key is still right.
/// For a foreign architecture, the cache's own lists count too, and so does their being older than a day
/// (the key changes, the packages are resolved again, and the lists updated first).
pub fn lists_key(arch: Arch, cache: &Path, asked: Option<&str>) -> String {
    use std::os::unix::fs::MetadataExt;
    let mut parts = vec![format!("kernel={}", asked.unwrap_or("-"))];
    let guest = Apt::guest(cache, arch);
    let mut dirs = vec![PathBuf::from("/var/lib/apt/lists")];
    if guest.private {
        let stale = std::fs::metadata(&guest.lists)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_none_or(|age| age > PRIVATE_LISTS_MAX_AGE);
        parts.push(format!("arch={} stale={stale}", arch.debian()));
        dirs.push(guest.lists);
    }
    let mut files: Vec<PathBuf> = dirs
        .iter()
        .flat_map(|d| std::fs::read_dir(d).into_iter().flatten().flatten())
        .map(|e| e.path())
        .collect();
    files.push(PathBuf::from("/var/lib/dpkg/status"));
    files.sort();
    for f in files {
        if let Ok(m) = std::fs::metadata(&f) {
            if m.is_file() {
                parts.push(format!(
                    "{} {} {}.{}",
                    f.display(),
                    m.len(),
                    m.mtime(),
                    m.mtime_nsec()
                ));
            }
        }
    }
    parts.join("\n")
}

/// Where the resolution of `--kernel asked` (or the default kernel) is saved.
fn resolution_file(cache: &Path, arch: Arch, asked: Option<&str>) -> PathBuf {
    cache.join(arch.resolution_name(asked))
}

/// The resolution saved under `key` in the cache, if any.
pub fn saved_resolution(
    cache: &Path,
    arch: Arch,
    asked: Option<&str>,
    key: &str,
) -> Option<Resolution> {
    let text = std::fs::read_to_string(resolution_file(cache, arch, asked)).ok()?;
    let (k, rest) = text.split_once("\n--\n")?;
    if k != key {
        return None;
    }
    let mut lines = rest.lines();
    let image = lines.next()?.to_string();
    let pkgs = lines
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            Some(Pkg {
                name: f.first()?.to_string(),
                version: f.get(1)?.to_string(),
                arch: f.get(2)?.to_string(),
                size: f.get(3)?.parse().ok()?,
            })
        })
        .collect::<Option<Vec<Pkg>>>()?;
    Some(Resolution {
        release: release_of(&image),
        image,
        pkgs,
    })
}

/// Saves `r` under `key` (a later run with the same lists asks apt nothing).
pub fn save_resolution(cache: &Path, arch: Arch, asked: Option<&str>, key: &str, r: &Resolution) {
    let mut text = format!("{key}\n--\n{}\n", r.image);
    for p in &r.pkgs {
        text.push_str(&format!("{} {} {} {}\n", p.name, p.version, p.arch, p.size));
    }
    let _ = std::fs::write(resolution_file(cache, arch, asked), text);
}

/// The kernel release a linux-image package holds (`linux-image-6.1.0-56-amd64` -> `6.1.0-56-amd64`).
pub fn release_of(pkg: &str) -> String {
    let r = pkg.trim_start_matches("linux-image-");
    r.strip_suffix("-unsigned").unwrap_or(r).to_string()
}

/// Packages of `pkgs` whose version the cache does not hold yet (`done`: the stamps' directory,
/// `CACHE/done` for the guest's own parts).
pub fn not_cached(done: &Path, pkgs: &[Pkg]) -> Vec<Pkg> {
    pkgs.iter()
        .filter(|p| !done.join(p.stamp()).exists())
        .cloned()
        .collect()
}

/// Downloads `pkgs` into `CACHE/debs` and extracts each (`into` says where: the kernel image goes to a
/// staging tree of its own); writes its stamp in `done` once extracted and removes the .deb.
/// A foreign `arch`'s own packages are downloaded through the cache's apt lists of it, the others
/// (qemu, its libraries) through the host's.
pub fn download_and_extract(
    cache: &Path,
    arch: Arch,
    pkgs: &[Pkg],
    done: &Path,
    into: &dyn Fn(&Pkg) -> PathBuf,
) -> Result<Fetched> {
    let t0 = Instant::now();
    let debs = cache.join("debs");
    let _ = std::fs::remove_dir_all(&debs);
    mkdir(&debs)?;
    mkdir(done)?;
    let guest = Apt::guest(cache, arch);
    let (theirs, ours): (Vec<&Pkg>, Vec<&Pkg>) = pkgs
        .iter()
        .partition(|p| guest.private && p.arch == arch.debian());
    for (apt, group) in [(&guest, theirs), (&Apt::host(), ours)] {
        if group.is_empty() {
            continue;
        }
        let mut args = vec!["download".to_string()];
        args.extend(group.iter().map(|p| format!("{}={}", p.name, p.version)));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        tool("apt-get", &apt.args(&args), Some(&debs))?;
    }
    let mut f = Fetched::default();
    for p in pkgs {
        let deb = find_deb(&debs, &p.name)?;
        f.bytes += std::fs::metadata(&deb).map(|m| m.len()).unwrap_or(0);
        let dest = into(p);
        mkdir(&dest)?;
        let (d, t) = (deb.to_string_lossy(), dest.to_string_lossy());
        tool("dpkg-deb", &["-x", &d, &t], None)?;
        std::fs::write(done.join(p.stamp()), b"").map_err(|e| {
            Error::Runtime(format!("cannot write a stamp in {}: {e}", cache.display()))
        })?;
        let _ = std::fs::remove_file(&deb);
        f.packages.push(format!("{} {}", p.name, p.version));
    }
    let _ = std::fs::remove_dir_all(&debs);
    f.seconds = t0.elapsed().as_secs_f64();
    Ok(f)
}

fn find_deb(dir: &Path, name: &str) -> Result<PathBuf> {
    let prefix = format!("{name}_");
    std::fs::read_dir(dir)
        .ok()
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".deb"))
        })
        .ok_or_else(|| {
            Error::Runtime(format!(
                "apt-get download left no {name}_*.deb in {}",
                dir.display()
            ))
        })
}

/// The headers' top Makefile includes its `-common` tree by absolute path (`include
/// /usr/src/linux-headers-R-common/Makefile`): point it into the cache. Idempotent.
pub fn fix_headers(root: &Path, release: &str) -> Result<PathBuf> {
    let dir = root
        .join("usr/src")
        .join(format!("linux-headers-{release}"));
    let mk = dir.join("Makefile");
    let text = std::fs::read_to_string(&mk).map_err(|e| {
        Error::Runtime(format!(
            "the kernel headers are not where their package puts them ({}: {e})",
            mk.display()
        ))
    })?;
    let abs = format!("{}/usr/src/", root.display());
    let fixed: String = text
        .lines()
        .map(|l| match l.strip_prefix("include /usr/src/") {
            Some(rest) => format!("include {abs}{rest}\n"),
            None => format!("{l}\n"),
        })
        .collect();
    if fixed != text {
        std::fs::write(&mk, fixed)
            .map_err(|e| Error::Runtime(format!("cannot write {}: {e}", mk.display())))?;
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn show_records_with_their_dependencies() {
        let text = "Package: linux-image-amd64\nVersion: 6.1.192-2\nArchitecture: amd64\nDepends: \
                    linux-image-6.1.0-56-amd64 (= 6.1.192-2)\nSize: 1500\n\nPackage: qemu-system-x86\n\
                    Version: 1:7.2+dfsg-7\nArchitecture: amd64\nPre-Depends: libzstd1\nDepends: libaio1 (>= 0.3.93), libc6:any, \
                    libfoo | libbar\nSize: 12\n";
        let r = parse_show(text);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].depends, vec!["linux-image-6.1.0-56-amd64"]);
        assert_eq!(r[1].pkg.version, "1:7.2+dfsg-7");
        assert_eq!(
            r[1].depends,
            vec!["libzstd1", "libaio1", "libc6", "libfoo", "libbar"]
        );
        assert!(is_image("linux-image-6.1.0-56-amd64"));
        assert!(!is_image("linux-image-amd64"));
    }

    #[test]
    fn a_resolution_is_reused_only_under_the_same_key() {
        let d = tempfile::tempdir().unwrap();
        let r = Resolution {
            image: "linux-image-6.1.0-9-amd64".into(),
            release: "6.1.0-9-amd64".into(),
            pkgs: vec![Pkg {
                name: "linux-image-6.1.0-9-amd64".into(),
                version: "6.1.1-1".into(),
                arch: "amd64".into(),
                size: 7,
            }],
        };
        save_resolution(d.path(), Arch::Amd64, None, "key\nlists", &r);
        assert_eq!(
            saved_resolution(d.path(), Arch::Amd64, None, "key\nlists"),
            Some(r)
        );
        assert_eq!(
            saved_resolution(d.path(), Arch::Amd64, None, "key\nother lists"),
            None
        );
        assert_eq!(
            saved_resolution(d.path(), Arch::Amd64, Some("linux-image-x"), "key\nlists"),
            None
        );
        assert_eq!(
            saved_resolution(d.path(), Arch::Arm64, None, "key\nlists"),
            None
        );
    }

    #[test]
    fn release_from_package_names() {
        assert_eq!(release_of("linux-image-6.1.0-56-amd64"), "6.1.0-56-amd64");
        assert_eq!(
            release_of("linux-image-6.1.0-56-amd64-unsigned"),
            "6.1.0-56-amd64"
        );
    }

    #[test]
    fn headers_makefile_points_into_the_cache_once() {
        let d = tempfile::tempdir().unwrap();
        let h = d.path().join("usr/src/linux-headers-6.1.0-9-amd64");
        std::fs::create_dir_all(&h).unwrap();
        std::fs::write(
            h.join("Makefile"),
            "include /usr/src/linux-headers-6.1.0-9-common/Makefile\n",
        )
        .unwrap();
        for _ in 0..2 {
            fix_headers(d.path(), "6.1.0-9-amd64").unwrap();
        }
        let text = std::fs::read_to_string(h.join("Makefile")).unwrap();
        assert_eq!(
            text,
            format!(
                "include {}/usr/src/linux-headers-6.1.0-9-common/Makefile\n",
                d.path().display()
            )
        );
    }
}
