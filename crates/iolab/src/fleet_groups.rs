//! An Ansible inventory's groups, as Ansible's static inventory plugins (ini, yaml, toml) read them,
//! counted before Ansible is given the inventory: how many groups, how deep their children nest and how
//! many hosts they hold counted per group. Ansible's time grows with each (a 119 KB YAML inventory of
//! 3,000 groups, each holding one group of 10,000 hosts, kept it reading for minutes).

use iolab_engine::error::Result;
use std::collections::HashSet;
use std::path::Path;
use std::rc::Rc;
use yaml_rust2::parser::{Event, Parser};

/// The most hosts an inventory's ranges (`web[01:50]`) may make: Ansible makes each before it runs,
/// and `h[0:99999999]` (40 bytes) took it to its 4 GiB bound.
pub const MAX_RANGE_HOSTS: u64 = 10_000;

/// How many hosts the ranges of `text` make, as Ansible expands them: per line the product of its
/// `[A:B]` or `[A:B:STEP]` ranges (numbers, or single letters), summed over the lines (saturating).
pub fn range_hosts(text: &str) -> u64 {
    let one = |r: &str| -> Option<u64> {
        let mut it = r.split(':');
        let (a, b) = (it.next()?.trim(), it.next()?.trim());
        let step: u64 = it.next().map_or(Some(1), py_int)?.max(1);
        let span = match (py_int(a), py_int(b)) {
            (Some(a), Some(b)) => b.checked_sub(a)?,
            _ if a.len() == 1 && b.len() == 1 => {
                u64::from(b.as_bytes()[0].checked_sub(a.as_bytes()[0])?)
            }
            _ => return None,
        };
        Some((span / step).saturating_add(1))
    };
    text.lines()
        .map(|l| {
            let ranges = l
                .split('[')
                .skip(1)
                .filter_map(|r| one(r.split(']').next()?));
            ranges.fold(0u64, |n, k| n.max(1).saturating_mul(k))
        })
        .fold(0u64, u64::saturating_add)
}

/// An inventory's groups by name: the hosts each names itself (each time it is named), and its children
/// groups.
pub type Groups = std::collections::HashMap<String, (u64, Vec<String>)>;

/// The most hosts an inventory's groups may hold, a host counted once in each group it is in (through
/// `:children` too): 3,000 groups holding one group of 10,000 hosts (62 KB) kept Ansible reading for
/// minutes, about 2 µs a host in a group.
const MAX_MEMBERSHIPS: u64 = 1_000_000;

/// Adds the groups of INI inventory `text` to `groups`: a section `[g]` or `[g:hosts]` names hosts (a
/// line each, or as many as its ranges make), `[g:children]` groups; hosts before any section are
/// ungrouped.
pub fn ini_groups(text: &str, groups: &mut Groups, hosts: &mut Hosts) {
    let mut at = ("ungrouped".to_string(), false);
    for l in py_lines(text).map(str::trim) {
        if l.is_empty() || l.starts_with('#') || l.starts_with(';') {
            continue;
        }
        if let Some(h) = l.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            let (name, kind) = h.split_once(':').unwrap_or((h, "hosts"));
            at = (name.trim().to_string(), kind.trim() == "children");
            groups.entry(at.0.clone()).or_default();
            if !matches!(kind.trim(), "hosts" | "children") {
                at.0.clear();
            }
            continue;
        }
        if at.0.is_empty() {
            // A [g:vars] section's line: a variable of the group.
            hosts.vars = hosts.vars.saturating_add(1);
            let value = l.split_once('=').map_or("", |(_, v)| v);
            hosts.values = hosts.values.saturating_add(literal_items(value));
            continue;
        }
        let g = groups.entry(at.0.clone()).or_default();
        match at.1 {
            true => g.1.extend(l.split_whitespace().next().map(str::to_string)),
            false => {
                let ranged = range_hosts(l);
                g.0 = g.0.saturating_add(ranged.max(1));
                if ranged == 0 {
                    hosts
                        .names
                        .extend(l.split_whitespace().next().map(str::to_string));
                }
                // The host's variables (`k=v` after its name), set on each host it makes.
                let vars = l
                    .split_whitespace()
                    .skip(1)
                    .filter_map(|t| t.split_once('='))
                    .map(|(_, v)| hosts.values = hosts.values.saturating_add(literal_items(v)))
                    .count();
                hosts.vars = hosts
                    .vars
                    .saturating_add((vars as u64).saturating_mul(ranged.max(1)));
            }
        }
    }
}

