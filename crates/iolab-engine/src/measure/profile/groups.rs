//! What a sample's code was doing, in the words an engineer thinks in: syscall entry/exit, copying to or
//! from user memory, the page cache, the filesystem, the block layer and drivers, io_uring, io-wq,
//! the scheduler, iolab itself.
//!
//! A sample's group is decided by its call chain, from the leaf outwards, within the domain of the leaf
//! (kernel rules for a sample taken in the kernel, user rules for one taken in user space): the first
//! frame that some rule names decides, and among the rules naming one frame the first in [`RULES`]. So
//! `copy_folio_from_iter_atomic` called by `generic_perform_write` called by `ext4_buffered_write_iter` is
//! a copy; a slab allocation with nothing named below `generic_perform_write` is page cache. A kernel sample
//! no rule names is "other kernel", except on an io-wq worker thread (iou-wrk), where it is "io-wq": the
//! worker's own work that nothing more specific claims. A user sample in iolab's own binary is "iolab";
//! any other user sample (glibc, the vDSO) that no frame of iolab's binary encloses is "other user".
//! Names are matched without the compiler's suffixes (`.isra.0`, `.constprop.0`, `.cold`).

pub const SYSCALL: &str = "syscall entry/exit";
pub const COPY: &str = "copy to/from user";
pub const PAGE_CACHE: &str = "page cache";
pub const FILESYSTEM: &str = "filesystem";
pub const BLOCK: &str = "block layer and driver";
pub const URING: &str = "io_uring core";
pub const IO_WQ: &str = "io-wq";
pub const SCHED: &str = "scheduler and idle";
pub const IOLAB: &str = "iolab";
pub const OTHER_KERNEL: &str = "other kernel";
pub const OTHER_USER: &str = "other user";

/// Every group, and whether it is kernel code.
pub const GROUPS: [(&str, bool); 11] = [
    (SYSCALL, true),
    (COPY, true),
    (PAGE_CACHE, true),
    (FILESYSTEM, true),
    (BLOCK, true),
    (URING, true),
    (IO_WQ, true),
    (SCHED, true),
    (IOLAB, false),
    (OTHER_KERNEL, true),
    (OTHER_USER, false),
];

/// Function-name patterns of one group of kernel code: `name` matches exactly, `name*` as a prefix.
pub struct Rule {
    pub group: &'static str,
    pub patterns: &'static [&'static str],
}

