//! The source tree's shape, checked from the sources themselves: no import circle between the
//! file modules of any crate, no library file over 1,000 lines and no function over 150 lines
//! (test modules aside). A rough reader of `use` trees and `crate::`/`super::`/`self::` paths,
//! enough for rustfmt-formatted code.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_FILE_LINES: usize = 1000;
const MAX_FN_LINES: usize = 150;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Each crate's source folder.
fn crates() -> Vec<PathBuf> {
    let mut roots = vec![
        root().join("src"),
        root().join("udfs/src"),
        root().join("plans/src"),
    ];
    for model in std::fs::read_dir(root().join("models")).unwrap() {
        let src = model.unwrap().path().join("src");
        if src.is_dir() {
            roots.push(src);
        }
    }
    roots
}

/// Every library source file under `dir` with its module path (`job::events`; `` for the crate
/// root). Binaries (`src/bin`) and test modules in their own files (`tests.rs`) are left out.
fn modules(dir: &Path) -> BTreeMap<String, PathBuf> {
    fn walk(dir: &Path, prefix: &[String], out: &mut BTreeMap<String, PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_stem().unwrap().to_string_lossy().to_string();
            if path.is_dir() {
                if name != "bin" && name != "tests" {
                    let mut sub = prefix.to_vec();
                    sub.push(name);
                    walk(&path, &sub, out);
                }
            } else if path.extension().is_some_and(|e| e == "rs") && name != "tests" {
                let mut module = prefix.to_vec();
                if !["lib", "main", "mod"].contains(&name.as_str()) {
                    module.push(name);
                }
                out.insert(module.join("::"), path);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, &[], &mut out);
    out
}

/// The file's lines without `#[cfg(test)]` inline modules, line comments and string literals'
/// contents (so that neither counts as code).
fn code_lines(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        let next = lines.get(i + 1).map_or("", |l| l.trim_start());
        let is_test_mod = lines[i].trim() == "#[cfg(test)]"
            && (next.starts_with("mod ") || next.starts_with("pub(crate) mod "))
            && next.ends_with('{');
        if is_test_mod {
            let indent = indent_of(lines[i + 1]);
            i += 2;
            while i < lines.len() && !(indent_of(lines[i]) == indent && lines[i].trim() == "}") {
                i += 1;
            }
            i += 1;
            continue;
        }
        out.push(strip_strings_and_comments(lines[i]));
        i += 1;
    }
    out
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

fn strip_strings_and_comments(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            match c {
                '\\' => {
                    chars.next();
                }
                '"' => {
                    in_string = false;
                    out.push('"');
                }
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push('"');
            }
            '/' if chars.peek() == Some(&'/') => break,
            _ => out.push(c),
        }
    }
    out
}

/// What one file names: `use` leaves (with the name they bind, and whether the `use` is a
/// re-export) and other paths, each resolved from the crate root.
#[derive(Default)]
struct Named {
    /// `(path, bound name, re-exported)`; a glob's path ends in `*`.
    uses: Vec<(Vec<String>, String, bool)>,
    paths: Vec<Vec<String>>,
}

/// The paths `text` names that start with `crate`, `super` or `self`, and in `use` items also
/// those that start with a child module of `module`.
fn named_paths(module: &[String], children: &BTreeSet<String>, text: &str) -> Named {
    let tokens = tokenize(text);
    let mut named = Named::default();
    let mut i = 0;
    while i < tokens.len() {
        let in_use = tokens[i] == "use";
        let exported = in_use
            && ((i >= 1 && tokens[i - 1] == "pub")
                || (i >= 4 && tokens[i - 1] == ")" && tokens[i - 4] == "pub"));
        if in_use {
            i += 1;
        }
        let starts_local =
            |t: &str| ["crate", "super", "self"].contains(&t) || (in_use && children.contains(t));
        // A path: `crate::x`, not `pub(crate)`, `&self` or `b::crate_x`.
        let preceded_by_path = i > 0 && tokens[i - 1] == "::";
        let followed_by_path = tokens.get(i + 1).is_some_and(|t| t == "::");
        if i < tokens.len() && starts_local(&tokens[i]) && !preceded_by_path && followed_by_path {
            let mut leaves = Vec::new();
            i = use_tree(&tokens, i, &mut Vec::new(), &mut leaves);
            for (path, name) in leaves {
                let path = resolve(module, &path);
                if in_use {
                    named.uses.push((path, name, exported));
                } else {
                    named.paths.push(path);
                }
            }
        } else {
            i += 1;
        }
    }
    named
}

