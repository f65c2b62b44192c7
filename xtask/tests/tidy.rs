//! The tidy checks on the workspace itself (see xtask/src/lib.rs).

use std::path::Path;
use xtask::{layers, modgraph, rust_files, sizes, workspace_root};

const MAX_FN_LINES: usize = 150;
const MAX_FILE_LINES: usize = 900;
/// Places outside `method/` that may spell a method's variant (`MethodKind::X`): the parsing of names
/// and a few facts that are about one method by nature.
const MAX_METHOD_KIND_OUTSIDE: usize = 5;

#[test]
fn crates_depend_only_on_layers_below_them() {
    let ms = layers::members(&workspace_root()).unwrap();
    let bad = layers::upward(&ms);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The crate roots of every workspace member: `src/lib.rs` and `src/main.rs`.
fn crate_roots() -> Vec<std::path::PathBuf> {
    let ms = layers::members(&workspace_root()).unwrap();
    let mut roots = vec![];
    for m in ms {
        for f in ["src/lib.rs", "src/main.rs"] {
            let p = m.dir.join(f);
            if p.exists() {
                roots.push(p);
            }
        }
    }
    roots
}

#[test]
fn no_module_of_any_crate_is_in_an_import_cycle() {
    let root = workspace_root();
    let mut msgs = vec![];
    for r in crate_roots() {
        let g = modgraph::read_crate(&r).unwrap();
        for c in g.cycles() {
            msgs.push(format!(
                "a cycle of {} files:\n{}",
                c.len(),
                g.describe(&c, &root)
            ));
        }
    }
    assert!(msgs.is_empty(), "{}", msgs.join("\n"));
}

/// Every source file a crate of the workspace compiles outside its tests (files declared under
/// `#[cfg(test)]` left out), and this crate's own.
fn sources() -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = crate_roots()
        .iter()
        .flat_map(|r| modgraph::read_crate(r).unwrap().files)
        .collect();
    v.extend(rust_files(&workspace_root().join("xtask/src")));
    v
}

fn rel(p: &Path) -> String {
    p.strip_prefix(workspace_root())
        .unwrap_or(p)
        .display()
        .to_string()
}

