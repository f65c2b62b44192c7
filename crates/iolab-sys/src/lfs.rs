//! The C library's file calls with 64-bit offsets, sizes and inode numbers on every target.
//!
//! On 32-bit glibc (the armv7 board build) `off_t`, `struct stat` and `open` are the 32-bit ones unless a C
//! program is built with `_FILE_OFFSET_BITS=64`: an offset beyond 2 GiB then fails with EINVAL or EFBIG,
//! and a large file cannot even be opened (EOVERFLOW). There the names below are glibc's `*64` calls
//! (`open64` adds O_LARGEFILE), whose offsets are `off64_t`. Everywhere else (64-bit targets, and musl,
//! whose `off_t` is always 64-bit) they are the plain calls. The rest of `sys` names them through this
//! module only, so no other file needs a target condition.

#[cfg(all(target_env = "gnu", target_pointer_width = "32"))]
pub use libc::{
    fallocate64 as fallocate, fseeko64 as fseeko, fstat64 as fstat, fstatat64 as fstatat,
    fstatfs64 as fstatfs, ftruncate64 as ftruncate, lseek64 as lseek, mmap64 as mmap,
    off64_t as off_t, open64 as open, openat64 as openat, posix_fadvise64 as posix_fadvise,
    pread64 as pread, preadv64 as preadv, preadv64v2 as preadv2, pwrite64 as pwrite,
    pwritev64 as pwritev, pwritev64v2 as pwritev2, sendfile64 as sendfile, stat64 as stat,
    statfs64 as statfs, statvfs64 as statvfs,
};

#[cfg(not(all(target_env = "gnu", target_pointer_width = "32")))]
pub use libc::{
    fallocate, fseeko, fstat, fstatat, fstatfs, ftruncate, lseek, mmap, off_t, open, openat,
    posix_fadvise, preadv, preadv2, pwritev, pwritev2, sendfile, stat, statfs, statvfs,
};

// x86_64 and aarch64 make pread and pwrite by the instruction (`raw`).
#[cfg(not(any(
    all(target_env = "gnu", target_pointer_width = "32"),
    target_arch = "x86_64",
    target_arch = "aarch64"
)))]
pub use libc::{pread, pwrite};

/// `struct stat` with 64-bit sizes and inode numbers (`stat64` on 32-bit glibc).
pub type Stat = stat;

/// What identifies a file whatever its name: (device, inode).
#[allow(clippy::unnecessary_cast)] // the field types differ between targets
pub fn identity(st: &Stat) -> (u64, u64) {
    (st.st_dev as u64, st.st_ino as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_and_stat_fields_are_64_bit_on_every_target() {
        assert_eq!(std::mem::size_of::<off_t>(), 8);
        // SAFETY: an all-zero stat is a valid value of this plain C struct.
        let st: Stat = unsafe { std::mem::zeroed() };
        assert_eq!(std::mem::size_of_val(&st.st_size), 8);
        assert_eq!(std::mem::size_of_val(&st.st_ino), 8);
    }
}
