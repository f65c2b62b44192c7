//! fio's job-file format, read as fio reads it: `[section]` headers, `key=value` or a bare `key` (a flag),
//! `;` and `#` comments, `include FILE` (relative to the including file), `${VAR}` from the environment,
//! and `[global]` options that apply to the jobs after them (a later `[global]` changes the jobs that
//! follow it, as in fio). The generic INI crates do not follow these rules (bare keys, include, repeated
//! globals), so the format is read here.

use std::path::{Path, PathBuf};

/// One job: its section name and its options in the order fio would apply them (globals first).
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub name: String,
    pub opts: Vec<(String, String)>,
}

impl Job {
    /// The last value given for `key` (a later line overrides an earlier one, as in fio).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.opts
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Includes deeper than this are refused (an include loop).
const MAX_DEPTH: usize = 8;
/// The most files a job file and its includes may open in all (each include line is an open, so a file
/// that includes another many times, nested, is bounded as a whole, not only by its depth).
const MAX_FILES: usize = 256;
/// The most bytes a job file and its includes may hold in all, and their lines once each `${VAR}` is
/// replaced (a 1 MiB file of a 100 KB variable, each of its lines naming it, would be 100 GB).
const MAX_BYTES: u64 = iolab_engine::input::SMALL_INPUT;

/// The jobs of the job file at `path`, `env` giving `${VAR}`s.
pub fn parse_file(path: &Path, env: &dyn Fn(&str) -> Option<String>) -> Result<Vec<Job>, String> {
    let mut read = Read {
        lines: Vec::new(),
        files: 0,
        bytes: 0,
        expanded: 0,
    };
    read_lines(path, env, 0, &mut read)?;
    jobs_of(&read.lines)
}

/// What a job file and its includes gave so far, and what reading them took (bounded in all).
struct Read {
    lines: Vec<Line>,
    files: usize,
    bytes: u64,
    /// The lines' bytes once expanded.
    expanded: u64,
}

/// A line of the file after includes and expansion, with where it came from (for messages).
struct Line {
    at: At,
    text: String,
}

/// Where a line is: its file (one text shared by the file's lines: a path of 4 KB is not copied into
/// each of a million lines) and its 1-based number.
struct At {
    file: std::rc::Rc<str>,
    line: usize,
}

impl std::fmt::Display for At {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

fn read_lines(
    path: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    depth: usize,
    out: &mut Read,
) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(format!(
            "{}: includes nest deeper than {MAX_DEPTH} (an include loop?)",
            path.display()
        ));
    }
    out.files += 1;
    if out.files > MAX_FILES {
        return Err(format!(
            "{}: more than {MAX_FILES} files opened by the job file's includes in all; iolab reads at most that many",
            path.display()
        ));
    }
    // /proc/self/environ and the like are the kernel's, not job files: never read (nor quoted).
    if let Some(fs) = iolab_sys::fs_magic(path)
        .ok()
        .and_then(iolab_sys::pseudo_fs_name)
    {
        return Err(format!(
            "{} is on {fs}, a kernel-interface filesystem: a job file (or an include) is a file of its own",
            path.display()
        ));
    }
    let text = iolab_engine::input::read_text(path, "--fio", "fio job file", MAX_BYTES - out.bytes)
        .map_err(|e| {
            // The caller names the flag once.
            let e = match e {
                iolab_engine::error::Error::Usage { msg, .. } => msg,
                e => e.to_string(),
            };
            match out.bytes {
                0 => e,
                n => format!(
                    "{e} (the files before it took {n} bytes of the {MAX_BYTES} iolab reads of a job file \
                     and its includes)"
                ),
            }
        })?;
    out.bytes += text.len() as u64;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let file: std::rc::Rc<str> = path.display().to_string().into();
    for (i, raw) in text.lines().enumerate() {
        let at = At {
            file: file.clone(),
            line: i + 1,
        };
        let t = strip_comment(raw).trim();
        if t.is_empty() || t.starts_with(';') || t.starts_with('#') {
            continue;
        }
        // Bounded as it is built: a line of 200,000 references to a 120 kB variable would be 24 GB.
        let t = expand(t, env, MAX_BYTES - out.expanded).map_err(|e| format!("{at}: {e}"))?;
        out.expanded += t.len() as u64;
        if let Some(file) = t.strip_prefix("include ") {
            let inc = PathBuf::from(file.trim());
            let inc = if inc.is_absolute() {
                inc
            } else {
                path.parent().unwrap_or(Path::new(".")).join(inc)
            };
            read_lines(&inc, env, depth + 1, out).map_err(|e| format!("{at}: include: {e}"))?;
            continue;
        }
        out.lines.push(Line { at, text: t });
    }
    Ok(())
}

