//! The server side of an offload run: the io_uring through which the client's requests reach the kernel
//! (the kernel path's restricted SQPOLL ring and the native baseline's plain ring, both in shared memory,
//! or the broker's private ring) and the threads that serve it while the client runs (the kernel path's
//! doorbell thread, the broker).

use super::broker;
use super::ring;
use super::setup::Cpus;
use super::setup::Shape;
use super::setup::FORCE_RING_MMAP;
use super::shm::{Layout, Region};
use crate::error::{Error, Result};
use crate::offload::shm;
use crate::spec::{Doorbell, OffloadPath, Spec};
use crate::target::PreparedTarget;
use iolab_sys as sys;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The rings, the doorbell and the state the server threads share with iolab.
pub struct Server {
    path: OffloadPath,
    doorbell: Doorbell,
    /// The broker path's own ring, until the broker thread takes it.
    broker_ring: Option<io_uring::IoUring>,
    /// The kernel and native paths' ring, shared with the client.
    uring: Option<ring::OwnedRing>,
    /// The server's CPU: the broker's, and the kernel path's doorbell thread's.
    broker_cpu: Option<u32>,
    /// How the client's requests reach the kernel: ring setup, registrations, restrictions or policy.
    pub service: String,
    /// Downgrades taken in setting up the ring.
    pub fallbacks: Vec<String>,
    pub shared: broker::Shared,
    bell_stop: AtomicBool,
    /// Kernel path: times the doorbell thread woke the SQPOLL thread.
    wakeups: AtomicU64,
    /// The eventfd the client writes to ring (kernel path, and the broker's eventfd doorbells).
    bell: OwnedFd,
}

impl Server {
    /// Creates the doorbell and the path's ring, with the target (`fd`) and the region's data area
    /// registered.
    pub fn setup(
        spec: &Spec,
        shape: &Shape,
        region: &Region,
        fd: RawFd,
        cpus: &Cpus,
    ) -> Result<Server> {
        let bell = sys::eventfd(0).map_err(|e| Error::sys_hint(e, "the doorbell eventfd"))?;
        let mut s = Server {
            path: spec.offload.path,
            doorbell: spec.offload.doorbell,
            broker_ring: None,
            uring: None,
            broker_cpu: cpus.service,
            service: String::new(),
            fallbacks: Vec::new(),
            shared: broker::Shared::default(),
            bell_stop: AtomicBool::new(false),
            wakeups: AtomicU64::new(0),
            bell,
        };
        match s.path {
            OffloadPath::Kernel | OffloadPath::Native => {
                s.shared_ring(spec, shape, region, fd, cpus.sq)?
            }
            OffloadPath::Broker => s.broker_ring(shape, region, fd)?,
        }
        Ok(s)
    }

    /// Kernel and native paths: the ring in the region (or, where the kernel refuses that, the kernel's own
    /// ring memory mapped before fork), the target and data area registered, restricted on the kernel path.
    fn shared_ring(
        &mut self,
        spec: &Spec,
        shape: &Shape,
        region: &Region,
        fd: RawFd,
        sq_cpu: Option<u32>,
    ) -> Result<()> {
        let kernel = self.path == OffloadPath::Kernel;
        let (r, rings_in) =
            self.open_ring(spec, shape, region, kernel.then_some(sq_cpu).flatten())?;
        let data_len = shape.layout.data_len();
        r.register(fd, region.data_ptr(), data_len)
            .map_err(|e| register_error(e.errno, data_len).unwrap_or_else(|| Error::from(e)))?;
        if kernel {
            r.restrict_and_enable(&broker::ALLOWED_OPS)
                .map_err(|e| Error::sys_hint(e, "IORING_REGISTER_RESTRICTIONS (Linux 5.10+)"))?;
            self.service = format!(
                "io_uring, rings and SQEs in {rings_in}, SQPOLL thread{} \
                 (sq_thread_idle {} ms), created R_DISABLED; target = fixed file 0, data area ({data_len} \
                 bytes) = fixed buffer 0; restrictions: only NOP, READ_FIXED, WRITE_FIXED, FSYNC, \
                 IOSQE_FIXED_FILE required and no other flag, no register operation; doorbell = eventfd \
                 -> iolab thread -> IORING_ENTER_SQ_WAKEUP",
                sq_cpu.map(|c| format!(" on CPU {c}")).unwrap_or_default(),
                spec.ring.sq_idle_ms
            );
        } else {
            self.service = format!(
                "io_uring, rings and SQEs in {rings_in}, no SQPOLL; target = \
                 fixed file 0, data area ({data_len} bytes) = fixed buffer 0; the client calls \
                 io_uring_enter(submit {batch}, wait {batch}) per batch; no restrictions",
                batch = shape.batch
            );
        }
        self.uring = Some(r);
        Ok(())
    }

