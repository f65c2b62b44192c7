//! Where the CPU time goes (`--profile`): sampled call stacks of the process and its kernel helper
//! threads, named, grouped by what the code does, and folded for a flame graph.
//!
//! Sampling: perf_event_open(2) of cycles where the hardware counts them, else cpu-clock (a software
//! timer; this VM has no hardware counters), `--profile-hz` samples per second of each running thread, in
//! frequency mode, with kernel and user call chains, on this thread (pid 0) with `inherit`, so the threads
//! created after it, iolab's workers and peers and io_uring's io-wq workers and SQPOLL thread, are sampled
//! too. The kernel does not let an inherited per-task event with cpu -1 be mmapped, so there is one event
//! and one ring buffer per online CPU (as `perf record` does). The events are opened disabled before the
//! pass sets up its target (so its peer threads inherit them), enabled at the start of the timed span and
//! disabled at its end, by the same code that takes the counters' snapshots (runner/threads.rs); the rings
//! are read after the pass. Nobody reads them during the pass, so a ring that fills drops samples: the
//! kernel counts them (read_format PERF_FORMAT_LOST, and PERF_RECORD_LOST) and the result says how many.
//!
//! Symbols (`symbols.rs`, the blazesym crate): kernel addresses from /proc/kallsyms, user addresses from
//! this process's mappings and the ELF symbols of iolab's binary, glibc and the vDSO. Grouping
//! (`groups.rs`): a rule table of function-name patterns, first match from the leaf outwards. Figures
//! (`figures.rs`): group shares, the top functions by self and by inclusive share, the folded stacks;
//! `facts.rs` the few numbers of them the findings look at.

mod facts;
mod figures;
pub mod groups;
mod records;
pub mod share;
mod symbols;

pub use facts::{thread_focus, ProfileFacts};
pub use figures::thread_label;
pub use share::{ProfileFigures, ProfileShare};
pub use symbols::kallsyms_readable;

use crate::measure::counters::open_reason;
use crate::measure::cpu::TaskTimes;

use iolab_sys as sys;
use iolab_sys::{perf, PerfRing, SamplerAttr};
use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Mutex;

/// Data pages of each CPU's ring buffer asked for first (16 MiB with 4 KiB pages: about 50 s of one busy
/// thread's samples at 997 Hz with 30-frame chains); halved while the locked-memory limit refuses it.
const RING_PAGES: usize = 4096;
const RING_PAGES_MIN: usize = 8;

/// The events tried, best first.
const EVENTS: [(&str, u32, u32); 2] = [
    (
        "cycles",
        perf::PERF_TYPE_HARDWARE,
        perf::PERF_COUNT_HW_CPU_CYCLES,
    ),
    (
        "cpu-clock",
        perf::PERF_TYPE_SOFTWARE,
        perf::PERF_COUNT_SW_CPU_CLOCK,
    ),
];

/// Open sampling events, one per online CPU, with their ring buffers.
pub struct Sampler {
    events: Vec<(OwnedFd, PerfRing)>,
    /// "cycles" or "cpu-clock".
    event: &'static str,
    hz: u32,
    notes: Vec<String>,
    /// tid -> name of the process's threads at the end of the sampled span.
    names: Mutex<BTreeMap<u32, String>>,
}

/// The online CPUs (/sys/devices/system/cpu/online, "0-3,6"); all the process may use if unreadable.
pub(crate) fn online_cpus() -> Vec<i32> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        if let (Ok(a), Ok(b)) = (a.parse::<i32>(), b.parse::<i32>()) {
            cpus.extend(a..=b);
        }
    }
    if cpus.is_empty() {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        cpus.extend(0..n as i32);
    }
    cpus
}

