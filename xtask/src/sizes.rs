//! Sizes a reader can hold at a glance: functions and files, test code left out; and the places outside
//! `method/` that spell out a method's variant (`MethodKind::X`) instead of asking the registry, and the
//! string literals of a file (for the method names written out by hand).

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
    /// Each string literal outside test code and doc comments, with its line: in the code and in the
    /// tokens of a macro's arguments (`matches!(m, "a" | "b")`, `json!({...})`).
    pub str_literals: Vec<(usize, String)>,
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
        str_literals: v.literals,
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
    literals: Vec<(usize, String)>,
}

impl Visitor {
    /// The string literals among a macro's tokens, at any depth.
    fn tokens(&mut self, ts: proc_macro2::TokenStream) {
        for t in ts {
            match t {
                proc_macro2::TokenTree::Group(g) => self.tokens(g.stream()),
                proc_macro2::TokenTree::Literal(l) => {
                    if let Ok(s) = syn::parse_str::<syn::LitStr>(&l.to_string()) {
                        self.literals.push((l.span().start().line, s.value()));
                    }
                }
                _ => {}
            }
        }
    }
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
    /// Doc comments hold no code; another attribute's strings are read (`#[arg(default_value = "..")]`).
    fn visit_attribute(&mut self, a: &'ast syn::Attribute) {
        if a.path().is_ident("doc") {
            return;
        }
        if let syn::Meta::List(l) = &a.meta {
            self.tokens(l.tokens.clone());
        }
        syn::visit::visit_attribute(self, a);
    }
    fn visit_lit_str(&mut self, l: &'ast syn::LitStr) {
        self.literals.push((l.span().start().line, l.value()));
    }
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.tokens(m.tokens.clone());
        syn::visit::visit_macro(self, m);
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