/// An inventory's hosts as counted: the names of its hosts (but those its ranges make), and the variables
/// it sets, each counted once for every host (or group) it is set on: Ansible sets each, a host's as many
/// times as its range makes hosts (`h[0:9999] v0=1 ... v7999=1`, 63 KB, took it 27 s and 2 GB).
#[derive(Default)]
pub struct Hosts {
    pub names: HashSet<String>,
    pub vars: u64,
    /// Its values as Ansible's readers make them, for [`MAX_VALUES`].
    pub values: u64,
}

/// The most variables an inventory may set, each counted on every host or group it is set on (Ansible
/// sets about 3 million a second).
const MAX_VARIABLES: u64 = 1_000_000;

/// The most hosts an inventory may name (distinct names, and each host a range makes): Ansible reads
/// 20,000 in about 1.6 s.
const MAX_INVENTORY_HOSTS: u64 = 25_000;

/// The most groups, and the deepest chain of children, an inventory may have.
const MAX_GROUPS: usize = 10_000;
const MAX_DEPTH: u64 = 1_000;

/// The longest chain of `:children` among `groups` (a group without children is 1 deep; a cycle, which
/// Ansible refuses, ends the chain).
fn chain_depth(groups: &Groups) -> u64 {
    let each = per_group(groups, (|_| 0, u64::max, |d| d + 1));
    each.into_iter().max().unwrap_or(0)
}

/// How many hosts `groups` hold in all, a host counted in each group it is in (a group in its own
/// `:children`, which Ansible refuses, counted once).
fn memberships(groups: &Groups) -> u64 {
    let each = per_group(groups, (|own| own, u64::saturating_add, |n| n));
    each.into_iter().fold(0, u64::saturating_add)
}

/// How a group's value is made: `start` of its own hosts, its children's values folded in by `add`, and
/// `end` of that.
type Fold = (fn(u64) -> u64, fn(u64, u64) -> u64, fn(u64) -> u64);

/// Each group's value by `f`, each group's once (a group met again inside its own chain, a cycle, is 0
/// there). Recursive: called on at most [`MAX_GROUPS`] groups, so at most that deep.
fn per_group(groups: &Groups, f: Fold) -> Vec<u64> {
    type Memo<'a> = std::collections::HashMap<&'a str, u64>;
    fn go<'a>(g: &'a str, gs: &'a Groups, memo: &mut Memo<'a>, f: Fold) -> u64 {
        if let Some(n) = memo.get(g) {
            return *n;
        }
        // Marked before its children are counted: a cycle adds nothing.
        memo.insert(g, 0);
        let Some((own, children)) = gs.get(g) else {
            return 0;
        };
        let n = (f.2)(
            children
                .iter()
                .fold((f.0)(*own), |n, c| (f.1)(n, go(c, gs, memo, f))),
        );
        memo.insert(g, n);
        n
    }
    let mut memo = Memo::new();
    groups.keys().map(|g| go(g, groups, &mut memo, f)).collect()
}

/// A group that is among its own children, through any chain of them (the first found). Recursive: called
/// within [`MAX_DEPTH`] and [`MAX_GROUPS`].
fn in_a_cycle(groups: &Groups) -> Option<&str> {
    /// Groups being followed (true) or followed to their end (false).
    type Seen<'a> = std::collections::HashMap<&'a str, bool>;
    fn go<'a>(g: &'a str, gs: &'a Groups, seen: &mut Seen<'a>) -> Option<&'a str> {
        match seen.get(g) {
            Some(true) => return Some(g),
            Some(false) => return None,
            None => {}
        }
        seen.insert(g, true);
        let children = gs.get(g).map(|(_, c)| c.as_slice()).unwrap_or_default();
        let found = children.iter().find_map(|c| go(c, gs, seen));
        seen.insert(g, false);
        found
    }
    let mut seen = Seen::new();
    let mut names: Vec<&str> = groups.keys().map(String::as_str).collect();
    names.sort_unstable();
    names.into_iter().find_map(|g| go(g, groups, &mut seen))
}

/// A range's bound as Python's `int()` reads it (Ansible expands ranges with it): ASCII digits with
/// single underscores between them, around them spaces, saturating at u64::MAX; a digit of another script
/// (full-width, ...) counts as a number too large to expand. None: not a number.
fn py_int(s: &str) -> Option<u64> {
    let t = s.trim();
    let t = t.strip_prefix('+').unwrap_or(t);
    if t.starts_with('_') || t.ends_with('_') || t.contains("__") || t.is_empty() {
        return None;
    }
    let mut n = 0u64;
    for c in t.chars() {
        match c {
            '0'..='9' => {
                n = n
                    .saturating_mul(10)
                    .saturating_add(u64::from(c as u8 - b'0'))
            }
            '_' => {}
            c if c.is_numeric() => return Some(u64::MAX),
            _ => return None,
        }
    }
    Some(n)
}