/// The best event this machine lets iolab sample, tried on `cpu`, and what was given up on the way.
fn choose(hz: u32, cpu: i32) -> Result<(SamplerAttr, &'static str, Vec<String>), String> {
    let mut notes = Vec::new();
    let mut why = String::new();
    'domain: for kernel in [true, false] {
        for (name, type_, config) in EVENTS {
            match try_open(hz, cpu, kernel, type_, config) {
                Ok(a) => {
                    if !a.read_lost {
                        notes.push(
                            "this kernel cannot report lost samples by read (PERF_FORMAT_LOST, Linux 6.0): \
                             only PERF_RECORD_LOST counts them"
                                .into(),
                        );
                    }
                    return Ok((a, name, notes));
                }
                Err(errno) => {
                    why = open_reason(errno);
                    if matches!(errno, libc::EACCES | libc::EPERM) && kernel {
                        // Not permitted for any event: the kernel part is what is refused.
                        notes.push(format!(
                            "kernel not sampled: sampling kernel code is {why}; user space only"
                        ));
                        continue 'domain;
                    }
                    if name == "cycles" {
                        notes.push(format!(
                            "cycles: {why}; sampled cpu-clock (a software timer) instead"
                        ));
                    }
                }
            }
        }
    }
    Err(format!("sampling unavailable: {why}"))
}

/// Opens one sampling event to see that it can be (and closes it): with PERF_FORMAT_LOST, else without
/// (a kernel before 6.0 refuses it with EINVAL). The errno on failure.
fn try_open(hz: u32, cpu: i32, kernel: bool, type_: u32, config: u32) -> Result<SamplerAttr, i32> {
    let mut a = SamplerAttr {
        type_,
        config: config as u64,
        freq_hz: hz as u64,
        kernel,
        read_lost: true,
    };
    match sys::perf_event_open_sampler(&a, cpu) {
        Ok(_) => Ok(a),
        Err(e) if e.errno == libc::EINVAL => {
            a.read_lost = false;
            sys::perf_event_open_sampler(&a, cpu)
                .map(|_| a)
                .map_err(|e| e.errno)
        }
        Err(e) => Err(e.errno),
    }
}

impl Sampler {
    /// Opens the sampling events, disabled, on this thread (call it before the pass creates its threads).
    /// `Err` says why sampling is unavailable here.
    pub fn open(hz: u32) -> Result<Sampler, String> {
        let cpus = online_cpus();
        let (attr, event, mut notes) = choose(hz, cpus[0])?;
        let mut events = Vec::with_capacity(cpus.len());
        let mut pages = RING_PAGES;
        for &cpu in &cpus {
            let fd = sys::perf_event_open_sampler(&attr, cpu)
                .map_err(|e| format!("sampling on CPU {cpu}: {}", open_reason(e.errno)))?;
            let ring = loop {
                match PerfRing::map(fd.as_raw_fd(), pages) {
                    Ok(r) => break r,
                    Err(e) if pages > RING_PAGES_MIN => {
                        let _ = e;
                        pages /= 2;
                    }
                    Err(e) => {
                        return Err(format!(
                            "cannot map a sampling ring buffer: {}",
                            sys::errno_name(e.errno)
                        ))
                    }
                }
            };
            events.push((fd, ring));
        }
        if pages < RING_PAGES {
            notes.push(format!(
                "ring buffers limited to {} KiB per CPU by the locked-memory limit (perf_event_mlock_kb, \
                 RLIMIT_MEMLOCK): a long pass may lose samples",
                events.iter().map(|e| e.1.data_size()).min().unwrap_or(0) / 1024
            ));
        }
        Ok(Sampler {
            events,
            event,
            hz,
            notes,
            names: Mutex::new(BTreeMap::new()),
        })
    }

    /// Starts sampling (the start of the timed span): this thread and every thread created since.
    pub fn start(&self) {
        for (fd, _) in &self.events {
            let _ = sys::perf_event_enable(fd.as_raw_fd(), true);
        }
    }

    /// Stops sampling (the end of the timed span).
    pub fn stop(&self) {
        for (fd, _) in &self.events {
            let _ = sys::perf_event_enable(fd.as_raw_fd(), false);
        }
    }

    /// Remembers the names of the process's threads (read at the end of the span, while the workers and
    /// io_uring's helpers still live), for samples whose thread sent no PERF_RECORD_COMM.
    pub fn note_threads(&self, tasks: &[TaskTimes]) {
        let mut names = self.names.lock().unwrap_or_else(|p| p.into_inner());
        for t in tasks {
            names.insert(t.tid as u32, t.comm.clone());
        }
    }