/// Reads one use tree (or plain path) at `tokens[i]`, pushing each leaf path as written and the
/// name it binds; returns the index after it.
fn use_tree(
    tokens: &[String],
    mut i: usize,
    prefix: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, String)>,
) -> usize {
    let depth = prefix.len();
    while let Some(t) = tokens.get(i) {
        if t == "{" {
            i += 1;
            while i < tokens.len() && tokens[i] != "}" {
                let mut sub = prefix.clone();
                i = use_tree(tokens, i, &mut sub, out);
                if tokens.get(i).is_some_and(|t| t == ",") {
                    i += 1;
                }
            }
            prefix.truncate(depth);
            return i + 1;
        }
        if !is_ident(t) && t != "*" {
            break;
        }
        prefix.push(t.clone());
        i += 1;
        if tokens.get(i).is_some_and(|t| t == "::") {
            i += 1;
        } else {
            break;
        }
    }
    let mut name = (prefix.iter().rev())
        .find(|s| *s != "self")
        .cloned()
        .unwrap_or_default();
    if tokens.get(i).is_some_and(|t| t == "as") {
        name = tokens.get(i + 1).cloned().unwrap_or_default();
        i += 2;
    }
    if prefix.len() > depth {
        out.push((prefix.clone(), name));
    }
    prefix.truncate(depth);
    i
}

/// `path` (as written in `module`) from the crate root.
fn resolve(module: &[String], path: &[String]) -> Vec<String> {
    let mut base: Vec<String> = module.to_vec();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        _ => {}
    }
    while rest.first().is_some_and(|s| s == "super") {
        base.pop();
        rest = &rest[1..];
    }
    base.extend(rest.iter().filter(|s| *s != "self").cloned());
    base
}

fn is_ident(t: &str) -> bool {
    t.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

fn tokenize(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_alphanumeric() || c == '_' {
            let mut ident = c.to_string();
            while let Some(&n) = chars.peek().filter(|n| n.is_alphanumeric() || **n == '_') {
                ident.push(n);
                chars.next();
            }
            tokens.push(ident);
        } else if c == ':' && chars.peek() == Some(&':') {
            chars.next();
            tokens.push("::".into());
        } else if !c.is_whitespace() {
            tokens.push(c.to_string());
        }
    }
    tokens
}

type Reexports = BTreeMap<String, BTreeMap<String, Vec<String>>>;

/// The module `path` names: its longest prefix that is a module, followed through the
/// re-exports of the module it stops at (`reexports[module][name]`).
fn module_of(
    path: &[String],
    modules: &BTreeMap<String, PathBuf>,
    reexports: &Reexports,
) -> String {
    let mut path: Vec<String> = path.iter().filter(|s| *s != "*").cloned().collect();
    for _ in 0..16 {
        let n = (0..=path.len())
            .rev()
            .find(|n| modules.contains_key(&path[..*n].join("::")))
            .unwrap_or(0);
        let module = path[..n].join("::");
        let through = path
            .get(n)
            .and_then(|item| reexports.get(&module)?.get(item));
        match through {
            Some(target) => {
                let mut next = target.clone();
                next.extend(path[n + 1..].iter().cloned());
                path = next;
            }
            None => return module,
        }
    }
    String::new()
}

