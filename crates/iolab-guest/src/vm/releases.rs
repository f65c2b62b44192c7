//! `--kernel 6.1|6.1-rt|6.12|6.12-rt`: a release by its short name, the newest kernel image package of it in
//! apt's lists of the guest's architecture (`linux-image-6.1.0-NN-amd64`, `linux-image-6.1.0-NN-rt-amd64`,
//! `linux-image-6.12.NN+deb12-amd64`, ...). A full package name is taken as it is; a short name with no
//! package is refused, naming the short names that have one.

use super::arch::Arch;
use iolab_engine::error::{Error, Result};

/// The short names `--kernel` takes.
pub const SHORT: [&str; 4] = ["6.1", "6.1-rt", "6.12", "6.12-rt"];

/// Whether `asked` is a short name (a release, `-rt` for PREEMPT_RT) rather than a package.
pub fn is_short(asked: &str) -> bool {
    SHORT.contains(&asked)
}

/// `--kernel asked` is a short name or a kernel image package's (checked before anything is fetched).
pub fn check_form(asked: &str, arch: Arch) -> Result<()> {
    if asked.starts_with("linux-image-") || is_short(asked) {
        return Ok(());
    }
    Err(Error::usage(
        "--kernel",
        format!(
            "{asked} is neither a release ({}) nor a kernel image package: name one like \
             linux-image-6.1.0-NN-{}",
            SHORT.join(", "),
            arch.kernel_flavour()
        ),
    ))
}

/// Whether `pkg` is a kernel image of release `short` for `flavour` (`amd64`, `arm64`, `armmp`): its
/// version (`6.1.0-48`, `6.12.57+deb12`) on the release's line, then `-rt-FLAVOUR` for `-rt`, else
/// `-FLAVOUR` (a cloud or signed-template kernel is not one).
fn matches(pkg: &str, short: &str, flavour: &str) -> bool {
    let (release, rt) = match short.strip_suffix("-rt") {
        Some(r) => (r, true),
        None => (short, false),
    };
    let Some(rest) = pkg.strip_prefix("linux-image-") else {
        return false;
    };
    let tail = if rt {
        format!("-rt-{flavour}")
    } else {
        format!("-{flavour}")
    };
    let Some(version) = rest.strip_suffix(&tail) else {
        return false;
    };
    // 6.1's packages are 6.1.0-ABI; 6.12's 6.12.N+debK: nothing else between the release and the
    // flavour (a cloud kernel, 6.12.N+debK-cloud, or an -rt one when -rt was not asked, is not it).
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    match release {
        "6.1" => version.strip_prefix("6.1.0-").is_some_and(digits),
        r => version
            .strip_prefix(r)
            .and_then(|v| v.strip_prefix('.'))
            .is_some_and(|v| match v.split_once("+deb") {
                Some((n, deb)) => digits(n) && digits(deb),
                None => digits(v),
            }),
    }
}

/// The numbers of a package's version, for ordering (`6.1.0-48` -> [6, 1, 0, 48]).
fn numbers(pkg: &str) -> Vec<u64> {
    pkg.split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .filter_map(|s| s.parse().ok())
        .collect()
}

/// The newest package of `names` that is release `short` for `flavour`.
pub fn newest<'a>(names: &'a [String], short: &str, flavour: &str) -> Option<&'a String> {
    names
        .iter()
        .filter(|n| matches(n, short, flavour))
        .max_by_key(|n| numbers(n))
}

/// The kernel image package `--kernel asked` names: a short name's newest package of those apt's lists
/// have (`listed`: their kernel image packages' names, asked only for a short name), or `asked` itself.
pub fn package(
    asked: &str,
    arch: Arch,
    listed: impl FnOnce() -> Result<Vec<String>>,
) -> Result<String> {
    if !is_short(asked) {
        return Ok(asked.to_string());
    }
    let names = listed()?;
    let flavour = arch.kernel_flavour();
    if let Some(p) = newest(&names, asked, flavour) {
        return Ok(p.clone());
    }
    let have: Vec<String> = SHORT
        .iter()
        .filter_map(|s| newest(&names, s, flavour).map(|p| format!("{s} ({p})")))
        .collect();
    Err(Error::usage(
        "--kernel",
        format!(
            "apt's lists for {} have no {asked} kernel image; {}",
            arch.debian(),
            match have.is_empty() {
                true =>
                    "they have none of 6.1, 6.1-rt, 6.12, 6.12-rt: `apt-cache search linux-image-` \
                         lists the kernels they have"
                        .to_string(),
                false => format!("they have {}", have.join(", ")),
            }
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_short_name_is_the_newest_image_of_its_release_and_flavour() {
        let n = names(&[
            "linux-image-6.1.0-9-amd64",
            "linux-image-6.1.0-48-amd64",
            "linux-image-6.1.0-48-amd64-dbg",
            "linux-image-6.1.0-48-amd64-unsigned",
            "linux-image-6.1.0-47-rt-amd64",
            "linux-image-6.1.0-48-cloud-amd64",
            "linux-image-6.12.9+deb12-amd64",
            "linux-image-6.12.41+deb12-amd64",
            "linux-image-6.12.41+deb12-rt-amd64",
            "linux-image-6.12.118+deb12-cloud-amd64",
            "linux-image-6.12.118+deb12-amd64-unsigned",
            "linux-image-6.12-amd64-dbg",
            "linux-image-6.1.0-50-arm64",
        ]);
        let pick = |s| newest(&n, s, "amd64").map(String::as_str);
        assert_eq!(pick("6.1"), Some("linux-image-6.1.0-48-amd64"));
        assert_eq!(pick("6.1-rt"), Some("linux-image-6.1.0-47-rt-amd64"));
        assert_eq!(pick("6.12"), Some("linux-image-6.12.41+deb12-amd64"));
        assert_eq!(pick("6.12-rt"), Some("linux-image-6.12.41+deb12-rt-amd64"));
        assert_eq!(
            newest(&n, "6.1", "arm64").map(String::as_str),
            Some("linux-image-6.1.0-50-arm64")
        );
        assert_eq!(newest(&n, "6.12-rt", "arm64"), None);
        assert!(is_short("6.12-rt") && !is_short("linux-image-6.1.0-48-amd64"));
    }
}
