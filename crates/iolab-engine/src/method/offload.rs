//! `offload`: a sandboxed client process (seccomp filter) doing its I/O through rings in shared memory,
//! served by the kernel (an SQPOLL io_uring), iolab's broker, or itself (native). The method lives in
//! `crate::offload`; this file is its registry entry: it runs as a process of its own, timed from outside.

use super::info::{Exec, Fit, MethodInfo, Targets};
use super::kind::MethodKind;
use crate::spec::options::Applies;
use crate::spec::{OffloadPath, Partition, Spec};

/// `offload`, as the registry lists it.
pub const INFO: MethodInfo = MethodInfo {
    kind: MethodKind::Offload,
    name: "offload",
    help: "a sandboxed client process (seccomp filter) doing I/O through rings in shared memory (--offload-path)",
    exec: Exec::OutOfProcess,
    targets: Targets {
        stream: Fit::OtherTarget(
            "registers the target as an io_uring fixed file: use a regular file, /dev/null, /dev/zero or a \
             block device, not a stream",
        ),
        sink: Fit::No(
            "opens the target in its sandboxed client, which does not choose the sink driver's personality \
             (--sink): use io_uring, uring_cmd or a synchronous method on {t}",
        ),
        ..Targets::ANY
    },
    verifies_reads: true,
    syscall_note: "the client's own system calls (see offload)",
    way,
    options: &[Applies::Batch, Applies::SqThread, Applies::NopRequests, Applies::Offload],
    ..MethodInfo::PLAIN
};

/// "offload (broker path, eventfd doorbell, batch 1)".
fn way(_: &MethodInfo, s: &Spec) -> String {
    let mut o = vec![format!("{} path", s.offload.path.name())];
    if s.offload.partition == Partition::Vm {
        o.insert(0, "from a guest partition".to_string());
    }
    if s.offload.path == OffloadPath::Broker {
        o.push(format!("{} doorbell", s.offload.doorbell.name()));
    }
    if s.offload.sq_sleep {
        o.push("SQ thread asleep before every round trip".into());
    }
    if s.offload.no_user_data {
        o.push("user_data unwritten".into());
    }
    o.push(format!("batch {}", s.batch));
    format!("offload ({})", o.join(", "))
}
