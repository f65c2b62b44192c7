//! What this machine's memory can copy: the ceiling every throughput that moves its bytes through memory
//! stays under, so a figure beyond it can be called impossible (the plausibility rule of
//! `findings_compare.rs`; the Pi thesis's "dma" wrote 4 GB in 10 ms).
//!
//! Measured once per process ([`measured`]), cheaply and outside any timed span (suites and the survey ask
//! for it after their points ran): a few memcpy passes between two buffers twice the largest CPU cache
//! (at least 4 MiB, at most 256 MiB and an eighth of the available memory each; 64 MiB where the caches
//! are not listed; skipped by [`measured_within`] when no working set needs them; writing them first, which costs a page fault per 4 KiB page,
//! is most of the measurement's time), a few fills of one of them (a write-only stream, which a
//! copy from a cache-hot source approaches), and many copies of a 16 KiB buffer that stays in the L1
//! cache (no copy of any size is faster). The best pass of each counts: interruptions only slow a pass.
//! One thread; a workload on N CPUs may reach N times these rates, and the ceiling says so.

use serde::{Deserialize, Serialize};
use std::hint::black_box;
use std::sync::OnceLock;
use std::time::Instant;

/// Copy and fill rates of this machine, bytes per second, and how they were measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemCopy {
    /// memcpy between two buffers larger than the caches, best pass (null: not measured, and
    /// `beyond_caches_not_measured` says why).
    #[serde(default, deserialize_with = "measured_rate")]
    pub memory_copy_bps: Option<f64>,
    /// Filling such a buffer (memset), best pass (null: not measured).
    #[serde(default, deserialize_with = "measured_rate")]
    pub memory_fill_bps: Option<f64>,
    /// Size of each of the large buffers (null: none was allocated).
    #[serde(default, deserialize_with = "measured_size")]
    pub buffer_bytes: Option<u64>,
    /// Why the rates beyond the caches were not measured; absent where they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beyond_caches_not_measured: Option<String>,
    /// memcpy within the L1 cache (a small buffer copied over and over), best pass.
    pub cache_copy_bps: f64,
    pub cache_buffer_bytes: u64,
    /// The largest CPU cache listed under /sys/devices/system/cpu/cpu0/cache (None: not listed).
    pub largest_cache_bytes: Option<u64>,
    /// Passes of each measurement.
    pub passes: u32,
    /// How long the whole measurement took, seconds (none of it inside a timed span).
    pub took_s: f64,
    /// The emulator these rates were measured under ("tcg", "qemu-user"), when the CPU is emulated: then
    /// they are the emulator's speed, not the hardware's (absent in older results).
    #[serde(default)]
    pub emulated: Option<String>,
}

/// The ceiling for a workload, and what it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Ceiling {
    pub bps: f64,
    /// "copying beyond the caches" or "copying within the L1 cache", with the CPUs counted.
    pub what: String,
    /// The L1 copy rate `what` names (where it came out below the rates beyond the caches), for its cite.
    pub l1_named_bps: Option<f64>,
}

impl MemCopy {
    /// The fastest a workload whose data spans `working_set` bytes, on at most `cpus` CPUs at once, can
    /// move bytes through memory: the memory rate (the faster of copy and fill) when the working set is
    /// more than twice the largest cache, else the L1 copy rate; times the CPUs.
    pub fn ceiling(&self, working_set: Option<u64>, cpus: u32) -> Ceiling {
        let n = cpus.max(1);
        let on = if n == 1 {
            "one CPU".to_string()
        } else {
            format!("{n} CPUs")
        };
        let beyond = self.beyond_caches_bps();
        match (working_set, self.largest_cache_bytes, beyond) {
            // Without the beyond-cache rates (not measured: see `measured_within`) the L1 rate stands in,
            // a higher and so more lenient ceiling.
            (Some(ws), Some(c), Some(b)) if ws > 2 * c => Ceiling {
                bps: b * n as f64,
                what: format!(
                    "what {on} can write to memory beyond the caches (the data spans {})",
                    crate::units::fmt_size(ws)
                ),
                l1_named_bps: None,
            },
            // The L1 rate is the lenient bound; where it came out below the rates beyond the caches (an
            // emulated CPU translates a long copy better than many short ones) those stand in for it.
            _ if beyond.is_none_or(|b| self.cache_copy_bps >= b) => Ceiling {
                bps: self.cache_copy_bps * n as f64,
                what: format!("what {on} can copy even within the L1 cache"),
                l1_named_bps: None,
            },
            _ => Ceiling {
                bps: beyond.unwrap_or(self.cache_copy_bps) * n as f64,
                what: format!(
                    "what {on} can copy or fill at best (the L1 copy measured {}, below the rate beyond the \
                     caches)",
                    gbps(self.cache_copy_bps)
                ),
                l1_named_bps: Some(self.cache_copy_bps),
            },
        }
    }