    /// Reads the rings, names the addresses and makes the figures; `pass` is "separate" or "inline".
    pub fn finish(mut self, pass: &str) -> ProfileFigures {
        let mut parsed = records::Parsed::default();
        let mut lost_read = 0;
        let mut buf = Vec::new();
        for (fd, ring) in &mut self.events {
            buf.clear();
            ring.drain_into(&mut buf);
            records::parse(&buf, &mut parsed);
            if let Ok((_, lost)) = sys::perf_read_lost(fd.as_raw_fd()) {
                lost_read += lost;
            }
        }
        let ring_kib = self.events.first().map_or(0, |e| e.1.data_size() / 1024);
        self.events.clear();
        let mut threads = self.names.into_inner().unwrap_or_else(|p| p.into_inner());
        for (tid, name) in &parsed.comms {
            threads.entry(*tid).or_insert_with(|| name.clone());
        }
        let syms = symbols::resolve(parsed.chains.keys().flat_map(|(_, c)| c.iter()));
        let s = figures::shares(&parsed, &syms, &threads);
        let lost = lost_read.max(parsed.lost);
        let mut notes = self.notes;
        notes.extend(s.notes);
        notes.extend(pass_notes(pass, &parsed, lost, ring_kib));
        let mut p = ProfileFigures {
            pass: pass.into(),
            event: self.event.into(),
            frequency_hz: self.hz as u64,
            samples: s.samples,
            lost,
            unsymbolized: syms.unsymbolized,
            groups: s.groups,
            top_self: s.top_self,
            top_inclusive: s.top_inclusive,
            folded: s.folded,
            notes,
            shares: None,
        };
        p.shares = Some(facts::ProfileFacts::of(&p).shares());
        p
    }
}

fn pass_notes(pass: &str, parsed: &records::Parsed, lost: u64, ring_kib: usize) -> Vec<String> {
    let mut notes = Vec::new();
    notes.push(match pass {
        "inline" => "sampled the timed pass itself (--profile inline): its timings include the cost of sampling".into(),
        _ => "sampled a separate, untimed pass of the same workload, run just before the timed pass".to_string(),
    });
    if lost > 0 {
        notes.push(format!(
            "the kernel dropped {lost} samples: a ring buffer ({ring_kib} KiB per CPU) filled; a lower \
             --profile-hz or a shorter run keeps them all"
        ));
    }
    if parsed.malformed > 0 {
        notes.push(format!(
            "{} records in the ring buffers were cut short and skipped",
            parsed.malformed
        ));
    }
    if parsed.samples() == 0 {
        notes.push(
            "no samples: the span was shorter than a sampling period, or the threads slept".into(),
        );
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_thread_created_after_opening_is_sampled_and_named() {
        let s = match Sampler::open(997) {
            Ok(s) => s,
            Err(why) => {
                println!("SKIPPED: {why}");
                return;
            }
        };
        s.start();
        let h = std::thread::Builder::new()
            .name("prof-test-7".into())
            .spawn(|| {
                // 300 ms of this thread's own CPU time (a busy machine stretches the wall time; samples
                // count CPU time), bounded at 20 s of wall time.
                let f = std::fs::File::create("/dev/null").unwrap();
                let t = std::time::Instant::now();
                let cpu0 = iolab_sys::thread_cpu_s();
                let buf = [0u8; 4096];
                while iolab_sys::thread_cpu_s() - cpu0 < 0.3
                    && t.elapsed() < std::time::Duration::from_secs(20)
                {
                    use std::io::Write;
                    (&f).write_all(&buf).unwrap();
                }
            })
            .unwrap();
        h.join().unwrap();
        s.stop();
        let p = s.finish("separate");
        assert!(
            p.samples > 100,
            "300 ms of CPU at 997 Hz: {} samples",
            p.samples
        );
        assert!(
            p.folded.iter().any(|l| l.starts_with("prof-test;")),
            "the worker is named by its PERF_RECORD_COMM: {:?}",
            &p.folded[..p.folded.len().min(5)]
        );
        if kallsyms_readable().is_ok()
            && !p.notes.iter().any(|n| n.starts_with("kernel not sampled"))
        {
            assert!(
                p.top_inclusive
                    .iter()
                    .any(|f| f.kernel && f.name.contains("write")),
                "{:?}",
                p.top_inclusive
            );
        }
    }
}
