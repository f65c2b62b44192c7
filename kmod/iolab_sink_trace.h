/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sink's tracepoint, iolab_sink:sink_write, fired per write of a file
 * whose log switch is on (like the Pi thesis's logmodule:write).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM iolab_sink

#if !defined(_IOLAB_SINK_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _IOLAB_SINK_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(sink_write,
	TP_PROTO(pid_t pid, size_t len, u64 write_n),
	TP_ARGS(pid, len, write_n),
	TP_STRUCT__entry(
		__field(pid_t, pid)
		__field(size_t, len)
		__field(u64, write_n)
	),
	TP_fast_assign(
		__entry->pid = pid;
		__entry->len = len;
		__entry->write_n = write_n;
	),
	TP_printk("pid=%d len=%zu write_n=%llu",
		  __entry->pid, __entry->len, __entry->write_n)
);

#endif /* _IOLAB_SINK_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE iolab_sink_trace
#include <trace/define_trace.h>
