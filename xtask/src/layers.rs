//! The crates' order: each workspace crate may depend only on crates below it in [`LAYERS`].

use std::path::Path;

/// From the bottom up. A crate of the workspace missing from this list fails the check, so a new crate
/// is placed on purpose.
pub const LAYERS: &[&str] = &[
    "iolab-sys",
    "iolab-engine",
    "iolab-guest",
    "iolab-lab",
    "iolab-report",
    "iolab",
];

/// A workspace crate: its name, its folder, and the workspace crates it depends on (dev-dependencies
/// aside: tests may use any layer).
#[derive(Debug)]
pub struct Member {
    pub name: String,
    pub dir: std::path::PathBuf,
    pub deps: Vec<String>,
}

/// The members of the workspace at `root` (read from each crate's Cargo.toml), `xtask` left out.
pub fn members(root: &Path) -> Result<Vec<Member>, String> {
    let top: toml::Table = read_toml(&root.join("Cargo.toml"))?;
    let list = top
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(|m| m.as_array())
        .ok_or("Cargo.toml has no [workspace] members")?;
    let mut out = vec![];
    for m in list.iter().filter_map(|m| m.as_str()) {
        let dir = root.join(m);
        let t = read_toml(&dir.join("Cargo.toml"))?;
        let name = t["package"]["name"].as_str().unwrap_or(m).to_string();
        if name == "xtask" {
            continue;
        }
        let deps = t
            .get("dependencies")
            .and_then(|d| d.as_table())
            .map(|d| {
                d.keys()
                    .filter(|k| k.starts_with("iolab"))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        out.push(Member { name, dir, deps });
    }
    Ok(out)
}

fn read_toml(p: &Path) -> Result<toml::Table, String> {
    let s = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
    s.parse().map_err(|e| format!("{}: {e}", p.display()))
}

/// Every dependency that does not point down, as "a depends on b, which is not below it".
pub fn upward(members: &[Member]) -> Vec<String> {
    let rank = |n: &str| LAYERS.iter().position(|l| *l == n);
    let mut bad = vec![];
    for m in members {
        let Some(r) = rank(&m.name) else {
            bad.push(format!(
                "{} is in no layer (xtask/src/layers.rs LAYERS)",
                m.name
            ));
            continue;
        };
        for d in &m.deps {
            match rank(d) {
                Some(rd) if rd < r => {}
                _ => bad.push(format!("{} depends on {d}, which is not below it", m.name)),
            }
        }
    }
    bad
}
