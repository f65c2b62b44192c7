//! `--provided-buffers`: reads into buffers the kernel picks. The runner's read buffers are handed to the
//! kernel in a buffer ring (IORING_REGISTER_PBUF_RING, Linux 5.19+); each read is sent without an
//! address, with IOSQE_BUFFER_SELECT and the ring's buffer group, and the kernel takes a buffer from the
//! ring when it issues the read (a file's or block device's read keeps it, even one that reads nothing at
//! the end of the file or fails after it was issued). Its completion names the buffer (IORING_CQE_F_BUFFER and the
//! buffer id in the upper 16 bits of its flags), which iolab puts back at the ring's tail at once: a
//! server reading sockets hands the buffer to its parser first, a step iolab leaves out.
//!
//! The ring holds one buffer per request in flight (--qd, rounded up to a power of two as the kernel
//! asks), so a read never finds it empty. The option, its check and its figures are declared here and
//! nowhere else: the option table, the spec's checks and the result take them as they come.

use super::super::api::ThreadCtx;
use crate::error::{Error, Result};
use crate::spec::method_opts::{Figure, Probe, PROBES, SPEC_CHECKS};
use crate::spec::options::{Applies, Group, Opt, Ty, METHOD_OPTIONS};
use crate::spec::{OpKind, RingDesign, RunsOn, Spec};
use crate::target_kind::TargetKind;
use io_uring::types::BufRingEntry;
use iolab_sys as sys;
use linkme::distributed_slice;
use std::sync::atomic::{AtomicU16, Ordering};

/// The option's key, `--provided-buffers`.
pub(super) const KEY: &str = "provided-buffers";
/// The buffer group of a thread's ring (a per-thread ring has one group: its own).
pub(super) const GROUP: u16 = 0;
/// The most buffers one ring may hold (the kernel's limit on a buffer ring's entries).
const MAX_ENTRIES: u32 = 32768;

#[distributed_slice(METHOD_OPTIONS)]
static OPTION: Opt = Opt {
    key: KEY,
    ty: Ty::Bool {
        on: Some(KEY),
        off: None,
    },
    value_name: "",
    group: Group::Method,
    applies: Applies::Ring,
    default: None,
    help: "Reads into buffers the kernel picks from a ring of them (IORING_REGISTER_PBUF_RING and \
           IOSQE_BUFFER_SELECT, Linux 5.19+): each read is sent without an address and its completion names \
           the buffer, which iolab puts back at once. Reads only, on a ring per thread, over a file or a \
           block device; not with --fixed-bufs, --vectored or --nop-requests",
};

#[distributed_slice(PROBES)]
static PROBE: Probe = Probe {
    name: "io_uring --provided-buffers read (PBUF_RING, 5.19+)",
    // The method's name as its INFO (mod.rs) spells it: this file imports nothing of mod.rs, which uses it.
    spec: &[("method", "io_uring"), ("op", "read"), (KEY, "true")],
};

#[distributed_slice(SPEC_CHECKS)]
static CHECK: fn(&Spec, RunsOn) -> Result<()> = check;

/// Refuses what the kernel cannot do with provided buffers, or what iolab does not pair with them.
fn check(s: &Spec, _: RunsOn) -> Result<()> {
    if !s.method_opts.flag(KEY) {
        return Ok(());
    }
    let flag = format!("--{KEY}");
    let o = &s.ring;
    let refused = if s.op != OpKind::Read {
        Some("the kernel picks a buffer for a read; a write names its own: use --op read")
    } else if o.design != RingDesign::PerThread {
        Some("the buffer ring is a thread's own: use the per-thread ring (--ring per-thread)")
    } else if o.fixed_bufs || o.vectored {
        Some(
            "a read takes a buffer from the ring or names one (--fixed-bufs, --vectored), not both",
        )
    } else if o.nop_requests {
        Some("a NOP reads nothing into a buffer: drop --nop-requests")
    } else if TargetKind::stream_named(&s.target).is_some() {
        Some("a file or a block device only: a stream's partial reads continue in the buffer they began in")
    } else if s.qd > MAX_ENTRIES {
        Some("a buffer ring holds at most 32768 buffers, one per request in flight: lower --qd")
    } else {
        None
    };
    match refused {
        Some(why) => Err(Error::usage(flag, why)),
        None => Ok(()),
    }
}

