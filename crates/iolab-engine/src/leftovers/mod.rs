//! What an iolab that was killed (SIGKILL, SIGQUIT, a crash) left behind, and `iolab clean`.
//!
//! Ctrl-C, SIGTERM and SIGHUP run iolab's cleanup (see `crate::cleanup`); SIGKILL cannot be caught and
//! SIGQUIT keeps its default (a core dump for debugging), so after them the files iolab created stay. To
//! find them later without ever touching a file iolab did not create, every path iolab creates for itself
//! (targets, splice/sendfile/copy_file_range source files, the survey's and suites' directories; never a
//! path kept with `--keep`) is written, when it is created and before any timed span, to a journal:
//!
//! - One journal file per iolab process, `PID-START.journal`, in a directory private to the user:
//!   `/run/iolab` for root, else `/run/user/UID/iolab` where that runtime directory exists, else
//!   `/tmp/iolab-UID`. The directory must be a real directory (not a symbolic link) owned by the user with
//!   no access for group or others, or nothing is journaled (a warning) and `clean` refuses to read it.
//! - The process holds an exclusive flock on its journal for as long as it has one: a journal whose lock is
//!   free and whose process (pid, start time from /proc/PID/stat, boot id) is gone belongs to a dead iolab.
//! - A line per created path: a sequence number, its type, device and inode, owner, birth time (statx, where
//!   the filesystem keeps one), the device and inode of the directory it is in, whether iolab marked it with
//!   the extended attribute `user.iolab` (where the filesystem has user attributes), and the absolute path
//!   (the directory canonicalized). A path removed at a normal exit gets a `-` line; when none is left, the
//!   journal is deleted. The signal handler deletes it after removing every journaled path.
//!
//! `clean` removes a recorded path only if the directory it names is still the one iolab created it in and
//! the name there is still iolab's file: same type, device, inode, owner, birth time and mark, looked at
//! without following a symbolic link (O_PATH|O_NOFOLLOW); it then unlinks that name in that directory
//! (unlinkat on the directory's descriptor). Anything else is refused and left as it is, with the reason.
//! A directory is removed only when empty (its files are journaled on their own).

mod cgroup;
mod clean;
mod format;
mod journal;
mod report;
mod zram;

pub use clean::clean;
pub use format::{marked_by, Process, XATTR};
pub(crate) use journal::unlink_journal_if_all_removed;
pub use journal::{forget, mark_tree, record, record_cgroup, record_zram};

/// The name of `--layers`' ftrace instance: "iolab-PID-START", this process's alone (its pid and start
/// time), so that `clean` never takes a live run's instance for a dead one's whose pid was reused.
pub fn trace_instance_name() -> String {
    let me = Process::me();
    format!("iolab-{}-{}", me.pid, me.start)
}
pub use report::{CleanReport, Outcome, Verdict};

#[cfg(test)]
mod tests {

    use crate::leftovers::format::header;
    use crate::leftovers::format::parse;
    use crate::leftovers::format::Entry;
    use crate::leftovers::format::Process;
    use crate::leftovers::format::ZramEntry;
    use std::os::unix::ffi::OsStrExt;
    use std::path::PathBuf;

    #[test]
    fn entries_round_trip_any_path_bytes() {
        let e = Entry {
            id: 7,
            is_dir: false,
            dev: 2049,
            ino: 1234567,
            uid: 1000,
            btime: Some((1_700_000_000, 42)),
            pdev: 2049,
            pino: 99,
            marked: true,
            path: PathBuf::from(std::ffi::OsStr::from_bytes(b"/tmp/a b\nc\xff.dat")),
            tree: false,
        };
        let p = Process {
            pid: 5,
            start: 77,
            boot: "b-o-o-t".into(),
        };
        let z = ZramEntry {
            id: 10,
            dev: 3,
            disksize: 1 << 30,
        };
        let text = format!(
            "{}{}+ 8 f 1 2 3 - 4 5 0 2f78\n- 8\n{}z 11 4 4096\n- 11\n+ 9 f trunc",
            header(&p),
            e.line(),
            z.line()
        );
        let c = parse(&text).unwrap();
        assert_eq!(c.owner, p);
        assert_eq!(c.live, vec![e], "entry 8 was removed, 9 is cut short");
        assert_eq!(c.zram, vec![z], "zram entry 11 was removed");
        assert_eq!(c.bad_lines, 1);
        assert!(parse("not a journal\n").is_none());
    }

    #[test]
    fn this_process_is_alive_and_a_made_up_one_is_not() {
        let me = Process::me();
        assert!(me.alive());
        let later = Process {
            start: me.start + 1,
            ..me.clone()
        };
        assert!(!later.alive(), "same pid, another start time");
        let other_boot = Process {
            boot: "another boot".into(),
            ..me.clone()
        };
        assert!(!other_boot.alive());
    }
}
