//! Inside the guest: `iolab offload-guest` (hidden). It finds the ivshmem device, maps its BAR 2, checks
//! the header's magic and version, says it is ready, and then serves sessions until the host says quit:
//! for each, it forks a client that runs `client::run` on the session's plan, with the guest's transports
//! and channel, and writes the client's wait status into the header.

use super::layout::{decode_attacks, Header, Session, Words, MAGIC, REGION_OFF, VERSION};
use iolab_engine::error::{Error, Result};
use iolab_engine::offload::broker::Rings;
use iolab_engine::offload::client::{self, BrokerT, Channel, KernelT, Plan, Req, Transport, Work};
use iolab_engine::offload::ring::{self, SqCq};
use iolab_engine::offload::shm::{Ctl, Layout, PAGE};
use iolab_engine::pattern::Pattern;
use iolab_engine::spec::Doorbell;
use iolab_sys as sys;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// `iolab offload-guest`: the guest's session loop. Returns the exit status.
pub fn main() -> Result<i32> {
    let dev = crate::vm::ivshmem::find(Path::new("/sys/bus/pci/devices"))?;
    let map = dev.map()?;
    if (dev.bytes as usize) < REGION_OFF {
        return Err(Error::Runtime(format!(
            "the ivshmem BAR is {} bytes, too small for iolab's header",
            dev.bytes
        )));
    }
    // SAFETY: the mapping is the whole BAR, at least REGION_OFF bytes, alive until this function returns
    // (every session's client is reaped before).
    let hdr = unsafe { Header::at(map.as_ptr()) };
    let (magic, version) = (
        hdr.magic.load(Ordering::Acquire),
        hdr.version.load(Ordering::Acquire),
    );
    if magic != MAGIC || version != VERSION {
        return Err(Error::Runtime(format!(
            "the ivshmem device at {} holds magic {magic:#x} version {version}, not iolab's \
             {MAGIC:#x} version {VERSION}: the host and guest iolab differ, or it is another device",
            dev.dir.display()
        )));
    }
    eprintln!(
        "offload-guest: ivshmem at {}, {} MiB, iolab header version {version}",
        dev.dir.display(),
        dev.bytes >> 20
    );
    // The last session before this guest, read BEFORE saying ready: the host publishes the next one as soon
    // as it sees `guest_ready`, and a guest that read `session` after that would take the new session for
    // an old one and never serve it.
    let mut seen = hdr.session.0.load(Ordering::Acquire);
    hdr.guest_ready.store(std::process::id(), Ordering::Release);
    while hdr.quit.load(Ordering::Acquire) == 0 {
        let now = hdr.session.0.load(Ordering::Acquire);
        if now == seen {
            std::thread::sleep(Duration::from_micros(200));
            continue;
        }
        seen = now;
        // The plan numbered for this session (a copy that raced with the host's write would not be).
        let mut s = hdr.read_plan();
        while s.seq != now {
            std::thread::sleep(Duration::from_micros(200));
            s = hdr.read_plan();
        }
        let status = match sys::fork().map_err(Error::from)? {
            0 => serve(map.as_ptr(), dev.bytes as usize, hdr, &s),
            pid => sys::waitpid(pid).map_err(Error::from)?,
        };
        hdr.status
            .0
            .store((now << 32) | u64::from(status as u32), Ordering::Release);
    }
    Ok(0)
}

/// The forked client of one session: never returns.
fn serve(bar: *mut u8, bar_len: usize, hdr: &Header, s: &Session) -> ! {
    let layout = Layout {
        ring_len: s.ring_len as usize,
        slot: s.slot as usize,
        buffers: s.buffers as usize,
    };
    if REGION_OFF + layout.total() > bar_len {
        sys::exit_now(client::EXIT_PARENT_GONE);
    }
    // SAFETY: REGION_OFF + the layout's parts lie inside the BAR (checked just above).
    let (base, ring, data) = unsafe {
        let base = bar.add(REGION_OFF);
        (
            base,
            base.add(layout.ring_off()),
            base.add(layout.data_off()),
        )
    };
    // The guest's view of the cycle area (the BAR's, as every other address here): `client::run` records
    // each request and round trip into it, and the host reads them as a forked client's. Under TCG they are
    // the emulated TSC's; the host's figures say so.
    // SAFETY: inside the region (the layout's parts, checked above).
    let cycles = unsafe { base.add(layout.cycles_off()) };
    let plan = plan(s, &layout, base, data, cycles);
    let ch = Guest {
        hdr,
        words: Words::default(),
    };
    if s.path == 0 {
        // SAFETY: the host set the ring up in this memory with these parameters (NO_MMAP: the rings part,
        // then the SQEs, at the region's ring offset); the BAR stays mapped for this process's life.
        let ptrs = unsafe { ring::pointers(&s.params, ring, ring.add(s.rings_len as usize)) };
        let t = GuestKernelT {
            k: KernelT {
                q: SqCq::new(ptrs),
                bell: -1,
                sleep_first: s.sq_sleep != 0,
            },
            wake: &hdr.wake.0,
            guest_data: data as u64,
            host_data: s.host_data,
            data_len: layout.data_len() as u64,
        };
        client::run(plan, t, ch)
    } else {
        let t = BrokerT {
            rings: ring as *const Rings,
            tail: 0,
            head: 0,
            data: data as u64,
            doorbell: Doorbell::Spin,
            bell: -1,
        };
        client::run(plan, t, ch)
    }
}