/// Is `--provided-buffers` on for this thread's run?
pub(super) fn asked(ctx: &ThreadCtx) -> bool {
    ctx.spec.method_opts.flag(KEY)
}

/// The kernel's memory above its direct map (a 32-bit kernel's HIGHMEM: `HighTotal` in /proc/meminfo),
/// in kB, where it has some.
fn high_memory_kb() -> Option<u64> {
    let m = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb = m.lines().find_map(|l| {
        let v = l.strip_prefix("HighTotal:")?;
        v.trim().trim_end_matches("kB").trim().parse::<u64>().ok()
    })?;
    (kb > 0).then_some(kb)
}

/// A thread's buffer ring: the runner's buffers by buffer id, the ring's memory, and what the kernel
/// picked.
pub(super) struct BufRing {
    /// The ring's entries (`struct io_uring_buf`, 16 bytes each), page aligned; the kernel reads them.
    map: sys::Mapping,
    mask: u16,
    /// The tail as iolab counts it; the kernel sees it at each `publish`.
    tail: u16,
    /// Each buffer id's address and length.
    bufs: Vec<(u64, u32)>,
    /// Completions that named a buffer.
    taken: u64,
    /// Completions of a read that named none (refused before a buffer was taken: ENOBUFS, a bad request).
    without: u64,
    /// Which buffers the kernel picked at least once.
    picked: Vec<bool>,
}

// SAFETY: the mapping and the buffers it points to are used by the one worker thread that owns the method.
unsafe impl Send for BufRing {}

impl BufRing {
    /// Puts `bufs` (the runner's read buffers, by slot) in a new buffer ring and registers it with `ring`.
    pub(super) fn register(ring: &io_uring::IoUring, bufs: &[(*mut u8, usize)]) -> Result<BufRing> {
        if let Some(kb) = high_memory_kb() {
            return Err(Error::Unavailable(format!(
                "on this kernel: --{KEY}: a 32-bit kernel with high memory ({kb} kB, /proc/meminfo's \
                 HighTotal) may place the buffer ring in a page it has not mapped, and Linux 6.1 then \
                 faults in io_buffer_select (seen in an armv7 guest); iolab registers no buffer ring on such a kernel"
            )));
        }
        let entries = (bufs.len() as u32).next_power_of_two().max(1);
        if bufs.len() as u32 > MAX_ENTRIES || bufs.iter().any(|b| b.1 > u32::MAX as usize) {
            return Err(Error::usage(
                format!("--{KEY}"),
                "more buffers, or larger ones, than a buffer ring holds",
            ));
        }
        let bytes = entries as usize * std::mem::size_of::<BufRingEntry>();
        let map = sys::Mapping::anonymous(bytes)?;
        let mut r = BufRing {
            map,
            mask: (entries - 1) as u16,
            tail: 0,
            bufs: bufs.iter().map(|b| (b.0 as u64, b.1 as u32)).collect(),
            taken: 0,
            without: 0,
            picked: vec![false; bufs.len()],
        };
        for bid in 0..bufs.len() {
            r.put(bid as u16);
        }
        r.publish();
        // SAFETY: the entries live in `map`, owned by this value and valid for as long as iolab uses the
        // ring. The kernel pins the ring's pages when it registers them (and unpins them when it tears the
        // group down with the ring, which may be after the ring's fd is closed and `map` unmapped), so the
        // kernel never reads memory given back to the process.
        unsafe {
            ring.submitter().register_buf_ring_with_flags(
                r.map.as_ptr() as u64,
                entries as u16,
                GROUP,
                0,
            )
        }
        .map_err(|e| {
            Error::sys_hint(
                sys::SysErr::new("io_uring_register", e.raw_os_error().unwrap_or(0)),
                format!(
                    "--{KEY}: the kernel refused a buffer ring (IORING_REGISTER_PBUF_RING, Linux 5.19+)"
                ),
            )
        })?;
        Ok(r)
    }