/// The kernel rules, in order of precedence for one frame (io-wq before io_uring's `io_*`, the
/// scheduler's `io_schedule*` before both).
pub static RULES: &[Rule] = &[
    Rule {
        group: COPY,
        patterns: &[
            "copy_folio_from_iter*",
            "copy_folio_to_iter*",
            "copy_page_from_iter*",
            "copy_page_to_iter*",
            "_copy_from_iter*",
            "_copy_to_iter*",
            "copy_from_iter*",
            "copy_to_iter*",
            "copy_user_*",
            "__copy_user*",
            "copy_mc_*",
            "rep_movs_alternative",
            "_copy_from_user",
            "_copy_to_user",
            "__copy_from_user*",
            "__copy_to_user*",
            "copy_from_user*",
            "copy_to_user*",
            "raw_copy_*",
            "memcpy*",
            "__memcpy*",
            "memmove*",
            "__memmove*",
            "csum_partial_copy*",
            "skb_copy_datagram*",
        ],
    },
    Rule {
        group: SCHED,
        patterns: &[
            "schedule",
            "schedule_*",
            "__schedule",
            "io_schedule*",
            "preempt_schedule*",
            "finish_task_switch*",
            "pick_next_task*",
            "__pick_next_task*",
            "context_switch",
            "__switch_to*",
            "do_idle",
            "cpu_idle*",
            "cpuidle_*",
            "default_idle*",
            "*safe_halt",
            "try_to_wake_up",
            "wake_up_*",
            "__wake_up*",
            "ttwu_*",
            "enqueue_task*",
            "dequeue_task*",
            "update_curr*",
            "update_load_avg*",
            "psi_*",
            "sched_*",
            "__sched_*",
            "set_next_entity",
            "put_prev_*",
            "raw_spin_rq_*",
        ],
    },
    Rule {
        group: IO_WQ,
        patterns: &[
            "io_wq_*",
            "io_wqe_*",
            "io_worker_*",
            "io_wq*",
            "create_io_worker",
            "io_assign_current_work",
            "io_acct_*",
            "io_get_next_work",
        ],
    },
    Rule {
        group: URING,
        patterns: &[
            "io_*",
            "__io_*",
            "__do_sys_io_uring_*",
            "__x64_sys_io_uring_*",
            "__arm64_sys_io_uring_*",
            "tctx_task_work*",
        ],
    },
    Rule {
        group: PAGE_CACHE,
        patterns: &[
            "filemap_*",
            "__filemap_*",
            "folio_*",
            "__folio_*",
            "pagecache_*",
            "page_cache_*",
            "generic_perform_write",
            "generic_file_*",
            "__generic_file_*",
            "find_get_*",
            "find_lock_*",
            "balance_dirty_pages*",
            "truncate_inode_*",
            "writeback_*",
            "__writeback*",
            "do_writepages",
            "wb_*",
            "mapping_*",
            "lru_*",
            "__lru_*",
            "workingset_*",
            "readahead*",
            "page_cache_ra_*",
        ],
    },
    Rule {
        group: FILESYSTEM,
        patterns: &[
            "ext4*",
            "__ext4*",
            "jbd2*",
            "__jbd2*",
            "xfs_*",
            "btrfs_*",
            "f2fs_*",
            "shmem_*",
            "fat_*",
            "iomap_*",
            "__iomap_*",
            "vfs_*",
            "__vfs_*",
            "generic_write_checks*",
            "file_modified",
            "file_update_time",
            "block_write_*",
            "__block_write_*",
            "create_empty_buffers",
            "mark_buffer_dirty*",
            "__mark_inode_dirty",
            "mpage_*",
            "fsnotify*",
            "__fsnotify*",
            "rw_verify_area",
            "fdget*",
            "fput*",
        ],
    },
    Rule {
        group: BLOCK,
        patterns: &[
            "blk_*",
            "__blk_*",
            "bio_*",
            "__bio_*",
            "submit_bio*",
            "__submit_bio*",
            "blkdev_*",
            "nvme_*",
            "virtblk_*",
            "virtio_queue_rq",
            "virtqueue_*",
            "scsi_*",
            "loop_*",
            "lo_*",
            "zram_*",
            "dm_*",
            "elv_*",
            "dd_*",
            "bfq_*",
        ],
    },
    Rule {
        group: SYSCALL,
        patterns: &[
            "entry_SYSCALL*",
            "do_syscall_64",
            "x64_sys_call",
            "syscall_exit_*",
            "syscall_trace_*",
            "__x64_sys_*",
            "__arm64_sys_*",
            "__do_sys_*",
            "__se_sys_*",
            "ksys_*",
            "exit_to_user_mode*",
            "syscall_return_*",
            "el0_svc*",
            "invoke_syscall*",
            "do_el0_svc*",
            "fpregs_restore_userregs",
            "switch_fpu_return",
        ],
    },
];

/// A name without the compiler's clone suffixes: `__slab_alloc.isra.0` -> `__slab_alloc`.
pub fn base_name(name: &str) -> &str {
    name.split('.').next().unwrap_or(name)
}

fn matches(pattern: &str, name: &str) -> bool {
    match (pattern.strip_prefix('*'), pattern.strip_suffix('*')) {
        (Some(suffix), _) => name.ends_with(suffix),
        (None, Some(prefix)) => name.starts_with(prefix),
        (None, None) => name == pattern,
    }
}

/// The group of one kernel function, if a rule names it.
pub fn kernel_group(name: &str) -> Option<&'static str> {
    let n = base_name(name);
    RULES
        .iter()
        .find(|r| r.patterns.iter().any(|p| matches(p, n)))
        .map(|r| r.group)
}

/// One frame as the grouping sees it.
#[derive(Debug, Clone, Copy)]
pub struct FrameView<'a> {
    pub name: &'a str,
    pub kernel: bool,
    /// In iolab's own binary.
    pub own: bool,
}