    /// The faster of the copy and fill rates beyond the caches, where they were measured.
    pub fn beyond_caches_bps(&self) -> Option<f64> {
        Some(self.memory_copy_bps?.max(self.memory_fill_bps?))
    }

    /// One line for the output: the rates and how they were measured.
    pub fn describe(&self) -> String {
        let (Some(copy), Some(fill), Some(buffer)) = (
            self.memory_copy_bps,
            self.memory_fill_bps,
            self.buffer_bytes,
        ) else {
            let why = self
                .beyond_caches_not_measured
                .clone()
                .unwrap_or_else(|| not_measured_why(self.largest_cache_bytes).to_string());
            return format!(
                "this machine copies {} within the L1 cache ({} buffer), one CPU, best of {} passes, measured \
                 once in {:.0} ms outside any timed span (its rate beyond the caches was not measured: {why}, \
                 and the buffers would cost memory)",
                gbps(self.cache_copy_bps),
                crate::units::fmt_size(self.cache_buffer_bytes),
                self.passes,
                self.took_s * 1e3
            );
        };
        // Free memory or iolab's own limit may have capped the buffers below what the caches asked for:
        // then say which (below twice the largest cache, the rate is partly a cache rate).
        let asked = buffer_size(self.largest_cache_bytes, None) as u64;
        let who = if buffer < asked {
            "free memory"
        } else {
            "iolab's limit per buffer"
        };
        let beyond = match self.largest_cache_bytes {
            Some(c) if buffer < 2 * c => format!(
                "with buffers smaller than twice its largest cache ({}: {who} capped them), partly a \
                 cache rate,",
                crate::units::fmt_size(c),
            ),
            _ if buffer < asked => format!(
                "beyond its caches (with buffers of less than {}: {who} capped them)",
                crate::units::fmt_size(asked)
            ),
            _ => "beyond its caches".to_string(),
        };
        format!(
            "this machine copies {} {beyond} (memcpy of {} buffers; fill {}) and {} within the L1 cache \
             ({} buffer), one CPU, best of {} passes each, measured once in {:.0} ms outside any timed span",
            gbps(copy),
            crate::units::fmt_size(buffer),
            gbps(fill),
            gbps(self.cache_copy_bps),
            crate::units::fmt_size(self.cache_buffer_bytes),
            self.passes,
            self.took_s * 1e3
        )
    }
}

/// Why the rates beyond the caches were not measured, where caches of at most `llc` bytes are listed.
fn not_measured_why(llc: Option<u64>) -> &'static str {
    if llc.is_some() {
        "no working set here spans more than twice its largest cache"
    } else {
        "this machine lists no CPU caches, so no working set is known to lie beyond them"
    }
}

/// Records written before the rates beyond the caches could be absent held 0 for "not measured": no
/// measured rate or buffer is 0, so 0 reads back as absent.
fn measured_rate<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.filter(|&v| v > 0.0))
}

fn measured_size<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Ok(Option::<u64>::deserialize(d)?.filter(|&v| v > 0))
}

/// "9.8 GB/s" (decimal gigabytes, as device and memory rates are usually given).
pub fn gbps(bps: f64) -> String {
    if bps >= 1e9 {
        format!("{:.1} GB/s", bps / 1e9)
    } else {
        format!("{:.0} MB/s", bps / 1e6)
    }
}

static FULL: OnceLock<MemCopy> = OnceLock::new();

/// The machine's rates, measured at the first call of the process.
pub fn measured() -> &'static MemCopy {
    FULL.get_or_init(|| measure(true))
}

