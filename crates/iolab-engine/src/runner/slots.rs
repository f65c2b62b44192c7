//! The request slots of the loop for queued methods: which requests are in flight, where their
//! buffers are, and what a reap found.

use super::work::{AlignedBuf, LoopParams, WorkerOut};
use crate::error::Result;
use crate::measure::hist::Pending;
use crate::method::api::{Io, Method};
use crate::pattern::{self, OpPlan};

/// The first unexpected completion result of a reap (kept out of line: it is the rare case).
#[cold]
#[inline(never)]
fn note_bad(bad: &mut Option<(i32, u64)>, res: i32, offset: u64) {
    bad.get_or_insert((res, offset));
}

/// One entry of the request slots' table. A slot's request: its start tick, file offset and direction,
/// and the slot's buffer (indexed by slot); the free stack and one reap's completions (indexed by
/// position). The buffer's address is kept here, not read from the buffers' own table, so that a round
/// of a target without positions touches one page of the loop's memory, not two.
#[derive(Clone, Copy)]
struct Lane {
    start: u64,
    offset: u64,
    buf: *mut u8,
    write: bool,
    /// The result its request completes with (its length; read where the run's one result is not it).
    want: i32,
    free: u32,
    reaped: (u32, i32),
}

/// Requests handed to the method in one call at most: a longer round goes in several.
const ROUND: usize = 32;

/// The request slots of an asynchronous loop: one table (a fixed free stack with no growth checks on
/// the hot path, each slot's request, the completions of a reap) and the requests being handed to the
/// method, kept inline (on the loop's stack). One table, not one allocation per field: every page a
/// round writes costs the system call that follows on this machine's VM (see `Pending`), and the five
/// small allocations this replaced landed on four pages.
pub(super) struct Slots {
    lanes: Box<[Lane]>,
    nfree: usize,
    round: [Io; ROUND],
}

impl Slots {
    /// The slots of `qd` requests, slot i's buffer `bufs[i]`.
    pub(super) fn new(qd: u32, bufs: &[AlignedBuf]) -> Slots {
        let lanes = (0..qd)
            .map(|i| Lane {
                start: 0,
                offset: 0,
                buf: bufs[i as usize].ptr,
                write: false,
                free: qd - 1 - i,
                reaped: (0, 0),
                want: 0,
            })
            .collect();
        let none = Io {
            slot: 0,
            offset: 0,
            buf: std::ptr::null_mut(),
            len: 0,
            write: false,
        };
        Slots {
            lanes,
            nfree: qd as usize,
            round: [none; ROUND],
        }
    }

    /// The round takes the top `n` (at most [`ROUND`]) slots of the free stack, in place. Its requests,
    /// started at `s` (kept where they are `timed`), are laid out first, then handed to the method in one
    /// call (two short loops keep the hot state in registers; one interleaved loop spilled it).
    #[inline(always)]
    fn lay_out(
        &mut self,
        n: usize,
        p: &LoopParams,
        plan: &mut OpPlan,
        bufs: &mut [AlignedBuf],
        (s, timed): (u64, bool),
    ) -> &[Io] {
        let Slots {
            lanes,
            nfree,
            round,
        } = self;
        *nfree -= n;
        let bs = p.bs;
        // A mixed run's reads use the buffers after the writes' (one per slot each).
        let reads_from = if p.mixed { lanes.len() } else { 0 };
        let first = *nfree;
        if p.planned {
            for (i, io) in round[..n].iter_mut().enumerate() {
                let slot = lanes[first + i].free;
                let op = plan.next_op();
                let b = &mut bufs[slot as usize + if op.write { 0 } else { reads_from }];
                if p.stamp && op.write {
                    pattern::stamp(b.slice_mut(op.len), p.seed, op.block);
                }
                let l = &mut lanes[slot as usize];
                (l.start, l.offset, l.write, l.want) = (s, op.offset, op.write, op.len as i32);
                *io = Io {
                    slot,
                    offset: op.offset,
                    buf: b.ptr,
                    len: op.len,
                    write: op.write,
                };
            }
        } else {
            // A target without positions (a sink, a stream) and nothing to stamp: offset 0, no plan.
            for (i, io) in round[..n].iter_mut().enumerate() {
                let slot = lanes[first + i].free;
                // Its offset stays 0; its start is needed only for its latency.
                if timed {
                    lanes[slot as usize].start = s;
                }
                *io = Io {
                    slot,
                    offset: 0,
                    buf: lanes[slot as usize].buf,
                    len: bs,
                    write: p.write,
                };
            }
        }
        &round[..n]
    }

