// SPDX-License-Identifier: GPL-2.0
/*
 * iolab_sink: a character-device write sink for iolab, after the Pi thesis's
 * "logmodule" stub driver.
 *
 * /dev/iolab_sink counts the calls and bytes of every way data reaches it
 * (write, read, IORING_OP_URING_CMD, in-kernel writes) and reports them by
 * ioctl. Writes land in a vmalloc'ed buffer at their position modulo its
 * size, reads return that buffer's bytes, and mmap maps it (the thesis's
 * "dma" path), so what was written can be checked.
 *
 * Two personalities, chosen per open file (the module parameter gives the
 * default; IOLAB_SINK_IOC_REOPEN gives a new file of the other one):
 *  - legacy: .write/.read only and no FMODE_NOWAIT, like the thesis's driver:
 *    io_uring cannot try such a file without blocking, so it hands every
 *    request to an io-wq worker thread;
 *  - nowait: .write_iter/.read_iter and FMODE_NOWAIT: io_uring completes the
 *    requests inline.
 * A file's personality is fixed when it is opened: swapping the fops of a
 * file that another thread may be using could make the VFS call a NULL
 * method (it reads ->write or ->write_iter twice), so REOPEN opens the device
 * again instead.
 *
 * With a file's log switch on (module parameter log, or IOLAB_SINK_IOC_SET_LOG)
 * each write also formats a log line with ktime into a ring of the driver's
 * (no printk) and fires the tracepoint iolab_sink:sink_write, like the
 * thesis's LM_LOG and trace_write; the time since the previous logged write
 * goes into a histogram that IOLAB_SINK_IOC_GAPS reads (the thesis's time
 * between writes, Figures 19 and 37-40, as the driver sees it).
 *
 * IOLAB_SINK_IOC_KWRITE writes a file from inside the kernel (the
 * kernel-vs-user note's module): see iolab_sink.h.
 */
#include <linux/atomic.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/io_uring.h>
#if __has_include(<linux/io_uring/cmd.h>)
#include <linux/io_uring/cmd.h>	/* struct io_uring_cmd since 6.7 */
#endif
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <linux/version.h>
#include <linux/vmalloc.h>

#include "iolab_sink.h"

#define CREATE_TRACE_POINTS
#include "iolab_sink_trace.h"

static char *personality = "legacy";
module_param(personality, charp, 0444);
MODULE_PARM_DESC(personality,
		 "default personality of an open: legacy or nowait");

static unsigned long buf_size = 8UL << 20;
module_param(buf_size, ulong, 0444);
MODULE_PARM_DESC(buf_size,
		 "bytes of the buffer (page multiple, at most 1 GiB)");

static bool log;
module_param(log, bool, 0644);
MODULE_PARM_DESC(log, "log switch of a new open: a log line per write");

#define SINK_MAX_BUF	(1UL << 30)
#define SINK_LOG_RING	(64 * 1024)

/* Per-CPU counters, summed by IOLAB_SINK_IOC_COUNTERS. */
struct sink_stats {
	u64 write_calls;
	u64 write_bytes;
	u64 read_calls;
	u64 read_bytes;
	u64 nowait_calls;
	u64 worker_calls;
	u64 cmd_calls;
	u64 cmd_bytes;
	u64 kernel_writes;
	u64 kernel_bytes;
	u64 log_lines;
	u64 mmaps;
};

static DEFINE_PER_CPU(struct sink_stats, sink_stats);

#define sink_count(field, n)	this_cpu_add(sink_stats.field, (n))

/* One open file. */
struct sink_file {
	u32 personality;
	u32 log;
};

static void *sink_buf;
static u32 default_personality;

/* The log ring: formatted lines, overwritten when full; nobody reads it. */
static char *log_ring;
static size_t log_pos;
static u64 log_n;
static DEFINE_SPINLOCK(log_lock);

/* The time between logged writes (IOLAB_SINK_IOC_GAPS), under log_lock. */
static struct iolab_sink_gaps gaps;
static s64 gap_last;		/* the last logged write's ktime; 0: none */

/* REOPEN: the task opening the device again, and the personality it asks. */
static DEFINE_MUTEX(reopen_lock);
static struct task_struct *reopen_task;
static u32 reopen_personality;