    /// io_uring_setup with the rings in the region (IORING_SETUP_NO_MMAP), or in the kernel's memory
    /// where that is refused (or `FORCE_RING_MMAP` is set); and where the rings are, for the description.
    fn open_ring(
        &mut self,
        spec: &Spec,
        shape: &Shape,
        region: &Region,
        sq: Option<u32>,
    ) -> Result<(ring::OwnedRing, &'static str)> {
        let (rings, sqes) = (region.ring_ptr(), {
            // SAFETY: the SQE part follows the rings part inside the ring area.
            unsafe { region.ring_ptr().add(shape.rings_len) }
        });
        let flags = if self.path == OffloadPath::Kernel {
            sys::IORING_SETUP_SQPOLL | sys::IORING_SETUP_R_DISABLED
        } else {
            0
        };
        let (entries, idle) = (shape.entries, spec.ring.sq_idle_ms);
        let forced = std::env::var_os(FORCE_RING_MMAP).is_some();
        let tried = if forced {
            Err(sys::SysErr::new("io_uring_setup", libc::EINVAL))
        } else {
            // SAFETY: `rings` and `sqes` are the page-aligned, zeroed ring area of the region, sized
            // by ring_bytes(entries); the region outlives the ring (declared before it).
            unsafe { ring::setup(rings, sqes, entries, flags, idle, sq) }
        };
        match tried {
            Ok(r) => Ok((r, "the shared memfd (IORING_SETUP_NO_MMAP)")),
            Err(e) if e.errno == libc::EINVAL => {
                let r = ring::setup_mapped(entries, flags, idle, sq).map_err(Error::from)?;
                self.fallbacks.push(if forced {
                    format!("rings: IORING_SETUP_NO_MMAP not tried ({FORCE_RING_MMAP} is set): the rings are the kernel's own, mapped from the ring fd (MAP_SHARED) and shared with the client over fork")
                } else {
                    "rings: IORING_SETUP_NO_MMAP refused (EINVAL; it needs Linux 6.5+): the rings are the kernel's own, mapped from the ring fd (MAP_SHARED) and shared with the client over fork".into()
                });
                Ok((
                    r,
                    "the kernel's ring memory, mapped from the ring fd (MAP_SHARED) before fork",
                ))
            }
            Err(e) => Err(Error::from(e)),
        }
    }

    /// Broker path: the broker's own ring, with the target and the data area registered.
    fn broker_ring(&mut self, shape: &Shape, region: &Region, fd: RawFd) -> Result<()> {
        let data_len = shape.layout.data_len();
        let r = io_uring::IoUring::builder()
            .build(shape.entries)
            .map_err(|e| Error::Runtime(format!("the broker's io_uring: {e}")))?;
        r.submitter().register_files(&[fd]).map_err(|e| {
            Error::Runtime(format!(
                "the broker's io_uring: registering the target: {e}"
            ))
        })?;
        let iov = [libc::iovec {
            iov_base: region.data_ptr().cast(),
            iov_len: data_len,
        }];
        // SAFETY: the data area stays mapped until after the broker's ring is dropped (the region is
        // declared first, so it is dropped last).
        unsafe { r.submitter().register_buffers(&iov) }.map_err(|e| {
            register_error(e.raw_os_error().unwrap_or(0), data_len).unwrap_or_else(|| {
                Error::Runtime(format!(
                    "the broker's io_uring: registering the {data_len}-byte data area: {e}"
                ))
            })
        })?;
        self.service = format!(
            "iolab's request ring ({} entries of 40 bytes) and completion ring in the shared memfd; broker \
             thread{} copies each request, checks it (ops NOP, READ_FIXED, WRITE_FIXED, FSYNC; file slot \
             0 only; buffer inside the {data_len}-byte data area; length <= {} bytes) and runs it through \
             its own io_uring (target and data area registered); doorbell: {}",
            broker::ENTRIES,
            self.broker_cpu.map(|c| format!(" on CPU {c}")).unwrap_or_default(),
            shape.layout.slot,
            self.doorbell.name()
        );
        self.broker_ring = Some(r);
        Ok(())
    }

