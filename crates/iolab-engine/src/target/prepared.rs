//! A target made ready for a run: its kind, its descriptors' path, what was created, the peer of a stream.

use super::peer::{self, PeerFigures};
use super::space;
use crate::target_kind::TargetKind;

use crate::error::{Error, Result};
use crate::spec::{OpKind, Spec};
use iolab_sys as sys;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;

/// The far end of one thread's stream.
pub type PeerHandle = std::thread::JoinHandle<std::result::Result<PeerFigures, String>>;

/// Region the threads share: `threads` consecutive regions of `region_blocks` blocks from `--offset`.
/// For /dev/null and /dev/zero the regions are nominal (offsets are ignored by those devices).
#[derive(Debug)]
pub struct PreparedTarget {
    pub path: PathBuf,
    pub kind: TargetKind,
    /// iolab created the file for this run.
    pub created: bool,
    pub region_blocks: u64,
    /// O_DIRECT alignment (memory, offset) when `--direct`.
    pub dio_align: Option<(u32, u32)>,
    /// Alignment of I/O buffers: at least a page, more if O_DIRECT asks for it.
    pub buf_align: usize,
    /// Things the user should know (prefill done, alignment assumed ...).
    pub notes: Vec<String>,
    /// An existing file read where it has holes: the bytes of holes in the region read, and the region's
    /// bytes (zeros the kernel makes up without the device).
    pub holes: Option<(u64, u64)>,
    /// Every open of the file adds O_NOATIME: its reads leave its access time as it was.
    pub noatime: bool,
    /// What every open of the target goes through (none for streams): the existing file looked up, or
    /// the file iolab made, opened only while its name is still that file.
    pub(crate) handle: Option<super::pin::Handle>,
    /// A block device written to: the O_EXCL descriptor that claims it for as long as this value lives (the
    /// runner and the offload run keep it to the end of the pass, after the last write and --verify).
    pub(crate) claim: Option<OwnedFd>,
    /// Stream targets: the peer threads started by `open_for`.
    pub(crate) peers: std::sync::Mutex<Vec<PeerHandle>>,
    /// A TCP target whose peer iolab does not run (`tcp:ADDR:PORT`).
    pub(crate) remote: Option<Remote>,
    /// The sink driver's target: its settings and a descriptor for its counters.
    pub(crate) sink: Option<SinkTarget>,
    /// An NVMe generic device's namespace (`target/nvme.rs`).
    pub(crate) nvme: Option<NvmeTarget>,
    /// `--share-region`: every thread's region is the one region (a file shared by fio's jobs).
    pub shared: bool,
    /// A file per thread (`--target` holding `{thread}`): each thread's region is its whole file.
    pub file_per_thread: bool,
    /// With a file per thread: the targets of threads 1 and up (this one is thread 0's).
    pub others: Vec<PreparedTarget>,
}

pub const PAGE: usize = 4096;

/// Region of a stream target per thread, in bytes (nominal: nothing maps it). /dev/null's and /dev/zero's
/// come from the address space ([`space::sink_region`]).
pub const SINK_REGION: u64 = space::SINK_REGION_MAX;

pub use super::space::DEFAULT_FILE_SIZE;

pub use crate::paths::parent_of;

pub(crate) fn target_err(msg: impl Into<String>) -> Error {
    Error::usage("--target", msg)
}

impl PreparedTarget {
    /// Absolute byte offset of thread `t`'s region.
    pub fn region_first_block(&self, t: u32) -> u64 {
        if self.shared || self.file_per_thread {
            0
        } else {
            t as u64 * self.region_blocks
        }
    }

    /// Thread `t`'s target: its own file's with a file per thread, this one otherwise.
    pub fn for_thread(&self, t: u32) -> &PreparedTarget {
        match t {
            0 => self,
            t => self.others.get(t as usize - 1).unwrap_or(self),
        }
    }

    /// The blocks the threads' regions span together (one region when they share it).
    pub fn span_blocks(&self, threads: u32) -> u64 {
        if self.shared {
            self.region_blocks
        } else {
            self.region_blocks * u64::from(threads)
        }
    }