    /// Writes buffer `bid` into the entry at the tail (the kernel sees it at the next `publish`).
    #[inline(always)]
    fn put(&mut self, bid: u16) {
        let (addr, len) = self.bufs[bid as usize];
        let base = self.map.as_ptr().cast::<BufRingEntry>();
        // SAFETY: `tail & mask` < entries, all inside `map`; the kernel reads only entries up to the tail
        // it was last shown, and this one is past it.
        let e = unsafe { &mut *base.add((self.tail & self.mask) as usize) };
        e.set_addr(addr);
        e.set_len(len);
        e.set_bid(bid);
        self.tail = self.tail.wrapping_add(1);
    }

    /// Shows the kernel the entries put since the last time (a release store of the ring's tail).
    #[inline(always)]
    pub(super) fn publish(&self) {
        let base = self.map.as_ptr().cast::<BufRingEntry>();
        // SAFETY: the tail is the ring's first entry's last field, inside `map`, 2-byte aligned; the
        // kernel only reads it, so an atomic store is how both sides agree on it.
        let tail = unsafe { AtomicU16::from_ptr(BufRingEntry::tail(base).cast_mut()) };
        tail.store(self.tail, Ordering::Release);
    }

    /// A completion's flags: the buffer it names goes back into the ring.
    #[inline(always)]
    pub(super) fn give_back(&mut self, flags: u32) {
        match io_uring::cqueue::buffer_select(flags) {
            Some(bid) if (bid as usize) < self.bufs.len() => {
                self.taken += 1;
                self.picked[bid as usize] = true;
                self.put(bid);
            }
            _ => self.without += 1,
        }
    }

    /// The figures of the run: what the kernel took and how many of the buffers it used.
    pub(super) fn figures(&self) -> Vec<Figure> {
        let picked = self.picked.iter().filter(|p| **p).count();
        vec![
            Figure::new(
                "provided_buffers_taken",
                self.taken as f64,
                "reads",
                "whose completion named the buffer the kernel took from the ring (IORING_CQE_F_BUFFER)",
            ),
            Figure::new(
                "provided_buffers_without",
                self.without as f64,
                "reads",
                "whose completion named no buffer (refused before the kernel took one)",
            ),
            Figure::new(
                "provided_buffers_picked",
                picked as f64,
                "buffers",
                "picked by the kernel at least once (each thread's ring holds one per request in flight)",
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use crate::spec::{options, RawSpec};

    #[test]
    fn the_option_is_in_the_table_and_checked_with_the_spec() {
        let o = options::option(super::KEY).expect("linked into the option table");
        assert!(o.help.contains("IORING_REGISTER_PBUF_RING"));
        let read = RawSpec::new()
            .with("method", "io_uring")
            .with("target", "/tmp/x.dat")
            .with("op", "read")
            .with(super::KEY, true);
        let s = read.resolve().unwrap();
        assert!(s.method_opts.flag(super::KEY));
        let err = |r: RawSpec| r.resolve().unwrap_err().to_string();
        let w = err(read.clone().with("op", "write"));
        assert!(
            w.contains("--provided-buffers") && w.contains("--op read"),
            "{w}"
        );
        let f = err(read.clone().with("fixed-bufs", true));
        assert!(
            f.contains("--provided-buffers") && f.contains("--fixed-bufs"),
            "{f}"
        );
        let m = err(read.with("method", "psync"));
        assert!(m.contains("--provided-buffers"), "{m}");
    }
}
