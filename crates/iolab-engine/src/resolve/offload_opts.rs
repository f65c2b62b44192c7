//! The offload options' values and the combinations they refuse (`--offload-path`, `--doorbell`,
//! `--offload-attack`, and the SQPOLL options of the kernel path).

use crate::error::{Error, Result};
use crate::method::info::Exec;
use crate::spec::*;

impl RawSpec {
    pub(super) fn offload_opts(&self, method: MethodKind, threads: u64) -> Result<OffloadOpts> {
        let path = self.word(
            "offload-path",
            OffloadPath::Kernel,
            &[
                ("kernel", OffloadPath::Kernel),
                ("broker", OffloadPath::Broker),
                ("native", OffloadPath::Native),
            ],
        )?;
        let out_of_process = method.info().exec == Exec::OutOfProcess;
        if out_of_process && path != OffloadPath::Kernel {
            if let Some(o) = ["sq-idle-ms", "sq-cpu"].into_iter().find(|k| self.has(k)) {
                return Err(Error::usage(
                    format!("--{o}"),
                    format!(
                        "applies to --offload-path kernel (its SQPOLL thread), not {}",
                        path.name()
                    ),
                ));
            }
        }
        if self.has("doorbell") && path != OffloadPath::Broker {
            return Err(Error::usage(
                "--doorbell",
                format!(
                    "applies to --offload-path broker only, not {} (the kernel path's doorbell is SQPOLL's \
                     NEED_WAKEUP; --sq-idle-ms sets how long its thread spins)",
                    path.name()
                ),
            ));
        }
        let partition = self.word(
            "offload-partition",
            Partition::Process,
            &[("process", Partition::Process), ("vm", Partition::Vm)],
        )?;
        if partition == Partition::Vm {
            check_vm_partition(self, path)?;
        }
        // A guest cannot write the host's eventfd: its broker never sleeps (spin).
        let default_bell = if partition == Partition::Vm {
            Doorbell::Spin
        } else {
            Doorbell::SpinThenSleep
        };
        let doorbell = self.word(
            "doorbell",
            default_bell,
            &[
                ("spin", Doorbell::Spin),
                ("spin-then-sleep", Doorbell::SpinThenSleep),
                ("eventfd", Doorbell::Eventfd),
            ],
        )?;
        let attacks = self.attacks(path)?;
        let sq_sleep = self.bool("sq-sleep")?;
        if sq_sleep && path != OffloadPath::Kernel {
            return Err(Error::usage(
                "--sq-sleep",
                format!(
                    "applies to --offload-path kernel (its SQPOLL thread), not {}; the broker is woken per \
                     request with --doorbell eventfd",
                    path.name()
                ),
            ));
        }
        let no_user_data = self.bool("no-user-data")?;
        if no_user_data && (path == OffloadPath::Broker || partition == Partition::Vm) {
            return Err(Error::usage(
                "--no-user-data",
                "applies to the kernel and native paths of a forked client: the broker routes each completion \
                 by its user_data, and a guest partition's client writes its requests itself",
            ));
        }
        if partition == Partition::Vm && attacks.contains(&Attack::Syscall) {
            return Err(Error::usage(
                "--offload-attack",
                "syscall tests seccomp strict mode, which a guest client is not in (its system calls go to the \
                 guest's own kernel, and are allowed): with --offload-partition vm use opcode, raw-fd, slot, \
                 buf-addr, buf-len, rewrite or crash",
            ));
        }
        if out_of_process && threads != 1 {
            return Err(Error::usage(
                "--threads",
                "an offload run has one client process; use --threads 1",
            ));
        }
        Ok(OffloadOpts {
            path,
            doorbell,
            attacks,
            sq_sleep,
            no_user_data,
            partition,
        })
    }

    fn attacks(&self, path: OffloadPath) -> Result<Vec<Attack>> {
        let Some(text) = self.text("offload-attack")? else {
            return Ok(Vec::new());
        };
        let mut attacks = Vec::new();
        for w in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            let a = Attack::ALL
                .into_iter()
                .find(|a| a.name() == w)
                .ok_or_else(|| {
                    let names: Vec<&str> = Attack::ALL.iter().map(|a| a.name()).collect();
                    Error::usage(
                        "--offload-attack",
                        format!(
                            "'{w}' is not accepted; expected a comma list of {}",
                            names.join(", ")
                        ),
                    )
                })?;
            if a == Attack::Rewrite && path != OffloadPath::Broker {
                return Err(Error::usage(
                    "--offload-attack",
                    "rewrite tests the broker's copy of each request: use it with --offload-path broker",
                ));
            }
            if a.kills_client() && attacks.iter().any(|b: &Attack| b.kills_client()) {
                return Err(Error::usage(
                    "--offload-attack",
                    "syscall and crash each end the client: give one of them",
                ));
            }
            attacks.push(a);
        }
        if attacks.is_empty() {
            return Err(Error::usage(
                "--offload-attack",
                "empty list; expected one or more attacks",
            ));
        }
        if path == OffloadPath::Native && attacks.iter().any(|a| !a.kills_client()) {
            return Err(Error::usage(
                "--offload-attack",
                "the native path has no sandbox to test (its client may do anything): use --offload-path kernel \
                 or broker",
            ));
        }
        Ok(attacks)
    }
}

/// `--offload-partition vm`: the kernel or broker path, and the broker only spinning (a guest cannot write
/// the host's eventfd).
fn check_vm_partition(raw: &RawSpec, path: OffloadPath) -> Result<()> {
    if path == OffloadPath::Native {
        return Err(Error::usage(
            "--offload-partition",
            "vm runs the client in a guest, whose io_uring_enter would enter the guest's kernel, not this one: \
             use --offload-path kernel or broker",
        ));
    }
    if let Some(w) = raw.text("doorbell")?.filter(|w| w != "spin") {
        return Err(Error::usage(
            "--doorbell",
            format!(
                "{w} needs the client to write iolab's eventfd, which a guest cannot: with \
                 --offload-partition vm the broker spins (--doorbell spin)"
            ),
        ));
    }
    Ok(())
}

/// What the offload paths register with io_uring, asked of the kernel's limit before anything is made.
pub(super) fn check_offload_limits(s: &Spec) -> Result<()> {
    if s.method.info().exec != Exec::OutOfProcess {
        return Ok(());
    }
    crate::offload::check_data_area_for(s.bs, s.batch)
}
