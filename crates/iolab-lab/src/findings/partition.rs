//! The finding of an offload run from a guest partition (`--offload-partition vm`): its round trip read
//! against the seed thesis's (Figure 4.3: 4,170 cycles native, 487,894 offloaded from a Jailhouse inmate), and where
//! the cost goes. The rule itself is in `findings.rs`'s table (`partition_round_trip`).

/// Where a partition's round trip goes, against the thesis.
pub fn round_trip(f: &super::facts::Facts) -> Option<String> {
    let p = f.partition.as_ref()?;
    if p.ops == 0 || p.round_trip_ns <= 0.0 {
        return None;
    }
    let cycles = p
        .round_trip_cycles
        .map(|c| {
            format!(
                " = {c:.0} cycles ({:.2}x the thesis's offloaded {}, {:.0}x its native {}: Figure 4.3, with \
                 user_data as iolab's)",
                c / iolab_engine::offload::SEED_OFFLOADED_CYCLES as f64,
                iolab_engine::units::thousands(iolab_engine::offload::SEED_OFFLOADED_CYCLES as f64),
                c / iolab_engine::offload::SEED_NATIVE_CYCLES as f64,
                iolab_engine::units::thousands(iolab_engine::offload::SEED_NATIVE_CYCLES as f64)
            )
        })
        .unwrap_or_default();
    let client = if p.emulated {
        "the guest's CPU is emulated (QEMU TCG): every instruction of its loop (writing the request, \
         spinning on the completion) is translated, and the vCPU threads compete with the server for the \
         host's cores, so the figure is the emulator's, not a partition's; under KVM the same loop runs \
         natively and shared-memory polling causes no VM exit"
            .to_string()
    } else {
        format!(
            "the guest runs under {} (hardware virtualization): its loop is native code and polling shared \
             memory causes no VM exit, so the round trip is the server's reaction time",
            p.accelerator.to_uppercase()
        )
    };
    let server = if p.path == "broker" {
        "the broker spins for the whole run (a guest cannot write iolab's eventfd)".to_string()
    } else if p.wake_requests > 0 {
        format!(
            "the SQPOLL thread slept {} times and the guest asked for a wake-up through the shared wake word \
             ({} SQ_WAKEUP calls by iolab's polling thread, each up to {} µs late)",
            p.wake_requests,
            p.host_wakeups,
            iolab_guest::partition::layout::WAKE_POLL_US
        )
    } else {
        "the SQPOLL thread never slept, so no wake-up was needed".to_string()
    };
    let used = match p.server_share {
        Some(s) => format!("the server used {s:.2} of a host core polling"),
        None => {
            "the server polled (its share of a core is not put: the run was too short to hold it)"
                .to_string()
        }
    };
    Some(format!(
        "offloaded from a guest partition ({} path, batch {}): {:.1} µs per round trip{cycles}. Where it goes: \
         {client}; {used}: {server}. The thesis's inmate rang an interrupt per batch and its Linux side woke \
         and called io_uring_enter: no interrupt and no system call in this design",
        p.path,
        p.batch,
        p.round_trip_ns / 1000.0,
    ))
}