/// Refused where `groups` (all the inventory `inv`'s files') are more, nest deeper or hold more hosts
/// counted per group than Ansible reads in a few seconds.
pub fn check(inv: &Path, groups: &Groups, (hosts, vars): (u64, u64)) -> Result<()> {
    if vars > MAX_VARIABLES {
        return Err(refused(format!(
            "{}: sets more than {} variables, each counted on every host or group it is set on (a \
             host's on each host its range makes); iolab gives Ansible at most that many (it sets about 3 \
             million a second: 80 million took 27 s and 2 GB): set them once on a group",
            inv.display(),
            thousands(MAX_VARIABLES)
        )));
    }
    if hosts > MAX_INVENTORY_HOSTS {
        return Err(refused(format!(
            "{}: names {} hosts; iolab gives Ansible inventories of at most {} (it reads a host in about \
             70 µs: 209,000 took 16 s; a fleet runs on at most 10,000): give a smaller inventory",
            inv.display(),
            thousands(hosts),
            thousands(MAX_INVENTORY_HOSTS)
        )));
    }
    // The groups counted first: the chain is followed only within their bound.
    let n = groups.len();
    let depth = (n <= MAX_GROUPS).then(|| chain_depth(groups));
    if n > MAX_GROUPS || depth.is_some_and(|d| d > MAX_DEPTH) {
        let deep = depth.map_or(String::new(), |d| {
            format!(", children {} deep", thousands(d))
        });
        return Err(refused(format!(
            "{}: {} groups{deep}; iolab gives Ansible at most {} groups and {} levels (its time grows \
             with the square of each: 50,000 groups took 24 s, a chain 30,000 deep minutes)",
            inv.display(),
            thousands(n as u64),
            thousands(MAX_GROUPS as u64),
            thousands(MAX_DEPTH)
        )));
    }
    if let Some(g) = in_a_cycle(groups) {
        return Err(refused(format!(
            "{}: group '{g}' is among its own children (through the groups below it): Ansible refuses \
             such a loop",
            inv.display()
        )));
    }
    if memberships(groups) > MAX_MEMBERSHIPS {
        return Err(refused(format!(
            "{}: its groups hold more than {} hosts counted per group (a host in a group's children \
             counts in each group above it): Ansible takes about 2 µs for each, and iolab gives it at most \
             that many",
            inv.display(),
            thousands(MAX_MEMBERSHIPS)
        )));
    }
    Ok(())
}

fn refused(msg: String) -> iolab_engine::error::Error {
    iolab_engine::error::Error::usage("INVENTORY", msg)
}

fn thousands(n: u64) -> String {
    iolab_engine::units::thousands_u64(n)
}

/// The most values iolab gives Ansible to read in an inventory and the variables files beside it: each
/// node of its YAML (a scalar, list, mapping or alias), three for each value of its TOML, and each item
/// of a Python literal an INI value is (Ansible evaluates those). Ansible's YAML reader takes 5 to 10 µs
/// a node: one list of 500,000 zeros took it 5.6 s and 240 MB, 15 files of 1 MiB of them 245 s and 1.8
/// GB; its TOML reader about 30 µs a value (500,000: 16.6 s); an INI literal about 3 µs and 1 KB an
/// item (15 files of 500,000: 41 s). JSON, which it reads with Python's own reader first (the same
/// 500,000 in 0.4 s), is not counted.
pub const MAX_VALUES: u64 = 250_000;

/// What a TOML value counts for against [`MAX_VALUES`]: Ansible reads it about three times as slowly
/// as a YAML node.
const TOML_WEIGHT: u64 = 3;

/// `text` with the line breaks Ansible's YAML reader (PyYAML) knows and yaml_rust2 does not (NEL, the
/// line and paragraph separators) made newlines: else a list of 350,000 items split by them is one
/// scalar to the count and a list to Ansible.
fn pyyaml_text(text: &str) -> std::borrow::Cow<'_, str> {
    const BREAKS: [char; 3] = ['\u{85}', '\u{2028}', '\u{2029}'];
    match text.contains(BREAKS) {
        true => text.replace(BREAKS, "\n").into(),
        false => text.into(),
    }
}