/// The rates a comparison of working sets of at most `max_working_set` bytes needs: where none spans
/// more than twice the largest cache, or where the caches are not listed (many ARM boards, QEMU's arm64
/// guests), the ceiling is the L1 rate alone ([`MemCopy::ceiling`]), and the two large buffers (twice
/// that cache each, 64 MiB each where it is unknown: 132 MiB of peak memory for the main job in an arm64
/// guest) are not allocated.
pub fn measured_within(max_working_set: u64) -> MemCopy {
    if let Some(m) = FULL.get() {
        return m.clone();
    }
    if needs_beyond_caches(largest_cache(), max_working_set) {
        measured().clone()
    } else {
        measure(false)
    }
}

/// Whether a working set of `max_working_set` bytes may lie beyond caches of which the largest is `llc`
/// (and [`MemCopy::ceiling`] would use the rate beyond them): never where no cache is listed.
fn needs_beyond_caches(llc: Option<u64>, max_working_set: u64) -> bool {
    llc.is_some_and(|c| max_working_set > 2 * c)
}

/// The most each large buffer takes: a VM can list its host's whole L3 (300 MiB on this project's build
/// machine), which twice over still fits.
const MAX_BUFFER: u64 = 1 << 30;

/// Each of the two large buffers: twice the largest cache (at least 4 MiB, at most [`MAX_BUFFER`]; 64 MiB
/// where the caches are not listed, as on many ARM boards), and at most an eighth of `available` memory.
fn buffer_size(llc: Option<u64>, available: Option<u64>) -> usize {
    let n = llc.map_or(64 << 20, |c| (c * 2).clamp(4 << 20, MAX_BUFFER));
    let cap = available.map_or(u64::MAX, |a| (a / 8).max(1 << 20));
    n.min(cap) as usize
}

/// "32768K" as in sysfs cache sizes.
fn parse_cache_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mul) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 1u64 << 10),
        'M' => (&s[..s.len() - 1], 1 << 20),
        'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mul)
}

fn largest_cache() -> Option<u64> {
    let dir = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()?;
    dir.filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read_to_string(e.path().join("size")).ok())
        .filter_map(|s| parse_cache_size(&s))
        .max()
}

const PASSES: u32 = 3;
const CACHE_BUF: usize = 16 << 10;

/// Best bytes per second of `PASSES` runs of `f`, each moving `bytes`.
fn best(bytes: usize, mut f: impl FnMut(u32)) -> f64 {
    let mut best = f64::MAX;
    for pass in 0..PASSES {
        let t = Instant::now();
        f(pass);
        best = best.min(t.elapsed().as_secs_f64());
    }
    bytes as f64 / best.max(1e-9)
}

fn measure(beyond_caches: bool) -> MemCopy {
    let start = Instant::now();
    let llc = largest_cache();
    let (n, memory_copy_bps, memory_fill_bps) = if beyond_caches {
        let n = buffer_size(llc, crate::mem::meminfo("MemAvailable"));
        let (c, f) = large_copy(n);
        (Some(n as u64), Some(c), Some(f))
    } else {
        (None, None, None)
    };
    let small = vec![0x5au8; CACHE_BUF];
    let mut small_dst = vec![0u8; CACHE_BUF];
    let reps = (64usize << 20) / CACHE_BUF;
    let cache_copy_bps = best(reps * CACHE_BUF, |_| {
        for _ in 0..reps {
            small_dst.copy_from_slice(black_box(&small));
            black_box(&mut small_dst);
        }
    });
    MemCopy {
        memory_copy_bps,
        memory_fill_bps,
        buffer_bytes: n,
        beyond_caches_not_measured: n.is_none().then(|| not_measured_why(llc).to_string()),
        cache_copy_bps,
        cache_buffer_bytes: CACHE_BUF as u64,
        largest_cache_bytes: llc,
        passes: PASSES,
        took_s: start.elapsed().as_secs_f64(),
        emulated: crate::emulation::guest::accelerator()
            .filter(|a| crate::emulation::guest::is_emulated(Some(a))),
    }
}

