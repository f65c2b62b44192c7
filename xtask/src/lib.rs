//! iolab's tidy checks, run as tests (`tests/tidy.rs`) by `cargo test --workspace`: the crates' layers
//! (dependencies pointing down, no import cycle between the modules of any crate), the size of functions
//! and files, and where a method's variant name may be spelled out.
#![deny(unsafe_code)]

pub mod layers;
pub mod modgraph;
pub mod sizes;

use std::path::{Path, PathBuf};

/// The workspace's root folder (this crate's parent).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits in the workspace root")
        .to_path_buf()
}

/// Every `.rs` file under `dir`, sorted, leaving out `tests/`, `benches/` and `target/` folders.
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let name = e.file_name();
            if p.is_dir() {
                if !matches!(
                    name.to_str(),
                    Some("tests" | "benches" | "target" | "examples")
                ) {
                    todo.push(p);
                }
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
