//! /dev/iolab_sink, iolab's own driver (`kmod/`), as a target: accepted only after the driver answers
//! IDENTIFY (other character devices stay refused, unopened); writes land in its buffer (modulo its size)
//! and reads return that buffer, so the target is a device of `buf_size` bytes shared by the threads'
//! regions, and `--verify` reads a write run back. `--sink legacy|nowait` picks the personality of the
//! run's files (default: the module parameter's), `--sink-log` their log switch. The driver's counters
//! are read before and after each pass ([`PreparedTarget::sink_begin`], [`PreparedTarget::sink_end`]), with
//! the driver's time between logged writes where the log switch is on.
//!
//! iolab never opens the sink O_NONBLOCK: io_uring takes an O_NONBLOCK file as able to try without
//! blocking, which would hide the legacy personality's io-wq punts.

use super::pin::{Handle, Pin};
use super::prepared::target_err;
use super::prepared::PAGE;
use super::prepared::{PreparedTarget, SinkTarget};
use crate::error::{Error, Result};
use crate::sink_device::{Personality, Sink, SinkFigures, DEVICE};
use crate::spec::method_kind::Fit;
use crate::spec::Spec;
use crate::target_kind::TargetKind;
use iolab_sys as sys;
use iolab_sys::SinkCounters;
use std::os::fd::{AsRawFd, OwnedFd};

/// `--sink` and `--sink-log` name the sink's settings: on any other target they are bad input.
pub(super) fn check_flags(spec: &Spec, kind: TargetKind, shown: &str) -> Result<()> {
    let flag = if spec.sink.is_some() {
        "--sink"
    } else if spec.sink_log {
        "--sink-log"
    } else {
        return Ok(());
    };
    if kind == TargetKind::Sink {
        return Ok(());
    }
    Err(Error::usage(
        flag,
        format!("applies to iolab's sink driver ({DEVICE}) only; the target {shown} is not it"),
    ))
}

/// Whether `--target` names the sink: a missing /dev/iolab_sink is the driver not loaded (never a new file
/// to create in /dev); a character device is the sink only if sysfs says it is the misc device the
/// iolab_sink module registered, and only then is it opened (and asked who it is, by [`setup`]).
pub(super) fn is_sink(spec: &Spec, st: Option<&iolab_sys::Stat>, shown: &str) -> Result<bool> {
    let Some(st) = st else {
        if spec.target != std::path::Path::new(DEVICE) {
            return Ok(false);
        }
        let why = crate::sink_device::absent_reason()
            .unwrap_or_else(|| "it appeared only after iolab looked".into());
        return Err(target_err(format!("{shown} does not exist: {why}")));
    };
    if st.st_mode & libc::S_IFMT != libc::S_IFCHR || !crate::sink_device::is_sink_device(st.st_rdev)
    {
        return Ok(false);
    }
    super::fit::check_fit(spec, TargetKind::Sink, shown)?;
    Ok(true)
}

/// Sets the sink looked up as `pin` up as the run's target.
pub(super) fn setup(spec: &Spec, pin: Pin, shown: &str) -> Result<PreparedTarget> {
    let fd = pin.open(libc::O_RDONLY)?;
    let control = Sink::identify(fd, shown).map_err(|e| target_err(e.to_string()))?;
    let personality = spec.sink.unwrap_or(control.default_personality());
    refuse(spec, personality, shown)?;
    let size = control.info.buf_size;
    if spec.offset >= size {
        return Err(Error::usage(
            "--offset",
            format!(
                "{} is beyond the sink driver's buffer of {size} bytes",
                spec.offset
            ),
        ));
    }
    let usable = match spec.file_size {
        Some(fs) if fs > size - spec.offset => {
            return Err(Error::usage(
                "--file-size",
                format!(
                    "{fs} bytes from --offset {} do not fit in the sink driver's buffer of {size} bytes (module \
                     parameter buf_size)",
                    spec.offset
                ),
            ))
        }
        Some(fs) => fs,
        None => size - spec.offset,
    };
    let region_blocks = usable / spec.threads as u64 / spec.bs;
    if region_blocks == 0 {
        return Err(Error::usage(
            "--bs",
            format!(
                "{usable} bytes of the sink driver's buffer cannot hold one --bs {} block per thread ({} threads)",
                spec.bs, spec.threads
            ),
        ));
    }
    let notes = vec![format!(
        "{shown}: iolab's sink driver, personality {} ({}), buffer {} (writes land there at their offset; the \
         threads' regions share it and wrap around it){}",
        personality.name(),
        match personality {
            Personality::Legacy => ".write/.read only, no FMODE_NOWAIT",
            Personality::Nowait => ".write_iter/.read_iter and FMODE_NOWAIT",
        },
        crate::units::fmt_size(size),
        if spec.sink_log {
            "; --sink-log: a log line and an iolab_sink:sink_write tracepoint call per write"
        } else {
            ""
        }
    )];
    Ok(PreparedTarget {
        path: spec.target.clone(),
        kind: TargetKind::Sink,
        created: false,
        region_blocks,
        dio_align: None,
        buf_align: PAGE,
        noatime: false,
        notes,
        handle: Some(Handle::Existing(pin)),
        claim: None,
        peers: Default::default(),
        remote: None,
        nvme: None,
        holes: None,
        shared: false,
        file_per_thread: false,
        others: Vec::new(),
        sink: Some(SinkTarget {
            control,
            personality,
            log: spec.sink_log,
        }),
    })
}

