//! `iolab vm [--arch x86_64|aarch64|armv7] [--machine virt|vexpress-a9] [--exe PATH] [--kernel RELEASE|PKG] [--cache DIR] [--timeout SECS] [--script
//! FILE] -- ARGS`: runs `iolab ARGS` (or each line of the script) inside a guest kernel under QEMU
//! (iolab_guest::vm) and exits with the guest command's exit status. The machinery's own lines go to
//! stderr, prefixed "iolab vm: "; the command's stdout and stderr to stdout and stderr. What the guest
//! would refuse of its commands is refused here first, before anything is fetched or booted.

pub(crate) use crate::vm_guest::VmArgs;
use crate::vm_guest::{request, run_request};
use iolab_engine::error::Error;
use iolab_guest::vm;
use std::ffi::OsString;

/// The commands asked for: the script's lines, or the arguments after `--`.
fn commands(a: &VmArgs) -> Result<Vec<Vec<OsString>>, Error> {
    if let Some(p) = &a.script {
        let text = iolab_engine::input::read_text(
            p,
            "--script",
            "script",
            iolab_engine::input::SMALL_INPUT,
        )?;
        return vm::parse_script(&text)
            .map_err(|e| Error::usage("--script", format!("{}: {e}", p.display())));
    }
    if a.args.is_empty() && a.ssh.is_some() {
        return Ok(Vec::new());
    }
    if a.args.is_empty() {
        return Err(Error::usage(
            "--",
            "give the iolab arguments to run in the guest after --, e.g. `iolab vm -- run --method \
             io_uring --iopoll --direct --op read --target /dev/nvme0n1`, or --script FILE",
        ));
    }
    Ok(vec![a.args.clone()])
}

pub(crate) fn cmd_vm(a: &VmArgs, cli: clap::Command) -> Result<i32, Error> {
    let commands = commands(a)?;
    check_commands(a, &commands, cli)?;
    let req = request(a, commands)?;
    if let Some(k) = &req.kernel {
        iolab_guest::vm::releases::check_form(k, req.arch)?;
    }
    check_ssh_port(a.ssh)?;
    run_request(&req)
}

/// Each command the guest runs parses as an iolab command line, and what it asks for is what the guest
/// would accept (`command_line::check`), before anything is fetched or the guest is booted.
fn check_commands(a: &VmArgs, commands: &[Vec<OsString>], cli: clap::Command) -> Result<(), Error> {
    let refused = [
        (
            "vm",
            "the guest has no QEMU: give the command the guest runs, not `vm`",
        ),
        (
            "fleet",
            "the guest has no Ansible: give the command the guest runs, not `fleet`",
        ),
    ];
    let mut points = crate::command_line::Points::new();
    for (i, c) in commands.iter().enumerate() {
        let args: Vec<String> = c.iter().map(|w| w.to_string_lossy().into_owned()).collect();
        let (flag, at) = match &a.script {
            Some(p) => ("--script", format!("{}: command {}: ", p.display(), i + 1)),
            None => ("--", String::new()),
        };
        let side = crate::command_line::OtherSide::Guest;
        crate::command_line::check(flag, &args, cli.clone(), &refused, true, side, &mut points)
            .map_err(|e| match e {
                Error::Usage { flag: f, msg } if f == flag => Error::usage(f, format!("{at}{msg}")),
                // What the guest's command would say (`--ops: ...`), after the script's line.
                Error::Usage { flag: f, msg } if a.script.is_some() => {
                    Error::usage(flag, format!("{at}{f}: {msg}"))
                }
                e => e,
            })?;
    }
    Ok(())
}

/// `--ssh PORT` is free on 127.0.0.1 before the guest is booted (QEMU would fail on it after the boot's
/// first steps, in its own words). 0 asks for a free one.
fn check_ssh_port(port: Option<u16>) -> Result<(), Error> {
    let Some(port) = port.filter(|&p| p != 0) else {
        return Ok(());
    };
    match std::net::TcpListener::bind(("127.0.0.1", port)) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => Err(Error::usage(
            "--ssh",
            format!("port {port} on 127.0.0.1 is in use by another program: give another, or 0 for a free one"),
        )),
        Err(e) => Err(Error::usage(
            "--ssh",
            format!("port {port} on 127.0.0.1 cannot be listened on: {e}"),
        )),
    }
}
