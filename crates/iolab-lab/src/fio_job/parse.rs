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

/// The jobs of the job file at `path`, `env` giving `${VAR}`s.
pub fn parse_file(path: &Path, env: &dyn Fn(&str) -> Option<String>) -> Result<Vec<Job>, String> {
    let mut lines = Vec::new();
    read_lines(path, env, 0, &mut lines)?;
    jobs_of(&lines)
}

/// A line of the file after includes and expansion, with where it came from (for messages).
struct Line {
    at: String,
    text: String,
}

fn read_lines(
    path: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    depth: usize,
    out: &mut Vec<Line>,
) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(format!(
            "{}: includes nest deeper than {MAX_DEPTH} (an include loop?)",
            path.display()
        ));
    }
    let text = iolab_engine::input::read_text(
        path,
        "--fio",
        "fio job file",
        iolab_engine::input::SMALL_INPUT,
    )
    .map_err(|e| e.to_string())?;
    for (i, raw) in text.lines().enumerate() {
        let at = format!("{}:{}", path.display(), i + 1);
        let t = raw.trim();
        if t.is_empty() || t.starts_with(';') || t.starts_with('#') {
            continue;
        }
        let t = expand(t, env).map_err(|e| format!("{at}: {e}"))?;
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
        out.push(Line { at, text: t });
    }
    Ok(())
}

/// `${VAR}` replaced by the environment's value; an unset variable is an error (fio would pass the text
/// on, and the option would then mean something else).
fn expand(t: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = t;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("'{t}': '${{' without its '}}'"))?;
        let var = &after[..end];
        let val = env(var).ok_or_else(|| format!("${{{var}}} is not set in the environment"))?;
        out.push_str(&val);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The sections as jobs: `[global]` options are copied into each job that follows.
fn jobs_of(lines: &[Line]) -> Result<Vec<Job>, String> {
    let mut global: Vec<(String, String)> = Vec::new();
    let mut jobs: Vec<Job> = Vec::new();
    let mut in_global = false;
    for l in lines {
        if let Some(name) = l.text.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            let name = name.trim();
            in_global = name == "global";
            if !in_global {
                if jobs.iter().any(|j| j.name == name) {
                    return Err(format!("{}: job '{name}' appears twice", l.at));
                }
                jobs.push(Job {
                    name: name.to_string(),
                    opts: global.clone(),
                });
            }
            continue;
        }
        let (k, v) = match l.text.split_once('=') {
            Some((k, v)) => (k.trim(), v.trim()),
            // A bare key is a flag: fio reads it as set.
            None => (l.text.as_str(), "1"),
        };
        let kv = (k.to_string(), v.to_string());
        match (in_global, jobs.last_mut()) {
            (true, _) => global.push(kv),
            (false, Some(j)) => j.opts.push(kv),
            (false, None) => {
                return Err(format!(
                "{}: '{k}' comes before any [section]; fio options belong to a job or to [global]",
                l.at
            ))
            }
        }
    }
    if jobs.is_empty() {
        return Err("no job: the file has no [section] other than [global]".into());
    }
    Ok(jobs)
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
    fn bad_files_say_where() {
        let none = |_: &str| None;
        for (text, says) in [
            ("bs=4k\n[a]\n", "before any [section]"),
            ("[a]\nbs=${NOPE}\n", "${NOPE} is not set"),
            ("[global]\nbs=4k\n", "no job"),
            ("[a]\n[a]\n", "appears twice"),
            ("[a]\ninclude missing.fio\n", "include"),
        ] {
            let e = parse(text, &none).unwrap_err();
            assert!(e.contains(says), "{text:?}: {e}");
        }
    }
}
