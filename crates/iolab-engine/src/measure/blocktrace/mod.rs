//! `--layers`: where each op's time went, from the block layer's own tracepoints. A separate, untimed
//! pass records block_bio_queue, block_rq_issue and block_rq_complete on the target's disk in an ftrace
//! instance of iolab's own (`instance.rs`, every event timed on CLOCK_MONOTONIC), while iolab logs each
//! op's start, end and offset; the ops' offsets become disk sectors (FIEMAP for a file, plus the
//! partition's start) and `split.rs` matches the two. Disks under device-mapper or md are not followed
//! (their requests are remapped below), and the reason is said instead.

mod instance;
mod pages;
pub mod split;

use super::clock::ClockKind;
use super::tp_format::{BlockFormats, TpFormat, BLOCK_EVENTS};
use crate::measure::workload_figures::LayerFigures;
use iolab_sys as sys;
use split::{Event, Kind, OpSpan};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Ops a traced pass runs at most (all threads), so that the rings hold every event of them.
pub const LAYERS_OPS: u64 = 10_000;

/// One op as the runner logged it, in the run's clock ticks.
#[derive(Debug, Clone, Copy, Default)]
pub struct OpRec {
    pub write: bool,
    pub start: u64,
    pub end: u64,
    pub offset: u64,
}

/// The disk a target's requests go to: the kernel's dev_t for it (MKDEV: major << 20 | minor), its name
/// and, for a partition, its first sector on the disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disk {
    pub dev: u32,
    pub name: String,
    pub start: u64,
}

/// The disk behind device number `dev` (a file's st_dev, or a block device's st_rdev), or why its
/// requests cannot be followed.
pub fn disk_of(dev: u64) -> Result<Disk, String> {
    let (maj, min) = (
        libc::major(dev as libc::dev_t),
        libc::minor(dev as libc::dev_t),
    );
    let sys = PathBuf::from(format!("/sys/dev/block/{maj}:{min}"));
    let Ok(real) = std::fs::canonicalize(&sys) else {
        return Err(format!(
            "device {maj}:{min} is no block device (tmpfs, overlayfs, a network filesystem ...): no request \
             reaches a block layer iolab can watch"
        ));
    };
    for (dir, what) in [("dm", "device-mapper"), ("md", "md RAID")] {
        if sys.join(dir).exists() {
            return Err(format!(
                "device {maj}:{min} is a {what} device: its requests are remapped to the disks below it, \
                 which iolab does not follow"
            ));
        }
    }
    let read = |p: &Path| std::fs::read_to_string(p).map(|s| s.trim().to_string());
    let (disk_dir, start) = if sys.join("partition").exists() {
        let start = read(&sys.join("start"))
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("partition {maj}:{min} has no readable start in sysfs"))?;
        (
            real.parent().map(Path::to_path_buf).unwrap_or_default(),
            start,
        )
    } else {
        (real.clone(), 0)
    };
    let (dmaj, dmin) = read(&disk_dir.join("dev"))
        .ok()
        .and_then(|d| {
            let (a, b) = d.split_once(':')?;
            Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?))
        })
        .ok_or_else(|| format!("no disk found above block device {maj}:{min} in sysfs"))?;
    let name = disk_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !disk_dir.join("mq").is_dir() {
        return Err(format!(
            "{name} is a bio-based device (zram, brd, a multipath head ...): it makes no block requests, so \
             there is no queue or issue to time"
        ));
    }
    Ok(Disk {
        dev: (dmaj << 20) | dmin,
        name,
        start,
    })
}

/// The disk behind the target path: a block device's own, or the filesystem's of a file (or of the
/// directory a new file will be made in).
pub fn disk_of_path(target: &Path) -> Result<Disk, String> {
    let md = std::fs::metadata(target)
        .or_else(|_| std::fs::metadata(crate::paths::parent_of(target)))
        .map_err(|e| format!("{}: {e}", target.display()))?;
    let ft = md.file_type();
    if ft.is_block_device() {
        disk_of(md.rdev())
    } else if ft.is_file() || ft.is_dir() {
        disk_of(md.dev())
    } else {
        Err(format!(
            "{} is neither a file nor a block device: no request of it reaches a block layer",
            target.display()
        ))
    }
}

