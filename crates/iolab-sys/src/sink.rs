//! iolab's sink driver (`kmod/`): its ioctl and IORING_OP_URING_CMD ABI, mirrored from `kmod/iolab_sink.h`
//! (a test reads that header and checks every number and field here), and the module calls that load and
//! unload it (finit_module, delete_module).

use super::errno::{result, SysErr, SysResult};
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

/// IDENTIFY's magic: "iolb".
pub const IOLAB_SINK_MAGIC: u32 = 0x696f_6c62;
/// The ABI version this build speaks.
pub const IOLAB_SINK_ABI: u32 = 2;
pub const IOLAB_SINK_LEGACY: u32 = 0;
pub const IOLAB_SINK_NOWAIT: u32 = 1;
pub const IOLAB_SINK_KWRITE_MAX_LINES: u64 = 10_000_000;
/// The cmd_op of a uring_cmd write.
pub const IOLAB_SINK_CMD_WRITE: u32 = 1;
pub const IOLAB_SINK_IOC_TYPE: u32 = 0xD5;

/// struct iolab_sink_info.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SinkInfo {
    pub magic: u32,
    pub abi: u32,
    pub buf_size: u64,
    pub personality: u32,
    pub log: u32,
    pub default_personality: u32,
    pub reserved: [u32; 5],
}

/// struct iolab_sink_counters: totals since the module was loaded (in results: a pass's deltas).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SinkCounters {
    pub write_calls: u64,
    pub write_bytes: u64,
    pub read_calls: u64,
    pub read_bytes: u64,
    pub nowait_calls: u64,
    pub worker_calls: u64,
    pub cmd_calls: u64,
    pub cmd_bytes: u64,
    pub kernel_writes: u64,
    pub kernel_bytes: u64,
    pub log_lines: u64,
    pub mmaps: u64,
    #[serde(skip)]
    pub reserved: [u64; 4],
}

/// struct iolab_sink_kwrite.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SinkKwrite {
    pub path: u64,
    pub lines: u64,
    pub ns: u64,
    pub bytes: u64,
    pub calls: u64,
    pub reserved: [u64; 3],
}

/// Sub-bucket bits of the gap histogram: 32 buckets per power of two.
pub const IOLAB_SINK_GAP_SUB_BITS: u32 = 5;
/// Buckets of the gap histogram: exact below 64 ns, then 32 per power of two up to 2^64.
pub const IOLAB_SINK_GAP_BUCKETS: usize = 1920;

/// struct iolab_sink_gaps: the ns between logged writes as the driver saw them (its log line's ktime),
/// a log-linear histogram (`kmod/iolab_sink.h` describes the buckets).
#[repr(C)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SinkGaps {
    pub count: u64,
    pub sum_ns: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    pub buckets: [u64; IOLAB_SINK_GAP_BUCKETS],
}

impl Default for SinkGaps {
    fn default() -> SinkGaps {
        SinkGaps {
            count: 0,
            sum_ns: 0,
            min_ns: 0,
            max_ns: 0,
            buckets: [0; IOLAB_SINK_GAP_BUCKETS],
        }
    }
}

/// struct iolab_sink_cmd: the 16 command bytes of a uring_cmd SQE.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SinkCmd {
    pub addr: u64,
    pub len: u32,
    pub offset: u32,
}

impl SinkCmd {
    /// The bytes the SQE carries (little-endian, as the struct lies in memory on the machines iolab runs on).
    pub fn to_bytes(self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&self.addr.to_ne_bytes());
        b[8..12].copy_from_slice(&self.len.to_ne_bytes());
        b[12..].copy_from_slice(&self.offset.to_ne_bytes());
        b
    }
}

/// The kernel's _IOC encoding (asm-generic: dir 2 bits, size 14, type 8, nr 8).
const fn ioc(dir: u32, nr: u32, size: usize) -> u32 {
    (dir << 30) | ((size as u32) << 16) | (IOLAB_SINK_IOC_TYPE << 8) | nr
}
const IOC_WRITE: u32 = 1;
const IOC_READ: u32 = 2;

pub const IOLAB_SINK_IOC_IDENTIFY: u32 = ioc(IOC_READ, 0, std::mem::size_of::<SinkInfo>());
pub const IOLAB_SINK_IOC_COUNTERS: u32 = ioc(IOC_READ, 1, std::mem::size_of::<SinkCounters>());
pub const IOLAB_SINK_IOC_REOPEN: u32 = ioc(IOC_WRITE, 2, std::mem::size_of::<u32>());
pub const IOLAB_SINK_IOC_SET_LOG: u32 = ioc(IOC_WRITE, 3, std::mem::size_of::<u32>());
pub const IOLAB_SINK_IOC_KWRITE: u32 =
    ioc(IOC_READ | IOC_WRITE, 4, std::mem::size_of::<SinkKwrite>());