    /// Opens the target for one thread: O_WRONLY/O_RDONLY (O_RDWR when the method maps it), plus O_DIRECT.
    /// For a stream target: makes the thread's stream, starts its peer, and returns the thread's end.
    pub fn open_for(&self, spec: &Spec, needs_rdwr: bool) -> Result<OwnedFd> {
        if self.kind.is_stream() {
            return self.open_stream(spec);
        }
        let mut flags = match (spec.op, needs_rdwr) {
            (_, true) | (OpKind::Mixed, _) => libc::O_RDWR,
            (OpKind::Write, false) => libc::O_WRONLY,
            (OpKind::Read, false) => libc::O_RDONLY,
        };
        if spec.direct && self.dio_align.is_some() {
            flags |= libc::O_DIRECT;
        }
        if self.noatime {
            flags |= libc::O_NOATIME;
        }
        if self.kind == TargetKind::Sink {
            return self.open_sink(flags);
        }
        self.reopen(flags)
    }

    /// The flags of an open that reads the target back (--verify): O_RDONLY, with O_NOATIME where allowed.
    pub fn read_flags(&self) -> libc::c_int {
        if self.noatime {
            libc::O_RDONLY | libc::O_NOATIME
        } else {
            libc::O_RDONLY
        }
    }

    /// Opens the target file or device with `flags`, only while its name is still what iolab looked up
    /// or made (never a file put in its place, never through a symbolic link put there).
    pub fn reopen(&self, flags: libc::c_int) -> Result<OwnedFd> {
        match &self.handle {
            Some(h) => h.open(flags),
            None => Err(Error::Runtime(format!(
                "internal: {} has no file to open",
                self.path.display()
            ))),
        }
    }

    fn open_stream(&self, spec: &Spec) -> Result<OwnedFd> {
        if let Some(r) = &self.remote {
            return r.connect();
        }
        let write = spec.op == OpKind::Write;
        let (mine, theirs) = match self.kind {
            TargetKind::Pipe => {
                let (r, w) = sys::pipe()?;
                if write {
                    (w, r)
                } else {
                    (r, w)
                }
            }
            TargetKind::Socketpair => sys::socketpair_stream()?,
            _ => sys::tcp_loopback_pair()?,
        };
        let (bs, seed) = (spec.bs as usize, spec.seed);
        let h = std::thread::Builder::new()
            .name("iolab-peer".into())
            .spawn(move || {
                if write {
                    peer::drain(theirs)
                } else {
                    peer::feed(theirs, bs, seed)
                }
            })
            .map_err(|e| {
                crate::budget::thread_failed("the stream's peer thread", &e, "lower --threads")
            })?;
        self.peers.lock().unwrap_or_else(|p| p.into_inner()).push(h);
        Ok(mine)
    }

    /// Waits for the stream peers (after every thread closed its end) and sums what they did.
    pub fn join_peers(&self) -> Result<Option<PeerFigures>> {
        if let Some(r) = &self.remote {
            return r.acknowledged().map(Some);
        }
        let handles: Vec<PeerHandle> =
            std::mem::take(&mut *self.peers.lock().unwrap_or_else(|p| p.into_inner()));
        if handles.is_empty() {
            return Ok(None);
        }
        let mut t = PeerFigures {
            user_s: Some(0.0),
            sys_s: Some(0.0),
            ..PeerFigures::default()
        };
        for h in handles {
            let f = h
                .join()
                .map_err(|_| Error::Runtime("a stream peer thread panicked".into()))?
                .map_err(Error::Runtime)?;
            t.bytes += f.bytes;
            let add = |a: Option<f64>, b: Option<f64>| Some(a? + b?);
            t.user_s = add(t.user_s, f.user_s);
            t.sys_s = add(t.sys_s, f.sys_s);
        }
        Ok(Some(t))
    }

    /// Does this value hold the O_EXCL claim on the block device it writes to?
    pub fn holds_device_claim(&self) -> bool {
        self.claim.is_some()
    }