/// The tracer of one pass: the instance, the events' layouts, and what it takes to put ops on the
/// tracepoints' clock.
pub struct BlockTrace {
    pub disk: Disk,
    /// The run's clock, read with CLOCK_MONOTONIC at the start and the end.
    clock: ClockKind,
    fmts: BlockFormats,
    inst: instance::Instance,
    /// (run clock tick, CLOCK_MONOTONIC ns) read together at the start and at the end.
    pairs: Mutex<Vec<(u64, u64)>>,
}

/// A reading of the run's clock between two CLOCK_MONOTONIC readings, as (tick, their mean).
fn tick_and_mono(kind: ClockKind) -> (u64, u64) {
    let m0 = sys::monotonic_ns();
    let t = super::clock::now_of(kind);
    let m1 = sys::monotonic_ns();
    (t, m0 + (m1 - m0) / 2)
}

impl BlockTrace {
    /// Makes the instance with the three events on, filtered on `disk`.
    pub fn open(disk: Disk, clock: ClockKind) -> Result<BlockTrace, String> {
        let ids = super::counters::trace_ids()?;
        let fmts = ids.block.ok_or(
            "this kernel's tracefs has no block_bio_queue/block_rq_issue/block_rq_complete events",
        )?;
        let inst = instance::Instance::make(&BLOCK_EVENTS, &format!("dev == {}", disk.dev))?;
        Ok(BlockTrace {
            disk,
            clock,
            fmts,
            inst,
            pairs: Mutex::new(Vec::new()),
        })
    }

    /// Starts (or stops) recording, reading the clocks after starting and before stopping.
    pub fn switch(&self, on: bool) {
        let mut pairs = self.pairs.lock().unwrap_or_else(|e| e.into_inner());
        if !on {
            pairs.push(tick_and_mono(self.clock));
        }
        self.inst.tracing(on);
        if on {
            pairs.push(tick_and_mono(self.clock));
        }
    }

    /// Everything the instance recorded on the target disk, and the events its rings lost.
    fn drain(&self) -> Result<(Vec<Event>, u64), String> {
        let mut events = Vec::new();
        let f = &self.fmts;
        let lost = self.inst.drain(|t, rec| {
            let id = rec
                .get(0..2)
                .map(|b| u64::from(u16::from_ne_bytes([b[0], b[1]])));
            let (kind, fmt) = match id {
                Some(i) if i == f.queue.id => (Kind::Queue, &f.queue),
                Some(i) if i == f.issue.id => (Kind::Issue, &f.issue),
                Some(i) if i == f.complete.id => (Kind::Complete, &f.complete),
                _ => return,
            };
            if let Some(e) = event_of(rec, kind, fmt, self.disk.dev, t) {
                events.push(e);
            }
        });
        Ok((events, lost?))
    }

    /// The pass's figures from its ops (per thread, in the run's ticks) and `map` (offset to sector).
    pub fn figures(
        &self,
        ops: &[&[OpRec]],
        map: &SectorMap,
        bs: u64,
    ) -> Result<LayerFigures, String> {
        let (events, lost) = self.drain()?;
        let pairs = self.pairs.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let to_ns = mono_of(&pairs);
        let spans: Vec<OpSpan> = ops
            .iter()
            .flat_map(|t| t.iter())
            .map(|o| {
                let (sector, nr) = map.sectors(o.offset, bs);
                OpSpan {
                    write: o.write,
                    start: to_ns(o.start),
                    end: to_ns(o.end),
                    sector,
                    nr,
                }
            })
            .collect();
        // With events lost, an op without any cannot be told from one served without a request.
        let s = split::split(&spans, &events, lost > 0);
        let n = s.ops().max(1) as f64;
        let (b, q, d, a) = (
            split::mean_p99(&s.before),
            split::mean_p99(&s.queued),
            split::mean_p99(&s.device),
            split::mean_p99(&s.after),
        );
        Ok(LayerFigures {
            before_ns: b.0,
            queued_ns: q.0,
            device_ns: d.0,
            after_ns: a.0,
            before_p99_ns: b.1,
            queued_p99_ns: q.1,
            device_p99_ns: d.1,
            after_p99_ns: a.1,
            requests: s.requests as f64 / n,
            ops: s.ops() as u64,
            ops_without_request: s.without_request,
            ops_unmatched: s.unmatched,
            pass_mean_ns: split::mean_p99(&s.latency).0,
            timed_mean_ns: None,
            lost_samples: lost,
            source: format!(
                "block:block_bio_queue, block_rq_issue and block_rq_complete on {} (every hit, recorded in an ftrace \
                 instance of iolab's own), matched by sector to {} ops of a separate untimed pass",
                self.disk.name,
                spans.len()
            ),
        })
    }
}