    /// The kernel and native paths' ring (the client's transport is built on it).
    pub fn ring(&self) -> &ring::OwnedRing {
        self.uring
            .as_ref()
            .expect("set up for the kernel and native paths")
    }

    pub fn bell_fd(&self) -> RawFd {
        self.bell.as_raw_fd()
    }

    /// Closes the kernel and native paths' ring (its SQPOLL thread with it), once the client has exited.
    pub fn close_ring(&mut self) {
        self.uring = None;
    }

    /// Times the server woke up for the client: the SQPOLL thread (kernel path) or the broker.
    pub fn wakeups(&self) -> u64 {
        match self.path {
            OffloadPath::Kernel => self.wakeups.load(Ordering::Relaxed),
            OffloadPath::Broker => self.shared.wakeups.load(Ordering::Relaxed),
            OffloadPath::Native => 0,
        }
    }

    /// Runs `timed` (the client's attacks and workload) with the server threads running, and stops them
    /// when it returns, however it ended (they are joined when the scope ends). `timed` is given the
    /// broker's state and, on the kernel path, the ring to wake before the timed span.
    pub fn serve<T>(
        &mut self,
        region: &Region,
        layout: &Layout,
        timed: impl FnOnce(&broker::Shared, Option<i32>) -> Result<T>,
    ) -> Result<T> {
        let broker = self.broker_ring.take().map(|ring| broker::Broker {
            rings: region.ring_ptr() as *const broker::Rings,
            data: region.data_ptr(),
            policy: broker::Policy {
                files: 1,
                data_len: layout.data_len() as u64,
                max_len: layout.slot as u32,
            },
            ring,
            doorbell: self.doorbell,
            bell_fd: self.bell.as_raw_fd(),
            cpu: self.broker_cpu,
        });
        let this = &*self;
        std::thread::scope(|s| {
            match this.path {
                OffloadPath::Kernel => {
                    let ring_fd = this.ring().raw_fd();
                    let (bell_fd, stop, wk) =
                        (this.bell.as_raw_fd(), &this.bell_stop, &this.wakeups);
                    let cpu = this.broker_cpu;
                    std::thread::Builder::new()
                        .name("iolab-bell".into())
                        .spawn_scoped(s, move || {
                            // On the server's side: woken on the spinning client's CPU, it would wait
                            // for the client's time slice to end (a scheduler tick) before it could ring.
                            if let Some(c) = cpu {
                                let _ = sys::pin_to_cpu(c);
                            }
                            doorbell_thread(bell_fd, ring_fd, stop, wk)
                        })
                        .map_err(|e| {
                            crate::budget::thread_failed(
                                "the doorbell thread",
                                &e,
                                "lower --bs or --batch",
                            )
                        })?;
                }
                OffloadPath::Broker => {
                    let b = broker.expect("set up for the broker path");
                    let sh = &this.shared;
                    std::thread::Builder::new()
                        .name("iolab-broker".into())
                        .spawn_scoped(s, move || b.serve(sh))
                        .map_err(|e| {
                            crate::budget::thread_failed(
                                "the broker thread",
                                &e,
                                "lower --bs or --batch",
                            )
                        })?;
                }
                OffloadPath::Native => {}
            }
            let sq_ring = (this.path == OffloadPath::Kernel).then(|| this.ring().raw_fd());
            let out = timed(&this.shared, sq_ring);
            this.stop();
            out
        })
    }

    /// Stops the server threads.
    fn stop(&self) {
        self.bell_stop.store(true, Ordering::SeqCst);
        self.shared.stop.store(true, Ordering::SeqCst);
        let _ = sys::eventfd_ring(self.bell.as_raw_fd());
    }
}