/// The line without what follows its first `;` or `#`, as fio strips every line (parse.c
/// `strip_blank_end`), so `size=1m ; scratch` is `size=1m` and `filename=a#b` is `filename=a` (fio 3.33
/// opens `a`): a value cannot hold either character.
fn strip_comment(line: &str) -> &str {
    line.find([';', '#']).map_or(line, |i| &line[..i])
}

/// Options fio refuses bare ("requires an argument"): the file they name.
const NEEDS_VALUE: [&str; 2] = ["write_iolog", "read_iolog"];

/// fio's aliases of the options iolab reads (options.c, their `alias`), each read as the one name (so a
/// job's `readwrite` overrides a global `rw`).
const ALIASES: &[(&str, &str)] = &[
    ("readwrite", "rw"),
    ("blocksize", "bs"),
    ("blocksize_range", "bsrange"),
    ("io_limit", "io_size"),
    ("iodepth_batch", "iodepth_batch_submit"),
    ("timeout", "runtime"),
    ("fileoffset", "offset"),
    ("nr_files", "nrfiles"),
    ("allrandrepeat", "randrepeat"),
    ("wait_for_previous", "stonewall"),
];

/// `${VAR}` replaced by the environment's value; an unset variable is an error (fio would pass the text
/// on, and the option would then mean something else).
fn expand(t: &str, env: &dyn Fn(&str) -> Option<String>, room: u64) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = t;
    let too_big = || {
        format!(
            "the job file's lines come to more than {MAX_BYTES} bytes once their ${{VAR}}s are replaced; \
             iolab reads at most that many"
        )
    };
    while let Some(i) = rest.find("${") {
        if out.len() as u64 > room {
            return Err(too_big());
        }
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("'{}': '${{' without its '}}'", excerpt(t)))?;
        let var = &after[..end];
        let val = env(var)
            .ok_or_else(|| format!("${{{}}} is not set in the environment", excerpt(var)))?;
        out.push_str(&val);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    match out.len() as u64 > room {
        true => Err(too_big()),
        false => Ok(out),
    }
}

/// A text as a message shows it: whole up to 64 characters, else its start and its length.
fn excerpt(t: &str) -> String {
    match t.char_indices().nth(64) {
        None => t.to_string(),
        Some((i, _)) => format!("{}... ({} bytes)", &t[..i], t.len()),
    }
}

/// fio's rwmixwrite as the rwmixread it implies (the later of the two wins, as in fio).
fn canonical(k: &str, v: &str) -> Result<(String, String), String> {
    if k != "rwmixwrite" {
        return Ok((k.to_string(), v.to_string()));
    }
    match v.parse::<u64>() {
        Ok(w) if w <= 100 => Ok(("rwmixread".into(), (100 - w).to_string())),
        _ => Err(format!("rwmixwrite={v}: a percentage, 0 to 100")),
    }
}

/// The sections as jobs: `[global]` options are copied into each job that follows.
/// The most jobs fio takes from its job files (its REAL_MAX_JOBS): it stops at the next with "maximum
/// number of jobs (4096) reached".
pub(super) const FIO_MAX_JOBS: usize = 4096;

/// The most different options a section holds: fio has about 400 (a job copies its [global]'s, so a
/// section of more would be copied into each of 4,096 jobs).
const MAX_OPTIONS: usize = 512;

/// Sets `kv` in a section's options, where a later value of a key replaces the earlier one (as in fio):
/// each key once, at most [`MAX_OPTIONS`] of them.
fn set(opts: &mut Vec<(String, String)>, kv: (String, String), at: &At) -> Result<(), String> {
    if let Some(i) = opts.iter().position(|(k, _)| *k == kv.0) {
        opts.remove(i);
    } else if opts.len() == MAX_OPTIONS {
        return Err(format!(
            "{at}: more than {MAX_OPTIONS} different options in one section; fio has about 400"
        ));
    }
    opts.push(kv);
    Ok(())
}

