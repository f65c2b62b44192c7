//! The module graph of one crate, read from its source with `syn`: which file's code names which other
//! file's module. A cycle between files is a circle of such names.
//!
//! A module's file is where its items are written: `mod x;` gives `x.rs` or `x/mod.rs` (or its
//! `#[path]`), an inline `mod x { ... }` stays in the file that holds it. `mod x;` itself is not an arrow
//! (a folder holds its files); a `use`, a path in code, or a path in a macro's tokens is. A path is
//! followed from its start (`crate`, `super`, `self`, or a child module's name) through the modules it
//! names, and the arrow goes to the file of the deepest module it reaches: `crate::sys::open` names
//! `sys/mod.rs`, `crate::sys::files::open` names `sys/files.rs`. So a file inside a folder that reaches
//! a sibling through the folder's `mod.rs` re-exports depends on that `mod.rs`. Items under
//! `#[cfg(test)]` are left out: tests may look anywhere.

use proc_macro2::{TokenStream, TokenTree};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// One module: where its items are written, and its child modules by name.
#[derive(Debug)]
struct Module {
    file: usize,
    parent: Option<usize>,
    children: BTreeMap<String, usize>,
}

/// A crate's files, and for each file the files it names (with the names taken, for the message).
#[derive(Debug, Default)]
pub struct Graph {
    pub files: Vec<PathBuf>,
    pub edges: BTreeMap<usize, BTreeMap<usize, BTreeSet<String>>>,
    modules: Vec<Module>,
}

/// Paths a module's own items use, collected before they are resolved (children are known only then).
struct Pending {
    module: usize,
    paths: Vec<Vec<String>>,
}

/// Reads the crate whose root file (`src/lib.rs`, `src/main.rs`) is `root`.
pub fn read_crate(root: &Path) -> Result<Graph, String> {
    let mut g = Graph::default();
    let mut pending = Vec::new();
    let file = g.add_file(root);
    let m = g.add_module(file, None);
    let items = parse(root)?;
    g.read_items(m, &items, root, dir_of_children(root, true), &mut pending)?;
    for p in pending {
        for path in p.paths {
            if let Some((to, name)) = g.resolve(p.module, &path) {
                let from = g.modules[p.module].file;
                let to = g.modules[to].file;
                if from != to {
                    g.edges
                        .entry(from)
                        .or_default()
                        .entry(to)
                        .or_default()
                        .insert(name);
                }
            }
        }
    }
    Ok(g)
}

fn parse(file: &Path) -> Result<Vec<syn::Item>, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let f = syn::parse_file(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    Ok(f.items)
}

/// Where `mod x;` declared in `file` looks for `x.rs`: beside a `mod.rs`/`lib.rs`/`main.rs`, else in a
/// folder named after the file.
fn dir_of_children(file: &Path, is_root: bool) -> PathBuf {
    let dir = file.parent().unwrap_or(Path::new(".")).to_path_buf();
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if is_root || stem == "mod" {
        dir
    } else {
        dir.join(stem)
    }
}

pub(crate) fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && {
            let s = a.meta.require_list().map(|l| l.tokens.to_string());
            matches!(s.as_deref(), Ok("test"))
        }
    })
}

fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| {
        if !a.path().is_ident("path") {
            return None;
        }
        let nv = a.meta.require_name_value().ok()?;
        match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        }
    })
}

impl Graph {
    fn add_file(&mut self, p: &Path) -> usize {
        self.files.push(p.to_path_buf());
        self.files.len() - 1
    }

    fn add_module(&mut self, file: usize, parent: Option<usize>) -> usize {
        self.modules.push(Module {
            file,
            parent,
            children: BTreeMap::new(),
        });
        self.modules.len() - 1
    }

    /// Records module `m`'s children and the paths its items use; descends into child modules.
    fn read_items(
        &mut self,
        m: usize,
        items: &[syn::Item],
        file: &Path,
        child_dir: PathBuf,
        pending: &mut Vec<Pending>,
    ) -> Result<(), String> {
        let mut paths = Vec::new();
        for item in items {
            match item {
                syn::Item::Mod(im) if is_test_only(&im.attrs) => {}
                syn::Item::Mod(im) => self.read_mod(m, im, file, &child_dir, pending)?,
                syn::Item::Use(u) if !is_test_only(&u.attrs) => {
                    use_paths(&u.tree, &mut vec![], &mut paths)
                }
                other => {
                    let mut v = PathCollector::default();
                    v.visit_item(other);
                    paths.extend(v.paths);
                }
            }
        }
        pending.push(Pending { module: m, paths });
        Ok(())
    }