/// Kernel path: wakes the SQPOLL thread each time the client rings.
fn doorbell_thread(bell: i32, ring_fd: i32, stop: &AtomicBool, wakeups: &AtomicU64) {
    let mut v = [0u8; 8];
    loop {
        match sys::read(bell, &mut v) {
            Ok(_) => {}
            Err(e) if e.errno == libc::EINTR => continue,
            Err(_) => return,
        }
        if stop.load(Ordering::SeqCst) {
            return;
        }
        wakeups.fetch_add(1, Ordering::Relaxed);
        let _ = sys::io_uring_enter(ring_fd, 0, 0, sys::IORING_ENTER_SQ_WAKEUP);
    }
}

/// Times the server threads slept, by thread id (their voluntary context switches, from
/// /proc/self/task/TID/status): the kernel path's SQPOLL thread (iou-sqp-*) or the broker thread; None on
/// the native path or when /proc shows none. Read at both ends of the timed span, the difference
/// ([`sleeps_between`]) is how often the server actually went to sleep, whatever the doorbells say (a
/// bell rung while it is awake wakes nothing).
pub fn server_sleeps(path: OffloadPath) -> Option<std::collections::BTreeMap<i32, u64>> {
    let is_server = |comm: &str| match path {
        OffloadPath::Kernel => comm.starts_with("iou-sqp-"),
        OffloadPath::Broker => comm == "iolab-broker",
        OffloadPath::Native => false,
    };
    if path == OffloadPath::Native {
        return None;
    }
    let mut total: Option<std::collections::BTreeMap<i32, u64>> = None;
    for e in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let Ok(tid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let status = std::fs::read_to_string(e.path().join("status")).unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .map(str::trim)
        };
        if !field("Name:").is_some_and(is_server) {
            continue;
        }
        if let Some(n) = field("voluntary_ctxt_switches:").and_then(|v| v.parse::<u64>().ok()) {
            total.get_or_insert_with(Default::default).insert(tid, n);
        }
    }
    total
}

/// The sleeps between two [`server_sleeps`] readings: per thread present at the end (a thread born in
/// between counts from zero; an earlier run's server thread that ended in between is not this run's).
pub fn sleeps_between(
    before: &Option<std::collections::BTreeMap<i32, u64>>,
    after: &Option<std::collections::BTreeMap<i32, u64>>,
) -> Option<u64> {
    let (b, a) = (before.as_ref()?, after.as_ref()?);
    Some(
        a.iter()
            .map(|(tid, n)| n.saturating_sub(b.get(tid).copied().unwrap_or(0)))
            .sum(),
    )
}

/// Did every request go through? The broker's failure, or the first failed request the client saw.
pub fn check_requests(
    server: &Server,
    ctl: &shm::Ctl,
    target: &PreparedTarget,
    bs: usize,
) -> Result<()> {
    if let Some(msg) = server
        .shared
        .failure
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
    {
        return Err(Error::Runtime(msg));
    }
    let errors = ctl.errors.load(Ordering::Relaxed);
    if errors > 0 {
        let res = ctl.first_error_res.load(Ordering::Relaxed);
        return Err(Error::Runtime(format!(
            "{errors} offloaded request(s) failed; the first, at byte offset {} of {}, with {}",
            ctl.first_error_offset.load(Ordering::Relaxed),
            target.path.display(),
            if res < 0 {
                format!("{} ({})", sys::errno_name(-res as i32), -res)
            } else {
                format!("a short transfer of {res} bytes (expected {bs})")
            }
        )));
    }
    Ok(())
}

/// What a refused registration of the `data_len`-byte data area means, where iolab knows: io_uring
/// refuses a fixed buffer over 1 GiB with EFAULT (io_buffer_validate), and ENOMEM is the locked-memory
/// limit. `None`: the kernel's error as it is.
fn register_error(errno: i32, data_len: usize) -> Option<Error> {
    let area = crate::units::fmt_size(data_len as u64);
    match errno {
        libc::EFAULT if data_len > 1 << 30 => Some(Error::usage(
            "--bs",
            format!(
                "the offload data area ({area}: --batch + 1 blocks of --bs) is beyond the 1 GiB this \
                 kernel's io_uring registers as one fixed buffer (EFAULT); lower --bs or --batch"
            ),
        )),
        libc::ENOMEM => Some(Error::usage(
            "--bs",
            format!(
                "registering the {area} offload data area: ENOMEM, more than RLIMIT_MEMLOCK lets this user \
                 lock (ulimit -l); lower --bs or --batch, or raise the limit"
            ),
        )),
        _ => None,
    }
}
