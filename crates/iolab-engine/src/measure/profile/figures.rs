//! From named call chains to the figures of a profile: shares by group, top functions by self and by
//! inclusive share, and the folded stacks.

use super::groups::{group_of, FrameView, GROUPS};
use super::records::{Domain, Frame, Parsed};
use super::share::ProfileShare;
use super::symbols::{Resolved, Symbols};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Functions listed by self and by inclusive share.
pub const TOP: usize = 30;
/// Folded stacks kept in the result (the heaviest), so the JSON stays bounded.
pub const FOLDED_MAX: usize = 2000;

/// What the figures are made of.
pub struct Shares {
    pub samples: u64,
    pub groups: Vec<ProfileShare>,
    pub top_self: Vec<ProfileShare>,
    pub top_inclusive: Vec<ProfileShare>,
    pub folded: Vec<String>,
    pub notes: Vec<String>,
}

/// A thread's name without its digits and trailing separators: `iou-wrk-4242` -> `iou-wrk`,
/// `iolab-w0` -> `iolab-w`; a thread never named is `unnamed`.
pub fn thread_label(comm: Option<&str>) -> String {
    let s: String = comm
        .unwrap_or("")
        .chars()
        .filter(|c| !c.is_ascii_digit())
        .collect();
    let s = s.trim_end_matches(['-', '_', ':', ' ', '/']);
    if s.is_empty() {
        "unnamed".into()
    } else {
        s.to_string()
    }
}