    /// Keeps the created file past this value's life (used by `--keep`).
    pub fn is_kept(&self) -> bool {
        self.handle
            .as_ref()
            .and_then(|h| h.made())
            .map(|g| g.kept())
            .unwrap_or(true)
    }
}

/// What a prepared sink target keeps: the driver's answer, the run's personality and log switch, and a
/// descriptor of its own to read the counters with.
#[derive(Debug)]
pub struct SinkTarget {
    pub(crate) control: crate::sink_device::Sink,
    pub personality: crate::sink_device::Personality,
    pub log: bool,
}

/// What a prepared NVMe generic target keeps: its namespace, its block size and its block device.
#[derive(Debug, Clone)]
pub struct NvmeTarget {
    pub nsid: u32,
    /// log2 of the namespace's logical block size.
    pub lba_shift: u32,
    /// The namespace's block device ("nvme0n1").
    pub block: String,
}

/// The peer of a `tcp:ADDR:PORT` target, which iolab does not run, and a duplicate of each thread's
/// connection: after the thread closed its own, the duplicate keeps the connection open to read what the
/// peer acknowledged.
#[derive(Debug)]
pub(crate) struct Remote {
    pub(crate) to: std::net::SocketAddrV4,
    pub(crate) socks: std::sync::Mutex<Vec<OwnedFd>>,
}

pub use crate::tcp_peer::REMOTE_ACK_WAIT;

impl Remote {
    fn connect(&self) -> Result<OwnedFd> {
        let stall_ms = REMOTE_ACK_WAIT.as_millis() as u32;
        let fd = sys::tcp_connect(self.to, stall_ms).map_err(|e| {
            let why = crate::tcp_peer::tcp_failure(e.errno, &self.to.to_string())
                .map(|w| format!(": {w}"))
                .unwrap_or_default();
            Error::usage(
                "--target",
                format!("cannot connect to tcp:{}: {}{why}", self.to, Error::from(e)),
            )
        })?;
        let dup = fd.try_clone().map_err(|e| {
            Error::Runtime(format!(
                "cannot duplicate the connection to {}: {e}",
                self.to
            ))
        })?;
        self.socks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(dup);
        Ok(fd)
    }

    /// The data bytes the peer acknowledged on every connection (the SYN's one left out), once nothing
    /// is left unsent or unacknowledged (or after [`REMOTE_ACK_WAIT`]: then less than was written, which the run
    /// reports as lost); the connections are closed after.
    fn acknowledged(&self) -> Result<PeerFigures> {
        let socks = std::mem::take(&mut *self.socks.lock().unwrap_or_else(|p| p.into_inner()));
        let until = std::time::Instant::now() + REMOTE_ACK_WAIT;
        let mut bytes = 0;
        for s in &socks {
            let sent = loop {
                let t = sys::tcp_sent(s.as_raw_fd()).map_err(Error::from)?;
                if (t.unacked_segs == 0 && t.notsent_bytes == 0)
                    || t.closed
                    || std::time::Instant::now() >= until
                {
                    break t;
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            };
            bytes += sent.bytes_acked.saturating_sub(1);
        }
        Ok(PeerFigures {
            bytes,
            remote: Some(self.to.to_string()),
            ..PeerFigures::default()
        })
    }
}

impl crate::result::TargetInfo {
    /// The result's view of a prepared target.
    pub fn of(t: &PreparedTarget, peer: Option<PeerFigures>) -> crate::result::TargetInfo {
        crate::result::TargetInfo {
            kind: t.kind,
            created: t.created,
            kept: t.created && t.is_kept(),
            region_blocks_per_thread: t.region_blocks,
            dio_align: t.dio_align,
            peer,
            fs: (t.kind == TargetKind::File)
                .then(|| iolab_sys::fs_type_name(&t.path).ok().map(String::from))
                .flatten(),
            untouched: t.kind == TargetKind::File && t.handle.is_none(),
            sparse: t
                .holes
                .map(|(holes, bytes)| crate::result::Sparse { holes, bytes }),
        }
    }
}
