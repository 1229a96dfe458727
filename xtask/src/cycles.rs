//! `cargo xtask cycles`: no two modules of the server's crates may import each other, directly or
//! through others. The crates themselves cannot (Cargo refuses a circle of crates); inside each, and
//! across the modules the lower crates re-export at each root (`crate::catalog` names the same module
//! in every crate), this pass is what keeps it so. A circle means neither side can be understood, tested or moved without the other; the
//! layering ARCHITECTURE.md draws (catalog → providers → engine → mcp) is only true while there is none.
//!
//! A module is one file. An edge `a → b` is any path in `a` that names `b` (`use` trees expanded,
//! paths in code and types, and `crate::`/`super::` paths inside macro calls). A module naming its
//! own descendants is not an edge: a parent declaring and re-exporting its children is how Rust
//! folders work, and the children naming their parent is the edge that counts.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// A module's path below the crate root (`["engine", "shape"]`; the root is `[]`).
type Module = Vec<String>;

/// The source folders of the server's crates, lowest first: one namespace of modules, since each
/// crate re-exports the modules of those below it at its root.
pub const SERVER_SOURCES: &[&str] = &["server/core/src", "server/providers/src", "server/engine/src", "server/src"];

/// The server's source folders under `root`.
pub fn server_sources(root: &Path) -> Vec<PathBuf> {
    SERVER_SOURCES.iter().map(|s| root.join(s)).collect()
}

/// Every file under the `srcs` folders as a module path (one namespace).
fn modules(srcs: &[PathBuf]) -> BTreeMap<Module, PathBuf> {
    let mut out = BTreeMap::new();
    for src in srcs {
        out.extend(modules_of(src));
    }
    out
}

/// Every file under one `src` as a module path.
fn modules_of(src: &Path) -> BTreeMap<Module, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("source folder is readable").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if p.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let rel = p.strip_prefix(src).expect("below src");
            let mut m: Module = rel.with_extension("").iter().map(|c| c.to_string_lossy().to_string()).collect();
            if matches!(m.last().map(String::as_str), Some("mod" | "lib" | "main")) {
                m.pop();
            }
            // A binary's root (`main.rs`) is not the library's root: it only uses the library.
            if rel == Path::new("main.rs") {
                continue;
            }
            out.insert(m, p);
        }
    }
    out
}

/// Paths named in one file, as segment lists (`crate`, `super`, `self` kept as written), each
/// with how deep in the file's inline modules it was written (a `super` there stays in the file).
#[derive(Default)]
struct Named {
    paths: Vec<(usize, Vec<String>)>,
    /// `pub use` items of the file's own level: the name they give, and the path it stands for.
    reexports: Vec<(String, Vec<String>)>,
    depth: usize,
    public: bool,
}

impl Named {
    fn tree(&mut self, prefix: &mut Vec<String>, t: &syn::UseTree) {
        match t {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => self.push(prefix, Some(n.ident.to_string())),
            syn::UseTree::Rename(r) => self.push(prefix, Some(r.ident.to_string())),
            syn::UseTree::Glob(_) => self.push(prefix, None),
            syn::UseTree::Group(g) => g.items.iter().for_each(|i| self.tree(prefix, i)),
        }
    }

    fn push(&mut self, prefix: &[String], last: Option<String>) {
        let mut p = prefix.to_vec();
        p.extend(last.filter(|l| l != "self"));
        if self.public && self.depth == 0 {
            if let Some(name) = p.last().filter(|_| p.len() > 1) {
                self.reexports.push((name.clone(), p.clone()));
            }
        }
        self.paths.push((self.depth, p));
    }

