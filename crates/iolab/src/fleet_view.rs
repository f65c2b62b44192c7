//! What `iolab fleet` prints at the end: each host's outcome, then per workload the fleet's latency
//! percentiles from the hosts' merged histograms and how far apart the hosts are; and `fleet.json`.

use iolab_engine::error::Result;
use iolab_engine::units::{fmt_ns, thousands_u64};
use iolab_lab::fleet::{Host, Merged, Outcome};
use std::path::Path;

/// Workloads shown without -v: those whose hosts differ most.
const SHOWN: usize = 5;

/// One line to stdout; a closed stdout (a pipe whose reader left) does not stop the run, whose clean-up
/// on the hosts must still happen: the first failure is kept ([`stdout_failure`]) and later lines are
/// not tried.
pub fn say(line: &str) {
    let mut failed = STDOUT_FAILED.lock().unwrap_or_else(|p| p.into_inner());
    if failed.is_none() {
        *failed = crate::output::outln(line).err();
    }
}

/// The first write to stdout that failed, if any: the command ends with it (exit 1) once its work and
/// clean-up are done.
pub fn stdout_failure() -> Option<iolab_engine::error::Error> {
    STDOUT_FAILED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
}

static STDOUT_FAILED: std::sync::Mutex<Option<iolab_engine::error::Error>> =
    std::sync::Mutex::new(None);

/// The hosts' outcomes, then the merged view.
pub fn show(hosts: &[Host], merged: &[Merged], verbose: bool) {
    say("\nHosts:");
    let width = |f: &dyn Fn(&Host) -> usize| hosts.iter().map(f).max().unwrap_or(1).max(1);
    let (wn, wa, wk) = (
        width(&|h| h.name.chars().count()),
        width(&|h| h.architecture.chars().count()),
        width(&|h| h.kernel.chars().count()),
    );
    for h in hosts {
        let files = match h.files.len() {
            0 => "no record file came back".to_string(),
            n => format!("{n} file(s) came back"),
        };
        let what = match &h.outcome {
            Outcome::Ok => format!("ok, {files}"),
            Outcome::Failed { why, .. } => format!("failed, {why}; {files}"),
            Outcome::NotRun { why } => format!("not run: {why}"),
            Outcome::Lost { why } => format!("lost, {why}"),
        };
        let dash = |s: &str| {
            if s.is_empty() {
                "-".to_string()
            } else {
                s.to_string()
            }
        };
        let emulated = match &h.emulated {
            Some(acc) => format!(" (emulated, {acc}: behaviour, not speed)"),
            None => String::new(),
        };
        say(&format!(
            "  {:<wn$} {:<wa$} {:<wk$} {what}{emulated}",
            h.name,
            dash(&h.architecture),
            dash(&h.kernel)
        ));
    }
    if merged.is_empty() {
        return;
    }
    say("\nLatency per workload, the fleet's from the hosts' histograms merged (never averaged):");
    let emulated: Vec<&str> = hosts
        .iter()
        .filter(|h| h.emulated.is_some())
        .map(|h| h.name.as_str())
        .collect();
    if !emulated.is_empty() {
        say(&format!(
            "  emulated (behaviour, not speed, in each figure they are in): {}",
            emulated.join(", ")
        ));
    }
    let mut order: Vec<&Merged> = merged.iter().collect();
    order.sort_by(|a, b| {
        b.p99_spread
            .unwrap_or(1.0)
            .total_cmp(&a.p99_spread.unwrap_or(1.0))
    });
    let shown = if verbose {
        order.len()
    } else {
        SHOWN.min(order.len())
    };
    for m in &order[..shown] {
        say(&format!("  {}", m.workload));
        say(&format!("    {}", fleet_line(m)));
        if verbose {
            for h in &m.hosts {
                say(&format!(
                    "      {:<12} {:>10} ops/s (median of {}{})  p50 {:>9}  p99 {:>9}",
                    h.host,
                    format!("{:.0}", h.iops),
                    h.runs,
                    h.iops_spread
                        .map_or(String::new(), |s| format!(", spread {:.1}%", s * 100.0)),
                    fmt_ns(h.latency.p50_ns),
                    fmt_ns(h.latency.p99_ns),
                ));
            }
        }
    }
    if shown < order.len() {
        say(&format!(
            "  ... {} more workload(s) with -v; every figure in fleet.json",
            order.len() - shown
        ));
    }
}

