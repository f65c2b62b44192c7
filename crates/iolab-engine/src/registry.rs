//! The registry: every method, in the order tables and the survey list them, with how the runner runs
//! it. It sits above `method/` (the methods), `runner/` (their loops) and `offload/` (the process method),
//! which it ties together; [`MethodKind::info`] is every layer's way to a method's facts.

use crate::error::Result;
use crate::measure::clock::ClockInfo;
use crate::method::{
    aio, epoll, io_uring, kcopy, mmap, nop, offload, psync, pv2, stdio, sync, uring_cmd, vectored,
    Method, MethodInfo, MethodKind,
};
use crate::result::RunResult;
use crate::runner::{ContentDrive, Drive};
use crate::spec::Spec;

/// Every method, in the order tables and the survey list them: the registry. Adding a method is one file
/// that declares its `INFO` and implements [`Method`], one variant in [`MethodKind`] and one line here.
pub static METHODS: &[Entry] = &[
    Entry::threads::<sync::Sync>(&sync::INFO),
    Entry::threads::<psync::Psync>(&psync::INFO),
    Entry::threads::<pv2::Pv2>(&pv2::INFO),
    Entry::threads::<vectored::Vectored>(&vectored::INFO),
    Entry::threads::<stdio::Stdio>(&stdio::INFO),
    Entry::threads::<mmap::Mmap>(&mmap::INFO),
    Entry::threads::<io_uring::Uring>(&io_uring::INFO),
    Entry::threads::<aio::Aio>(&aio::INFO),
    Entry::threads::<uring_cmd::UringCmd>(&uring_cmd::INFO),
    Entry::threads::<kcopy::Splice>(&kcopy::SPLICE_INFO),
    Entry::threads::<kcopy::Sendfile>(&kcopy::SENDFILE_INFO),
    Entry::threads::<kcopy::CopyFileRange>(&kcopy::COPY_FILE_RANGE_INFO),
    Entry::threads::<epoll::Epoll>(&epoll::INFO),
    Entry::process(&offload::INFO, crate::offload::run),
    Entry::threads::<nop::Nop>(&nop::INFO),
];

impl MethodKind {
    /// What the method is and needs, from its file.
    pub fn info(self) -> &'static MethodInfo {
        self.entry().info
    }

    /// How the runner runs it.
    pub fn run(self) -> Run {
        self.entry().run
    }

    fn entry(self) -> &'static Entry {
        METHODS
            .iter()
            .find(|m| m.info.kind == self)
            .expect("every MethodKind has an entry in METHODS (tested)")
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The method a `--method` word names (case-insensitive; `-` may stand for `_`).
    pub fn parse(s: &str) -> Option<MethodKind> {
        let s = s.trim().to_ascii_lowercase().replace('-', "_");
        METHODS
            .iter()
            .find(|m| m.info.name == s)
            .map(|m| m.info.kind)
    }

    /// Every method, in registry order.
    pub fn all() -> impl Iterator<Item = MethodKind> {
        METHODS.iter().map(|m| m.info.kind)
    }

    /// "sync, psync, ...", for messages.
    pub fn names() -> String {
        let v: Vec<&str> = METHODS.iter().map(|m| m.info.name).collect();
        v.join(", ")
    }

    /// Kernel-side copies: data moves from a source file without a user-space buffer.
    pub fn is_kernel_copy(self) -> bool {
        self.info().kernel_copy
    }
}

/// A method that runs as a process of its own: it sets up, runs and measures everything itself.
pub type ProcessRun = fn(&Spec, &ClockInfo) -> Result<RunResult>;

/// How the runner drives a method.
#[derive(Clone, Copy)]
pub enum Run {
    /// In iolab's worker threads through the [`Method`] trait (made by [`Entry::threads`]): `drive` runs a
    /// workload of `--bs` blocks, `content` writes given bytes (the decimal-lines workload).
    Threads {
        drive: Drive,
        content: ContentDrive,
        /// The method's [`Method::QUEUED`], which its `exec` must agree with.
        queued: bool,
    },
    /// A process of its own, timed from outside, assembling its own figures.
    Process(ProcessRun),
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Run::Threads { .. } => "Threads",
            Run::Process(_) => "Process",
        })
    }
}

/// A method's registry line: what it is, and how the runner runs it.
pub struct Entry {
    pub info: &'static MethodInfo,
    pub run: Run,
}

impl Entry {
    /// A method run in iolab's worker threads by the runner's loops for `M`.
    pub const fn threads<M: Method>(info: &'static MethodInfo) -> Entry {
        Entry {
            info,
            run: Run::Threads {
                drive: crate::runner::drive::<M>,
                content: crate::runner::write_content::<M>,
                queued: M::QUEUED,
            },
        }
    }

    /// A method whose client is a process of its own, timed from outside.
    pub const fn process(info: &'static MethodInfo, run: ProcessRun) -> Entry {
        Entry {
            info,
            run: Run::Process(run),
        }
    }
}

/// Which methods an option applies to: the registry's answer (each method's entry says what it takes).
impl crate::spec::options::Opt {
    /// Does the option apply to `m`?
    pub fn applies_to(&self, m: MethodKind) -> bool {
        m.info().takes(self.applies)
    }

    /// The methods it applies to, in the registry's order (every method for `Applies::All`).
    pub fn methods(&self) -> impl Iterator<Item = MethodKind> + '_ {
        MethodKind::all().filter(|m| self.applies_to(*m))
    }

    /// "io_uring, aio or offload".
    pub fn method_list(&self) -> String {
        let names: Vec<&str> = self.methods().map(|m| m.name()).collect();
        match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => names.join(""),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::method::Exec;

    /// The runner picks a method's loop by `Method::QUEUED` and sizes its slots by `exec`: the two agree.
    #[test]
    fn every_threaded_method_is_queued_exactly_when_its_exec_says_so() {
        let mut threaded = 0;
        for k in MethodKind::all() {
            let info = k.info();
            if let Run::Threads { queued, .. } = k.run() {
                threaded += 1;
                assert_eq!(queued, info.exec == Exec::Queued, "--method {}", info.name);
            }
        }
        assert!(threaded > 10, "{threaded} methods run in threads");
    }
}