static const struct file_operations sink_legacy_fops;
static const struct file_operations sink_nowait_fops;

/* The histogram bucket of @v ns (the layout iolab_sink.h describes). */
static unsigned int sink_gap_bucket(u64 v)
{
	unsigned int shift;

	if (v < (2ULL << IOLAB_SINK_GAP_SUB_BITS))
		return v;
	shift = fls64(v) - IOLAB_SINK_GAP_SUB_BITS - 1;
	return (shift << IOLAB_SINK_GAP_SUB_BITS) + (unsigned int)(v >> shift);
}

/* Counts the gap since the previous logged write; log_lock held. */
static void sink_gap(s64 now)
{
	u64 v;

	if (gap_last) {
		v = now > gap_last ? now - gap_last : 0;
		gaps.buckets[sink_gap_bucket(v)]++;
		gaps.sum_ns += v;
		if (!gaps.count || v < gaps.min_ns)
			gaps.min_ns = v;
		if (v > gaps.max_ns)
			gaps.max_ns = v;
		gaps.count++;
	}
	gap_last = now;
}

static void sink_log(size_t len)
{
	char line[96];
	int n, first;
	s64 now;
	u64 nr;

	spin_lock(&log_lock);
	nr = log_n++;
	now = ktime_get();
	sink_gap(now);
	n = scnprintf(line, sizeof(line),
		      "wrt \t[ktime: %lld][write_n: %llu][pid: %d][len: %zu]\n",
		      now, nr, current->pid, len);
	first = min_t(size_t, n, SINK_LOG_RING - log_pos);
	memcpy(log_ring + log_pos, line, first);
	memcpy(log_ring, line + first, n - first);
	log_pos = (log_pos + n) % SINK_LOG_RING;
	spin_unlock(&log_lock);
	trace_sink_write(current->pid, len, nr);
	sink_count(log_lines, 1);
}

/*
 * Who made the call: io_uring's io-wq workers are counted apart. SQPOLL
 * threads carry PF_IO_WORKER as well (both are made by create_io_thread()),
 * but submit inline: only the threads io-wq names "iou-wrk-" are workers.
 */
static void sink_count_caller(void)
{
	if ((current->flags & PF_IO_WORKER) &&
	    !strncmp(current->comm, "iou-wrk-", 8))
		sink_count(worker_calls, 1);
}

/*
 * The buffer offset of byte @done of a transfer at @pos. The sum is taken as
 * u64 and divided with do_div(), so a 32-bit build neither needs a 64-bit
 * modulo from libgcc nor sees a negative offset; buf_size is at most
 * SINK_MAX_BUF, which fits do_div()'s 32-bit divisor.
 */
static size_t sink_off(loff_t pos, size_t done)
{
	u64 at = (u64)pos + done;

	return do_div(at, (u32)buf_size);
}

/* Copies len user bytes into the buffer at pos (modulo its size). */
static ssize_t sink_store_user(const char __user *ubuf, size_t len, loff_t pos)
{
	size_t done = 0;

	while (done < len) {
		size_t off = sink_off(pos, done);
		size_t n = min_t(size_t, len - done, buf_size - off);

		if (copy_from_user(sink_buf + off, ubuf + done, n))
			return done ? done : -EFAULT;
		done += n;
	}
	return done;
}

static ssize_t sink_load_user(char __user *ubuf, size_t len, loff_t pos)
{
	size_t done = 0;

	while (done < len) {
		size_t off = sink_off(pos, done);
		size_t n = min_t(size_t, len - done, buf_size - off);

		if (copy_to_user(ubuf + done, sink_buf + off, n))
			return done ? done : -EFAULT;
		done += n;
	}
	return done;
}

static void sink_wrote(struct file *file, ssize_t n)
{
	struct sink_file *sf = file->private_data;

	sink_count(write_calls, 1);
	sink_count_caller();
	if (n > 0)
		sink_count(write_bytes, n);
	if (sf->log)
		sink_log(n > 0 ? n : 0);
}

static ssize_t sink_write(struct file *file, const char __user *buf,
			  size_t len, loff_t *ppos)
{
	ssize_t n = sink_store_user(buf, len, *ppos);

	if (n > 0)
		*ppos += n;
	sink_wrote(file, n);
	return n;
}