    fn read_mod(
        &mut self,
        parent: usize,
        im: &syn::ItemMod,
        file: &Path,
        child_dir: &Path,
        pending: &mut Vec<Pending>,
    ) -> Result<(), String> {
        let name = im.ident.to_string();
        if let Some((_, items)) = &im.content {
            let fid = self.modules[parent].file;
            let c = self.add_module(fid, Some(parent));
            self.modules[parent].children.insert(name.clone(), c);
            let dir = child_dir.join(&name);
            return self.read_items(c, items, file, dir, pending);
        }
        let path = match path_attr(&im.attrs) {
            Some(p) => file.parent().unwrap_or(Path::new(".")).join(p),
            None => {
                let flat = child_dir.join(format!("{name}.rs"));
                if flat.exists() {
                    flat
                } else {
                    child_dir.join(&name).join("mod.rs")
                }
            }
        };
        let items = parse(&path)?;
        let fid = self.add_file(&path);
        let c = self.add_module(fid, Some(parent));
        self.modules[parent].children.insert(name, c);
        let dir = dir_of_children(&path, false);
        self.read_items(c, &items, &path, dir, pending)
    }

    /// The module a path reaches from module `m`, and the name it takes there (for messages).
    fn resolve(&self, m: usize, path: &[String]) -> Option<(usize, String)> {
        let first = path.first()?;
        let (mut cur, mut rest) = match first.as_str() {
            "crate" => (0, &path[1..]),
            "self" => (m, &path[1..]),
            "super" => {
                let mut cur = m;
                let mut i = 0;
                while path.get(i).map(String::as_str) == Some("super") {
                    cur = self.modules[cur].parent?;
                    i += 1;
                }
                (cur, &path[i..])
            }
            name if self.modules[m].children.contains_key(name) => (m, path),
            _ => return None,
        };
        while let Some(seg) = rest.first() {
            match self.modules[cur].children.get(seg) {
                Some(&c) => {
                    cur = c;
                    rest = &rest[1..];
                }
                None => break,
            }
        }
        let name = rest.first().cloned().unwrap_or_else(|| "(module)".into());
        Some((cur, name))
    }

    /// The strongly connected components of more than one file (Tarjan's algorithm): each is a cycle.
    pub fn cycles(&self) -> Vec<Vec<usize>> {
        Tarjan::new(self).run()
    }

    /// The graph of the crate's top-level modules (its folders, and the files beside its root, under
    /// `src`): an arrow from one to another where a file of the first names a file of the second, labelled
    /// with those files and names. The root file (`lib.rs`, `main.rs`) is left out: it declares and
    /// re-exports every module.
    pub fn folders(&self, src: &Path) -> Graph {
        let top = |f: usize| {
            let rel = self.files[f].strip_prefix(src).unwrap_or(&self.files[f]);
            let first = rel
                .components()
                .next()
                .map(|c| c.as_os_str().to_string_lossy());
            let first = first
                .unwrap_or_default()
                .trim_end_matches(".rs")
                .to_string();
            (rel.components().count() > 1 || !matches!(&first[..], "lib" | "main")).then_some(first)
        };
        let mut names: Vec<String> = (0..self.files.len()).filter_map(top).collect();
        names.sort();
        names.dedup();
        let at = |n: &str| names.binary_search_by(|x| x.as_str().cmp(n)).unwrap();
        let mut g = Graph {
            files: names.iter().map(|n| src.join(n)).collect(),
            ..Graph::default()
        };
        let short = |f: usize| {
            self.files[f]
                .strip_prefix(src)
                .unwrap_or(&self.files[f])
                .display()
                .to_string()
        };
        for (&a, outs) in &self.edges {
            for (&b, items) in outs {
                let (Some(ta), Some(tb)) = (top(a), top(b)) else {
                    continue;
                };
                if ta != tb {
                    let label = format!(
                        "{} -> {} ({})",
                        short(a),
                        short(b),
                        items.iter().cloned().collect::<Vec<_>>().join(", ")
                    );
                    g.edges
                        .entry(at(&ta))
                        .or_default()
                        .entry(at(&tb))
                        .or_default()
                        .insert(label);
                }
            }
        }
        g
    }

    /// "a.rs -> b.rs: X, Y" for every arrow inside `cycle`.
    pub fn describe(&self, cycle: &[usize], base: &Path) -> String {
        let set: BTreeSet<usize> = cycle.iter().copied().collect();
        let name = |f: usize| {
            self.files[f]
                .strip_prefix(base)
                .unwrap_or(&self.files[f])
                .display()
                .to_string()
        };
        let mut out = String::new();
        for &a in cycle {
            for (b, names) in self.edges.get(&a).into_iter().flatten() {
                if set.contains(b) {
                    let n: Vec<&str> = names.iter().map(String::as_str).collect();
                    out += &format!("  {} -> {}: {}\n", name(a), name(*b), n.join(", "));
                }
            }
        }
        out
    }
}

