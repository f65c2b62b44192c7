//! A command line another iolab runs (in a guest, on a fleet's hosts) is checked before anything is
//! booted or started: that it parses as one, and that what it asks for is what the other side would
//! accept (a run's or a sweep's spec, a suite's places); what only the other side can check (a target's
//! path there, its memory, CPUs and limits) it checks there.

use clap::FromArgMatches;
use iolab_engine::error::{Error, Result};
use iolab_engine::spec::RunsOn;
use std::path::{Component, Path};

/// The points the sweeps of the command lines checked so far may still hold (a script's lines together):
/// each sweep's points are resolved to be checked, so many lines of large sweeps would be checked for
/// minutes before anything was said.
pub(crate) struct Points(u64);

impl Points {
    /// The points one sweep may hold, for all the lines checked together.
    pub(crate) fn new() -> Points {
        Points(iolab_lab::series::check::MAX_POINTS)
    }

    /// Takes the points of a sweep of the `vary` lists, or refuses (naming `flag`) when the lines so far
    /// hold more than one sweep may.
    fn take(&mut self, flag: &str, vary: &[String]) -> Result<()> {
        let lists: Vec<_> = vary
            .iter()
            .map(|v| iolab_lab::series::parse_vary(v))
            .collect::<Result<_>>()?;
        iolab_lab::series::check::check_lists(&lists, "--vary")?;
        let n: u64 = lists.iter().map(|v| v.values.len() as u64).product();
        self.0 = self.0.checked_sub(n).ok_or_else(|| {
            Error::usage(
                flag,
                format!(
                    "the sweeps of these commands hold more than {} points together, what one sweep may \
                     hold: split them over several runs",
                    iolab_engine::units::thousands_u64(iolab_lab::series::check::MAX_POINTS)
                ),
            )
        })?;
        Ok(())
    }
}

/// Where a command line checked here runs (a build with `iolab vm` or `iolab fleet` alone makes one).
#[derive(Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(all(feature = "vm", feature = "fleet")), allow(dead_code))]
pub(crate) enum OtherSide {
    /// In `iolab vm`'s guest, which has this machine's current directory as its own: a file named
    /// relative to it (without `..` or a symbolic link on the way) is the same file there.
    Guest,
    /// On a fleet's host, whose files (a `--spec` file among them) are its own.
    FleetHost,
}

/// `args` (after `iolab`) parse as an iolab command line of `cli` (its matches; none for a line that
/// prints only help or a version, which is refused unless `help_ok`); else a usage error naming `flag`.
/// `refused` names subcommands the other side cannot run, each with why. What the command asks for is
/// then checked as the other side would ([`check_work`]): its refusal is the one it would give.
pub(crate) fn check(
    flag: &str,
    args: &[String],
    cli: clap::Command,
    refused: &[(&str, &str)],
    help_ok: bool,
    side: OtherSide,
    points: &mut Points,
) -> Result<Option<clap::ArgMatches>> {
    if let Some((_, why)) = refused
        .iter()
        .find(|(c, _)| args.first().is_some_and(|a| a == c))
    {
        return Err(Error::usage(flag, *why));
    }
    let argv = std::iter::once("iolab").chain(args.iter().map(String::as_str));
    match cli.try_get_matches_from(argv) {
        Ok(m) => {
            check_work(flag, &m, side, points)?;
            Ok(Some(m))
        }
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

/// What the other side would refuse of the work `m` asks for, refused here first: a run's spec and a
/// sweep's points resolved as `iolab run` and `iolab sweep` resolve them, for another machine
/// ([`RunsOn::Elsewhere`]: the target's path, the memory, CPUs and limits are the other side's to
/// check), and a suite's places. A `--spec` file is read only where the other side reads the same file
/// (see [`OtherSide`]), and so is a fio job file's text (`--fio`); else they are left to it.
fn check_work(
    flag: &str,
    m: &clap::ArgMatches,
    side: OtherSide,
    points: &mut Points,
) -> Result<()> {
    let parsed = |e: clap::Error| {
        let first = e.to_string().lines().next().unwrap_or_default().to_string();
        Error::usage(flag, first)
    };
    match m.subcommand() {
        Some(("run", sub)) => {
            let a = crate::run_args::RunCmd::from_arg_matches(sub).map_err(parsed)?;
            if a.fio.fio.is_none() && same_file(a.run.spec.as_deref(), side) {
                crate::cmd_run::resolve(&a.run, RunsOn::Elsewhere)?;
                crate::cmd_run::repeat_count(&a.run)?;
            }
            #[cfg(feature = "fio-jobs")]
            if a.fio.fio.is_some() && same_file(a.fio.fio.as_deref(), side) {
                crate::cmd_run_fio::check_elsewhere(&a.fio)?;
            }
        }
        Some(("sweep", sub)) => {
            let a = crate::cmd_series::SweepArgs::from_arg_matches(sub).map_err(parsed)?;
            no_guest_of_its_own(flag, side, a.kernels.is_some().then_some("sweep --kernels"))?;
            points.take(flag, &a.vary)?;
            if same_file(a.run.spec.as_deref(), side) {
                crate::cmd_series::sweep_points(&a, RunsOn::Elsewhere)?;
            }
        }
        Some(("survey", sub)) => {
            let a = crate::survey_args::SurveyArgs::from_arg_matches(sub).map_err(parsed)?;
            crate::cmd_survey::check_elsewhere(&a)?;
        }
        Some(("suite", sub)) => {
            let a = crate::cmd_series::SuiteArgs::from_arg_matches(sub).map_err(parsed)?;
            let own = match (a.vm, a.kernels.is_some()) {
                (true, _) => Some("suite --vm"),
                (_, true) => Some("suite --kernels"),
                _ => None,
            };
            no_guest_of_its_own(flag, side, own)?;
            let file = a.name.as_deref().map(Path::new);
            crate::cmd_series::check_suite_elsewhere(&a, file.is_some() && same_file(file, side))?;
        }
        _ => {}
    }
    Ok(())
}

/// A command that boots guests of its own (`what`: `suite --vm`, `--kernels`) cannot run in a guest,
/// which has no QEMU: refused here, before the guest is booted.
fn no_guest_of_its_own(flag: &str, side: OtherSide, what: Option<&str>) -> Result<()> {
    match (side, what) {
        (OtherSide::Guest, Some(w)) => Err(Error::usage(
            flag,
            format!(
                "the guest has no QEMU for `{w}`: run it here, where it boots its guests itself"
            ),
        )),
        _ => Ok(()),
    }
}

/// Whether the other side reads `spec` (a `--spec` file, if any) as the file this machine reads at that
/// path: in a guest, a path relative to the shared current directory that climbs out of it nowhere (no
/// `..`, no symbolic link on the way: the guest's links lead into its own files); on a fleet's host,
/// never.
fn same_file(spec: Option<&Path>, side: OtherSide) -> bool {
    let Some(p) = spec else {
        return true;
    };
    if side == OtherSide::FleetHost
        || p.components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return false;
    }
    let Ok(here) = std::env::current_dir().and_then(std::fs::canonicalize) else {
        return false;
    };
    let inside: std::path::PathBuf = p
        .components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .collect();
    std::fs::canonicalize(p).is_ok_and(|real| real == here.join(inside))
}
