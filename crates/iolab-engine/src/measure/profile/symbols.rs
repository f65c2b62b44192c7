//! Names for sampled addresses, by the `blazesym` crate (libbpf's symbolizer): kernel addresses from
//! /proc/kallsyms, user addresses from this process's mappings (/proc/self/maps) and the ELF symbol
//! tables of the files mapped there (iolab's own binary, glibc, the vDSO). Run while the process still
//! maps what it mapped during the pass (right after it). Rust names are demangled here (rustc-demangle,
//! without the hash); C names need none, and the process has no C++.

use super::records::{Domain, Frame};
use blazesym::symbolize::source::{Kernel, Process, Source};
use blazesym::symbolize::{Input, Reason, Symbolized, Symbolizer};
use blazesym::{MaybeDefault, Pid};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One address's name.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    /// The function, or `[module]` / `[unknown]` where no symbol covers the address.
    pub name: String,
    /// A symbol of iolab's own executable.
    pub own: bool,
    /// A real symbol (not a placeholder).
    pub named: bool,
}

/// Names of every sampled address and why some have none.
#[derive(Debug, Default)]
pub struct Symbols {
    pub names: HashMap<Frame, Resolved>,
    /// Why kernel or user addresses stayed unnamed, for people.
    pub unsymbolized: Vec<String>,
}

const HIDDEN: &str =
    "kernel symbols hidden: /proc/kallsyms shows zeros to non-root (kptr_restrict)";

/// Does /proc/kallsyms give real addresses to this process? `Err` says why not.
pub fn kallsyms_readable() -> Result<(), String> {
    let text = std::fs::read_to_string("/proc/kallsyms")
        .map_err(|e| format!("kernel symbols unavailable: /proc/kallsyms cannot be read ({e})"))?;
    let mut lines = text.lines().take(64).peekable();
    if lines.peek().is_none() {
        return Err("kernel symbols unavailable: /proc/kallsyms is empty".into());
    }
    if lines.all(|l| {
        l.split(' ')
            .next()
            .is_some_and(|a| a.bytes().all(|c| c == b'0'))
    }) {
        return Err(HIDDEN.into());
    }
    Ok(())
}

/// Names `frames`.
pub fn resolve<'a>(frames: impl Iterator<Item = &'a Frame>) -> Symbols {
    let mut kernel: Vec<u64> = Vec::new();
    let mut user: Vec<u64> = Vec::new();
    for f in frames {
        match f.domain {
            Domain::Kernel => kernel.push(f.addr),
            Domain::User => user.push(f.addr),
        }
    }
    for v in [&mut kernel, &mut user] {
        v.sort_unstable();
        v.dedup();
    }
    let sym = Symbolizer::builder()
        .enable_code_info(false)
        .enable_inlined_fns(false)
        .build();
    let mut out = Symbols::default();
    if !kernel.is_empty() {
        match kallsyms_readable() {
            Ok(()) => {
                let src = Source::Kernel(Kernel {
                    kallsyms: MaybeDefault::Default,
                    vmlinux: MaybeDefault::None,
                    debug_syms: false,
                    ..Default::default()
                });
                name_all(&sym, &src, Domain::Kernel, &kernel, None, &mut out);
            }
            Err(why) => {
                out.unsymbolized.push(why);
                for &a in &kernel {
                    out.names
                        .insert(frame(a, Domain::Kernel), placeholder("[kernel]"));
                }
            }
        }
    }
    if !user.is_empty() {
        let mut src = Process::new(Pid::Slf);
        src.debug_syms = false;
        src.perf_map = false;
        // Paths from /proc/self/maps rather than /proc/self/map_files (which needs CAP_SYS_ADMIN).
        src.map_files = false;
        let exe = std::env::current_exe().ok();
        let src = Source::Process(src);
        name_all(&sym, &src, Domain::User, &user, exe.as_deref(), &mut out);
    }
    out
}

/// A Rust symbol's path ("iolab_engine::runner::loops::loop_sync<...>"), other names as they are.
fn demangled(name: &str) -> String {
    match rustc_demangle::try_demangle(name) {
        Ok(d) => format!("{d:#}"),
        Err(_) => name.to_string(),
    }
}

fn frame(addr: u64, domain: Domain) -> Frame {
    Frame { addr, domain }
}

fn placeholder(name: &str) -> Resolved {
    Resolved {
        name: name.into(),
        own: false,
        named: false,
    }
}

/// Symbolizes `addrs` from `src` into `out`; `exe` is iolab's executable (user symbols in it are its own).
fn name_all(
    sym: &Symbolizer,
    src: &Source,
    domain: Domain,
    addrs: &[u64],
    exe: Option<&Path>,
    out: &mut Symbols,
) {
    let what = match domain {
        Domain::Kernel => "kernel",
        Domain::User => "user",
    };
    let found = match sym.symbolize(src, Input::AbsAddr(addrs)) {
        Ok(v) => v,
        Err(e) => {
            out.unsymbolized
                .push(format!("{what} addresses not symbolized: {e}"));
            Vec::new()
        }
    };
    let exe: Option<PathBuf> = exe.and_then(|p| std::fs::canonicalize(p).ok());
    let mut unknown = 0u64;
    for (i, &a) in addrs.iter().enumerate() {
        let r = match found.get(i) {
            Some(Symbolized::Sym(s)) => Resolved {
                name: demangled(&s.name),
                own: match (&s.module, &exe) {
                    // Both come from the kernel's view of the file (/proc/self/maps and /proc/self/exe).
                    (Some(m), Some(exe)) => Path::new(&**m) == exe.as_path(),
                    _ => false,
                },
                named: true,
            },
            Some(Symbolized::Unknown(reason)) => {
                unknown += 1;
                placeholder(match reason {
                    Reason::MissingSyms => "[no symbols]",
                    _ => "[unknown]",
                })
            }
            None => {
                unknown += 1;
                placeholder("[unknown]")
            }
        };
        out.names.insert(frame(a, domain), r);
    }
    if unknown > 0 {
        out.unsymbolized.push(format!(
            "{unknown} of {} sampled {what} addresses have no symbol (outside any mapped file's symbols)",
            addrs.len()
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    fn a_function_of_ours() -> u64 {
        std::hint::black_box(42)
    }

    #[test]
    fn our_own_function_is_named_and_ours() {
        let addr = a_function_of_ours as *const () as u64;
        let f = frame(addr, Domain::User);
        let s = resolve([f].iter());
        let r = &s.names[&f];
        assert!(r.named, "{r:?} {:?}", s.unsymbolized);
        assert!(
            r.name.ends_with("::tests::a_function_of_ours"),
            "demangled, no hash: {r:?}"
        );
        assert!(r.own, "a symbol of the test binary itself: {r:?}");
    }

    #[test]
    fn a_kernel_address_is_named_where_kallsyms_is_readable() {
        if let Err(why) = kallsyms_readable() {
            println!("SKIPPED: {why}");
            return;
        }
        let text = std::fs::read_to_string("/proc/kallsyms").unwrap();
        let line = text
            .lines()
            .find(|l| l.ends_with(" vfs_write"))
            .expect("vfs_write in kallsyms");
        let addr = u64::from_str_radix(line.split(' ').next().unwrap(), 16).unwrap();
        let f = frame(addr + 1, Domain::Kernel);
        let s = resolve([f].iter());
        assert_eq!(s.names[&f].name, "vfs_write", "{:?}", s.unsymbolized);
        assert!(!s.names[&f].own);
    }
}
