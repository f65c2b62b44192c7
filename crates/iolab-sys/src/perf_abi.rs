//! The perf_event ABI iolab uses (linux/perf_event.h), defined here rather than taken from a bindings
//! crate: perf-event-open-sys has no 32-bit ARM bindings, and every structure below is made of
//! fixed-size fields whose offsets are the same on every architecture Linux supports (the kernel pads the
//! structs so that u64 fields sit at 8-byte offsets). The tests check the offsets against the kernel's
//! published PERF_ATTR_SIZE_VER* sizes and the header's comments.
#![allow(non_camel_case_types)]

// perf_type_id
pub const PERF_TYPE_HARDWARE: u32 = 0;
pub const PERF_TYPE_SOFTWARE: u32 = 1;
pub const PERF_TYPE_TRACEPOINT: u32 = 2;

// perf_hw_id
pub const PERF_COUNT_HW_CPU_CYCLES: u32 = 0;
pub const PERF_COUNT_HW_INSTRUCTIONS: u32 = 1;
pub const PERF_COUNT_HW_CACHE_MISSES: u32 = 3;

// perf_sw_ids
pub const PERF_COUNT_SW_CPU_CLOCK: u32 = 0;
pub const PERF_COUNT_SW_TASK_CLOCK: u32 = 1;
pub const PERF_COUNT_SW_CONTEXT_SWITCHES: u32 = 3;
pub const PERF_COUNT_SW_CPU_MIGRATIONS: u32 = 4;
pub const PERF_COUNT_SW_PAGE_FAULTS_MIN: u32 = 5;
pub const PERF_COUNT_SW_PAGE_FAULTS_MAJ: u32 = 6;

// perf_event_sample_format
pub const PERF_SAMPLE_IP: u32 = 1 << 0;
pub const PERF_SAMPLE_TID: u32 = 1 << 1;
pub const PERF_SAMPLE_CALLCHAIN: u32 = 1 << 5;

// perf_event_read_format
pub const PERF_FORMAT_LOST: u32 = 1 << 4;

// perf_event_open flags
pub const PERF_FLAG_FD_CLOEXEC: u32 = 1 << 3;

// perf_event_type (record types in the ring)
pub const PERF_RECORD_LOST: u32 = 2;
pub const PERF_RECORD_COMM: u32 = 3;
pub const PERF_RECORD_SAMPLE: u32 = 9;
pub const PERF_RECORD_MISC_CPUMODE_MASK: u32 = 7;
pub const PERF_RECORD_MISC_KERNEL: u32 = 1;

// perf_callchain_context: markers in a call chain, (__u64)-N in the header.
pub const PERF_CONTEXT_HV: u64 = (-32i64) as u64;
pub const PERF_CONTEXT_KERNEL: u64 = (-128i64) as u64;
pub const PERF_CONTEXT_USER: u64 = (-512i64) as u64;
pub const PERF_CONTEXT_MAX: u64 = (-4095i64) as u64;

/// PERF_EVENT_IOC_ENABLE = _IO('$', 0).
pub const PERF_EVENT_IOC_ENABLE: libc::Ioctl = libc::_IO(b'$' as u32, 0);
/// PERF_EVENT_IOC_DISABLE = _IO('$', 1).
pub const PERF_EVENT_IOC_DISABLE: libc::Ioctl = libc::_IO(b'$' as u32, 1);
/// PERF_EVENT_IOC_SET_FILTER = _IOW('$', 6, char *): the size field is the pointer's size.
pub const PERF_EVENT_IOC_SET_FILTER: libc::Ioctl = libc::_IOW::<*mut libc::c_char>(b'$' as u32, 6);

/// struct perf_event_attr as of PERF_ATTR_SIZE_VER8 (136 bytes, Linux 6.3). Older kernels accept it when
/// the fields they do not know are zero. Unions are single fields named after both members.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct perf_event_attr {
    pub type_: u32,
    pub size: u32,
    pub config: u64,
    /// union { sample_period; sample_freq; }
    pub sample_period_or_freq: u64,
    pub sample_type: u64,
    pub read_format: u64,
    /// The bit fields (disabled, inherit, ...): set them with [`perf_event_attr::set_flag`].
    pub flags: u64,
    /// union { wakeup_events; wakeup_watermark; }
    pub wakeup_events_or_watermark: u32,
    pub bp_type: u32,
    /// union { bp_addr; kprobe_func; uprobe_path; config1; }
    pub config1: u64,
    /// union { bp_len; kprobe_addr; probe_offset; config2; }
    pub config2: u64,
    pub branch_sample_type: u64,
    pub sample_regs_user: u64,
    pub sample_stack_user: u32,
    pub clockid: i32,
    pub sample_regs_intr: u64,
    pub aux_watermark: u32,
    pub sample_max_stack: u16,
    pub reserved_2: u16,
    pub aux_sample_size: u32,
    pub reserved_3: u32,
    pub sig_data: u64,
    pub config3: u64,
}