/// The group of a sample: its frames leaf first, and whether it ran on an io-wq worker thread.
pub fn group_of(frames: &[FrameView], io_wq_thread: bool) -> &'static str {
    let Some(leaf) = frames.first() else {
        return OTHER_USER;
    };
    let same = frames.iter().take_while(|f| f.kernel == leaf.kernel);
    if leaf.kernel {
        let found = same.clone().find_map(|f| kernel_group(f.name));
        found.unwrap_or(if io_wq_thread { IO_WQ } else { OTHER_KERNEL })
    } else if same.clone().any(|f| f.own) {
        IOLAB
    } else {
        OTHER_USER
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(names: &[&'static str]) -> Vec<FrameView<'static>> {
        names
            .iter()
            .map(|n| FrameView {
                name: n,
                kernel: true,
                own: false,
            })
            .collect()
    }

    const WRITE_SYSCALL: [&str; 4] = [
        "vfs_write",
        "ksys_write",
        "do_syscall_64",
        "entry_SYSCALL_64_after_hwframe",
    ];

    fn chain(leaf: &[&'static str]) -> Vec<FrameView<'static>> {
        let mut v = k(leaf);
        v.extend(k(&WRITE_SYSCALL));
        v
    }

    #[test]
    fn each_group_fires_on_its_own_functions() {
        let cases: [(&[&str], &str); 8] = [
            (
                &["copy_folio_from_iter_atomic", "generic_perform_write"],
                COPY,
            ),
            (
                &["rep_movs_alternative", "_copy_to_iter", "filemap_read"],
                COPY,
            ),
            (
                &[
                    "filemap_get_entry",
                    "__filemap_get_folio",
                    "generic_perform_write",
                ],
                PAGE_CACHE,
            ),
            (&["ext4_da_write_end", "generic_perform_write"], FILESYSTEM),
            (
                &[
                    "blk_mq_submit_bio",
                    "submit_bio_noacct",
                    "iomap_dio_bio_iter",
                ],
                BLOCK,
            ),
            (&["io_issue_sqe", "io_submit_sqes"], URING),
            (&["io_wq_worker"], IO_WQ),
            (
                &["__schedule", "schedule", "io_schedule", "folio_wait_bit"],
                SCHED,
            ),
        ];
        for (leaf, group) in cases {
            assert_eq!(group_of(&chain(leaf), false), group, "{leaf:?}");
        }
        assert_eq!(group_of(&k(&WRITE_SYSCALL[1..]), false), SYSCALL);
        assert_eq!(group_of(&k(&WRITE_SYSCALL), false), FILESYSTEM);
    }

    #[test]
    fn groups_do_not_fire_on_other_functions() {
        // A slab allocation under the page cache is the page cache's, not a copy or the syscall's.
        let f = chain(&[
            "allocate_slab",
            "kmem_cache_alloc_noprof",
            "folio_alloc_buffers",
        ]);
        assert_eq!(group_of(&f, false), PAGE_CACHE);
        // Nothing named: other kernel, not the syscall entry below it... unless an io-wq worker ran it.
        let f = k(&["allocate_slab", "kmem_cache_alloc_noprof", "ret_from_fork"]);
        assert_eq!(group_of(&f, false), OTHER_KERNEL);
        assert_eq!(group_of(&f, true), IO_WQ);
        // io_schedule is the scheduler, not io_uring; ioremap and iomap are not io_uring.
        assert_eq!(kernel_group("io_schedule"), Some(SCHED));
        assert_eq!(kernel_group("iomap_write_iter"), Some(FILESYSTEM));
        assert_eq!(kernel_group("ioremap"), None);
        // memcpy in the kernel is a copy; memset is not.
        assert_eq!(kernel_group("memset_orig"), None);
        assert_eq!(kernel_group("__memcpy"), Some(COPY));
        // A suffixed clone matches as its base name.
        assert_eq!(kernel_group("ext4_da_write_begin.isra.0"), Some(FILESYSTEM));
        assert_eq!(kernel_group("blk_"), Some(BLOCK));
        assert_eq!(kernel_group("bl"), None);
    }

    #[test]
    fn user_samples_are_iolab_when_its_binary_encloses_them() {
        let glibc = FrameView {
            name: "__memmove_avx_unaligned_erms",
            kernel: false,
            own: false,
        };
        let ours = FrameView {
            name: "iolab_engine::runner::loops::loop_sync",
            kernel: false,
            own: true,
        };
        assert_eq!(group_of(&[glibc], false), OTHER_USER);
        assert_eq!(group_of(&[glibc, ours], false), IOLAB);
        // A kernel sample is grouped by its kernel frames only, even with iolab's frames above.
        let mut f = k(&["clear_page_erms", "asm_exc_page_fault"]);
        f.push(FrameView {
            name: "iolab_engine::runner::loops::loop_sync",
            kernel: false,
            own: true,
        });
        assert_eq!(group_of(&f, false), OTHER_KERNEL);
        assert_eq!(group_of(&[], false), OTHER_USER);
    }

    #[test]
    fn every_rule_names_a_listed_group_and_suffix_patterns_match() {
        for r in RULES {
            assert!(GROUPS.iter().any(|(g, kernel)| *g == r.group && *kernel));
        }
        assert_eq!(kernel_group("pv_native_safe_halt"), Some(SCHED));
        assert!(matches("*halt", "safe_halt"));
        assert!(!matches("*halt", "halting"));
    }
}