    /// Lays out a round of `n` requests and hands it to the method, [`ROUND`] at a time: how many it
    /// took, and its error.
    #[inline(always)]
    pub(super) fn queue<M: Method>(
        &mut self,
        m: &mut M,
        n: usize,
        p: &LoopParams,
        plan: &mut OpPlan,
        bufs: &mut [AlignedBuf],
        s: (u64, bool),
    ) -> (usize, Result<()>) {
        let mut taken = 0;
        while taken < n {
            let c = (n - taken).min(ROUND);
            let round = self.lay_out(c, p, plan, bufs, s);
            let (took, r) = m.submit_round(round);
            taken += took;
            if r.is_err() {
                // The requests not taken keep their places at the top of the free stack.
                self.nfree += c - took;
                return (taken, r);
            }
        }
        (taken, Ok(()))
    }

    /// Moves the start of every request by `d` ticks (the time of an interval's close, taken out of their
    /// latencies).
    #[cold]
    #[inline(never)]
    pub(super) fn shift(&mut self, d: u64) {
        for l in self.lanes.iter_mut() {
            l.start += d;
        }
    }

    /// Reaps the completions the method has, at most `max` (a batch: the ones left wait in the queue
    /// while the freed slots are filled again, and their time there is in their latency, as with fio's
    /// iodepth_batch_complete_max, which defaults to its submit batch of 1), at tick `e`: records their
    /// latencies (`timed`; else `e` is stale and nothing is recorded), frees their slots and returns how
    /// many there were and the first unexpected result (with its request's offset).
    #[inline(always)]
    pub(super) fn reap<M: Method>(
        &mut self,
        m: &mut M,
        out: &mut WorkerOut,
        held: &mut Pending,
        (e, max, timed): (u64, u32, bool),
        expected: i32,
    ) -> (u32, Option<(i32, u64)>) {
        let (lat, mut perop) = (&mut out.lat, out.perop.as_mut());
        let Slots { lanes, nfree, .. } = self;
        if !timed {
            // --latency-sample 0: only the results are looked at, each as it is reaped.
            // The top of the free stack in a local (a register), not behind `nfree`: an add to memory
            // per completion chained each on the one before.
            let (mut bad, mut top): (Option<(i32, u64)>, usize) = (None, *nfree);
            let k = m.reap(max, |slot, res| {
                let l = &lanes[slot as usize];
                if res != expected && res != l.want {
                    note_bad(&mut bad, res, l.offset);
                }
                lanes[top].free = slot;
                top += 1;
            });
            *nfree = top;
            return (k, bad);
        }
        // A method reports no more completions than it has requests in flight, at most qd.
        let mut k = 0;
        m.reap(max, |slot, res| {
            lanes[k].reaped = (slot, res);
            k += 1;
        });
        let mut bad: Option<(i32, u64)> = None;
        // Completions reaped together mostly share one latency (same round, same reap): equal values are
        // counted in a register and recorded as a run.
        let (mut run_v, mut run_n) = (0u64, 0u64);
        for j in 0..k {
            let (slot, res) = lanes[j].reaped;
            let Lane {
                start,
                offset,
                write,
                want,
                ..
            } = lanes[slot as usize];
            let v = e.saturating_sub(start);
            if v == run_v {
                run_n += 1;
            } else {
                if run_n > 0 {
                    held.add(lat, run_v, run_n);
                }
                (run_v, run_n) = (v, 1);
            }
            if let Some(po) = perop.as_deref_mut() {
                po.op(write, offset, Some((start, e)));
            }
            if res != expected && res != want {
                note_bad(&mut bad, res, offset);
            }
            lanes[*nfree].free = slot;
            *nfree += 1;
        }
        if run_n > 0 {
            held.add(lat, run_v, run_n);
        }
        (k as u32, bad)
    }
}
