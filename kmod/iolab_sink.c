// SPDX-License-Identifier: GPL-2.0
/*
 * iolab_sink: a character-device write sink for iolab, after the Pi thesis's "logmodule".
 *
 * Skeleton: a misc device /dev/iolab_sink that accepts writes and counts them.
 */
#include <linux/atomic.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>

static atomic64_t sink_write_calls;
static atomic64_t sink_write_bytes;

static ssize_t sink_write(struct file *file, const char __user *buf,
			  size_t len, loff_t *ppos)
{
	atomic64_inc(&sink_write_calls);
	atomic64_add(len, &sink_write_bytes);
	return len;
}

static const struct file_operations sink_fops = {
	.owner = THIS_MODULE,
	.write = sink_write,
	.llseek = noop_llseek,
};

static struct miscdevice sink_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "iolab_sink",
	.fops = &sink_fops,
	.mode = 0666,
};

static int __init sink_init(void)
{
	return misc_register(&sink_dev);
}

static void __exit sink_exit(void)
{
	misc_deregister(&sink_dev);
}

module_init(sink_init);
module_exit(sink_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("iolab write sink (stub character device)");