/// Copy and fill rates between two buffers of `n` bytes.
fn large_copy(n: usize) -> (f64, f64) {
    // Both buffers written before timing, so no pass pays the first-touch page faults.
    let src = vec![0x5au8; n];
    let mut dst = vec![0xa5u8; n];
    let copy = best(n, |_| {
        dst.copy_from_slice(black_box(&src));
        black_box(&mut dst);
    });
    let fill = best(n, |pass| {
        dst.fill(black_box(pass as u8));
        black_box(&mut dst);
    });
    (copy, fill)
}

/// Rates made up for tests (here and in the lab's rules): 10 GB/s copy, 15 GB/s fill, 50 GB/s in L1, a
/// 32 MiB cache.
#[doc(hidden)]
pub fn sample() -> MemCopy {
    MemCopy {
        memory_copy_bps: Some(10e9),
        memory_fill_bps: Some(15e9),
        buffer_bytes: Some(128 << 20),
        beyond_caches_not_measured: None,
        cache_copy_bps: 50e9,
        cache_buffer_bytes: CACHE_BUF as u64,
        largest_cache_bytes: Some(32 << 20),
        passes: PASSES,
        took_s: 0.1,
        emulated: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_buffers_scale_to_the_cache_and_free_memory() {
        // A Pi 4's 1 MiB L2: 4 MiB each; this kind of server's 32 MiB L3: 64 MiB each.
        assert_eq!(buffer_size(Some(1 << 20), None), 4 << 20);
        assert_eq!(buffer_size(Some(32 << 20), None), 64 << 20);
        // A VM listing its host's 300 MiB L3: 600 MiB each; 1 GiB at most.
        assert_eq!(buffer_size(Some(300 << 20), None), 600 << 20);
        assert_eq!(buffer_size(Some(2 << 30), None), 1 << 30);
        // No caches listed: 64 MiB, unless free memory is short (a 256 MiB board: 32 MiB each).
        assert_eq!(buffer_size(None, None), 64 << 20);
        assert_eq!(buffer_size(None, Some(256 << 20)), 32 << 20);
    }

    #[test]
    fn without_beyond_cache_rates_the_l1_rate_is_the_ceiling() {
        let mut m = sample();
        m.buffer_bytes = None;
        m.memory_copy_bps = None;
        m.memory_fill_bps = None;
        let c = m.ceiling(Some(1 << 30), 1);
        assert_eq!(c.bps, m.cache_copy_bps);
        assert!(m.describe().contains("not measured"), "{}", m.describe());
    }

    #[test]
    fn an_l1_rate_below_the_memory_rate_is_never_the_lenient_bound() {
        // A TCG guest's rates as suites recorded them: 1.2 GB/s "within L1", 4.1 GB/s beyond the caches.
        let mut m = sample();
        m.cache_copy_bps = 1.2e9;
        m.memory_copy_bps = Some(4.1e9);
        m.memory_fill_bps = Some(3.0e9);
        let c = m.ceiling(None, 1);
        assert_eq!(c.bps, 4.1e9);
        assert!(
            c.what.contains("the L1 copy measured 1.2 GB/s"),
            "{}",
            c.what
        );
        assert_eq!(
            c.l1_named_bps,
            Some(1.2e9),
            "the figure named, for its cite"
        );
        assert_eq!(m.ceiling(Some(4 << 20), 2).bps, 8.2e9);
        m.cache_copy_bps = 5e9;
        assert_eq!(m.ceiling(None, 1).l1_named_bps, None);
    }

    #[test]
    fn large_buffers_only_where_a_working_set_lies_beyond_listed_caches() {
        // The main job's 4 MiB files: beyond a Pi's 1 MiB L2, within a server's 32 MiB L3, and nothing
        // is known where no cache is listed (the ceiling is then the L1 rate whatever is measured).
        assert!(needs_beyond_caches(Some(1 << 20), 4 << 20));
        assert!(!needs_beyond_caches(Some(32 << 20), 4 << 20));
        assert!(!needs_beyond_caches(None, 4 << 20));
        assert!(!needs_beyond_caches(None, 1 << 40));
    }

    #[test]
    fn cache_sizes_parse() {
        assert_eq!(parse_cache_size("32768K\n"), Some(32 << 20));
        assert_eq!(parse_cache_size("2M"), Some(2 << 20));
        assert_eq!(parse_cache_size("512"), Some(512));
        assert_eq!(parse_cache_size("x"), None);
    }

    #[test]
    fn the_ceiling_depends_on_the_working_set_and_the_cpus() {
        let m = sample();
        // Beyond twice the cache: the faster of copy and fill.
        let c = m.ceiling(Some(1 << 30), 1);
        assert_eq!(c.bps, 15e9);
        assert!(c.what.contains("beyond the caches"), "{}", c.what);
        // Within it, or unknown: the L1 copy rate, per CPU.
        assert_eq!(m.ceiling(Some(4 << 20), 1).bps, 50e9);
        let c = m.ceiling(None, 2);
        assert_eq!(c.bps, 100e9);
        assert!(
            c.what.contains("2 CPUs") && c.what.contains("L1"),
            "{}",
            c.what
        );
    }

    #[test]
    fn the_measurement_follows_this_machines_caches_and_memory() {
        let m = measured();
        let (copy, fill) = (m.memory_copy_bps.unwrap(), m.memory_fill_bps.unwrap());
        assert!(copy > 0.0 && fill > 0.0 && m.cache_copy_bps > 0.0, "{m:?}");
        assert_eq!(m.beyond_caches_not_measured, None);
        // Measured once: the same figures on a second call.
        assert_eq!(measured() as *const MemCopy, m as *const MemCopy);
        // The buffers are what this machine's own listed caches ask for (twice the largest, 64 MiB where
        // none is listed), or less where its free memory capped them, and the description says which.
        assert_eq!(m.largest_cache_bytes, largest_cache());
        let buffer = m.buffer_bytes.unwrap();
        let asked = buffer_size(m.largest_cache_bytes, None) as u64;
        assert!((1 << 20..=asked).contains(&buffer), "{buffer} of {asked}");
        let d = m.describe();
        let said = if buffer < asked {
            d.contains("free memory capped them")
        } else {
            d.contains("beyond its caches") || d.contains("iolab's limit per buffer capped them")
        };
        assert!(said, "{buffer} of {asked}: {d}");
    }

    #[test]
    fn buffers_capped_by_free_memory_say_so_with_or_without_listed_caches() {
        let mut m = sample();
        m.buffer_bytes = Some(32 << 20);
        assert!(
            m.describe().contains("(32 MiB: free memory capped them)"),
            "{}",
            m.describe()
        );
        m.largest_cache_bytes = None;
        let d = m.describe();
        assert!(
            d.contains("less than 64 MiB: free memory capped them"),
            "{d}"
        );
        m.buffer_bytes = Some(64 << 20);
        assert!(
            m.describe()
                .contains("copies 10.0 GB/s beyond its caches (memcpy"),
            "{}",
            m.describe()
        );
    }

    #[test]
    fn rates_not_measured_are_null_with_the_reason_beside_them() {
        let m = measure(false);
        assert!(m.cache_copy_bps > 0.0);
        let v = serde_json::to_value(&m).unwrap();
        for k in ["memory_copy_bps", "memory_fill_bps", "buffer_bytes"] {
            assert!(v[k].is_null(), "{k}: {v}");
        }
        let why = v["beyond_caches_not_measured"].as_str().unwrap();
        assert_eq!(why, not_measured_why(m.largest_cache_bytes));
        assert!(m.describe().contains(why), "{}", m.describe());
        // Read back as written; a record of before, with 0 for "not measured", reads as not measured.
        assert_eq!(serde_json::from_value::<MemCopy>(v.clone()).unwrap(), m);
        let mut old = v;
        old["memory_copy_bps"] = 0.0.into();
        old["memory_fill_bps"] = 0.0.into();
        old["buffer_bytes"] = 0.into();
        old.as_object_mut()
            .unwrap()
            .remove("beyond_caches_not_measured");
        let read: MemCopy = serde_json::from_value(old).unwrap();
        assert_eq!((read.memory_copy_bps, read.buffer_bytes), (None, None));
        assert_eq!(read.ceiling(Some(1 << 40), 1).bps, m.cache_copy_bps);
        // Measured rates are written as numbers, and the reason is absent.
        let v = serde_json::to_value(sample()).unwrap();
        assert_eq!(v["memory_copy_bps"], 10e9);
        assert!(v.get("beyond_caches_not_measured").is_none(), "{v}");
    }
}