fn plan(s: &Session, layout: &Layout, base: *mut u8, data: *mut u8, cycles: *mut u8) -> Plan {
    // SAFETY: inside the data area, whose size the layout gives.
    let scratch = unsafe { data.add(layout.buffers * layout.slot) };
    // SAFETY: the data area's last page, inside it as above.
    let attack_page = unsafe { data.add(layout.data_len() - PAGE) };
    Plan {
        work: match s.work {
            0 => Work::Nop,
            1 => Work::Read,
            _ => Work::Write,
        },
        bs: s.bs as usize,
        slot: layout.slot,
        batch: s.batch,
        total: s.total,
        pattern: if s.pattern == 0 {
            Pattern::Seq
        } else {
            Pattern::Rand
        },
        offset: s.offset,
        nblocks: s.nblocks,
        seed: s.seed,
        verify_reads: s.verify_reads != 0,
        fsync_every: s.fsync_every,
        fsync_end: s.fsync_end != 0,
        data,
        scratch,
        attack_page,
        // The host's address: only ever put into requests, never touched here.
        canary: s.host_canary as *mut u8,
        unrelated_fd: s.unrelated_fd,
        attacks: decode_attacks(s.attacks),
        ctl: base as *const Ctl,
        cycles,
        cycle_read: iolab_engine::offload::cycles::counter(),
        go_fd: -1,
        done_fd: -1,
        cpu: None,
        sandbox: false,
        parent: 0,
        // Refused for a guest partition (the guest's client writes every SQE field).
        no_user_data: false,
    }
}

/// The guest client's channel: the header's words. No system call: the guest's own kernel is the only
/// one it could call, and the host does not count it.
struct Guest<'a> {
    hdr: &'a Header,
    words: Words,
}

impl Channel for Guest<'_> {
    fn enter(&mut self, _p: &Plan, _ctl: &Ctl) -> std::result::Result<(), i32> {
        // The partition is the sandbox: the client is not a process of the host's kernel.
        Ok(())
    }
    fn say(&mut self, _ctl: &Ctl, b: u8) {
        self.words.send(&self.hdr.to_host.0, b);
    }
    fn hear(&mut self, _ctl: &Ctl) -> Option<u8> {
        loop {
            if let Some(b) = self.words.try_hear(&self.hdr.to_guest.0) {
                return Some(b);
            }
            if self.hdr.quit.load(Ordering::Relaxed) != 0 {
                return None;
            }
            std::hint::spin_loop();
        }
    }
    fn exit(&mut self, code: i32) -> ! {
        sys::exit_now(code)
    }
}

/// The kernel path from a guest: SQEs whose buffer addresses are the host's (the guest's addresses in
/// the data area translated), and a wake word instead of the eventfd doorbell.
struct GuestKernelT<'a> {
    k: KernelT,
    wake: &'a AtomicU32,
    guest_data: u64,
    host_data: u64,
    data_len: u64,
}

impl GuestKernelT<'_> {
    fn ring(&self, ctl: &Ctl) {
        ctl.doorbells.fetch_add(1, Ordering::Relaxed);
        self.wake.store(1, Ordering::SeqCst);
    }
}

impl Transport for GuestKernelT<'_> {
    #[inline(always)]
    fn push(&mut self, r: &Req) {
        let mut r = *r;
        // An address in the guest's view of the data area becomes the host's (the registered buffer);
        // any other (an attack's host canary address) goes as it is.
        if r.addr >= self.guest_data && r.addr < self.guest_data + self.data_len {
            r.addr = r.addr - self.guest_data + self.host_data;
        }
        self.k.push(&r);
    }
    #[inline(always)]
    fn submit(&mut self, _n: u32, ctl: &Ctl) {
        self.k.q.publish();
        if self.k.q.needs_wakeup() {
            self.ring(ctl);
        }
    }
    #[inline(always)]
    fn reap<F: FnMut(u64, i64)>(&mut self, f: F) -> u32 {
        self.k.reap(f)
    }
    fn kick(&mut self, ctl: &Ctl) {
        // As `KernelT::kick`: with `--sq-sleep` every round trip already asked once.
        if !self.k.sleep_first && self.k.q.unconsumed() && self.k.q.needs_wakeup() {
            self.ring(ctl);
        }
    }
    fn await_sleep(&mut self, ctl: &Ctl) {
        self.k.await_sleep(ctl);
    }
}