/// The most bytes of options the jobs of a file hold in all, each job with its copy of its [global]'s
/// (a file of 4,096 jobs under a [global] of 1 KB holds 4 MiB).
const MAX_HELD: usize = 64 << 20;

fn held_err(at: &At) -> String {
    format!(
        "{at}: the jobs' options come to more than {} (each job holds its [global]'s: a long value \
         there is copied into every job); iolab holds at most that much",
        iolab_engine::units::fmt_size(MAX_HELD as u64)
    )
}

fn jobs_of(lines: &[Line]) -> Result<Vec<Job>, String> {
    let mut global: Vec<(String, String)> = Vec::new();
    let mut jobs: Vec<Job> = Vec::new();
    let mut names: std::collections::HashSet<&str> = std::collections::HashSet::new();
    // The bytes of the options the jobs hold (each its [global]'s and its own).
    let mut held = 0usize;
    let mut in_global = false;
    let mut kb = KbBase::default();
    for l in lines {
        if let Some(name) = l.text.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            if name.is_empty() || name.chars().any(char::is_control) {
                // fio refuses '[]' too ("option <[]> outside of [] job section").
                return Err(format!(
                    "{}: a section needs a name of printable characters, as in [write-job]",
                    l.at
                ));
            }
            if name != name.trim() {
                // fio keeps them: '[ global ]' is a job named ' global ', not the global section.
                return Err(format!(
                    "{}: spaces inside '[{name}]': fio reads the name with them ('[ global ]' is a job, not \
                     the global section); write [{}]",
                    l.at,
                    name.trim()
                ));
            }
            // fio reads every section whose name starts with "global" as the global one.
            in_global = name.starts_with("global");
            kb.open(in_global, name, &l.at.to_string())?;
            if !in_global {
                if !names.insert(name) {
                    return Err(format!("{}: job '{name}' appears twice", l.at));
                }
                if jobs.len() == FIO_MAX_JOBS {
                    return Err(format!(
                        "{}: job {} of the file: fio takes at most {FIO_MAX_JOBS} (\"maximum number of \
                         jobs ({FIO_MAX_JOBS}) reached\"), and so does iolab",
                        l.at,
                        FIO_MAX_JOBS + 1
                    ));
                }
                // Each job holds its [global]'s options: their bytes over all jobs are bounded.
                held += global.iter().map(|(k, v)| k.len() + v.len()).sum::<usize>();
                if held > MAX_HELD {
                    return Err(held_err(&l.at));
                }
                jobs.push(Job {
                    name: name.to_string(),
                    opts: global.clone(),
                });
            }
            continue;
        }
        let (k, v) = match l.text.split_once('=') {
            // fio 3.33 keeps the space after ` = ` in the value and then reads it otherwise (`io_size =
            // 512k` moves 4 KiB, `rw = randwrite` is refused): refused rather than read another way.
            Some((k, v)) if k.ends_with(char::is_whitespace) || v.starts_with(char::is_whitespace) => {
                return Err(format!(
                    "{}: spaces around '=' ('{}= ...'): fio 3.33 reads the value with its leading space, \
                     as another size or not at all; write key=value",
                    l.at,
                    k.trim()
                ))
            }
            Some((k, v)) => (k.trim(), v.trim()),
            // A bare key is a flag: fio reads it as set; an option naming a file needs its name.
            None if NEEDS_VALUE.contains(&l.text.as_str()) => {
                return Err(format!(
                    "{}: {} names a file: give {}=FILE (fio: \"requires an argument\")",
                    l.at, l.text, l.text
                ))
            }
            None => (l.text.as_str(), "1"),
        };
        // Not an option's name: said without echoing the line (an included file may be anything).
        if k.is_empty() || !k.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
            return Err(format!(
                "{}: not a fio option line (key=value, a bare key or [section])",
                l.at
            ));
        }
        let k = ALIASES
            .iter()
            .find(|(a, _)| *a == k)
            .map_or(k, |(_, to)| *to);
        let kv = canonical(k, v).map_err(|e| format!("{}: {e}", l.at))?;
        kb.option(k, v);
        held += kv.0.len() + kv.1.len();
        if held > MAX_HELD {
            return Err(held_err(&l.at));
        }
        match (in_global, jobs.last_mut()) {
            (true, _) => set(&mut global, kv, &l.at)?,
            (false, Some(j)) => set(&mut j.opts, kv, &l.at)?,
            (false, None) => {
                return Err(format!(
                "{}: '{k}' comes before any [section]; fio options belong to a job or to [global]",
                l.at
            ))
            }
        }
    }
    kb.close()?;
    if jobs.is_empty() {
        return Err("no job: the file has no [section] other than [global]".into());
    }
    Ok(jobs)
}