pub const IOLAB_SINK_IOC_GAPS: u32 = ioc(IOC_READ, 5, std::mem::size_of::<SinkGaps>());

/// IOLAB_SINK_IOC_IDENTIFY: who the driver behind `fd` is. Any other device answers ENOTTY (or worse, so
/// call it only on a device that sysfs names iolab_sink).
pub fn sink_identify(fd: RawFd) -> SysResult<SinkInfo> {
    let mut info = SinkInfo::default();
    // SAFETY: the driver writes exactly one struct iolab_sink_info (the size is in the request number)
    // into `info`, a live local.
    result("ioctl(IOLAB_SINK_IOC_IDENTIFY)", unsafe {
        libc::ioctl(fd, IOLAB_SINK_IOC_IDENTIFY as _, &mut info as *mut SinkInfo)
    })?;
    Ok(info)
}

/// IOLAB_SINK_IOC_COUNTERS: the driver's totals.
pub fn sink_counters(fd: RawFd) -> SysResult<SinkCounters> {
    let mut c = SinkCounters::default();
    // SAFETY: the driver writes one struct iolab_sink_counters into `c`, a live local.
    result("ioctl(IOLAB_SINK_IOC_COUNTERS)", unsafe {
        libc::ioctl(
            fd,
            IOLAB_SINK_IOC_COUNTERS as _,
            &mut c as *mut SinkCounters,
        )
    })?;
    Ok(c)
}

/// IOLAB_SINK_IOC_GAPS: the driver's gap histogram since the last call, which the call empties (the next
/// logged write starts a new chain).
pub fn sink_gaps(fd: RawFd) -> SysResult<Box<SinkGaps>> {
    let mut g = Box::<SinkGaps>::default();
    // SAFETY: the driver writes one struct iolab_sink_gaps (the size is in the request number) into `g`,
    // a live allocation of that type.
    result("ioctl(IOLAB_SINK_IOC_GAPS)", unsafe {
        libc::ioctl(fd, IOLAB_SINK_IOC_GAPS as _, &mut *g as *mut SinkGaps)
    })?;
    Ok(g)
}

/// IOLAB_SINK_IOC_REOPEN: a new descriptor (close-on-exec) of the same device with `personality`.
pub fn sink_reopen(fd: RawFd, personality: u32) -> SysResult<OwnedFd> {
    // SAFETY: the argument is passed by value; the driver reads no memory of ours.
    let nfd = result("ioctl(IOLAB_SINK_IOC_REOPEN)", unsafe {
        libc::ioctl(fd, IOLAB_SINK_IOC_REOPEN as _, personality as libc::c_ulong)
    })?;
    // SAFETY: on success the ioctl returned a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(nfd) })
}

/// IOLAB_SINK_IOC_SET_LOG: the file's log switch.
pub fn sink_set_log(fd: RawFd, on: bool) -> SysResult<()> {
    // SAFETY: the argument is passed by value.
    result("ioctl(IOLAB_SINK_IOC_SET_LOG)", unsafe {
        libc::ioctl(fd, IOLAB_SINK_IOC_SET_LOG as _, on as libc::c_ulong)
    })
    .map(|_| ())
}

/// IOLAB_SINK_IOC_KWRITE: the driver writes `lines` decimal lines to the new file `path` (absolute) from
/// inside the kernel; returns its figures (ns, bytes, kernel_write calls).
pub fn sink_kwrite(fd: RawFd, path: &std::path::Path, lines: u64) -> SysResult<SinkKwrite> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| SysErr::new("ioctl(IOLAB_SINK_IOC_KWRITE)", libc::EINVAL))?;
    let mut kw = SinkKwrite {
        path: c.as_ptr() as u64,
        lines,
        ..Default::default()
    };
    // SAFETY: `kw` is a live local the driver reads and writes (one struct iolab_sink_kwrite); the path it
    // points to is `c`, alive and NUL-terminated for the whole call.
    result("ioctl(IOLAB_SINK_IOC_KWRITE)", unsafe {
        libc::ioctl(fd, IOLAB_SINK_IOC_KWRITE as _, &mut kw as *mut SinkKwrite)
    })?;
    Ok(kw)
}

/// finit_module(2): loads the module in `fd` with `params` ("name=value ..."). Needs CAP_SYS_MODULE.
pub fn finit_module(fd: RawFd, params: &str) -> SysResult<()> {
    let p =
        std::ffi::CString::new(params).map_err(|_| SysErr::new("finit_module", libc::EINVAL))?;
    // SAFETY: `p` is a NUL-terminated string alive for the call; the kernel reads the module from `fd`.
    result("finit_module", unsafe {
        libc::syscall(libc::SYS_finit_module, fd, p.as_ptr(), 0)
    })
    .map(|_| ())
}

