//! How much address space a run may map: the nominal region of /dev/null and /dev/zero (a mapping of
//! /dev/zero is as long as the region), and the refusal of mappings a 32-bit process cannot make.
//!
//! The region was 1 TiB per thread, which a 48-bit x86_64 or arm64 process can reserve, but an arm64
//! kernel built with 39-bit virtual addresses (the Raspberry Pi's) gives a process 512 GiB in all, and a
//! 32-bit process 3 GiB. The region is now taken from the process's real limits: the top of its address
//! space (the end of the highest mapping in /proc/self/maps, where the stack sits) and RLIMIT_AS.

use super::pin::Pin;
use crate::error::{Error, Result};
use crate::spec::Spec;
use crate::target_kind::TargetKind;
use iolab_sys as sys;
use std::os::fd::AsRawFd;

/// File size when the run is bounded only by a duration.
pub const DEFAULT_FILE_SIZE: u64 = 64 << 20;

/// The nominal region per thread where nothing limits it.
pub const SINK_REGION_MAX: u64 = 1 << 40;
/// On 32-bit targets: 256 MiB per thread, a fraction of the 3 GiB a process has.
const SINK_REGION_32: u64 = 256 << 20;

/// The region of /dev/null or /dev/zero per thread for `threads` threads: at most an eighth of the
/// address space below `va_top` and a quarter of `as_limit` (RLIMIT_AS) shared by the threads, a power of
/// two, between 1 MiB and 1 TiB. `ptr_bits` is the target's pointer width.
pub fn sink_region_for(
    va_top: Option<u64>,
    as_limit: Option<u64>,
    threads: u64,
    ptr_bits: u32,
) -> u64 {
    let threads = threads.max(1);
    if ptr_bits < 64 {
        let cap = as_limit.map_or(SINK_REGION_32, |l| l / 4 / threads);
        return pow2_floor(cap.min(SINK_REGION_32)).max(1 << 20);
    }
    let by_va = va_top.map_or(SINK_REGION_MAX, |t| t / 8 / threads);
    let by_rlimit = as_limit.map_or(SINK_REGION_MAX, |l| l / 4 / threads);
    pow2_floor(by_va.min(by_rlimit).min(SINK_REGION_MAX)).max(1 << 20)
}

fn pow2_floor(v: u64) -> u64 {
    if v == 0 {
        0
    } else {
        1 << (63 - v.leading_zeros())
    }
}

/// The end of the highest mapping in a /proc/PID/maps text (the top of the user address space is just
/// above it: the stack, or [vsyscall] on x86_64, which is above the user range and left out).
pub fn va_top_from_maps(maps: &str) -> Option<u64> {
    maps.lines()
        .filter(|l| !l.ends_with("[vsyscall]"))
        .filter_map(|l| l.split_whitespace().next())
        .filter_map(|r| r.split_once('-'))
        .filter_map(|(_, end)| u64::from_str_radix(end, 16).ok())
        .max()
}

/// [`sink_region_for`] for this process.
pub fn sink_region(threads: u64) -> u64 {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    sink_region_for(
        va_top_from_maps(&maps),
        iolab_sys::address_space_limit(),
        threads,
        usize::BITS,
    )
}

/// A mapping of `bytes` as a length the process can pass to mmap(2): on a 32-bit target one of 4 GiB or
/// more would wrap (to 0 or a small length) and anything near 3 GiB cannot fit; refused as bad input,
/// naming `flag`.
pub fn mapping_len(bytes: u64, ptr_bits: u32, flag: &str) -> Result<usize> {
    let limit: u64 = if ptr_bits < 64 { 3 << 30 } else { u64::MAX };
    if bytes >= limit || usize::try_from(bytes).is_err() {
        return Err(Error::usage(
            flag,
            format!(
                "a mapping of {} cannot exist in a {ptr_bits}-bit process (its whole address space is \
                 at most 3 GiB): map less (a smaller {flag}, or more threads sharing it) or use a \
                 64-bit build",
                crate::units::fmt_size(bytes)
            ),
        ));
    }
    Ok(bytes as usize)
}

