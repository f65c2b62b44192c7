//! The RWF_* flags of pwritev2(2)/preadv2(2) (`--rw-flags`): one table, read by the option's check and help,
//! the spec's resolution to bits, and the method's labels. Adding a flag is one line here.

/// One flag: its `--rw-flags` word, its bit, the kernel that has it, and what it does.
#[derive(Debug, Clone, Copy)]
pub struct RwFlag {
    pub name: &'static str,
    pub bit: i32,
    pub since: &'static str,
    pub what: &'static str,
}

/// Every flag iolab offers, in the order the help lists them.
pub const RW_FLAGS: [RwFlag; 6] = [
    RwFlag {
        name: "nowait",
        bit: libc::RWF_NOWAIT,
        since: "4.14",
        what: "an op that would block answers EAGAIN: counted, then finished with a plain call",
    },
    RwFlag {
        name: "hipri",
        bit: libc::RWF_HIPRI,
        since: "4.6",
        what: "high priority: polled completion where the device has poll queues",
    },
    RwFlag {
        name: "dsync",
        bit: libc::RWF_DSYNC,
        since: "4.7",
        what: "each write is O_DSYNC",
    },
    RwFlag {
        name: "sync",
        bit: libc::RWF_SYNC,
        since: "4.7",
        what: "each write is O_SYNC",
    },
    RwFlag {
        name: "append",
        bit: libc::RWF_APPEND,
        since: "4.16",
        what: "each write goes to the end of the file",
    },
    RwFlag {
        name: "dontcache",
        bit: libc::RWF_DONTCACHE,
        since: "6.14",
        what: "uncached buffered I/O: through the page cache, whose pages are dropped once written back or \
               read; the kernel refuses it (EOPNOTSUPP) where the filesystem cannot (tmpfs) or the kernel is \
               older",
    },
];

/// Why the kernel answers EOPNOTSUPP to RWF_DONTCACHE, for pv2's and io_uring's refusals.
pub const DONTCACHE_REFUSED: &str = "RWF_DONTCACHE (--rw-flags dontcache) needs Linux 6.14+ and a filesystem \
    that supports uncached buffered I/O (ext4, xfs, btrfs; not tmpfs or a block device); iolab never falls \
    back to plain buffered I/O";

/// The flags' words, for the option table's value check.
pub const RW_FLAG_NAMES: [&str; RW_FLAGS.len()] = names();

const fn names() -> [&'static str; RW_FLAGS.len()] {
    let mut out = [""; RW_FLAGS.len()];
    let mut i = 0;
    while i < RW_FLAGS.len() {
        out[i] = RW_FLAGS[i].name;
        i += 1;
    }
    out
}

/// The flag a word names.
pub fn named(word: &str) -> Option<&'static RwFlag> {
    RW_FLAGS.iter().find(|f| f.name == word)
}

/// The words of the flags set in `bits` ("nowait,dsync"), in the table's order.
pub fn words(bits: u32) -> String {
    let v: Vec<&str> = RW_FLAGS
        .iter()
        .filter(|f| bits & f.bit as u32 != 0)
        .map(|f| f.name)
        .collect();
    v.join(",")
}

/// "nowait (4.14), hipri (4.6), ...": the words with the kernel each needs, for help and messages.
pub fn listed() -> String {
    let v: Vec<String> = RW_FLAGS
        .iter()
        .map(|f| format!("{} ({}+)", f.name, f.since))
        .collect();
    v.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_flag_has_its_own_bit_and_word() {
        for (i, a) in RW_FLAGS.iter().enumerate() {
            assert_eq!(named(a.name).map(|f| f.bit), Some(a.bit));
            assert_eq!(RW_FLAG_NAMES[i], a.name);
            for b in &RW_FLAGS[i + 1..] {
                assert_ne!(a.bit, b.bit, "{} and {}", a.name, b.name);
                assert_ne!(a.name, b.name);
            }
        }
        assert_eq!(
            named("dontcache").map(|f| f.bit),
            Some(0x80),
            "RWF_DONTCACHE, linux/fs.h"
        );
        assert_eq!(
            words((libc::RWF_NOWAIT | libc::RWF_DONTCACHE) as u32),
            "nowait,dontcache"
        );
        assert!(named("uncached").is_none());
    }
}