/// What the sink cannot do, said before anything runs.
fn refuse(spec: &Spec, personality: Personality, shown: &str) -> Result<()> {
    if spec.direct {
        return Err(Error::usage(
            "--direct",
            format!("{shown} has no O_DIRECT (the kernel refuses to open a character device so: EINVAL)"),
        ));
    }
    if let Some(flag) = spec.flush_flag() {
        return Err(Error::usage(
            flag,
            format!("{shown} keeps its data in memory and has nothing to sync (fsync and msync answer EINVAL)"),
        ));
    }
    if spec.method == crate::spec::MethodKind::UringCmd {
        if spec.op.reads() {
            return Err(Error::usage(
                "--op",
                format!("--method uring_cmd: {shown}'s command only writes"),
            ));
        }
        if spec.ring.iopoll {
            return Err(Error::usage(
                "--iopoll",
                format!(
                    "{shown} completes a command inside the call that issues it: it has nothing to poll (no \
                     .uring_cmd_iopoll)"
                ),
            ));
        }
    }
    if personality == Personality::Legacy {
        if let Fit::No(why) | Fit::Never(why) | Fit::OtherTarget(why) =
            spec.method.info().targets.sink_legacy
        {
            return Err(Error::usage("--sink", why));
        }
    }
    Ok(())
}

/// The sink driver read after a pass: its counters, and its gaps where the log switch is on.
pub struct SinkEnd {
    counters: Option<SinkCounters>,
    gaps: Option<Box<iolab_sys::SinkGaps>>,
}

impl SinkTarget {
    /// Bytes of the driver's buffer.
    pub fn buf_size(&self) -> u64 {
        self.control.info.buf_size
    }
}

impl PreparedTarget {
    /// The sink's settings for this run, when the target is the sink.
    pub fn sink(&self) -> Option<&SinkTarget> {
        self.sink.as_ref()
    }

    /// The driver's counters now (None: not the sink).
    fn sink_snapshot(&self) -> Result<Option<SinkCounters>> {
        self.sink.as_ref().map(|s| s.control.counters()).transpose()
    }

    /// With the log switch on, the driver's gaps between logged writes since the last call, which empties
    /// them.
    fn sink_gaps(&self) -> Result<Option<Box<iolab_sys::SinkGaps>>> {
        match self.sink.as_ref().filter(|s| s.log) {
            Some(s) => sys::sink_gaps(s.control.fd())
                .map(Some)
                .map_err(|e| Error::sys_on(e, self.path.display().to_string())),
            None => Ok(None),
        }
    }

    /// The driver's counters before a pass (None: not the sink); its gaps are emptied, so the pass's
    /// first logged write starts their chain.
    pub fn sink_begin(&self) -> Result<Option<SinkCounters>> {
        let before = self.sink_snapshot()?;
        self.sink_gaps()?;
        Ok(before)
    }

    /// The driver's counters and gaps after a pass.
    pub fn sink_end(&self) -> Result<SinkEnd> {
        Ok(SinkEnd {
            counters: self.sink_snapshot()?,
            gaps: self.sink_gaps()?,
        })
    }

    /// A pass's figures from its counters before and its reading after; the checks against the result
    /// are made by [`SinkFigures::check_against`].
    pub fn sink_figures(&self, before: Option<SinkCounters>, end: SinkEnd) -> Option<SinkFigures> {
        let (s, b, a) = (self.sink.as_ref()?, before?, end.counters?);
        Some(SinkFigures {
            personality: Some(s.personality),
            log: s.log,
            buffer_bytes: s.control.info.buf_size,
            counted: crate::sink_device::delta(&b, &a),
            driver_gaps: end
                .gaps
                .as_deref()
                .and_then(crate::sink_device::DriverGaps::of),
            ..Default::default()
        })
    }

    /// One thread's descriptor of the sink: opened with `flags`, replaced by a file of the run's personality
    /// where the driver's default differs (IOLAB_SINK_IOC_REOPEN, before any I/O), its log switch set.
    pub(super) fn open_sink(&self, flags: i32) -> Result<OwnedFd> {
        let s = self.sink.as_ref().expect("a sink target");
        let shown = self.path.display().to_string();
        let fd = self.reopen(flags)?;
        let fd = if s.personality != s.control.default_personality() {
            sys::sink_reopen(fd.as_raw_fd(), s.personality.abi())
                .map_err(|e| Error::sys_on(e, &shown))?
        } else {
            fd
        };
        sys::sink_set_log(fd.as_raw_fd(), s.log).map_err(|e| Error::sys_on(e, &shown))?;
        Ok(fd)
    }
}
