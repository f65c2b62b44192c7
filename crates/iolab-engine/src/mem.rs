//! Memory iolab asks for, and what happens when there is none.
//!
//! Every allocation whose size a user chooses (I/O buffers, the stdio buffer, verification buffers and
//! bitmaps, prefill chunks, the per-thread histograms) goes through [`zeroed`]: a failure is an error
//! ([`out_of_memory`], exit 1) that names the size asked for, what it was for, the flag that sets it and
//! the limit that refused it (RLIMIT_AS when `ulimit -v` set one, else MemAvailable), and the run's files
//! are removed as on any error. Sizes no machine of this one's memory could give are refused before
//! anything is created ([`check_fits`], exit 2).
//!
//! Small allocations elsewhere (strings, the merged HdrHistograms) still abort the Rust way when they
//! fail; [`Tracked`], the binary's global allocator, remembers the size that failed, and the SIGABRT
//! handler in `fault.rs` turns that abort into the same kind of message, exit 1, with the files removed.

use crate::error::{Error, Result};
use crate::units::fmt_size;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The size of the last allocation the system allocator refused and nobody handled (0: none).
static FAILED: AtomicUsize = AtomicUsize::new(0);

/// The system allocator (glibc malloc), remembering the size of an allocation it refused: the `iolab`
/// binary's `#[global_allocator]`. One relaxed store on failure; nothing on success.
pub struct Tracked;

impl Tracked {
    #[inline(always)]
    fn seen(p: *mut u8, size: usize) -> *mut u8 {
        if p.is_null() {
            FAILED.store(size.max(1), Ordering::Relaxed);
        }
        p
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so `System`'s
// guarantees hold; the only addition is a store to an atomic when it returns null.
unsafe impl GlobalAlloc for Tracked {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is passed on unchanged.
        Self::seen(unsafe { System.alloc(layout) }, layout.size())
    }
    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as above.
        Self::seen(unsafe { System.alloc_zeroed(layout) }, layout.size())
    }
    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as above.
        Self::seen(unsafe { System.realloc(ptr, layout, new_size) }, new_size)
    }
}

/// The size of a refused allocation that was not handled as an error, if any (for the abort handler;
/// async-signal-safe).
pub fn unhandled_failure() -> Option<usize> {
    match FAILED.load(Ordering::Relaxed) {
        0 => None,
        n => Some(n),
    }
}

/// Element types for which all-zero bytes are a valid value.
pub trait Zeroable: Copy {}
impl Zeroable for u8 {}
impl Zeroable for u64 {}

/// `n` zeroed elements, or the out-of-memory error for `what` (a phrase: "the --verify read-back
/// chunk") with `remedy` ("lower --bs"). Memory comes zeroed from calloc, so its pages are mapped only
/// when first touched, like `vec![0; n]`.
pub fn zeroed<T: Zeroable>(n: usize, what: &str, remedy: &str) -> Result<Vec<T>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let bytes = (n as u64).saturating_mul(std::mem::size_of::<T>() as u64);
    let layout = Layout::array::<T>(n).map_err(|_| out_of_memory(bytes, what, remedy))?;
    // SAFETY: the layout has a non-zero size (n > 0 and T is u8 or u64).
    let p = unsafe { std::alloc::alloc_zeroed(layout) };
    if p.is_null() {
        return Err(out_of_memory(bytes, what, remedy));
    }
    // SAFETY: `p` was allocated by the global allocator with the layout of `n` T's (what Vec uses for
    // capacity n), and all-zero bytes are valid T's (Zeroable), so all `n` elements are initialised.
    Ok(unsafe { Vec::from_raw_parts(p.cast::<T>(), n, n) })
}

/// The error of an allocation of `bytes` for `what` that failed: exit 1, with the limit that refused it
/// and what to change. The failure is handled, so the abort handler will not report it.
pub fn out_of_memory(bytes: u64, what: &str, remedy: &str) -> Error {
    FAILED.store(0, Ordering::Relaxed);
    Error::Runtime(format!(
        "out of memory (ENOMEM): cannot allocate {} ({bytes} bytes) for {what}; {}: {remedy}",
        fmt_size(bytes),
        limit_text()
    ))
}

/// The limit allocations run into: RLIMIT_AS if set, else the memory the kernel says is available.
pub fn limit_text() -> String {
    match iolab_sys::address_space_limit() {
        Some(l) => format!(
            "the address-space limit (ulimit -v, RLIMIT_AS) is {} and iolab already uses {}; raise the limit or \
             ask for less",
            fmt_size(l),
            vm_size().map(fmt_size).unwrap_or_else(|| "an unknown amount".into())
        ),
        None => match meminfo("MemAvailable") {
            Some(a) => format!(
                "no address-space limit is set (ulimit -v) and the kernel has {} available (MemAvailable)",
                fmt_size(a)
            ),
            None => "no address-space limit is set (ulimit -v); MemAvailable is unknown".into(),
        },
    }
}

/// A `/proc/meminfo` line's value in bytes ("MemTotal", "MemAvailable").
pub fn meminfo(key: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    kib_field(&text, key)
}