/// One workload's fleet percentiles, its hosts' spread and the hosts beyond their own noise.
fn fleet_line(m: &Merged) -> String {
    let fleet = match &m.fleet {
        Some(f) => format!(
            "fleet p50 {} p99 {} ({} values)",
            fmt_ns(f.p50_ns),
            fmt_ns(f.p99_ns),
            thousands_u64(f.count)
        ),
        None => {
            "no fleet percentiles: a host's result carries no histogram (an older iolab wrote it)"
                .into()
        }
    };
    let (lo, hi) = m
        .hosts
        .iter()
        .fold((&m.hosts[0], &m.hosts[0]), |(l, h), x| {
            (
                if x.latency.p99_ns < l.latency.p99_ns {
                    x
                } else {
                    l
                },
                if x.latency.p99_ns > h.latency.p99_ns {
                    x
                } else {
                    h
                },
            )
        });
    if m.hosts.len() == 1 {
        return format!("{fleet}, {} only", lo.host);
    }
    let host = |h: &iolab_lab::fleet::HostRow| {
        format!(
            "{} ({}, {} values)",
            fmt_ns(h.latency.p99_ns),
            h.host,
            thousands_u64(h.latency.count)
        )
    };
    // Every host's the same: no lowest and highest to name.
    let mut line = match lo.latency.p99_ns == hi.latency.p99_ns {
        true => format!(
            "{fleet}\n    hosts' p99 {} on each of the {} hosts",
            fmt_ns(lo.latency.p99_ns),
            m.hosts.len()
        ),
        false => format!("{fleet}\n    hosts' p99 {} to {}", host(lo), host(hi)),
    };
    if let Some(s) = m.p99_spread {
        line.push_str(&format!(": {s:.1}x"));
    }
    if !m.outliers.is_empty() {
        let beyond: Vec<String> = m
            .outliers
            .iter()
            .map(|(h, r)| match r {
                r if *r < 0.01 => format!("{h} <0.01x"),
                r => format!("{h} {r:.2}x"),
            })
            .collect();
        line += &format!(
            "\n    IOPS off the hosts' median beyond their own noise: {}",
            beyond.join(", ")
        );
    }
    line
}

/// `DIR/fleet.json`: the hosts and the merged workloads.
pub fn save(dir: &Path, hosts: &[Host], merged: &[Merged]) -> Result<()> {
    let path = dir.join("fleet.json");
    let doc = serde_json::json!({ "hosts": hosts, "workloads": merged });
    let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    // As every file a command writes: new (never over a file or through a link planted in the results
    // directory), and whole or not at all (a full filesystem leaves no fleet.json cut short).
    iolab_report::export::dest::write_new("fleet summary", &path, text.as_bytes())?;
    say(&format!("\nresult: {}", path.display()));
    Ok(())
}

#[cfg(test)]
mod tests {
    use iolab_engine::measure::hist::Summary;
    use iolab_lab::fleet::{HostRow, Merged};

    fn host(name: &str, p99: f64) -> HostRow {
        HostRow {
            host: name.into(),
            runs: 1,
            iops: 1000.0,
            iops_spread: None,
            latency: Summary {
                p99_ns: p99,
                count: 10,
                ..Summary::default()
            },
        }
    }

    /// Hosts of one p99 are not called a range from one of them to itself; hosts that differ are named
    /// lowest and highest.
    #[test]
    fn the_hosts_p99_line_names_the_lowest_and_highest_or_says_they_are_one() {
        let mut m = Merged {
            workload: "w".into(),
            hosts: vec![host("a", 105.4), host("b", 105.4)],
            fleet: None,
            p99_spread: Some(1.0),
            outliers: Vec::new(),
        };
        let line = super::fleet_line(&m);
        assert!(
            line.contains("hosts' p99 105.4 ns on each of the 2 hosts"),
            "{line}"
        );
        m.hosts[1].latency.p99_ns = 210.0;
        let line = super::fleet_line(&m);
        assert!(
            line.contains("105.4 ns (a, 10 values) to 210.0 ns (b, 10 values)"),
            "{line}"
        );
    }
}