/// `text`'s lines as Python's `str.splitlines` makes them (Ansible's INI reader splits so): at `\n`,
/// `\r`, the vertical tab, form feed, file, group and record separators, NEL and the line and paragraph
/// separators.
fn py_lines(text: &str) -> impl Iterator<Item = &str> {
    text.split([
        '\n', '\r', '\u{b}', '\u{c}', '\u{1c}', '\u{1d}', '\u{1e}', '\u{85}', '\u{2028}',
        '\u{2029}',
    ])
}

/// How many items Ansible's INI reader makes of value `v`, which it evaluates as a Python literal: one,
/// and one more for each punctuation character (the commas of a list, its brackets, a string's quotes).
fn literal_items(v: &str) -> u64 {
    1 + v.bytes().filter(u8::is_ascii_punctuation).count() as u64
}

/// How many values a TOML value holds, itself among them.
fn toml_values(v: &toml::Value) -> u64 {
    1 + match v {
        toml::Value::Array(a) => a.iter().map(toml_values).sum(),
        toml::Value::Table(t) => t.values().map(toml_values).sum(),
        _ => 0,
    }
}

/// How many nodes the YAML `text` holds, counted up to `left` (past it: `left + 1`); 0 for JSON text.
/// Text that is not YAML is counted up to where it stops being YAML (Ansible says why itself).
pub fn yaml_nodes(text: &str, left: u64) -> u64 {
    if serde_json::from_str::<serde_json::Value>(text).is_ok() {
        return 0;
    }
    let text = pyyaml_text(text);
    let mut parser = Parser::new_from_str(&text);
    let mut n = 0u64;
    while n <= left {
        match parser.next_token() {
            Ok((Event::StreamEnd, _)) | Err(_) => break,
            Ok((
                Event::Scalar(..)
                | Event::SequenceStart(..)
                | Event::MappingStart(..)
                | Event::Alias(_),
                _,
            )) => n += 1,
            Ok(_) => {}
        }
    }
    n
}

/// A YAML document as a tree whose aliases share the node they name (a billion aliases of aliases take
/// no more room than their text).
enum Node {
    /// A mapping's keys and values in turn.
    Map(Vec<Rc<Node>>),
    Seq(Vec<Rc<Node>>),
    Text(String),
    Null,
}

/// The nodes of YAML `text`'s documents. Err: why it is not YAML, and where.
fn yaml_tree(text: &str) -> std::result::Result<Vec<Rc<Node>>, String> {
    let mut parser = Parser::new_from_str(text);
    let mut anchors = std::collections::HashMap::<usize, Rc<Node>>::new();
    // The mappings and sequences open: their items so far, and their anchor.
    let mut open: Vec<(bool, Vec<Rc<Node>>, usize)> = Vec::new();
    let mut docs = Vec::new();
    loop {
        let (event, _) = parser.next_token().map_err(|e| e.to_string())?;
        let (node, anchor) = match event {
            Event::StreamEnd => return Ok(docs),
            Event::MappingStart(a, _) | Event::SequenceStart(a, _) => {
                open.push((matches!(event, Event::MappingStart(..)), Vec::new(), a));
                continue;
            }
            Event::MappingEnd | Event::SequenceEnd => match open.pop() {
                Some((true, items, a)) => (Rc::new(Node::Map(items)), a),
                Some((false, items, a)) => (Rc::new(Node::Seq(items)), a),
                None => continue,
            },
            Event::Scalar(s, style, a, _) => {
                let plain = style == yaml_rust2::scanner::TScalarStyle::Plain;
                let null = plain && matches!(s.as_str(), "" | "~" | "null" | "Null" | "NULL");
                (Rc::new(if null { Node::Null } else { Node::Text(s) }), a)
            }
            Event::Alias(id) => (anchors.get(&id).cloned().unwrap_or(Rc::new(Node::Null)), 0),
            _ => continue,
        };
        if anchor > 0 {
            anchors.insert(anchor, node.clone());
        }
        match open.last_mut() {
            Some((_, items, _)) => items.push(node),
            None => docs.push(node),
        }
    }
}

/// The most times a YAML inventory's groups may be named, an alias's counted each time it is met
/// (Ansible reads a group again at each), and the most entries its mappings may hold once merge keys
/// (`<<: *x`, which copy a mapping's entries into another) are applied.
const MAX_NAMED: u64 = 100_000;
const MAX_ENTRIES: u64 = 2_000_000;

