//! The points of a sweep: `--vary KEY=V1,V2` lists and their product, and a point's label.

use iolab_engine::error::{Error, Result};
use iolab_engine::spec::{RawSpec, Val};

/// One `--vary KEY=V1,V2,...`.
#[derive(Debug, Clone)]
pub struct Vary {
    pub key: String,
    pub values: Vec<String>,
}

/// Parses `KEY=V1,V2,...`; the key must be a spec key (checked by building a spec with its first value).
pub fn parse_vary(s: &str) -> Result<Vary> {
    let v = parse_vary_any(s)?;
    point_raw(&[(v.key.clone(), v.values[0].clone())])?;
    Ok(v)
}

/// Parses `KEY=V1,V2,...` for any key (suite workloads of their own have keys of their own).
pub fn parse_vary_any(s: &str) -> Result<Vary> {
    let (k, vs) = s.split_once('=').ok_or_else(|| {
        Error::usage(
            "--vary",
            format!("'{s}' is not KEY=V1,V2,... (for example --vary bs=4k,64k,1m)"),
        )
    })?;
    let key = k.trim().trim_start_matches("--").to_string();
    if ["overwrite", "allow-device-writes"].contains(&key.as_str()) {
        return Err(Error::usage(
            "--vary",
            format!(
                "'{s}': --{key} is not varied: a permission to write over what exists is given once, as \
                 a flag of its own, for every point"
            ),
        ));
    }
    let values: Vec<String> = vs
        .split(',')
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect();
    if values.is_empty() {
        return Err(Error::usage(
            "--vary",
            format!("'{s}' gives no values for {key}"),
        ));
    }
    Ok(Vary { key, values })
}

/// The cartesian product in a stable order: the first `--vary` changes slowest.
pub fn points(vs: &[Vary]) -> Vec<Vec<(String, String)>> {
    let mut out: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for v in vs {
        let mut next = Vec::with_capacity(out.len() * v.values.len());
        for p in &out {
            for val in &v.values {
                let mut q = p.clone();
                q.push((v.key.clone(), val.clone()));
                next.push(q);
            }
        }
        out = next;
    }
    out
}

/// The spec keys of one point as a RawSpec (to be merged over the base spec).
pub fn point_raw(point: &[(String, String)]) -> Result<RawSpec> {
    let mut raw = RawSpec::new();
    for (k, v) in point {
        let val = match v.as_str() {
            "true" => Val::Bool(true),
            "false" => Val::Bool(false),
            _ => Val::Str(v.clone()),
        };
        raw.set(k, val).map_err(|m| Error::usage("--vary", m))?;
    }
    Ok(raw)
}

pub fn point_label(point: &[(String, String)]) -> String {
    point
        .iter()
        .map(|(k, v)| match k.as_str() {
            "target" => format!("target={}", shown(v)),
            _ => format!("{k}={v}"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A suite's target as a reader says it: "{disk}/writes.dat" is "the disk file writes.dat", "{tmpfs}/x"
/// "the tmpfs file x", "{zram}" "the zram device" (the directories themselves are temporary and named
/// once in the suite's lead line); anything else as it is.
pub fn shown(target: &str) -> String {
    for (mark, what) in [
        ("{disk}/", "the disk file "),
        ("{tmpfs}/", "the tmpfs file "),
    ] {
        if let Some(name) = target.strip_prefix(mark) {
            return format!("{what}{name}");
        }
    }
    target.replace("{zram}", "the zram device")
}