/// Bit numbers of perf_event_attr's bit fields (the header's order, first field in bit 0).
pub mod attr_flag {
    pub const DISABLED: u32 = 0;
    pub const INHERIT: u32 = 1;
    pub const EXCLUDE_KERNEL: u32 = 5;
    pub const EXCLUDE_HV: u32 = 6;
    pub const COMM: u32 = 9;
    pub const FREQ: u32 = 10;
    pub const WATERMARK: u32 = 14;
    pub const EXCLUDE_CALLCHAIN_KERNEL: u32 = 21;
}

impl perf_event_attr {
    /// A zeroed attr of `type_`/`config` whose `size` is this struct's.
    pub fn new(type_: u32, config: u64) -> perf_event_attr {
        perf_event_attr {
            type_,
            size: std::mem::size_of::<perf_event_attr>() as u32,
            config,
            ..Default::default()
        }
    }

    /// Sets or clears the one-bit field at `bit` (see [`attr_flag`]).
    pub fn set_flag(&mut self, bit: u32, on: bool) {
        if on {
            self.flags |= 1 << bit;
        } else {
            self.flags &= !(1 << bit);
        }
    }
}

/// The start of struct perf_event_mmap_page (the control page of a perf ring), up to the data area's
/// description; the aux fields after it are not used.
#[repr(C)]
pub struct perf_event_mmap_page {
    pub version: u32,
    pub compat_version: u32,
    pub lock: u32,
    pub index: u32,
    pub offset: i64,
    pub time_enabled: u64,
    pub time_running: u64,
    pub capabilities: u64,
    pub pmc_width: u16,
    pub time_shift: u16,
    pub time_mult: u32,
    pub time_offset: u64,
    pub time_zero: u64,
    pub size: u32,
    pub reserved_1: u32,
    pub time_cycles: u64,
    pub time_mask: u64,
    /// Pads the header to 1 KiB: `__u8 __reserved[116*8]`.
    pub reserved: [u8; 116 * 8],
    pub data_head: u64,
    pub data_tail: u64,
    pub data_offset: u64,
    pub data_size: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn attr_layout_matches_the_kernel_abi_versions() {
        // PERF_ATTR_SIZE_VER0..VER8 from linux/perf_event.h: each is the offset where the next
        // version's first field starts.
        assert_eq!(offset_of!(perf_event_attr, config1), 56);
        assert_eq!(offset_of!(perf_event_attr, config2), 64); // VER0 64
        assert_eq!(offset_of!(perf_event_attr, branch_sample_type), 72); // VER1 72
        assert_eq!(offset_of!(perf_event_attr, sample_regs_user), 80); // VER2 80
        assert_eq!(offset_of!(perf_event_attr, sample_stack_user), 88);
        assert_eq!(offset_of!(perf_event_attr, sample_regs_intr), 96); // VER3 96
        assert_eq!(offset_of!(perf_event_attr, aux_watermark), 104); // VER4 104
        assert_eq!(offset_of!(perf_event_attr, aux_sample_size), 112); // VER5 112
        assert_eq!(offset_of!(perf_event_attr, sig_data), 120); // VER6 120
        assert_eq!(offset_of!(perf_event_attr, config3), 128); // VER7 128
        assert_eq!(size_of::<perf_event_attr>(), 136); // VER8
        assert_eq!(offset_of!(perf_event_attr, flags), 40);
        assert_eq!(offset_of!(perf_event_attr, wakeup_events_or_watermark), 48);
        assert_eq!(offset_of!(perf_event_attr, clockid), 92);
        assert_eq!(perf_event_attr::new(2, 7).size, 136);
    }

    #[test]
    fn mmap_page_data_fields_sit_after_the_1k_header() {
        assert_eq!(offset_of!(perf_event_mmap_page, time_mult), 52);
        assert_eq!(offset_of!(perf_event_mmap_page, size), 72);
        assert_eq!(offset_of!(perf_event_mmap_page, data_head), 1024);
        assert_eq!(offset_of!(perf_event_mmap_page, data_tail), 1032);
        assert_eq!(offset_of!(perf_event_mmap_page, data_offset), 1040);
        assert_eq!(offset_of!(perf_event_mmap_page, data_size), 1048);
    }

    #[test]
    fn flags_are_the_kernel_bit_fields() {
        let mut a = perf_event_attr::new(0, 0);
        a.set_flag(attr_flag::DISABLED, true);
        a.set_flag(attr_flag::INHERIT, true);
        a.set_flag(attr_flag::EXCLUDE_CALLCHAIN_KERNEL, true);
        assert_eq!(a.flags, 0b11 | 1 << 21);
        a.set_flag(attr_flag::DISABLED, false);
        assert_eq!(a.flags, 0b10 | 1 << 21);
    }

    #[test]
    fn perf_ioctls_are_the_kernels_numbers() {
        // The values strace and the header give on 64-bit targets; SET_FILTER's size field is the
        // pointer's size, so it differs on 32-bit ones.
        assert_eq!(PERF_EVENT_IOC_ENABLE as u32, 0x2400);
        assert_eq!(PERF_EVENT_IOC_DISABLE as u32, 0x2401);
        let ptr = size_of::<usize>() as u32;
        assert_eq!(PERF_EVENT_IOC_SET_FILTER as u32, 0x4000_2406 | ptr << 16);
        if ptr == 8 {
            assert_eq!(PERF_EVENT_IOC_SET_FILTER as u32, 0x4008_2406);
        }
    }
}
