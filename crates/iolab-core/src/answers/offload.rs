//! The hypervisor thesis's question (Reichenbach, §4.2): why was the offloaded NOP 82x slower than the
//! native one?

use super::{ns, thousands, x, Ctx, Reply};
use crate::findings_compare::Row;
use crate::spec::{Doorbell, MethodKind, OffloadPath};

/// "1,301 ns (3,377 cycles)".
fn cost(r: &Row) -> String {
    match r.tsc_ghz {
        Some(g) => format!("{} ({:.0} cycles)", ns(r.ns()), r.ns() * g),
        None => ns(r.ns()),
    }
}

fn path_is(r: &Row, p: OffloadPath, bell: Option<Doorbell>) -> bool {
    r.nop_requests
        && r.batch == 1
        && matches!(r.offload, Some((path, d)) if path == p && bell.is_none_or(|b| b == d))
}

/// The thesis's ratio, as a clause.
fn seed_clause(c: &Ctx) -> Option<String> {
    let (n, o) = (c.seed("native_cycles")?, c.seed("offloaded_cycles")?);
    let mut s = format!(
        "The thesis: {} / {} cycles = {} (Figure 4.2, NOPs without user_data)",
        thousands(o),
        thousands(n),
        x(o / n)
    );
    if let (Some(nu), Some(ou)) = (
        c.seed("native_user_data_cycles"),
        c.seed("offloaded_user_data_cycles"),
    ) {
        s += &format!(
            "; with user_data, as iolab's requests always carry it, {} / {} = {} (Figure 4.3)",
            thousands(ou),
            thousands(nu),
            x(ou / nu)
        );
    }
    Some(s + ".")
}

/// The clock's own cost beside the thesis's rdtsc (Figure 4.1).
fn clock_clause(c: &Ctx) -> Option<String> {
    let clk = c
        .recs
        .iter()
        .filter_map(|r| r.get("result"))
        .find(|r| r.get("workload").and_then(|w| w.as_str()) == Some("clock"))?;
    let ticks = crate::series::num(clk, &["clock", "overhead_ticks_mean"])?;
    let ns = crate::series::num(clk, &["clock", "overhead_ns"])?;
    Some(format!(
        "One read of iolab's clock costs {ticks:.0} ticks ({ns:.1} ns) here{}.",
        match (c.seed("rdtsc_app_cycles"), c.seed("rdtsc_inmate_cycles")) {
            (Some(a), Some(i)) => format!(
                "; the thesis's rdtsc cost {a:.0} cycles in the application and {i:.0} in the inmate (Figure 4.1)"
            ),
            _ => String::new(),
        }
    ))
}

/// ", 1.00 doorbells and 1.00 server wake-ups per request".
fn per_req(r: &Row) -> String {
    match (r.doorbells_per_op, r.wakeups_per_op) {
        (Some(d), Some(w)) if d < 0.005 && w < 0.005 => ", no doorbell or wake-up".to_string(),
        (Some(d), Some(w)) => format!(", {d:.2} doorbells and {w:.2} server wake-ups per request"),
        _ => String::new(),
    }
}

/// What waking the server per request cost against polling (`poll_max`: the polling paths' largest
/// ratio to `base`).
fn wake_verdict(base: &Row, poll_max: f64, woken: Option<&Row>) -> String {
    let ratio = |r: &Row| r.ns() / base.ns();
    match woken {
        Some(w) if ratio(w) > 2.0 * poll_max.max(1.0) => format!(
            "A server that polls costs up to {} the baseline; one that sleeps and is woken for every request \
             costs {}: the offloaded slowdown is the wake-up ({} per request here), not the shared ring.",
            x(poll_max),
            x(ratio(w)),
            ns(w.ns() - base.ns())
        ),
        Some(w) => format!(
            "Here waking the server per request ({}) cost little more than polling (up to {}): this host's \
             wake-ups are cheap next to the thesis's.",
            x(ratio(w)),
            x(poll_max)
        ),
        None => "This run has no row whose server is woken per request, so the wake-up's share cannot be shown."
            .into(),
    }
}

/// Why was the offloaded NOP 82x slower?
pub fn offload_slowdown(c: &Ctx) -> Reply {
    let inproc =
        c.row(|r| r.nop_requests && r.batch == 1 && r.method() == Some(MethodKind::IoUring));
    let native = c.row(|r| path_is(r, OffloadPath::Native, None));
    let kernel = c.row(|r| path_is(r, OffloadPath::Kernel, None));
    let polled = c.row(|r| {
        path_is(r, OffloadPath::Broker, None) && r.offload.is_some_and(|o| o.1 != Doorbell::Eventfd)
    });
    let woken = c.row(|r| path_is(r, OffloadPath::Broker, Some(Doorbell::Eventfd)));
    let mut parts: Vec<String> = seed_clause(c).into_iter().collect();
    let Some(base) = native.or(inproc) else {
        parts.push("This run has no NOP row at batch 1 to compare with.".into());
        return Reply::not_here(parts.join(" "), "the offload suite's batch-1 steps");
    };
    let mut here = Vec::new();
    if let Some(i) = inproc {
        here.push(format!("in-process io_uring {}", cost(i)));
    }
    if let Some(n) = native {
        here.push(format!(
            "the same client process without its sandbox, entering the kernel itself (native path) {}",
            cost(n)
        ));
    }
    let ratio = |r: &Row| r.ns() / base.ns();
    for (row, what) in [
        (kernel, "through the kernel path (an SQPOLL thread on the other CPU polls the shared ring)"),
        (polled, "through the broker thread, polling"),
        (
            woken,
            "through the broker woken for every request by an eventfd doorbell (the thesis's interrupt model: an \
             IRQ to the root cell, which then calls io_uring_enter)",
        ),
    ] {
        if let Some(r) = row {
            here.push(format!(
                "{what} {}, {} the baseline{}",
                cost(r),
                x(ratio(r)),
                per_req(r)
            ));
        }
    }
    parts.push(format!(
        "Here, one NOP per round trip: {}.",
        here.join("; ")
    ));
    let poll_max = [kernel, polled]
        .into_iter()
        .flatten()
        .map(ratio)
        .fold(f64::NAN, f64::max);
    parts.push(wake_verdict(base, poll_max, woken));
    parts.extend(clock_clause(c));
    parts.push(
        "What remains of the thesis's factor cannot be shown on this machine: its client crossed a Jailhouse \
         partition boundary (an IRQ through the hypervisor) and everything ran emulated in QEMU, which inflates \
         every cycle count."
            .into(),
    );
    Reply::partly(
        parts.join(" "),
        "a client in a real hypervisor partition (a guest with the ring in ivshmem shared memory): issue 21",
    )
}