static ssize_t sink_read(struct file *file, char __user *buf, size_t len,
			 loff_t *ppos)
{
	ssize_t n = sink_load_user(buf, len, *ppos);

	if (n > 0) {
		*ppos += n;
		sink_count(read_bytes, n);
	}
	sink_count(read_calls, 1);
	sink_count_caller();
	return n;
}

static ssize_t sink_write_iter(struct kiocb *iocb, struct iov_iter *from)
{
	size_t len = iov_iter_count(from), done = 0;

	if (iocb->ki_flags & IOCB_NOWAIT)
		sink_count(nowait_calls, 1);
	while (done < len) {
		size_t off = sink_off(iocb->ki_pos, done);
		size_t n = min_t(size_t, len - done, buf_size - off);
		size_t got = copy_from_iter(sink_buf + off, n, from);

		done += got;
		if (got < n)
			break;
	}
	iocb->ki_pos += done;
	sink_wrote(iocb->ki_filp, done || !len ? (ssize_t)done : -EFAULT);
	return done || !len ? done : -EFAULT;
}

static ssize_t sink_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	size_t len = iov_iter_count(to), done = 0;

	if (iocb->ki_flags & IOCB_NOWAIT)
		sink_count(nowait_calls, 1);
	while (done < len) {
		size_t off = sink_off(iocb->ki_pos, done);
		size_t n = min_t(size_t, len - done, buf_size - off);
		size_t got = copy_to_iter(sink_buf + off, n, to);

		done += got;
		if (got < n)
			break;
	}
	iocb->ki_pos += done;
	sink_count(read_calls, 1);
	sink_count(read_bytes, done);
	sink_count_caller();
	return done || !len ? done : -EFAULT;
}

static int sink_uring_cmd(struct io_uring_cmd *ioucmd, unsigned int flags)
{
	struct iolab_sink_cmd c;
	ssize_t n;

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
	memcpy(&c, io_uring_sqe_cmd(ioucmd->sqe), sizeof(c));
#else
	memcpy(&c, ioucmd->cmd, sizeof(c));
#endif
	if (ioucmd->cmd_op != IOLAB_SINK_CMD_WRITE)
		return -EINVAL;
	if (c.len > INT_MAX)
		return -EINVAL;
	n = sink_store_user(u64_to_user_ptr(c.addr), c.len, c.offset);
	sink_count(cmd_calls, 1);
	sink_count_caller();
	if (n > 0)
		sink_count(cmd_bytes, n);
	return n;
}

static int sink_mmap(struct file *file, struct vm_area_struct *vma)
{
	unsigned long pages = buf_size >> PAGE_SHIFT;
	unsigned long len = vma->vm_end - vma->vm_start;
	int ret;

	if (vma->vm_pgoff >= pages ||
	    len > (pages - vma->vm_pgoff) << PAGE_SHIFT)
		return -EINVAL;
	ret = remap_vmalloc_range(vma, sink_buf, vma->vm_pgoff);
	if (!ret)
		sink_count(mmaps, 1);
	return ret;
}

static loff_t sink_llseek(struct file *file, loff_t offset, int whence)
{
	return fixed_size_llseek(file, offset, whence, buf_size);
}

static int sink_open(struct inode *inode, struct file *file)
{
	struct sink_file *sf = kzalloc(sizeof(*sf), GFP_KERNEL);

	if (!sf)
		return -ENOMEM;
	sf->personality = default_personality;
	if (READ_ONCE(reopen_task) == current)
		sf->personality = reopen_personality;
	sf->log = log;
	/*
	 * The file is not visible to anyone else yet: its fops may change.
	 * misc_open gave it the legacy table (sink_dev.fops); replace_fops
	 * takes over the module reference that fops_get takes.
	 */
	if (sf->personality == IOLAB_SINK_NOWAIT) {
		const struct file_operations *fops = &sink_nowait_fops;

		replace_fops(file, fops_get(fops));
		file->f_mode |= FMODE_NOWAIT;
	}
	file->private_data = sf;
	return 0;
}

static int sink_release(struct inode *inode, struct file *file)
{
	kfree(file->private_data);
	return 0;
}