/// Under qemu-user (7.2, Debian 12's), a 32-bit process's mmap(2) file offset is cut to 32 bits: a
/// mapping at 5 GiB maps the file at 1 GiB, and stores land there (found by CI's smoke run, whose
/// --verify read zeroes at 5 GiB and the pattern at 1 GiB). Refused rather than writing the wrong bytes.
pub fn check_mapping_offset(offset: u64, ptr_bits: u32, emulated: bool) -> Result<()> {
    if emulated && ptr_bits < 64 && offset >= 1 << 32 {
        return Err(Error::usage(
            "--offset",
            format!(
                "a mapping at file offset {} (--offset, or the region of a later thread) cannot be made \
                 correctly under qemu-user: it cuts a 32-bit \
                 process's mmap offsets to 32 bits (the bytes would land 4 GiB lower); run on the board \
                 itself, or map below 4 GiB",
                crate::units::fmt_size(offset)
            ),
        ));
    }
    Ok(())
}

/// The bytes of a device of `size` bytes the run may use from --offset: --file-size of them, or the rest.
pub(crate) fn device_span(
    spec: &crate::spec::Spec,
    size: u64,
    shown: &str,
) -> crate::error::Result<u64> {
    let avail = size.saturating_sub(spec.offset);
    match spec.file_size {
        Some(fs) if fs > avail => Err(crate::error::Error::usage(
            "--file-size",
            format!(
                "{fs} bytes from --offset {} do not fit on {shown} ({size} bytes)",
                spec.offset
            ),
        )),
        Some(fs) => Ok(fs),
        None => Ok(avail),
    }
}

/// A thread's region of `region_blocks` blocks against the walk over it: the zones of `zoned_abs` must
/// fit it, and a `--skip` walk must not go back before its start (a note says where the walk starts
/// over).
pub(crate) fn check_walk(
    spec: &crate::spec::Spec,
    region_blocks: u64,
    notes: &mut Vec<String>,
) -> Result<()> {
    let region = region_blocks * spec.bs;
    spec.distribution.check_region(region)?;
    let ops = spec.ops.map(|n| n.div_ceil(u64::from(spec.threads)));
    notes.extend(crate::seq_skip::region_note(
        spec.skip, spec.bs, ops, region,
    )?);
    Ok(())
}