#[test]
fn functions_and_files_are_short_enough_to_read() {
    let mut bad = vec![];
    for f in sources() {
        let facts = sizes::facts(&f).unwrap();
        if facts.lines > MAX_FILE_LINES {
            bad.push(format!("{}: {} lines (tests aside)", rel(&f), facts.lines));
        }
        for s in facts.functions.iter().filter(|s| s.lines > MAX_FN_LINES) {
            bad.push(format!(
                "{}:{} fn {}: {} lines",
                rel(&f),
                s.line,
                s.name,
                s.lines
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "over {MAX_FN_LINES} lines a function or {MAX_FILE_LINES} a file:\n{}",
        bad.join("\n")
    );
}

#[test]
fn methods_are_named_through_the_registry_outside_method() {
    let mut places = vec![];
    for f in sources() {
        let r = rel(&f);
        if r.contains("/method/") {
            continue;
        }
        for line in sizes::facts(&f).unwrap().method_kind_paths {
            places.push(format!("{r}:{line}"));
        }
    }
    assert!(
        places.len() <= MAX_METHOD_KIND_OUTSIDE,
        "MethodKind::X outside method/ in {} places (at most {MAX_METHOD_KIND_OUTSIDE}):\n{}",
        places.len(),
        places.join("\n")
    );
}

/// The names the registry gives the methods: the `name` of each `MethodInfo` declared in `method/`.
fn method_names() -> Vec<String> {
    let dir = workspace_root().join("crates/iolab-engine/src/method");
    let mut names = vec![];
    for f in rust_files(&dir) {
        let text = std::fs::read_to_string(&f).unwrap();
        for (at, _) in text.match_indices(": MethodInfo = MethodInfo {") {
            // This entry's own fields only (a base entry others start from may name none).
            let body = &text[at..];
            let body = &body[..body.find("\n};").unwrap_or(body.len())];
            if let Some(n) = body.find("\n    name: \"").map(|n| n + 12) {
                names.push(body[n..n + body[n..].find('"').unwrap()].to_string());
            }
        }
    }
    // `MethodInfo::PLAIN`, the defaults a method's entry starts from, names none.
    names.retain(|n| !n.is_empty());
    names.sort();
    names.dedup();
    names
}

/// Literals outside `method/` that are spelled like a method and name something else: (a file's path
/// ending, the word, what it names there). The sys layer (syscall names) is not read.
const NOT_A_METHOD: &[(&str, &str, &str)] = &[
    (
        "iolab-engine/src/spec/options.rs",
        "vectored",
        "the --vectored option",
    ),
    (
        "iolab-engine/src/spec/options.rs",
        "psync",
        "--method's default in the help (a unit test holds it to resolve's)",
    ),
    (
        "iolab-lab/src/probe.rs",
        "vectored",
        "the --vectored option",
    ),
    (
        "iolab-engine/src/resolve/ring_opts.rs",
        "vectored",
        "the --vectored option",
    ),
    (
        "iolab-engine/src/spec/rw_flags.rs",
        "sync",
        "RWF_SYNC's word",
    ),
    (
        "iolab-engine/src/measure/counters.rs",
        "mmap",
        "the mmap(2) syscall",
    ),
    (
        "iolab-engine/src/error.rs",
        "io_uring",
        "the io_uring_setup call's short name",
    ),
    (
        "iolab-lab/src/probe.rs",
        "sync",
        "the probe's execution kind",
    ),
    (
        "iolab-lab/src/compare_workload.rs",
        "offload",
        "the result's offload section",
    ),
    (
        "iolab-lab/src/series/prune.rs",
        "offload",
        "the result's offload section",
    ),
    (
        "iolab-lab/src/suite/file.rs",
        "offload",
        "the offload suite's name",
    ),
    (
        "iolab-report/src/fields.rs",
        "offload",
        "the result's offload section",
    ),
    (
        "iolab-report/src/suite_nop.rs",
        "offload",
        "the result's offload section",
    ),
    (
        "iolab-report/src/suite_cols.rs",
        "mmap",
        "the mmap(2) syscall",
    ),
    (
        "iolab-report/src/run_text.rs",
        "io_uring",
        "the text's io_uring line",
    ),
    (
        "iolab-report/src/fio_json/entry.rs",
        "sync",
        "fio's JSON sync section",
    ),
    (
        "iolab-report/src/fio_log.rs",
        "sync",
        "fio's I/O log's sync entry",
    ),
    ("iolab/src/cmd_bench.rs", "nop", "the bench nop command"),
    (
        "iolab/src/cmd_bench.rs",
        "offload",
        "the bench offload command",
    ),
];

/// The registry is the one list of methods: outside `method/`, code names a method through its entry
/// (`psync::INFO.name`, `is(r, &io_uring::INFO)`) or asks it what the method does (`info().exec`), never
/// by a string of its name, so that a renamed or added method cannot leave a list behind.
#[test]
fn no_method_name_is_written_out_outside_method() {
    let names = method_names();
    assert!(names.len() >= 15, "the registry's names: {names:?}");
    let mut places = vec![];
    for f in sources() {
        let r = rel(&f);
        if r.contains("/method/") || r.starts_with("crates/iolab-sys/") || r.starts_with("xtask/") {
            continue;
        }
        for (line, lit) in sizes::facts(&f).unwrap().str_literals {
            let allowed = NOT_A_METHOD
                .iter()
                .any(|(p, w, _)| r.ends_with(p) && *w == lit);
            if names.contains(&lit) && !allowed {
                places.push(format!("{r}:{line}: \"{lit}\""));
            }
        }
    }
    assert!(
        places.is_empty(),
        "a method's name written out in {} places (name it through its registry entry):\n{}",
        places.len(),
        places.join("\n")
    );
}

/// Every skip of an integration test goes through `tests/common`'s `skip(feature, why)`, which turns it
/// into a failure where CI's machine has the feature (IOLAB_EXPECT) and lists it after the tests: no test
/// prints its own `SKIPPED` (in any case), and each feature a call names is one of `FEATURES`, however
/// rustfmt wrapped the call.
#[test]
fn integration_tests_skip_only_through_the_common_skip() {
    let dir = workspace_root().join("crates/iolab/tests");
    let common = std::fs::read_to_string(dir.join("common/mod.rs")).unwrap();
    let table = &common[common
        .find("pub const FEATURES")
        .expect("FEATURES in tests/common")..];
    let table = &table[..table.find("];").unwrap()];
    // Each entry opens with `(` and its name: `("root", ...)`, or wrapped, `(\n "root",\n ...)`.
    let names: Vec<&str> = table
        .split('(')
        .skip(1)
        .filter_map(|e| e.trim_start().strip_prefix('"')?.split('"').next())
        .collect();
    assert!(names.len() > 20 && names.contains(&"root"), "{names:?}");
    let mut bad = vec![];
    for f in rust_files(&dir) {
        let text = std::fs::read_to_string(&f).unwrap();
        let is_common = f.ends_with("common/mod.rs");
        let at = |i: usize| format!("{}:{}", rel(&f), i + 1);
        // The code without its comments, each line kept in its place.
        let code: Vec<&str> = text
            .lines()
            .map(|l| match l.trim_start().starts_with("//") {
                true => "",
                false => l,
            })
            .collect();
        for (i, line) in code.iter().enumerate() {
            // A test of the skip itself looks for the line (`contains("SKIPPED ...")`).
            let prints =
                line.to_ascii_lowercase().contains("\"skipped") && !line.contains("contains(");
            if prints && !(is_common && line.contains("println!(\"SKIPPED {feature}")) {
                bad.push(format!(
                    "{}: prints SKIPPED itself (use common::skip)",
                    at(i)
                ));
            }
        }
        let joined = code.join("\n");
        for (pos, _) in joined.match_indices("skip(") {
            if joined[..pos].ends_with(|c: char| c == '.' || c == '_' || c.is_alphanumeric()) {
                continue;
            }
            let rest = joined[pos + "skip(".len()..].trim_start();
            let Some(lit) = rest.strip_prefix('"') else {
                continue;
            };
            let feature = &lit[..lit.find('"').unwrap_or(0)];
            if !names.contains(&feature) {
                let line = joined[..pos].matches('\n').count();
                bad.push(format!(
                    "{}: skip(\"{feature}\"): not in FEATURES",
                    at(line)
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The top-level modules of each crate (its folders and the files beside its root) form layers: no
/// circle of them names each other, whatever the files inside do.
#[test]
fn no_folder_of_any_crate_is_in_an_import_cycle() {
    let root = workspace_root();
    let mut msgs = vec![];
    for r in crate_roots() {
        let g = modgraph::read_crate(&r)
            .unwrap()
            .folders(r.parent().unwrap());
        for c in g.cycles() {
            msgs.push(format!(
                "a cycle of {} folders:\n{}",
                c.len(),
                g.describe(&c, &root)
            ));
        }
    }
    assert!(msgs.is_empty(), "{}", msgs.join("\n"));
}

/// ARCHITECTURE.md's code map names every top-level module of each crate (`name`, `name.rs` or `name/`)
/// in that crate's section: a module added is placed in the map with it.
#[test]
fn the_code_map_names_every_top_level_module() {
    let root = workspace_root();
    let map = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let mut missing = vec![];
    for r in crate_roots() {
        let src = r.parent().unwrap();
        let krate = src.parent().unwrap().file_name().unwrap().to_string_lossy();
        let head = format!("### `crates/{krate}`");
        let at = map
            .find(&head)
            .unwrap_or_else(|| panic!("no section {head}"));
        let section = &map[at + head.len()..];
        let section = &section[..section.find("\n### ").unwrap_or(section.len())];
        let g = modgraph::read_crate(&r).unwrap().folders(src);
        for f in &g.files {
            let name = f.file_name().unwrap().to_string_lossy();
            let named = [
                format!("`{name}`"),
                format!("`{name}.rs`"),
                format!("`{name}/`"),
            ]
            .iter()
            .any(|n| section.contains(n.as_str()));
            if !named {
                missing.push(format!("{krate}: {name}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "not in ARCHITECTURE.md's code map:\n{}",
        missing.join("\n")
    );
}
