//! Sizes a reader can hold at a glance: functions and files, test code left out; and the places outside
//! `method/` that spell out a method's variant (`MethodKind::X`) instead of asking the registry.

use crate::modgraph::is_test_only;
use std::path::Path;
use syn::spanned::Spanned;
use syn::visit::Visit;

/// A function's name and its length in lines.
#[derive(Debug)]
pub struct Sized {
    pub name: String,
    pub line: usize,
    pub lines: usize,
}

/// What one file holds: its lines outside test code, its functions, and its `MethodKind::X` paths.
#[derive(Debug, Default)]
pub struct FileFacts {
    pub lines: usize,
    pub functions: Vec<Sized>,
    pub method_kind_paths: Vec<usize>,
}

pub fn facts(path: &Path) -> Result<FileFacts, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let file = syn::parse_file(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut test_lines = 0;
    for item in &file.items {
        if item_is_test(item) {
            let s = item.span();
            test_lines += s.end().line + 1 - s.start().line;
        }
    }
    let mut v = Visitor::default();
    v.visit_file(&file);
    Ok(FileFacts {
        lines: text.lines().count().saturating_sub(test_lines),
        functions: v.functions,
        method_kind_paths: v.method_kind,
    })
}

fn item_is_test(item: &syn::Item) -> bool {
    match item {
        syn::Item::Mod(m) => is_test_only(&m.attrs),
        syn::Item::Fn(f) => is_test_only(&f.attrs),
        syn::Item::Impl(i) => is_test_only(&i.attrs),
        syn::Item::Use(u) => is_test_only(&u.attrs),
        _ => false,
    }
}

#[derive(Default)]
struct Visitor {
    functions: Vec<Sized>,
    method_kind: Vec<usize>,
}

impl Visitor {
    fn function(&mut self, name: String, span: proc_macro2::Span) {
        let (a, b) = (span.start().line, span.end().line);
        self.functions.push(Sized {
            name,
            line: a,
            lines: b + 1 - a,
        });
    }
}

impl<'ast> Visit<'ast> for Visitor {
    fn visit_item(&mut self, i: &'ast syn::Item) {
        if !item_is_test(i) {
            syn::visit::visit_item(self, i);
        }
    }
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.function(f.sig.ident.to_string(), f.span());
        syn::visit::visit_item_fn(self, f);
    }
    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if is_test_only(&f.attrs) {
            return;
        }
        self.function(f.sig.ident.to_string(), f.span());
        syn::visit::visit_impl_item_fn(self, f);
    }
    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if f.default.is_some() {
            self.function(f.sig.ident.to_string(), f.span());
        }
        syn::visit::visit_trait_item_fn(self, f);
    }
    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if let Some(i) = segs.iter().position(|s| s == "MethodKind") {
            if i + 1 < segs.len() && segs[i + 1].chars().next().is_some_and(char::is_uppercase) {
                self.method_kind.push(p.span().start().line);
            }
        }
        syn::visit::visit_path(self, p);
    }
}