/// This process's address-space size (VmSize in /proc/self/status) in bytes.
fn vm_size() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    kib_field(&text, "VmSize")
}

/// This process's peak resident set so far (VmHWM in /proc/self/status: its binary's pages, heap, stacks
/// and the pages of files it maps), in bytes; what `/usr/bin/time -v` reports as its maximum RSS.
pub fn peak_rss() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    kib_field(&text, "VmHWM")
}

/// "Key:   123 kB" lines: the value of `key` in bytes.
fn kib_field(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let rest = l.strip_prefix(key)?.strip_prefix(':')?;
        let kib: u64 = rest.split_whitespace().next()?.parse().ok()?;
        Some(kib * 1024)
    })
}

/// Under an address-space limit, glibc's extra malloc arenas (64 MiB of address space each, reserved
/// when a thread first allocates, one per thread up to 8 per CPU) would use it up before the run's own
/// buffers: keep them to a quarter of the limit. Nothing changes without a limit. Call once, at start.
pub fn fit_malloc_to_limit() {
    if let Some(l) = iolab_sys::address_space_limit() {
        let arenas = (l / 4 / (64 << 20)).clamp(1, 64) as u32;
        iolab_sys::limit_malloc_arenas(arenas);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::fits::check_fits_in;

    #[test]
    fn meminfo_lines_are_read_in_bytes() {
        let text = "MemTotal:       24684084 kB\nMemAvailable:   23912536 kB\n";
        assert_eq!(kib_field(text, "MemTotal"), Some(24684084 * 1024));
        assert_eq!(kib_field(text, "MemAvailable"), Some(23912536 * 1024));
        assert_eq!(kib_field(text, "Mem"), None);
    }

    #[test]
    fn peak_rss_is_at_least_what_this_process_touched() {
        let Some(before) = peak_rss() else {
            println!("SKIPPED peak_rss: /proc/self/status has no VmHWM here");
            return;
        };
        // 64 MiB touched page by page: the peak is then at least that much.
        let v: Vec<u8> = zeroed(64 << 20, "a test", "none").unwrap();
        let touched: u64 = v.iter().step_by(4096).map(|&b| b as u64 + 1).sum();
        assert_eq!(touched, (64 << 20) / 4096);
        let after = peak_rss().unwrap();
        assert!(
            after >= (64 << 20) && after >= before,
            "{before} -> {after}"
        );
    }

    #[test]
    fn zeroed_gives_zeroes_and_refuses_the_impossible() {
        let v: Vec<u64> = zeroed(1000, "a test", "none").unwrap();
        assert_eq!(v.len(), 1000);
        assert!(v.iter().all(|&x| x == 0));
        if usize::BITS < 64 {
            // Half of a 32-bit address space (2 GiB) can be granted lazily (it was, under qemu-arm).
            println!(
                "SKIPPED the impossible allocation: no size is impossible yet valid on 32-bit"
            );
            return;
        }
        let e = zeroed::<u8>(usize::MAX / 2, "a test buffer", "ask for less").unwrap_err();
        let m = e.to_string();
        assert_eq!(e.exit_code(), 1);
        assert!(
            m.contains("ENOMEM") && m.contains("a test buffer") && m.contains("ask for less"),
            "{m}"
        );
        assert!(m.contains("RLIMIT_AS") || m.contains("MemAvailable"), "{m}");
    }

    #[test]
    fn buffers_beyond_memory_are_bad_input_naming_the_flag_value_and_maximum() {
        let spec = |args: &[(&str, &str)]| {
            let mut raw = crate::spec::RawSpec::new();
            for (k, v) in args {
                raw = raw.with(k, *v);
            }
            raw.resolve().unwrap()
        };
        let gib = 1u64 << 30;
        let s = spec(&[("bs", "1g"), ("threads", "8")]);
        let e = check_fits_in(&s, 4 * gib).unwrap_err();
        let m = e.to_string();
        assert_eq!(e.exit_code(), 2);
        assert!(
            m.starts_with("--bs: 1 GiB (1073741824 bytes)") && m.contains("MemTotal 4 GiB"),
            "{m}"
        );
        assert!(m.contains("the most --bs can be here is 508.4 MiB"), "{m}");
        assert!(check_fits_in(&spec(&[("bs", "1g")]), 4 * gib).is_ok());
        let s = spec(&[
            ("method", "stdio"),
            ("stdio-buffer", "1g"),
            ("threads", "8"),
        ]);
        let m = check_fits_in(&s, 4 * gib).unwrap_err().to_string();
        assert!(m.starts_with("--stdio-buffer: 1 GiB"), "{m}");
        let s = spec(&[("method", "io_uring"), ("qd", "64"), ("bs", "64m")]);
        let m = check_fits_in(&s, 2 * gib).unwrap_err().to_string();
        assert!(
            m.contains("1 thread(s) x --qd 64") && m.contains("--bs can be here is 31.9 MiB"),
            "{m}"
        );
    }
}
