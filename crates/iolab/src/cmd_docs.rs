//! `iolab completions SHELL` and `iolab man`: shell completions (clap_complete) and man pages
//! (clap_mangen), generated from the same command definition the parser uses, so they never drift from it.

use crate::output::out_bytes;
use clap::{Args, Command};
use clap_complete::Shell;
use iolab_engine::error::Error;
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct CompletionsArgs {
    /// The shell to complete for; the script goes to stdout (e.g. `iolab completions bash >
    /// /etc/bash_completion.d/iolab`).
    #[arg(value_enum)]
    pub(crate) shell: Shell,
}

#[derive(Args)]
pub(crate) struct ManArgs {
    /// Write iolab.1 and one page per command (iolab-run.1, ...) into DIR (made if missing; an existing
    /// page is never replaced: exit 2). Without it, iolab.1 goes to stdout (`iolab man | man -l -`).
    #[arg(long, value_name = "DIR")]
    pub(crate) dir: Option<PathBuf>,
}

pub(crate) fn cmd_completions(a: &CompletionsArgs, mut cmd: Command) -> Result<i32, Error> {
    let mut buf = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "iolab", &mut buf);
    out_bytes(&buf)?;
    Ok(0)
}

pub(crate) fn cmd_man(a: &ManArgs, cmd: Command) -> Result<i32, Error> {
    let Some(dir) = &a.dir else {
        let roff = page(cmd)?;
        // On a terminal, the page as man shows it; piped, the roff (`iolab man | man -l -`).
        if iolab_sys::isatty(1) && show_with_man(&roff) {
            return Ok(0);
        }
        out_bytes(&roff)?;
        return Ok(0);
    };
    let mut pages = vec![("iolab.1".to_string(), page(cmd.clone())?)];
    // Hidden subcommands (the offload guest's entry point) are iolab's own, not the user's: no page.
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        // Command::name wants a 'static name (clap's "string" feature is off): one small string per
        // page, for a process that ends right after.
        let name: &'static str = Box::leak(format!("iolab-{}", sub.get_name()).into_boxed_str());
        pages.push((format!("{name}.1"), page(sub.clone().name(name))?));
    }
    // The place and every page are checked before any is written, so a refusal leaves DIR as it was.
    crate::output::check_dir_path("--dir", dir)?;
    for (file, _) in &pages {
        let p = dir.join(file);
        if p.exists() {
            return Err(Error::usage(
                "--dir",
                format!(
                    "{} exists; iolab never replaces a file: remove it or choose another DIR",
                    p.display()
                ),
            ));
        }
    }
    // All pages or none: a full disk halfway leaves DIR as it was, so the rerun is not refused.
    crate::output::write_new_set("--dir", dir, &pages)?;
    crate::output::outln(&format!("{} man pages in {}", pages.len(), dir.display()))?;
    Ok(0)
}

/// Shows `roff` through `man -l -` (which pages it); false when man is not there or fails, and the roff
/// is then printed as it is.
fn show_with_man(roff: &[u8]) -> bool {
    use std::io::Write;
    let Ok(mut child) = std::process::Command::new("man")
        .args(["-l", "-"])
        .stdin(std::process::Stdio::piped())
        .spawn()
    else {
        return false;
    };
    let fed = child
        .stdin
        .take()
        .is_some_and(|mut i| i.write_all(roff).is_ok());
    child.wait().is_ok_and(|s| s.success()) && fed
}

/// One man page in roff.
fn page(cmd: Command) -> Result<Vec<u8>, Error> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut buf)
        .map_err(|e| Error::Runtime(format!("cannot render the man page: {e}")))?;
    Ok(buf)
}
