//! `cargo run -p xtask -- graph [CRATE_DIR...]`: every arrow between the files of each crate (a file ->
//! the files whose modules it names, with the names), then its cycles. The tidy tests check the same.

use std::path::PathBuf;
use xtask::{layers, modgraph, workspace_root};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) != Some("graph") {
        eprintln!("usage: cargo run -p xtask -- graph [CRATE_DIR...]");
        std::process::exit(2);
    }
    let root = workspace_root();
    let dirs: Vec<PathBuf> = if args.len() > 1 {
        args[1..].iter().map(PathBuf::from).collect()
    } else {
        layers::members(&root)
            .unwrap_or_default()
            .into_iter()
            .map(|m| m.dir)
            .collect()
    };
    for d in dirs {
        for f in ["src/lib.rs", "src/main.rs"] {
            let r = d.join(f);
            if r.exists() {
                print_graph(&r, &root);
            }
        }
    }
}

fn print_graph(crate_root: &std::path::Path, base: &std::path::Path) {
    let g = match modgraph::read_crate(crate_root) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let name = |i: usize| {
        g.files[i]
            .strip_prefix(base)
            .unwrap_or(&g.files[i])
            .display()
            .to_string()
    };
    println!("# {}", name(0));
    for (a, tos) in &g.edges {
        for (b, names) in tos {
            let n: Vec<&str> = names.iter().map(String::as_str).collect();
            println!("{} -> {}: {}", name(*a), name(*b), n.join(", "));
        }
    }
    for c in g.cycles() {
        let names: Vec<String> = c.iter().map(|&i| name(i)).collect();
        println!("cycle of {}: {}", c.len(), names.join(" "));
    }
}
