//! The workload flags of `run` and `sweep`, made from the option table (`iolab_engine::spec::options::all`):
//! each option becomes one `--KEY` argument with its help, default and heading, and the parsed
//! arguments become a `RawSpec` (merged over a `--spec` file by the caller).

use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use iolab_engine::registry::METHODS;
use iolab_engine::spec::options::{Applies, Group, Opt, Ty};
use iolab_engine::spec::{options, RawSpec};

/// The workload options given on the command line.
#[derive(Debug, Clone, Default)]
pub struct SpecArgs(pub RawSpec);

fn heading(o: &Opt) -> Option<&'static str> {
    match o.group {
        // The offload paths' options under their own heading: a reader of --method io_uring skips it.
        _ if o.applies == Applies::Offload => Some("Offload options (--method offload)"),
        Group::Workload => Some("Workload"),
        Group::Method => Some("Method options"),
        Group::Safety => Some("Checking, safety and counting"),
    }
}

/// The first sentence of a help text, for `-h` (one line per option); `--help` has the whole text.
fn short(text: &str) -> String {
    let first = text.lines().next().unwrap_or(text);
    let end = first.find(". ").map_or(first.len(), |i| i + 1);
    first[..end].trim_end_matches('.').to_string()
}

/// The help of one option: its own text, the methods it applies to, its default.
fn help(o: &Opt) -> String {
    let mut h = String::new();
    if o.applies == Applies::All {
        h.push_str(o.help);
    } else {
        // "io_uring: with --sqpoll ...": a capitalised word goes lower case after the methods' names
        // (an acronym such as IORING_SETUP_SQPOLL stays).
        h.push_str(&format!("{}: ", o.method_list()));
        let mut c = o.help.chars();
        match (c.next(), c.clone().next()) {
            (Some(a), Some(b)) if a.is_uppercase() && b.is_lowercase() => {
                h.push(a.to_ascii_lowercase());
                h.push_str(c.as_str());
            }
            _ => h.push_str(o.help),
        }
    }
    if o.key == "method" {
        for m in METHODS {
            h.push_str(&format!("\n  {}: {}", m.info.name, m.info.help));
        }
        h.push('\n');
    } else {
        h.push('.');
    }
    if let Ty::List(words) = o.ty {
        h.push_str(&format!(" [values: {}]", words.join(", ")));
    }
    if let Some(d) = o.default {
        h.push_str(&format!(" [default: {d}]"));
    }
    h
}

fn flag_arg(id: &'static str, o: &Opt, text: String) -> Arg {
    Arg::new(id)
        .long(id)
        .action(ArgAction::SetTrue)
        .help(short(&text))
        .long_help(text)
        .help_heading(heading(o))
}

impl Args for SpecArgs {
    fn augment_args(mut cmd: Command) -> Command {
        for o in options::all() {
            let text = help(o);
            cmd = match o.ty {
                Ty::Bool { on, off } => {
                    if let Some(f) = on {
                        cmd = cmd.arg(flag_arg(f, o, text.clone()));
                    }
                    match (on, off) {
                        (Some(t), Some(f)) => cmd.arg(
                            flag_arg(f, o, format!("The opposite of --{t} (the default)."))
                                .conflicts_with(t),
                        ),
                        (None, Some(f)) => cmd.arg(flag_arg(f, o, text)),
                        _ => cmd,
                    }
                }
                Ty::WordOrFlag(_, bare) => cmd.arg(
                    Arg::new(o.key)
                        .long(o.key)
                        .value_name(o.value_name)
                        .num_args(0..=1)
                        .default_missing_value(bare)
                        .require_equals(false)
                        .help(short(&text))
                        .long_help(text)
                        .help_heading(heading(o)),
                ),
                _ => cmd.arg(
                    Arg::new(o.key)
                        .long(o.key)
                        .value_name(o.value_name)
                        .action(ArgAction::Set)
                        // "-1" is a value (a negative number the spec check then refuses naming this
                        // flag), not an unknown flag "-1"; "--ops" after a valueless flag stays a flag.
                        .allow_negative_numbers(true)
                        // "-8k" too, where a size may be negative.
                        .allow_hyphen_values(o.ty == Ty::SignedSize)
                        .help(short(&text))
                        .long_help(text)
                        .help_heading(heading(o)),
                ),
            };
        }
        cmd
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for SpecArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut raw = RawSpec::new();
        let set = |raw: &mut RawSpec, key: &str, v: iolab_engine::spec::Val| {
            raw.set(key, v)
                .map_err(|e| clap::Error::raw(clap::error::ErrorKind::UnknownArgument, e))
        };
        for o in options::all() {
            match o.ty {
                Ty::Bool { on, off } => {
                    if on.is_some_and(|f| m.get_flag(f)) {
                        set(&mut raw, o.key, true.into())?;
                    }
                    if off.is_some_and(|f| m.get_flag(f)) {
                        set(&mut raw, o.key, false.into())?;
                    }
                }
                _ => {
                    if let Some(v) = m.get_one::<String>(o.key) {
                        set(&mut raw, o.key, v.clone().into())?;
                    }
                }
            }
        }
        Ok(SpecArgs(raw))
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = SpecArgs::from_arg_matches(m)?;
        Ok(())
    }
}