/// kb_base as fio applies it: a section's numbers with that section's kb_base (fio parses it first
/// whatever its place), a `[global]`'s kept for the sections after it. A job's numbers are read here with
/// its one kb_base, so a job whose `[global]` numbers fio read with another one is refused.
#[derive(Default)]
struct KbBase {
    /// The globals' kb_base so far (none: fio's 1024).
    global: Option<String>,
    /// The kb_bases `[global]` numbers with a unit (4k) were read with.
    used: Vec<String>,
    /// The section being read.
    section: Option<Section>,
}

struct Section {
    global: bool,
    name: String,
    at: String,
    /// Its own kb_base.
    own: Option<String>,
    /// Whether it has a number with a unit.
    units: bool,
}

impl KbBase {
    fn open(&mut self, global: bool, name: &str, at: &str) -> Result<(), String> {
        self.close()?;
        self.section = Some(Section {
            global,
            name: name.to_string(),
            at: at.to_string(),
            own: None,
            units: false,
        });
        Ok(())
    }

    fn option(&mut self, k: &str, v: &str) {
        let Some(s) = self.section.as_mut() else {
            return;
        };
        if k == "kb_base" {
            s.own = Some(v.to_string());
        } else {
            let b = v.as_bytes();
            s.units |= b
                .windows(2)
                .any(|w| w[0].is_ascii_digit() && b"kKmMgGtTpP".contains(&w[1]));
        }
    }

