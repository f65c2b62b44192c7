//! A command line another iolab runs (in a guest, on a fleet's hosts) is checked to parse as one before
//! anything is booted or started; what only the other side can check (a method's name, a target's
//! path) it checks there.

use iolab_engine::error::{Error, Result};

/// `args` (after `iolab`) parse as an iolab command line of `cli` (its matches; none for a line that
/// prints only help or a version, which is refused unless `help_ok`); else a usage error naming `flag`.
/// `refused` names subcommands the other side cannot run, each with why.
pub(crate) fn check(
    flag: &str,
    args: &[String],
    cli: clap::Command,
    refused: &[(&str, &str)],
    help_ok: bool,
) -> Result<Option<clap::ArgMatches>> {
    if let Some((_, why)) = refused
        .iter()
        .find(|(c, _)| args.first().is_some_and(|a| a == c))
    {
        return Err(Error::usage(flag, *why));
    }
    let argv = std::iter::once("iolab").chain(args.iter().map(String::as_str));
    match cli.try_get_matches_from(argv) {
        Ok(m) => Ok(Some(m)),
        Err(e)
            if matches!(
                e.kind(),
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
            ) =>
        {
            match help_ok {
                true => Ok(None),
                false => Err(Error::usage(
                    flag,
                    "the command prints help or a version only: give a command that measures",
                )),
            }
        }
        Err(e) => Err(Error::usage(
            flag,
            format!(
                "not an iolab command line: {}",
                e.to_string().lines().next().unwrap_or_default()
            ),
        )),
    }
}
