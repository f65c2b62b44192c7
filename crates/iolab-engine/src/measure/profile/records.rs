//! The records a sampling event's ring buffer holds (perf_event_open(2), "MMAP layout"), parsed from the
//! bytes drained out of it: samples (PERF_RECORD_SAMPLE with IP, TID and CALLCHAIN), thread names
//! (PERF_RECORD_COMM) and the kernel's count of samples it dropped (PERF_RECORD_LOST).
//!
//! Identical call chains of one thread are counted once with their number, so a pass of 100,000 samples
//! of a loop keeps a few hundred chains, not 100,000.

use iolab_sys::perf;
use std::collections::{BTreeMap, HashMap};

/// Where a frame's address lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Domain {
    Kernel,
    User,
}

/// One frame of a call chain: an address in kernel or user space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Frame {
    pub addr: u64,
    pub domain: Domain,
}

/// What a pass's ring buffers held.
#[derive(Debug, Default)]
pub struct Parsed {
    /// (tid, call chain leaf first) -> samples.
    pub chains: HashMap<(u32, Vec<Frame>), u64>,
    /// tid -> the thread's name, from PERF_RECORD_COMM.
    pub comms: BTreeMap<u32, String>,
    /// Samples the kernel said it dropped (PERF_RECORD_LOST).
    pub lost: u64,
    /// Records whose bytes did not make sense (cut short): skipped.
    pub malformed: u64,
}

impl Parsed {
    pub fn samples(&self) -> u64 {
        self.chains.values().sum()
    }
}

/// A little-endian reader over one record's bytes (the ring holds native-endian words; x86_64 and
/// aarch64 are little-endian, and `from_ne_bytes` keeps it right elsewhere).
struct Words<'a> {
    b: &'a [u8],
    at: usize,
}

impl Words<'_> {
    fn u64(&mut self) -> Option<u64> {
        let v = self.b.get(self.at..self.at + 8)?;
        self.at += 8;
        Some(u64::from_ne_bytes(v.try_into().ok()?))
    }
    fn u32(&mut self) -> Option<u32> {
        let v = self.b.get(self.at..self.at + 4)?;
        self.at += 4;
        Some(u32::from_ne_bytes(v.try_into().ok()?))
    }
}

/// A call chain's entries (PERF_CONTEXT_* markers, then addresses) as frames, leaf first; `ip` stands in
/// when the chain is empty, in the domain the record's misc bits give.
pub fn frames(ip: u64, ip_kernel: bool, chain: &[u64]) -> Vec<Frame> {
    let mut out = Vec::with_capacity(chain.len());
    let mut domain = None;
    for &a in chain {
        if a >= perf::PERF_CONTEXT_MAX {
            domain = match a {
                perf::PERF_CONTEXT_KERNEL => Some(Domain::Kernel),
                perf::PERF_CONTEXT_USER => Some(Domain::User),
                _ => None, // hypervisor or guest frames: not ours
            };
            continue;
        }
        if let Some(domain) = domain {
            out.push(Frame { addr: a, domain });
        }
    }
    if out.is_empty() {
        out.push(Frame {
            addr: ip,
            domain: if ip_kernel {
                Domain::Kernel
            } else {
                Domain::User
            },
        });
    }
    out
}

/// Parses the records of one ring's bytes into `into`.
pub fn parse(bytes: &[u8], into: &mut Parsed) {
    let mut at = 0;
    while at + 8 <= bytes.len() {
        let ty = u32::from_ne_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
        let misc = u16::from_ne_bytes(bytes[at + 4..at + 6].try_into().expect("2 bytes"));
        let size = u16::from_ne_bytes(bytes[at + 6..at + 8].try_into().expect("2 bytes")) as usize;
        if size < 8 || at + size > bytes.len() {
            into.malformed += 1;
            return;
        }
        let body = &bytes[at + 8..at + size];
        let ok = match ty {
            perf::PERF_RECORD_SAMPLE => sample(body, misc, into),
            perf::PERF_RECORD_COMM => comm(body, into),
            perf::PERF_RECORD_LOST => lost(body, into),
            _ => Some(()),
        };
        if ok.is_none() {
            into.malformed += 1;
        }
        at += size;
    }
}