/// delete_module(2) of `name`, O_NONBLOCK (refused with EWOULDBLOCK while it is in use, never waits).
pub fn delete_module(name: &str) -> SysResult<()> {
    let n = std::ffi::CString::new(name).map_err(|_| SysErr::new("delete_module", libc::EINVAL))?;
    // SAFETY: `n` is a NUL-terminated string alive for the call.
    result("delete_module", unsafe {
        libc::syscall(libc::SYS_delete_module, n.as_ptr(), libc::O_NONBLOCK)
    })
    .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    const HEADER: &str = include_str!("../../../kmod/iolab_sink.h");

    /// The value of `#define NAME VALUE` in the header (decimal or 0x hex).
    fn define(name: &str) -> u64 {
        let line = HEADER
            .lines()
            .find(|l| {
                let mut w = l.split_whitespace();
                w.next() == Some("#define") && w.next() == Some(name)
            })
            .unwrap_or_else(|| panic!("{name} is not defined in iolab_sink.h"));
        let v = line.split_whitespace().nth(2).expect("a value");
        match v.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).unwrap(),
            None => v.parse().unwrap(),
        }
    }

    /// The field names of `struct NAME { ... };` in the header, in order (arrays with their length).
    fn fields(name: &str) -> Vec<String> {
        let start = HEADER
            .find(&format!("struct {name} {{"))
            .unwrap_or_else(|| panic!("struct {name} is not in iolab_sink.h"));
        let body = &HEADER[start..];
        let body = &body[body.find('{').unwrap() + 1..body.find("};").unwrap()];
        body.lines()
            .filter_map(|l| l.split(';').next())
            .filter(|d| d.trim_start().starts_with("__u"))
            .map(|d| d.split_whitespace().last().unwrap().to_string())
            .collect()
    }

    /// `#define NAME _IOx(IOLAB_SINK_IOC_TYPE, N, TYPE)` of the header, encoded with this file's sizes.
    fn ioc_of_header(name: &str) -> u32 {
        let at = HEADER
            .find(&format!("#define {name} "))
            .or_else(|| HEADER.find(&format!("#define {name}\t")))
            .unwrap_or_else(|| panic!("{name} is not defined in iolab_sink.h"));
        let text = &HEADER[at + "#define ".len() + name.len()..];
        let text = &text[..text.find(')').expect("a macro call") + 1];
        let (dir, args) = text
            .split_once("_IO")
            .and_then(|(_, r)| r.split_once('('))
            .unwrap_or_else(|| panic!("{name}: {text}"));
        let args: Vec<&str> = args
            .trim_end_matches(')')
            .split(',')
            .map(str::trim)
            .collect();
        assert_eq!(args[0], "IOLAB_SINK_IOC_TYPE", "{name}");
        let size = match args[2] {
            "__u32" => 4,
            "struct iolab_sink_info" => size_of::<SinkInfo>(),
            "struct iolab_sink_counters" => size_of::<SinkCounters>(),
            "struct iolab_sink_kwrite" => size_of::<SinkKwrite>(),
            "struct iolab_sink_gaps" => size_of::<SinkGaps>(),
            t => panic!("{name}: an argument type this test does not know: {t}"),
        };
        let d = match dir {
            "R" => IOC_READ,
            "W" => IOC_WRITE,
            "WR" => IOC_READ | IOC_WRITE,
            d => panic!("{name}: _IO{d}"),
        };
        ioc(d, args[1].parse().unwrap(), size)
    }

    #[test]
    fn numbers_match_the_c_header() {
        assert_eq!(define("IOLAB_SINK_MAGIC"), IOLAB_SINK_MAGIC as u64);
        assert_eq!(define("IOLAB_SINK_ABI"), IOLAB_SINK_ABI as u64);
        assert_eq!(define("IOLAB_SINK_LEGACY"), IOLAB_SINK_LEGACY as u64);
        assert_eq!(define("IOLAB_SINK_NOWAIT"), IOLAB_SINK_NOWAIT as u64);
        assert_eq!(
            define("IOLAB_SINK_KWRITE_MAX_LINES"),
            IOLAB_SINK_KWRITE_MAX_LINES
        );
        assert_eq!(define("IOLAB_SINK_CMD_WRITE"), IOLAB_SINK_CMD_WRITE as u64);
        assert_eq!(define("IOLAB_SINK_IOC_TYPE"), IOLAB_SINK_IOC_TYPE as u64);
        assert_eq!(
            define("IOLAB_SINK_GAP_SUB_BITS"),
            IOLAB_SINK_GAP_SUB_BITS as u64
        );
        assert_eq!(
            define("IOLAB_SINK_GAP_BUCKETS"),
            IOLAB_SINK_GAP_BUCKETS as u64
        );
        // (64 - SUB_BITS + 1) powers of two of 2^SUB_BITS buckets each cover every u64.
        assert_eq!(
            IOLAB_SINK_GAP_BUCKETS,
            (64 - IOLAB_SINK_GAP_SUB_BITS as usize + 1) << IOLAB_SINK_GAP_SUB_BITS
        );
        // Each request number as the header declares it (direction, number, argument type) ...
        for (name, v) in [
            ("IOLAB_SINK_IOC_IDENTIFY", IOLAB_SINK_IOC_IDENTIFY),
            ("IOLAB_SINK_IOC_COUNTERS", IOLAB_SINK_IOC_COUNTERS),
            ("IOLAB_SINK_IOC_REOPEN", IOLAB_SINK_IOC_REOPEN),
            ("IOLAB_SINK_IOC_SET_LOG", IOLAB_SINK_IOC_SET_LOG),
            ("IOLAB_SINK_IOC_KWRITE", IOLAB_SINK_IOC_KWRITE),
            ("IOLAB_SINK_IOC_GAPS", IOLAB_SINK_IOC_GAPS),
        ] {
            assert_eq!(ioc_of_header(name), v, "{name}");
        }
        // ... and as the C macros compute them (_IOR(0xD5, 0, 48-byte struct) ...).
        assert_eq!(IOLAB_SINK_IOC_IDENTIFY, 0x8030_d500);
        assert_eq!(IOLAB_SINK_IOC_COUNTERS, 0x8080_d501);
        assert_eq!(IOLAB_SINK_IOC_REOPEN, 0x4004_d502);
        assert_eq!(IOLAB_SINK_IOC_SET_LOG, 0x4004_d503);
        assert_eq!(IOLAB_SINK_IOC_KWRITE, 0xc040_d504);
        // 32 + 1920 x 8 = 15,392 bytes (0x3c20), under _IOC's 14-bit size.
        assert_eq!(IOLAB_SINK_IOC_GAPS, 0xbc20_d505);
    }

    #[test]
    fn struct_layouts_match_the_c_header() {
        assert_eq!(
            fields("iolab_sink_info"),
            [
                "magic",
                "abi",
                "buf_size",
                "personality",
                "log",
                "default_personality",
                "reserved[5]"
            ]
        );
        assert_eq!(size_of::<SinkInfo>(), 48);
        assert_eq!(offset_of!(SinkInfo, buf_size), 8);
        assert_eq!(offset_of!(SinkInfo, default_personality), 24);
        assert_eq!(
            fields("iolab_sink_counters"),
            [
                "write_calls",
                "write_bytes",
                "read_calls",
                "read_bytes",
                "nowait_calls",
                "worker_calls",
                "cmd_calls",
                "cmd_bytes",
                "kernel_writes",
                "kernel_bytes",
                "log_lines",
                "mmaps",
                "reserved[4]"
            ]
        );
        assert_eq!(size_of::<SinkCounters>(), 128);
        assert_eq!(offset_of!(SinkCounters, mmaps), 88);
        assert_eq!(
            fields("iolab_sink_kwrite"),
            ["path", "lines", "ns", "bytes", "calls", "reserved[3]"]
        );
        assert_eq!(size_of::<SinkKwrite>(), 64);
        assert_eq!(offset_of!(SinkKwrite, calls), 32);
        assert_eq!(
            fields("iolab_sink_gaps"),
            [
                "count",
                "sum_ns",
                "min_ns",
                "max_ns",
                "buckets[IOLAB_SINK_GAP_BUCKETS]"
            ]
        );
        assert_eq!(size_of::<SinkGaps>(), 32 + 8 * IOLAB_SINK_GAP_BUCKETS);
        assert_eq!(offset_of!(SinkGaps, buckets), 32);
        assert_eq!(fields("iolab_sink_cmd"), ["addr", "len", "offset"]);
        assert_eq!(size_of::<SinkCmd>(), 16);
        assert_eq!(offset_of!(SinkCmd, offset), 12);
        let b = SinkCmd {
            addr: 0x1122_3344_5566_7788,
            len: 9,
            offset: 4096,
        }
        .to_bytes();
        assert_eq!(&b[..8], &0x1122_3344_5566_7788u64.to_ne_bytes());
        assert_eq!(&b[8..12], &9u32.to_ne_bytes());
        assert_eq!(&b[12..], &4096u32.to_ne_bytes());
    }

    #[test]
    fn module_calls_name_the_errno_on_this_host() {
        // Without the module loaded (or without module support), deleting it fails; the error names the call.
        let e = delete_module("iolab_sink_never_loaded").unwrap_err();
        assert_eq!(e.call, "delete_module");
        assert!(e.errno != 0);
    }
}
