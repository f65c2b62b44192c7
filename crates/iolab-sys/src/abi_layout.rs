//! Layout checks of the kernel ABI structures iolab shares with the kernel, run on every target (CI runs
//! them for aarch64 and armv7 under qemu-user): the sizes from the kernel's uapi headers, which the
//! kernel checks with BUILD_BUG_ON, and which must not depend on the pointer width. The io-uring crate's
//! prebuilt bindings are used on armv7 (`io_uring_skip_arch_check` in .cargo/config.toml) on the strength
//! of the SQE and CQE checks here. The module name avoids the words the qemu-user runs skip by.

#[cfg(test)]
mod tests {
    use std::mem::{align_of, size_of};

    #[test]
    fn ring_entries_and_params_have_the_kernel_sizes() {
        assert_eq!(size_of::<io_uring::squeue::Entry>(), 64);
        assert_eq!(size_of::<io_uring::squeue::Entry128>(), 128);
        assert_eq!(size_of::<io_uring::cqueue::Entry>(), 16);
        assert_eq!(size_of::<io_uring::cqueue::Entry32>(), 32);
        assert_eq!(size_of::<io_uring::types::Timespec>(), 16);
        assert_eq!(size_of::<super::super::SqringOffsets>(), 40);
        assert_eq!(size_of::<super::super::CqringOffsets>(), 40);
        assert_eq!(size_of::<super::super::UringParams>(), 120);
        assert_eq!(size_of::<super::super::UringRestriction>(), 16);
        assert_eq!(align_of::<super::super::UringParams>(), 8);
    }

    #[test]
    fn native_aio_structures_have_the_kernel_sizes() {
        assert_eq!(size_of::<super::super::Iocb>(), 64);
        assert_eq!(size_of::<super::super::IoEvent>(), 32);
        assert_eq!(std::mem::offset_of!(super::super::Iocb, aio_buf), 24);
        assert_eq!(std::mem::offset_of!(super::super::Iocb, aio_offset), 40);
    }

    #[test]
    fn ioctl_requests_are_computed_per_target() {
        // BLKGETSIZE64 = _IOR(0x12, 114, size_t): the size field is the pointer width's.
        let want = if usize::BITS == 64 {
            0x8008_1272u32
        } else {
            0x8004_1272
        };
        assert_eq!(super::super::files::BLKGETSIZE64 as u32, want);
        // BLKSSZGET = _IO(0x12, 104) from libc.
        assert_eq!(libc::BLKSSZGET as u32, 0x1268);
    }
}