fn sample(body: &[u8], misc: u16, into: &mut Parsed) -> Option<()> {
    let mut w = Words { b: body, at: 0 };
    let ip = w.u64()?;
    let _pid = w.u32()?;
    let tid = w.u32()?;
    let nr = w.u64()? as usize;
    let chain: Vec<u64> = (0..nr).map(|_| w.u64()).collect::<Option<_>>()?;
    let mode = misc as u32 & perf::PERF_RECORD_MISC_CPUMODE_MASK;
    let kernel = mode == perf::PERF_RECORD_MISC_KERNEL;
    *into
        .chains
        .entry((tid, frames(ip, kernel, &chain)))
        .or_insert(0) += 1;
    Some(())
}

fn comm(body: &[u8], into: &mut Parsed) -> Option<()> {
    let mut w = Words { b: body, at: 0 };
    let _pid = w.u32()?;
    let tid = w.u32()?;
    let name = &body[8..];
    let end = name.iter().position(|&c| c == 0).unwrap_or(name.len());
    into.comms
        .insert(tid, String::from_utf8_lossy(&name[..end]).into_owned());
    Some(())
}

fn lost(body: &[u8], into: &mut Parsed) -> Option<()> {
    let mut w = Words { b: body, at: 0 };
    let _id = w.u64()?;
    into.lost += w.u64()?;
    Some(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A record: header (type, misc, size) and body words.
    pub(crate) fn record(ty: u32, misc: u16, body: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&ty.to_ne_bytes());
        v.extend_from_slice(&misc.to_ne_bytes());
        v.extend_from_slice(&((8 + body.len()) as u16).to_ne_bytes());
        v.extend_from_slice(body);
        v
    }

    pub(crate) fn sample_record(tid: u32, chain: &[u64]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&chain.get(1).copied().unwrap_or(0).to_ne_bytes());
        b.extend_from_slice(&1u32.to_ne_bytes());
        b.extend_from_slice(&tid.to_ne_bytes());
        b.extend_from_slice(&(chain.len() as u64).to_ne_bytes());
        for a in chain {
            b.extend_from_slice(&a.to_ne_bytes());
        }
        record(
            perf::PERF_RECORD_SAMPLE,
            perf::PERF_RECORD_MISC_KERNEL as u16,
            &b,
        )
    }

    fn comm_record(tid: u32, name: &str) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&1u32.to_ne_bytes());
        b.extend_from_slice(&tid.to_ne_bytes());
        b.extend_from_slice(name.as_bytes());
        b.resize(8 + (name.len() + 8) / 8 * 8, 0);
        record(perf::PERF_RECORD_COMM, 0, &b)
    }

    #[test]
    fn samples_comms_and_lost_records_are_read() {
        let k = perf::PERF_CONTEXT_KERNEL;
        let u = perf::PERF_CONTEXT_USER;
        let mut bytes = comm_record(7, "iou-wrk-7");
        let chain = [k, 0xffff_1000, 0xffff_2000, u, 0x4000, 0x5000];
        bytes.extend(sample_record(7, &chain));
        bytes.extend(sample_record(7, &chain));
        bytes.extend(sample_record(8, &[u, 0x4000]));
        let mut lost = Vec::new();
        lost.extend_from_slice(&9u64.to_ne_bytes());
        lost.extend_from_slice(&3u64.to_ne_bytes());
        bytes.extend(record(perf::PERF_RECORD_LOST, 0, &lost));
        let mut p = Parsed::default();
        parse(&bytes, &mut p);
        assert_eq!(p.samples(), 3);
        assert_eq!(p.lost, 3);
        assert_eq!(p.malformed, 0);
        assert_eq!(p.comms[&7], "iou-wrk-7");
        let f = frames(0, true, &chain);
        assert_eq!(
            p.chains[&(7, f.clone())],
            2,
            "identical chains counted once"
        );
        assert_eq!(f.len(), 4);
        assert_eq!(f[0].domain, Domain::Kernel);
        assert_eq!(f[2].domain, Domain::User);
    }

    #[test]
    fn a_record_cut_short_is_counted_not_trusted() {
        let mut bytes = sample_record(7, &[perf::PERF_CONTEXT_KERNEL, 0xffff_1000]);
        bytes.truncate(bytes.len() - 4);
        let mut p = Parsed::default();
        parse(&bytes, &mut p);
        assert_eq!(p.samples(), 0);
        assert_eq!(p.malformed, 1);
    }

    #[test]
    fn hypervisor_frames_are_dropped_and_an_empty_chain_keeps_the_ip() {
        let f = frames(
            0x4000,
            false,
            &[perf::PERF_CONTEXT_HV, 0x1, perf::PERF_CONTEXT_USER, 0x4000],
        );
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].addr, 0x4000);
        let f = frames(0xffff_1000, true, &[]);
        assert_eq!(f[0].domain, Domain::Kernel);
    }
}