static long sink_identify(struct file *file, void __user *arg)
{
	struct sink_file *sf = file->private_data;
	struct iolab_sink_info info = {
		.magic = IOLAB_SINK_MAGIC,
		.abi = IOLAB_SINK_ABI,
		.buf_size = buf_size,
		.personality = sf->personality,
		.log = sf->log,
		.default_personality = default_personality,
	};

	return copy_to_user(arg, &info, sizeof(info)) ? -EFAULT : 0;
}

static long sink_counters(void __user *arg)
{
	struct iolab_sink_counters c = {};
	int cpu;

	for_each_possible_cpu(cpu) {
		struct sink_stats *s = per_cpu_ptr(&sink_stats, cpu);

		c.write_calls += s->write_calls;
		c.write_bytes += s->write_bytes;
		c.read_calls += s->read_calls;
		c.read_bytes += s->read_bytes;
		c.nowait_calls += s->nowait_calls;
		c.worker_calls += s->worker_calls;
		c.cmd_calls += s->cmd_calls;
		c.cmd_bytes += s->cmd_bytes;
		c.kernel_writes += s->kernel_writes;
		c.kernel_bytes += s->kernel_bytes;
		c.log_lines += s->log_lines;
		c.mmaps += s->mmaps;
	}
	return copy_to_user(arg, &c, sizeof(c)) ? -EFAULT : 0;
}

/* A new file of the same device, opened with the personality asked for. */
static long sink_reopen(struct file *file, unsigned long arg)
{
	struct file *nf;
	int fd;

	if (arg != IOLAB_SINK_LEGACY && arg != IOLAB_SINK_NOWAIT)
		return -EINVAL;
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		return fd;
	mutex_lock(&reopen_lock);
	reopen_personality = arg;
	WRITE_ONCE(reopen_task, current);
	nf = dentry_open(&file->f_path, file->f_flags, current_cred());
	WRITE_ONCE(reopen_task, NULL);
	mutex_unlock(&reopen_lock);
	if (IS_ERR(nf)) {
		put_unused_fd(fd);
		return PTR_ERR(nf);
	}
	fd_install(fd, nf);
	return fd;
}

/* "0\n".."lines-1\n", each line's end offset in ends[]. */
static char *sink_render(u64 lines, size_t **ends, size_t *total)
{
	size_t cap = lines * 8, at = 0;
	char *text = kvmalloc(cap, GFP_KERNEL);
	u64 i;

	*ends = kvmalloc_array(lines, sizeof(**ends), GFP_KERNEL);
	if (!text || !*ends) {
		kvfree(text);
		kvfree(*ends);
		return NULL;
	}
	for (i = 0; i < lines; i++) {
		at += scnprintf(text + at, cap - at, "%llu\n", i);
		(*ends)[i] = at;
	}
	*total = at;
	return text;
}

static int sink_kwrite_lines(struct file *f, const char *text,
			     const size_t *ends, struct iolab_sink_kwrite *kw)
{
	loff_t pos = 0;
	size_t start = 0;
	u64 i, t0;
	int ret;

	t0 = ktime_get_ns();
	for (i = 0; i < kw->lines; i++) {
		while (start < ends[i]) {
			ssize_t n = kernel_write(f, text + start,
						 ends[i] - start, &pos);

			kw->calls++;
			if (n <= 0)
				return n ? n : -EIO;
			start += n;
		}
		if (!(i & 1023) && fatal_signal_pending(current))
			return -EINTR;
	}
	ret = vfs_fsync(f, 0);
	kw->ns = ktime_get_ns() - t0;
	kw->bytes = pos;
	return ret;
}

static long sink_kwrite(void __user *arg)
{
	struct iolab_sink_kwrite kw;
	size_t *ends, total;
	struct file *f;
	char *path, *text;
	long ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (copy_from_user(&kw, arg, sizeof(kw)))
		return -EFAULT;
	if (!kw.lines || kw.lines > IOLAB_SINK_KWRITE_MAX_LINES)
		return -EINVAL;
	path = strndup_user(u64_to_user_ptr(kw.path), PATH_MAX);
	if (IS_ERR(path))
		return PTR_ERR(path);
	ret = -EINVAL;
	if (path[0] != '/')
		goto out_path;
	ret = -ENOMEM;
	text = sink_render(kw.lines, &ends, &total);
	if (!text)
		goto out_path;
	f = filp_open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		      O_LARGEFILE, 0644);
	ret = PTR_ERR_OR_ZERO(f);
	if (ret)
		goto out_text;
	kw.ns = kw.bytes = kw.calls = 0;
	ret = sink_kwrite_lines(f, text, ends, &kw);
	filp_close(f, NULL);
	sink_count(kernel_writes, kw.calls);
	sink_count(kernel_bytes, kw.bytes);
	if (!ret && copy_to_user(arg, &kw, sizeof(kw)))
		ret = -EFAULT;