/// Maps the run's clock ticks onto CLOCK_MONOTONIC through the two readings taken together (a single
/// reading: ticks are taken as nanoseconds from it).
fn mono_of(pairs: &[(u64, u64)]) -> impl Fn(u64) -> u64 {
    let (t0, m0) = pairs.first().copied().unwrap_or((0, 0));
    let (t1, m1) = pairs.last().copied().unwrap_or((t0, m0));
    let rate = if t1 > t0 {
        (m1 - m0) as f64 / (t1 - t0) as f64
    } else {
        1.0
    };
    move |t: u64| (m0 as f64 + (t as f64 - t0 as f64) * rate).max(0.0) as u64
}

/// One tracepoint record of disk `dev` as an event at time `t` (`None`: another disk, or too short).
fn event_of(rec: &[u8], kind: Kind, f: &TpFormat, dev: u32, t: u64) -> Option<Event> {
    let u32_at = |o: usize| {
        rec.get(o..o + 4)
            .map(|x| u32::from_ne_bytes(x.try_into().expect("4")))
    };
    let sector = rec
        .get(f.sector..f.sector + 8)
        .map(|x| u64::from_ne_bytes(x.try_into().expect("8")))?;
    let rwbs = rec.get(f.rwbs..)?;
    let rwbs = &rwbs[..rwbs
        .iter()
        .position(|&c| c == 0)
        .unwrap_or(rwbs.len())
        .min(10)];
    (u32_at(f.dev)? == dev).then_some(Event {
        kind,
        write: rwbs.contains(&b'W'),
        t,
        sector,
        nr: u32_at(f.nr_sector)?,
    })
}

/// Where the target's offsets lie on the disk: a file's extents, or a block device's own offsets, plus
/// the partition's start.
pub struct SectorMap {
    pub extents: Option<Vec<sys::Extent>>,
    pub start: u64,
}

impl SectorMap {
    /// The disk sectors of `len` bytes at `offset` (nr 0: the file has no device place there).
    pub fn sectors(&self, offset: u64, len: u64) -> (u64, u64) {
        let nr = len.div_ceil(512);
        let Some(ext) = &self.extents else {
            return (self.start + offset / 512, nr);
        };
        let i = ext.partition_point(|e| e.logical + e.len <= offset);
        match ext.get(i) {
            Some(e) if e.logical <= offset && !e.unmapped => {
                let within = (e.logical + e.len - offset).min(len);
                (
                    self.start + (e.physical + offset - e.logical) / 512,
                    within.div_ceil(512),
                )
            }
            _ => (0, 0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_become_sectors_through_the_extents_and_the_partition_start() {
        let e = |logical, physical, len| sys::Extent {
            logical,
            physical,
            len,
            unmapped: false,
        };
        let m = SectorMap {
            extents: Some(vec![e(0, 1 << 20, 8192), e(8192, 4 << 20, 4096)]),
            start: 2048,
        };
        assert_eq!(m.sectors(4096, 4096), (2048 + (1 << 20) / 512 + 8, 8));
        assert_eq!(m.sectors(8192, 4096), (2048 + (4 << 20) / 512, 8));
        assert_eq!(m.sectors(12288, 4096), (0, 0));
        let dev = SectorMap {
            extents: None,
            start: 0,
        };
        assert_eq!(dev.sectors(1 << 20, 4096), (2048, 8));
    }

    #[test]
    fn records_of_other_disks_are_dropped() {
        let f = TpFormat {
            id: 1,
            dev: 8,
            sector: 16,
            nr_sector: 24,
            rwbs: 28,
        };
        let rec = |dev: u32, sector: u64| {
            let mut raw = vec![0u8; 38];
            raw[28..30].copy_from_slice(b"WS");
            raw[8..12].copy_from_slice(&dev.to_ne_bytes());
            raw[16..24].copy_from_slice(&sector.to_ne_bytes());
            raw[24..28].copy_from_slice(&8u32.to_ne_bytes());
            raw
        };
        let e = event_of(&rec(42, 100), Kind::Issue, &f, 42, 777);
        assert_eq!(
            e,
            Some(Event {
                kind: Kind::Issue,
                write: true,
                t: 777,
                sector: 100,
                nr: 8
            })
        );
        assert_eq!(event_of(&rec(7, 100), Kind::Issue, &f, 42, 777), None);
        assert_eq!(
            event_of(&rec(42, 100)[..20], Kind::Issue, &f, 42, 777),
            None
        );
    }
}