/// The bytes of the target the threads' regions may use, from its kind, size and the amounts asked.
pub(super) fn usable_bytes(
    spec: &Spec,
    kind: TargetKind,
    shown: &str,
    pin: Option<&Pin>,
    existing_file: bool,
) -> Result<u64> {
    let bs = spec.bs;
    let threads = spec.threads as u64;
    let needed_default = match (spec.ops, spec.bytes) {
        (Some(n), _)
            if spec.duration_s.is_none() || n.saturating_mul(bs) <= DEFAULT_FILE_SIZE * 16 =>
        {
            // --skip N leaves N bytes after each op: the file holds each thread's walk whole.
            let step = bs.saturating_add(spec.skip.max(0) as u64);
            let each = (n.div_ceil(threads).max(1) - 1).saturating_mul(step) + bs;
            each.div_ceil(bs) * threads * bs
        }
        // --size with --bs-split: each thread's share, in whole blocks of the smallest length.
        (None, Some(b)) => b.div_ceil(threads * bs).max(1) * threads * bs,
        _ => DEFAULT_FILE_SIZE,
    };
    Ok(match kind {
        TargetKind::DevNull | TargetKind::DevZero => sink_region(threads) * threads,
        TargetKind::Pipe
        | TargetKind::Socketpair
        | TargetKind::Tcp
        | TargetKind::Sink
        | TargetKind::NvmeGeneric => {
            unreachable!("stream, sink and NVMe generic targets are set up by their own functions")
        }
        TargetKind::BlockDevice => {
            let fd = pin.expect("a block device exists").open(libc::O_RDONLY)?;
            let size = sys::blk_size(fd.as_raw_fd()).map_err(|e| Error::sys_on(e, shown))?;
            device_span(spec, size, shown)?
        }
        TargetKind::File if existing_file => {
            let size = pin.map(|p| p.st.st_size as u64).unwrap_or(0);
            // A mixed run reads blocks it never wrote: it stays within the data the file holds (a method
            // that moves no data reads none).
            if spec.op.reads() && !spec.method.info().no_data {
                let avail = size.saturating_sub(spec.offset);
                match spec.file_size {
                    Some(fs) if fs > avail => {
                        return Err(Error::usage(
                            "--file-size",
                            format!("{shown} holds only {avail} bytes from --offset {}; reads past the end return no data", spec.offset),
                        ))
                    }
                    Some(fs) => fs,
                    None => avail,
                }
            } else {
                // --overwrite replaces the contents: writes stay within the file as it is (wrapping
                // around it), unless --file-size says how far; an empty file takes what the run needs.
                let within = size.saturating_sub(spec.offset);
                let one_each = spec.bs * u64::from(spec.threads);
                // A file smaller than one block per thread grows to exactly that (an empty one takes
                // what the run needs), never to a default size.
                spec.file_size.unwrap_or(if within >= one_each {
                    within
                } else if size > 0 {
                    one_each
                } else {
                    needed_default
                })
            }
        }
        TargetKind::File => spec.file_size.unwrap_or(needed_default),
    })
    .map(|b| match (spec.share_region, spec.file_size) {
        // One region for every thread: the amount's share of one thread, not the total.
        (true, None) if kind == TargetKind::File && !existing_file => {
            b.div_ceil(threads * bs).max(1) * bs
        }
        _ => b,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_region_fits_a_39_bit_address_space() {
        // A 48-bit process keeps 1 TiB per thread.
        assert_eq!(
            sink_region_for(Some(0x7fff_f000_0000), None, 1, 64),
            1 << 40
        );
        // arm64 with 39-bit VA: the stack ends near 2^39 (512 GiB): an eighth is 64 GiB, floored to a
        // power of two below it: 32 GiB.
        let top39 = 0x7f_ffff_f000;
        assert_eq!(sink_region_for(Some(top39), None, 1, 64), 32 << 30);
        assert!(sink_region_for(Some(top39), None, 4, 64) * 4 <= top39 / 4);
        // RLIMIT_AS of 8 GiB with two threads: at most 1 GiB each.
        assert_eq!(sink_region_for(None, Some(8 << 30), 2, 64), 1 << 30);
        // Unknown address space: the nominal 1 TiB.
        assert_eq!(sink_region_for(None, None, 1, 64), 1 << 40);
    }

    #[test]
    fn a_32_bit_process_gets_a_small_region() {
        assert_eq!(sink_region_for(Some(0xbf00_0000), None, 1, 32), 256 << 20);
        assert_eq!(sink_region_for(None, Some(512 << 20), 2, 32), 64 << 20);
    }

    #[test]
    fn the_top_of_the_address_space_comes_from_maps() {
        let maps = "00400000-00452000 r-xp 00000000 08:02 173521 /usr/bin/x\n\
                    7ffd3a6b1000-7ffd3a6d2000 rw-p 00000000 00:00 0 [stack]\n\
                    ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]";
        assert_eq!(va_top_from_maps(maps), Some(0x7ffd_3a6d_2000));
        assert_eq!(va_top_from_maps(""), None);
    }

    #[test]
    fn mappings_beyond_4_gib_are_refused_under_qemu_user_on_32_bit_only() {
        let e = check_mapping_offset(5 << 30, 32, true)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--offset") && e.contains("qemu-user"), "{e}");
        assert!(check_mapping_offset(5 << 30, 32, false).is_ok());
        assert!(check_mapping_offset(5 << 30, 64, true).is_ok());
        assert!(check_mapping_offset(1 << 30, 32, true).is_ok());
    }

    #[test]
    fn mappings_of_4_gib_are_refused_on_32_bit() {
        let e = mapping_len(4 << 30, 32, "--size").unwrap_err().to_string();
        assert!(e.contains("--size") && e.contains("32-bit"), "{e}");
        assert!(mapping_len(3 << 30, 32, "--size").is_err());
        assert_eq!(mapping_len(64 << 20, 32, "--size").unwrap(), 64 << 20);
        if usize::BITS == 64 {
            assert_eq!(mapping_len(4 << 30, 64, "--size").unwrap(), 4 << 30);
        }
    }
}
