//! Where a fio job's file is: `filename` and `directory` as fio joins them, or the name fio makes from
//! `filename_format`.

use super::ctx::{set, Ctx, Mapped};

/// filename and directory as fio joins them (directory/filename; the job's name.0.0 without a filename);
/// a path is always a file to iolab, never its stream words (tcp, pipe, socketpair). Returns the file's
/// name as fio writes it in an I/O log (`{thread}` standing for each clone's number).
pub(super) fn target(j: &Ctx, m: &mut Mapped) -> Result<String, String> {
    // iolab's per-thread placeholder in fio's text would name a file per thread where fio names one.
    let token = iolab_engine::target::per_thread::THREAD_TOKEN;
    for (what, text) in [
        ("filename", j.get("filename")),
        ("directory", j.get("directory")),
        ("filename_format", j.get("filename_format")),
        ("the job's name", Some(j.job.name.as_str())),
    ] {
        if text.is_some_and(|t| t.contains(token)) {
            return Err(format!(
                "{what} holds {token}, which iolab reads as its own per-thread file name (fio keeps it as \
                 written): rename it"
            ));
        }
    }
    let dir = match j.get("directory") {
        Some("") => return Err("directory= is empty: give a directory, or leave it out".into()),
        Some(d) if d.contains(':') => {
            return Err(format!(
                "directory={d}: iolab runs one file per job, in one directory"
            ))
        }
        d => d.map(|d| d.trim_end_matches('/').to_string()),
    };
    let name =
        match j.get("filename") {
            Some(f) if f.contains(':') => {
                return Err(format!("filename={f}: iolab runs one file per job"))
            }
            Some("") => return Err("filename= is empty: give a file, or leave it out".into()),
            Some("-") => return Err(
                "filename=-: fio reads standard input or writes standard output; iolab runs files \
                 (give a path)"
                    .into(),
            ),
            Some(f) => f.to_string(),
            None => formatted_name(j, dir.as_deref())?,
        };
    // fio puts every filename under the directory, an absolute one too (directory=D filename=/dev/x is
    // the file D/dev/x).
    let (path, fio_name) = match dir {
        Some(d) => {
            let p = format!(
                "{}/{}",
                if d.is_empty() { "" } else { &d },
                name.trim_start_matches('/')
            );
            (p.clone(), p)
        }
        None if !name.contains('/') => (format!("./{name}"), name),
        None => (name.clone(), name),
    };
    set(m, "target", path);
    Ok(fio_name)
}

/// fio's filename_format keywords, as its make_filename replaces them.
const KEYWORDS: [&str; 4] = ["$jobname", "$jobnum", "$filenum", "$clientuid"];

/// The file fio names a job's clone without a filename: `filename_format` (fio's default
/// `$jobname.$jobnum.$filenum`) with its keywords replaced in any case, as fio's make_filename does:
/// $jobnum each clone's number (a thread's own file, `{thread}`), $filenum 0 (one file a job),
/// $clientuid empty (fio's client/server mode only). Clones whose format gives them all one name are
/// refused unless it names something other than a regular file (under `dir`): fio's add_file gives a
/// clone a regular file's name a sibling already took no file at all, so all but the first do nothing.
fn formatted_name(j: &Ctx, dir: Option<&str>) -> Result<String, String> {
    let format = match j.get("filename_format") {
        Some("") => return Err("filename_format= is empty: give a format, or leave it out".into()),
        Some(f) => f,
        None => "$jobname.$jobnum.$filenum",
    };
    let lower = |t: &str| t.to_ascii_lowercase();
    if lower(format).contains("$jobname") {
        if let Some(k) = KEYWORDS.iter().find(|k| lower(&j.job.name).contains(*k)) {
            return Err(format!(
                "the job's name [{}] holds {k}, which fio's file naming replaces again in the name it has \
                 just put in (fio 3.33 crashes on it): rename the job, or give filename=",
                j.job.name
            ));
        }
    }
    let clones = j.count("numjobs")?.unwrap_or(1) > 1;
    let jobnum = if clones { "{thread}" } else { "0" };
    let name = replace_keywords(format, &j.job.name, jobnum);
    if name.is_empty() || name.ends_with('/') {
        return Err(format!(
            "filename_format={format} names no file (it gives \"{name}\")"
        ));
    }
    let at = match dir {
        Some(d) => format!("{d}/{}", name.trim_start_matches('/')),
        None => name.clone(),
    };
    let special = std::fs::metadata(&at).is_ok_and(|m| !m.is_file());
    if clones && !name.contains("{thread}") && !special {
        return Err(format!(
            "filename_format={format} with numjobs: without $jobnum every clone gets one name, and fio gives \
             a clone whose regular file a sibling took no file (its clones after the first do nothing); \
             iolab does not run idle clones: add $jobnum, or give filename= for a file they all work"
        ));
    }
    Ok(name)
}

/// `format` with each of fio's [`KEYWORDS`] (any case) replaced, in one pass over it.
fn replace_keywords(format: &str, jobname: &str, jobnum: &str) -> String {
    let (mut out, mut rest) = (String::new(), format);
    'scan: while !rest.is_empty() {
        for (k, with) in KEYWORDS.iter().zip([jobname, jobnum, "0", ""]) {
            if rest.len() >= k.len()
                && rest.is_char_boundary(k.len())
                && rest[..k.len()].eq_ignore_ascii_case(k)
            {
                out.push_str(with);
                rest = &rest[k.len()..];
                continue 'scan;
            }
        }
        let c = rest.chars().next().expect("not empty");
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::map::map;
    use super::super::map::tests::{job, maps_to};

    /// fio text holding iolab's `{thread}`, and a job name holding a keyword the file naming replaces,
    /// are refused by name (the second made the naming loop for ever; fio 3.33 crashes on it).
    #[test]
    fn file_names_fio_would_not_make_are_refused() {
        let named = |name: &str, opts: &[(&str, &str)]| {
            let mut j = job(opts);
            j.name = name.into();
            map(&j, false)
        };
        let e = named("x$JOBNAME", &[("size", "1m")]).unwrap_err();
        assert!(e.contains("[x$JOBNAME] holds $jobname"), "{e}");
        let e = named("j{thread}", &[("size", "1m")]).unwrap_err();
        assert!(e.contains("the job's name holds {thread}"), "{e}");
        for (k, v) in [
            ("filename", "f{thread}"),
            ("filename_format", "f{thread}.$jobnum"),
            ("directory", "/tmp/{thread}"),
        ] {
            let e = named("j", &[("size", "1m"), ("numjobs", "2"), (k, v)]).unwrap_err();
            assert!(e.contains(&format!("{k} holds {{thread}}")), "{e}");
        }
        // A keyword in the name is fine where the format does not put the name in.
        assert!(named(
            "x$jobnum",
            &[("size", "1m"), ("filename_format", "f.$jobnum")]
        )
        .is_ok());
    }

    #[test]
    fn keywords_are_replaced_in_one_pass_in_any_case() {
        assert_eq!(
            super::replace_keywords("$JOBNUM$jobname$x$filenum", "a$jobname", "{thread}"),
            "{thread}a$jobname$x0"
        );
        maps_to(
            &[("size", "1m"), ("filename_format", "F.$FileNum")],
            &[("target", "./F.0")],
        );
    }
}
