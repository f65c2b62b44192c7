//! Matching the block layer's events to iolab's ops, and splitting each op's time at them: before its
//! first bio reached the block layer (block_bio_queue), queued there until the driver took the request
//! (block_rq_issue), on the device until it completed (block_rq_complete), and after that until iolab
//! saw the op complete. The parts of one op add up to its latency exactly; an op no request of its own
//! served (a read from the page cache, a buffered write) is all "before".

/// One event of a block tracepoint, on CLOCK_MONOTONIC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    pub kind: Kind,
    /// The request's direction (rwbs holds a W or an R).
    pub write: bool,
    pub t: u64,
    /// The first sector (512 bytes) on the whole disk, and how many.
    pub sector: u64,
    pub nr: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Queue,
    Issue,
    Complete,
}

/// One op as iolab timed it, on CLOCK_MONOTONIC, and the disk sectors it named (`nr` 0: unknown).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpSpan {
    pub write: bool,
    pub start: u64,
    pub end: u64,
    pub sector: u64,
    pub nr: u64,
}

/// Each op's four parts (ns), in op order, and what the matching found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Split {
    pub before: Vec<u64>,
    pub queued: Vec<u64>,
    pub device: Vec<u64>,
    pub after: Vec<u64>,
    /// The split ops' latencies (each the sum of its four parts).
    pub latency: Vec<u64>,
    /// Requests matched to ops (a request two ops share counts for each).
    pub requests: u64,
    /// Ops that no request of their own served.
    pub without_request: u64,
    /// Ops whose bios reached the block layer but none of whose requests was seen issued and completed
    /// within the op (events lost, or a stacked device), and, when events were lost, ops without any:
    /// left out of the parts.
    pub unmatched: u64,
}

/// A request the driver was given: its sectors, when, and when it completed.
#[derive(Debug, Clone, Copy)]
struct Rq {
    write: bool,
    sector: u64,
    nr: u64,
    issue: u64,
    complete: Option<u64>,
}

/// A bio as it reached the block layer: (sector, sectors, time, write).
type Bio = (u64, u64, u64, bool);

/// The events sorted into bios and requests, both sorted by sector then time.
fn sort_events(events: &[Event]) -> (Vec<Bio>, Vec<Rq>) {
    let mut ev = events.to_vec();
    ev.sort_by_key(|e| e.t);
    let mut bios = Vec::new();
    let mut rqs: Vec<Rq> = Vec::new();
    // Requests awaiting completion, by first sector.
    let mut open: std::collections::HashMap<u64, Vec<usize>> = Default::default();
    for e in ev {
        match e.kind {
            Kind::Queue => bios.push((e.sector, e.nr as u64, e.t, e.write)),
            Kind::Issue => {
                open.entry(e.sector).or_default().push(rqs.len());
                rqs.push(Rq {
                    write: e.write,
                    sector: e.sector,
                    nr: e.nr as u64,
                    issue: e.t,
                    complete: None,
                });
            }
            Kind::Complete => {
                if let Some(v) = open.get_mut(&e.sector) {
                    if !v.is_empty() {
                        rqs[v.remove(0)].complete = Some(e.t);
                    }
                }
            }
        }
    }
    bios.sort_unstable();
    rqs.sort_by_key(|r| (r.sector, r.issue));
    (bios, rqs)
}

/// The first request of bio `b`'s direction issued at or after it whose sectors hold its first.
fn request_of(rqs: &[Rq], max_nr: u64, b: &Bio) -> Option<Rq> {
    let (sector, _, t, write) = *b;
    let lo = rqs.partition_point(|r| r.sector + max_nr <= sector);
    rqs[lo..]
        .iter()
        .take_while(|r| r.sector <= sector)
        .filter(|r| r.write == write && sector < r.sector + r.nr.max(1) && r.issue >= t)
        .min_by_key(|r| r.issue)
        .copied()
}

