//! The few numbers of a profile that findings look at (see `findings.rs`).

use super::groups::{self, kernel_group};
use super::share::{FindingShares, ProfileFigures};
use std::collections::HashMap;

/// A profile's figures as the finding rules see them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProfileFacts {
    /// The timed pass itself was sampled.
    pub inline: bool,
    pub hz: u64,
    pub samples: u64,
    /// Share of all samples taken in kernel code.
    pub kernel_share: f64,
    /// Shares of all samples by group.
    pub copy_share: f64,
    pub sched_share: f64,
    pub syscall_share: f64,
    /// The copy function with the most self samples.
    pub top_copy: Option<String>,
    /// Share of all samples taken on io-wq worker threads (iou-wrk).
    pub iowq_share: f64,
    /// The function the io-wq workers' work went through most (the outermost filesystem, block, page cache
    /// or copy function of each of their stacks), and its share of their samples.
    pub iowq_focus: Option<(String, f64)>,
}

impl ProfileFacts {
    /// The shares findings print, as the result records them.
    pub fn shares(&self) -> FindingShares {
        FindingShares {
            kernel_share: self.kernel_share,
            copy_share: self.copy_share,
            sched_share: self.sched_share,
            syscall_share: self.syscall_share,
            iowq_share: self.iowq_share,
            iowq_focus_share: self.iowq_focus.as_ref().map(|f| f.1),
        }
    }

    pub fn of(p: &ProfileFigures) -> ProfileFacts {
        let group = |name: &str| {
            p.groups
                .iter()
                .find(|g| g.name == name)
                .map_or(0.0, |g| g.share)
        };
        let (iowq, focus) = thread_focus(&p.folded, "iou-wrk");
        ProfileFacts {
            inline: p.pass == "inline",
            hz: p.frequency_hz,
            samples: p.samples,
            kernel_share: p.groups.iter().filter(|g| g.kernel).map(|g| g.share).sum(),
            copy_share: group(groups::COPY),
            sched_share: group(groups::SCHED),
            syscall_share: group(groups::SYSCALL),
            top_copy: p
                .top_self
                .iter()
                .find(|f| f.kernel && kernel_group(&f.name) == Some(groups::COPY))
                .map(|f| f.name.clone()),
            iowq_share: if p.samples > 0 {
                iowq as f64 / p.samples as f64
            } else {
                0.0
            },
            iowq_focus: focus,
        }
    }
}

/// Samples of `thread` in the folded stacks, and the function most of them went through: the outermost
/// frame of each stack that is filesystem, block layer, page cache or copy code, with its share of the
/// thread's samples.
pub fn thread_focus(folded: &[String], thread: &str) -> (u64, Option<(String, f64)>) {
    let work = [
        groups::FILESYSTEM,
        groups::BLOCK,
        groups::PAGE_CACHE,
        groups::COPY,
    ];
    let mut total = 0;
    let mut by: HashMap<&str, u64> = HashMap::new();
    for line in folded {
        let Some((stack, n)) = line.rsplit_once(' ') else {
            continue;
        };
        let Ok(n) = n.parse::<u64>() else { continue };
        let mut frames = stack.split(';');
        if frames.next() != Some(thread) {
            continue;
        }
        total += n;
        if let Some(f) = frames.find(|f| kernel_group(f).is_some_and(|g| work.contains(&g))) {
            *by.entry(f).or_insert(0) += n;
        }
    }
    let top = by
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))
        .map(|(f, n)| (f.to_string(), n as f64 / total.max(1) as f64));
    (total, top)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::profile::share::ProfileShare;

    #[test]
    fn io_wq_work_is_found_through_its_outermost_filesystem_frame() {
        let folded = vec![
            "iou-wrk;ret_from_fork;io_wq_worker;io_write;ext4_buffered_write_iter;generic_perform_write;copy_folio_from_iter_atomic 7".to_string(),
            "iou-wrk;ret_from_fork;io_wq_worker;io_write;ext4_buffered_write_iter;ext4_da_write_begin 2".to_string(),
            "iou-wrk;ret_from_fork;io_wq_worker;schedule 1".to_string(),
            "iolab;pwrite;entry_SYSCALL_64;vfs_write 5".to_string(),
        ];
        let (n, top) = thread_focus(&folded, "iou-wrk");
        assert_eq!(n, 10);
        let (f, share) = top.unwrap();
        assert_eq!(f, "ext4_buffered_write_iter");
        assert!((share - 0.9).abs() < 1e-9);
        assert_eq!(thread_focus(&folded, "iou-sqp"), (0, None));
    }

    #[test]
    fn facts_of_a_profile() {
        let g = |name: &str, kernel, share| ProfileShare {
            name: name.into(),
            kernel,
            samples: 0,
            share,
        };
        let p = ProfileFigures {
            pass: "inline".into(),
            samples: 100,
            groups: vec![
                g(groups::COPY, true, 0.5),
                g(groups::IOLAB, false, 0.2),
                g(groups::FILESYSTEM, true, 0.3),
            ],
            top_self: vec![
                g("iolab::x", false, 0.2),
                g("copy_folio_from_iter_atomic", true, 0.5),
            ],
            folded: vec!["iou-wrk;io_write;ext4_buffered_write_iter 40".into()],
            ..Default::default()
        };
        let f = ProfileFacts::of(&p);
        assert!(f.inline);
        assert!((f.kernel_share - 0.8).abs() < 1e-9);
        assert_eq!(f.copy_share, 0.5);
        assert_eq!(f.sched_share, 0.0);
        assert_eq!(f.top_copy.as_deref(), Some("copy_folio_from_iter_atomic"));
        assert!((f.iowq_share - 0.4).abs() < 1e-9);
        assert_eq!(f.iowq_focus.unwrap().0, "ext4_buffered_write_iter");
    }
}
