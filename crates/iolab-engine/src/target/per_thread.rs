//! A file per thread: a `--target` holding `{thread}` names one regular file per thread, `{thread}`
//! replaced by the thread's number (fio's clones without a shared filename: `job.0.0`, `job.1.0` ...).
//! Each file is set up as a one-thread target of its own (the same checks, creation, prefill and
//! cache dropping), each thread's region is its whole file, and `--file-size` is each file's size.

use super::prepared::PreparedTarget;
use crate::error::{Error, Result};
use crate::spec::RingDesign;
use crate::spec::Spec;
use crate::target_kind::TargetKind;
use std::path::{Path, PathBuf};

/// The token a `--target` holds to name a file per thread.
pub const THREAD_TOKEN: &str = "{thread}";

/// The template of a file-per-thread target, if `path` is one.
pub fn template(path: &Path) -> Option<&str> {
    path.to_str().filter(|p| p.contains(THREAD_TOKEN))
}

/// Thread `t`'s file of `template`.
pub fn path_of(template: &str, t: u32) -> PathBuf {
    PathBuf::from(template.replace(THREAD_TOKEN, &t.to_string()))
}

/// Sets up thread 0's file with every other thread's in `others`, each by `setup` (the target's own, for
/// one thread).
pub(super) fn setup_per_thread(
    spec: &Spec,
    template: &str,
    setup: fn(&Spec) -> Result<PreparedTarget>,
) -> Result<PreparedTarget> {
    refuse_what_shares(spec)?;
    let mut targets = Vec::with_capacity(spec.threads as usize);
    for t in 0..spec.threads {
        let mut one = spec.clone();
        one.target = path_of(template, t);
        one.threads = 1;
        one.ops = spec.ops_for_thread(t);
        let p = setup(&one)?;
        if p.kind != TargetKind::File {
            return Err(Error::usage(
                "--target",
                format!(
                    "{} is not a regular file: a target holding {THREAD_TOKEN} names a regular file per thread",
                    one.target.display()
                ),
            ));
        }
        targets.push(p);
    }
    let mut first = targets.remove(0);
    for o in &mut targets {
        o.file_per_thread = true;
    }
    first.file_per_thread = true;
    let last = path_of(template, spec.threads - 1);
    first.notes.push(format!(
        "each of the {} threads has a file of its own, {} to {} (the notes on the file are those of the first; the others were set up alike)",
        spec.threads,
        first.path.display(),
        last.display()
    ));
    first.others = targets;
    Ok(first)
}

/// What has every thread work one thing cannot go with a file per thread.
fn refuse_what_shares(spec: &Spec) -> Result<()> {
    if spec.share_region {
        return Err(Error::usage(
            "--share-region",
            format!("gives every thread one region; a target holding {THREAD_TOKEN} gives each thread a file of its own"),
        ));
    }
    if spec.ring.design != RingDesign::PerThread {
        return Err(Error::usage(
            "--ring",
            format!("a ring the threads share submits for every thread; a target holding {THREAD_TOKEN} needs a ring per thread"),
        ));
    }
    if spec.method.info().exec == crate::spec::method_kind::Exec::OutOfProcess {
        return Err(Error::usage(
            "--method",
            format!("{} runs its client as a process of its own on one file; a target holding {THREAD_TOKEN} is a file per thread", spec.method.name()),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_names_a_file_per_thread() {
        assert_eq!(
            template(Path::new("/x/j.{thread}.0")),
            Some("/x/j.{thread}.0")
        );
        assert_eq!(template(Path::new("/x/j.0.0")), None);
        assert_eq!(path_of("/x/j.{thread}.0", 3), PathBuf::from("/x/j.3.0"));
    }
}