/// Splits every op's time (see the module's comment). `lossy`: events were lost, so an op with none is
/// left out instead of counted as served without a request.
pub fn split(ops: &[OpSpan], events: &[Event], lossy: bool) -> Split {
    let (bios, rqs) = sort_events(events);
    let max_bio = bios.iter().map(|b| b.1).max().unwrap_or(0).max(1);
    let max_rq = rqs.iter().map(|r| r.nr).max().unwrap_or(0).max(1);
    let mut s = Split::default();
    for op in ops {
        let lat = op.end.saturating_sub(op.start);
        // The bios that touched the op's sectors while it ran.
        let lo = bios.partition_point(|b| b.0 + max_bio <= op.sector);
        let mine = bios[lo..]
            .iter()
            .take_while(|b| op.nr > 0 && b.0 < op.sector + op.nr)
            .filter(|b| {
                b.3 == op.write && b.0 + b.1 > op.sector && (op.start..=op.end).contains(&b.2)
            });
        // A bio of the op's sectors whose request completed after the op is another op's (the same block
        // read twice at once): it is passed over. One of its own that never completed leaves the op out.
        let (mut q, mut i, mut c, mut n, mut seen) = (u64::MAX, u64::MAX, 0u64, 0u64, false);
        for b in mine {
            seen = true;
            if let Some(Rq {
                issue,
                complete: Some(done),
                ..
            }) = request_of(&rqs, max_rq, b).filter(|r| r.complete.is_some_and(|d| d <= op.end))
            {
                q = q.min(b.2);
                i = i.min(issue);
                c = c.max(done);
                n += 1;
            }
        }
        if n == 0 && (seen || lossy) {
            s.unmatched += 1;
        } else if n == 0 {
            s.without_request += 1;
            s.push(lat, 0, 0, 0);
        } else {
            s.requests += n;
            s.push(q - op.start, i.saturating_sub(q), c - i.min(c), op.end - c);
        }
    }
    s
}

impl Split {
    fn push(&mut self, before: u64, queued: u64, device: u64, after: u64) {
        self.latency.push(before + queued + device + after);
        self.before.push(before);
        self.queued.push(queued);
        self.device.push(device);
        self.after.push(after);
    }

    /// Ops whose time was split.
    pub fn ops(&self) -> usize {
        self.before.len()
    }
}

