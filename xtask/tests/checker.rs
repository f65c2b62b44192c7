//! The checkers themselves find what they look for, on small made-up crates.

use std::fs;
use xtask::{layers, modgraph, sizes};

fn tree(files: &[(&str, &str)]) -> tempdir::Dir {
    let d = tempdir::Dir::new();
    for (p, text) in files {
        let path = d.0.join(p);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    d
}

mod tempdir {
    pub struct Dir(pub std::path::PathBuf);
    impl Dir {
        pub fn new() -> Dir {
            use std::sync::atomic::{AtomicU32, Ordering};
            static N: AtomicU32 = AtomicU32::new(0);
            let p = std::env::temp_dir().join(format!(
                "xtask-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir_all(&p).unwrap();
            Dir(p)
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

#[test]
fn a_cycle_between_two_files_is_found_with_the_names_that_tie_it() {
    let d = tree(&[
        ("src/lib.rs", "mod a;\nmod b;\n"),
        ("src/a.rs", "use crate::b::B;\npub struct A;\n"),
        (
            "src/b.rs",
            "pub struct B;\nfn f() { let _ = crate::a::A; }\n",
        ),
    ]);
    let g = modgraph::read_crate(&d.0.join("src/lib.rs")).unwrap();
    let c = g.cycles();
    assert_eq!(c.len(), 1, "{c:?}");
    let text = g.describe(&c[0], &d.0);
    assert!(text.contains("src/a.rs -> src/b.rs: B"), "{text}");
    assert!(text.contains("src/b.rs -> src/a.rs: A"), "{text}");
}

#[test]
fn a_folder_whose_mod_rs_reexports_a_child_that_uses_the_folder_is_a_cycle() {
    let d = tree(&[
        ("src/lib.rs", "pub mod f;\n"),
        (
            "src/f/mod.rs",
            "mod x;\nmod y;\npub use x::X;\npub use y::g;\n",
        ),
        ("src/f/x.rs", "pub struct X;\n"),
        (
            "src/f/y.rs",
            "pub fn g() { format!(\"{:?}\", super::X); }\n",
        ),
    ]);
    let g = modgraph::read_crate(&d.0.join("src/lib.rs")).unwrap();
    assert_eq!(g.cycles().len(), 1);
}

#[test]
fn layered_files_and_test_only_uses_make_no_cycle() {
    let d = tree(&[
        ("src/lib.rs", "mod a;\nmod b;\n"),
        ("src/a.rs", "use crate::b::B;\npub struct A;\n"),
        (
            "src/b.rs",
            "pub struct B;\n#[cfg(test)]\nmod tests { use crate::a::A; }\n",
        ),
    ]);
    let g = modgraph::read_crate(&d.0.join("src/lib.rs")).unwrap();
    assert!(g.cycles().is_empty());
    assert_eq!(g.edges.len(), 1, "a -> b only: {:?}", g.edges);
}

#[test]
fn an_upward_dependency_and_an_unplaced_crate_are_named() {
    let ms = vec![
        layers::Member {
            name: "iolab-engine".into(),
            dir: ".".into(),
            deps: vec!["iolab-lab".into()],
        },
        layers::Member {
            name: "iolab-extra".into(),
            dir: ".".into(),
            deps: vec![],
        },
        layers::Member {
            name: "iolab".into(),
            dir: ".".into(),
            deps: vec!["iolab-sys".into()],
        },
    ];
    let bad = layers::upward(&ms);
    assert_eq!(bad.len(), 2, "{bad:?}");
    assert!(bad[0].contains("iolab-engine depends on iolab-lab"));
    assert!(bad[1].contains("iolab-extra is in no layer"));
}

#[test]
fn long_functions_count_their_lines_and_test_code_is_left_out() {
    let body = "    let _x = 1;\n".repeat(10);
    let d = tree(&[(
        "src/lib.rs",
        &format!(
            "fn f() {{\n{body}}}\nfn g() {{ let _ = MethodKind::Psync; }}\n#[cfg(test)]\nmod tests {{\nfn t() {{\n{body}}}\n}}\n"
        ),
    )]);
    let f = sizes::facts(&d.0.join("src/lib.rs")).unwrap();
    assert_eq!(f.functions[0].name, "f");
    assert_eq!(f.functions[0].lines, 12);
    assert_eq!(f.lines, 13, "the test module's 14 lines are left out");
    assert_eq!(f.method_kind_paths, vec![13]);
}