/// Flattens a use tree into full paths (`use a::{b, c::d}` gives `a::b` and `a::c::d`).
fn use_paths(t: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match t {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_paths(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let mut v = prefix.clone();
            if n.ident != "self" {
                v.push(n.ident.to_string());
            }
            out.push(v);
        }
        syn::UseTree::Rename(r) => {
            let mut v = prefix.clone();
            v.push(r.ident.to_string());
            out.push(v);
        }
        syn::UseTree::Glob(_) => out.push(prefix.clone()),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                use_paths(t, prefix, out);
            }
        }
    }
}

/// Every path in an item's code and types, and the `crate::`/`super::`/`self::` paths in macro tokens;
/// items under `#[cfg(test)]` and nested modules are skipped (a nested module is read on its own).
#[derive(Default)]
struct PathCollector {
    paths: Vec<Vec<String>>,
}

impl<'ast> Visit<'ast> for PathCollector {
    fn visit_path(&mut self, p: &'ast syn::Path) {
        self.paths
            .push(p.segments.iter().map(|s| s.ident.to_string()).collect());
        syn::visit::visit_path(self, p);
    }
    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {}
    /// `pub(crate)`, `pub(super)`, `pub(in path)` say who may see an item, not what it uses.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_test_only(&f.attrs) {
            syn::visit::visit_item_fn(self, f);
        }
    }
    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_test_only(&f.attrs) {
            syn::visit::visit_impl_item_fn(self, f);
        }
    }
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        if !is_test_only(&u.attrs) {
            use_paths(&u.tree, &mut vec![], &mut self.paths);
        }
    }
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        macro_paths(m.tokens.clone(), &mut self.paths);
        syn::visit::visit_macro(self, m);
    }
}

/// `crate :: a :: b` (and `super`, `self`) sequences in a macro's tokens.
fn macro_paths(ts: TokenStream, out: &mut Vec<Vec<String>>) {
    let toks: Vec<TokenTree> = ts.into_iter().collect();
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            TokenTree::Group(g) => macro_paths(g.stream(), out),
            TokenTree::Ident(id)
                if ["crate", "super", "self"].contains(&id.to_string().as_str()) =>
            {
                let mut path = vec![id.to_string()];
                let mut j = i + 1;
                while j + 2 < toks.len() && is_colon(&toks[j]) && is_colon(&toks[j + 1]) {
                    match &toks[j + 2] {
                        TokenTree::Ident(n) => path.push(n.to_string()),
                        _ => break,
                    }
                    j += 3;
                }
                if path.len() > 1 {
                    out.push(path);
                }
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
}

fn is_colon(t: &TokenTree) -> bool {
    matches!(t, TokenTree::Punct(p) if p.as_char() == ':')
}

/// Tarjan's strongly connected components over the file graph.
struct Tarjan<'g> {
    g: &'g Graph,
    index: Vec<Option<usize>>,
    low: Vec<usize>,
    on_stack: Vec<bool>,
    stack: Vec<usize>,
    next: usize,
    out: Vec<Vec<usize>>,
}

impl<'g> Tarjan<'g> {
    fn new(g: &'g Graph) -> Self {
        let n = g.files.len();
        Tarjan {
            g,
            index: vec![None; n],
            low: vec![0; n],
            on_stack: vec![false; n],
            stack: vec![],
            next: 0,
            out: vec![],
        }
    }

    fn run(mut self) -> Vec<Vec<usize>> {
        for v in 0..self.g.files.len() {
            if self.index[v].is_none() {
                self.visit(v);
            }
        }
        self.out
    }

    fn visit(&mut self, v: usize) {
        self.index[v] = Some(self.next);
        self.low[v] = self.next;
        self.next += 1;
        self.stack.push(v);
        self.on_stack[v] = true;
        let succ: Vec<usize> = self
            .g
            .edges
            .get(&v)
            .map(|m| m.keys().copied().collect())
            .unwrap_or_default();
        for w in succ {
            match self.index[w] {
                None => {
                    self.visit(w);
                    self.low[v] = self.low[v].min(self.low[w]);
                }
                Some(i) if self.on_stack[w] => self.low[v] = self.low[v].min(i),
                Some(_) => {}
            }
        }
        if Some(self.low[v]) == self.index[v] {
            let mut comp = vec![];
            while let Some(w) = self.stack.pop() {
                self.on_stack[w] = false;
                comp.push(w);
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                self.out.push(comp);
            }
        }
    }
}