/// The mean and the 99th percentile (nearest rank) of `v`, in ns; (0, 0) when empty.
pub fn mean_p99(v: &[u64]) -> (f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0);
    }
    let mean = v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64;
    let mut s = v.to_vec();
    s.sort_unstable();
    let rank = ((0.99 * s.len() as f64).ceil() as usize).clamp(1, s.len());
    (mean, s[rank - 1] as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(kind: Kind, t: u64, sector: u64, nr: u32) -> Event {
        Event {
            kind,
            write: false,
            t,
            sector,
            nr,
        }
    }

    fn op(start: u64, end: u64, sector: u64) -> OpSpan {
        OpSpan {
            write: false,
            start,
            end,
            sector,
            nr: 8,
        }
    }

    #[test]
    fn one_request_per_op_splits_its_time_and_the_parts_add_up() {
        let ops = [op(1_000, 2_000, 800), op(1_100, 2_500, 16)];
        let events = [
            ev(Kind::Queue, 1_200, 800, 8),
            ev(Kind::Issue, 1_250, 800, 8),
            ev(Kind::Complete, 1_900, 800, 8),
            ev(Kind::Queue, 1_300, 16, 8),
            ev(Kind::Issue, 1_300, 16, 8),
            ev(Kind::Complete, 2_400, 16, 8),
        ];
        let s = split(&ops, &events, false);
        assert_eq!(s.before, vec![200, 200]);
        assert_eq!(s.queued, vec![50, 0]);
        assert_eq!(s.device, vec![650, 1_100]);
        assert_eq!(s.after, vec![100, 100]);
        assert_eq!((s.requests, s.without_request, s.unmatched), (2, 0, 0));
        for (k, o) in ops.iter().enumerate() {
            let sum = s.before[k] + s.queued[k] + s.device[k] + s.after[k];
            assert_eq!(sum, o.end - o.start);
        }
    }

    #[test]
    fn an_op_served_without_a_request_is_all_before_and_a_request_outside_it_is_not_its_own() {
        // The same sectors, read again later: the earlier request is not this op's.
        let ops = [op(5_000, 5_300, 800)];
        let events = [
            ev(Kind::Queue, 1_200, 800, 8),
            ev(Kind::Issue, 1_250, 800, 8),
            ev(Kind::Complete, 1_900, 800, 8),
        ];
        let s = split(&ops, &events, false);
        assert_eq!((s.before[0], s.device[0], s.without_request), (300, 0, 1));
    }

    #[test]
    fn a_bio_merged_into_a_larger_request_takes_that_requests_times() {
        // Two 4 KiB ops whose bios the block layer merged into one 8 KiB request.
        let ops = [op(100, 1_000, 8), op(110, 1_000, 16)];
        let events = [
            ev(Kind::Queue, 120, 8, 8),
            ev(Kind::Queue, 130, 16, 8),
            ev(Kind::Issue, 150, 8, 16),
            ev(Kind::Complete, 900, 8, 16),
        ];
        let s = split(&ops, &events, false);
        assert_eq!(s.device, vec![750, 750]);
        assert_eq!(s.queued, vec![30, 20]);
        assert_eq!(s.unmatched, 0);
    }

    #[test]
    fn a_write_of_the_same_sectors_is_not_a_reads_request() {
        // A direct read that first writes its dirty range back: the write is in its "before".
        let ops = [op(100, 2_000, 8)];
        let w = |kind, t| Event {
            write: true,
            ..ev(kind, t, 8, 8)
        };
        let events = [
            w(Kind::Queue, 110),
            w(Kind::Issue, 120),
            w(Kind::Complete, 900),
            ev(Kind::Queue, 1_000, 8, 8),
            ev(Kind::Issue, 1_010, 8, 8),
            ev(Kind::Complete, 1_900, 8, 8),
        ];
        let s = split(&ops, &events, false);
        assert_eq!((s.before[0], s.device[0], s.requests), (900, 890, 1));
    }

    #[test]
    fn with_events_lost_an_op_without_any_is_left_out_not_served_without_a_request() {
        let ops = [op(100, 1_000, 8), op(2_000, 3_000, 800)];
        let events = [
            ev(Kind::Queue, 120, 8, 8),
            ev(Kind::Issue, 150, 8, 8),
            ev(Kind::Complete, 900, 8, 8),
        ];
        let s = split(&ops, &events, true);
        assert_eq!((s.ops(), s.unmatched, s.without_request), (1, 1, 0));
        assert_eq!(s.latency, vec![900]);
    }

    #[test]
    fn the_same_block_read_twice_at_once_is_each_ops_own_request() {
        // Op A (100-1,000) and op B (500-2,000) read sector 8; B's bio is queued inside A's window too.
        let ops = [op(100, 1_000, 8), op(500, 2_000, 8)];
        let events = [
            ev(Kind::Queue, 120, 8, 8),
            ev(Kind::Issue, 150, 8, 8),
            ev(Kind::Complete, 900, 8, 8),
            ev(Kind::Queue, 600, 8, 8),
            ev(Kind::Issue, 610, 8, 8),
            ev(Kind::Complete, 1_900, 8, 8),
        ];
        let s = split(&ops, &events, false);
        assert_eq!((s.ops(), s.unmatched, s.requests), (2, 0, 2));
        assert_eq!(s.device, vec![750, 1_290]);
    }

    #[test]
    fn a_request_never_seen_completing_leaves_its_op_unmatched() {
        let ops = [op(100, 1_000, 8)];
        let events = [ev(Kind::Queue, 120, 8, 8), ev(Kind::Issue, 150, 8, 8)];
        let s = split(&ops, &events, false);
        assert_eq!((s.ops(), s.unmatched), (0, 1));
    }

    #[test]
    fn the_p99_is_the_nearest_rank() {
        let v: Vec<u64> = (1..=200).collect();
        assert_eq!(mean_p99(&v), (100.5, 198.0));
        assert_eq!(mean_p99(&[]), (0.0, 0.0));
    }
}
