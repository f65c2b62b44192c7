//! `iolab driver build|load|unload|status`: iolab's sink driver (`kmod/`, embedded in the binary) built
//! against a kernel's headers, loaded with finit_module(2), unloaded with delete_module(2). Each says what
//! it needs, what it did, and why it cannot where it cannot (exit 1 naming the errno).

use crate::output::outln;
use clap::{Args, Subcommand};
use iolab_engine::error::Error;
use iolab_guest::driver::module;
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct DriverArgs {
    #[command(subcommand)]
    cmd: DriverCmd,
}

#[derive(Subcommand)]
enum DriverCmd {
    /// Build the sink driver against a kernel's headers (needs make and the compiler the kernel was built
    /// with); prints where the .ko went.
    Build {
        /// The kernel's headers: the directory holding its top Makefile.
        #[arg(long, value_name = "DIR", default_value_os_t = module::default_headers())]
        headers: PathBuf,
        /// Where to put iolab_sink.ko (made if missing; an iolab_sink.ko already there is never replaced).
        /// Default: iolab's cache, $XDG_CACHE_HOME/iolab/driver/RELEASE, where `load` looks.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// Load the sink driver (finit_module; needs root and a kernel that loads modules). Parameters:
    /// personality=legacy|nowait, buf_size=BYTES, log=0|1.
    Load {
        /// The module; default: the one `build` wrote for the running kernel.
        #[arg(value_name = "KO")]
        ko: Option<PathBuf>,
        /// Module parameters, name=value.
        #[arg(value_name = "PARAM=VALUE")]
        params: Vec<String>,
    },
    /// Unload the sink driver (delete_module; refused while /dev/iolab_sink is open or mapped).
    Unload,
    /// Whether the driver is loaded and usable, and its counters since it was loaded.
    Status,
}

pub(crate) fn cmd_driver(a: &DriverArgs) -> Result<i32, Error> {
    match &a.cmd {
        DriverCmd::Build { headers, out } => {
            let b = module::build(headers, out.as_deref())?;
            outln(&format!(
                "built {} from its {} embedded source files against the kernel headers in {}, for kernel {}; \
                 load it with: iolab driver load{}",
                b.ko.display(),
                iolab_guest::driver::SOURCES.len(),
                headers.display(),
                b.release.as_deref().unwrap_or("(release unknown: no include/generated/utsrelease.h)"),
                if out.is_some() {
                    format!(" {}", b.ko.display())
                } else {
                    String::new()
                }
            ))?;
            Ok(0)
        }
        DriverCmd::Load { ko, params } => {
            let (ko, params) = split_ko(ko.as_ref(), params);
            module::load(&ko, &params)?;
            outln(&format!(
                "loaded {} as {}{}",
                ko.display(),
                iolab_engine::sink_device::DEVICE,
                if params.is_empty() {
                    String::new()
                } else {
                    format!(" with {}", params.join(" "))
                }
            ))?;
            Ok(0)
        }
        DriverCmd::Unload => {
            module::unload()?;
            outln(&format!("unloaded {}", iolab_engine::sink_device::MODULE))?;
            Ok(0)
        }
        DriverCmd::Status => {
            let (ok, lines) = module::status();
            for l in lines {
                outln(&l)?;
            }
            Ok(if ok { 0 } else { 1 })
        }
    }
}

/// `load personality=nowait` names no module: a first word with `=` is a parameter.
fn split_ko(ko: Option<&PathBuf>, params: &[String]) -> (PathBuf, Vec<String>) {
    match ko {
        Some(k) if k.to_string_lossy().contains('=') && !k.exists() => {
            let mut p = vec![k.to_string_lossy().into_owned()];
            p.extend(params.iter().cloned());
            (module::default_ko(), p)
        }
        Some(k) => (k.clone(), params.to_vec()),
        None => (module::default_ko(), params.to_vec()),
    }
}
