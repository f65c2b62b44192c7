//! `iolab completions` and `iolab man`: generated from the parser's own command definition.

mod common;
use common::*;

#[test]
fn completions_name_the_commands_and_flags_for_each_shell() {
    for shell in ["bash", "zsh", "fish"] {
        let r = iolab(&["completions", shell]);
        assert_eq!(r.code, 0, "{shell}: {}", r.stderr);
        for word in [
            "sweep",
            "clean",
            "allow-device-writes",
            "sq-idle-ms",
            "fail-on-regression",
        ] {
            assert!(r.stdout.contains(word), "{shell} completion lacks {word}");
        }
    }
    let bad = iolab(&["completions", "tcsh"]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("tcsh") && bad.stderr.contains("bash"),
        "{}",
        bad.stderr
    );
}

#[test]
fn man_pages_cover_every_command_and_never_replace_a_file() {
    let r = iolab(&["man"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains(".TH iolab 1"),
        "{}",
        &r.stdout[..r.stdout.len().min(300)]
    );
    let dir = tmpfs_dir();
    let d = dir.path().join("man1");
    let r = iolab(&["man", "--dir", &path_str(&d)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let run = std::fs::read_to_string(d.join("iolab-run.1")).unwrap();
    assert!(
        run.contains(".TH iolab-run 1") && run.contains("qd"),
        "the run page lists its flags"
    );
    for c in [
        "survey", "sweep", "suite", "compare", "report", "clean", "probe", "bench",
    ] {
        assert!(d.join(format!("iolab-{c}.1")).is_file(), "iolab-{c}.1");
    }
    // A second time: every page exists, none is replaced.
    std::fs::write(d.join("iolab-run.1"), "mine").unwrap();
    let again = iolab(&["man", "--dir", &path_str(&d)]);
    assert_eq!(again.code, 2, "{}", again.stderr);
    assert!(
        again.stderr.starts_with("iolab: --dir:"),
        "{}",
        again.stderr
    );
    assert_eq!(
        std::fs::read_to_string(d.join("iolab-run.1")).unwrap(),
        "mine"
    );
}

#[test]
fn the_seed_is_written_as_text_beside_the_number() {
    // 2^64 - 1: a double would read it as 18446744073709551616.
    let r = iolab(&[
        "run",
        "--ops",
        "10",
        "--count",
        "none",
        "--seed",
        "18446744073709551615",
        "--json",
        "-",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["spec"]["seed"].as_u64(), Some(u64::MAX));
    assert_eq!(v["spec"]["seed_text"], "18446744073709551615");
    // What a double-based reader sees of the number, and of the text.
    let as_double: f64 = v["spec"]["seed"].as_f64().unwrap();
    assert_ne!(format!("{as_double:.0}"), "18446744073709551615");
}