fn module_segments(name: &str) -> Vec<String> {
    name.split("::")
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// Every module's [`Named`].
fn named_by_module(modules: &BTreeMap<String, PathBuf>) -> BTreeMap<String, Named> {
    modules
        .iter()
        .map(|(name, file)| {
            let prefix = if name.is_empty() {
                String::new()
            } else {
                format!("{name}::")
            };
            let children: BTreeSet<String> = modules
                .keys()
                .filter_map(|m| m.strip_prefix(&prefix))
                .filter(|rest| !rest.is_empty() && !rest.contains("::"))
                .map(String::from)
                .collect();
            let text = code_lines(&std::fs::read_to_string(file).unwrap()).join("\n");
            let named = named_paths(&module_segments(name), &children, &text);
            (name.clone(), named)
        })
        .collect()
}

/// Module -> the other modules it uses. A re-export (`pub use`) is the module's face, not a use
/// of its own: a path through it counts as a use of the module the item comes from.
fn import_graph(modules: &BTreeMap<String, PathBuf>) -> BTreeMap<String, BTreeSet<String>> {
    let named = named_by_module(modules);
    let reexports: Reexports = named
        .iter()
        .map(|(m, n)| {
            let names = (n.uses.iter())
                .filter(|(path, _, exported)| *exported && path.last().is_some_and(|s| s != "*"))
                .map(|(path, name, _)| (name.clone(), path.clone()))
                .collect();
            (m.clone(), names)
        })
        .collect();
    named
        .iter()
        .map(|(name, n)| {
            let used = (n.uses.iter())
                .filter(|(_, _, exported)| !exported)
                .map(|(path, _, _)| path)
                .chain(&n.paths)
                .map(|p| module_of(p, modules, &reexports))
                .filter(|m| m != name)
                .collect();
            (name.clone(), used)
        })
        .collect()
}

/// The graph's strongly connected components of more than one module (Tarjan).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Tarjan<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            for w in self.graph.get(v).into_iter().flatten() {
                if !self.index.contains_key(w.as_str()) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w.as_str()]);
                    self.low.insert(v, low);
                } else if self.stack.contains(&w.as_str()) {
                    let low = self.low[v].min(self.index[w.as_str()]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let at = self.stack.iter().rposition(|s| *s == v).unwrap();
                let component: Vec<String> = self.stack.drain(at..).map(String::from).collect();
                if component.len() > 1 {
                    self.found.push(component);
                }
            }
        }
    }
    let mut t = Tarjan {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.found
}

/// The crates whose modules must form no circle (the scope: the binary crate and the
/// operators; `plans` and the model readers still have parent/child circles).
fn acyclic_crates() -> Vec<PathBuf> {
    vec![
        root().join("src"),
        root().join("udfs/src"),
        root().join("plans/src"),
    ]
}

