/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * iolab_sink.h: the ioctl and IORING_OP_URING_CMD ABI of /dev/iolab_sink.
 *
 * iolab mirrors this file in crates/iolab-engine/src/sys/sink.rs; a test there
 * reads this text and checks that every number and field agrees.
 */
#ifndef _IOLAB_SINK_H
#define _IOLAB_SINK_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* IDENTIFY answers with these: "iolb" and the version of this ABI. */
#define IOLAB_SINK_MAGIC	0x696f6c62
#define IOLAB_SINK_ABI		2

/* Personalities (the module parameter's words are "legacy" and "nowait"). */
#define IOLAB_SINK_LEGACY	0	/* .write/.read, no FMODE_NOWAIT */
#define IOLAB_SINK_NOWAIT	1	/* .write_iter/.read_iter, NOWAIT */

/* Who the driver is, and this open file's settings. */
struct iolab_sink_info {
	__u32 magic;		/* IOLAB_SINK_MAGIC */
	__u32 abi;		/* IOLAB_SINK_ABI */
	__u64 buf_size;		/* bytes of the buffer */
	__u32 personality;	/* this file's */
	__u32 log;		/* this file's: 1 = a log line per write */
	__u32 default_personality; /* the module parameter's */
	__u32 reserved[5];
};

/* Totals since the module was loaded, over every open file. */
struct iolab_sink_counters {
	__u64 write_calls;	/* .write and .write_iter calls */
	__u64 write_bytes;
	__u64 read_calls;	/* .read and .read_iter calls */
	__u64 read_bytes;
	__u64 nowait_calls;	/* _iter calls with IOCB_NOWAIT */
	__u64 worker_calls;	/* calls made by io_uring's io-wq workers */
	__u64 cmd_calls;	/* IORING_OP_URING_CMD writes */
	__u64 cmd_bytes;
	__u64 kernel_writes;	/* kernel_write() calls of KWRITE */
	__u64 kernel_bytes;
	__u64 log_lines;	/* log lines written (and tracepoint calls) */
	__u64 mmaps;		/* successful mmap calls */
	__u64 reserved[4];
};

/*
 * KWRITE: the driver creates the file at path (absolute; O_CREAT|O_EXCL|
 * O_NOFOLLOW, mode 0644; an existing file is never touched) and writes
 * "0\n" .. "lines-1\n" with one kernel_write() per line, then vfs_fsync().
 * The lines are rendered and the file opened before the clock starts; ns is
 * ktime_get_ns() from just before the first write until vfs_fsync returned.
 * Needs CAP_SYS_ADMIN.
 */
struct iolab_sink_kwrite {
	__u64 path;		/* in: address of the path (NUL-ended) */
	__u64 lines;		/* in: 1 .. IOLAB_SINK_KWRITE_MAX_LINES */
	__u64 ns;		/* out */
	__u64 bytes;		/* out */
	__u64 calls;		/* out: kernel_write() calls */
	__u64 reserved[3];
};

#define IOLAB_SINK_KWRITE_MAX_LINES	10000000

/*
 * The time between logged writes as the driver saw them: each write with
 * its file's log switch on takes ktime_get() for its log line; the ns since
 * the previous logged write are counted in a log-linear histogram. Values
 * below 2^(SUB_BITS + 1) have a bucket each; above, a value keeps its
 * leading one and the SUB_BITS bits below it (bucket index: shift *
 * 2^SUB_BITS + (v >> shift), shift = bit length - SUB_BITS - 1), so a
 * bucket's lowest value is within 1/32 of the values it holds.
 * IOLAB_SINK_IOC_GAPS copies the histogram out, then empties it and
 * forgets the last write: the next logged write starts a new chain.
 */
#define IOLAB_SINK_GAP_SUB_BITS	5
#define IOLAB_SINK_GAP_BUCKETS	1920	/* (64 - 5 + 1) * 32 */

struct iolab_sink_gaps {
	__u64 count;		/* gaps: logged writes after a chain's first */
	__u64 sum_ns;
	__u64 min_ns;
	__u64 max_ns;
	__u64 buckets[IOLAB_SINK_GAP_BUCKETS];
};

/* The payload of an IORING_OP_URING_CMD SQE (its 16 command bytes). */
struct iolab_sink_cmd {
	__u64 addr;		/* user address of the bytes */
	__u32 len;
	__u32 offset;		/* where they land (modulo its size) */
};

#define IOLAB_SINK_CMD_WRITE	1	/* the SQE's cmd_op */

#define IOLAB_SINK_IOC_TYPE	0xD5
#define IOLAB_SINK_IOC_IDENTIFY \
	_IOR(IOLAB_SINK_IOC_TYPE, 0, struct iolab_sink_info)
#define IOLAB_SINK_IOC_COUNTERS \
	_IOR(IOLAB_SINK_IOC_TYPE, 1, struct iolab_sink_counters)
/*
 * A new descriptor (O_CLOEXEC) of the same device with the personality given
 * as the argument itself (not a pointer).
 */
#define IOLAB_SINK_IOC_REOPEN	_IOW(IOLAB_SINK_IOC_TYPE, 2, __u32)
/* This file's log switch: the argument itself, 0 or 1. */
#define IOLAB_SINK_IOC_SET_LOG	_IOW(IOLAB_SINK_IOC_TYPE, 3, __u32)
#define IOLAB_SINK_IOC_KWRITE \
	_IOWR(IOLAB_SINK_IOC_TYPE, 4, struct iolab_sink_kwrite)
#define IOLAB_SINK_IOC_GAPS \
	_IOR(IOLAB_SINK_IOC_TYPE, 5, struct iolab_sink_gaps)

#endif /* _IOLAB_SINK_H */
