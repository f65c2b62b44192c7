//! NVMe passthrough (`linux/nvme_ioctl.h`): the command an IORING_OP_URING_CMD carries to a namespace's
//! generic character device (/dev/ngXnY, Linux 5.19+), and the namespace id its fd answers.

use super::errno::{result, SysResult};
use std::os::fd::RawFd;

/// struct nvme_uring_cmd: the 72 command bytes of a 128-byte SQE (IORING_SETUP_SQE128).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NvmeUringCmd {
    pub opcode: u8,
    pub flags: u8,
    pub rsvd1: u16,
    pub nsid: u32,
    pub cdw2: u32,
    pub cdw3: u32,
    pub metadata: u64,
    pub addr: u64,
    pub metadata_len: u32,
    pub data_len: u32,
    /// Read/write: the starting LBA's low and high 32 bits, then the number of LBAs less one.
    pub cdw10: u32,
    pub cdw11: u32,
    pub cdw12: u32,
    pub cdw13: u32,
    pub cdw14: u32,
    pub cdw15: u32,
    pub timeout_ms: u32,
    pub rsvd2: u32,
}

/// NVMe I/O command set opcodes.
pub const NVME_CMD_WRITE: u8 = 0x01;
pub const NVME_CMD_READ: u8 = 0x02;

/// `_IOWR('N', 0x80, struct nvme_uring_cmd)`: the uring_cmd op of an NVMe I/O command.
pub const NVME_URING_CMD_IO: u32 =
    (3 << 30) | ((std::mem::size_of::<NvmeUringCmd>() as u32) << 16) | (b'N' as u32) << 8 | 0x80;
/// `_IO('N', 0x40)`: the namespace id of the device `fd` is open on.
pub const NVME_IOCTL_ID: u32 = (b'N' as u32) << 8 | 0x40;

impl NvmeUringCmd {
    /// A read or write of `len` bytes at `buf`, from LBA `slba`, of `len / lba_bytes` blocks.
    pub fn rw(write: bool, nsid: u32, buf: u64, len: u32, slba: u64, lba_shift: u32) -> Self {
        NvmeUringCmd {
            opcode: if write { NVME_CMD_WRITE } else { NVME_CMD_READ },
            nsid,
            addr: buf,
            data_len: len,
            cdw10: slba as u32,
            cdw11: (slba >> 32) as u32,
            cdw12: (len >> lba_shift).saturating_sub(1),
            ..Default::default()
        }
    }

    /// The 80 command bytes of the SQE (the struct as it lies in memory, then zeros).
    pub fn to_bytes(self) -> [u8; 80] {
        let mut b = [0u8; 80];
        let words: [u32; 18] = [
            u32::from(self.opcode) | u32::from(self.flags) << 8 | u32::from(self.rsvd1) << 16,
            self.nsid,
            self.cdw2,
            self.cdw3,
            self.metadata as u32,
            (self.metadata >> 32) as u32,
            self.addr as u32,
            (self.addr >> 32) as u32,
            self.metadata_len,
            self.data_len,
            self.cdw10,
            self.cdw11,
            self.cdw12,
            self.cdw13,
            self.cdw14,
            self.cdw15,
            self.timeout_ms,
            self.rsvd2,
        ];
        for (i, w) in words.iter().enumerate() {
            b[i * 4..i * 4 + 4].copy_from_slice(&w.to_le_bytes());
        }
        b
    }
}

/// NVME_IOCTL_ID: the namespace id of the NVMe namespace `fd` is open on (its block device or its
/// generic character device).
pub fn nvme_ns_id(fd: RawFd) -> SysResult<u32> {
    // SAFETY: NVME_IOCTL_ID takes no argument and returns the id; on another device the kernel answers
    // ENOTTY (callers ask only devices sysfs names nvme).
    let r = result("ioctl(NVME_IOCTL_ID)", unsafe {
        libc::ioctl(fd, NVME_IOCTL_ID as _)
    })?;
    Ok(r as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn the_command_lies_as_the_kernel_header_says() {
        assert_eq!(size_of::<NvmeUringCmd>(), 72);
        assert_eq!(offset_of!(NvmeUringCmd, addr), 24);
        assert_eq!(offset_of!(NvmeUringCmd, data_len), 36);
        assert_eq!(offset_of!(NvmeUringCmd, cdw10), 40);
        assert_eq!(offset_of!(NvmeUringCmd, timeout_ms), 64);
        assert_eq!(NVME_URING_CMD_IO, 0xC048_4E80);
        assert_eq!(NVME_IOCTL_ID, 0x4E40);
    }

    #[test]
    fn a_read_names_its_blocks_zero_based_and_its_bytes_where_the_struct_has_them() {
        let c = NvmeUringCmd::rw(false, 1, 0x1234_5678_9abc, 8192, (1 << 32) + 5, 12);
        assert_eq!(
            (c.opcode, c.cdw10, c.cdw11, c.cdw12),
            (NVME_CMD_READ, 5, 1, 1)
        );
        let b = c.to_bytes();
        // SAFETY: NvmeUringCmd is repr(C) plain data with no padding (72 bytes, checked above).
        let raw: [u8; 72] = unsafe { std::mem::transmute(c) };
        if cfg!(target_endian = "little") {
            assert_eq!(&b[..72], &raw[..]);
        }
        assert_eq!(&b[72..], &[0u8; 8]);
    }
}