#[test]
fn no_import_circle_between_modules() {
    let mut found = Vec::new();
    for dir in acyclic_crates() {
        let graph = import_graph(&modules(&dir));
        for cycle in cycles(&graph) {
            let edges: Vec<String> = cycle
                .iter()
                .map(|m| {
                    let to: Vec<&str> = (graph[m].iter())
                        .filter(|t| cycle.contains(t))
                        .map(String::as_str)
                        .collect();
                    format!("`{m}` -> {}", to.join(", "))
                })
                .collect();
            found.push(format!("{}: {}", dir.display(), edges.join("; ")));
        }
    }
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

/// A glob of a crate module (`use super::*`, `pub use child::*`) hides what depends on what;
/// test modules may glob their parent.
#[test]
fn no_glob_imports_of_crate_modules() {
    let mut found = Vec::new();
    for dir in acyclic_crates() {
        let modules = modules(&dir);
        for (name, named) in named_by_module(&modules) {
            for (path, _, _) in &named.uses {
                if path.last().is_some_and(|s| s == "*") {
                    found.push(format!("`{name}`: use {}", path.join("::")));
                }
            }
        }
    }
    assert!(found.is_empty(), "glob imports:\n{}", found.join("\n"));
}

#[test]
fn the_reader_sees_circles_and_re_exports() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(m, to)| (m.to_string(), to.into_iter().map(String::from).collect()))
    .collect();
    let found = cycles(&graph);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].iter().collect::<BTreeSet<_>>().len(), 3);

    let module = vec!["job".to_string(), "mirror".to_string()];
    let children = BTreeSet::from(["inner".to_string()]);
    let text = "use super::{JobPaths, events::EventLog as Log};\nuse crate::plan::{self, x};\n\
                pub(crate) use inner::Thing;\nlet s = \"crate::nope::x\"; // crate::nor::this\n\
                let t = crate::partition::first_op(&s);";
    let named = named_paths(&module, &children, &code_lines(text).join("\n"));
    let uses: Vec<(String, &str, bool)> = (named.uses.iter())
        .map(|(p, n, e)| (p.join("::"), n.as_str(), *e))
        .collect();
    assert_eq!(
        uses,
        [
            ("job::JobPaths".to_string(), "JobPaths", false),
            ("job::events::EventLog".to_string(), "Log", false),
            ("plan".to_string(), "plan", false),
            ("plan::x".to_string(), "x", false),
            ("job::mirror::inner::Thing".to_string(), "Thing", true),
        ]
    );
    assert_eq!(named.paths, [module_segments("partition::first_op")]);

    // `job` re-exports `Lock` from `job::lock`: a use of `job::Lock` is a use of `job::lock`.
    let modules: BTreeMap<String, PathBuf> = ["", "job", "job::lock"]
        .into_iter()
        .map(|m| (m.to_string(), PathBuf::new()))
        .collect();
    let reexports: Reexports = BTreeMap::from([(
        "job".to_string(),
        BTreeMap::from([("Lock".to_string(), module_segments("job::lock::Lock"))]),
    )]);
    let to = |p: &str| module_of(&module_segments(p), &modules, &reexports);
    assert_eq!(to("job::Lock"), "job::lock");
    assert_eq!(to("job::JobPaths"), "job");
    assert_eq!(to("other::Thing"), "");
}

/// Each function's first line and length in `lines` (signature to closing brace).
fn functions(lines: &[String]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        let t = (t.strip_prefix("pub "))
            .or_else(|| t.strip_prefix("pub(crate) "))
            .or_else(|| t.strip_prefix("pub(super) "))
            .unwrap_or(t);
        let t = t.strip_prefix("const ").unwrap_or(t);
        let t = t.strip_prefix("async ").unwrap_or(t);
        let t = t.strip_prefix("unsafe ").unwrap_or(t);
        if !t.starts_with("fn ") {
            continue;
        }
        let Some(open) = (i..lines.len()).find(|&k| {
            let l = lines[k].trim_end();
            l.ends_with('{') || l.ends_with(';')
        }) else {
            continue;
        };
        if lines[open].trim_end().ends_with(';') {
            continue;
        }
        let indent = indent_of(line);
        let close = (open + 1..lines.len())
            .find(|&k| indent_of(&lines[k]) == indent && lines[k].trim_start().starts_with('}'));
        if let Some(close) = close {
            out.push((i, close - i + 1));
        }
    }
    out
}

#[test]
fn no_long_files_or_functions() {
    let mut found = Vec::new();
    for dir in crates() {
        for file in modules(&dir).values() {
            let rel = file.strip_prefix(root()).unwrap().display().to_string();
            let lines = code_lines(&std::fs::read_to_string(file).unwrap());
            if lines.len() > MAX_FILE_LINES {
                found.push(format!("{rel}: {} lines", lines.len()));
            }
            for (at, len) in functions(&lines) {
                if len > MAX_FN_LINES {
                    found.push(format!(
                        "{rel}:{}: `{}` has {len} lines",
                        at + 1,
                        lines[at].trim()
                    ));
                }
            }
        }
    }
    assert!(found.is_empty(), "too long:\n{}", found.join("\n"));
}

#[test]
fn the_reader_measures_functions() {
    let text = "pub(crate) async fn a(\n    x: u8,\n) -> u8 {\n    x\n}\nfn b();\n\
                impl T {\n    fn c(&self) {\n        if x {\n        }\n    }\n}\n";
    let lines = code_lines(text);
    assert_eq!(functions(&lines), [(0, 5), (7, 4)]);
}