    fn close(&mut self) -> Result<(), String> {
        let Some(s) = self.section.take() else {
            return Ok(());
        };
        let kb = s
            .own
            .clone()
            .or(self.global.clone())
            .unwrap_or("1024".into());
        if s.global {
            if s.units {
                self.used.push(kb.clone());
            }
            self.global = Some(kb);
            return Ok(());
        }
        match self.used.iter().find(|u| **u != kb) {
            Some(other) => Err(format!(
                "{}: job '{}' has kb_base={kb}, but fio read the sizes of a [global] before it with kb_base={other} \
                 (fio reads each section's numbers with that section's kb_base): give kb_base once, in the first \
                 [global]",
                s.at, s.name
            )),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Vec<Job>, String> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("job.fio");
        std::fs::write(&p, text).unwrap();
        std::fs::write(dir.path().join("inc.fio"), "[included]\nrw=read\n").unwrap();
        parse_file(&p, env)
    }

    /// A bare option that names a file is refused, as fio refuses it ("requires an argument"), where
    /// a bare flag is set.
    #[test]
    fn a_bare_option_naming_a_file_is_refused() {
        let e = parse("[j]\nsize=64k\nwrite_iolog\n", &|_| None).unwrap_err();
        assert!(
            e.contains("write_iolog names a file: give write_iolog=FILE"),
            "{e}"
        );
        let j = parse("[j]\nwrite_iolog=1\ndirect\n", &|_| None).unwrap();
        assert_eq!(
            (j[0].get("write_iolog"), j[0].get("direct")),
            (Some("1"), Some("1"))
        );
    }

    /// A key set again replaces its value (as in fio), so a job holds each option once whatever its
    /// [global] repeats: 40,000 `bs=` lines copied into 1,000 jobs took 4.4 GB. A section of more
    /// different options than fio has is refused.
    #[test]
    fn a_key_set_again_is_held_once_and_a_section_has_a_bounded_number_of_options() {
        let none = |_: &str| None;
        let text = format!(
            "[global]\nrw=write\n{}bs=8k\n{}",
            "bs=4\n".repeat(40_000),
            (0..1000).map(|i| format!("[j{i}]\n")).collect::<String>()
        );
        let jobs = parse(&text, &none).unwrap();
        assert_eq!(jobs.len(), 1000);
        assert!(jobs.iter().all(|j| j.opts.len() == 2), "{:?}", jobs[0].opts);
        assert_eq!(jobs[999].get("bs"), Some("8k"));
        let many: String = (0..600).map(|i| format!("o{i}=1\n")).collect();
        let e = parse(&format!("[global]\n{many}[a]\n"), &none).unwrap_err();
        assert!(
            e.contains("more than 512 different options in one section"),
            "{e}"
        );
    }

    /// What the jobs hold of their [global]'s options is bounded in bytes: a 900 KB value copied into
    /// 4,096 jobs took 3.6 GB; a path of 4 KB is held once, not with each line.
    #[test]
    fn the_options_jobs_hold_are_bounded_in_bytes() {
        let none = |_: &str| None;
        let jobs: String = (0..4096).map(|i| format!("[j{i}]\n")).collect();
        let text = format!(
            "[global]\nrw=write\ndescription={}\n{jobs}",
            "d".repeat(900_000)
        );
        let e = parse(&text, &none).unwrap_err();
        assert!(
            e.contains("the jobs' options come to more than 64 MiB"),
            "{e}"
        );
        let text = format!(
            "[global]\nrw=write\ndescription={}\n{jobs}",
            "d".repeat(1000)
        );
        assert_eq!(parse(&text, &none).unwrap().len(), 4096);
    }

    #[test]
    fn globals_flags_comments_includes_and_variables() {
        let env = |v: &str| (v == "BS").then(|| "8k".to_string());
        let jobs = parse(
            "; a comment\n[global]\nioengine=psync\ndirect\n# more\n[a]\nbs=${BS}\nrw=randread\n\
             [global]\nioengine=libaio\n[b]\nbs=4k\ninclude inc.fio\n",
            &env,
        )
        .unwrap();
        let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "included"]);
        assert_eq!(jobs[0].get("ioengine"), Some("psync"));
        assert_eq!(jobs[0].get("direct"), Some("1"));
        assert_eq!(jobs[0].get("bs"), Some("8k"));
        assert_eq!(jobs[1].get("ioengine"), Some("libaio"));
        assert_eq!(jobs[2].get("rw"), Some("read"));
    }

    #[test]
    fn aliases_comments_and_the_mix_read_as_fio_reads_them() {
        let none = |_: &str| None;
        let jobs = parse(
            "\u{feff}[global]\nrw=randread\nbs=8k\nrwmixread=70\n[a]\nreadwrite=randwrite\nblocksize=16k ; big\n\
             rwmixwrite=10\nfilename=a#b\n[global2]\nsize=1m\n[b]\n",
            &none,
        )
        .unwrap();
        assert_eq!(jobs[0].get("rw"), Some("randwrite"));
        assert_eq!(jobs[0].get("bs"), Some("16k"));
        assert_eq!(jobs[0].get("rwmixread"), Some("90"));
        // fio ends a line at its first ';' or '#' (fio 3.33 opens 'a').
        assert_eq!(jobs[0].get("filename"), Some("a"));
        assert_eq!(jobs.len(), 2, "[global2] is a global section, as in fio");
        assert_eq!(jobs[1].get("size"), Some("1m"));
    }

    #[test]
    fn bad_files_say_where() {
        let none = |_: &str| None;
        for (text, says) in [
            ("bs=4k\n[a]\n", "before any [section]"),
            ("[a]\nbs=${NOPE}\n", "${NOPE} is not set"),
            ("[global]\nbs=4k\n", "no job"),
            ("[a]\n[a]\n", "appears twice"),
            ("[a]\ninclude missing.fio\n", "include"),
            ("[a]\nroot:x:0:0=1\n", "not a fio option line"),
            ("[a]\nrwmixwrite=150\n", "0 to 100"),
            ("[]\nsize=1m\n", "needs a name"),
            ("[a]\nio_size = 512k\n", "spaces around '='"),
            ("[ global ]\nsize=1m\n[a]\n", "spaces inside"),
            ("[global]\nsize=1m\n[a]\nkb_base=1000\n", "kb_base"),
            (
                "[global]\nkb_base=1000\nsize=1m\n[global]\nkb_base=1024\n[a]\n",
                "kb_base",
            ),
        ] {
            let e = parse(text, &none).unwrap_err();
            assert!(e.contains(says), "{text:?}: {e}");
        }
        // A long line or variable name is shown by its start and length, not whole.
        let long = "x".repeat(100_000);
        for text in [
            format!("[a]\nbs=${{{long}\n"),
            format!("[a]\nbs=${{{long}}}\n"),
        ] {
            let e = parse(&text, &none).unwrap_err();
            assert!(e.len() < 300 && e.contains("bytes)"), "{e}");
        }
    }

    #[test]
    fn a_kernel_interface_file_is_never_read_as_a_job_file_or_include() {
        let dir = tempfile::tempdir().unwrap();
        let job = dir.path().join("j.fio");
        std::fs::write(&job, "[a]\ninclude /proc/self/environ\n").unwrap();
        let none = |_: &str| None;
        let e = parse_file(&job, &none).unwrap_err();
        assert!(
            e.contains("/proc/self/environ is on procfs") && !e.contains('='),
            "{e}"
        );
        let e = parse_file(Path::new("/proc/self/status"), &none).unwrap_err();
        assert!(e.contains("on procfs"), "{e}");
    }

    #[test]
    fn includes_are_bounded_in_all_not_only_in_depth() {
        let none = |_: &str| None;
        let dir = tempfile::tempdir().unwrap();
        // Each file includes the next 20 times, 4 deep (within the depth limit): 20^4 opens unbounded.
        for (name, next) in [("a", "b"), ("b", "c"), ("c", "d")] {
            let text = format!("include {next}.fio\n").repeat(20);
            std::fs::write(dir.path().join(format!("{name}.fio")), text).unwrap();
        }
        std::fs::write(dir.path().join("d.fio"), "[x]\nrw=read\n").unwrap();
        let e = parse_file(&dir.path().join("a.fio"), &none).unwrap_err();
        assert!(e.contains(&format!("more than {MAX_FILES} files")), "{e}");
        // A file within the count but over the bytes in all: the second include of a 600 KiB file.
        let big = format!("[y]\n{}", "rw=read\n".repeat(600 * 1024 / 8));
        std::fs::write(dir.path().join("big.fio"), big).unwrap();
        std::fs::write(
            dir.path().join("two.fio"),
            "include big.fio\ninclude big.fio\n",
        )
        .unwrap();
        let e = parse_file(&dir.path().join("two.fio"), &none).unwrap_err();
        assert!(e.contains("the files before it took"), "{e}");
        // A small file whose lines name a large variable: bounded by what they come to once replaced.
        let var = "a".repeat(100_000);
        let env = |k: &str| (k == "BIG").then(|| var.clone());
        let lines = format!("[z]\nrw=read\n{}", "description=${BIG}\n".repeat(20));
        std::fs::write(dir.path().join("var.fio"), lines).unwrap();
        let e = parse_file(&dir.path().join("var.fio"), &env).unwrap_err();
        assert!(
            e.contains("once their ${VAR}s are replaced") && e.contains("var.fio:13"),
            "{e}"
        );
        // One line of 100,000 references (10 GB replaced) stops at the reference that passes the bound.
        let looked = std::cell::Cell::new(0);
        let env = |k: &str| {
            looked.set(looked.get() + 1);
            (k == "BIG").then(|| var.clone())
        };
        let line = format!("[z]\nrw=read\ndescription={}\n", "${BIG}".repeat(100_000));
        std::fs::write(dir.path().join("bomb.fio"), line).unwrap();
        let e = parse_file(&dir.path().join("bomb.fio"), &env).unwrap_err();
        assert!(
            e.contains("once their ${VAR}s are replaced") && e.contains("bomb.fio:3"),
            "{e}"
        );
        assert!(looked.get() <= 12, "{} lookups", looked.get());
        // One include of it is read.
        std::fs::write(dir.path().join("one.fio"), "include big.fio\n").unwrap();
        assert_eq!(
            parse_file(&dir.path().join("one.fio"), &none)
                .unwrap()
                .len(),
            1
        );
    }

    #[test]
    fn fios_aliases_and_kb_base_per_section() {
        let none = |_: &str| None;
        let jobs = parse(
            "[global]\nkb_base=1000\nsize=1m\n[a]\ntimeout=5\nfileoffset=4k\nblocksize_range=4k-4k\n\
             nr_files=1\nallrandrepeat=1\nwait_for_previous\nkb_base=1000\n[global]\nioengine=null\n[b]\n\
             bs=4k\n",
            &none,
        )
        .unwrap();
        let a = &jobs[0];
        for (k, v) in [
            ("runtime", "5"),
            ("offset", "4k"),
            ("bsrange", "4k-4k"),
            ("nrfiles", "1"),
            ("randrepeat", "1"),
            ("stonewall", "1"),
        ] {
            assert_eq!(a.get(k), Some(v), "{k}");
        }
        assert_eq!(jobs[1].get("kb_base"), Some("1000"));
    }
}