/// A YAML inventory's groups being read: Ansible's yaml plugin reads a root mapping of groups, each with
/// `hosts` (a mapping of host names or ranges) and `children` (a mapping of groups, read as these).
struct YamlGroups<'g> {
    groups: &'g mut Groups,
    counted: &'g mut Hosts,
    named: u64,
    entries: u64,
    /// The hosts each mapping of hosts names, counted once per mapping (an alias shares it).
    hosts: std::collections::HashMap<*const Node, u64>,
}

impl YamlGroups<'_> {
    /// The entries of mapping `m` (a `(key, value)` each) as PyYAML reads them, merge keys applied: the
    /// entries of the mapping `<<` names (or of each in the list it names) are the mapping's too.
    fn entries<'n>(
        &mut self,
        m: &'n Node,
    ) -> std::result::Result<Vec<(&'n Node, &'n Rc<Node>)>, String> {
        let mut out = Vec::new();
        let mut todo = vec![m];
        while let Some(n) = todo.pop() {
            let Node::Map(items) = n else { continue };
            for kv in items.chunks_exact(2) {
                self.entries += 1;
                if self.entries > MAX_ENTRIES {
                    return Err(format!(
                        "its mappings hold more than {} entries, read where each alias and merge \
                         key (<<) uses them (Ansible reads them again at each)",
                        thousands(MAX_ENTRIES)
                    ));
                }
                match (text(&kv[0]), &*kv[1]) {
                    (Some("<<"), Node::Seq(list)) => todo.extend(list.iter().map(|x| &**x)),
                    (Some("<<"), v) => todo.push(v),
                    _ => out.push((&*kv[0], &kv[1])),
                }
            }
        }
        Ok(out)
    }

    fn group(
        &mut self,
        name: &str,
        data: &Rc<Node>,
        depth: u64,
    ) -> std::result::Result<(), String> {
        self.named += 1;
        if self.named > MAX_NAMED || depth > MAX_DEPTH {
            return Err(format!(
                "its groups are named more than {} times or nest more than {} deep (a YAML alias \
                 names a group again each time it is used)",
                thousands(MAX_NAMED),
                thousands(MAX_DEPTH)
            ));
        }
        self.groups.entry(name.to_string()).or_default();
        for (key, value) in self.entries(data)? {
            match text(key) {
                Some("hosts") => {
                    let n = self.hosts_in(value)?;
                    let g = self.groups.entry(name.to_string()).or_default();
                    g.0 = g.0.saturating_add(n);
                }
                Some("vars") => {
                    let n = self.entries(value)?.len() as u64;
                    self.counted.vars = self.counted.vars.saturating_add(n);
                }
                Some("children") => {
                    for (c, data) in self.entries(value)? {
                        let child = text_of(c).to_string();
                        self.group(&child, data, depth + 1)?;
                        let g = self.groups.entry(name.to_string()).or_default();
                        g.1.push(child);
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// How many hosts mapping `hosts` names (a range as many as it makes), counted once per mapping; its
    /// plain names are added to the inventory's.
    fn hosts_in(&mut self, hosts: &Rc<Node>) -> std::result::Result<u64, String> {
        if let Some(n) = self.hosts.get(&Rc::as_ptr(hosts)) {
            return Ok(*n);
        }
        let mut n = 0u64;
        for (h, vars) in self.entries(hosts)? {
            let name = text_of(h);
            let ranged = range_hosts(name);
            if ranged == 0 {
                self.counted.names.insert(name.to_string());
            }
            n = n.saturating_add(ranged.max(1));
            // The host's variables, set on each host its name makes.
            let set = (self.entries(vars)?.len() as u64).saturating_mul(ranged.max(1));
            self.counted.vars = self.counted.vars.saturating_add(set);
        }
        self.hosts.insert(Rc::as_ptr(hosts), n);
        Ok(n)
    }
}

fn text(n: &Node) -> Option<&str> {
    match n {
        Node::Text(t) => Some(t),
        _ => None,
    }
}

fn text_of(n: &Node) -> &str {
    text(n).unwrap_or_default()
}

/// Adds the groups of YAML (or JSON) inventory `text` to `groups`, its hosts' plain names to `names`.
/// Err: it is not YAML, or its groups are named, nest or merge past their bounds.
pub fn yaml_groups(
    text: &str,
    groups: &mut Groups,
    hosts: &mut Hosts,
) -> std::result::Result<(), String> {
    let mut walk = YamlGroups {
        groups,
        counted: hosts,
        named: 0,
        entries: 0,
        hosts: Default::default(),
    };
    for doc in yaml_tree(&pyyaml_text(text))? {
        for (k, v) in walk.entries(&doc)? {
            walk.group(text_of(k), v, 1)?;
        }
    }
    Ok(())
}

/// Adds the groups of TOML inventory `text` to `groups`: Ansible's toml plugin reads a table per group,
/// with `hosts` (a table of host names or ranges) and `children` (a list of group names). Err: it is not
/// TOML.
pub fn toml_groups(
    text: &str,
    groups: &mut Groups,
    counted: &mut Hosts,
) -> std::result::Result<(), String> {
    let root: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| e.message().to_string())?;
    let values: u64 = root.values().map(toml_values).sum();
    counted.values = counted
        .values
        .saturating_add(values.saturating_mul(TOML_WEIGHT));
    for (name, data) in &root {
        let g = groups.entry(name.clone()).or_default();
        let Some(data) = data.as_table() else {
            continue;
        };
        if let Some(hosts) = data.get("hosts").and_then(toml::Value::as_table) {
            let n = hosts.keys().map(|h| range_hosts(h).max(1));
            g.0 = g.0.saturating_add(n.fold(0, u64::saturating_add));
            let plain = hosts.keys().filter(|h| range_hosts(h) == 0);
            counted.names.extend(plain.cloned());
            for (h, vars) in hosts {
                let n = vars.as_table().map_or(0, |t| t.len() as u64);
                let set = n.saturating_mul(range_hosts(h).max(1));
                counted.vars = counted.vars.saturating_add(set);
            }
        }
        if let Some(vars) = data.get("vars").and_then(toml::Value::as_table) {
            counted.vars = counted.vars.saturating_add(vars.len() as u64);
        }
        let children = data.get("children").and_then(toml::Value::as_array);
        let kids = children
            .into_iter()
            .flatten()
            .filter_map(toml::Value::as_str);
        g.1.extend(kids.map(str::to_string));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ini_and_toml_values_are_counted_as_ansible_reads_them() {
        let (mut g, mut hosts) = (Groups::new(), Hosts::default());
        // Python's lines: a record separator ends a line, so `[b]` is a section and `h2` its host.
        ini_groups(
            "[a]\nh1 x=[1,2] y=z\n[a:vars]\nv=(1,2,3)\u{1e}[b]\u{85}h2\n",
            &mut g,
            &mut hosts,
        );
        assert!(g.contains_key("b") && hosts.names.contains("h2"), "{g:?}");
        // [1,2]: 4; z: 1; (1,2,3): 5.
        assert_eq!(hosts.values, 10);
        let mut hosts = Hosts::default();
        toml_groups("[a.vars]\nx = [1, 2]\n", &mut g, &mut hosts).unwrap();
        // The table a, its vars, x and its two items: five values, three each.
        assert_eq!(hosts.values, 15);
    }

    #[test]
    fn yaml_nodes_are_counted_up_to_the_budget_and_json_is_not() {
        // The root mapping, its key, the list and its three zeros.
        assert_eq!(yaml_nodes("v: [0, 0, 0]\n", 100), 6);
        // An alias is a node where it is used; a document per `---`.
        assert_eq!(yaml_nodes("a: &x 1\nb: *x\n---\nc\n", 100), 6);
        // Past the budget the count stops one past it.
        let long = format!("v: [{}]\n", vec!["0"; 10_000].join(","));
        assert_eq!(yaml_nodes(&long, 3), 4);
        // JSON is read by Python's own reader, quickly: not counted.
        assert_eq!(yaml_nodes("{\"v\": [0, 0, 0]}", 100), 0);
        // NEL and the line and paragraph separators break lines, as in Ansible's reader.
        assert_eq!(yaml_nodes("x:\n-\u{85}-\u{2028}- 0\u{2029}", 100), 6);
        // Text that stops being YAML is counted up to there.
        assert_eq!(yaml_nodes("v: [0, 0\n: : ]]", 100), 4);
    }

    #[test]
    fn hosts_are_counted_in_each_group_they_are_in() {
        let (mut g, mut hosts) = (Groups::new(), Hosts::default());
        ini_groups(
            "solo\n[web]\nweb[0:9]\nw2 ansible_host=x\n[a:children]\nweb\n[b:children]\na\nweb\n[b:vars]\nx=1\n\
             [db]\nw2\n",
            &mut g,
            &mut hosts,
        );
        // ungrouped 1, web 11, a 11, b 22, db 1; the names but the range's: solo and w2 (once).
        assert_eq!(memberships(&g), 46);
        assert_eq!(hosts.names.len(), 2);
        // 3,000 groups each holding one group of 10,000 hosts (62 KB), and a chain 3,000 deep.
        let mut many = String::from("[web]\nweb[0:9999]\n");
        let mut chain = many.clone();
        for i in 0..3000 {
            many.push_str(&format!("[g{i}:children]\nweb\n"));
            let below = if i == 0 {
                "web".to_string()
            } else {
                format!("c{}", i - 1)
            };
            chain.push_str(&format!("[c{i}:children]\n{below}\n"));
        }
        for text in [many, chain] {
            let mut g = Groups::new();
            ini_groups(&text, &mut g, &mut Hosts::default());
            assert!(memberships(&g) > MAX_MEMBERSHIPS);
        }
        // Groups and chains past their bounds (a chain 3,000 deep of one host took Ansible 5.5 s).
        let mut g = Groups::new();
        let mut chain = String::from("[c0]\nh\n");
        for i in 1..1500 {
            chain.push_str(&format!("[c{i}:children]\nc{}\n", i - 1));
        }
        ini_groups(&chain, &mut g, &mut Hosts::default());
        assert_eq!((g.len(), chain_depth(&g)), (1500, 1500));
        // A group in its own children is counted once, and named.
        let mut g = Groups::new();
        ini_groups("[a]\nh\n[a:children]\na\n", &mut g, &mut Hosts::default());
        assert_eq!((memberships(&g), in_a_cycle(&g)), (1, Some("a")));
        let mut g = Groups::new();
        ini_groups(
            "[a:children]\nb\n[b:children]\nc\n[c:children]\nb\n[d:children]\na\n",
            &mut g,
            &mut Hosts::default(),
        );
        assert_eq!(in_a_cycle(&g), Some("b"));
        let mut g = Groups::new();
        ini_groups(
            "[a:children]\nb\nc\n[b:children]\nc\n[c]\nh\n",
            &mut g,
            &mut Hosts::default(),
        );
        assert_eq!(in_a_cycle(&g), None);
    }

    #[test]
    fn host_ranges_are_counted_as_ansible_expands_them() {
        assert_eq!(range_hosts("[web]\nweb[01:50].x\n[db:children]\nweb\n"), 50);
        assert_eq!(range_hosts("h[0:9:2]-r[a:c]\nplain\n"), 15);
        assert_eq!(
            range_hosts("h[0:99999999] ansible_connection=local\n"),
            100_000_000
        );
        assert_eq!(range_hosts("[lab:vars]\nx=[1, 2]\n"), 0);
        assert_eq!(range_hosts("h[0:18446744073709551615][0:9]\n"), u64::MAX);
        // Read as Python's int() reads them, which Ansible's expansion uses.
        assert_eq!(range_hosts("h[0:99_999]\n"), 100_000);
        assert_eq!(range_hosts("h[0:99999999999999999999]\n"), u64::MAX);
        assert_eq!(range_hosts("h[0:\u{ff11}\u{ff10}]\n"), u64::MAX);
        assert_eq!(range_hosts("h[ 1 : 3 ]\n"), 3);
        assert_eq!(range_hosts("h[0:9__9]\n"), 0);
    }

    /// A YAML inventory's groups count as the INI one's (hosts under `hosts`, groups under `children`,
    /// a group named twice adding to itself); TOML's name children by a list.
    #[test]
    fn yaml_and_toml_groups_are_counted_as_ini_ones() {
        let yaml = "all:\n  hosts:\n    solo:\n  children:\n    web:\n      hosts:\n        web[0:9]:\n        \
                    w2: {ansible_host: x}\n    a:\n      children:\n        web:\n    b:\n      children:\n        \
                    a:\n        web:\n      vars: {x: 1}\n";
        let mut g = Groups::new();
        yaml_groups(yaml, &mut g, &mut Hosts::default()).unwrap();
        // web 11, a 11, b 22, and all its own host and each group below it: 1 + 11 + 11 + 22.
        assert_eq!(memberships(&g), 11 + 11 + 22 + 45);
        assert_eq!(chain_depth(&g), 4);
        let toml = "[web.hosts]\n\"web[0:9]\" = {}\nw2 = { ansible_host = \"x\" }\n[a]\nchildren = [\"web\"]\n\
                    [b]\nchildren = [\"a\", \"web\"]\n[b.vars]\nx = 1\n";
        let mut g = Groups::new();
        toml_groups(toml, &mut g, &mut Hosts::default()).unwrap();
        assert_eq!(memberships(&g), 11 + 11 + 22);
        // What is not YAML or TOML is named as such, with where.
        let e = yaml_groups(
            "all:\n  hosts: [a\n",
            &mut Groups::new(),
            &mut Hosts::default(),
        )
        .unwrap_err();
        assert!(e.contains("line"), "{e}");
        let e = toml_groups("[web\n", &mut Groups::new(), &mut Hosts::default()).unwrap_err();
        assert!(!e.is_empty());
    }

    /// Variables count on every host they are set on: a host line's on each host its range makes, a
    /// mapping's on each host that uses it, a group's once per group.
    #[test]
    fn variables_count_on_every_host_they_are_set_on() {
        let mut h = Hosts::default();
        ini_groups(
            "[g]\nh[0:9] a=1 b=2\nsolo c=3\n[g:vars]\nd=4\ne=5\n",
            &mut Groups::new(),
            &mut h,
        );
        assert_eq!(h.vars, 10 * 2 + 1 + 2);
        let mut h = Hosts::default();
        let yaml =
            "x: &v {a: 1, b: 2}\nall:\n  vars: *v\n  hosts:\n    h[0:9]: *v\n    solo: {c: 3}\n";
        yaml_groups(yaml, &mut Groups::new(), &mut h).unwrap();
        assert_eq!(h.vars, 2 + 10 * 2 + 1);
        let mut h = Hosts::default();
        let toml = "[g.hosts]\n\"h[0:9]\" = { a = 1 }\n[g.vars]\nb = 2\n";
        toml_groups(toml, &mut Groups::new(), &mut h).unwrap();
        assert_eq!(h.vars, 10 + 1);
    }

    /// Merge keys (`<<: *x`, `<<: [*x, *y]`) copy a mapping's entries as PyYAML does: the groups and
    /// hosts they bring count, and merges of merges are bounded.
    #[test]
    fn yaml_merge_keys_count_what_they_bring() {
        let mut yaml =
            String::from("all:\n  children:\n    web:\n      hosts:\n        web[0:9999]:\n");
        yaml.push_str("    g0: &c\n      children:\n        web:\n");
        for i in 1..3000 {
            yaml.push_str(&format!("    g{i}: {{<<: *c}}\n"));
        }
        let mut g = Groups::new();
        yaml_groups(&yaml, &mut g, &mut Hosts::default()).unwrap();
        assert_eq!(g.len(), 3002);
        assert!(memberships(&g) > MAX_MEMBERSHIPS);
        let (mut g, mut hosts) = (Groups::new(), Hosts::default());
        let yaml = "all:\n  children:\n    a:\n      hosts: &h {x1: , x2: }\n    b:\n      hosts: {<<: [*h], x3: }\n";
        yaml_groups(yaml, &mut g, &mut hosts).unwrap();
        assert_eq!((memberships(&g), hosts.names.len()), (2 + 3 + 5, 3));
        // Merges of merges, doubling at each of 40 levels.
        let mut yaml = String::from("m0: &m0 {a: 1}\n");
        for i in 1..40 {
            yaml.push_str(&format!("m{i}: &m{i} {{<<: [*m{}, *m{}]}}\n", i - 1, i - 1));
        }
        yaml.push_str("all:\n  hosts: *m39\n");
        let e = yaml_groups(&yaml, &mut Groups::new(), &mut Hosts::default()).unwrap_err();
        assert!(e.contains("merge key"), "{e}");
    }

    /// Aliases are shared, not copied: a group named through aliases of aliases (a billion times in 2 KB)
    /// is refused at the bound of groups named, in the time a few of them take.
    #[test]
    fn yaml_aliases_of_groups_are_bounded_without_being_expanded() {
        let mut yaml = String::from("all:\n  children:\n    l0: &l0\n      hosts: {h: }\n");
        for i in 1..10 {
            let kids: Vec<String> = (0..10).map(|k| format!("x{i}_{k}: *l{}", i - 1)).collect();
            yaml.push_str(&format!(
                "    l{i}: &l{i}\n      children: {{{}}}\n",
                kids.join(", ")
            ));
        }
        let e = yaml_groups(&yaml, &mut Groups::new(), &mut Hosts::default()).unwrap_err();
        assert!(e.contains("named more than 100,000 times"), "{e}");
        // Aliases of a mapping of 10,000 hosts under 3,000 groups: each counts where it is used.
        let mut yaml =
            String::from("all:\n  children:\n    web:\n      hosts: &h\n        web[0:9999]:\n");
        for i in 0..3000 {
            yaml.push_str(&format!("    g{i}:\n      hosts: *h\n"));
        }
        let mut g = Groups::new();
        yaml_groups(&yaml, &mut g, &mut Hosts::default()).unwrap();
        assert!(memberships(&g) > MAX_MEMBERSHIPS);
    }
}