    /// `crate :: a :: b` and `super :: a` sequences inside a macro's tokens (format! arguments...).
    fn tokens(&mut self, ts: proc_macro2::TokenStream) {
        let toks: Vec<proc_macro2::TokenTree> = ts.into_iter().collect();
        let mut i = 0;
        while i < toks.len() {
            match &toks[i] {
                proc_macro2::TokenTree::Group(g) => self.tokens(g.stream()),
                proc_macro2::TokenTree::Ident(id) if id == "crate" || id == "super" => {
                    let mut path = vec![id.to_string()];
                    let mut j = i + 1;
                    while let (Some(proc_macro2::TokenTree::Punct(a)), Some(proc_macro2::TokenTree::Punct(b)), Some(proc_macro2::TokenTree::Ident(n))) =
                        (toks.get(j), toks.get(j + 1), toks.get(j + 2))
                    {
                        if a.as_char() != ':' || b.as_char() != ':' {
                            break;
                        }
                        path.push(n.to_string());
                        j += 3;
                    }
                    self.paths.push((self.depth, path));
                    i = j;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }
}

impl<'a> Visit<'a> for Named {
    fn visit_item_use(&mut self, u: &'a syn::ItemUse) {
        self.public = matches!(u.vis, syn::Visibility::Public(_));
        self.tree(&mut vec![], &u.tree);
        self.public = false;
    }
    fn visit_item_mod(&mut self, m: &'a syn::ItemMod) {
        // Tests are not the architecture: a test module may reach anywhere.
        let test = m.attrs.iter().any(|a| a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test"));
        if m.content.is_some() && !test {
            self.depth += 1;
            syn::visit::visit_item_mod(self, m);
            self.depth -= 1;
        }
    }
    fn visit_path(&mut self, p: &'a syn::Path) {
        self.paths.push((self.depth, p.segments.iter().map(|s| s.ident.to_string()).collect()));
        syn::visit::visit_path(self, p);
    }
    fn visit_macro(&mut self, m: &'a syn::Macro) {
        self.tokens(m.tokens.clone());
        syn::visit::visit_macro(self, m);
    }
}

/// Names a module re-exports (`pub use app::AppEnv` in `accounts`), and the module each comes from:
/// a path through the re-export is an edge to where the item lives, not to the facade.
type Reexports = BTreeMap<Module, BTreeMap<String, Module>>;

/// The module a path written in `from` (`depth` inline modules down) names, if any of `known`.
/// Relative paths count only when they start at a child of `from` (`app::AppEnv` in `accounts`).
fn resolve(from: &Module, depth: usize, path: &[String], known: &BTreeMap<Module, PathBuf>, reexports: &Reexports) -> Option<Module> {
    let first = path.first()?.as_str();
    let mut abs: Module = match first {
        "crate" => vec![],
        "super" | "self" => from.clone(),
        _ if depth == 0 && known.contains_key(&[from.as_slice(), &[first.to_string()]].concat()) => from.clone(),
        // A name in scope (a `use`d item, another crate): its `use` is what counts.
        _ => return None,
    };
    let mut rest = path.iter().peekable();
    let mut inline = depth;
    while rest.peek().is_some_and(|s| s.as_str() == "super") {
        rest.next();
        // The first `super`s climb out of the file's inline modules, the rest out of folders.
        match inline {
            0 => {
                abs.pop();
            }
            _ => inline -= 1,
        }
    }
    if matches!(first, "crate" | "self") {
        rest.next();
    }
    for seg in rest {
        let mut next = abs.clone();
        next.push(seg.clone());
        if known.contains_key(&next) {
            abs = next;
            continue;
        }
        if let Some(m) = reexports.get(&abs).and_then(|r| r.get(seg)) {
            abs = m.clone();
        }
        break;
    }
    Some(abs)
}

fn parse(file: &Path) -> Result<Named, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let ast = syn::parse_file(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    let mut named = Named::default();
    named.visit_file(&ast);
    Ok(named)
}

/// Every edge of the crate's import graph: module → the modules it names, other than itself and
/// its own descendants.
pub fn graph(srcs: &[PathBuf]) -> Result<BTreeMap<Module, BTreeSet<Module>>, String> {
    let known = modules(srcs);
    let parsed: BTreeMap<&Module, Named> = known.iter().map(|(m, f)| parse(f).map(|n| (m, n))).collect::<Result<_, _>>()?;
    let mut reexports = Reexports::new();
    for (m, n) in &parsed {
        for (name, path) in &n.reexports {
            if let Some(t) = resolve(m, 0, path, &known, &Reexports::new()) {
                reexports.entry((*m).clone()).or_default().insert(name.clone(), t);
            }
        }
    }
    Ok(parsed
        .iter()
        .map(|(m, n)| {
            let to = n.paths.iter().filter_map(|(d, p)| resolve(m, *d, p, &known, &reexports)).filter(|t| !t.starts_with(m)).collect();
            ((*m).clone(), to)
        })
        .collect())
}

/// The circles: strongly connected components of more than one module (Tarjan), each sorted.
pub fn circles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct Tarjan<'g> {
        edges: &'g BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'g Module, (usize, usize)>,
        stack: Vec<&'g Module>,
        on: BTreeSet<&'g Module>,
        next: usize,
        out: Vec<Vec<Module>>,
    }
    impl<'g> Tarjan<'g> {
        fn visit(&mut self, v: &'g Module) {
            self.index.insert(v, (self.next, self.next));
            self.next += 1;
            self.stack.push(v);
            self.on.insert(v);
            for w in self.edges.get(v).into_iter().flatten() {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.index[w].1.min(self.index[v].1);
                    self.index.get_mut(v).expect("visited").1 = low;
                } else if self.on.contains(w) {
                    let low = self.index[w].0.min(self.index[v].1);
                    self.index.get_mut(v).expect("visited").1 = low;
                }
            }
            if self.index[v].0 == self.index[v].1 {
                let mut scc = vec![];
                while let Some(w) = self.stack.pop() {
                    self.on.remove(w);
                    scc.push(w.clone());
                    if w == v {
                        break;
                    }
                }
                if scc.len() > 1 {
                    scc.sort();
                    self.out.push(scc);
                }
            }
        }
    }
    let mut t = Tarjan { edges, index: BTreeMap::new(), stack: vec![], on: BTreeSet::new(), next: 0, out: vec![] };
    for v in edges.keys() {
        if !t.index.contains_key(v) {
            t.visit(v);
        }
    }
    t.out
}

fn name(m: &Module) -> String {
    if m.is_empty() {
        "crate".into()
    } else {
        m.join("::")
    }
}

/// Each circle in words, with the edges that close it.
pub fn report(srcs: &[PathBuf]) -> Result<Vec<String>, String> {
    let edges = graph(srcs)?;
    Ok(circles(&edges)
        .into_iter()
        .map(|scc| {
            let inside: BTreeSet<&Module> = scc.iter().collect();
            let arrows: Vec<String> =
                scc.iter().flat_map(|a| edges[a].iter().filter(|b| inside.contains(b)).map(move |b| format!("{} → {}", name(a), name(b)))).collect();
            format!("{}: {}", scc.iter().map(name).collect::<Vec<_>>().join(", "), arrows.join("; "))
        })
        .collect())
}

/// The rooms of the server's crates, lowest first, and the top-level modules in each. Between
/// crates Cargo keeps the order (words and data are `vitals-core`, accounts and providers
/// `vitals-providers`, engine and analysis `vitals-engine`, mcp and hosted `vitals`); inside a crate
/// this list does: a module may name its own room and the rooms below it, never above.
pub const ROOMS: &[(&str, &[&str])] = &[
    ("words", &["secret", "time", "env", "archive", "activity_file", "retry"]),
    ("data", &["catalog", "connection", "config", "http", "provider"]),
    ("accounts", &["accounts"]),
    ("providers", &["providers"]),
    ("engine", &["engine"]),
    ("analysis", &["analysis", "export"]),
    ("mcp", &["mcp"]),
    ("hosted", &["hosted"]),
];

fn room(m: &Module) -> Option<usize> {
    let top = m.first()?;
    ROOMS.iter().position(|(_, mods)| mods.contains(&top.as_str()))
}

/// Each edge from a room to one above it, in words; and each top-level module in no room.
pub fn upward(srcs: &[PathBuf]) -> Result<Vec<String>, String> {
    let edges = graph(srcs)?;
    let mut out = vec![];
    for (a, to) in &edges {
        let Some(ra) = room(a) else {
            if !a.is_empty() {
                out.push(format!("{} is in no room of ROOMS", name(a)));
            }
            continue;
        };
        for b in to {
            if let Some(rb) = room(b).filter(|rb| *rb > ra) {
                out.push(format!("{} ({}) → {} ({})", name(a), ROOMS[ra].0, name(b), ROOMS[rb].0));
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_room_of_the_server_names_a_room_above_it() {
        let found = upward(&server_sources(&crate::root())).unwrap();
        assert!(found.is_empty(), "modules of server/src name a room above their own:\n{}", found.join("\n"));
    }

    fn write(root: &Path, files: &[(&str, &str)]) {
        let _ = std::fs::remove_dir_all(root);
        for (p, text) in files {
            let path = root.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
    }

    #[test]
    fn the_server_has_no_import_circle() {
        let src = server_sources(&crate::root());
        let found = report(&src).unwrap();
        assert!(found.is_empty(), "modules of server/src import each other in a circle:\n{}", found.join("\n"));
        // The pass sees the crate: the engine's steps name the catalog.
        let edges = graph(&src).unwrap();
        assert!(edges[&vec!["engine".to_string(), "plan".to_string()]].contains(&vec!["catalog".to_string()]));
    }

    #[test]
    fn a_circle_through_use_trees_super_and_macros_is_found_and_a_parent_using_its_child_is_not() {
        let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/tmp")).join(format!("xtask-cycles-{}", std::process::id()));
        write(
            &root,
            &[
                ("lib.rs", "pub mod a; pub mod b; pub mod c; pub mod p; pub mod f; pub mod g;"),
                ("a.rs", "use crate::{b::{self, X}};"),
                ("b.rs", "pub fn f() -> String { format!(\"{}\", crate::c::g()) }"),
                ("c.rs", "pub fn g() { super::a::h() }"),
                ("p/mod.rs", "pub mod kid; pub fn all() { kid::k(); self::kid::k(); }\n#[cfg(test)] mod tests { use crate::a::*; }"),
                ("p/kid.rs", "pub fn k() { super::all() }\nmod inner { fn i() { super::k() } }"),
                // Through a facade: `f::Item` is `f::inner::Item`, which names `g` back.
                ("f/mod.rs", "mod inner; pub use inner::Item;"),
                ("f/inner.rs", "pub struct Item(crate::g::G);"),
                ("g.rs", "pub struct G; fn x(_: crate::f::Item) {}"),
            ],
        );
        let found = report(std::slice::from_ref(&root)).unwrap();
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].starts_with("a, b, c:"), "{}", found[0]);
        assert!(found[0].contains("a → b") && found[0].contains("b → c") && found[0].contains("c → a"), "{}", found[0]);
        assert_eq!(found[1], "f::inner, g: f::inner → g; g → f::inner");
        let _ = std::fs::remove_dir_all(&root);
    }
}