/// The frames of one chain that are shown: every kernel frame, the first user frame, and the user frames
/// beyond it that have a symbol (without frame pointers in the user code, the kernel's walk of the user
/// stack strays after the first frame into addresses that belong to nothing). Returns the frames and how
/// many user frames were dropped.
fn shown<'a>(chain: &[Frame], syms: &'a Symbols) -> (Vec<(&'a Resolved, bool)>, u64) {
    let unknown = &*UNKNOWN;
    let mut out = Vec::with_capacity(chain.len());
    let mut dropped = 0;
    let mut first_user = true;
    for f in chain {
        let r = syms.names.get(f).unwrap_or(unknown);
        let kernel = f.domain == Domain::Kernel;
        if !kernel {
            if !first_user && !r.named {
                dropped += 1;
                continue;
            }
            first_user = false;
        }
        out.push((r, kernel));
    }
    (out, dropped)
}

static UNKNOWN: std::sync::LazyLock<Resolved> = std::sync::LazyLock::new(|| Resolved {
    name: "[unknown]".into(),
    own: false,
    named: false,
});

fn share(name: &str, kernel: bool, n: u64, total: u64) -> ProfileShare {
    ProfileShare {
        name: name.to_string(),
        kernel,
        samples: n,
        share: if total > 0 {
            n as f64 / total as f64
        } else {
            0.0
        },
    }
}

/// Largest first, then by name; at most `max`.
fn ranked(m: HashMap<(String, bool), u64>, total: u64, max: usize) -> Vec<ProfileShare> {
    let mut v: Vec<ProfileShare> = m
        .into_iter()
        .map(|((n, k), c)| share(&n, k, c, total))
        .collect();
    v.sort_by(|a, b| b.samples.cmp(&a.samples).then(a.name.cmp(&b.name)));
    v.truncate(max);
    v
}

/// The figures of `parsed`'s chains, named by `syms`, threads named by `threads` (tid -> comm).
pub fn shares(parsed: &Parsed, syms: &Symbols, threads: &BTreeMap<u32, String>) -> Shares {
    let total = parsed.samples();
    let mut groups: HashMap<&'static str, u64> = HashMap::new();
    let mut self_: HashMap<(String, bool), u64> = HashMap::new();
    let mut incl: HashMap<(String, bool), u64> = HashMap::new();
    let mut folded: HashMap<String, u64> = HashMap::new();
    let mut dropped = 0;
    for ((tid, chain), &n) in &parsed.chains {
        let thread = thread_label(threads.get(tid).map(String::as_str));
        let (frames, d) = shown(chain, syms);
        dropped += d * n;
        let views: Vec<FrameView> = frames
            .iter()
            .map(|(r, k)| FrameView {
                name: &r.name,
                kernel: *k,
                own: r.own,
            })
            .collect();
        *groups
            .entry(group_of(&views, thread == "iou-wrk"))
            .or_insert(0) += n;
        if let Some((r, k)) = frames.first() {
            *self_.entry((r.name.clone(), *k)).or_insert(0) += n;
        }
        let distinct: HashSet<(&str, bool)> =
            frames.iter().map(|(r, k)| (r.name.as_str(), *k)).collect();
        for (name, k) in distinct {
            *incl.entry((name.to_string(), k)).or_insert(0) += n;
        }
        let mut line = thread;
        for (r, _) in frames.iter().rev() {
            line.push(';');
            line.push_str(&r.name);
        }
        *folded.entry(line).or_insert(0) += n;
    }
    let mut notes = Vec::new();
    if dropped > 0 {
        notes.push(format!(
            "{dropped} user frames without a symbol were dropped from the call chains (beyond the first user \
             frame: code built without frame pointers leaves the kernel's walk of the user stack astray)"
        ));
    }
    Shares {
        samples: total,
        groups: group_shares(&groups, total),
        top_self: ranked(self_, total, TOP),
        top_inclusive: ranked(incl, total, TOP),
        folded: folded_lines(folded, total, &mut notes),
        notes,
    }
}

fn group_shares(groups: &HashMap<&'static str, u64>, total: u64) -> Vec<ProfileShare> {
    let mut v: Vec<ProfileShare> = GROUPS
        .iter()
        .filter_map(|(g, k)| groups.get(g).map(|&n| share(g, *k, n, total)))
        .collect();
    v.sort_by_key(|g| std::cmp::Reverse(g.samples));
    v
}

/// "stack count" lines, heaviest first, at most [`FOLDED_MAX`] (a note says what was left out).
fn folded_lines(m: HashMap<String, u64>, total: u64, notes: &mut Vec<String>) -> Vec<String> {
    let mut v: Vec<(String, u64)> = m.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    if v.len() > FOLDED_MAX {
        let kept: u64 = v[..FOLDED_MAX].iter().map(|x| x.1).sum();
        notes.push(format!(
            "folded stacks: the {FOLDED_MAX} heaviest of {} distinct stacks are kept ({:.1}% of the samples)",
            v.len(),
            100.0 * kept as f64 / total.max(1) as f64
        ));
        v.truncate(FOLDED_MAX);
    }
    v.into_iter().map(|(s, n)| format!("{s} {n}")).collect()
}

#[cfg(test)]
mod tests {
    use super::super::groups::{COPY, IOLAB, SYSCALL};
    use super::*;

    fn named(syms: &mut Symbols, addr: u64, domain: Domain, name: &str, own: bool) -> Frame {
        let f = Frame { addr, domain };
        syms.names.insert(
            f,
            Resolved {
                name: name.into(),
                own,
                named: true,
            },
        );
        f
    }

    #[test]
    fn shares_add_up_and_stacks_fold() {
        let mut syms = Symbols::default();
        let copy = named(
            &mut syms,
            1,
            Domain::Kernel,
            "copy_folio_from_iter_atomic",
            false,
        );
        let gpw = named(&mut syms, 2, Domain::Kernel, "generic_perform_write", false);
        let entry = named(&mut syms, 3, Domain::Kernel, "entry_SYSCALL_64", false);
        let ours = named(&mut syms, 4, Domain::User, "iolab::main", true);
        let stray = Frame {
            addr: 5,
            domain: Domain::User,
        };
        let mut p = Parsed::default();
        p.chains
            .insert((10, vec![copy, gpw, entry, ours, stray]), 6);
        p.chains.insert((10, vec![entry, ours]), 3);
        p.chains.insert((11, vec![ours]), 1);
        let threads = BTreeMap::from([(10, "iolab-w0".to_string()), (11, "iolab".to_string())]);
        let s = shares(&p, &syms, &threads);
        assert_eq!(s.samples, 10);
        let g: HashMap<&str, u64> = s
            .groups
            .iter()
            .map(|g| (g.name.as_str(), g.samples))
            .collect();
        assert_eq!((g[COPY], g[SYSCALL], g[IOLAB]), (6, 3, 1));
        assert!((s.groups.iter().map(|g| g.share).sum::<f64>() - 1.0).abs() < 1e-9);
        assert_eq!(s.top_self[0].name, "copy_folio_from_iter_atomic");
        assert!((s.top_self[0].share - 0.6).abs() < 1e-9);
        let main = s
            .top_inclusive
            .iter()
            .find(|f| f.name == "iolab::main")
            .unwrap();
        assert_eq!(main.samples, 10);
        assert!(!main.kernel);
        assert_eq!(
            s.folded[0],
            "iolab-w;iolab::main;entry_SYSCALL_64;generic_perform_write;copy_folio_from_iter_atomic 6"
        );
        assert!(s.notes[0].starts_with("6 user frames"), "{:?}", s.notes);
    }

    #[test]
    fn thread_labels_drop_digits() {
        assert_eq!(thread_label(Some("iou-wrk-4242")), "iou-wrk");
        assert_eq!(thread_label(Some("iou-sqp-17")), "iou-sqp");
        assert_eq!(thread_label(Some("iolab-w12")), "iolab-w");
        assert_eq!(thread_label(Some("iolab")), "iolab");
        assert_eq!(thread_label(Some("1234")), "unnamed");
        assert_eq!(thread_label(None), "unnamed");
    }

    #[test]
    fn folded_stacks_are_capped_with_a_note() {
        let m: HashMap<String, u64> = (0..FOLDED_MAX as u64 + 5)
            .map(|i| (format!("t;f{i}"), i + 1))
            .collect();
        let total = m.values().sum();
        let mut notes = Vec::new();
        let v = folded_lines(m, total, &mut notes);
        assert_eq!(v.len(), FOLDED_MAX);
        assert!(v[0].ends_with(&format!(" {}", FOLDED_MAX + 5)));
        assert_eq!(notes.len(), 1);
    }
}