out_text:
	kvfree(text);
	kvfree(ends);
out_path:
	kfree(path);
	return ret;
}

/* Copies the gap histogram out, then empties it and forgets the last write. */
static long sink_gaps(void __user *arg)
{
	struct iolab_sink_gaps *g;
	long ret = 0;

	g = kmalloc(sizeof(*g), GFP_KERNEL);
	if (!g)
		return -ENOMEM;
	spin_lock(&log_lock);
	memcpy(g, &gaps, sizeof(*g));
	memset(&gaps, 0, sizeof(gaps));
	gap_last = 0;
	spin_unlock(&log_lock);
	if (copy_to_user(arg, g, sizeof(*g)))
		ret = -EFAULT;
	kfree(g);
	return ret;
}

static long sink_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct sink_file *sf = file->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case IOLAB_SINK_IOC_IDENTIFY:
		return sink_identify(file, uarg);
	case IOLAB_SINK_IOC_COUNTERS:
		return sink_counters(uarg);
	case IOLAB_SINK_IOC_REOPEN:
		return sink_reopen(file, arg);
	case IOLAB_SINK_IOC_SET_LOG:
		if (arg > 1)
			return -EINVAL;
		sf->log = arg;
		return 0;
	case IOLAB_SINK_IOC_KWRITE:
		return sink_kwrite(uarg);
	case IOLAB_SINK_IOC_GAPS:
		return sink_gaps(uarg);
	}
	return -ENOTTY;
}

/* What both personalities share; each fills in its data path. */
#define SINK_COMMON_FOPS				\
	.owner = THIS_MODULE,				\
	.open = sink_open,				\
	.release = sink_release,			\
	.llseek = sink_llseek,				\
	.mmap = sink_mmap,				\
	.unlocked_ioctl = sink_ioctl,			\
	.compat_ioctl = compat_ptr_ioctl,		\
	.uring_cmd = sink_uring_cmd

static const struct file_operations sink_legacy_fops = {
	SINK_COMMON_FOPS,
	.write = sink_write,
	.read = sink_read,
};

static const struct file_operations sink_nowait_fops = {
	SINK_COMMON_FOPS,
	.write_iter = sink_write_iter,
	.read_iter = sink_read_iter,
};

static struct miscdevice sink_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "iolab_sink",
	.fops = &sink_legacy_fops,
	.mode = 0666,
};

static int __init sink_init(void)
{
	int ret;

	if (!strcmp(personality, "legacy")) {
		default_personality = IOLAB_SINK_LEGACY;
	} else if (!strcmp(personality, "nowait")) {
		default_personality = IOLAB_SINK_NOWAIT;
	} else {
		pr_err("iolab_sink: personality=%s: legacy or nowait\n",
		       personality);
		return -EINVAL;
	}
	if (!buf_size || buf_size > SINK_MAX_BUF || !PAGE_ALIGNED(buf_size)) {
		pr_err("iolab_sink: buf_size=%lu: a multiple of %lu to %lu\n",
		       buf_size, PAGE_SIZE, SINK_MAX_BUF);
		return -EINVAL;
	}
	sink_buf = vmalloc_user(buf_size);
	log_ring = vzalloc(SINK_LOG_RING);
	if (!sink_buf || !log_ring) {
		ret = -ENOMEM;
		goto err;
	}
	ret = misc_register(&sink_dev);
	if (ret)
		goto err;
	return 0;
err:
	vfree(sink_buf);
	vfree(log_ring);
	return ret;
}

static void __exit sink_exit(void)
{
	misc_deregister(&sink_dev);
	vfree(sink_buf);
	vfree(log_ring);
}

module_init(sink_init);
module_exit(sink_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("iolab write sink (stub character device)");
