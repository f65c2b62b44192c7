//! The shared file's first page: the magic and version, the session's plan, and the control words the
//! host and the guest's client hand each other (see `mod.rs` for the whole arrangement).

use iolab_engine::offload::shm::{Line, PAGE};
use iolab_engine::spec::Attack;
use iolab_sys::UringParams;
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// "IOLABPRT", little-endian.
pub const MAGIC: u64 = u64::from_le_bytes(*b"IOLABPRT");
pub const VERSION: u32 = 2;
/// The ivshmem BAR (a power of two, as PCI wants): the header and the largest region a run may use.
pub const BAR_BYTES: u64 = 64 << 20;
/// Where the region (control block, rings, data area) starts in the file.
pub const REGION_OFF: usize = PAGE;
/// How often the host's wake thread looks at [`Header::wake`].
pub const WAKE_POLL_US: u64 = 100;

/// What a session's client is to do, written by the host before it bumps [`Header::session`].
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct Session {
    /// The session this plan is for (the guest checks it against [`Header::session`]).
    pub seq: u64,
    /// 0 kernel path, 1 broker path.
    pub path: u32,
    /// 0 NOP, 1 read, 2 write.
    pub work: u32,
    /// 0 sequential, 1 random.
    pub pattern: u32,
    pub verify_reads: u32,
    pub fsync_end: u32,
    pub batch: u32,
    pub unrelated_fd: i32,
    /// 1 + the index in `Attack::ALL` of each attack, in order; 0 ends the list.
    pub attacks: [u8; 8],
    /// `--sq-sleep` (kernel path): 1 = wait before each round trip until the SQ thread sleeps.
    pub sq_sleep: u32,
    pub bs: u64,
    pub slot: u64,
    pub buffers: u64,
    pub ring_len: u64,
    /// Kernel path: the bytes of the rings part (the SQEs follow it).
    pub rings_len: u64,
    pub total: u64,
    pub offset: u64,
    pub nblocks: u64,
    pub seed: u64,
    pub fsync_every: u64,
    /// The host's addresses of the data area and of its private canary page: the guest's buffer
    /// addresses are translated into the first; attacks aim at the second.
    pub host_data: u64,
    pub host_canary: u64,
    /// Kernel path: the ring's parameters (offsets of heads, tails, flags, arrays in the rings part).
    pub params: UringParams,
}

/// Page 0 of the shared file.
#[repr(C)]
pub struct Header {
    pub magic: AtomicU64,
    pub version: AtomicU32,
    /// Guest: its pid once its session loop runs (0 before).
    pub guest_ready: AtomicU32,
    /// Host: 1 = the guest's session loop ends (the guest powers off).
    pub quit: AtomicU32,
    /// Host: the number of the session whose plan is in `plan` (bumped after writing it).
    pub session: Line<AtomicU64>,
    /// The channel: (sequence << 8) | byte, each way; both zeroed before a session is published.
    pub to_guest: Line<AtomicU64>,
    pub to_host: Line<AtomicU64>,
    /// Guest: (session << 32) | the client's wait status, once it has exited.
    pub status: Line<AtomicU64>,
    /// Guest client (kernel path): 1 = please wake the SQPOLL thread; the host's wake thread clears it.
    pub wake: Line<AtomicU32>,
    pub plan: UnsafeCell<Session>,
}

const _: () = assert!(std::mem::size_of::<Header>() <= REGION_OFF);

impl Header {
    /// The header at `ptr`.
    ///
    /// # Safety
    /// `ptr` must be the start of a mapping of the shared file, at least [`REGION_OFF`] bytes, alive for
    /// `'a`; all-zero bytes are a valid header (every field is an integer).
    pub unsafe fn at<'a>(ptr: *mut u8) -> &'a Header {
        // SAFETY: the caller's contract.
        unsafe { &*(ptr as *const Header) }
    }

    /// The plan of the current session (a copy: the host does not change it while a session runs).
    pub fn read_plan(&self) -> Session {
        // SAFETY: `plan` is plain data inside the mapping; volatile because the other side writes it.
        unsafe { std::ptr::read_volatile(self.plan.get()) }
    }

    /// Host: writes a session's plan (numbered), resets the channel and publishes it.
    pub fn publish(&self, s: &Session) -> u64 {
        let seq = self.session.0.load(Ordering::Acquire) + 1;
        let s = Session { seq, ..*s };
        // SAFETY: as in `read_plan`; the guest reads it only after the release store below.
        unsafe { std::ptr::write_volatile(self.plan.get(), s) };
        self.to_guest.0.store(0, Ordering::Relaxed);
        self.to_host.0.store(0, Ordering::Relaxed);
        self.wake.0.store(0, Ordering::Relaxed);
        self.session.0.store(seq, Ordering::Release);
        seq
    }
}

/// One side's end of the channel words: the last sequence sent and heard.
#[derive(Default)]
pub struct Words {
    sent: u64,
    heard: u64,
}

impl Words {
    pub fn send(&mut self, word: &AtomicU64, b: u8) {
        self.sent += 1;
        word.store((self.sent << 8) | u64::from(b), Ordering::Release);
    }
    /// The byte sent since the last call, if any.
    pub fn try_hear(&mut self, word: &AtomicU64) -> Option<u8> {
        let v = word.load(Ordering::Acquire);
        if v >> 8 > self.heard {
            self.heard = v >> 8;
            Some((v & 0xff) as u8)
        } else {
            None
        }
    }
}

/// The attacks of a plan in `Session::attacks` form, and back.
pub fn encode_attacks(attacks: &[Attack]) -> [u8; 8] {
    let mut out = [0u8; 8];
    for (o, a) in out.iter_mut().zip(attacks) {
        *o = 1 + Attack::ALL.iter().position(|x| x == a).unwrap_or(0) as u8;
    }
    out
}

pub fn decode_attacks(codes: [u8; 8]) -> [Option<Attack>; 8] {
    let mut out = [None; 8];
    for (o, &c) in out.iter_mut().zip(codes.iter()) {
        if c == 0 {
            break;
        }
        *o = Attack::ALL.get(c as usize - 1).copied();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attacks_and_channel_words_round_trip() {
        let a = [Attack::Opcode, Attack::BufLen, Attack::Rewrite];
        let d = decode_attacks(encode_attacks(&a));
        assert_eq!(&d[..3], &[Some(a[0]), Some(a[1]), Some(a[2])]);
        assert_eq!(d[3], None);
        let w = AtomicU64::new(0);
        let (mut tx, mut rx) = (Words::default(), Words::default());
        assert_eq!(rx.try_hear(&w), None);
        tx.send(&w, b'G');
        assert_eq!(rx.try_hear(&w), Some(b'G'));
        assert_eq!(rx.try_hear(&w), None);
        tx.send(&w, b'G');
        assert_eq!(
            rx.try_hear(&w),
            Some(b'G'),
            "the same byte again is heard again"
        );
    }
}
