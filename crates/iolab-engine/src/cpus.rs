//! `--cpus LIST`: iolab and every thread it starts run on those CPUs only (sched_setaffinity before any
//! thread starts; offload's threads pick their CPUs among them). It keeps iolab's threads off the CPUs
//! other work is given, but it makes no CPU iolab's alone: work that is not pinned elsewhere may still
//! run there, and the runs' disturbance says so when it does.

use crate::error::{Error, Result};
use std::sync::OnceLock;

static PINNED: OnceLock<Vec<u32>> = OnceLock::new();

/// CPU_SETSIZE: the CPUs sched_setaffinity's set can name.
const MAX_CPUS: u32 = 1024;

/// "1", "0-1", "0,2-3" as the CPUs it names, each once, in order.
pub fn parse_list(s: &str) -> std::result::Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim) {
        let num = |t: &str| {
            t.trim().parse::<u32>().map_err(|_| {
                format!("'{t}' is not a CPU number; expected a list such as 1 or 0,2-3")
            })
        };
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => (num(part)?, num(part)?),
        };
        if a > b {
            return Err(format!("'{part}' is a range that ends before it starts"));
        }
        if b >= MAX_CPUS {
            return Err(format!(
                "CPU {b} is beyond the {MAX_CPUS} CPUs a CPU set can name"
            ));
        }
        out.extend(a..=b);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Pins this process's threads to the CPUs of `list` (from `--cpus`); call before any thread starts.
pub fn pin(list: &str) -> Result<()> {
    let cpus = parse_list(list).map_err(|m| Error::usage("--cpus", m))?;
    let allowed = iolab_sys::allowed_cpus();
    if let Some(c) = cpus.iter().find(|c| !allowed.contains(c)) {
        return Err(Error::usage(
            "--cpus",
            format!("CPU {c} is not one iolab may run on here (allowed: {allowed:?})"),
        ));
    }
    iolab_sys::set_allowed_cpus(&cpus).map_err(|e| {
        Error::usage(
            "--cpus",
            format!(
                "sched_setaffinity failed: {}",
                iolab_sys::errno_name(e.errno)
            ),
        )
    })?;
    let _ = PINNED.set(cpus);
    Ok(())
}

/// The CPUs `--cpus` pinned iolab to, if it did.
pub fn pinned() -> Option<Vec<u32>> {
    PINNED.get().cloned()
}

#[cfg(test)]
mod tests {
    use super::parse_list;

    #[test]
    fn lists_and_ranges_name_each_cpu_once() {
        assert_eq!(parse_list("1"), Ok(vec![1]));
        assert_eq!(parse_list("0,2-3,2"), Ok(vec![0, 2, 3]));
        assert!(parse_list("3-1")
            .unwrap_err()
            .contains("ends before it starts"));
        assert!(parse_list("x")
            .unwrap_err()
            .contains("'x' is not a CPU number"));
    }
}
